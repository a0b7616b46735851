"""NovelAI: lorebooks (``.lorebook`` JSON, the PNG ``naidata`` lorebook card, a ``.scenario``'s book)."""
