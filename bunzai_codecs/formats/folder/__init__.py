"""bunzai's card folder: a character card as a folder of files an author keeps in git."""
