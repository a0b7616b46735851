"""Content weights: how much of an entity a conversion keeps. Each value of a body weighs what it
holds (the report's "kept" measure: docs/fidelity.md), and a row's lost weight is the part of it
that a lost or changed path touches."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, cast

import orjson

from bunzai_codecs.core import basecache
from bunzai_codecs.core.codec import normalize_path
from bunzai_codecs.core.diff import join
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.fidelity.paths import _by_kind, _linked_of, _Part, _pattern_of
from bunzai_codecs.fidelity.rows import FidelityRow, PathLoss

#: body path patterns whose value is one unit of content when it carries a byte ``size`` (a media
#: asset whose bytes the entity holds): it weighs its size and is kept or lost whole
MEDIA_UNITS = frozenset({"media.portrait", "media.assets[]"})


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
