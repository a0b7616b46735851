"""Mappers shared by several apps' codecs: Tavern card fields, ``character_book``, ST regex scripts,
ST lore enums, and typed readers for wire values. Pure functions; each module's docstring is its API."""
