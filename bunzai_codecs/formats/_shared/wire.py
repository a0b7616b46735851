"""Typed readers for native JSON values: check a wire value's type and say where it is when it is wrong.

Every shared mapper reads untrusted trees through these, so a wrong type becomes a ``Malformed`` with
the JSON path (``$.data.character_book.entries[3].keys``) instead of a stray ``TypeError``. They are
deliberately small and allocation-free on the happy path: a 20 KB card goes through a few hundred
of these calls.

Leniency is per helper and documented: JavaScript apps write numbers where strings belong and
numeric strings where numbers belong (``"0.5"`` talkativeness), so the readers accept what a
JavaScript reader would coerce; anything else is an error. The escrow twin restores the raw value
on a same-format export, so coercion here never changes a file that is written back.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from bunzai_codecs.core.errors import Malformed, join_path


class MapContext:
    """Where a mapper is in the input tree, and the non-fatal notes it made on the way.

    ``path`` is the JSON path of the object being mapped (built only when asked for: mappers ask on
    errors, so the happy path never formats a path); ``warnings`` collects notes that belong on the
    decoded entity (``CanonicalEntity.warnings``), e.g. an unknown ``selectiveLogic`` value that fell
    back to ``and_any``.
    """

    __slots__ = ("_parts", "_path", "warnings")

    def __init__(
        self, path: str = "$", warnings: list[str] | None = None, _parts: tuple[str | int, ...] = ()
    ) -> None:
        self._path = path
        self._parts = _parts
        self.warnings: list[str] = [] if warnings is None else warnings

    @property
    def path(self) -> str:
        if self._parts:
            self._path = join_path(self._path, *self._parts)
            self._parts = ()
        return self._path

    def at(self, *parts: str | int) -> str:
        """The JSON path of ``parts`` below this object."""
        return join_path(self.path, *parts)

    def child(self, *parts: str | int) -> MapContext:
        """A context for a nested object that shares this one's warning list (its path is lazy)."""
        return MapContext(self._path, self.warnings, self._parts + parts)

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    def __repr__(self) -> str:
        return f"<MapContext {self.path}>"


def type_name(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int | float):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__


def wrong(path: str, expected: str, value: Any) -> Malformed:
    """The error for a value of the wrong type."""
    return Malformed(f"expected {expected}, found {type_name(value)}", path=path)


def js_number_text(v: int | float) -> str:
    """A number as JavaScript's ``String(n)`` writes it (``1.0`` -> ``"1"``)."""
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e21:
        return str(int(v))
    return str(v)


def id_text(v: Any, index: int, ctx: MapContext, *, empty_is_absent: bool = True) -> str:
    """A row's source id as text: a string as is, a number as JavaScript's ``String(n)``; absent
    (and ``""`` when ``empty_is_absent``) is the row's index; anything else is ``Malformed`` at
    ``<row>.id``."""
    if v is None or (empty_is_absent and v == ""):
        return str(index)
    if isinstance(v, str):
        return v
    if isinstance(v, int | float) and not isinstance(v, bool):
        return js_number_text(v)
    raise wrong(ctx.at("id"), "a string id", v)


