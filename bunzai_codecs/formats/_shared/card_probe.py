"""Cheap looks into a Tavern card for detectors of apps that write Tavern cards with their own
extension keys (RoleCall's ``extensions.rolecall``, Lumiverse's bare keys): where a card's
``extensions`` object is, whatever its layout, and the card payloads of a PNG."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bunzai_codecs.core.errors import BunzaiError
from bunzai_codecs.formats._shared.tavern import CARD_SPECS

if TYPE_CHECKING:
    from bunzai_codecs.core.sniff import Sniff

#: PNG keywords of a Tavern card, in the order SillyTavern reads them
CARD_KEYWORDS = ("ccv3", "chara")


def card_extensions(tree: Any) -> Mapping[str, Any] | None:
    """The extensions object of a Tavern card tree: ``data.extensions`` of a V2/V3 card, or
    ``extensions`` of a flat object with a string ``name`` (a CCv1 card, or RoleCall's bare ``data``
    PNG payload); else ``None``. Never raises."""
    if not isinstance(tree, dict):
        return None
    if "spec" in tree:
        data = tree.get("data")
        spec = tree.get("spec")
        if not isinstance(spec, str) or spec not in CARD_SPECS or not isinstance(data, dict):
            return None
    elif "data" in tree or not isinstance(tree.get("name"), str):
        return None
    else:
        data = tree
    ext = data.get("extensions")
    return ext if isinstance(ext, dict) else None


def png_card_trees(s: Sniff) -> list[Any]:
    """The decodable ``ccv3`` then ``chara`` payloads of a PNG (a detection helper: a payload that
    does not decode is skipped, nothing raises). Each payload is parsed once per input, for every
    detector that asks and for the card decoder (``Sniff.memo``)."""
    from bunzai_codecs.formats.sillytavern.card import sniff_payload_tree

    out = []
    for kw in CARD_KEYWORDS:
        t = s.png_text(kw)
        if t is None:
            continue
        try:
            out.append(sniff_payload_tree(s, t))
        except BunzaiError:
            continue
    return out


__all__ = ["CARD_KEYWORDS", "card_extensions", "png_card_trees"]
