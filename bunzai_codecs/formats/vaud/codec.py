"""vaud-json: canonical entities as JSON, the project's own lossless wire format.

A vaud-json file is one entity per line (a single-entity file is therefore plain JSON): the primary
entity first, then the entities it links to. Each line is the full ``CanonicalEntity`` — body,
links, escrow twins (binary blobs as base64), source and the media store — so decode and encode are
exact inverses: ``encode(decode(x)) == x`` byte for byte for any file bunzai wrote. The same lines
make up the pipeline's canonical JSONL.

Media: the line is self-contained. ``media`` maps each digest the body names to its bytes (base64,
checked against the digest on read; a digest without bytes in the line reads as a reference only). An escrow blob is written once: a blob equal to a media entry
is the string ``"sha256:<hex>"`` (base64 never holds a colon), and a blob that is a media PNG with
some chunks added (a PNG card: its picture plus the card's text chunks) is
``{"png": "<hex>", "insert": [[index, "<base64 of chunk type + data>"], ...]}``.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import orjson

from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import Codec, Container, Coverage, EmitContext, validation_failed
from bunzai_codecs.core.entity import (
    ENTITY_KINDS,
    SCHEMA_VERSION,
    CanonicalEntity,
    Decoded,
    EntityKind,
    Source,
)
from bunzai_codecs.core.errors import BunzaiError, Malformed, json_path
from bunzai_codecs.core.escrow import Twin
from bunzai_codecs.core.sniff import Sniff, parse_json

BLOBS = "blobs"
MEDIA = "media"
_REF = "sha256:"


def to_tree(e: CanonicalEntity) -> dict[str, Any]:
    """The JSON-ready form of an entity (blobs still bytes; ``dumps`` encodes them)."""
    return _tree(e, {fmt: twin.to_json() for fmt, twin in e.original.items()})


def _tree(e: CanonicalEntity, original: dict[str, Any]) -> dict[str, Any]:
    tree: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "kind": e.kind,
        "id": e.id,
        "body": e.body.dump(),
        "links": e.links,
        "original": original,
    }
    if e.source is not None:
        tree["source"] = e.source.to_json()
    if e.warnings:
        tree["warnings"] = e.warnings
    if e.media:
        tree[MEDIA] = e.media
    return tree


def _b64(b: bytes) -> str:
    return base64.b64encode(b).decode("ascii")


class _Pngs:
    """The media entries that are PNGs, parsed once per line, for blobs that extend one of them."""

    def __init__(self, media: dict[str, bytes]) -> None:
        self.media = media
        self._parsed: list[tuple[str, Any]] | None = None

    def parsed(self) -> list[tuple[str, Any]]:
        if self._parsed is None:
            from bunzai_codecs.core import png

            self._parsed = []
            for key in sorted(self.media):
                data = self.media[key]
                if data[:8] == png.PNG_SIGNATURE:
                    try:
                        self._parsed.append((key, png.parse(data)))
                    except BunzaiError:
                        continue
        return self._parsed

    def splice(self, blob: bytes) -> dict[str, Any] | None:
        """``{"png", "insert"}`` when ``blob`` is a media PNG with chunks added, else None."""
        from bunzai_codecs.core import png

        if blob[:8] != png.PNG_SIGNATURE or not self.parsed():
            return None
        try:
            whole = png.parse(blob)
        except BunzaiError:
            return None
        for key, pf in self.parsed():
            if pf.trailing != whole.trailing or len(pf.chunks) >= len(whole.chunks):
                continue
            insert: list[list[Any]] = []
            j = 0
            for i, c in enumerate(whole.chunks):
                if j < len(pf.chunks) and c.type == pf.chunks[j].type and c.data == pf.chunks[j].data:
                    j += 1
                else:
                    insert.append([i, _b64(c.type + c.data)])
            if j == len(pf.chunks):
                return {"png": key, "insert": insert}
        return None


def _blobs_out(original: dict[str, Twin], media: dict[str, bytes]) -> dict[str, Any]:
    from bunzai_codecs.core.media import digest

    pngs = _Pngs(media)

    def written(blobs: dict[str, bytes]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in blobs.items():
            key = digest(v) if media else None
            if key is not None and media.get(key) == v:
                out[k] = _REF + key
                continue
            spliced = pngs.splice(v) if media else None
            out[k] = spliced if spliced is not None else _b64(v)
        return out

    return {fmt: twin.to_json(written) for fmt, twin in original.items()}


def dumps(e: CanonicalEntity) -> bytes:
    """One compact JSON line (no newline) for ``e``: the canonical JSONL line format."""
    tree = _tree(e, _blobs_out(e.original, e.media))
    if e.media:
        tree[MEDIA] = {k: _b64(v) for k, v in e.media.items()}
    try:
        return orjson.dumps(tree)
    except TypeError as exc:  # a codec put something that is not JSON into escrow: a bunzai bug
        raise TypeError(f"entity {e.id} is not JSON-serialisable: {exc}") from exc


def from_tree(t: Any, *, uri: str | None = None, line: int = 0) -> CanonicalEntity:
    """Rebuild an entity from its JSON form, with typed errors naming the bad path."""
    from bunzai_codecs.entities import BODY_TYPES

    prefix = f"line {line + 1}: " if line else ""
    if not isinstance(t, dict):
        raise Malformed(f"{prefix}a vaud-json entity must be an object", uri=uri, path="$")
    if t.get("schemaVersion") != SCHEMA_VERSION:
        raise Malformed(
            f"{prefix}unsupported schemaVersion {t.get('schemaVersion')!r} (this bunzai reads {SCHEMA_VERSION})",
            uri=uri,
            path="$.schemaVersion",
        )
    kind = t.get("kind")
    if kind not in ENTITY_KINDS:
        raise Malformed(f"{prefix}unknown kind {kind!r}", uri=uri, path="$.kind")
    for key, typ in (("id", str), ("body", dict), ("links", dict), ("original", dict)):
        if key in t and not isinstance(t[key], typ):
            raise Malformed(f"{prefix}{key} must be {typ.__name__}", uri=uri, path=f"$.{key}")
    if not isinstance(t.get("id"), str) or not t["id"]:
        raise Malformed(f"{prefix}id is missing", uri=uri, path="$.id")
    try:
        body = BODY_TYPES[kind].model_validate(t.get("body", {}))
    except Exception as exc:
        from pydantic import ValidationError

        if isinstance(exc, ValidationError):
            raise validation_failed(exc, uri=uri, codec="vaud-json") from None
        raise
    links = t.get("links", {})
    for k, v in links.items():
        if not (isinstance(v, list) and all(isinstance(x, str) for x in v)):
            raise Malformed(f"{prefix}links.{k} must be a list of ids", uri=uri, path=json_path(("links", k)))
    media = _media_in(t.get(MEDIA), prefix, uri)
    original: dict[str, Twin] = {}
    for fmt, env in t.get("original", {}).items():
        where = json_path(("original", fmt))
        raw_blobs = env.get(BLOBS) if isinstance(env, dict) else None
        blobs: dict[str, bytes] | None = None
        if raw_blobs is not None:
            if not isinstance(raw_blobs, dict):
                raise Malformed(f"{prefix}blobs must be an object", uri=uri, path=f"{where}.{BLOBS}")
            blobs = {}
            for name, b64 in raw_blobs.items():
                blobs[name] = _blob_in(b64, media, prefix, uri, ("original", fmt, BLOBS, name))
        try:
            original[fmt] = registry.twin_type(fmt).from_json(env, where, blobs)
        except Malformed as exc:
            exc.message = prefix + exc.message
            raise exc.with_uri(uri) from None
    source = None
    if t.get("source") is not None:
        try:
            source = Source.from_json(t["source"])
        except (KeyError, TypeError, ValueError):
            raise Malformed(f"{prefix}source is incomplete", uri=uri, path="$.source") from None
    warnings = t.get("warnings", [])
    if not isinstance(warnings, list):
        raise Malformed(f"{prefix}warnings must be a list", uri=uri, path="$.warnings")
    from bunzai_codecs.core.media import bind

    # an inline data: URL of an older line moves to the store; a digest whose bytes the line does
    # not carry stays a reference (the bytes may live elsewhere, e.g. a content-addressed store)
    body = bind(body, media)
    return CanonicalEntity(
        kind=kind,
        id=t["id"],
        body=body,
        links=links,
        original=original,
        source=source,
        warnings=[str(w) for w in warnings],
        media=media,
    )


def _media_in(m: Any, prefix: str, uri: str | None) -> dict[str, bytes]:
    from bunzai_codecs.core.media import digest

    if m is None:
        return {}
    if not isinstance(m, dict):
        raise Malformed(f"{prefix}media must be an object", uri=uri, path="$.media")
    out: dict[str, bytes] = {}
    for key, b64 in m.items():
        path = json_path((MEDIA, key))
        try:
            data = base64.b64decode(b64, validate=True)
        except (binascii.Error, TypeError, ValueError):
            raise Malformed(f"{prefix}media entry is not base64", uri=uri, path=path) from None
        if digest(data) != key:
            raise Malformed(f"{prefix}media entry does not match its sha256", uri=uri, path=path)
        out[key] = data
    return out


def _blob_in(v: Any, media: dict[str, bytes], prefix: str, uri: str | None, where: tuple[str, ...]) -> bytes:
    path = json_path(where)
    if isinstance(v, str) and v.startswith(_REF):
        data = media.get(v[len(_REF) :])
        if data is None:
            raise Malformed(f"{prefix}blob names a media entry the line does not have", uri=uri, path=path)
        return data
    if isinstance(v, dict):
        return _splice_in(v, media, prefix, uri, path)
    try:
        return base64.b64decode(v, validate=True)
    except (binascii.Error, TypeError, ValueError):
        raise Malformed(f"{prefix}blob is not base64", uri=uri, path=path) from None


def _splice_in(v: dict[str, Any], media: dict[str, bytes], prefix: str, uri: str | None, path: str) -> bytes:
    from bunzai_codecs.core import png

    key = v.get("png")
    base = media.get(key) if isinstance(key, str) else None
    insert = v.get("insert")
    if base is None or not isinstance(insert, list):
        raise Malformed(f"{prefix}blob names a media PNG the line does not have", uri=uri, path=path)
    try:
        pf = png.parse(base)
        chunks = list(pf.chunks)
        for item in insert:
            i, b64 = item
            raw = base64.b64decode(b64, validate=True)
            if not isinstance(i, int) or not 0 <= i <= len(chunks) or len(raw) < 4:
                raise ValueError(i)
            chunks.insert(i, png.Chunk(raw[:4], raw[4:]))
        return png.build(chunks, pf.trailing)
    except (BunzaiError, binascii.Error, TypeError, ValueError):
        raise Malformed(f"{prefix}blob is not a readable PNG splice", uri=uri, path=path) from None


def _looks_like_entity(t: Any) -> bool:
    return (
        isinstance(t, dict)
        and isinstance(t.get("schemaVersion"), int)
        and t.get("kind") in ENTITY_KINDS
        and isinstance(t.get("body"), dict)
    )


class VaudJsonCodec(Codec):
    id = "vaud-json"
    label = "bunzai canonical (vaud-json)"
    family = "vaud"
    kind = "character"  # the kind of a fresh line's default; the format holds every kind
    kinds = frozenset(ENTITY_KINDS)
    lossless = True
    suffixes = (".vaud.json", ".jsonl")
    extension = ".vaud.json"
    containers = (Container("json", (".vaud.json", ".jsonl", ".json"), "json", images=True),)
    priority = 100
    coverage = Coverage.of("*")

    def detect(self, s: Sniff) -> float:
        t = s.json
        if t is None and s.json_error is not None and s.looks_like_json:
            first = _first_line(s.data)
            if first is None:
                return 0.0
            t = first
        return 1.0 if _looks_like_entity(t) else 0.0

    def kind_of(self, s: Sniff) -> EntityKind:
        """The first line's kind: vaud-json holds every kind, and the file says which."""
        t = s.json
        if t is None and s.json_error is not None and s.looks_like_json:
            t = _first_line(s.data)
        kind = t.get("kind") if isinstance(t, dict) else None
        return kind if kind in ENTITY_KINDS else self.kind

    def decode(self, s: Sniff) -> Decoded:
        t = s.json
        if t is not None:
            return Decoded([from_tree(t, uri=s.uri)])
        entities = []
        for i, line in enumerate(s.data.splitlines()):
            if not line.strip():
                continue
            tree = parse_json(line, what=f"vaud-json line {i + 1}")
            entities.append(from_tree(tree, uri=s.uri, line=i))
        if not entities:
            raise Malformed("empty vaud-json file", uri=s.uri)
        return Decoded(entities)

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        lines = [dumps(entity)]
        for linked in ctx.refs(entity):
            lines.append(dumps(linked))
            ctx.embed(linked)
        return b"\n".join(lines) + b"\n"


def _first_line(data: bytes) -> Any:
    nl = data.find(b"\n")
    if nl < 0:
        return None
    try:
        return parse_json(data[:nl])
    except Malformed:
        return None


__all__ = ["VaudJsonCodec", "dumps", "from_tree", "to_tree"]
