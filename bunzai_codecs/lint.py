"""Lint rules for canonical entities: what pydantic cannot see in one field.

pydantic checks each field's type when a codec builds a body; these rules look across fields and
entities. A finding is a ``warning`` (the entity is usable; the note rides on ``entity.warnings``)
or an ``error`` (the entity is unusable or a codec broke an invariant: the pipeline rejects it with
``ValidationFailed``). Error rules are kept to broken invariants — ids that collide or cannot be a
file name, links that point nowhere — because real app files win: a value an app tolerates (a
probability of 150, an entry with no keys) is a warning, never a reject.

Every rule has a stable id (``lorebook.entry-no-trigger``) and a path into the entity's JSON form
(``$.body.entries[3].triggers[0].text``). Nothing here compiles or runs a regex from the input.

    >>> from bunzai_codecs.lint import lint
    >>> [str(f) for f in lint(entity, bundle=decoded.by_id())]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from bunzai_codecs.core.entity import ENTITY_KINDS, KNOWLEDGE_REFS, CanonicalEntity
from bunzai_codecs.core.errors import ValidationFailed, json_path

Level = Literal["error", "warning"]

#: what an entity id may look like: ``<kind>-<letters, digits, _ or ->``. Ids become export file names
#: (``exports/<format>/<id>.<ext>``), so anything else — a ``/``, ``..``, a space — is refused.
ID_PATTERN = re.compile(r"^(?P<kind>[a-z]+)-[A-Za-z0-9_-]{1,128}$")

#: flags a JavaScript RegExp accepts (Risu ``<...>`` directives are stripped before checking)
_JS_FLAGS = frozenset("dgimsuyv")
_RISU_DIRECTIVE = re.compile(r"<[^<>]*>")


@dataclass(frozen=True, slots=True)
class Rule:
    """A lint rule: its id, its level and what it means for a user."""

    id: str
    level: Level
    description: str


@dataclass(frozen=True, slots=True)
class Finding:
    """One rule hit on one entity."""

    rule: str
    level: Level
    message: str
    #: where in the entity's JSON form (``$.body.entries[3].content``)
    path: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.message} ({self.path})"

    def to_error(self, entity: CanonicalEntity, uri: str | None = None) -> ValidationFailed:
        """The typed error a pipeline turns into a reject record."""
        return ValidationFailed(
            f"{entity.kind} {entity.id}: {self.rule}: {self.message}", uri=uri, path=self.path
        )


def _rules(level: Level, descriptions: Mapping[str, str]) -> dict[str, Rule]:
    return {rid: Rule(rid, level, text) for rid, text in descriptions.items()}


RULES: dict[str, Rule] = {
    # broken invariants: the entity is rejected
    **_rules(
        "error",
        {
            "entity.id": "the id is not `<kind>-<letters, digits, _ or ->` for the entity's kind",
            "links.self": "the entity lists itself among its linked entities",
            "links.dangling": "a linked id names no entity decoded from the same file",
            "lorebook.entry-id-duplicate": "two entries share an id (ids must be unique in a book)",
            "lorebook.category-id-duplicate": "two categories share an id",
            "regex.rule-id-duplicate": "two rules share an id (ids must be unique in a set)",
            "preset.prompt-id-duplicate": "two prompts share an id",
        },
    ),
    # usable, with a note on ``entity.warnings``
    **_rules(
        "warning",
        {
            "character.name-empty": "the character has no name",
            "persona.name-empty": "the persona has no name",
            "lorebook.no-entries": "the lorebook has no entries",
            "lorebook.category-unknown": "an entry names a category the book does not have",
            "lorebook.entry-no-trigger": (
                "an enabled entry that is neither constant nor vectorized has no trigger: it never fires"
            ),
            "lorebook.entry-empty-content": "an enabled entry inserts no text",
            "lorebook.trigger-blank": "a trigger is empty or only whitespace",
            "lorebook.probability-range": "a probability is outside 0..100",
            "lorebook.depth-negative": "a depth or scan depth is negative",
            "regex.find-empty": "an enabled rule has no pattern: it never matches",
            "regex.no-phase": "an enabled rule has no phase: it never runs",
            "regex.flags-unknown": "the flags hold characters a JavaScript RegExp refuses",
            "regex.depth-range": "minDepth is greater than maxDepth: the rule never runs",
        },
    ),
}


class _Collector:
    def __init__(self) -> None:
        self.findings: list[Finding] = []

    def add(self, rule: str, message: str, *path: str | int) -> None:
        self.findings.append(Finding(rule, RULES[rule].level, message, json_path(path)))

    def duplicate_ids(self, rule: str, what: str, field: str, items: list[Any]) -> None:
        """A ``rule`` finding for each item of ``body.<field>`` whose ``id`` an earlier item has."""
        seen: set[str] = set()
        for i, item in enumerate(items):
            if item.id in seen:
                self.add(rule, f"{what} id {item.id!r} repeats", "body", field, i, "id")
            seen.add(item.id)


def lint(entity: CanonicalEntity, bundle: Mapping[str, CanonicalEntity] | None = None) -> list[Finding]:
    """Every finding for ``entity``, errors and warnings, in rule order then position.

    ``bundle`` (id -> entity, e.g. ``decoded.by_id()``) enables the link checks: a freshly decoded
    file must resolve every link it makes.
    """
    out = _Collector()
    m = ID_PATTERN.match(entity.id)
    if m is None or m["kind"] != entity.kind:
        out.add("entity.id", f"{entity.id!r} is not a {entity.kind} id", "id")
    for i, ref in enumerate(entity.links.get(KNOWLEDGE_REFS, [])):
        if ref == entity.id:
            out.add("links.self", "links to itself", "links", KNOWLEDGE_REFS, i)
        elif bundle is not None and ref not in bundle:
            out.add(
                "links.dangling",
                f"links to {ref!r}, which this file does not hold",
                "links",
                KNOWLEDGE_REFS,
                i,
            )
    check = _BY_KIND.get(entity.kind)
    if check is not None:
        check(entity.body, out)
    return out.findings


def errors(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.level == "error"]


def warnings(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.level == "warning"]


# -- per kind ------------------------------------------------------------------------------------


def _blank(s: str | None) -> bool:
    return s is None or not s.strip()


def _out_of_range(p: Any) -> bool:
    return p is not None and not (0 <= p <= 100)


def _character(body: Any, out: _Collector) -> None:
    if _blank(body.identity.name):
        out.add("character.name-empty", "the character has no name", "body", "identity", "name")


def _persona(body: Any, out: _Collector) -> None:
    if _blank(body.name):
        out.add("persona.name-empty", "the persona has no name", "body", "name")


def _lorebook(body: Any, out: _Collector) -> None:
    if not body.entries:
        out.add("lorebook.no-entries", "the lorebook has no entries", "body", "entries")
    out.duplicate_ids("lorebook.category-id-duplicate", "category", "categories", body.categories)
    categories = {c.id for c in body.categories}
    out.duplicate_ids("lorebook.entry-id-duplicate", "entry", "entries", body.entries)
    for i, e in enumerate(body.entries):
        at = ("body", "entries", i)
        if e.categoryId is not None and e.categoryId not in categories:
            out.add(
                "lorebook.category-unknown", f"category {e.categoryId!r} does not exist", *at, "categoryId"
            )
        triggers = e.triggers or []
        if e.enabled and not e.constant and not e.vectorized and all(_blank(t.text) for t in triggers):
            out.add(
                "lorebook.entry-no-trigger", "the entry has no trigger and is not constant", *at, "triggers"
            )
        if e.enabled and _blank(e.content):
            out.add("lorebook.entry-empty-content", "the entry has no content", *at, "content")
        for field in ("triggers", "secondaryTriggers"):
            for j, t in enumerate(getattr(e, field) or []):
                if _blank(t.text):
                    out.add("lorebook.trigger-blank", "the trigger is blank", *at, field, j, "text")
                if _out_of_range(t.probability):
                    out.add(
                        "lorebook.probability-range",
                        f"probability {t.probability}",
                        *at,
                        field,
                        j,
                        "probability",
                    )
        if _out_of_range(e.probability):
            out.add("lorebook.probability-range", f"probability {e.probability}", *at, "probability")
        for field in ("depth", "scanDepth"):
            v = getattr(e, field)
            if v is not None and v < 0:
                out.add("lorebook.depth-negative", f"{field} {v}", *at, field)


def _regex(body: Any, out: _Collector) -> None:
    out.duplicate_ids("regex.rule-id-duplicate", "rule", "rules", body.rules)
    for i, r in enumerate(body.rules):
        at = ("body", "rules", i)
        if r.enabled and r.find == "":
            out.add("regex.find-empty", "the rule has no pattern", *at, "find")
        if r.enabled and not r.phases:
            out.add("regex.no-phase", "the rule has no phase", *at, "phases")
        bad = sorted(set(_RISU_DIRECTIVE.sub("", r.flags)) - _JS_FLAGS)
        if bad:
            out.add("regex.flags-unknown", f"unknown flag(s) {''.join(bad)!r}", *at, "flags")
        lo, hi = r.minDepth, r.maxDepth
        if lo is not None and hi is not None and lo >= 0 and hi >= 0 and lo > hi:
            out.add("regex.depth-range", f"minDepth {lo} > maxDepth {hi}", *at, "minDepth")


def _preset(body: Any, out: _Collector) -> None:
    out.duplicate_ids("preset.prompt-id-duplicate", "prompt", "prompts", body.prompts)


_BY_KIND: dict[str, Callable[[Any, _Collector], None]] = {
    "character": _character,
    "persona": _persona,
    "lorebook": _lorebook,
    "regex": _regex,
    "preset": _preset,
}
assert set(_BY_KIND) == set(ENTITY_KINDS)

__all__ = ["ID_PATTERN", "RULES", "Finding", "Rule", "errors", "lint", "warnings"]
