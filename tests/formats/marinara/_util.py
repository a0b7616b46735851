"""Helpers for the Marinara codec tests: read samples, write back, parse."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson

from bunzai_codecs import read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.sniff import Sniff
from tests.formats.helpers import sample

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples" / "marinara"


def sample_tree(name: str) -> Any:
    return orjson.loads(sample(f"marinara/{name}"))


def load(name: str) -> CanonicalEntity:
    return read(sample(f"marinara/{name}"), name).primary


def load_tree(tree: Any, name: str = "x.json", fmt: str | None = None) -> CanonicalEntity:
    return read(orjson.dumps(tree), name, format=fmt).primary


def out_tree(e: CanonicalEntity, fmt: str | None = None) -> Any:
    return orjson.loads(write(e, fmt or (e.source.format if e.source else "")).data)


def score(codec_id: str, tree: Any, name: str = "x.json") -> float:
    return registry.get(codec_id).detect(Sniff(orjson.dumps(tree), name))


def fresh(e: CanonicalEntity) -> CanonicalEntity:
    """The same body with no escrow twin (what another format's entity looks like to a codec)."""
    return CanonicalEntity(kind=e.kind, id=e.id, body=e.body.model_copy(deep=True), media=dict(e.media))


def mutated(tree: Any) -> Any:
    return copy.deepcopy(tree)
