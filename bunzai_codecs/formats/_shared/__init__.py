"""Helpers every format family uses: the picture a PNG-borne file carries (``carrier``), the
keep-or-drop rule for a bundle's embedded copy on export (``links``), typed readers for wire
values (``wire``) and the skeleton of a JSON codec holding one entity (``tree_codec``). The Tavern card lineage (card fields, ``character_book``, ST regex scripts, ST
lore enums) lives in :mod:`bunzai_codecs.formats.tavern`. Pure functions; each module's docstring
is its API."""
