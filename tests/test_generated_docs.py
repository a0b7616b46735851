"""Committed generated docs must match the code (regenerate with `make schema`)."""

from __future__ import annotations

from pathlib import Path

from bunzai_codecs.core.entity import ENTITY_KINDS
from bunzai_codecs.support import format_support_markdown, schema_bytes, schemas

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_committed_json_schemas_are_current() -> None:
    current = schemas()
    assert set(current) == set(ENTITY_KINDS)
    for kind, sch in current.items():
        committed = DOCS / "schema" / f"{kind}.schema.json"
        assert committed.exists(), f"{committed} missing: run `make schema`"
        assert committed.read_bytes() == schema_bytes(sch), f"{committed} is stale: run `make schema`"


def test_format_support_is_current() -> None:
    committed = (DOCS / "FORMAT-SUPPORT.md").read_text(encoding="utf-8")
    assert committed == format_support_markdown(), "docs/FORMAT-SUPPORT.md is stale: run `make schema`"


def test_schema_descriptions_cover_every_field() -> None:
    for kind, sch in schemas().items():
        for name, prop in sch.get("properties", {}).items():
            assert prop.get("description") or "$ref" in prop or "allOf" in prop, (
                f"{kind}.{name} lacks a description"
            )
