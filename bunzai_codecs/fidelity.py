"""Round-trip fidelity: what a conversion keeps, loses or changes, as ``FidelityRow`` records.

Three checks per input (../docs/fidelity.md has the user's view):

1. **native round trip** — ``encode_F(decode_F(x))`` against ``x`` for the file's own format F,
   compared the way the format means it: parsed trees for JSON (and per line for JSONL), text-chunk
   payloads (base64 JSON decoded) plus every other chunk's bytes for PNG, per-member bytes with
   ``.json`` members as trees for zips (a JPEG before the zip compared as bytes), bytes otherwise;
2. **canonical stability** — ``decode_F(encode_F(e)).body == e.body`` for every entity of the file
   (a card's linked lorebook too, through the card it is embedded in);
3. **cross-format** — for every other codec T of the entity's kind,
   ``decode_T(encode_T(e))`` against ``e``, compared as canonical bodies with empty values counted
   as absent. Each lost or changed path is classed **expected** when T's ``coverage`` cannot hold
   it and **unexpected** (a bug) when it can. Entities linked to ``e`` (a card's lorebook) are
   compared too, under ``<kind>[i].`` paths, classed by the coverage of the codec that carried them.
   Paths the target *added* are recorded as ``info``: they never make a row lossy. Media are
   compared by their bytes (``media_changes``): a lost or altered image is ``media.portrait`` or
   ``media.assets[i]``, classed by whether the target holds ``<path>.sha256``; an image re-encoded
   with the same pixels (a WebP portrait as a PNG card) is a changed path of class ``info``. The few values
   a format spells differently but every app reads the same way (``SEMANTIC``: example dialogue
   as its ``<START>`` blocks) are compared in that form.

Every check gives one row per entity (the native check one per file, on its primary entity), and
each input also gets a ``decode`` row saying whether it decoded or was rejected, so a report (and
``bunzai audit``) can tell "a file that decoded now rejects". Losses are grouped by path pattern
(``entries[].content``), with a count and the first concrete path. ``ROW_SCHEMA`` is the JSON
Schema of a row's JSON form (committed as docs/schema/fidelity-row.schema.json).

Nothing here runs Beam: the pipeline's RoundTrip stage and ``bunzai fidelity`` both call
``check_file`` / ``check_decoded``.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Required, TypedDict, Unpack, cast

import orjson

from bunzai_codecs.bundle import Export, read_sniff, write
from bunzai_codecs.core import basecache, registry
from bunzai_codecs.core.codec import Codec, Coverage, normalize_path
from bunzai_codecs.core.diff import Change, diff, join
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.errors import BunzaiError
from bunzai_codecs.core.sniff import Sniff, parse_json

Check = Literal["decode", "native", "stability", "cross"]
CHECKS: tuple[Check, ...] = ("decode", "native", "stability", "cross")
Status = Literal["decoded", "rejected", "lossless", "expected", "unexpected", "error"]
LossClass = Literal["expected", "unexpected", "info"]

#: differences looked at per comparison: past this a row says "and more" through its counts
DIFF_LIMIT = 5000
#: longest entity name kept in a row (names are card text: reports escape them)
NAME_MAX = 120

_INDEX = re.compile(r"\[\d+\]")


@dataclass(frozen=True, slots=True)
class PathLoss:
    """One path pattern that was lost, changed or added, with how often and where first."""

    path: str
    """Pattern with list indices as ``[]`` (``entries[].content``); native paths keep object keys."""
    cls: LossClass
    """``expected``: the target cannot hold the path; ``unexpected``: it can, so this is a bug;
    ``info``: the target added a value, or re-encoded an image keeping its pixels (never makes a
    row lossy)."""
    count: int = 1
    """Concrete paths behind the pattern in this row."""
    at: str = ""
    """The first concrete path (``entries[3].content``)."""
    weight: int | None = None
    """Cross rows: the content weight of the source values lost or changed under this pattern
    (``content_weight``); None where not measured (native and stability rows, older rows)."""

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"path": self.path, "class": self.cls, "count": self.count, "at": self.at}
        if self.weight is not None:
            d["weight"] = self.weight
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> PathLoss:
        w = d.get("weight")
        return cls(
            str(d["path"]),
            cast(LossClass, d["class"]),
            int(d.get("count", 1)),
            str(d.get("at", "")),
            None if w is None else int(w),
        )


@dataclass(frozen=True, slots=True)
class RowError:
    """An exception a check hit: a typed ``BunzaiError`` (a refusal the codec chose; also
    ``NotImplementedError`` from a read-only format) or, with ``internal``, anything else (a bug)."""

    type: str
    message: str
    internal: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "message": self.message, "internal": self.internal}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> RowError:
        return cls(str(d["type"]), str(d.get("message", "")), bool(d.get("internal", False)))

    @classmethod
    def of(cls, exc: BaseException) -> RowError:
        # NotImplementedError: a format bunzai reads but does not write (yet) — a fact, not a bug
        typed = isinstance(exc, BunzaiError | NotImplementedError)
        internal = not typed or (isinstance(exc, BunzaiError) and exc.internal)
        msg = exc.message if isinstance(exc, BunzaiError) else str(exc)
        return cls(type(exc).__name__, " ".join(msg.split())[:500], internal)


@dataclass(slots=True)
class FidelityRow:
    """The outcome of one check on one entity (or, for ``decode``, on one input)."""

    input: str
    """Stable key of the input file (``samples/risu/x.charx``, or the uri)."""
    sha256: str
    """Digest of the input's bytes: two runs compare an input only when it did not change."""
    entity: str
    """Canonical entity id ("" for a rejected input)."""
    kind: str
    """Entity kind ("" for a rejected input)."""
    source: str
    """The format the entity was decoded from ("" when no format was recognised)."""
    target: str
    """The format written: the source itself for ``native`` and ``stability``; "" for ``decode``."""
    check: Check
    status: Status
    name: str = ""
    """The entity's display name (card text: escape it before showing it)."""
    lost: list[PathLoss] = field(default_factory=list)
    changed: list[PathLoss] = field(default_factory=list)
    added: list[PathLoss] = field(default_factory=list)
    error: RowError | None = None
    uri: str = ""
    weight: int | None = None
    """Cross rows: the content weight of the source entity and the entities linked to it (every
    populated canonical leaf value, weighed by ``content_weight``); None on other checks."""
    lost_weight: int | None = None
    """Cross rows: how much of ``weight`` did not come back unchanged (lost or changed values; all
    of it when the conversion failed). The row keeps ``weight - lost_weight``."""

    @property
    def lossy(self) -> bool:
        return self.status in ("expected", "unexpected", "error", "rejected")

    def losses(self) -> Iterator[tuple[str, PathLoss]]:
        """``("lost" | "changed" | "added", loss)`` for every path of the row."""
        for name in ("lost", "changed", "added"):
            for loss in getattr(self, name):
                yield name, loss

    def to_json(self) -> dict[str, Any]:
        return {
            "input": self.input,
            "sha256": self.sha256,
            "uri": self.uri,
            "entity": self.entity,
            "kind": self.kind,
            "name": self.name,
            "source": self.source,
            "target": self.target,
            "check": self.check,
            "status": self.status,
            "lost": [x.to_json() for x in self.lost],
            "changed": [x.to_json() for x in self.changed],
            "added": [x.to_json() for x in self.added],
            "error": self.error.to_json() if self.error else None,
            **({} if self.weight is None else {"weight": self.weight, "lost_weight": self.lost_weight}),
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> FidelityRow:
        w, lw = d.get("weight"), d.get("lost_weight")
        return cls(
            input=str(d["input"]),
            sha256=str(d.get("sha256", "")),
            uri=str(d.get("uri", "")),
            entity=str(d.get("entity", "")),
            kind=str(d.get("kind", "")),
            name=str(d.get("name", "")),
            source=str(d.get("source", "")),
            target=str(d.get("target", "")),
            check=cast(Check, d["check"]),
            status=cast(Status, d["status"]),
            lost=[PathLoss.from_json(x) for x in d.get("lost", [])],
            changed=[PathLoss.from_json(x) for x in d.get("changed", [])],
            added=[PathLoss.from_json(x) for x in d.get("added", [])],
            error=RowError.from_json(d["error"]) if d.get("error") else None,
            weight=None if w is None else int(w),
            lost_weight=None if lw is None else int(lw),
        )


_LOSS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["path", "class", "count", "at"],
    "properties": {
        "path": {"type": "string", "description": "Path pattern, list indices as []: entries[].content"},
        "class": {
            "enum": ["expected", "unexpected", "info"],
            "description": "expected: the target's coverage cannot hold the path; unexpected: it can "
            "(a bug); info: never lossy: a value the target added, or (a changed media.portrait / "
            "media.assets[i]) an image re-encoded with the same pixels",
        },
        "count": {"type": "integer", "minimum": 1, "description": "Concrete paths behind the pattern"},
        "at": {"type": "string", "description": "The first concrete path: entries[3].content"},
        "weight": {
            "type": "integer",
            "minimum": 0,
            "description": "Cross rows only: content weight of the source values lost or changed under "
            "this pattern (characters of text, 1 per other value, bytes of a sized media asset)",
        },
    },
}

