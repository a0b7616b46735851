"""novelai-story: a NovelAI story file (``.story``) read as a lorebook. Read-only.

A ``.story`` is NovelAI's story container as JSON (docs/formats/novelai.md#novelai-stories):
``{storyContainerVersion, metadata: {title, description, tags, ...}, content: {storyContentVersion,
settings, story | document, context[], lorebook, storyContextConfig, ephemeralContext[],
contextDefaults, ...}}``. The story text is ``content.story`` (version 1 and 2: text, fragments and
datablocks) or ``content.document`` (newer: base64 of msgpack, which bunzai never decodes): it
stays in the escrow twin, whole, and is never a field of the canonical body.

Canonical (a lorebook): ``metadata.title`` the book's name, ``description``, ``tags``; then the
entries, in this order: the memory (``context[0]``) and the author's note (``context[1]``) as the
two constant note entries of ``formats/_shared/story_notes.py``, any further context entry as
constant ``context-N``, the lorebook's entries and categories as ``novelai-lorebook`` reads them,
and each ephemeral context entry as constant ``ephemeral-N`` (its step schedule stays in escrow).

The format is **read-only**: bunzai writes a ``.story`` back only for an entity read from one (the
story is the file's own; a lorebook converted from another app has none to write, and NovelAI's
``.lorebook`` is the format for that). A same-format export of an unedited story gives its bytes
back; an edited one is the same story with the edits (entry texts, the lorebook, title,
description, tags) and every other key kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from bunzai_codecs.core.codec import Codec, Container, Coverage, EmitContext, body_as
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.errors import Malformed, Unsupported
from bunzai_codecs.core.escrow import Twin, facet
from bunzai_codecs.core.overlay import merge3, unedited
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.lorebook import LorebookBody, LoreEntry
from bunzai_codecs.formats._shared import json_style, story_notes
from bunzai_codecs.formats._shared.story_notes import AUTHORS_NOTE, MEMORY
from bunzai_codecs.formats._shared.wire import MapContext
from bunzai_codecs.formats.novelai.detect import is_book, is_story
from bunzai_codecs.formats.novelai.lorebook import BOOK_PATHS, body_from_book, fresh_book, merged_book

#: NovelAI's own export: ``JSON.stringify(container)``
FRESH_STYLE = "js"
#: the list key a mapped ephemeral entry carries through the overlay (never written)
_MARK = "\0bunzai-entry-id"


def context_id(i: int) -> str:
    """The entry id of ``content.context[i]``."""
    return MEMORY if i == 0 else AUTHORS_NOTE if i == 1 else f"context-{i}"


def ephemeral_id(j: int) -> str:
    return f"ephemeral-{j}"


def _context_entry(i: int, text: str) -> dict[str, Any]:
    if i == 0:
        return story_notes.memory_entry(text)
    if i == 1:
        return story_notes.note_entry(text)
    return {"id": context_id(i), "title": f"Context {i + 1}", "content": text, "constant": True}


def _texts(v: Any, r: MapContext, key: str) -> list[str]:
    """The ``text`` of each entry of ``content.<key>`` (an array of ``{text, contextConfig...}``)."""
    rows = [] if v is None else r.arr(v, (key,))
    out = []
    for i, row in enumerate(rows):
        row = r.obj(row, (key, i))
        out.append(r.text(row.get("text"), (key, i, "text"), "") or "")
    return out


def _special_ids(content: dict[str, Any]) -> set[str]:
    """The entry ids a story's context and ephemeral entries take (a lore entry gives way)."""
    ctx, eph = content.get("context"), content.get("ephemeralContext")
    n, m = len(ctx) if isinstance(ctx, list) else 0, len(eph) if isinstance(eph, list) else 0
    return {MEMORY, AUTHORS_NOTE} | {context_id(i) for i in range(n)} | {ephemeral_id(j) for j in range(m)}


def story_to_body(tree: Any, r: MapContext) -> dict[str, Any]:
    """A story container as a canonical ``LorebookBody`` dict (see the module docstring)."""
    top = r.obj(tree, (), "a NovelAI story object")
    if not is_story(top):
        bad = (
            "content"
            if isinstance(top.get("storyContainerVersion"), int | float)
            else "storyContainerVersion"
        )
        raise Malformed(f"not a NovelAI story (no {bad})", path=f"$.{bad}")
    meta = top.get("metadata")
    meta = {} if meta is None else r.obj(meta, ("metadata",))
    content = top["content"]
    cr = r.child("content")
    body: dict[str, Any] = {"name": r.text(meta.get("title"), ("metadata", "title"), "") or ""}
    description = r.text(meta.get("description"), ("metadata", "description"))
    if description:
        body["description"] = description
    tags = meta.get("tags")
    if tags is not None and r.str_list(tags, ("metadata", "tags")):
        body["tags"] = r.str_list(tags, ("metadata", "tags"))
    entries = [_context_entry(i, t) for i, t in enumerate(_texts(content.get("context"), cr, "context")) if t]
    book = content.get("lorebook")
    if book is not None:
        if not isinstance(book, dict) or not is_book(book):
            raise Malformed("the story's lorebook is not a NovelAI lorebook", path="$.content.lorebook")
        lore = body_from_book(book, cr.child("lorebook"))
        taken = _special_ids(content)
        for e in lore["entries"]:
            base, n = e["id"], 2
            while e["id"] in taken:
                e["id"], n = f"{base}-{n}", n + 1
            taken.add(e["id"])
        entries += lore["entries"]
        body["categories"] = lore["categories"]
    for j, text in enumerate(_texts(content.get("ephemeralContext"), cr, "ephemeralContext")):
        entries.append(
            {"id": ephemeral_id(j), "title": f"Ephemeral {j + 1}", "content": text, "constant": True}
        )
    body["entries"] = entries
    return body


