"""Marinara-Engine row plumbing shared by its codecs: column readers, string booleans, JSON-string
columns, and the escrow overlay that writes a row back in the form it came in.

The column readers (:func:`text`, :func:`number`, :func:`flag`, :func:`str_list`) read a row's key
through the one reader of untrusted JSON (``formats/_shared/wire.py``'s ``MapContext``) and its
policy: a coercible value of the wrong type is read and noted in the context, anything else is
``Malformed`` at its path. Marinara's own ``"true"``/``"false"`` spelling is not a wrong type.

Marinara's table store keeps booleans as the strings ``"true"``/``"false"`` and many columns as
JSON-encoded strings (``'["ai_output"]'``, the preset ``parameters``). Some payloads are those raw
rows (the regex API, persona and preset exports), others are decoded (regex client exports,
lorebook exports). Codecs read both through :func:`flag` and :func:`json_col`, and write through a
:class:`Style` observed from the file itself, so a row that kept ``"false"`` keeps it, a column that
was a JSON string stays a JSON string, and an edit inside a JSON string (a changed temperature in
``parameters``) keeps every key bunzai does not map.
"""

from __future__ import annotations

import abc
import contextlib
import json
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import orjson

from bunzai_codecs.core import basecache, seal
from bunzai_codecs.core.codec import Codec
from bunzai_codecs.core.entity import Decoded
from bunzai_codecs.core.errors import Malformed, json_path
from bunzai_codecs.core.overlay import merge3
from bunzai_codecs.core.sniff import Sniff, parse_json
from bunzai_codecs.formats._shared.wire import MapContext, read_bool, read_num, read_text, wrong

if TYPE_CHECKING:
    from bunzai_codecs.core.codec import EmitContext
    from bunzai_codecs.core.entity import CanonicalEntity
    from bunzai_codecs.entities.base import Body

Path = tuple[str | int, ...]

#: ``exportedAt`` of a fresh envelope: bytes must be deterministic, so no clock is read
#: (``EmitContext.options["exportedAt"]`` overrides it)
EPOCH = "1970-01-01T00:00:00.000Z"


def bad(message: str, path: Path) -> Malformed:
    return Malformed(message, path=json_path(path))


def decode_tree(
    codec: Codec, s: Sniff, read: Callable[[Any, MapContext], dict[str, Any]], *, mark: str | None = None
) -> Decoded:
    """``s``'s JSON tree as one entity of ``codec``: the body ``read`` maps from it, with the notes
    its reader made, and the tree itself as the twin; ``mark``: the tag its body is marked unedited
    since decode with (``core.seal``), for a codec whose writer gives the twin back for it."""
    tree = s.require_json()
    ctx = MapContext()
    return Decoded([codec.entity(s, read(tree, ctx), raw=tree, warnings=ctx.warnings, mark=mark)])


class EnvelopeCodec(Codec):
    """A codec of a Marinara ``exportedAt`` envelope (detected by ``marinara/detect.py``):
    ``read_tree`` maps its JSON tree to the body (``decode_tree``). The body (as ``wire`` gives it) is written
    ``fresh`` when the entity has no twin of this format, else laid over the file it came from
    (``overlay``), indented as the app's export button writes it."""

    read_tree: ClassVar[Callable[[Any, MapContext], dict[str, Any]]]

    def decode(self, s: Sniff) -> Decoded:
        return decode_tree(self, s, type(self).read_tree, mark=self._tag)

    @property
    def _tag(self) -> str:
        return f"marinara-envelope:{self.id}"

    def wire(self, entity: CanonicalEntity) -> Body:
        """The body this format writes: the entity's own, unless the format inlines something."""
        return entity.body

    @abc.abstractmethod
    def fresh(self, new: dict[str, Any], exported_at: str) -> Any:
        """The file for body dump ``new`` with no twin, stamped ``exported_at``."""

    @abc.abstractmethod
    def overlay(self, raw: Any, new: dict[str, Any]) -> Any:
        """The twin's tree ``raw`` with body dump ``new`` laid over it."""

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        body = self.wire(entity)
        twin = entity.twin(self.id)
        if twin is None:
            tree = self.fresh(body.dump(), ctx.options.get("exportedAt", EPOCH))
        elif body is entity.body and seal.holds(body, self._tag, twin.raw):
            # unedited since decode: the overlay of its rows on the twin's is the twin
            tree = twin.raw
            if basecache.CHECK and orjson.dumps(self.overlay(tree, body.dump())) != orjson.dumps(tree):
                raise basecache.RuleBroken(f"{self.id}: an unedited body's overlay is not its twin")
        else:
            tree = self.overlay(twin.raw, body.dump())
        return orjson.dumps(tree, option=orjson.OPT_INDENT_2)