#: JSON Schema of ``FidelityRow.to_json()`` (docs/schema/fidelity-row.schema.json)
ROW_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://bunzai.invalid/schema/fidelity-row.schema.json",
    "title": "FidelityRow",
    "description": "One fidelity check on one entity (fidelity/rows-*.jsonl, one JSON object a line).",
    "type": "object",
    "additionalProperties": False,
    "required": [
        "input",
        "sha256",
        "uri",
        "entity",
        "kind",
        "name",
        "source",
        "target",
        "check",
        "status",
        "lost",
        "changed",
        "added",
        "error",
    ],
    "properties": {
        "input": {
            "type": "string",
            "description": "Stable key of the input file (root label + relative path, or uri)",
        },
        "sha256": {"type": "string", "description": "sha256 of the input's bytes"},
        "uri": {"type": "string", "description": "Where the input was read"},
        "entity": {"type": "string", "description": "Canonical entity id; empty for a rejected input"},
        "kind": {
            "enum": ["", "character", "lorebook", "regex", "persona", "preset"],
            "description": "Entity kind; empty for a rejected input",
        },
        "name": {"type": "string", "description": "Display name of the entity (card text, unescaped)"},
        "source": {"type": "string", "description": "Format the entity was decoded from"},
        "target": {"type": "string", "description": "Format written (the source for native/stability)"},
        "check": {
            "enum": list(CHECKS),
            "description": "decode: did the input decode; native: encode_F(decode_F(x)) vs x; "
            "stability: decode(encode(e)).body vs e.body; cross: decode_T(encode_T(e)) vs e",
        },
        "status": {
            "enum": ["decoded", "rejected", "lossless", "expected", "unexpected", "error"],
            "description": "decoded/rejected for decode rows; otherwise the worst class of loss, or error",
        },
        "lost": {"type": "array", "items": {"$ref": "#/$defs/loss"}, "description": "Paths absent after"},
        "changed": {
            "type": "array",
            "items": {"$ref": "#/$defs/loss"},
            "description": "Paths with another value",
        },
        "added": {
            "type": "array",
            "items": {"$ref": "#/$defs/loss"},
            "description": "Paths only present after",
        },
        "error": {
            "oneOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["type", "message", "internal"],
                    "properties": {
                        "type": {
                            "type": "string",
                            "description": "Exception class: Malformed, Unsupported...",
                        },
                        "message": {"type": "string"},
                        "internal": {"type": "boolean", "description": "Not a typed bunzai error: a bug"},
                    },
                },
            ],
            "description": "What stopped the check (status error or rejected)",
        },
        "weight": {
            "type": "integer",
            "minimum": 0,
            "description": "Cross rows only: content weight of the source entity and the entities "
            "linked to it: every populated canonical leaf value, a text by its characters, a sized "
            "media asset by its bytes, any other value 1",
        },
        "lost_weight": {
            "type": "integer",
            "minimum": 0,
            "description": "Cross rows only: the part of weight lost or changed by the conversion (all "
            "of it on an error); the row keeps weight - lost_weight",
        },
    },
    "dependentRequired": {"weight": ["lost_weight"], "lost_weight": ["weight"]},
    "$defs": {"loss": _LOSS_SCHEMA},
}


# -- grouping differences into path losses ------------------------------------------------------


def _pattern(path: str, canonical: bool) -> str:
    return _pattern_of(path) if canonical else _INDEX.sub("[]", path)


def _group(items: Iterable[tuple[str, LossClass]], canonical: bool) -> list[PathLoss]:
    """Concrete paths -> patterns with counts, first concrete path kept, sorted by pattern."""
    return _group_patterns((path, _pattern(path, canonical), cls) for path, cls in items)


def _group_patterns(items: Iterable[tuple[str, str, LossClass]]) -> list[PathLoss]:
    """``_group`` of ``(concrete path, its pattern, class)``: the pattern already known."""
    seen: dict[tuple[str, LossClass], list[Any]] = {}
    for path, pattern, cls in items:
        key = (pattern, cls)
        if key in seen:
            seen[key][0] += 1
        else:
            seen[key] = [1, path]
    return [PathLoss(p, c, n, at) for (p, c), (n, at) in sorted(seen.items())]


def _status(lost: list[PathLoss], changed: list[PathLoss], added: list[PathLoss]) -> Status:
    classes = {x.cls for x in (*lost, *changed, *added)}
    if "unexpected" in classes:
        return "unexpected"
    if "expected" in classes:
        return "expected"
    return "lossless"


