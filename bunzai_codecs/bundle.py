"""Reading a file into its linked entities, and writing an entity with the entities it links to.

This is the library's front door (re-exported from ``bunzai_codecs``):

- ``read(data, name)`` detects the format, decodes, and stamps every entity with its source;
- ``write(entity, format, linked=...)`` encodes to a format; linked entities (a card's lorebook,
  its regex set) are re-embedded where the format embeds them, otherwise returned as ``beside``
  exports in the target app's format for their kind (or the lossless vaud-json when the app has
  none);
- ``convert(data, name, to)`` is both.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import KIND_NAMES, Codec, EmitContext
from bunzai_codecs.core.entity import CanonicalEntity, Decoded, Source
from bunzai_codecs.core.errors import Unsupported
from bunzai_codecs.core.sniff import Sniff


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
    """The bytes of one entity in one format, plus linked entities that needed files of their own.
    ``extension`` is the suffix of the container the bytes are (a PNG card ``.png``, a JSON card
    ``.json``): name the file with it."""

    entity: CanonicalEntity
    format: str
    data: bytes
    extension: str
    beside: list[Export] = field(default_factory=list)
    #: the linked entities the file itself holds (a card's lorebook, a Voxta package's other
    #: characters): a caller writing every entity of an input skips these
    embedded: frozenset[str] = frozenset()
    #: the container the bytes are, when the encoder says (``EmitContext.written``): a container
    #: of several files (``Container.files``) is laid out by ``Codec.layout``
    container: str | None = None


def codec_for_export(entity: CanonicalEntity, format: str) -> Codec:
    """The codec that writes ``entity`` for target ``format``: a format id that holds the entity's
    kind is that format; an app name (``sillytavern``, ``risu``...; :func:`app_codec`) is that
    app's format for the kind, so where an app name is also a format id (``sillytavern``, the card)
    the format wins for its own kind. ``Unsupported`` names the formats that hold the kind."""
    uri = entity.source.uri if entity.source else None
    registry.check_target(format)
    if format in registry.CODECS:
        codec = registry.get(format)
        if codec.holds(entity.kind):
            return codec
    if format in registry.apps():
        found = app_codec(format, entity)
        if found is not None:
            return found
        holds = ", ".join(registry.app_kinds(format))
        raise Unsupported(
            f"{format} has no format for {KIND_NAMES[entity.kind]} (it holds {holds}); "
            f"formats for {entity.kind}: {', '.join(registry.formats_for(entity.kind))}",
            uri=uri,
        )
    codec = registry.get(format)
    raise Unsupported(
        f"{format} holds {KIND_NAMES[codec.kind]}, not {entity.kind}; "
        f"formats for {entity.kind}: {', '.join(registry.formats_for(entity.kind))}",
        uri=uri,
    )


def app_codec(app: str, entity: CanonicalEntity) -> Codec | None:
    """App ``app``'s format for ``entity`` (None when the app has none for its kind): the format
    it was read from when that is the app's, else one of the app's formats it carries a twin of,
    else the app's format whose coverage holds the most of the entity's populated fields (the
    app's first format in asking order on a tie: ``sillytavern-preset`` before SillyTavern's
    flat text-completion presets)."""
    fits = [registry.get(d.id) for d in registry.apps().get(app, ()) if d.holds(entity.kind)]
    fits = [c for c in fits if c.writes(entity)]  # a read-only format: only what was read from it
    if len(fits) <= 1:
        return fits[0] if fits else None
    ids = {c.id: c for c in fits}
    own = entity.source.format if entity.source else None
    if own in ids:
        return ids[own]
    for fmt in entity.original:
        if fmt in ids:
            return ids[fmt]
    from bunzai_codecs.fidelity.weights import content_units  # not the package: it imports this module

    paths = [p for p, weight in content_units(entity.body.dump()) if weight]
    return max(fits, key=lambda c: sum(1 for p in paths if c.coverage.covers(p)))  # first on a tie


def write(
    entity: CanonicalEntity,
    format: str,
    *,
    linked: Iterable[CanonicalEntity] = (),
    container: str | None = None,
    image: bytes | None = None,
    options: dict[str, Any] | None = None,
) -> Export:
    """Encode ``entity`` to ``format``; see the module docstring for linked entities.

    ``container`` picks one of the format's containers (``Codec.containers``: ``png`` or ``json``
    for ``sillytavern``...); by default the container of the file the entity was read from is kept
    where the format has it (a JSON card stays JSON), else the format chooses (``sillytavern``
    writes a PNG card when there is a portrait image);
    ``image`` is the picture a PNG card is written into (it wins over the entity's portrait).
    Both apply to ``entity`` only, not to linked entities written beside it."""
    pool = list(linked)
    codec = codec_for_export(entity, format)
    entity = _bound(entity)
    opts = dict(options or {})
    if container is not None:
        if codec.container_named(container) is None:
            names = ", ".join(c.name for c in codec.container_list())
            raise Unsupported(f"{codec.id} is written as {names}, not {container!r}")
        opts["container"] = container
    elif "container" not in opts and len(codec.container_list()) > 1:
        kept = source_container(entity, codec)
        if kept is not None:
            opts["container"] = kept
    if image is not None:
        opts["image"] = image
    ctx = EmitContext.for_entities(pool, **opts)
    data = codec.encode(entity, ctx)
    written = codec.container_named(ctx.written) if ctx.written else None
    ext = written.suffixes[0] if written is not None else codec.extension_for(data)
    out = Export(entity, codec.id, data, ext, embedded=frozenset(ctx.embedded), container=ctx.written)
    for ref in ctx.refs(entity):
        if ref.id in ctx.embedded:
            continue
        side = _beside_codec(codec, ref)
        out.beside.append(write(ref, side.id, linked=pool))
    return out


def source_container(entity: CanonicalEntity, codec: Codec) -> str | None:
    """The container of ``codec`` the entity's source file was in (by its name's suffix), if the
    codec has it and it holds the entity's pictures (a Pygmalion JSON card cannot hold the portrait
    of a JSON card that had one as a data: URL) and the entity has pictures for an image container
    (a PNG card's lorebook is not a PNG book); None otherwise, and when the entity came from this
    very format (its twin says)."""
    src = entity.source
    if src is None or src.format == codec.id:
        return None
    # an fsspec chain (zip://card.png::s3://bucket/dump.zip) names the file itself first
    found = codec.container_for_name(src.uri.split("::", 1)[0].rsplit("/", 1)[-1])
    if found is None:
        return None
    if not found.images and entity.media and any(c.images for c in codec.container_list()):
        return None
    if found.magic in ("png", "jpeg") and not entity.media:
        return None  # an image container for an entity without pictures (a PNG card's lorebook)
    return found.name


def _bound(entity: CanonicalEntity) -> CanonicalEntity:
    """``entity`` with the bytes of any inline ``data:`` URL its body still spells out moved to its
    media store (an entity built by hand; a decoded one already is), as a copy: the caller's entity
    is not changed."""
    from dataclasses import replace

    from bunzai_codecs.core.media import bind

    store = dict(entity.media)
    body = bind(entity.body, store)
    if body is entity.body:
        return entity
    return replace(entity, body=body, media=store)


def _beside_codec(parent: Codec, ref: CanonicalEntity) -> Codec:
    """The target app's own codec for the linked entity's kind; a same-format twin wins."""
    for fmt in ref.original:
        if fmt in registry.CODECS:
            c = registry.get(fmt)
            if c.family == parent.family and c.holds(ref.kind):
                return c
    return registry.family_codec(parent.family, ref.kind) or registry.lossless_codec(ref.kind)


def convert(data: bytes, name: str, to: str, *, uri: str | None = None) -> Export:
    """Read ``data`` and write its primary entity (with its links) as ``to``."""
    decoded = read(data, name, uri=uri)
    return write(decoded.primary, to, linked=decoded.entities)
