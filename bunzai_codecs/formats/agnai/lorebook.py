"""``agnai-lorebook``: Agnai's memory book file (``book-<id4>-<name>.json``), a lorebook.

Detection (seed): 1.0 for the ``kind: "memory"`` marker; 0.9 for a kind-less book whose first entry
still has the native ``entry`` + ``keywords`` shape; 0.7 for a standalone CCv3/Chub
``character_book`` (entries with ``keys``/``content``), read through the shared CCv3 book mapper and
re-exported as a real MemoryBook; 0 otherwise (a SillyTavern world has keyed ``entries``, a Risu file none).

The field map and the per-entry overlay live in ``memory.py``, shared with the ``characterBook`` of
a native Agnai character.
"""

from __future__ import annotations

from typing import Any

import orjson

from bunzai_codecs.core.codec import Codec, Coverage, EmitContext
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.lorebook import LorebookBody
from bunzai_codecs.formats._shared.wire import MapContext
from bunzai_codecs.formats.agnai import memory
from bunzai_codecs.formats.agnai.detect import is_ccv3_book, is_native_book
from bunzai_codecs.formats.agnai.mapping import wrong_at
from bunzai_codecs.formats.tavern.character_book import BASIC_ENTRY_PATHS, book_to_body

#: JSON.stringify(book, null, 2), as Agnai's export button writes
JSON_OPTIONS = orjson.OPT_INDENT_2

#: the twin of a book read from the CCv3 shape: export writes a MemoryBook, not that tree
CCV3_SHAPE = "character_book"

LOREBOOK_COVERAGE = Coverage.of(
    "name",
    "description",
    "globalScanDepth",
    "tokenBudget",
    "globalRecursion",
    "extensions",
    "entries[].id",
    "entries[].comment",
    *BASIC_ENTRY_PATHS,
    "entries[].secondaryTriggers[].text",
    "entries[].selective",
    "entries[].sortOrder",
    "entries[].priority",
    "entries[].probability",
    "entries[].excludeRecursion",
    notes=[
        "keys are plain words: a regex trigger is written as its text (isRegex, flags and per-key "
        "probability are lost)",
        "position is before_char/after_char: world stays, character and every finer SillyTavern "
        "position are written as after_char; the twin keeps a numeric ST position",
        "selectiveLogic is SillyTavern-import residue: written only for an entry whose twin row had "
        "it, never on a fresh export",
        "no per-entry depth, role, scan depth, case or whole-word flags, timers, groups, filters or "
        "categories; the book type is always read as other",
        "a book read from the CCv3 character_book shape (score 0.7) is written back as a MemoryBook",
    ],
)


class AgnaiLorebookCodec(Codec):
    id = "agnai-lorebook"
    coverage = LOREBOOK_COVERAGE

    def decode(self, s: Sniff) -> Decoded:
        tree = s.require_json()
        if not isinstance(tree, dict):
            raise wrong_at((), "an object", tree)
        if tree.get("kind") != memory.MEMORY and not is_native_book(tree) and is_ccv3_book(tree):
            # the seed's soft-import path: the shared CCv3 book mapper, so the book canonicalises as
            # it does in a Tavern card; the twin is marked so export writes a real MemoryBook
            ctx = MapContext("$")
            body = book_to_body(tree, ctx)
            return Decoded([self.entity(s, body, raw=tree, shape=CCV3_SHAPE, warnings=ctx.warnings)])
        ctx = MapContext("$")
        body = memory.book_to_canonical(tree, ctx)
        return Decoded([self.entity(s, body, raw=tree, warnings=ctx.warnings)])

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        assert isinstance(entity.body, LorebookBody)
        return orjson.dumps(memory.write_book(entity.body, self.twin_of(entity)), option=JSON_OPTIONS)

    def twin_of(self, entity: CanonicalEntity) -> dict[str, Any] | None:
        """This book's own MemoryBook twin; else the ``characterBook`` it was embedded as (without
        the server's ``_id``/``userId``); else none."""
        own = entity.twin(self.id)
        if own is not None:
            if own.shape == CCV3_SHAPE:
                return None
            return memory.check_twin(own.raw)
        embedded = entity.twin("agnai")
        if embedded is not None:
            return memory.check_twin(memory.standalone_twin(embedded.raw))
        return None
