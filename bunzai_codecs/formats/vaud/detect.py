"""Detection of vaud-json (a canonical entity per line) and the kind its first line holds; imports
no canonical model."""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core.entity import ENTITY_KINDS, EntityKind
from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.core.sniff import Sniff, parse_json


def _looks_like_entity(t: Any) -> bool:
    return (
        isinstance(t, dict)
        and isinstance(t.get("schemaVersion"), int)
        and t.get("kind") in ENTITY_KINDS
        and isinstance(t.get("body"), dict)
    )


def _first_line(data: bytes) -> Any:
    nl = data.find(b"\n")
    if nl < 0:
        return None
    try:
        return parse_json(data[:nl])
    except Malformed:
        return None


def entity(s: Sniff) -> float:
    t = s.json
    if t is None and s.json_error is not None and s.looks_like_json:
        first = _first_line(s.data)
        if first is None:
            return 0.0
        t = first
    return 1.0 if _looks_like_entity(t) else 0.0


def kind_of(s: Sniff) -> EntityKind | None:
    """The first line's kind: vaud-json holds every kind, and the file says which."""
    t = s.json
    if t is None and s.json_error is not None and s.looks_like_json:
        t = _first_line(s.data)
    kind = t.get("kind") if isinstance(t, dict) else None
    return kind if kind in ENTITY_KINDS else None