def opt_str(v: Any, path: str) -> str | None:
    """A string; ``null``/absent is ``None``; a number becomes its JavaScript text; else ``Malformed``."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, int | float) and not isinstance(v, bool):
        return js_number_text(v)
    raise wrong(path, "a string", v)


def opt_bool(v: Any, path: str) -> bool | None:
    """A boolean; ``null``/absent is ``None``; else ``Malformed``."""
    if v is None or isinstance(v, bool):
        return v
    raise wrong(path, "a boolean", v)


def parse_number(s: str) -> int | float | None:
    """``"0.5"`` -> 0.5, ``"1"`` -> 1; ``None`` for text that is not a finite number (``""``,
    ``"abc"``, ``"NaN"``). The one reading of numeric text every codec uses."""
    t = s.strip()
    if not t:
        return None
    if t.isascii() and (t.isdigit() or (t[0] in "+-" and t[1:].isdigit())):
        return int(t)
    try:
        f = float(t)
    except ValueError:
        return None
    return f if math.isfinite(f) else None


def file_stem(name: str, suffixes: tuple[str, ...] = ()) -> str:
    """A file name without its folders (``/`` or ``\\``) and its extension: the name an app gives
    what it saved under that name (``worlds/Eldoria.json`` -> ``Eldoria``). With ``suffixes``, only
    those are removed (case-insensitive, first match): ``x.marinara.json`` -> ``x``."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    if suffixes:
        low = base.lower()
        return next((base[: -len(x)] for x in suffixes if low.endswith(x)), base)
    dot = base.rfind(".")
    return base[:dot] if dot > 0 else base


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def iso_to_seconds(value: Any, *, ms: bool = False) -> int | float | None:
    """An ISO-8601 date (JavaScript's ``toISOString()`` and kin) as unix seconds: an int when whole,
    else exact to the microsecond (``ms``: truncated to the millisecond, for apps that keep no
    more); ``None`` when it is not a non-empty string that reads as a date (a naive one is UTC)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        t = datetime.fromisoformat(value)
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    d = t - _EPOCH
    us = (d.days * 86_400 + d.seconds) * 1_000_000 + d.microseconds
    if ms:
        us -= us % 1000
    return us // 1_000_000 if us % 1_000_000 == 0 else us / 1_000_000


def opt_num(v: Any, path: str) -> int | float | None:
    """A number (a numeric string is read as one); ``null``/absent is ``None``; else ``Malformed``."""
    if v is None:
        return None
    if isinstance(v, bool):
        raise wrong(path, "a number", v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        if not math.isfinite(v):
            raise Malformed("expected a finite number", path=path)
        return v
    if isinstance(v, str):
        n = parse_number(v)
        if n is None:
            raise Malformed(f"expected a number, found the string {v[:40]!r}", path=path)
        return n
    raise wrong(path, "a number", v)


def loose_num(v: Any) -> int | float | None:
    """A number or numeric string as a number; anything else ``None`` (never raises)."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, str):
        return parse_number(v)
    return None


def opt_str_list(v: Any, path: str) -> list[str] | None:
    """An array of strings (numbers coerced); ``null``/absent is ``None``; else ``Malformed``."""
    if v is None:
        return None
    if not isinstance(v, list):
        raise wrong(path, "an array of strings", v)
    for x in v:
        if not isinstance(x, str):
            break
    else:
        return v  # the common case: no copy
    return [_item_str(x, path, i) for i, x in enumerate(v)]


def _item_str(x: Any, path: str, i: int) -> str:
    if isinstance(x, str):
        return x
    if isinstance(x, int | float) and not isinstance(x, bool):
        return js_number_text(x)
    raise wrong(join_path(path, i), "a string", x)


# -- lazy-path variants: the JSON path is built only when the value is wrong (hot loops) ------------


def str_at(v: Any, ctx: MapContext, *parts: str | int) -> str | None:
    """:func:`opt_str` with the path given as ``ctx`` + parts, joined only on error."""
    if v is None or v.__class__ is str:
        return v
    return opt_str(v, ctx.at(*parts))


def bool_at(v: Any, ctx: MapContext, *parts: str | int) -> bool | None:
    """:func:`opt_bool` with a lazily built path."""
    if v is None or v is True or v is False:
        return v
    raise wrong(ctx.at(*parts), "a boolean", v)


def num_at(v: Any, ctx: MapContext, *parts: str | int) -> int | float | None:
    """:func:`opt_num` with a lazily built path."""
    if v is None or v.__class__ is int:
        return v
    return opt_num(v, ctx.at(*parts))


def strs_at(v: Any, ctx: MapContext, *parts: str | int) -> list[str] | None:
    """:func:`opt_str_list` with a lazily built path."""
    if v is None:
        return None
    if v.__class__ is list:
        for x in v:
            if x.__class__ is not str:
                break
        else:
            return v
    return opt_str_list(v, ctx.at(*parts))


def opt_obj(v: Any, path: str) -> dict[str, Any] | None:
    """An object; ``null``/absent is ``None``; else ``Malformed``."""
    if v is None or isinstance(v, dict):
        return v
    raise wrong(path, "an object", v)


def obj(v: Any, path: str) -> dict[str, Any]:
    """An object, required."""
    if isinstance(v, dict):
        return v
    raise wrong(path, "an object", v)


def get_obj(parent: Mapping[str, Any], key: str, path: str) -> dict[str, Any] | None:
    return opt_obj(parent.get(key), join_path(path, key))


__all__ = [
    "MapContext",
    "bool_at",
    "file_stem",
    "get_obj",
    "id_text",
    "iso_to_seconds",
    "join_path",
    "js_number_text",
    "loose_num",
    "num_at",
    "obj",
    "opt_bool",
    "opt_num",
    "opt_obj",
    "opt_str",
    "opt_str_list",
    "parse_number",
    "str_at",
    "strs_at",
    "type_name",
    "wrong",
]