# -- typed readers -----------------------------------------------------------------------------


def obj(value: Any, path: Path, what: str = "an object") -> dict[str, Any]:
    if not isinstance(value, dict):
        raise wrong(json_path(path), what, value)
    return value


def arr(value: Any, path: Path, what: str = "an array") -> list[Any]:
    if not isinstance(value, list):
        raise wrong(json_path(path), what, value)
    return value


def text(ctx: MapContext, row: dict[str, Any], key: str, path: Path, default: str = "") -> str:
    """A string column; absent or null gives ``default``; a number is read as its text (noted)."""
    v = row.get(key)
    if v is None or isinstance(v, str):
        return default if v is None else v
    return read_text(v, ctx, (*path, key), default)


def opt_text(ctx: MapContext, row: dict[str, Any], key: str, path: Path) -> str | None:
    """A string column whose empty or whitespace-only value means "not set"."""
    v = text(ctx, row, key, path)
    return v if v.strip() else None


def number(ctx: MapContext, row: dict[str, Any], key: str, path: Path, default: Any = None) -> Any:
    """A JavaScript number (int or float, never a bool); a numeric string is read as Marinara's
    ``Number(x)`` does (noted; the twin keeps the string). Absent or null gives ``default``."""
    v = row.get(key)
    if v is None:
        return default
    return to_number(ctx, v, (*path, key))


def to_number(ctx: MapContext, v: Any, path: Path) -> int | float:
    """``v`` (not null) read where a number belongs, by the one reader's policy."""
    return read_num(v, ctx, path)


def flag(ctx: MapContext, row: dict[str, Any], key: str, path: Path, default: bool) -> bool:
    """A boolean column: a JSON boolean or Marinara's own ``"true"``/``"false"`` string (its table
    store's spelling, not a wrong type: read without a note)."""
    v = row.get(key)
    if v is None:
        return default
    if isinstance(v, bool):
        return v
    if v == "true":
        return True
    if v == "false":
        return False
    return read_bool(v, ctx, (*path, key), default)


def json_col(row: dict[str, Any], key: str, path: Path, default: Any = None) -> Any:
    """A JSON column: a JSON-encoded string (``""`` = unset) or the decoded value itself."""
    v = row.get(key)
    if v is None:
        return default
    if isinstance(v, str):
        if not v.strip():
            return default
        try:
            return parse_json(v, what=f"JSON in {key}")
        except Malformed as exc:
            raise bad(exc.message, (*path, key)) from None
    return v


def str_list(ctx: MapContext, value: Any, path: Path) -> list[str]:
    """A list of strings; a number is read as its text (Marinara's importers call ``String``), noted."""
    return ctx.str_list(value, path)


def unique_ids(ids: Iterable[str]) -> list[str]:
    """Ids made unique in order: a repeated id gets ``-2``, ``-3``... (stable for the same input)."""
    given = list(ids)
    taken = set(given)
    seen: set[str] = set()
    out = []
    for i in given:
        if i not in seen:
            seen.add(i)
            out.append(i)
            continue
        n = 2
        while f"{i}-{n}" in taken or f"{i}-{n}" in seen:
            n += 1
        cand = f"{i}-{n}"
        seen.add(cand)
        out.append(cand)
    return out


