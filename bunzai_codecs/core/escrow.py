"""The escrow twin: what a codec keeps of the file it decoded, so a same-format export loses nothing.

Every decoded entity carries, under its codec's id in ``CanonicalEntity.original``, a :class:`Twin`:

- ``raw``: the parsed native tree, by reference (never copied, never mutated after decode);
- ``blobs``: the bytes of what the codec does not map (a PNG card's file, a zip, a Risu module);
- the codec's own facets: typed fields a codec declares on its subclass (``container``, ``shape``,
  ``name``...), each a fact about the file's layout its encoder needs to write the same file again.

A codec names its twin class in ``Codec.twin_type``; ``Codec.entity(..., raw=..., **facets)``
builds it. The twin's JSON form (vaud-json's ``original``) is ``{"raw": ..., <facet>: ...}`` with
the keys in the order the codec gave them, each under its wire name (``jsonStyle``,
``cipherKey``...); a facet given as ``None`` is written as ``null``, one not given is not written.
Reading a vaud-json line, :meth:`Twin.from_json` checks each facet's type (a wrong one is
``Malformed`` at its path) and keeps keys this bunzai does not know in ``extra``, so a line is
written back exactly as it was read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

from bunzai_codecs.core.errors import Malformed


def facet(kind: type | tuple[type, ...] = object, *, wire: str | None = None) -> Any:
    """A twin field: ``None`` unless the codec sets it; ``kind`` is the JSON type(s) a vaud-json line
    may hold there (besides ``null``), ``wire`` its JSON name when that is not the field's name."""
    return field(default=None, metadata={"kind": kind, "wire": wire})


@dataclass(eq=False)
class Twin:
    """The escrow of one entity for one format (see the module docstring)."""

    #: the native tree the codec decoded (shared with the decoder's caller: never mutated)
    raw: Any = None
    #: the bytes of what the codec does not map, by name (``image``, ``archive``, ``png``...)
    blobs: dict[str, bytes] | None = None
    #: the container the file was in (``Codec.containers``), for a format whose bytes alone do not
    #: say which (a ``.risupreset`` or a ``.risup``) or whose encoder keeps it
    container: str | None = facet(str)
    #: which of the format's layouts the file had (``world``, ``lorebook_v3``, ``card``...)
    shape: str | None = facet(str)
    #: the name the app knows the file by, where the file does not hold it (its file name's stem)
    name: str | None = facet(str)
    #: keys of a vaud-json twin this bunzai does not know, kept to be written back
    extra: dict[str, Any] = field(default_factory=dict, repr=False)
    #: the wire keys of this twin, in order: what its JSON form writes
    keys: tuple[str, ...] = field(default=("raw",), repr=False)

    #: what a vaud-json line calls this twin's blobs (never a facet)
    BLOBS: ClassVar[str] = "blobs"

    @classmethod
    def of(cls, raw: Any, **facets: Any) -> Twin:
        """The twin a decoder keeps: ``raw`` plus the facets given (field names; ``blobs`` too), in
        the order given."""
        names = _spec(cls).wire
        keys = ["raw"]
        for k in facets:
            if k == "blobs":
                keys.append(cls.BLOBS)
            elif k in names:
                keys.append(names[k])
            else:
                raise TypeError(f"{cls.__name__} has no facet {k!r}")
        return cls(raw=raw, keys=tuple(keys), **facets)

    def put(self, name: str, value: Any) -> None:
        """Set facet ``name`` after the twin was made (written after the facets given to ``of``)."""
        wire = _spec(type(self)).wire.get(name)
        if wire is None:
            raise TypeError(f"{type(self).__name__} has no facet {name!r}")
        setattr(self, name, value)
        if wire not in self.keys:
            self.keys = (*self.keys, wire)

    def blob(self, name: str) -> bytes | None:
        """The blob called ``name``, if the twin has it."""
        got = self.blobs.get(name) if self.blobs else None
        return got if isinstance(got, bytes) else None

    def to_json(self, blobs: Callable[[dict[str, bytes]], Any] | None = None) -> dict[str, Any]:
        """The JSON form (blobs still bytes unless ``blobs`` encodes a non-empty mapping)."""
        attrs = _spec(type(self)).attrs
        out: dict[str, Any] = {}
        for k in self.keys:
            if k == "raw":
                out[k] = self.raw
            elif k == self.BLOBS:
                out[k] = blobs(self.blobs) if blobs is not None and self.blobs else self.blobs
            elif k in attrs:
                out[k] = getattr(self, attrs[k])
            else:
                out[k] = self.extra[k]
        return out

    @classmethod
    def from_json(cls, env: Any, path: str, blobs: dict[str, bytes] | None = None) -> Twin:
        """A twin from its JSON form at ``path`` (``$.original.sillytavern``); ``blobs`` are its
        blobs already decoded. A facet of the wrong type is ``Malformed`` there."""
        if not isinstance(env, dict):
            raise Malformed("expected an escrow twin object", path=path)
        attrs, kinds = _spec(cls).attrs, _spec(cls).kinds
        values: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for k, v in env.items():
            if k in ("raw", cls.BLOBS):
                continue
            attr = attrs.get(k)
            if attr is None:
                extra[k] = v
            elif v is None or _fits(v, kinds[attr]):
                values[attr] = v
            else:
                raise Malformed(f"expected {_what(kinds[attr])} in the escrow twin", path=f"{path}.{k}")
        return cls(raw=env.get("raw"), blobs=blobs, extra=extra, keys=tuple(env), **values)


def _fits(v: Any, kind: type | tuple[type, ...]) -> bool:
    if isinstance(v, bool):  # JSON true/false: a bool, never a number
        return bool in _tuple(kind) or kind is object
    return isinstance(v, kind)


def _tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _what(kind: type | tuple[type, ...]) -> str:
    names = {str: "a string", int: "a number", bool: "a boolean", list: "an array", dict: "an object"}
    return " or ".join(names.get(k, k.__name__) for k in _tuple(kind))


class _Spec(NamedTuple):
    wire: dict[str, str]  # field name -> wire name
    attrs: dict[str, str]  # wire name -> field name
    kinds: dict[str, type | tuple[type, ...]]  # field name -> JSON type(s)


_SPECS: dict[type, _Spec] = {}


def _spec(cls: type) -> _Spec:
    """The facets of twin class ``cls`` (memoised per class)."""
    got = _SPECS.get(cls)
    if got is None:
        facets = [f for f in dataclasses.fields(cls) if "wire" in f.metadata]
        wire = {f.name: f.metadata["wire"] or f.name for f in facets}
        got = _SPECS[cls] = _Spec(
            wire, {w: a for a, w in wire.items()}, {f.name: f.metadata["kind"] for f in facets}
        )
    return got


__all__ = ["Twin", "facet"]
