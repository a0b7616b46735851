"""SillyTavern's small wire helpers: integer-valued numbers, ``""`` as "not set", deterministic JSON,
and the ``merge3`` key of its record lists.

SillyTavern stores what its UI hands it, so real files mix ``100`` and ``"100"``, ``null`` and
``0``, ``false`` and ``0``: its world info, preset and persona codecs read their trees through a
lenient :class:`~bunzai_codecs.formats._shared.wire.MapContext` (a scalar of the wrong type is noted
and read as the field's default; a structure of the wrong type is ``Malformed``).
"""

from __future__ import annotations

from typing import Any

import orjson

from bunzai_codecs.formats._shared.wire import Path

__all__ = ["Path", "dumps", "int_like", "keyed_items", "none_if_empty"]


def int_like(v: Any) -> int | None:
    """``4`` and ``4.0`` -> 4; anything else (bools included) -> None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return None


def none_if_empty(s: str | None) -> str | None:
    """SillyTavern writes ``""`` for "not set" in many string fields."""
    return s if s else None


def dumps(tree: Any) -> bytes:
    """Deterministic, human-readable JSON (2-space indent, keys in tree order, trailing newline)."""
    return orjson.dumps(tree, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)


def keyed_items(item: Any) -> Any:
    """``merge3`` list key for SillyTavern lists of records: prompts by ``identifier``,
    ``prompt_order`` slots by ``character_id``; ``None`` (pair by position) for anything else."""
    if isinstance(item, dict):
        if "identifier" in item:
            return ("identifier", _hashable(item["identifier"]))
        if "character_id" in item:
            return ("character_id", _hashable(item["character_id"]))
    return None


def _hashable(v: Any) -> Any:
    return v if isinstance(v, str | int | float | bool) or v is None else orjson.dumps(v)
