"""Detection of Chub's lorebook (a ``character_book`` with Chub's book-level ``extensions.chub``);
imports no canonical model."""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.formats.tavern.detect import is_character_book

CHUB = "chub"


def is_chub_book(tree: Any) -> bool:
    """A ``character_book``-shaped object carrying Chub's book-level ``extensions.chub`` object."""
    if not is_character_book(tree):
        return False
    ext = tree.get("extensions")
    return isinstance(ext, dict) and isinstance(ext.get(CHUB), dict)


def lorebook(s: Sniff) -> float:
    return 1.0 if is_chub_book(s.json_object) else 0.0
