"""``sillytavern``: Tavern character cards as SillyTavern reads and writes them — CCv1 flat JSON,
CCv2/CCv3 JSON, PNG and APNG cards.

SillyTavern has no dialect of its own: it is the Tavern card lineage itself (``formats/tavern/``),
with the shared dialects every Tavern card codec applies (Agnai's ``extensions.agnai``, Chub's
``extensions.chub``). Detection, decode and encode are :class:`~bunzai_codecs.formats.tavern.card.TavernCard`'s:
0.9 for a card PNG (``ccv3``/``chara`` chunk), a ``chara_card_v2``/``v3`` JSON card or a flat CCv1
object; the embedded ``character_book`` and ``extensions.regex_scripts`` become linked entities and
are re-embedded on export; a PNG keeps every chunk and its layout.
"""

from __future__ import annotations

from bunzai_codecs.formats.tavern.card import TavernCard


class SillyTavernCard(TavernCard):
    """SillyTavern and the Tavern card lineage: CCv1/V2/V3 JSON and PNG/APNG cards."""

    id = "sillytavern"


__all__ = ["SillyTavernCard"]
