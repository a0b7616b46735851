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

Lean lines (the pipeline's canonical dataset): ``dumps(e, store=...)`` keeps every media entry and
escrow blob above ``INLINE_MAX`` bytes out of the line, in ``store`` (digest -> bytes; the dataset
writes each once, as ``blobs/<first 2 hex>/<sha256>``). The line lists them under ``stored``
(``[{"sha256", "bytes"}]``, sorted) and names each by its digest: a media entry by the body's
``sha256`` alone, an escrow blob (or a PNG splice's added chunk) as ``"sha256:<hex>"``. A line still
above ``LINE_BOUND`` then keeps its whole escrow in the store too (``"original": "sha256:<hex>"``,
the escrow's compact JSON); one whose body alone is above it is refused (``LimitExceeded``).
``from_tree(t, fetch=...)`` reads such a line back with the bytes ``fetch`` finds for a digest
(checked against it). A lean line is exactly what ``dumps`` with a store writes for the entity it
reads back to, byte for byte.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, MutableMapping
from typing import Any

import orjson

from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import Codec, Container, Coverage, EmitContext, validation_failed
from bunzai_codecs.core.entity import (
    ENTITY_KINDS,
    SCHEMA_VERSION,
    CanonicalEntity,
    Decoded,
    Source,
)
from bunzai_codecs.core.errors import BunzaiError, LimitExceeded, Malformed, json_path
from bunzai_codecs.core.escrow import Twin
from bunzai_codecs.core.sniff import Sniff, parse_json
from bunzai_codecs.formats._shared.wire import type_name

BLOBS = "blobs"
MEDIA = "media"
#: a lean line's list of the digests (and sizes) whose bytes are in the dataset's blob store
STORED = "stored"
_REF = "sha256:"

#: in a lean line, media entries and escrow blobs of at most this many bytes stay inline (base64)
INLINE_MAX = 4096
#: no lean line is longer than this (bytes, without the newline): 8 MiB, half of DuckDB's default
#: ``maximum_object_size`` for ``read_json``
LINE_BOUND = 8 * 1024 * 1024

#: where a lean line puts bytes it keeps out of itself; returns the digest
_Put = Callable[[bytes], str]


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
                        self._parsed.append((key, png.parse(data, skip_crc=png.IMAGE_DATA)))
                    except BunzaiError:
                        continue
        return self._parsed

    def splice(
        self, blob: bytes, put: _Put | None = None, inline_max: int = INLINE_MAX
    ) -> dict[str, Any] | None:
        """``{"png", "insert"}`` when ``blob`` is a media PNG with chunks added, else None. With
        ``put`` (a lean line), an added chunk above ``inline_max`` bytes goes to the store."""
        from bunzai_codecs.core import png

        if blob[:8] != png.PNG_SIGNATURE or not self.parsed():
            return None
        try:
            whole = png.parse(blob, skip_crc=png.IMAGE_DATA)
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
                    raw = c.type + c.data
                    if put is not None and len(raw) > inline_max:
                        insert.append([i, _REF + put(raw)])
                    else:
                        insert.append([i, _b64(raw)])
            if j == len(pf.chunks):
                return {"png": key, "insert": insert}
        return None


def _blobs_out(
    original: dict[str, Twin], media: dict[str, bytes], put: _Put | None = None, inline_max: int = INLINE_MAX
) -> dict[str, Any]:
    from bunzai_codecs.core.media import digest

    pngs = _Pngs(media)

    def written(blobs: dict[str, bytes]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in blobs.items():
            key = digest(v) if media else None
            if key is not None and media.get(key) == v:
                out[k] = _REF + key
                continue
            spliced = pngs.splice(v, put, inline_max) if media else None
            if spliced is not None:
                out[k] = spliced
            elif put is not None and len(v) > inline_max:
                out[k] = _REF + put(v)
            else:
                out[k] = _b64(v)
        return out

    return {fmt: twin.to_json(written) for fmt, twin in original.items()}


def _dump(tree: dict[str, Any], e: CanonicalEntity) -> bytes:
    try:
        return orjson.dumps(tree)
    except TypeError as exc:  # a codec put something that is not JSON into escrow: a bunzai bug
        raise TypeError(f"entity {e.id} is not JSON-serialisable: {exc}") from exc


def dumps(
    e: CanonicalEntity,
    *,
    store: MutableMapping[str, bytes] | None = None,
    inline_max: int = INLINE_MAX,
    bound: int = LINE_BOUND,
) -> bytes:
    """One compact JSON line (no newline) for ``e``: self-contained (vaud-json files, ``bunzai
    inspect``), or, with ``store``, a lean line of the canonical dataset whose big bytes are put
    in ``store`` (see the module docstring; ``inline_max`` and ``bound`` are for tests)."""
    tree = _tree(e, {})  # its "original" is written below, blobs encoded
    if store is None:
        tree["original"] = _blobs_out(e.original, e.media)
        if e.media:
            tree[MEDIA] = {k: _b64(v) for k, v in e.media.items()}
        return _dump(tree, e)
    from bunzai_codecs.core.media import digest

    ext: dict[str, bytes] = {}

    def put(data: bytes) -> str:
        key = digest(data)
        ext[key] = data
        return key

    tree["original"] = _blobs_out(e.original, e.media, put, inline_max)
    inline = {}
    for k, v in e.media.items():
        if len(v) > inline_max:
            ext[k] = v
        else:
            inline[k] = _b64(v)
    tree.pop(MEDIA, None)
    if inline:
        tree[MEDIA] = inline

    def stored() -> list[dict[str, Any]]:
        return [{"sha256": k, "bytes": len(ext[k])} for k in sorted(ext)]

    if ext:
        tree[STORED] = stored()
    line = _dump(tree, e)
    if len(line) > bound and tree["original"]:
        tree["original"] = _REF + put(orjson.dumps(tree["original"]))
        tree[STORED] = stored()
        line = _dump(tree, e)
    if len(line) > bound:
        raise LimitExceeded(
            f"{e.kind} {e.id}: its canonical line is {len(line)} bytes, above the {bound}-byte bound "
            "with every blob and its escrow in the blob store",
            uri=e.source.uri if e.source is not None else None,
        )
    store.update(ext)
    return line


#: ``digest -> bytes`` of a dataset's blob store (raises ``FileNotFoundError`` for a missing one)
Fetch = Callable[[str], bytes]


class _Stored:
    """The blobs a lean line keeps in the store: listed under ``stored``, fetched once each and
    checked against their digest."""

    def __init__(self, listed: Any, fetch: Fetch | None, prefix: str, uri: str | None) -> None:
        self.fetch = fetch
        self.prefix = prefix
        self.uri = uri
        self.keys: set[str] = set()
        self.got: dict[str, bytes] = {}
        if listed is None:
            return
        if not isinstance(listed, list):
            raise _wrong(prefix, uri, f"$.{STORED}", "an array", listed)
        for i, item in enumerate(listed):
            key = item.get("sha256") if isinstance(item, dict) else None
            if not (isinstance(key, str) and len(key) == 64 and all(c in "0123456789abcdef" for c in key)):
                raise Malformed(
                    f"{prefix}not a sha256 digest", uri=uri, path=json_path((STORED, i, "sha256"))
                )
            self.keys.add(key)

    def get(self, key: str, path: str) -> bytes | None:
        """The bytes of a listed digest; None when the line does not list it. Without ``fetch`` (a
        lean line read on its own) a listed digest is an error naming where the bytes are."""
        if key not in self.keys:
            return None
        if key in self.got:
            return self.got[key]
        if self.fetch is None:
            raise Malformed(
                f"{self.prefix}the bytes of {key} are in the dataset's blob store "
                f"(blobs/{key[:2]}/{key}): read the line with its dataset (bunzai export)",
                uri=self.uri,
                path=path,
            )
        from bunzai_codecs.core.media import digest

        try:
            data = self.fetch(key)
        except FileNotFoundError:
            raise Malformed(
                f"{self.prefix}blob {key} is missing from the dataset's blob store", uri=self.uri, path=path
            ) from None
        if digest(data) != key:
            raise Malformed(f"{self.prefix}blob {key} does not match its sha256", uri=self.uri, path=path)
        self.got[key] = data
        return data


def _wrong(prefix: str, uri: str | None, path: str, expected: str, value: Any) -> Malformed:
    """The one reader's error for a wrong type (``expected X, found Y``), after a line's prefix."""
    return Malformed(f"{prefix}expected {expected}, found {type_name(value)}", uri=uri, path=path)


def from_tree(
    t: Any, *, uri: str | None = None, line: int = 0, fetch: Fetch | None = None
) -> CanonicalEntity:
    """Rebuild an entity from its JSON form, with typed errors naming the bad path. ``fetch``
    finds the bytes a lean line keeps in the dataset's blob store (``stored``)."""
    from bunzai_codecs.entities import BODY_TYPES

    prefix = f"line {line + 1}: " if line else ""
    if not isinstance(t, dict):
        raise _wrong(prefix, uri, "$", "a vaud-json entity object", t)
    if t.get("schemaVersion") != SCHEMA_VERSION:
        raise Malformed(
            f"{prefix}unsupported schemaVersion {t.get('schemaVersion')!r} (this bunzai reads {SCHEMA_VERSION})",
            uri=uri,
            path="$.schemaVersion",
        )
    kind = t.get("kind")
    if kind not in ENTITY_KINDS:
        raise Malformed(f"{prefix}unknown kind {kind!r}", uri=uri, path="$.kind")
    stored = _Stored(t.get(STORED), fetch, prefix, uri)
    raw_original = t.get("original", {})
    if isinstance(raw_original, str) and raw_original.startswith(_REF) and stored.keys:
        data = stored.get(raw_original[len(_REF) :], "$.original")
        if data is None:
            raise Malformed(
                f"{prefix}original names a blob the line does not list", uri=uri, path="$.original"
            )
        try:
            raw_original = orjson.loads(data)
        except orjson.JSONDecodeError:
            raise Malformed(f"{prefix}the stored escrow is not JSON", uri=uri, path="$.original") from None
    for key, typ, what in (
        ("id", str, "a string"),
        ("body", dict, "an object"),
        ("links", dict, "an object"),
    ):
        if key in t and not isinstance(t[key], typ):
            raise _wrong(prefix, uri, f"$.{key}", what, t[key])
    if not isinstance(raw_original, dict):
        raise _wrong(prefix, uri, "$.original", "an object", raw_original)
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
            raise _wrong(prefix, uri, json_path(("links", k)), "an array of ids", v)
    media = _media_in(t.get(MEDIA), prefix, uri)
    if stored.keys and fetch is not None:  # the body's media items whose bytes are in the store
        from bunzai_codecs.core.media import items

        for path, a in items(body):
            if a.sha256 is not None and a.sha256 not in media:
                data = stored.get(a.sha256, f"$.body.{path}.sha256")
                if data is not None:
                    media[a.sha256] = data
    original: dict[str, Twin] = {}
    for fmt, env in raw_original.items():
        where = json_path(("original", fmt))
        raw_blobs = env.get(BLOBS) if isinstance(env, dict) else None
        blobs: dict[str, bytes] | None = None
        if raw_blobs is not None:
            if not isinstance(raw_blobs, dict):
                raise _wrong(prefix, uri, f"{where}.{BLOBS}", "an object", raw_blobs)
            blobs = {}
            for name, b64 in raw_blobs.items():
                blobs[name] = _blob_in(b64, media, stored, prefix, uri, ("original", fmt, BLOBS, name))
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
        raise _wrong(prefix, uri, "$.warnings", "an array", warnings)
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
        raise _wrong(prefix, uri, "$.media", "an object", m)
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


def _ref_in(key: str, media: dict[str, bytes], stored: _Stored, path: str) -> bytes | None:
    data = media.get(key)
    return data if data is not None else stored.get(key, path)


def _blob_in(
    v: Any, media: dict[str, bytes], stored: _Stored, prefix: str, uri: str | None, where: tuple[str, ...]
) -> bytes:
    path = json_path(where)
    if isinstance(v, str) and v.startswith(_REF):
        data = _ref_in(v[len(_REF) :], media, stored, path)
        if data is None:
            raise Malformed(f"{prefix}blob names a media entry the line does not have", uri=uri, path=path)
        return data
    if isinstance(v, dict):
        return _splice_in(v, media, stored, prefix, uri, path)
    try:
        return base64.b64decode(v, validate=True)
    except (binascii.Error, TypeError, ValueError):
        raise Malformed(f"{prefix}blob is not base64", uri=uri, path=path) from None


def _splice_in(
    v: dict[str, Any], media: dict[str, bytes], stored: _Stored, prefix: str, uri: str | None, path: str
) -> bytes:
    from bunzai_codecs.core import png

    key = v.get("png")
    base = _ref_in(key, media, stored, path) if isinstance(key, str) else None
    insert = v.get("insert")
    if base is None or not isinstance(insert, list):
        raise Malformed(f"{prefix}blob names a media PNG the line does not have", uri=uri, path=path)
    # chunks kept in the store (fetched first: a missing blob is its own error)
    fetched = {
        j: stored.get(item[1][len(_REF) :], path)
        for j, item in enumerate(insert)
        if isinstance(item, list) and len(item) == 2 and isinstance(item[1], str) and item[1].startswith(_REF)
    }
    try:
        pf = png.parse(base, skip_crc=png.IMAGE_DATA)
        chunks = list(pf.chunks)
        for j, item in enumerate(insert):
            i, b64 = item
            raw = fetched[j] if j in fetched else base64.b64decode(b64, validate=True)
            if raw is None or not isinstance(i, int) or not 0 <= i <= len(chunks) or len(raw) < 4:
                raise ValueError(i)
            chunks.insert(i, png.Chunk(raw[:4], raw[4:]))
        return png.build(chunks, pf.trailing)
    except (BunzaiError, binascii.Error, TypeError, ValueError):
        raise Malformed(f"{prefix}blob is not a readable PNG splice", uri=uri, path=path) from None


class VaudJsonCodec(Codec):
    id = "vaud-json"
    lossless = True
    containers = (Container("json", (".vaud.json", ".jsonl", ".json"), "json", images=True),)
    coverage = Coverage.of("*")

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


__all__ = ["INLINE_MAX", "LINE_BOUND", "STORED", "Fetch", "VaudJsonCodec", "dumps", "from_tree", "to_tree"]
