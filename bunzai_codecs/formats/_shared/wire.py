"""The one reader for untrusted JSON: check a wire value's type and say where it is when it is wrong.

Every codec reads untrusted trees through these, so a wrong type becomes a ``Malformed`` with
the JSON path (``$.data.character_book.entries[3].keys``) instead of a stray ``TypeError``. They are
deliberately small and allocation-free on the happy path: a 20 KB card goes through a few hundred
of these calls.

Leniency is one policy, written once (:class:`MapContext`): JavaScript apps write numbers where
strings belong and numeric strings where numbers belong (``"0.5"`` talkativeness), so the readers
accept what a JavaScript reader would coerce and note it, in one style (``<json path>: expected
<what>, found <what>; read as <value>``); anything else is an error, or in a lenient context the
field's default (noted the same way). The escrow twin restores the raw value on a same-format
export, so coercion here never changes a file that is written back.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from bunzai_codecs.core.errors import Malformed, join_path
from bunzai_codecs.core.sniff import json_integer

#: a JSON path below a context, as parts: ``("entries", 3, "keys")``
Path = tuple[str | int, ...]


class MapContext:
    """Where a mapper is in the input tree, and the non-fatal notes it made on the way: the one
    reader every codec reads untrusted JSON with.

    ``path`` is the JSON path of the object being mapped (built only when asked for: mappers ask on
    errors, so the happy path never formats a path); ``warnings`` collects notes that belong on the
    decoded entity (``CanonicalEntity.warnings``), e.g. an unknown ``selectiveLogic`` value that fell
    back to ``and_any``. Each note is kept once, however often a value is read.

    The policy for a value of the wrong type, the same in every codec:

    - a **coercible** scalar (``"0.5"`` where a number belongs, ``7`` where a string belongs, ``1`` or
      ``"true"`` where a boolean belongs) is read as what a JavaScript app would make of it, and
      noted: ``$.path: expected a number, found the string '0.5'; read as 0.5``. The escrow twin
      keeps the raw value, so a same-format export writes it back unchanged;
    - any other scalar of the wrong type is a ``Malformed`` error at its path (``expected a number,
      found a boolean``), unless the context is ``lenient`` (apps that store what their UI hands
      them, e.g. SillyTavern's world info and presets): then it is noted the same way and read as
      the field's default;
    - a **structure** of the wrong type (an object or array) is always ``Malformed``.
    """

    __slots__ = ("_parts", "_path", "lenient", "warnings")

    def __init__(
        self,
        path: str = "$",
        warnings: list[str] | None = None,
        _parts: tuple[str | int, ...] = (),
        *,
        lenient: bool = False,
    ) -> None:
        self._path = path
        self._parts = _parts
        self.warnings: list[str] = [] if warnings is None else warnings
        self.lenient = lenient

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
        return MapContext(self._path, self.warnings, self._parts + parts, lenient=self.lenient)

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def warn_at(self, path: Path, message: str) -> None:
        """A note about the value at ``path`` below this object: ``<json path>: <message>``."""
        self.warn(f"{self.at(*path)}: {message}")

    def __repr__(self) -> str:
        return f"<MapContext {self.path}>"

    # -- structures: a wrong type is always an error ---------------------------------------------

    def obj(self, v: Any, path: Path = (), what: str = "an object") -> dict[str, Any]:
        if v.__class__ is dict:
            return v
        if isinstance(v, dict):
            return v
        raise wrong(self.at(*path), what, v)

    def arr(self, v: Any, path: Path = (), what: str = "an array") -> list[Any]:
        if isinstance(v, list):
            return v
        raise wrong(self.at(*path), what, v)

    def str_list(self, v: Any, path: Path = ()) -> list[str]:
        """An array of strings; a number inside is read as its text (noted); anything else fails."""
        items = self.arr(v, path, "an array of strings")
        for x in items:
            if x.__class__ is not str:
                break
        else:
            return items
        return [_item_str(x, self, path, i) for i, x in enumerate(items)]

    # -- scalars: coercible is noted and kept; anything else per the context's mode --------------

    def num(self, v: Any, path: Path = (), default: Any = None) -> Any:
        """A number; ``null``/absent is ``default``; numeric text is read as its number (noted)."""
        if v is None:
            return default
        if v.__class__ is int or (v.__class__ is float and math.isfinite(v)):
            return v
        return read_num(v, self, path, default)

    def boolean(self, v: Any, path: Path = (), default: Any = None) -> Any:
        """A boolean; ``null``/absent is ``default``; ``0``/``1``/``"true"``/``"false"`` read (noted)."""
        if v is None:
            return default
        if v is True or v is False:
            return v
        return read_bool(v, self, path, default)

    def text(self, v: Any, path: Path = (), default: Any = None) -> Any:
        """A string; ``null``/absent is ``default``; a number is read as its JavaScript text (noted)."""
        if v is None:
            return default
        if v.__class__ is str:
            return v
        return read_text(v, self, path, default)

    def opaque(self, v: Any, path: Path = ()) -> dict[str, Any] | None:
        """An object kept as is; in a lenient context, anything else is noted and left in escrow."""
        if v is None or isinstance(v, dict):
            return v
        if not self.lenient:
            raise wrong(self.at(*path), "an object", v)
        self.warn_at(path, f"expected an object, found {found(v)}; left in escrow")
        return None


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


def wrong_at(parts: Path, expected: str, value: Any) -> Malformed:
    """:func:`wrong` with the path given as parts below ``$``: ``("entries", 3, "keys")``."""
    return wrong(join_path("$", *parts), expected, value)


def found(v: Any) -> str:
    """What a wrong value is, for a note: its type, and a scalar's text (``the string '0.5'``)."""
    if isinstance(v, str):
        return f"the string {v[:40]!r}"
    if isinstance(v, bool):
        return f"the boolean {'true' if v else 'false'}"
    if isinstance(v, int | float):
        return f"the number {js_number_text(v)}"
    return type_name(v)


def _where(ctx: MapContext, where: str | Path) -> str:
    return where if isinstance(where, str) else ctx.at(*where)


def coerced(ctx: MapContext, where: str | Path, expected: str, v: Any, read: Any) -> Any:
    """Note that ``v`` (of the wrong type) was read as ``read``, and return ``read``."""
    ctx.warn(f"{_where(ctx, where)}: expected {expected}, found {found(v)}; read as {read!r}")
    return read


def mismatch(ctx: MapContext, where: str | Path, expected: str, v: Any, default: Any) -> Any:
    """A value that cannot be read as ``expected``: ``Malformed``, or in a lenient context the
    ``default`` (noted)."""
    if not ctx.lenient:
        raise wrong(_where(ctx, where), expected, v)
    return coerced(ctx, where, expected, v, default)


def read_num(v: Any, ctx: MapContext, where: str | Path, default: Any = None) -> Any:
    """The policy's reading of a value where a number belongs (slow path of :meth:`MapContext.num`)."""
    if v is None:
        return default
    if isinstance(v, bool):
        return mismatch(ctx, where, "a number", v, default)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else mismatch(ctx, where, "a finite number", v, default)
    if isinstance(v, str):
        n = parse_number(v)
        if n is not None:
            return coerced(ctx, where, "a number", v, n)
    return mismatch(ctx, where, "a number", v, default)


def read_bool(v: Any, ctx: MapContext, where: str | Path, default: Any = None) -> Any:
    """The policy's reading of a value where a boolean belongs."""
    if v is None:
        return default
    if isinstance(v, bool):
        return v
    if (v.__class__ is int and v in (0, 1)) or v in ("true", "false"):
        return coerced(ctx, where, "a boolean", v, v == 1 or v == "true")
    return mismatch(ctx, where, "a boolean", v, default)


def read_text(v: Any, ctx: MapContext, where: str | Path, default: Any = None) -> Any:
    """The policy's reading of a value where a string belongs."""
    if v is None:
        return default
    if isinstance(v, str):
        return v
    if isinstance(v, int | float) and not isinstance(v, bool):
        return coerced(ctx, where, "a string", v, js_number_text(v))
    return mismatch(ctx, where, "a string", v, default)


def camel(snake: str) -> str:
    """A snake_case key in the camelCase spelling ST's world-info file (and RisuAI, Chub) gives it:
    ``match_whole_words`` -> ``matchWholeWords``; a one-word key is itself."""
    head, *rest = snake.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


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


def opt_str(v: Any, path: str, ctx: MapContext) -> str | None:
    """A string; ``null``/absent is ``None``; a number is read as its JavaScript text (noted in
    ``ctx``); anything else per ``ctx``'s mode (:class:`MapContext`)."""
    if v is None or isinstance(v, str):
        return v
    return read_text(v, ctx, path)


def opt_bool(v: Any, path: str, ctx: MapContext) -> bool | None:
    """A boolean; ``null``/absent is ``None``; ``0``/``1``/``"true"``/``"false"`` read (noted)."""
    if v is None or isinstance(v, bool):
        return v
    return read_bool(v, ctx, path)


def parse_number(s: str) -> int | float | None:
    """``"0.5"`` -> 0.5, ``"1"`` -> 1; ``None`` for text that is not a finite number (``""``,
    ``"abc"``, ``"NaN"``). The one reading of numeric text every codec uses. An integer beyond 64
    bits is a float, as the same digits written as a JSON number are (:func:`json_integer`)."""
    t = s.strip()
    if not t:
        return None
    if t.isascii() and (t.isdigit() or (t[0] in "+-" and t[1:].isdigit())):
        return json_integer(t)
    try:
        f = float(t)
    except ValueError:
        return None
    return f if math.isfinite(f) else None


#: JavaScript's ``Number.MAX_SAFE_INTEGER``: the apps bunzai writes for are JavaScript, and none of
#: them holds a larger integer exactly
MAX_SAFE_INT = 2**53 - 1


def int_text(s: str) -> int | None:
    """The integer ASCII decimal text spells (``"12"``, ``"-3"``, ``"007"`` is 7) when an app holds
    it exactly (within ``MAX_SAFE_INT``); ``None`` for any other text: not a number, Unicode digits
    (``"²"``), or more than an app can hold (a 39-digit id). The one test every writer makes before
    it writes an id, position or placement text as a number: ``None`` means keep the text (or, where
    only a number will do, renumber), never an integer the app would round or the JSON writer refuse."""
    t = s[1:] if s[:1] == "-" else s
    if not (t.isascii() and t.isdigit()) or len(t.lstrip("0")) > 16:
        return None
    n = int(s)
    return n if -MAX_SAFE_INT <= n <= MAX_SAFE_INT else None


def first_text(obj: Any, keys: Iterable[str]) -> str | None:
    """The first non-empty string among ``obj``'s ``keys``; ``None`` when there is none or ``obj``
    is not an object (a lookup that never raises, for ids and refs with several spellings)."""
    if isinstance(obj, Mapping):
        for k in keys:
            v = obj.get(k)
            if isinstance(v, str) and v:
                return v
    return None


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


def utc_from_us(us: int) -> datetime | None:
    """The UTC date ``us`` microseconds after the epoch; ``None`` when no calendar date holds it
    (before year 1 or after 9999: a date read from a number that does not fit). A writer then writes
    its format's unknown date, or none: never an internal error."""
    try:
        return _EPOCH + timedelta(microseconds=us)
    except OverflowError:
        return None


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


def opt_num(v: Any, path: str, ctx: MapContext) -> int | float | None:
    """A number; ``null``/absent is ``None``; numeric text is read as its number (noted)."""
    if v is None or v.__class__ is int:
        return v
    return read_num(v, ctx, path)


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


def opt_str_list(v: Any, path: str, ctx: MapContext) -> list[str] | None:
    """An array of strings (a number inside read as its text, noted); ``null``/absent is ``None``;
    anything else ``Malformed``."""
    if v is None:
        return None
    if not isinstance(v, list):
        raise wrong(path, "an array of strings", v)
    for x in v:
        if not isinstance(x, str):
            break
    else:
        return v  # the common case: no copy
    return [_item_str(x, ctx, path, i) for i, x in enumerate(v)]


def _item_str(x: Any, ctx: MapContext, where: str | Path, i: int) -> str:
    if isinstance(x, str):
        return x
    at = join_path(where, i) if isinstance(where, str) else (*where, i)
    if isinstance(x, int | float) and not isinstance(x, bool):
        return coerced(ctx, at, "a string", x, js_number_text(x))
    raise wrong(_where(ctx, at), "a string", x)


# -- lazy-path variants: the JSON path is built only when the value is wrong (hot loops) ------------


def str_at(v: Any, ctx: MapContext, *parts: str | int) -> str | None:
    """:func:`opt_str` with the path given as ``ctx`` + parts, joined only when the value is off."""
    if v is None or v.__class__ is str:
        return v
    return read_text(v, ctx, parts)


def bool_at(v: Any, ctx: MapContext, *parts: str | int) -> bool | None:
    """:func:`opt_bool` with a lazily built path."""
    if v is None or v is True or v is False:
        return v
    return read_bool(v, ctx, parts)


def num_at(v: Any, ctx: MapContext, *parts: str | int) -> int | float | None:
    """:func:`opt_num` with a lazily built path."""
    if v is None or v.__class__ is int:
        return v
    return read_num(v, ctx, parts)


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
    return ctx.str_list(v, parts)


def opt_obj(v: Any, path: str) -> dict[str, Any] | None:
    """An object; ``null``/absent is ``None``; else ``Malformed``."""
    if v is None or isinstance(v, dict):
        return v
    raise wrong(path, "an object", v)


def obj(v: Any, path: str, what: str = "an object") -> dict[str, Any]:
    """An object, required: ``Malformed`` at ``path`` saying it expected ``what`` otherwise."""
    if isinstance(v, dict):
        return v
    raise wrong(path, what, v)


def get_obj(parent: Mapping[str, Any], key: str, path: str) -> dict[str, Any] | None:
    return opt_obj(parent.get(key), join_path(path, key))


__all__ = [
    "MAX_SAFE_INT",
    "MapContext",
    "Path",
    "bool_at",
    "camel",
    "coerced",
    "file_stem",
    "first_text",
    "found",
    "get_obj",
    "id_text",
    "int_text",
    "iso_to_seconds",
    "join_path",
    "js_number_text",
    "loose_num",
    "mismatch",
    "num_at",
    "obj",
    "opt_bool",
    "opt_num",
    "opt_obj",
    "opt_str",
    "opt_str_list",
    "parse_number",
    "read_bool",
    "read_num",
    "read_text",
    "str_at",
    "strs_at",
    "type_name",
    "utc_from_us",
    "wrong",
    "wrong_at",
]
