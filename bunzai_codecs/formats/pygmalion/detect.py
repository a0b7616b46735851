"""Detection of Pygmalion / oobabooga classic characters (flat JSON, or base64 JSON in a PNG ``chara``
chunk); imports no canonical model."""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core.errors import BunzaiError
from bunzai_codecs.core.sniff import Sniff, base64_json
from bunzai_codecs.formats.tavern.png import CHARA, sniff_payload_tree

#: the Tavern lineage's V2 card chunk: this JSON rides in it as a Tavern card does
PNG_KEYWORD = CHARA

_REJECT_KEYS = ("spec", "data")

_SIGNAL_KEYS = ("char_persona", "char_greeting", "world_scenario")


def claims(tree: Any) -> bool:
    """The original design's detection rule for the flat shape."""
    if not isinstance(tree, dict) or any(k in tree for k in _REJECT_KEYS):
        return False
    if tree.get("kind") == "character":
        return False
    if isinstance(tree.get("aiName"), str) or isinstance(tree.get("aiPersona"), str):
        return False
    signals = sum(isinstance(tree.get(k), str) for k in _SIGNAL_KEYS)
    return signals >= 2 or (
        isinstance(tree.get("char_name"), str) and isinstance(tree.get("char_persona"), str)
    )


def png_payload(text: bytes, offset: int | None = None) -> Any:
    """The JSON tree of a ``chara`` chunk value (strict base64 JSON)."""
    return base64_json(text, PNG_KEYWORD, offset)


def character(s: Sniff) -> float:
    tree = s.json_object
    if tree is None and s.is_png:
        chunk = s.png_text(PNG_KEYWORD)
        if chunk is None:
            return 0.0
        # the Tavern card reader's parse of this chunk is shared by every detector and decoder
        # (``Sniff.memo``), so a Tavern card costs pygmalion no parse of its own. That reader
        # is more lenient (whitespace, missing padding, bare JSON) but reads the same bytes
        # wherever the strict one succeeds, so "not ours" there is "not ours" here; a claim is
        # confirmed by the strict reader the decoder uses
        try:
            if not claims(sniff_payload_tree(s, chunk)):
                return 0.0
            tree = png_payload(chunk.text)
        except BunzaiError:
            return 0.0
    return 1.0 if claims(tree) else 0.0
