"""Shared bits of the Agnai tests: the samples, a decode/encode shortcut, tree surgery (an edited
entity: ``edited`` of tests/formats/helpers.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from bunzai_codecs import read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.sniff import Sniff

SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "agnai"
MIRELLE = SAMPLES / "Mirelle-Vane.json"
PIP = SAMPLES / "Pip.json"
LANTERNFALL = SAMPLES / "book-7c1e-Lanternfall.json"
HARBOR = SAMPLES / "book-3f90-Harbor-Ward.json"
CHARACTERS = (MIRELLE, PIP)
BOOKS = (LANTERNFALL, HARBOR)


def tree(path: Path) -> Any:
    """A sample's parsed tree (a fresh copy each call: tests mutate it)."""
    return orjson.loads(path.read_bytes())


def dumps(t: Any) -> bytes:
    return orjson.dumps(t, option=orjson.OPT_INDENT_2)


def decode(t: Any, name: str = "x.json", fmt: str | None = None) -> Decoded:
    return read(dumps(t) if not isinstance(t, bytes) else t, name, format=fmt)


def encode(entity: CanonicalEntity, fmt: str, linked: list[CanonicalEntity] | None = None) -> Any:
    """``entity`` written as ``fmt`` (with ``linked`` resolvable) in its JSON container, parsed back
    to a tree."""
    json_container = "json" if registry.get(fmt).container_named("json") is not None else None
    return orjson.loads(write(entity, fmt, linked=linked or [], container=json_container).data)


def score(codec_id: str, t: Any, name: str = "x.json") -> float:
    data = t if isinstance(t, bytes) else orjson.dumps(t)
    return registry.get(codec_id).detect(Sniff(data, name))


def without_twins(entity: CanonicalEntity) -> CanonicalEntity:
    return CanonicalEntity(
        kind=entity.kind,
        id=entity.id,
        body=entity.body,
        links=dict(entity.links),
        media=entity.media,
        source=entity.source,
    )
