"""Committed generated docs must match the code (regenerate with `make schema`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bunzai_codecs.core.entity import ENTITY_KINDS
from bunzai_codecs.modeldoc import canonical_model_markdown
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


def test_canonical_model_doc_is_current() -> None:
    committed = (DOCS / "canonical-model.md").read_text(encoding="utf-8")
    assert committed == canonical_model_markdown(), "docs/canonical-model.md is stale: run `make schema`"


def test_canonical_model_doc_documents_every_model_and_field() -> None:
    from bunzai_codecs import entities

    doc = canonical_model_markdown()
    models = [getattr(entities, n) for n in entities.__all__]
    for model in models:
        if isinstance(model, type) and issubclass(model, entities.Body) and model is not entities.Body:
            assert f"\n### {model.__name__}\n" in doc, f"{model.__name__} has no section"
            section = doc.split(f"\n### {model.__name__}\n", 1)[1].split("\n#", 1)[0]
            for name, f in model.model_fields.items():
                assert f.description, f"{model.__name__}.{name} lacks a description"
                assert f"| `{name}` |" in section, f"{model.__name__}.{name} missing from its table"


def test_schema_descriptions_cover_every_field() -> None:
    for kind, sch in schemas().items():
        for name, prop in sch.get("properties", {}).items():
            assert prop.get("description") or "$ref" in prop or "allOf" in prop, (
                f"{kind}.{name} lacks a description"
            )


def test_schema_markdown_prints_the_model_doc_and_writes_nothing(tmp_path: Path, capsys: Any) -> None:
    from bunzai_codecs.cli import main

    folder = tmp_path / "schema"
    assert main(["schema", "--markdown", str(folder)]) == 0
    assert capsys.readouterr().out == canonical_model_markdown()
    assert not folder.exists()


def test_entity_index_schema_and_doc_are_current() -> None:
    from bunzai_codecs.support import schema_bytes
    from pipeline.dataset.index.docs import DOC_FILE, SCHEMA_FILE, json_schema, markdown

    committed = DOCS / SCHEMA_FILE
    assert committed.exists(), f"{committed} missing: run `make schema`"
    assert committed.read_bytes() == schema_bytes(json_schema()), f"{committed} is stale: run `make schema`"
    doc = (DOCS / DOC_FILE).read_text(encoding="utf-8")
    assert doc == markdown(), f"docs/{DOC_FILE} is stale: run `make schema`"