def js_dumps(value: Any) -> str:
    """``JSON.stringify(value)``: compact, non-ASCII kept, integral floats written as integers."""
    return json.dumps(_js_numbers(value), ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _js_numbers(v: Any) -> Any:
    if isinstance(v, float) and v.is_integer() and abs(v) < 2**53:
        return int(v)
    if isinstance(v, dict):
        return {k: _js_numbers(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_js_numbers(x) for x in v]
    return v


# -- writing rows back in their own form ----------------------------------------------------------


@dataclass(frozen=True)
class RowSpec:
    """Which columns of a row kind hold booleans and which hold JSON values."""

    bools: frozenset[str] = frozenset()
    json: frozenset[str] = frozenset()

    @classmethod
    def of(cls, bools: Iterable[str] = (), json: Iterable[str] = ()) -> RowSpec:
        return cls(frozenset(bools), frozenset(json))


@dataclass
class Style:
    """How one file writes a row kind: per column, raw (string) or decoded; plus which columns the
    file's rows carry at all (a v1.5.8 regex row has no ``applyMode``: an edit must not add one)."""

    spec: RowSpec
    raw_form: bool
    strings: dict[str, bool] = field(default_factory=dict)
    columns: set[str] = field(default_factory=set)

    @classmethod
    def observe(cls, rows: Iterable[Any], spec: RowSpec, *, raw_form: bool) -> Style:
        """``raw_form`` is the default when the file says nothing (no row has the column, or no row
        at all): Marinara's own export of this payload. Any string boolean in the file makes the
        whole file raw-form."""
        strings: dict[str, bool] = {}
        columns: set[str] = set()
        for row in rows:
            if not isinstance(row, dict):
                continue
            columns.update(row)
            for k in spec.bools | spec.json:
                v = row.get(k)
                if k in strings or v is None:
                    continue
                if (k in spec.bools and isinstance(v, bool | str)) or k in spec.json:
                    strings[k] = isinstance(v, str)
        if any(strings.get(k) for k in spec.bools):
            raw_form = True
        elif any(k in strings for k in spec.bools):
            raw_form = False
        return cls(spec, raw_form, strings, columns)

    @classmethod
    def fresh(cls, spec: RowSpec, *, raw_form: bool) -> Style:
        return cls(spec, raw_form)

    def has(self, column: str) -> bool:
        """Whether the file's rows carry ``column`` (a fresh file carries every column)."""
        return not self.columns or column in self.columns

    def render(self, key: str, value: Any) -> Any:
        """``value`` (decoded) in this file's form for column ``key``."""
        as_string = self.strings.get(key, self.raw_form)
        if key in self.spec.bools and isinstance(value, bool):
            return ("true" if value else "false") if as_string else value
        if key in self.spec.json and value is not None and not isinstance(value, str) and as_string:
            return js_dumps(value)
        return value

    def row(self, decoded: dict[str, Any]) -> dict[str, Any]:
        return {k: self.render(k, v) for k, v in decoded.items()}


def view(row: dict[str, Any], spec: RowSpec) -> dict[str, Any]:
    """``row`` with string booleans and JSON strings decoded (a new dict; ``row`` is untouched).
    A JSON string that does not parse stays a string."""
    out = dict(row)
    for k, v in row.items():
        if not isinstance(v, str):
            continue
        if k in spec.bools and v in ("true", "false"):
            out[k] = v == "true"
        elif k in spec.json and v.strip():
            with contextlib.suppress(Malformed):
                out[k] = parse_json(v)
    return out


def _same(a: Any, b: Any) -> bool:
    return a is b or (type(a) is type(b) and a == b)


def merge_row(raw: Any, base: dict[str, Any], new: dict[str, Any], style: Style) -> Any:
    """Escrow overlay of one row: ``merge3`` on the decoded view of ``raw``, then every column whose
    value did not change gets its raw spelling back; changed columns take the file's form."""
    if not isinstance(raw, dict):
        return style.row(new)
    v = view(raw, style.spec)
    m = merge3(v, base, new)
    if m is v:
        return raw
    out = {}
    for k, val in m.items():
        out[k] = raw[k] if k in raw and _same(val, v[k]) else style.render(k, val)
    return out


def merge_rows(
    raw: Sequence[Any],
    base: Sequence[dict[str, Any]],
    base_keys: Sequence[Hashable],
    new: Sequence[dict[str, Any]],
    new_keys: Sequence[Hashable],
    style: Style,
    *,
    merge: Callable[[Any, dict[str, Any], dict[str, Any]], Any] | None = None,
) -> list[Any]:
    """Rows paired by key (a canonical id, unique by construction), in the new order: a row the
    body kept is overlaid on its own raw row (so unknown columns stay with the right content after
    a reorder); a new row is written fresh in the file's form; a dropped row is gone."""
    if list(base_keys) == list(new_keys) and list(base) == list(new) and isinstance(raw, list):
        return raw
    where = {k: i for i, k in enumerate(base_keys)}
    one = merge or (lambda r, b, n: merge_row(r, b, n, style))
    out = []
    for k, n in zip(new_keys, new, strict=True):
        i = where.get(k)
        out.append(style.row(n) if i is None or i >= len(raw) else one(raw[i], base[i], n))
    return out


def replace_key(d: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """``d`` with ``d[key] = value`` (a copy unless it already holds that very value; order kept)."""
    if key in d and d[key] is value:
        return d
    out = dict(d)
    out[key] = value
    return out


#: what a Marinara export's file name ends with: its stem is the name without it
MARINARA_SUFFIXES = (".marinara.json", ".json")
