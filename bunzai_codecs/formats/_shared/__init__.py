"""Mappers shared by several apps' codecs: Tavern card fields (``tavern``), ``character_book``
(``character_book``), ST regex scripts (``st_regex``), ST lore enums and keys (``lore``), the
re-embedding rule for linked entities (``links``) and typed readers for wire values (``wire``).
Pure functions; each module's docstring is its API."""
