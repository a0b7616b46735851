"""vaud-json: canonical entities as JSON, the project's own lossless wire format.

A vaud-json file is one entity per line (a single-entity file is therefore plain JSON): the primary
entity first, then the entities it links to. Each line is the full ``CanonicalEntity`` — body,
links, escrow twins (binary blobs as base64) and source — so decode and encode are exact inverses:
``encode(decode(x)) == x`` byte for byte for any file bunzai wrote. The same lines make up the
pipeline's canonical JSONL.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import orjson

from bunzai_codecs.core.codec import Codec, Coverage, EmitContext, validation_failed
from bunzai_codecs.core.entity import (
    ENTITY_KINDS,
    SCHEMA_VERSION,
    CanonicalEntity,
    Decoded,
    EntityKind,
    Source,
)
from bunzai_codecs.core.errors import Malformed, json_path
from bunzai_codecs.core.sniff import Sniff, parse_json

BLOBS = "blobs"


def to_tree(e: CanonicalEntity) -> dict[str, Any]:
    """The JSON-ready form of an entity (blobs still bytes; ``dumps`` encodes them)."""
    tree: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "kind": e.kind,
        "id": e.id,
        "body": e.body.dump(),
        "links": e.links,
        "original": e.original,
    }
    if e.source is not None:
        tree["source"] = e.source.to_json()
    if e.warnings:
        tree["warnings"] = e.warnings
    return tree


def _blobs_out(original: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for fmt, env in original.items():
        blobs = env.get(BLOBS) if isinstance(env, dict) else None
        if blobs:
            env = {**env, BLOBS: {k: base64.b64encode(v).decode("ascii") for k, v in blobs.items()}}
        out[fmt] = env
    return out


def dumps(e: CanonicalEntity) -> bytes:
    """One compact JSON line (no newline) for ``e``: the canonical JSONL line format."""
    tree = to_tree(e)
    tree["original"] = _blobs_out(e.original)
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
    original: dict[str, Any] = {}
    for fmt, env in t.get("original", {}).items():
        if isinstance(env, dict) and isinstance(env.get(BLOBS), dict):
            blobs = {}
            for name, b64 in env[BLOBS].items():
                try:
                    blobs[name] = base64.b64decode(b64, validate=True)
                except (binascii.Error, TypeError, ValueError):
                    raise Malformed(
                        f"{prefix}blob is not base64", uri=uri, path=json_path(("original", fmt, BLOBS, name))
                    ) from None
            env = {**env, BLOBS: blobs}
        original[fmt] = env
    source = None
    if t.get("source") is not None:
        try:
            source = Source.from_json(t["source"])
        except (KeyError, TypeError, ValueError):
            raise Malformed(f"{prefix}source is incomplete", uri=uri, path="$.source") from None
    warnings = t.get("warnings", [])
    if not isinstance(warnings, list):
        raise Malformed(f"{prefix}warnings must be a list", uri=uri, path="$.warnings")
    return CanonicalEntity(
        kind=kind,
        id=t["id"],
        body=body,
        links=links,
        original=original,
        source=source,
        warnings=[str(w) for w in warnings],
    )


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
    kind = "character"  # vaud-json carries every kind; this is only its default for tables
    suffixes = (".vaud.json", ".jsonl")
    extension = ".vaud.json"
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