def _leaf_paths(value: Any, path: str, out: list[str]) -> None:
    """The path of every non-empty leaf below ``value`` (a removed entry becomes its fields),
    appended to ``out``. (``join`` is inlined for string keys: this runs for every field of every
    lore entry a target drops.)"""
    if isinstance(value, dict):
        for k in sorted(value, key=str):
            v = value[k]
            p = (f"{path}.{k}" if path else k) if k.__class__ is str and k.isidentifier() else join(path, k)
            if v is None or v.__class__ is str:
                if v:
                    out.append(p)
            else:
                _leaf_paths(v, p, out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _leaf_paths(v, f"{path}[{i}]", out)
    elif not (value is None or value == ""):
        out.append(path)


def _classer(coverage: Coverage | None) -> Callable[[str], tuple[str, LossClass]]:
    """``path -> (its pattern, class)`` for a lost or changed body path under ``coverage`` (None:
    unexpected). Where ``covers`` depends on the pattern alone (no reshape answering for a body),
    each pattern is classed once: a lorebook's row asks for the same field of every entry."""
    if coverage is None:
        return lambda path: (_pattern_of(path), "unexpected")
    if coverage.body is not None and coverage.reshapes:  # the value at each concrete path counts
        return lambda path: (
            _pattern_of(path),
            "unexpected" if coverage.covers(path) else "expected",
        )
    memo: dict[str, LossClass] = {}

    def cls(path: str) -> tuple[str, LossClass]:
        pattern = _pattern_of(path)
        c = memo.get(pattern)
        if c is None:
            c = memo[pattern] = "unexpected" if coverage.covers(path) else "expected"
        return pattern, c

    return cls


def _canonical_losses(
    changes: Sequence[Change], coverage: Coverage | None, prefix: str = ""
) -> tuple[list[PathLoss], list[PathLoss], list[PathLoss]]:
    """Split body changes into lost/changed/added, classed by ``coverage`` (None: all unexpected,
    the same-format view). Removed or added containers are expanded to their leaves so each leaf is
    classed on its own."""
    classed = _classer(coverage)
    info: LossClass = "info" if coverage is not None else "unexpected"
    # the pattern of ``prefix + path`` is the prefix's pattern + the path's (a prefix is
    # ``<kind>[i].``: no pattern step spans the seam); the path's own is what ``classed`` gives
    pp = _pattern_of(prefix) if prefix else ""

    lost: list[tuple[str, str, LossClass]] = []
    changed: list[tuple[str, str, LossClass]] = []
    added: list[tuple[str, str, LossClass]] = []
    paths: list[str] = []
    for ch in changes:
        if ch.kind == "changed":
            own, c = classed(ch.path)
            changed.append((prefix + ch.path, pp + own, c))
            continue
        value = ch.before if ch.kind == "removed" else ch.after
        paths.clear()
        if isinstance(value, dict | list):
            _leaf_paths(value, ch.path, paths)
        else:
            paths.append(ch.path)
        if ch.kind == "removed":
            for p in paths:
                own, c = classed(p)
                lost.append((prefix + p, pp + own, c))
        else:
            for p in paths:
                added.append((prefix + p, pp + _pattern_of(p), info))
    return _group_patterns(lost), _group_patterns(changed), _group_patterns(added)


# -- content weights: how much of an entity a conversion keeps -----------------------------------

#: body path patterns whose value is one unit of content when it carries a byte ``size`` (a media
#: asset whose bytes the entity holds): it weighs its size and is kept or lost whole
MEDIA_UNITS = frozenset({"media.portrait", "media.assets[]"})


#: ``normalize_path`` for the weighing: an entity's paths recur in its row for every target
_pattern_of = functools.lru_cache(maxsize=1 << 16)(normalize_path)


def content_weight(path: str, value: Any) -> int | None:
    """The weight of ``value`` at body path ``path`` when it is one unit of content, else None (a
    container: its units are inside). A media asset (``MEDIA_UNITS``) with an integer ``size`` weighs
    its size in bytes; a string its length in characters; any other scalar (number, boolean) 1; an
    absent value (None, "") 0. A list weighs the sum of its items, an object the sum of its values."""
    if isinstance(value, dict):
        size = value.get("size")
        if isinstance(size, int) and not isinstance(size, bool) and normalize_path(path) in MEDIA_UNITS:
            return max(size, 0)
        return None
    if isinstance(value, list):
        return None
    if value is None or value == "":
        return 0
    return len(value) if isinstance(value, str) else 1


def content_units(value: Any, path: str = "") -> Iterator[tuple[str, int]]:
    """``(concrete path, weight)`` of every populated unit of content in ``value`` (a body dump)."""
    out: list[tuple[str, int]] = []
    _units_into(value, path, out)
    return iter(out)


def _units_into(value: Any, path: str, out: list[tuple[str, int]]) -> None:
    """``content_units`` appended to ``out``, in its order: ``content_weight`` and ``join`` inlined
    for the common value classes (it walks every value of every source body once per input);
    ``tests/fidelity/test_kept.py`` holds it to ``content_weight`` value by value."""
    c = value.__class__
    if c is str:
        if value:
            out.append((path, len(value)))
    elif c is dict:
        size = value.get("size")
        if isinstance(size, int) and size.__class__ is not bool and normalize_path(path) in MEDIA_UNITS:
            if size > 0:
                out.append((path, size))
            return
        for k in sorted(value, key=str):
            if k.__class__ is str and k.isidentifier():
                _units_into(value[k], f"{path}.{k}" if path else k, out)
            else:
                _units_into(value[k], join(path, k), out)
    elif c is list:
        for i, v in enumerate(value):
            _units_into(v, f"{path}[{i}]", out)
    elif value is None or c is int or c is bool or c is float:
        if value is not None:
            out.append((path, 1))
    else:  # anything else (a subclass, bytes...): the rule itself
        w = content_weight(path, value)
        if w is not None:
            if w > 0:
                out.append((path, w))
        elif isinstance(value, dict):
            for k in sorted(value, key=str):
                _units_into(value[k], join(path, k), out)
        else:
            for i, v in enumerate(value):
                _units_into(v, join(path, i), out)


class _Dumps:
    """Body dumps of the source entities, made once for all the rows of one input: every target's
    comparison starts from the same source bodies, and a pydantic dump of a body costs as much as
    reading a small file. ``fresh`` hands out a separate copy each time (a comparison edits the
    dumps it is given: media are taken out, spellings aligned), equal to a new dump in value and
    in type (``_copy``); ``shared`` the dump itself, for readers only. Without ``keep`` (a single
    check) nothing is kept and ``fresh`` is a new dump."""

    def __init__(self, keep: bool = False) -> None:
        self.keep = keep
        #: id(entity) -> (the entity, kept alive so the id is not reused; its dump; the dump's JSON
        #: when reading that back gives an equal dump, else None)
        self.made: dict[int, tuple[CanonicalEntity, dict[str, Any], bytes | None]] = {}

    def _made(self, e: CanonicalEntity) -> tuple[CanonicalEntity, dict[str, Any], bytes | None]:
        found = self.made.get(id(e))
        if found is None or found[0] is not e:
            dump = e.body.dump()
            found = self.made[id(e)] = (e, dump, _json_of(dump))
        return found

    def shared(self, e: CanonicalEntity) -> dict[str, Any]:
        return self._made(e)[1] if self.keep else e.body.dump()

    def fresh(self, e: CanonicalEntity) -> dict[str, Any]:
        if not self.keep:
            return e.body.dump()
        _, dump, text = self._made(e)
        if text is None:
            return _copy(dump)
        if basecache.CHECK:
            self.verify()
        # the only edit a comparison makes to the source side is taking the media items out of
        # ``media`` (``media_changes``): a copy of the top level and of ``media`` is a dump the
        # comparison may edit, every other value shared with the kept dump and only read; with
        # ``basecache.CHECK`` on, ``verify`` holds every kept dump to its JSON text
        out = dict(dump)
        media = out.get("media")
        if media.__class__ is dict:
            out["media"] = dict(media)
        return out

    def verify(self) -> None:
        """Raise ``basecache.RuleBroken`` when a kept dump no longer reads as the JSON text it had
        when it was made (a comparison edited a value ``fresh`` shares)."""
        for _, dump, text in self.made.values():
            if text is not None and orjson.dumps(dump) != text:
                raise basecache.RuleBroken("fidelity: a comparison edited a shared source dump")


_NO_UNITS: dict[str, int] = {}


class _Units:
    """The units of content of the bodies a cross row compares (``prefix`` -> path -> weight), each
    taken at most once: a lost unit counts once however many changes touch it."""

    def __init__(
        self,
        units: dict[str, dict[str, int]],
        order: dict[str, list[str]] | None = None,
        total: int | None = None,
    ) -> None:
        self.units = units
        self.order = order if order is not None else {p: sorted(u) for p, u in units.items()}
        self.taken: set[tuple[str, str]] = set()
        #: ``total()``, once summed (the units are never changed after they are made)
        self._total = total

    @classmethod
    def of_bodies(cls, bodies: Iterable[tuple[str, Any]]) -> _Units:
        """The units of ``(prefix, body dump)`` pairs."""
        units: dict[str, dict[str, int]] = {}
        for prefix, body in bodies:
            units.setdefault(prefix, {}).update(content_units(body))
        return cls(units)

    @classmethod
    def of(cls, e: CanonicalEntity, pool: Sequence[CanonicalEntity], dumps: _Dumps | None = None) -> _Units:
        """The units of ``e`` and the entities of ``pool`` it links to (see ``_bodies``)."""
        return cls.of_bodies(_bodies(e, pool, dumps or _Dumps()))

    def fresh(self) -> _Units:
        """The same units, none taken yet: one entity's cross rows (one per target) weigh the same
        units, which do not depend on the target."""
        return _Units(self.units, self.order, self.total())

    def total(self) -> int:
        if self._total is None:
            self._total = sum(w for units in self.units.values() for w in units.values())
        return self._total

    def take(self, prefix: str, path: str) -> list[tuple[str, int]]:
        """The units not yet taken that a change at ``path`` touches: the unit at ``path``, every
        unit below it, or the unit it lies inside (a field of a media asset)."""
        units = self.units.get(prefix, _NO_UNITS)
        found: list[str] = []
        if path in units:  # the common case: a changed or lost scalar (never "": not a unit path)
            key = (prefix, path)
            if key in self.taken:
                return []
            self.taken.add(key)
            return [(path, units[path])]
        if path == "":
            found = self.order.get(prefix, [])
        else:
            order = self.order.get(prefix, [])
            for sep in (".", "["):
                lo = bisect.bisect_left(order, path + sep)
                while lo < len(order) and order[lo].startswith(path + sep):
                    found.append(order[lo])
                    lo += 1
            if not found:  # inside a unit: the first cut of ``path`` that is one
                cuts = [i for i, ch in enumerate(path) if ch in ".["]
                found = [p for p in (path[:i] for i in reversed(cuts)) if p in units][:1]
        out = []
        for p in found:
            if (prefix, p) not in self.taken:
                self.taken.add((prefix, p))
                out.append((p, units[p]))
        return out


def _bodies(e: CanonicalEntity, pool: Sequence[CanonicalEntity], dumps: _Dumps) -> list[tuple[str, Any]]:
    """The bodies a cross row of ``e`` compares, under the prefixes its paths carry (read only)."""
    out: list[tuple[str, Any]] = [("", dumps.shared(e))]
    for kind, items in sorted(_by_kind((x, None) for x in _linked_of(e, pool)).items()):
        out += [(f"{kind}[{i}].", dumps.shared(x)) for i, (x, _) in enumerate(items)]
    return out


def _listed_as(
    index: dict[tuple[str, str], PathLoss], name: str, unit: str, change: str
) -> tuple[str, str] | None:
    """The pattern a row lists a lost unit under: its own (``unit``), the change's (``change``, the
    pattern of the changed path: a changed container, or a field of a media asset), or a field of
    it (a media asset expanded to its fields)."""
    for k in (unit, change):
        if (name, k) in index:
            return name, k
    below = sorted(x for n, x in index if n == name and x.startswith(unit + "."))
    return (name, below[0]) if below else None


def _weigh(row: FidelityRow, units: _Units, parts: Sequence[_Part]) -> FidelityRow:
    """``row`` with its content ``weight`` and ``lost_weight`` and each lost or changed pattern's
    weight: every unit a removed or changed value touches is lost (an added value costs nothing).
    Kept apart from the checks: it only reads the changes they found."""
    row.weight = units.total()
    if row.status == "error":
        row.lost_weight = row.weight
        return row
    index = {(name, x.path): x for name in ("lost", "changed") for x in getattr(row, name)}
    by_pattern: dict[tuple[str, str], int] = {}
    # (group, unit pattern, change pattern) -> where the row lists it: the same for every entry
    listed: dict[tuple[str, str, str], tuple[str, str] | None] = {}
    lost = 0
    take = units.take
    for part in parts:
        prefix = part.prefix
        # the pattern of ``prefix + path`` is the prefix's pattern + the path's (a prefix is
        # ``<kind>[i].``: no pattern step spans the seam)
        pp = _pattern_of(prefix) if prefix else ""
        for ch in part.changes:
            if ch.kind == "added":
                continue
            taken = take(prefix, ch.path)
            if not taken:
                continue
            name = "lost" if ch.kind == "removed" else "changed"
            change = pp + _pattern_of(ch.path)
            for p, w in taken:
                lost += w
                k = (name, pp + _pattern_of(p), change)
                key = listed[k] if k in listed else listed.setdefault(k, _listed_as(index, *k))
                if key is not None:
                    by_pattern[key] = by_pattern.get(key, 0) + w
    row.lost_weight = lost
    for name in ("lost", "changed"):
        setattr(
            row,
            name,
            [
                PathLoss(x.path, x.cls, x.count, x.at, by_pattern.get((name, x.path), 0))
                for x in getattr(row, name)
            ],
        )
    return row


# -- native comparison (container aware) ---------------------------------------------------------


def compare_native(before: bytes, after: bytes) -> list[Change]:
    """How ``after`` differs from ``before`` as the file's format means it (see module docstring).

    Paths: ``data.name`` for JSON, ``line[2].body`` for JSONL, ``png.chara.data.name`` and
    ``png.chunks[3]`` (a non-text chunk) for PNG, ``zip['card.json'].data.name`` and
    ``zip['assets/a.png']`` for zips, ``$`` when the bytes differ and nothing finer applies.
    """
    if before == after:  # the same bytes parse to the same trees: no difference in any view
        return []
    a, b = Sniff(before), Sniff(after)
    if a.is_png:
        return _compare_png(a, b)
    if a.is_zip and a.zip is not None:
        return _compare_zip(a, b)
    if a.looks_like_json:
        ta, tb = a.json, b.json
        if a.json_error is None:
            if b.json_error is not None:
                return [Change("$", "changed", "JSON", f"not JSON: {b.json_error.message}")]
            return diff(ta, tb, limit=DIFF_LIMIT)
        la, lb = _json_lines(before), _json_lines(after)
        if la is not None:
            if lb is None:
                return [Change("$", "changed", "JSON lines", "not JSON lines")]
            return diff({"line": la}, {"line": lb}, limit=DIFF_LIMIT)
    return [] if before == after else [Change("$", "changed", f"{len(before)} bytes", f"{len(after)} bytes")]


def _json_lines(data: bytes) -> list[Any] | None:
    out = []
    try:
        for line in data.splitlines():
            if line.strip():
                out.append(parse_json(line))
    except BunzaiError:
        return None
    return out


def _text_value(v: bytes) -> Any:
    """A PNG text payload as a tree: base64 JSON (cards), plain JSON, else the text itself."""
    import base64
    import binascii

    try:
        return parse_json(base64.b64decode(v, validate=True))
    except (BunzaiError, binascii.Error, ValueError):
        pass
    try:
        return parse_json(v)
    except BunzaiError:
        return v.decode("latin-1")


def _compare_png(a: Sniff, b: Sniff) -> list[Change]:
    from bunzai_codecs.core.png import TEXT_TYPES

    pa, pb = a.png, b.png
    if pa is None or pb is None:
        if a.data == b.data:
            return []
        return [Change("$", "changed", "PNG", "not a readable PNG" if pb is None else "PNG")]

    def texts(s: Sniff) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for t in s.png_texts:
            key = t.keyword.lower()
            n, k = 1, key
            while k in out:
                n += 1
                k = f"{key}#{n}"
            out[k] = _text_value(t.text)
        return out

    text_types = {t.encode("ascii") for t in TEXT_TYPES}
    oa = [c for c in pa.chunks if c.type not in text_types]
    ob = [c for c in pb.chunks if c.type not in text_types]
    out = []
    for i in range(max(len(oa), len(ob))):
        ca = oa[i] if i < len(oa) else None
        cb = ob[i] if i < len(ob) else None
        path = f"png.chunks[{i}]"
        if cb is None:
            out.append(Change(path, "removed", _chunk_label(ca), None))
        elif ca is None:
            out.append(Change(path, "added", None, _chunk_label(cb)))
        elif ca.type != cb.type or ca.data != cb.data:
            out.append(Change(path, "changed", _chunk_label(ca), _chunk_label(cb)))
    if pa.trailing != pb.trailing:
        out.append(
            Change("png.trailing", "changed", f"{len(pa.trailing)} bytes", f"{len(pb.trailing)} bytes")
        )
    out += diff(texts(a), texts(b), path="png", limit=DIFF_LIMIT)
    return out


def _chunk_label(c: Any) -> str:
    return f"{c.type.decode('latin-1')} ({len(c.data)} bytes)"


def _compare_zip(a: Sniff, b: Sniff) -> list[Change]:
    za, zb = a.zip, b.zip
    if za is None:
        return []
    if zb is None:
        return [Change("$", "changed", "zip", "not a readable zip")]
    out: list[Change] = []
    if za.prefix != zb.prefix:
        out.append(Change("zip.prefix", "changed", f"{len(za.prefix)} bytes", f"{len(zb.prefix)} bytes"))
    na, nb = set(za.names), set(zb.names)
    for name in sorted(na | nb):
        path = join("zip", name)
        if name not in nb:
            out.append(Change(path, "removed", name, None))
        elif name not in na:
            out.append(Change(path, "added", None, name))
        else:
            x, y = za.read(name), zb.read(name)
            if x == y:
                continue
            if name.lower().endswith(".json"):
                try:
                    out += diff(parse_json(x), parse_json(y), path=path, limit=DIFF_LIMIT)
                    continue
                except BunzaiError:
                    pass
            out.append(Change(path, "changed", f"{len(x)} bytes", f"{len(y)} bytes"))
    return out


# -- the checks -----------------------------------------------------------------------------------


def entity_name(e: CanonicalEntity) -> str:
    """A display name for reports: the character's or the book's name, else ""."""
    body = e.body
    name: Any = getattr(getattr(body, "identity", None), "name", None) or getattr(body, "name", None)
    if not isinstance(name, str):
        return ""
    name = " ".join(name.split())
    return name if len(name) <= NAME_MAX else name[: NAME_MAX - 1] + "…"


@dataclass(slots=True)
class _Input:
    key: str
    sha256: str
    uri: str
    #: the input's file name: written files are read back under a name like it, because some
    #: formats take the entity's name from the file name (a SillyTavern world is named by its file)
    name: str = ""

    def stem(self) -> str:
        base = self.name.replace("\\", "/").rsplit("/", 1)[-1]
        return base.split(".")[0] or "export"


def _row(inp: _Input, e: CanonicalEntity, source: str, target: str, check: Check, **kw: Any) -> FidelityRow:
    return FidelityRow(
        input=inp.key,
        sha256=inp.sha256,
        uri=inp.uri,
        entity=e.id,
        kind=e.kind,
        name=entity_name(e),
        source=source,
        target=target,
        check=check,
        **kw,
    )


def _source_of(e: CanonicalEntity, default: str = "") -> str:
    return e.source.format if e.source is not None else default


def _beside(exports: list[Export]) -> Iterator[Export]:
    for x in exports:
        yield x
        yield from _beside(x.beside)


@dataclass(slots=True)
class _Back:
    """An entity written to a format and read back, with its linked entities as the target holds
    them (embedded ones from the main file, then any written beside it)."""

    export: Export
    primary: CanonicalEntity
    #: (entity read back, codec that carried it)
    linked: list[tuple[CanonicalEntity, Codec]]


_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]+')


