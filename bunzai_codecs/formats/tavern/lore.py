"""SillyTavern lore vocabulary shared by the world-info and ``character_book`` mappers.

The numbers ST writes for an entry's position, role and secondary-key logic, and the names
canonical gives them (docs/canonical-model.md#loreentry), plus the ``/pattern/flags`` key rule. Both ST lore
dialects — the world-info file (``sillytavern-lorebook``) and the card's embedded
``character_book`` (``tavern/character_book.py``) — and every app that imports ST lore use the same
tables, so they live here once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bunzai_codecs.entities.base import MESSAGE_ROLES
from bunzai_codecs.formats._shared.wire import MapContext, camel, int_text, wrong

#: ST world-info ``position`` ints -> canonical names (docs/formats/sillytavern.md#world-info-entry---loreentry)
POSITION_NAMES: dict[int, str] = {
    0: "world",
    1: "character",
    2: "author_note_top",
    3: "author_note_bottom",
    4: "depth",
    5: "before_example",
    6: "after_example",
    7: "outlet",
}
POSITION_INTS: dict[str, int] = {v: k for k, v in POSITION_NAMES.items()}

#: ST int roles (WI entry ``role``, card book ``extensions.role``, persona ``role``); ``null`` is system
ROLE_NAMES: dict[int, str] = dict(enumerate(MESSAGE_ROLES))
ROLE_INTS: dict[str, int] = {v: k for k, v in ROLE_NAMES.items()}

#: ST ``selectiveLogic`` ints (closed: unknown values fall back to ``and_any`` with a warning)
LOGIC_NAMES: dict[int, str] = {0: "and_any", 1: "not_all", 2: "not_any", 3: "and_all"}
LOGIC_INTS: dict[str, int] = {v: k for k, v in LOGIC_NAMES.items()}


#: canonical ``scanSources`` value <- the ST camelCase WI flag and the snake_case card-book flag
SCAN_SOURCES: tuple[tuple[str, str, str], ...] = tuple(
    (canon, camel(snake), snake)
    for canon, snake in (
        ("persona_description", "match_persona_description"),
        ("character_description", "match_character_description"),
        ("character_personality", "match_character_personality"),
        ("character_depth_prompt", "match_character_depth_prompt"),
        ("character_scenario", "match_scenario"),
        ("creator_notes", "match_creator_notes"),
    )
)

#: flags a world-info regex key may carry (ST's key parser accepts exactly these)
_KEY_FLAGS = frozenset("gimsuy")


def position_name(v: Any, ctx: MapContext | None = None) -> str:
    """An ST position int as its canonical name; other ints and strings are kept verbatim (open enum)."""
    if isinstance(v, int) and not isinstance(v, bool):
        return POSITION_NAMES.get(v) or str(v)
    if isinstance(v, float) and v.is_integer():
        return POSITION_NAMES.get(int(v)) or str(v)
    return str(v)


def position_int(name: str) -> int | None:
    """The ST int for a canonical position; a numeric verbatim value (``"8"``) is its int; else
    ``None`` (kept as text: ``"²"``, or digits beyond what the app holds, :func:`int_text`)."""
    n = POSITION_INTS.get(name)
    return n if n is not None else int_text(name)


def role_name(v: Any, ctx: MapContext, path: str) -> str:
    """An ST int role as a canonical role; ``null`` is ``system``; unknown values are ``system`` + a warning."""
    return _closed_name(v, ROLE_NAMES, ROLE_INTS, "system", "role", ctx, path)


def logic_name(v: Any, ctx: MapContext, path: str) -> str:
    """An ST ``selectiveLogic`` int as a canonical name; unknown values are ``and_any`` + a warning."""
    return _closed_name(v, LOGIC_NAMES, LOGIC_INTS, "and_any", "selectiveLogic", ctx, path)


def _closed_name(
    v: Any, names: dict[int, str], ints: dict[str, int], default: str, what: str, ctx: MapContext, path: str
) -> str:
    """A closed ST enum (``names`` by int) as its canonical name: an int or a name already; ``null``
    is ``default``, so is any other value (with a warning naming ``what`` at ``path``)."""
    if v is None:
        return default
    if isinstance(v, int | float) and not isinstance(v, bool) and v in names:
        return names[int(v)]
    if isinstance(v, str) and v in ints:
        return v
    ctx.warn(f"{path}: unknown {what} {v!r} read as {default}")
    return default


def parse_key(key: str) -> dict[str, Any]:
    """A lore key as a canonical trigger dict.

    ST treats a key written ``/pattern/flags`` (non-empty pattern, flags from ``gimsuy``) as a
    regular expression and any other key as plain text. The pattern is kept verbatim, never compiled.
    """
    if len(key) >= 3 and key[0] == "/":
        j = key.rfind("/")
        if j >= 2:
            flags = key[j + 1 :]
            if all(c in _KEY_FLAGS for c in flags):
                return {"text": key[1:j], "isRegex": True, "flags": flags or None}
    return {"text": key}


def format_key(text: str, is_regex: bool, flags: str | None) -> str:
    """The inverse of :func:`parse_key`: ``/text/flags`` for a regex trigger, the text otherwise."""
    if is_regex:
        return f"/{text}/{flags or ''}"
    return text


def parse_keys(keys: list[str]) -> list[dict[str, Any]]:
    return [parse_key(k) for k in keys]


def format_keys(triggers: list[Any] | None) -> list[str]:
    """Canonical ``Trigger`` models as ST key strings (an absent list is ``[]``)."""
    if not triggers:
        return []
    return [format_key(t.text, t.isRegex, t.flags) for t in triggers]


def unique_ids(raw_ids: list[str]) -> list[str]:
    """Make entry ids unique in source order: a repeat of ``"3"`` becomes ``"3-2"``, then ``"3-3"``."""
    seen: set[str] = set()
    out = []
    for rid in raw_ids:
        uid = rid
        n = 1
        while uid in seen:
            n += 1
            uid = f"{rid}-{n}"
        seen.add(uid)
        out.append(uid)
    return out


Row = dict[str, Any]


def map_rows(
    v: Any,
    ctx: MapContext,
    path: tuple[str | int, ...],
    array: str,
    item: str,
    to_row: Callable[[dict[str, Any], int, MapContext], Row],
) -> list[Row]:
    """The array of row objects ``v`` (at ``path`` below ``ctx``) mapped row by row through
    ``to_row(row, index, row_ctx)``; ``Malformed`` saying ``array`` (``"an array of entries"``) or
    ``item`` (``"an entry object"``) where the array or one of its rows is not one."""
    if not isinstance(v, list):
        raise wrong(ctx.at(*path), array, v)
    out = []
    for i, row in enumerate(v):
        if not isinstance(row, dict):
            raise wrong(ctx.at(*path, i), item, row)
        out.append(to_row(row, i, ctx.child(*path, i)))
    return out


def with_unique_ids(rows: list[Row]) -> list[Row]:
    """``rows`` (mapped rows with an ``id``), their repeated ids made unique by :func:`unique_ids`."""
    ids = [r["id"] for r in rows]
    if len(set(ids)) != len(ids):
        for r, uid in zip(rows, unique_ids(ids), strict=True):
            r["id"] = uid
    return rows


__all__ = [
    "LOGIC_INTS",
    "LOGIC_NAMES",
    "POSITION_INTS",
    "POSITION_NAMES",
    "ROLE_INTS",
    "ROLE_NAMES",
    "SCAN_SOURCES",
    "format_key",
    "format_keys",
    "logic_name",
    "map_rows",
    "parse_key",
    "parse_keys",
    "position_int",
    "position_name",
    "role_name",
    "unique_ids",
    "with_unique_ids",
]
