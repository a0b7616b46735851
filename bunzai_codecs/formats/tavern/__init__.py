"""The Tavern card lineage (CCv1/V2/V3): the card codec every app that writes Tavern cards is a
dialect of (``card.py``), the card's ``data`` fields and the dialect hook (``fields.py``), its
embedded ``character_book`` (``character_book.py``) and regex scripts (``st_regex.py``), the ST lore
enums and keys they share (``lore.py``), the card chunks of a PNG (``png.py``) and the rule that
re-embeds a card's linked lorebook and regex scripts (``links.py``)."""