def _file_stem(e: CanonicalEntity) -> str:
    """The file name an app gives an export of ``e``: its name, made safe (SillyTavern saves a world
    as ``<name>.json`` and names the world after the file when it reads it back)."""
    return _UNSAFE.sub("_", entity_name(e)).strip(" .")[:100]


def _there_and_back(
    e: CanonicalEntity, pool: Sequence[CanonicalEntity], codec: Codec, inp: _Input, *, same_name: bool = False
) -> _Back:
    """Write ``e`` as ``codec`` and read it back, under the input's own name (``same_name``, for a
    same-format round trip) or the entity's name with the codec's extension (as an app names an
    export); linked entities written beside it are named ``<input stem>.<kind><ext>``."""
    export = write(e, codec.id, linked=pool)
    name = inp.name if same_name and inp.name else f"{_file_stem(e) or inp.stem()}{export.extension}"
    return _read_back(export, codec, name, lambda side: f"{inp.stem()}.{side.entity.kind}{side.extension}")


def _read_back(
    export: Export,
    codec: Codec,
    name: str,
    side_name: Callable[[Export], str],
    same: Decoded | None = None,
) -> _Back:
    """An export read back by its codec under ``name``; the exports beside it under ``side_name``.
    ``same``: what ``codec`` decoded from these very bytes under this very name (the input, when a
    same-format write gave its bytes back), used instead of decoding them again."""
    back = same if same is not None else codec.decode(Sniff(export.data, name))
    linked = [(x, codec) for x in back.entities[1:]]
    for side in _beside(export.beside):
        side_codec = registry.get(side.format)
        side_back = side_codec.decode(Sniff(side.data, side_name(side)))
        linked += [(x, side_codec) for x in side_back.entities]
    return _Back(export, back.primary, linked)


