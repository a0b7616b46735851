"""Detection of Chub's lorebook (a ``character_book`` with Chub's book-level ``extensions.chub``);
imports no canonical model."""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core.format import object_detector
from bunzai_codecs.formats.tavern.detect import is_character_book

CHUB = "chub"


def is_chub_book(tree: Any) -> bool:
    """A ``character_book``-shaped object carrying Chub's book-level ``extensions.chub`` object."""
    if not is_character_book(tree):
        return False
    ext = tree.get("extensions")
    return isinstance(ext, dict) and isinstance(ext.get(CHUB), dict)


lorebook = object_detector(is_chub_book, 1.0)
