"""Detection of Agnai's files; imports no canonical model."""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.formats.tavern.detect import is_character_book

CHARACTER = "character"

MEMORY = "memory"


def _first_entry(t: dict[str, Any]) -> dict[str, Any] | None:
    entries = t.get("entries")
    if isinstance(entries, list) and entries and isinstance(entries[0], dict):
        return entries[0]
    return None


def is_native_book(t: dict[str, Any]) -> bool:
    """A kind-less MemoryBook: its first entry has the native ``entry`` + ``keywords`` shape."""
    first = _first_entry(t)
    return first is not None and "entry" in first and "keywords" in first


def is_ccv3_book(t: dict[str, Any]) -> bool:
    """A standalone CCv3/Chub ``character_book``: array entries with ``keys`` and/or ``content``,
    no card around it, and not a NovelAI lorebook (``lorebookVersion``, whose entries have
    ``keys`` too)."""
    if any(k in t for k in ("spec", "data", "kind", "lorebookVersion")) or _first_entry(t) is None:
        return False
    return is_character_book(t)


def character(s: Sniff) -> float:
    t = s.json_object
    if (
        t is not None
        and t.get("kind") == CHARACTER
        and isinstance(t.get("persona"), dict)
        and isinstance(t.get("greeting"), str)
    ):
        return 1.0
    return 0.0


def lorebook(s: Sniff) -> float:
    t = s.json_object
    if t is None:
        return 0.0
    if t.get("kind") == MEMORY:
        return 1.0
    if "kind" in t:
        return 0.0
    if is_native_book(t):
        return 0.9
    if is_ccv3_book(t):
        return 0.7
    return 0.0
