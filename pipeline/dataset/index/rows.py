"""The entity index's row: ``COLUMNS`` (the one definition of the table) and ``index_row``, a pure
function of an entity and its input's native round-trip status (pipeline/dataset/index/).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.media import items as media_items
from bunzai_codecs.lint import RULES
from pipeline.dataset.shards import record

#: the dataset's name: its folder in the output and its key under the manifest's ``outputs.shards``
INDEX = "index"
#: bumped when a column changes meaning or type (also in each file's schema metadata)
INDEX_VERSION = 1
#: rows per Parquet row group: a fixed count, so the files depend on the rows only
ROW_GROUP = 50_000
#: the warning a pipeline adds to an entity whose linked entity failed validation (not a lint rule)
LINKS_REJECTED = "links.rejected"
_CODE = re.compile(r"^([a-z][a-z0-9]*(?:\.[a-z0-9-]+)+): ")


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    #: ``string``, ``int32``, ``int64`` or ``list<string>``
    type: str
    nullable: bool
    description: str


COLUMNS: tuple[Column, ...] = (
    Column("id", "string", False, "The canonical entity id (`<kind>-<24 hex>`), as in the canonical line."),
    Column("kind", "string", False, "`character`, `lorebook`, `regex`, `persona` or `preset`."),
    Column(
        "name",
        "string",
        False,
        "The entity's name: a character's `identity.name`, otherwise `name`; empty when it has none.",
    ),
    Column(
        "creator",
        "string",
        True,
        "`attribution.creator` of a character, persona or preset; null when absent or the kind has none.",
    ),
    Column(
        "tags", "list<string>", False, "`discovery.tags` of a character, `tags` of a lorebook; else empty."
    ),
    Column(
        "links",
        "list<string>",
        False,
        "Ids of the entities it links to (`links.knowledgeRefs`: a card's lorebook and regex set), each "
        "a row of the index too.",
    ),
    Column("source_uri", "string", False, "Where this run read the entity (`source.uri`)."),
    Column("source_format", "string", False, "The format it was decoded from (`source.format`)."),
    Column("source_sha256", "string", False, "sha256 (hex) of the source file (`source.sha256`)."),
    Column("source_bytes", "int64", False, "Size of the source file in bytes (`source.bytes`)."),
    Column(
        "greetings",
        "int32",
        True,
        "A character's greetings: the first message (when not empty), alternate and group-only "
        "greetings; null for other kinds.",
    ),
    Column("lore_entries", "int32", True, "A lorebook's entries; null for other kinds."),
    Column("regex_rules", "int32", True, "A regex set's rules; null for other kinds."),
    Column("prompts", "int32", True, "A preset's prompts; null for other kinds."),
    Column(
        "assets",
        "int32",
        False,
        "Media items the body names: the portrait and every other asset (`media.portrait`, `media.assets`).",
    ),
    Column(
        "text_chars",
        "int64",
        False,
        "Characters (Unicode code points) of every text value in the body: names, descriptions, "
        "greetings, entries, prompts, regexes, extension data.",
    ),
    Column(
        "warnings",
        "int32",
        False,
        "Warnings the entity carries (`warnings` of the canonical line: the codec's and the lint rules').",
    ),
    Column(
        "lint_warnings",
        "int32",
        False,
        "Of those, the warnings of lint rules (and `links.rejected`: a linked entity failed validation).",
    ),
    Column(
        "lint_codes",
        "list<string>",
        False,
        "The distinct rule ids of those lint warnings, sorted (`lorebook.entry-no-trigger`, ...).",
    ),
    Column(
        "native_roundtrip",
        "string",
        True,
        "Status of the source file's same-format round trip (the fidelity `native` row): `lossless`, "
        "`expected`, `unexpected` or `error`; null with `--fidelity off` (or when the check itself "
        "crashed: a `roundtrip` reject says so).",
    ),
)

# -- the row ---------------------------------------------------------------------------------------


#: how the walk below treats a value by its exact type: ``_TEXT`` a string (its length counts),
#: ``_ITEMS`` a list or tuple, ``_VALUES`` a dict, ``_FIELDS`` a pydantic model (its ``__dict__``),
#: ``_NONE`` anything else; learnt per type the first time one is met (the checks are the type's)
_TEXT, _ITEMS, _VALUES, _FIELDS, _NONE = range(5)
_KIND: dict[type, int] = {
    str: _TEXT,
    list: _ITEMS,
    tuple: _ITEMS,
    dict: _VALUES,
    int: _NONE,
    type(None): _NONE,
}


def _kind(t: type) -> int:
    if issubclass(t, str):
        k = _TEXT
    elif issubclass(t, (list, tuple)):
        k = _ITEMS
    elif issubclass(t, dict):
        k = _VALUES
    elif hasattr(t, "__pydantic_fields__"):
        k = _FIELDS
    else:
        k = _NONE
    _KIND[t] = k
    return k


def _text_chars(value: Any) -> int:
    """Code points of every string inside a body (its fields, lists and opaque dicts' values).

    Each value's treatment is looked up by its exact type (``_KIND``), and a container's strings
    are summed as its children are scanned: a walk over a lorebook's thousands of fields and
    scalars with a ``hasattr`` each was as costly as the card's decode."""
    kinds = _KIND
    t = type(value)
    k = kinds.get(t)
    if k is None:
        k = _kind(t)
    if k == _TEXT:
        return len(value)
    total = 0
    stack = [value]
    pop, push = stack.pop, stack.append
    while stack:
        v = pop()
        t = type(v)
        k = kinds.get(t)
        if k is None:
            k = _kind(t)
        if k == _VALUES:
            kids = v.values()
        elif k == _FIELDS:
            kids = v.__dict__.values()
        elif k == _ITEMS:
            kids = v
        else:
            continue
        for c in kids:
            t = type(c)
            if t is str:
                total += len(c)
                continue
            if c is None or t is int or t is bool:
                continue
            k = kinds.get(t)
            if k is None:
                k = _kind(t)
            if k == _TEXT:
                total += len(c)
            elif k != _NONE:
                push(c)
    return total


def lint_codes(warnings: Iterable[str]) -> list[str]:
    """The lint rule id of each warning that is a lint rule's (``rule: message (path)``)."""
    out = []
    for w in warnings:
        m = _CODE.match(w)
        if m and (m.group(1) in RULES or m.group(1) == LINKS_REJECTED):
            out.append(m.group(1))
    return out


def index_row(entity: CanonicalEntity, *, native: str | None) -> dict[str, Any]:
    """The index row of an entity stamped by this run (its ``source`` set), given the status of its
    input's native round trip (None: not checked)."""
    src = entity.source
    if src is None:
        raise ValueError(f"{entity.kind} {entity.id} has no source: only stamped entities are indexed")
    body: Any = entity.body
    kind = entity.kind
    identity = getattr(body, "identity", None)
    name = identity.name if identity is not None else getattr(body, "name", "")
    attribution = getattr(body, "attribution", None)
    creator = getattr(attribution, "creator", None) if attribution is not None else None
    discovery = getattr(body, "discovery", None)
    tags = (discovery.tags if discovery is not None else getattr(body, "tags", None)) or []
    greetings = None
    if kind == "character":
        g = body.greetings
        greetings = (
            (1 if g.firstMessage else 0) + len(g.alternateGreetings or ()) + len(g.groupOnlyGreetings or ())
        )
    codes = lint_codes(entity.warnings)
    return {
        "id": entity.id,
        "kind": kind,
        "name": name or "",
        "creator": creator if isinstance(creator, str) else None,
        "tags": [str(t) for t in tags],
        "links": list(entity.knowledge_refs),
        "source_uri": src.uri,
        "source_format": src.format,
        "source_sha256": src.sha256,
        "source_bytes": src.bytes,
        "greetings": greetings,
        "lore_entries": len(body.entries) if kind == "lorebook" else None,
        "regex_rules": len(body.rules) if kind == "regex" else None,
        "prompts": len(body.prompts) if kind == "preset" else None,
        "assets": sum(1 for _ in media_items(body)),
        "text_chars": _text_chars(body),
        "warnings": len(entity.warnings),
        "lint_warnings": len(codes),
        "lint_codes": sorted(set(codes)),
        "native_roundtrip": native,
    }


def row_record(row: dict[str, Any]) -> bytes:
    """The sortable shard record of a row (pipeline/dataset/shards.py): placed and ordered by its entity id,
    then its source (identical files give entities with one id)."""
    return record(row["id"], [row["id"], row["source_uri"]], orjson.dumps(row))


def index_rows(entities: Iterable[CanonicalEntity], native: str | None) -> Iterator[dict[str, Any]]:
    for e in entities:
        yield index_row(e, native=native)


def unchecked_rows(valid: Any) -> Iterator[dict[str, Any]]:
    """The rows of a ``ValidInput``'s entities when no round trip is made (``--fidelity off``);
    with one, ``RoundTrip`` makes them (it knows the native status)."""
    return index_rows((ve.entity for ve in valid.accepted), None)


__all__ = [
    "COLUMNS",
    "INDEX",
    "INDEX_VERSION",
    "ROW_GROUP",
    "Column",
    "index_row",
    "index_rows",
    "lint_codes",
    "row_record",
    "unchecked_rows",
]
