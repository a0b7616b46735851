"""The Tavern card lineage (CCv1/V2/V3): the card codec every app that writes Tavern cards is a
dialect of (``card.py``), the card chunks of a PNG (``png.py``) and the rule that re-embeds a card's
linked lorebook and regex scripts (``links.py``)."""