def _linked_of(e: CanonicalEntity, pool: Sequence[CanonicalEntity]) -> list[CanonicalEntity]:
    by_id = {x.id: x for x in pool}
    return [by_id[i] for i in e.knowledge_refs if i in by_id and i != e.id]


def _by_kind(items: Iterable[tuple[CanonicalEntity, Any]]) -> dict[str, list[tuple[CanonicalEntity, Any]]]:
    out: dict[str, list[tuple[CanonicalEntity, Any]]] = {}
    for x, c in items:
        out.setdefault(x.kind, []).append((x, c))
    return out


def _carrier_coverage(carrier: Codec, kind: str) -> Coverage:
    """Coverage for a linked entity of ``kind`` inside a file of ``carrier``: the carrier's own when
    it is of that kind; else what the carrier says it holds of an embedded ``kind``
    (``embedded_coverage``: a Tavern card's ``character_book`` is not the app's lorebook file);
    else its app's codec for the kind; else none."""
    if carrier.holds(kind):
        return carrier.coverage
    embedded = carrier.embedded_coverage.get(kind)
    if embedded is not None:
        return embedded
    sibling = registry.family_codec(carrier.family, kind)  # type: ignore[arg-type]
    return sibling.coverage if sibling is not None else Coverage.of()


_START = re.compile(r"<START>", re.IGNORECASE)


def example_blocks(text: str) -> list[str]:
    """Example dialogue as the Tavern apps read it (SillyTavern's ``parseMesExamples``): split at
    every ``<START>``, a missing leading ``<START>`` implied (blank text before the first one is
    nothing), each block trimmed. Two texts with the same blocks are the same examples."""
    head, *rest = _START.split(text)
    return [b.strip() for b in ([head] if head.strip() else []) + rest]


#: cross-format only: (kind, body path) -> the form two values are compared in, for values a format
#: writes in another spelling that every app reads the same way (docs/fidelity.md lists them)
SEMANTIC: dict[tuple[str, tuple[str, ...]], Callable[[Any], Any]] = {
    ("character", ("examples", "exampleMessages")): lambda v: example_blocks(v) if isinstance(v, str) else v,
}


def _nickname_is_the_name(before: dict[str, Any], after: dict[str, Any]) -> None:
    """A nickname equal to the name means what no nickname means: the name is used for {{char}}."""
    b, a = before.get("identity"), after.get("identity")
    if not (isinstance(b, dict) and isinstance(a, dict)) or b.get("name") != a.get("name"):
        return
    same = b.get("name")
    if b.get("nickname") == same and a.get("nickname") is None:
        a["nickname"] = same
    elif a.get("nickname") == same and b.get("nickname") is None:
        a.pop("nickname", None)


#: cross-format only: kind -> rules that make ``after`` say what ``before`` says where the two
#: differ only in a spelling every app reads the same way, when the test needs more than one path
SEMANTIC_BODY: dict[str, tuple[Callable[[dict[str, Any], dict[str, Any]], None], ...]] = {
    "character": (_nickname_is_the_name,),
}