# -- canonical -> native (over the twin) ---------------------------------------------------------


def _parts(
    body: LorebookBody, content: dict[str, Any]
) -> tuple[dict[str, str], list[LoreEntry], LorebookBody]:
    """``body`` split as the story holds it: context texts by id, ephemeral entries, the lorebook."""
    special = _special_ids(content)
    context: dict[str, str] = {}
    ephemeral: list[LoreEntry] = []
    lore: list[LoreEntry] = []
    for e in body.entries:
        if e.id in (MEMORY, AUTHORS_NOTE):
            if story_notes.is_note(e, e.id):
                context.setdefault(e.id, e.content)
                continue
        elif e.id in special and e.id.startswith("context-"):
            context.setdefault(e.id, e.content)
            continue
        elif e.id in special:
            ephemeral.append(e)
            continue
        lore.append(e)
    book = LorebookBody(categories=body.categories, entries=lore)
    return context, ephemeral, book


def _mapped(body: LorebookBody, content: dict[str, Any]) -> dict[str, Any]:
    """The parts of a story, lorebook aside, the canonical body decides (the overlay's sides)."""
    context, ephemeral, _ = _parts(body, content)
    rows = content.get("context")
    n = len(rows) if isinstance(rows, list) else 0
    missing = [k for k in context if k not in {context_id(i) for i in range(n)} and context[k]]
    if missing:
        raise Unsupported(
            f"this story has no {missing[0]} (content.context has {n} entries): NovelAI's slot for it"
            " is not in the file, and bunzai does not make one"
        )
    return {
        "metadata": {"title": body.name, "description": body.description or "", "tags": body.tags or []},
        "content": {
            "context": [{"text": context.get(context_id(i), "")} for i in range(n)],
            "ephemeralContext": [{_MARK: e.id, "text": e.content} for e in ephemeral],
        },
    }


def _eph_key(item: Any) -> Any:
    return item.get(_MARK) if isinstance(item, dict) else None


def _with_content(tree: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """``tree`` (not mutated) with ``content.<key>`` set to ``value`` (appended when absent)."""
    content = dict(tree["content"])
    content[key] = value
    return {**tree, "content": content}


def story_over_twin(raw: dict[str, Any], body: LorebookBody, seed: str) -> dict[str, Any]:
    """Story ``raw`` with the edits ``body`` makes to what it decoded to (see the module docstring)."""
    content = raw["content"]
    base = LorebookBody.model_validate(story_to_body(raw, MapContext()))
    merged = merge3(raw, _mapped(base, content), _mapped(body, content), list_key=_eph_key)
    _, _, book = _parts(body, content)
    raw_book = content.get("lorebook")
    if isinstance(raw_book, dict) and is_book(raw_book):
        new_book = merged_book(raw_book, book, seed)
        if new_book is not raw_book:
            merged = _with_content(merged, "lorebook", new_book)
    elif book.entries or book.categories:
        merged = _with_content(merged, "lorebook", fresh_book(book, seed))
    return cast(dict[str, Any], merged)


@dataclass(eq=False)
class StoryTwin(Twin):
    """A ``.story``'s escrow: the whole container (``raw``) and its JSON layout (``style``,
    ``formats/_shared/json_style.py``)."""

    style: str | None = facet(str, wire="jsonStyle")


class NovelAIStoryCodec(Codec):
    id = "novelai-story"
    twin_type = StoryTwin
    containers = (Container("story", (".story",), "json"),)
    coverage = Coverage.of(
        "name",
        "description",
        "tags",
        *BOOK_PATHS,
        notes=[
            "read-only: written back only for a story read from a .story file (the story text is the"
            " file's); a lorebook from anywhere else is written as `novelai-lorebook`",
            "the story text (`content.story` or the msgpack `content.document`), settings, context"
            " settings, phrase bias and banned sequences ride in escrow; the text is never a field",
            "memory (`context[0]`) and author's note (`context[1]`) are the constant entries `memory` and"
            " `authors-note`; ephemeral entries are constant entries `ephemeral-N`, their step schedule"
            " (startingStep, delay, duration, repeat, reverse) in escrow",
            "lorebook entries as `novelai-lorebook` reads them (budgetPriority is sortOrder; searchRange"
            " and the rest of contextConfig in escrow)",
        ],
    )

    def decode(self, s: Sniff) -> Decoded:
        tree = s.require_json()
        r = MapContext("$")
        body = story_to_body(tree, r)
        e = self.entity(s, body, raw=tree, style=json_style.detect(s.data, tree))
        e.warnings.extend(r.warnings)
        return Decoded([e])

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        # read-only: the encode guard let only an entity with this format's twin in
        body = body_as(entity, LorebookBody)
        twin = entity.twin(self.id)
        assert twin is not None
        raw = twin.raw
        if not is_story(raw):
            raise Malformed("the escrow twin is not a NovelAI story", path="$")
        mapped = story_to_body(raw, MapContext())
        out = raw if unedited(body, mapped) else story_over_twin(raw, body, entity.id)
        style = (twin.style if isinstance(twin, StoryTwin) else None) or FRESH_STYLE
        return json_style.dumps(out, style)


__all__ = ["NovelAIStoryCodec", "StoryTwin", "story_to_body"]
