"""Round-trip fidelity checks, one ``FidelityRow`` per entity and check (ARCHITECTURE "Fidelity").

Implemented here:

1. ``native`` — the file's own format, ``encode_F(decode_F(x))`` against ``x``: compared as parsed
   trees for JSON (line by line for JSON lines), as text-chunk payloads plus the bytes of every
   other chunk for PNG, as member bytes (``.json`` members as trees) plus the bytes before the zip
   for zip archives, byte for byte otherwise. One row per input, for its primary entity.
2. ``canonical`` — ``decode(encode(e)).body == e.body`` for every entity of the file, through the
   codec that writes that entity in the source app (the source format for the primary; the app's
   codec for the linked entity's kind, or vaud-json when the app has none).

Check 3 (``cross``: every target format of the same kind, losses classed as expected or not by the
target's coverage) extends the same row; the fields it needs (``expected``, ``unexpected``) are
reserved below.

The row (one JSON object per line in the pipeline's ``fidelity/rows-*.jsonl``)::

    {"entity": id, "kind": kind, "uri": input uri, "check": "native" | "canonical" | "cross",
     "source": format decoded from, "target": format encoded to, "status": "lossless" | "lossy" | "failed",
     "lost": [paths], "added": [paths], "changed": [paths], "truncated": n, "error": "Name: message" | null}

Paths name the native tree for ``native`` (``$.data.character_book.entries[3].keys``,
``png[chara].data.name``, ``zip[card.json].data.name``) and the canonical entity for ``canonical``
(``$.body.entries[3].content``). At most ``MAX_PATHS`` paths are listed per row; ``truncated`` counts
the rest. A row is ``lossy`` when a path was lost or changed; paths a round trip only adds (defaults
a writer fills in, the ``source`` a read stamps on a vaud-json entity that had none) are listed in
``added`` and leave it ``lossless``. ``failed`` means the check could not run (``error`` says why).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any, Literal

from bunzai_codecs.bundle import VAUD, read_sniff, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import Codec
from bunzai_codecs.core.diff import Change, diff
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.errors import BunzaiError, Malformed
from bunzai_codecs.core.sniff import Sniff, parse_json

Check = Literal["native", "canonical", "cross"]
Status = Literal["lossless", "lossy", "failed"]

#: paths listed per row; the rest are counted in ``truncated``
MAX_PATHS = 50


@dataclass(frozen=True, slots=True)
class FidelityRow:
    """The outcome of one check on one entity."""

    entity: str
    kind: str
    uri: str
    check: Check
    source: str
    target: str
    status: Status
    lost: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    #: differences not listed in lost/added/changed (past ``MAX_PATHS``)
    truncated: int = 0
    #: ``"Malformed: ..."`` when the check could not run (status ``failed``)
    error: str | None = None
    #: reserved for check 3: lost paths the target's coverage predicts / does not predict
    expected: tuple[str, ...] = field(default=())
    unexpected: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "entity": self.entity,
            "kind": self.kind,
            "uri": self.uri,
            "check": self.check,
            "source": self.source,
            "target": self.target,
            "status": self.status,
            "lost": list(self.lost),
            "added": list(self.added),
            "changed": list(self.changed),
            "truncated": self.truncated,
            "error": self.error,
        }
        if self.check == "cross":
            out["expected"] = list(self.expected)
            out["unexpected"] = list(self.unexpected)
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> FidelityRow:
        return cls(
            entity=d["entity"],
            kind=d["kind"],
            uri=d["uri"],
            check=d["check"],
            source=d["source"],
            target=d["target"],
            status=d["status"],
            lost=tuple(d.get("lost", ())),
            added=tuple(d.get("added", ())),
            changed=tuple(d.get("changed", ())),
            truncated=int(d.get("truncated", 0)),
            error=d.get("error"),
            expected=tuple(d.get("expected", ())),
            unexpected=tuple(d.get("unexpected", ())),
        )


def _row(
    entity: CanonicalEntity, uri: str, check: Check, source: str, target: str, changes: list[Change]
) -> FidelityRow:
    lost = [c.path for c in changes if c.kind == "removed"]
    added = [c.path for c in changes if c.kind == "added"]
    changed = [c.path for c in changes if c.kind == "changed"]
    shown = 0
    parts = []
    for paths in (lost, added, changed):
        take = paths[: max(0, MAX_PATHS - shown)]
        shown += len(take)
        parts.append(tuple(take))
    return FidelityRow(
        entity=entity.id,
        kind=entity.kind,
        uri=uri,
        check=check,
        source=source,
        target=target,
        status="lossy" if lost or changed else "lossless",
        lost=parts[0],
        added=parts[1],
        changed=parts[2],
        truncated=len(changes) - shown,
    )


def _failed(
    entity: CanonicalEntity, uri: str, check: Check, source: str, target: str, exc: Exception
) -> FidelityRow:
    if isinstance(exc, BunzaiError):
        msg = f"{type(exc).__name__}: {' '.join(exc.message.split())}"
    else:  # a codec bug: still a row, never a crash of the caller
        msg = f"{type(exc).__name__}: {exc}"
    return FidelityRow(entity.id, entity.kind, uri, check, source, target, "failed", error=msg)


# -- comparing native files ----------------------------------------------------------------------


def _json_or_lines(data: bytes) -> Any:
    """A JSON tree, or for JSON lines (vaud-json) the list of line trees."""
    try:
        return parse_json(data)
    except Malformed:
        lines = [ln for ln in data.splitlines() if ln.strip()]
        if len(lines) < 2:
            raise
        return [parse_json(ln) for ln in lines]


def _payload(text: bytes) -> Any:
    """A PNG text payload as the apps write it: base64 JSON when it is, else the bytes."""
    try:
        return parse_json(base64.b64decode(text, validate=True))
    except (binascii.Error, ValueError, Malformed):
        return text


def compare_native(before: bytes, after: bytes) -> list[Change]:
    """What a native round trip changed, by path (see the module docstring for the rules)."""
    a, b = Sniff(before), Sniff(after)
    if a.is_png:
        return _compare_png(a, b)
    if a.is_zip:
        return _compare_zip(a, b)
    try:
        ta = _json_or_lines(before)
    except Malformed:
        return [] if before == after else [Change("$", "changed")]
    try:
        tb = _json_or_lines(after)
    except Malformed:
        return [Change("$", "changed")]
    return diff(ta, tb, path="$")


def _compare_png(a: Sniff, b: Sniff) -> list[Change]:
    if b.png is None:
        return [Change("png", "changed")]
    out: list[Change] = []
    other_a = [(c.type, c.data) for c in a.require_png().chunks if c.type not in _TEXT]
    other_b = [(c.type, c.data) for c in b.require_png().chunks if c.type not in _TEXT]
    if other_a != other_b:
        out.append(Change("png.chunks", "changed"))
    ta = {t.keyword.lower(): _payload(t.text) for t in a.png_texts}
    tb = {t.keyword.lower(): _payload(t.text) for t in b.png_texts}
    for k in sorted(ta.keys() | tb.keys()):
        if k not in tb:
            out.append(Change(f"png[{k}]", "removed"))
        elif k not in ta:
            out.append(Change(f"png[{k}]", "added"))
        else:
            out.extend(diff(ta[k], tb[k], path=f"png[{k}]"))
    return out


_TEXT = (b"tEXt", b"zTXt", b"iTXt")


def _compare_zip(a: Sniff, b: Sniff) -> list[Change]:
    za, zb = a.require_zip(), b.zip
    if zb is None:
        return [Change("zip", "changed")]
    out: list[Change] = []
    if za.prefix != zb.prefix:
        out.append(Change("zip.prefix", "changed"))
    na, nb = set(za.names), set(zb.names)
    for n in sorted(na | nb):
        where = f"zip[{n}]"
        if n not in nb:
            out.append(Change(where, "removed"))
        elif n not in na:
            out.append(Change(where, "added"))
        else:
            x, y = za.read(n), zb.read(n)
            if x == y:
                continue
            if n.lower().endswith(".json"):
                try:
                    out.extend(diff(parse_json(x), parse_json(y), path=where))
                    continue
                except Malformed:
                    pass
            out.append(Change(where, "changed"))
    return out


# -- the checks ----------------------------------------------------------------------------------


def linked_target(entity: CanonicalEntity, source: Codec) -> Codec:
    """The codec that writes a linked entity of ``source``'s app on its own: a same-app twin's
    codec, else the app's codec for the entity's kind, else vaud-json."""
    for fmt in entity.original:
        if fmt in registry.CODECS:
            c = registry.get(fmt)
            if c.family == source.family and (c.kind == entity.kind or c.id == VAUD):
                return c
    return registry.family_codec(source.family, entity.kind) or registry.get(VAUD)


def check_decoded(s: Sniff, decoded: Decoded, source: str) -> list[FidelityRow]:
    """Checks 1 and 2 for everything decoded from ``s`` in format ``source``.

    ``decoded`` must be the codec's output as it was (no warnings added, no source re-stamped):
    the native round trip compares the file with what the codec writes back for it.
    """
    uri = s.uri or s.name or "<memory>"
    primary = decoded.primary
    rows: list[FidelityRow] = []
    back: Decoded | None = None
    codec = registry.get(source)
    try:
        data = write(primary, source, linked=decoded.entities).data
        rows.append(_row(primary, uri, "native", source, source, compare_native(s.data, data)))
    except Exception as exc:
        rows.append(_failed(primary, uri, "native", source, source, exc))
        data = None
    if data is not None:
        try:
            # the same file name: some formats take a value from it (an ST lorebook's name)
            back = read_sniff(Sniff(data, s.name or f"roundtrip{codec.extension}"), format=source, score=1.0)
            rows.append(_stability(primary, back.primary, uri, source, source))
        except Exception as exc:
            rows.append(_failed(primary, uri, "canonical", source, source, exc))
    for ent in decoded.entities[1:]:
        rows.append(_linked_stability(ent, decoded, back, codec, uri, _stem(s.name)))
    return rows


def _stability(e: CanonicalEntity, again: CanonicalEntity, uri: str, source: str, target: str) -> FidelityRow:
    changes = (
        diff(e.body.dump(), again.body.dump(), path="$.body")
        if again.kind == e.kind
        else [Change("$.kind", "changed")]
    )
    return _row(e, uri, "canonical", source, target, changes)


def _stem(name: str) -> str:
    base = name.rsplit("/", 1)[-1]
    return base.split(".", 1)[0] or "roundtrip"


def _linked_stability(
    ent: CanonicalEntity, decoded: Decoded, back: Decoded | None, codec: Codec, uri: str, stem: str
) -> FidelityRow:
    """A linked entity usually comes back embedded in its parent: the n-th linked entity of its
    kind in the re-decoded file is its counterpart. When the parent's format does not carry it, it
    is written on its own through ``linked_target``."""
    if back is not None:
        nth = [e for e in decoded.entities[1:] if e.kind == ent.kind].index(ent)
        again = [e for e in back.entities[1:] if e.kind == ent.kind]
        if nth < len(again):
            return _stability(ent, again[nth], uri, codec.id, codec.id)
    target = linked_target(ent, codec)
    try:
        data = write(ent, target.id, linked=decoded.entities).data
        alone = read_sniff(Sniff(data, f"{stem}{target.extension}"), format=target.id, score=1.0)
        return _stability(ent, alone.primary, uri, codec.id, target.id)
    except Exception as exc:
        return _failed(ent, uri, "canonical", codec.id, target.id, exc)


__all__ = ["MAX_PATHS", "FidelityRow", "check_decoded", "compare_native", "linked_target"]
