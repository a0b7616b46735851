"""Reading a file into its linked entities, and writing an entity with the entities it links to.

This is the library's front door (re-exported from ``bunzai_codecs``):

- ``read(data, name)`` detects the format, decodes, and stamps every entity with its source;
- ``write(entity, format, linked=...)`` encodes to a format; linked entities (a card's lorebook,
  its regex set) are re-embedded where the format embeds them, otherwise returned as ``beside``
  exports in the target app's format for their kind (or vaud-json when the app has none);
- ``convert(data, name, to)`` is both.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import Codec, EmitContext
from bunzai_codecs.core.entity import CanonicalEntity, Decoded, Source
from bunzai_codecs.core.errors import Unsupported
from bunzai_codecs.core.sniff import Sniff

VAUD = "vaud-json"


def read(data: bytes, name: str = "", *, uri: str | None = None, format: str | None = None) -> Decoded:
    """Decode one input. Raises a ``BunzaiError`` (NotRecognized, Malformed, ...) on bad input."""
    s = Sniff(data, name, uri=uri)
    return read_sniff(s, format=format)


def read_sniff(s: Sniff, *, format: str | None = None, score: float | None = None) -> Decoded:
    """Decode an already-built ``Sniff`` (the pipeline detects first, then decodes)."""
    if format is None or score is None:
        cand = registry.require(s, format)
        format, score = cand.id, cand.score
    decoded = registry.get(format).decode(s)
    src_uri = s.uri or s.name or "<memory>"
    for e in decoded.entities:
        if e.source is None:
            e.source = Source(uri=src_uri, format=format, score=score, sha256=s.sha256, bytes=s.size)
    return decoded


@dataclass
class Export:
    """The bytes of one entity in one format, plus linked entities that needed files of their own."""

    entity: CanonicalEntity
    format: str
    data: bytes
    extension: str
    beside: list[Export] = field(default_factory=list)


def codec_for_export(entity: CanonicalEntity, format: str) -> Codec:
    codec = registry.get(format)
    if format != VAUD and codec.kind != entity.kind:
        raise Unsupported(
            f"{format} holds {codec.kind} entities, not {entity.kind}; "
            f"formats for {entity.kind}: {', '.join(c.id for c in registry.for_kind(entity.kind))}",
            uri=entity.source.uri if entity.source else None,
        )
    return codec


def write(entity: CanonicalEntity, format: str, *, linked: Iterable[CanonicalEntity] = ()) -> Export:
    """Encode ``entity`` to ``format``; see the module docstring for linked entities."""
    pool = list(linked)
    codec = codec_for_export(entity, format)
    ctx = EmitContext.for_entities(pool)
    data = codec.encode(entity, ctx)
    out = Export(entity, format, data, codec.extension)
    for ref in ctx.refs(entity):
        if ref.id in ctx.embedded:
            continue
        side = _beside_codec(codec, ref)
        out.beside.append(write(ref, side.id, linked=pool))
    return out


def _beside_codec(parent: Codec, ref: CanonicalEntity) -> Codec:
    """The target app's own codec for the linked entity's kind; a same-format twin wins."""
    for fmt in ref.original:
        if fmt in registry.CODECS:
            c = registry.get(fmt)
            if c.family == parent.family and c.kind == ref.kind:
                return c
    return registry.family_codec(parent.family, ref.kind) or registry.get(VAUD)


def convert(data: bytes, name: str, to: str, *, uri: str | None = None) -> Export:
    """Read ``data`` and write its primary entity (with its links) as ``to``."""
    decoded = read(data, name, uri=uri)
    return write(decoded.primary, to, linked=decoded.entities)
