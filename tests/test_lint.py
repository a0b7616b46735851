"""Lint rules: each rule pinned by name on a hand-made entity, with its level and path."""

from __future__ import annotations

from typing import Any

import pytest

from bunzai_codecs import ValidationFailed
from bunzai_codecs.core.entity import CanonicalEntity, canonical_id
from bunzai_codecs.entities import BODY_TYPES
from bunzai_codecs.lint import RULES, errors, lint, warnings


def ent(
    kind: str, body: dict[str, Any], *, id: str | None = None, links: list[str] | None = None
) -> CanonicalEntity:
    return CanonicalEntity(
        kind=kind,  # type: ignore[arg-type]
        id=id or canonical_id(kind, "ab" * 32),
        body=BODY_TYPES[kind].model_validate(body),  # type: ignore[index]
        links={"knowledgeRefs": links} if links is not None else {},
    )


def hits(e: CanonicalEntity, **kw: Any) -> list[tuple[str, str, str]]:
    return [(f.rule, f.level, f.path) for f in lint(e, **kw)]


GOOD_ENTRY = {"id": "0", "title": "Town", "content": "A town.", "triggers": [{"text": "town"}]}


def test_clean_entities_have_no_findings() -> None:
    assert lint(ent("character", {"identity": {"name": "Aria"}})) == []
    assert lint(ent("lorebook", {"entries": [GOOD_ENTRY]})) == []
    assert (
        lint(
            ent("regex", {"rules": [{"id": "r", "find": "a", "phases": ["output"], "flags": "gi<move_top>"}]})
        )
        == []
    )
    assert lint(ent("persona", {"name": "Me"})) == []
    assert lint(ent("preset", {"prompts": [{"id": "main"}, {"id": "nsfw"}]})) == []


@pytest.mark.parametrize(
    ("entity", "expected"),
    [
        (
            ent("character", {"identity": {"name": "A"}}, id="../../etc/passwd"),
            [("entity.id", "error", "$.id")],
        ),
        (ent("character", {"identity": {"name": "A"}}, id="lorebook-abc"), [("entity.id", "error", "$.id")]),
        (
            ent("character", {"identity": {"name": " "}}),
            [("character.name-empty", "warning", "$.body.identity.name")],
        ),
        (ent("persona", {}), [("persona.name-empty", "warning", "$.body.name")]),
        (ent("lorebook", {}), [("lorebook.no-entries", "warning", "$.body.entries")]),
        (
            ent("lorebook", {"entries": [GOOD_ENTRY, GOOD_ENTRY]}),
            [("lorebook.entry-id-duplicate", "error", "$.body.entries[1].id")],
        ),
        (
            ent("lorebook", {"categories": [{"id": "c"}, {"id": "c"}], "entries": [GOOD_ENTRY]}),
            [("lorebook.category-id-duplicate", "error", "$.body.categories[1].id")],
        ),
        (
            ent("lorebook", {"entries": [{**GOOD_ENTRY, "categoryId": "nowhere"}]}),
            [("lorebook.category-unknown", "warning", "$.body.entries[0].categoryId")],
        ),
        (
            ent("lorebook", {"entries": [{"id": "0", "content": "x", "triggers": [{"text": "  "}]}]}),
            [
                ("lorebook.entry-no-trigger", "warning", "$.body.entries[0].triggers"),
                ("lorebook.trigger-blank", "warning", "$.body.entries[0].triggers[0].text"),
            ],
        ),
        (
            ent("lorebook", {"entries": [{**GOOD_ENTRY, "content": ""}]}),
            [("lorebook.entry-empty-content", "warning", "$.body.entries[0].content")],
        ),
        (
            ent("lorebook", {"entries": [{**GOOD_ENTRY, "probability": 150, "depth": -1}]}),
            [
                ("lorebook.probability-range", "warning", "$.body.entries[0].probability"),
                ("lorebook.depth-negative", "warning", "$.body.entries[0].depth"),
            ],
        ),
        (
            ent(
                "regex",
                {
                    "rules": [
                        {"id": "r", "find": "", "phases": []},
                        {"id": "r", "find": "(", "phases": ["input"], "flags": "gx"},
                    ]
                },
            ),
            [
                ("regex.rule-id-duplicate", "error", "$.body.rules[1].id"),
                ("regex.find-empty", "warning", "$.body.rules[0].find"),
                ("regex.no-phase", "warning", "$.body.rules[0].phases"),
                ("regex.flags-unknown", "warning", "$.body.rules[1].flags"),
            ],
        ),
        (
            ent(
                "regex",
                {"rules": [{"id": "r", "find": "a", "phases": ["input"], "minDepth": 5, "maxDepth": 2}]},
            ),
            [("regex.depth-range", "warning", "$.body.rules[0].minDepth")],
        ),
        (
            ent("preset", {"prompts": [{"id": "main"}, {"id": "main"}]}),
            [("preset.prompt-id-duplicate", "error", "$.body.prompts[1].id")],
        ),
    ],
)
def test_each_rule(entity: CanonicalEntity, expected: list[tuple[str, str, str]]) -> None:
    assert hits(entity) == expected
    for rule, level, _ in expected:
        assert RULES[rule].level == level


def test_links_must_resolve_in_the_decoded_file() -> None:
    book = ent("lorebook", {"entries": [GOOD_ENTRY]})
    card = ent("character", {"identity": {"name": "A"}}, links=[book.id, "lorebook-missing"])
    assert hits(card) == []  # without the bundle nothing can be said about links
    assert hits(card, bundle={card.id: card, book.id: book}) == [
        ("links.dangling", "error", "$.links.knowledgeRefs[1]")
    ]
    selfish = ent("character", {"identity": {"name": "A"}}, links=[canonical_id("character", "ab" * 32)])
    assert hits(selfish) == [("links.self", "error", "$.links.knowledgeRefs[0]")]


def test_findings_split_and_become_typed_errors() -> None:
    e = ent("lorebook", {"entries": [{**GOOD_ENTRY, "content": ""}, {**GOOD_ENTRY, "content": ""}]})
    found = lint(e)
    assert [f.rule for f in errors(found)] == ["lorebook.entry-id-duplicate"]
    assert len(warnings(found)) == 2
    err = errors(found)[0].to_error(e, "s3://b/book.json")
    assert isinstance(err, ValidationFailed) and err.path == "$.body.entries[1].id"
    assert str(err).startswith("s3://b/book.json: ValidationFailed: lorebook lorebook-")
    assert (
        str(warnings(found)[0])
        == "lorebook.entry-empty-content: the entry has no content ($.body.entries[0].content)"
    )
