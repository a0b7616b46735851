"""Detection of RisuAI's files; imports no canonical model."""

from __future__ import annotations

import struct
from typing import Any

from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.formats.risu import rpack, twins
from bunzai_codecs.formats.tavern.detect import is_character_book
from bunzai_codecs.formats.tavern.png import CARD_KEYWORDS

CARD = "card.json"


def lore_envelope_rows(tree: Any) -> list[Any] | None:
    if isinstance(tree, dict) and tree.get("type") == "risu" and isinstance(tree.get("data"), list):
        return tree["data"]
    return None


#: keys of a Risu lore row beside ``key`` and ``content``; every row of a bare array has one
_LORE_ROW_HINTS = ("mode", "insertorder", "alwaysActive", "secondkey")

#: keys that make a row another app's (SillyTavern, Chub/CCv3, Agnai, NovelAI, Marinara)
_LORE_FOREIGN = ("keys", "keywords", "entry", "uid", "text", "lorebookId", "insertion_order")


def is_lore_row_array(tree: Any) -> bool:
    """A bare JSON array of Risu lore rows (other tools write the envelope's ``data`` alone)."""
    return twins.is_row_array(tree, _is_lore_row, _LORE_ROW_HINTS, _LORE_FOREIGN)


def _is_lore_row(r: dict[str, Any]) -> bool:
    return isinstance(r.get("key"), str) and isinstance(r.get("content"), str)


def _ccv3_book(j: dict[str, Any]) -> bool:
    """A bare CCv3 ``character_book`` (entries carry ``content``), not another app's book that
    happens to have an ``entries`` array (NovelAI's has ``lorebookVersion`` and ``text``)."""
    if "type" in j or "lorebookVersion" in j or not is_character_book(j):
        return False
    entries = j["entries"]
    return not entries or (isinstance(entries[0], dict) and isinstance(entries[0].get("content"), str))


_REGEX_ROW_HINTS = ("type", "comment", "flag", "ableFlag", "disabled")

_REGEX_FOREIGN = ("findRegex", "scriptName", "replaceString")


def regex_envelope_rows(tree: Any) -> list[Any] | None:
    if isinstance(tree, dict) and tree.get("type") == "regex" and isinstance(tree.get("data"), list):
        return tree["data"]
    return None


def is_regex_row_array(tree: Any) -> bool:
    """A bare JSON array of customscript rows."""
    return twins.is_row_array(tree, lambda r: "in" in r or "out" in r, _REGEX_ROW_HINTS, _REGEX_FOREIGN)


def is_flat_module(tree: Any) -> bool:
    return (
        isinstance(tree, dict)
        and tree.get("type") == MODULE_TYPE
        and isinstance(tree.get("name"), str)
        and "module" not in tree
    )


def looks_like_module(s: Sniff) -> bool:
    if looks_like_risum(s.data):
        return True
    return s.looks_like_json and is_flat_module(s.json)


KEYWORD = "persona"

#: botPreset signature keys (the misspellings are Risu's own)
SIGNATURE = ("formatingOrder", "PresensePenalty")


def charx(s: Sniff) -> float:
    z = s.zip
    return 1.0 if z is not None and z.has(CARD) else 0.0


def lorebook(s: Sniff) -> float:
    j = s.json_object
    if j is None:
        return 0.85 if s.looks_like_json and is_lore_row_array(s.json) else 0.0
    if lore_envelope_rows(j) is not None:
        return 1.0
    return 0.75 if _ccv3_book(j) else 0.0


def module(s: Sniff) -> float:
    return 0.8 if looks_like_module(s) else 0.0


def persona(s: Sniff) -> float:
    if not s.is_png or s.png_text(KEYWORD) is None:
        return 0.0
    # a character card that also carries a persona chunk stays a card
    return 0.4 if any(s.png_text(kw) for kw in CARD_KEYWORDS) else 0.95


def preset(s: Sniff) -> float:
    if not s.looks_like_json:
        if s.is_png or s.is_zip or s.is_jpeg:
            return 0.0
        from bunzai_codecs.formats.risu import risup  # only a file that is none of those

        return 1.0 if risup.sniff_container(s.data) is not None else 0.0
    j = s.json_object
    if j is None:
        return 0.0
    if any(k in j for k in SIGNATURE) and ("promptTemplate" in j or "mainPrompt" in j):
        return 0.95
    return 0.0


def regex(s: Sniff) -> float:
    if not s.looks_like_json:
        return 0.0
    j = s.json
    if regex_envelope_rows(j) is not None:
        return 1.0
    if is_regex_row_array(j):
        return 0.85
    return 0.0


MAGIC = 0x6F


VERSION = 0x00


MODULE_TYPE = "risuModule"


def looks_like_risum(data: bytes) -> bool:
    """Cheap check for detection: magic, version, a main block that fits and starts with ``{``."""
    if len(data) < 8 or data[0] != MAGIC or data[1] != VERSION:
        return False
    (n,) = struct.unpack_from("<I", data, 2)
    if n < 2 or 6 + n + 1 > len(data):
        return False
    head = rpack.decode(data[6 : 6 + min(n, 8)]).lstrip(b" \t\r\n")
    return head[:1] == b"{"