def _semantic(kind: str, before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """``after`` with each ``SEMANTIC`` value that means the same as ``before``'s replaced by it."""
    for rule in SEMANTIC_BODY.get(kind, ()):
        rule(before, after)
    for (k, path), key in SEMANTIC.items():
        if k != kind:
            continue
        b: Any = before
        a: Any = after
        for part in path[:-1]:
            b = b.get(part) if isinstance(b, dict) else None
            a = a.get(part) if isinstance(a, dict) else None
        last = path[-1]
        if not (isinstance(b, dict) and isinstance(a, dict) and last in b and last in a):
            continue
        if b[last] != a[last] and key(b[last]) == key(a[last]):
            a[last] = b[last]
    return after


@dataclass(slots=True)
class _Part:
    """The differences of one entity pair: body changes (classed by ``coverage``; None: every one
    unexpected) and the media items' changes, already classed, all under ``prefix``."""

    changes: list[Change]
    coverage: Coverage | None
    prefix: str = ""
    media: list[tuple[str, str, LossClass]] = field(default_factory=list)


# -- media: compared by their bytes ---------------------------------------------------------------

#: what a media item's bytes stand for: its digest, or the digest of its pixels (across formats)
_CONTENT_KEYS = ("sha256", "size", "ref", "mime")


@dataclass(slots=True)
class _Item:
    path: str
    value: dict[str, Any]
    data: bytes | None

    @property
    def sha(self) -> str | None:
        v = self.value.get("sha256")
        return v if isinstance(v, str) else None


def _media_items(body: dict[str, Any], store: dict[str, bytes]) -> tuple[_Item | None, list[_Item]]:
    media = body.get("media")
    if not isinstance(media, dict):
        return None, []

    def item(path: str, v: Any) -> _Item:
        sha = v.get("sha256") if isinstance(v, dict) else None
        return _Item(path, v, store.get(sha) if isinstance(sha, str) else None)

    p = media.get("portrait")
    portrait = item("media.portrait", p) if isinstance(p, dict) else None
    assets = [
        item(f"media.assets[{i}]", a) for i, a in enumerate(media.get("assets") or []) if isinstance(a, dict)
    ]
    return portrait, assets


def _same_picture(a: _Item, b: _Item) -> bool:
    """Two encodings of one picture (a WebP portrait re-encoded as the PNG of a PNG card)."""
    from bunzai_codecs.core.media import pixels_key

    if a.data is None or b.data is None:
        return False
    ka, kb = pixels_key(a.data, a.sha), pixels_key(b.data, b.sha)
    return ka is not None and ka == kb


def _content(a: _Item, b: _Item, *, pixels: bool) -> str | None:
    """How the bytes of a paired item came back: None (the same), ``reencoded``, ``changed``,
    ``lost`` or ``added``."""
    if a.sha is None and b.sha is None:
        return None
    if b.sha is None:
        return "lost"
    if a.sha is None:
        return "added"
    if a.sha == b.sha:
        return None
    return "reencoded" if pixels and _same_picture(a, b) else "changed"


def _meta(v: dict[str, Any], bytes_known: bool) -> dict[str, Any]:
    """What is compared of an item besides its bytes: with bytes on either side, its ref (where a
    container keeps the file), MIME type and size are the container's business, not data."""
    return {k: x for k, x in v.items() if not (bytes_known and k in _CONTENT_KEYS)}


def _pair_media(
    po: _Item | None, ao: list[_Item], pn: _Item | None, an: list[_Item], *, pixels: bool
) -> list[tuple[_Item | None, _Item | None]]:
    """Old and new media items paired: by digest, then (across formats) by pixels, wherever they
    are (an asset may come back as the portrait: only its role changed); then portrait with
    portrait; then assets by ref, then by role and name. Unpaired items stand alone (old order,
    then the new extras)."""
    old = ([po] if po is not None else []) + ao
    left = ([pn] if pn is not None else []) + an
    found: dict[int, _Item] = {}

    def take(i: int, pred: Callable[[_Item], bool]) -> None:
        if i in found:
            return
        for k, n in enumerate(left):
            if pred(n):
                found[i] = left.pop(k)
                return

    def same_slot(o: _Item, n: _Item) -> bool:
        return (o is po) == (n is pn) and all(o.value.get(k) == n.value.get(k) for k in ("role", "name"))

    # one picture may stand in several slots (an avatar that is also the background): the same slot
    # with the same bytes first, then the same bytes anywhere, then (across formats) the same pixels
    for slot in (True, False):
        for i, o in enumerate(old):
            if o.sha is not None:
                take(i, lambda n, o=o, slot=slot: n.sha == o.sha and (not slot or same_slot(o, n)))  # type: ignore[misc]
    for slot in (True, False) if pixels else ():
        for i, o in enumerate(old):
            if o.data is not None:
                take(i, lambda n, o=o, slot=slot: (not slot or same_slot(o, n)) and _same_picture(o, n))  # type: ignore[misc]
    if po is not None:
        take(0, lambda n: n is pn)
    for i, o in enumerate(old):
        if o is not po and o.sha is None:
            take(i, lambda n, o=o: n is not pn and n.sha is None and n.value.get("ref") == o.value.get("ref"))  # type: ignore[misc]
    for i, o in enumerate(old):
        if o is not po:
            key = (o.value.get("role"), o.value.get("name"))
            take(i, lambda n, key=key: n is not pn and (n.value.get("role"), n.value.get("name")) == key)  # type: ignore[misc]
    return [(o, found.get(i)) for i, o in enumerate(old)] + [(None, n) for n in left]


def media_changes(
    old: dict[str, Any],
    new: dict[str, Any],
    old_store: dict[str, bytes],
    new_store: dict[str, bytes],
    coverage: Coverage | None,
) -> tuple[list[Change], list[tuple[str, str, LossClass]]]:
    """Compare the media of two body dumps by their bytes, and take them out of both dumps (the
    rest is compared as usual). Returns the item fields' changes (name, role, label...: classed by
    coverage like any path, under the old item's path) and the bytes' fates as ``(group, path,
    class)``: a lost or altered image is ``lost``/``changed`` at ``media.portrait`` or
    ``media.assets[i]``, classed by whether the target covers ``<path>.sha256``; across formats
    (``coverage`` given) an image whose pixels came back in other bytes is ``changed`` with class
    ``info`` (a stated re-encode, never lossy); an image the target added is ``added`` (``info``)."""
    pixels = coverage is not None
    po, ao = _media_items(old, old_store)
    pn, an = _media_items(new, new_store)
    for d in (old, new):
        m = d.get("media")
        if isinstance(m, dict):
            m.pop("portrait", None)
            m.pop("assets", None)

    def cls(path: str) -> LossClass:
        if coverage is None:
            return "unexpected"
        return "unexpected" if coverage.covers(normalize_path(path) + ".sha256") else "expected"

    changes: list[Change] = []
    fates: list[tuple[str, str, LossClass]] = []
    for a, b in _pair_media(po, ao, pn, an, pixels=pixels):
        if a is None:
            assert b is not None
            if b.sha is not None:
                fates.append(("added", b.path, "info" if coverage is not None else "unexpected"))
            else:
                changes.append(Change(b.path, "added", None, b.value))
            continue
        if b is None:
            if a.sha is not None:
                fates.append(("lost", a.path, cls(a.path)))
            else:
                changes.append(Change(a.path, "removed", a.value, None))
            continue
        fate = _content(a, b, pixels=pixels)
        if fate == "reencoded":
            fates.append(("changed", a.path, "info"))
        elif fate == "added":
            fates.append(("added", a.path, "info" if coverage is not None else "unexpected"))
        elif fate is not None:
            fates.append((fate, a.path, cls(a.path)))
        known = a.sha is not None or b.sha is not None
        changes += diff(
            _meta(a.value, known), _meta(b.value, known), path=a.path, empty_is_absent=coverage is not None
        )
    return changes, fates


def _compare_bodies(
    before: CanonicalEntity,
    after: CanonicalEntity,
    coverage: Coverage | None,
    prefix: str = "",
    dumps: _Dumps | None = None,
) -> _Part:
    old = dumps.fresh(before) if dumps is not None else before.body.dump()
    new = _copy(old) if after is before else after.body.dump()
    if coverage is not None:  # across formats: a value spelled differently but read the same is kept
        new = _semantic(before.kind, old, new)
        coverage = coverage.for_body(old)  # a value the target holds only reshaped: expected
    media_diff, fates = media_changes(old, new, before.media, after.media, coverage)
    changes = diff(old, new, empty_is_absent=coverage is not None, limit=DIFF_LIMIT)
    return _Part(changes + media_diff, coverage, prefix, fates)


def _json_of(dump: dict[str, Any]) -> bytes | None:
    """The JSON text of ``dump`` when reading it gives a dump equal to it in value and type (what
    ``_copy`` checks), else None."""
    try:
        text = orjson.dumps(dump)
    except TypeError:  # not plain JSON (an integer beyond 64 bits)
        return None
    return text if orjson.loads(text) == dump else None


def _copy(dump: dict[str, Any]) -> dict[str, Any]:
    """A second, separate dump equal to ``dump`` (the comparison edits both), made by orjson rather
    than by serialising the model again (a stability check that reused the input's own decode)."""
    import copy

    try:
        made = orjson.loads(orjson.dumps(dump))
    except TypeError:  # not plain JSON (an integer beyond 64 bits)
        return copy.deepcopy(dump)
    # NaN and infinities do not survive JSON: a deep copy keeps them (as the same float objects a
    # second dump would hold)
    return cast(dict[str, Any], made) if made == dump else copy.deepcopy(dump)


def body_losses(
    before: CanonicalEntity, after: CanonicalEntity, coverage: Coverage | None
) -> tuple[list[PathLoss], list[PathLoss], list[PathLoss]]:
    """``(lost, changed, added)`` between two entities' bodies (media compared by their bytes),
    classed by ``coverage`` as a cross-format check does (None: every difference unexpected, the
    same-format view)."""
    part = _compare_bodies(before, after, coverage)
    row = _losses_row(_Input("", "", ""), before, "", "", "cross", [part])
    return row.lost, row.changed, row.added


def _linked_changes(
    originals: list[CanonicalEntity],
    back: list[tuple[CanonicalEntity, Codec]],
    cross: bool,
    dumps: _Dumps | None = None,
) -> Iterator[_Part]:
    """Pair linked entities by kind and order; ``<kind>[i].`` prefixes their paths."""
    want = _by_kind((x, None) for x in originals)
    got = _by_kind(back)
    for kind in sorted(want.keys() | got.keys()):
        ws, gs = want.get(kind, []), got.get(kind, [])
        for i in range(max(len(ws), len(gs))):
            prefix = f"{kind}[{i}]."
            if i >= len(gs):
                w = ws[i][0]
                # nothing came back for it: every leaf is lost, an unexpected loss (bundle.write
                # writes a linked entity beside the file when the target cannot embed it)
                yield _Part([Change("", "removed", _fresh(w, dumps), None)], None, prefix)
            elif i >= len(ws):
                # came back from nowhere: info across formats, a difference in the same format
                yield _Part(
                    [Change("", "added", None, gs[i][0].body.dump())],
                    Coverage.of() if cross else None,
                    prefix,
                )
            else:
                cov = _carrier_coverage(gs[i][1], kind) if cross else None
                yield _compare_bodies(ws[i][0], gs[i][0], cov, prefix, dumps)


def _fresh(e: CanonicalEntity, dumps: _Dumps | None) -> dict[str, Any]:
    return dumps.fresh(e) if dumps is not None else e.body.dump()


def _losses_row(
    inp: _Input,
    e: CanonicalEntity,
    source: str,
    target: str,
    check: Check,
    parts: Iterable[_Part],
) -> FidelityRow:
    lost: list[PathLoss] = []
    changed: list[PathLoss] = []
    added: list[PathLoss] = []
    for part in parts:
        lo, ch, ad = _canonical_losses(part.changes, part.coverage, part.prefix)
        lost += lo
        changed += ch
        added += ad
        groups: dict[str, list[tuple[str, LossClass]]] = {"lost": [], "changed": [], "added": []}
        for group, path, c in part.media:
            groups[group].append((part.prefix + path, c))
        lost += _group(groups["lost"], True)
        changed += _group(groups["changed"], True)
        added += _group(groups["added"], True)
    lost, changed, added = (_merge(x) for x in (lost, changed, added))
    return _row(
        inp,
        e,
        source,
        target,
        check,
        status=_status(lost, changed, added),
        lost=lost,
        changed=changed,
        added=added,
    )


def _merge(items: list[PathLoss]) -> list[PathLoss]:
    acc: dict[tuple[str, str], PathLoss] = {}
    for x in items:
        k = (x.path, x.cls)
        acc[k] = PathLoss(x.path, x.cls, acc[k].count + x.count, acc[k].at) if k in acc else x
    return [acc[k] for k in sorted(acc)]


def _error_row(
    inp: _Input, e: CanonicalEntity, source: str, target: str, check: Check, exc: BaseException
) -> FidelityRow:
    return _row(inp, e, source, target, check, status="error", error=RowError.of(exc))


class InputKeys(TypedDict, total=False):
    """What the same-format checks are told about their input: its stable key (``input``), digest,
    uri, file name, and the format it was decoded from (``source``; default: the entity's own)."""

    input: Required[str]
    sha256: str
    uri: str
    source: str | None
    name: str


def _input_of(decoded: Decoded, keys: InputKeys) -> tuple[_Input, str]:
    """The input ``keys`` describe, and the format to write (``source``, else the primary's own)."""
    inp = _Input(keys["input"], keys.get("sha256", ""), keys.get("uri", ""), keys.get("name", ""))
    return inp, keys.get("source") or _source_of(decoded.primary)


def native_round_trip(data: bytes, decoded: Decoded, **keys: Unpack[InputKeys]) -> FidelityRow:
    """Check 1 on a file: its primary entity (with the entities it links to) written back in its
    own format, compared with ``data`` as that format means it. Every difference is unexpected."""
    inp, fmt = _input_of(decoded, keys)
    return _native_row(data, decoded, inp, fmt, _written(decoded, fmt))


def _written(decoded: Decoded, fmt: str) -> Export | Exception:
    """The primary entity of ``decoded`` written in its own format ``fmt`` with its linked
    entities, or what stopped it: the native and the stability check share this one write."""
    try:
        return write(decoded.primary, fmt, linked=decoded.entities)
    except Exception as exc:
        return exc


def _native_row(
    data: bytes, decoded: Decoded, inp: _Input, fmt: str, made: Export | Exception
) -> FidelityRow:
    e = decoded.primary
    try:
        if isinstance(made, Exception):
            raise made
        changes = compare_native(data, made.data)
    except Exception as exc:
        return _error_row(inp, e, fmt, fmt, "native", exc)
    groups: dict[str, list[tuple[str, LossClass]]] = {"removed": [], "changed": [], "added": []}
    for ch in changes:
        groups[ch.kind].append((ch.path, "unexpected"))
    lost, changed, added = (_group(groups[k], False) for k in ("removed", "changed", "added"))
    return _row(
        inp,
        e,
        fmt,
        fmt,
        "native",
        status=_status(lost, changed, added),
        lost=lost,
        changed=changed,
        added=added,
    )


def canonical_stability(decoded: Decoded, **keys: Unpack[InputKeys]) -> list[FidelityRow]:
    """Check 2: the file's primary entity written in its own format and decoded again must give the
    same bodies — the primary's, and each linked entity's (matched by kind and order). Entities the
    primary does not link to (a Voxta package's further characters, which the package written for
    its first one holds too) are matched, by kind and order, with what came back beyond the linked
    ones; one that did not come back is lost. One row per entity; every difference is unexpected."""
    inp, fmt = _input_of(decoded, keys)
    return _stability_rows(decoded, inp, fmt, _written(decoded, fmt))


def _stability_rows(
    decoded: Decoded, inp: _Input, fmt: str, made: Export | Exception, data: bytes | None = None
) -> list[FidelityRow]:
    """``canonical_stability``'s rows from the file written back (``made``). When that gave the
    input's own bytes (``data``, read under ``inp.name``), reading them again gives what
    ``decoded`` holds: it is compared instead of a second decode."""
    e = decoded.primary
    try:
        codec = registry.get(fmt)
        if isinstance(made, Exception):
            raise made
        name = inp.name or f"{_file_stem(e) or inp.stem()}{made.extension}"
        same = decoded if inp.name and data is not None and made.data == data else None
        back = _read_back(
            made, codec, name, lambda side: f"{inp.stem()}.{side.entity.kind}{side.extension}", same
        )
    except Exception as exc:
        return [_error_row(inp, x, fmt, fmt, "stability", exc) for x in decoded.entities]
    rows = [_losses_row(inp, e, fmt, fmt, "stability", [_compare_bodies(e, back.primary, None)])]
    linked = _linked_of(e, decoded.entities)
    linked_ids = {x.id for x in linked}
    rest = [x for x in decoded.entities[1:] if x.id not in linked_ids]
    got = _by_kind(back.linked)
    for group in (linked, rest):
        for kind, ws in _by_kind((x, None) for x in group).items():
            gs = got.get(kind, [])
            for i, (w, _) in enumerate(ws):
                if i < len(gs):
                    rows.append(
                        _losses_row(inp, w, fmt, fmt, "stability", [_compare_bodies(w, gs[i][0], None)])
                    )
                else:
                    lost = [PathLoss("$", "unexpected", 1, "$")]
                    rows.append(_row(inp, w, fmt, fmt, "stability", status="unexpected", lost=lost))
            got[kind] = gs[len(ws) :]
    return rows


def cross_format(
    e: CanonicalEntity,
    target: Codec,
    *,
    pool: Sequence[CanonicalEntity] = (),
    input: str,
    sha256: str = "",
    uri: str = "",
    source: str | None = None,
    name: str = "",
    units: _Units | None = None,
    dumps: _Dumps | None = None,
) -> FidelityRow:
    """Check 3 for one entity and one target: ``decode_T(encode_T(e))`` against ``e``; each lost or
    changed path is expected when ``target.coverage`` cannot hold it, unexpected otherwise. Linked
    entities (from ``pool``) are compared under ``<kind>[i].`` by the coverage of their carrier.
    ``units``: ``e``'s units of content when the caller weighed them already (for several targets);
    ``dumps``: the source bodies' dumps, shared by the caller's rows."""
    fmt = source or _source_of(e)
    inp = _Input(input, sha256, uri, name)
    units = units.fresh() if units is not None else _Units.of(e, pool, dumps)
    try:
        back = _there_and_back(e, pool or [e], target, inp)
    except Exception as exc:
        return _weigh(_error_row(inp, e, fmt, target.id, "cross", exc), units, [])
    parts = [_compare_bodies(e, back.primary, target.coverage, dumps=dumps)]
    parts += list(_linked_changes(_linked_of(e, pool), back.linked, cross=True, dumps=dumps))
    return _weigh(_losses_row(inp, e, fmt, target.id, "cross", parts), units, parts)


def export_row(
    e: CanonicalEntity,
    pool: Sequence[CanonicalEntity],
    export: Export,
    *,
    name: str,
    input: str,
    source: str = "",
    side_names: dict[int, str] | None = None,
) -> FidelityRow:
    """The cross check on an export already made (``bunzai convert``'s report): ``export`` read back
    under the file ``name`` it was written as (the exports beside it under ``side_names``, by the
    export's ``id``), compared with ``e``, its linked entities and the other entities the file holds
    (``Export.embedded``: a Voxta package's further characters), classed by the target's coverage."""
    target = registry.get(export.format)
    inp = _Input(input, "", input, name)
    fmt = source or _source_of(e)
    names = side_names or {}
    try:
        back = _read_back(
            export,
            target,
            name,
            lambda side: names.get(id(side), f"{inp.stem()}.{side.entity.kind}{side.extension}"),
        )
    except Exception as exc:
        return _error_row(inp, e, fmt, target.id, "cross", exc)
    parts = [_compare_bodies(e, back.primary, None if target.lossless else target.coverage)]
    linked = _linked_of(e, pool)
    ids = {x.id for x in linked} | {e.id}
    held = [x for x in pool if x.id in export.embedded and x.id not in ids]
    parts += list(_linked_changes(linked + held, back.linked, cross=True))
    return _losses_row(inp, e, fmt, target.id, "cross", parts)


def cross_targets(kind: str, source: str) -> list[Codec]:
    """Every codec of ``kind`` but the source itself and the lossless vaud-json (nothing to learn)."""
    return [c for c in registry.for_kind(kind) if c.id != source and not c.lossless]  # type: ignore[arg-type]


def check_decoded(
    data: bytes,
    decoded: Decoded,
    *,
    source: str,
    input: str,
    sha256: str = "",
    uri: str = "",
    name: str = "",
    targets: Sequence[str] | None = None,
) -> list[FidelityRow]:
    """All three checks on an input ``data`` (file name ``name``) that ``source`` decoded to
    ``decoded`` (the pipeline's RoundTrip stage calls this): one native row, a stability row per
    entity, a cross row per entity and target. ``targets`` limits the cross-format targets."""
    kw: dict[str, Any] = {"input": input, "sha256": sha256, "uri": uri, "source": source, "name": name}
    fmt = source or _source_of(decoded.primary)
    inp = _Input(input, sha256, uri, name)
    made = _written(decoded, fmt)  # one write for both same-format checks
    rows = [_native_row(data, decoded, inp, fmt, made)]
    rows += _stability_rows(decoded, inp, fmt, made, data)
    dumps = _Dumps(keep=True)  # every cross row compares with the same source bodies
    for e in decoded.entities:
        units: _Units | None = None
        for t in cross_targets(e.kind, source):
            if targets is None or t.id in targets:
                if units is None:
                    units = _Units.of(e, decoded.entities, dumps)
                rows.append(cross_format(e, t, pool=decoded.entities, units=units, dumps=dumps, **kw))
    if basecache.CHECK:
        dumps.verify()
    return rows


def decode_row(decoded: Decoded, *, source: str, input: str, sha256: str = "", uri: str = "") -> FidelityRow:
    """The decode row of an input that ``source`` decoded."""
    return _row(_Input(input, sha256, uri), decoded.primary, source, "", "decode", status="decoded")


def reject_row(
    exc: BaseException | RowError, *, input: str, sha256: str = "", uri: str = "", source: str = ""
) -> FidelityRow:
    """The decode row of an input that did not decode (``exc``: what stopped it, or a ``RowError``
    rebuilt from a reject record)."""
    return FidelityRow(
        input=input,
        sha256=sha256,
        uri=uri,
        entity="",
        kind="",
        source=source,
        target="",
        check="decode",
        status="rejected",
        error=exc if isinstance(exc, RowError) else RowError.of(exc),
    )


def check_file(
    data: bytes,
    name: str = "",
    *,
    input: str | None = None,
    uri: str | None = None,
    targets: Sequence[str] | None = None,
) -> list[FidelityRow]:
    """Read one input and run every check: a ``decode`` row, then ``check_decoded``'s rows. A file
    that does not decode gives its ``rejected`` row only."""
    key = input or uri or name
    try:
        s = Sniff(data, name, uri=uri)
        sha = s.sha256
    except BunzaiError as exc:
        import hashlib

        return [reject_row(exc, input=key, sha256=hashlib.sha256(data).hexdigest(), uri=uri or "")]
    fmt = ""
    try:
        cand = registry.require(s)
        fmt = cand.id
        decoded = read_sniff(s, format=cand.id, score=cand.score)
    except Exception as exc:  # a typed reject, or an internal error the row marks as such
        return [reject_row(exc, input=key, sha256=sha, uri=uri or "", source=fmt)]
    # the file's own format, not the entities' recorded source (a vaud-json line keeps the
    # format its entity first came from)
    kw: dict[str, Any] = {"input": key, "sha256": sha, "uri": uri or "", "source": fmt}
    return [decode_row(decoded, **kw), *check_decoded(data, decoded, name=name, targets=targets, **kw)]


__all__ = [
    "CHECKS",
    "ROW_SCHEMA",
    "FidelityRow",
    "PathLoss",
    "RowError",
    "body_losses",
    "canonical_stability",
    "check_decoded",
    "check_file",
    "compare_native",
    "cross_format",
    "cross_targets",
    "decode_row",
    "entity_name",
    "media_changes",
    "native_round_trip",
    "reject_row",
]
