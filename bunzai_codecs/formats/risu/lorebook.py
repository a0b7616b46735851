"""``risu-lorebook``: RisuAI's lorebook export ``{"type":"risu","ver":1,"data":[rows]}``.

Detection: 1.0 for the native envelope (``type == "risu"`` with a ``data`` list); 0.85 for a bare JSON
array of lore rows (other tools write the envelope's ``data`` alone: every row has a string ``key``
and ``content`` and one of ``mode``/``insertorder``/``alwaysActive``/``secondkey``, and none of another
app's row keys), written back as a bare array; 0.75 for a bare CCv3 ``character_book`` object
(``entries`` an array: a card-extracted or Chub book, which Risu's lorebook import also takes), below
the SillyTavern lorebook codec's claim on the same shape. Rows
map through lore.py (folders -> categories, ids stable under repeats, decorators left in
``content``); a ``character_book`` maps through the shared ``tavern/character_book.py`` and is
written back in its own shape.

Encode: Risu writes the envelope as compact JSON. The rows come from the best twin there is: this
codec's own envelope, else the rows of a module (``risu-module``; ``risu-regex`` in 0.1.0) or a
``.charx`` (``risu``) the lorebook was decoded from, each overlaid with the body (lore.merge_rows); a
lorebook from another app is written fresh. The export carries no book settings: Risu keeps those on the character.
"""

from __future__ import annotations

from typing import Any

import orjson

from bunzai_codecs.core import basecache, seal
from bunzai_codecs.core.codec import Codec, Coverage, EmitContext, Reshape, body_as
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.core.overlay import merge3
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.lorebook import LorebookBody
from bunzai_codecs.formats._shared.wire import MapContext
from bunzai_codecs.formats.risu import lore
from bunzai_codecs.formats.risu.detect import lore_envelope_rows as envelope_rows
from bunzai_codecs.formats.tavern import character_book as cbook

#: codecs whose twin of a lorebook entity is a bare Risu row list
ROW_TWINS = ("risu-module", "risu-regex", "risu")


def _a_key_holds_a_comma(triggers: Any) -> bool:
    """A key Risu's comma-joined string cannot keep: one holding a comma, one with spaces around it
    (Risu trims each key) or a blank one (dropped)."""
    return isinstance(triggers, list) and any(
        isinstance(t, dict) and ("," in (k := str(t.get("text", ""))) or k != k.strip() or not k)
        for t in triggers
    )


_COMMA = (
    "Risu keeps a row's keys as one comma-joined string and splits it on every comma (it has no "
    "escape: its own reader splits them too), so a key holding a comma comes back as two; each key "
    "is trimmed and a blank one dropped"
)

LORE_COVERAGE = Coverage.of(
    "categories[].name",
    "categories[].sortOrder",
    "entries[].id",
    "entries[].title",
    "entries[].content",
    "entries[].constant",
    "entries[].triggers[].text",
    "entries[].triggers[].flags",
    "entries[].secondaryTriggers[].text",
    "entries[].secondaryTriggers[].flags",
    "entries[].selective",
    "entries[].sortOrder",
    "entries[].probability",
    "entries[].caseSensitive",
    "entries[].extensions",
    notes=[
        "no book settings: scan depth, token budget and recursion live on the Risu character",
        "no per-entry enabled flag, position, depth, role or timing: Risu expresses those as "
        "@@decorators inside content, which are kept verbatim and not parsed",
        "useRegex is per row: a row mixing regex and plain keys becomes all-regex, so a trigger's "
        "isRegex is kept only when every key of the entry agrees",
        "keys are one comma-separated string: a key that itself contains a comma comes back as two",
        "no per-key probability: activationPercent is the entry's probability, read back on each "
        "primary key (secondary keys get none)",
        "a folder's id is its key, `\\uF000folder:<uuid>`: a category id of another app is written with "
        "that prefix (entries keep their folder; ids read back prefixed)",
    ],
    reshapes=[
        Reshape("entries[].triggers", _a_key_holds_a_comma, _COMMA),
        Reshape("entries[].secondaryTriggers", _a_key_holds_a_comma, _COMMA),
    ],
)


def lore_rows_for(entity: CanonicalEntity, body: LorebookBody) -> tuple[list[Any], Any]:
    """(rows, the envelope or bare row array they came from, or None) for a lorebook entity,
    overlaid with ``body``."""
    own = entity.twin(RisuLorebookCodec.id)
    raw = own.raw if own else None
    rows = raw if isinstance(raw, list) else envelope_rows(raw)
    if rows is not None:
        if body is entity.body and seal.holds(body, lore.ROWS_TAG, raw):
            # unedited since decode: merge_rows gives the twin's rows themselves
            if basecache.CHECK and lore.merge_rows(rows, body) is not rows:
                raise basecache.RuleBroken("risu-lorebook: an unedited body's rows are not its twin's")
            return rows, raw
        return lore.merge_rows(rows, body), raw
    return lore.rows_for(entity, body, ROW_TWINS), None


class RisuLorebookCodec(Codec):
    id = "risu-lorebook"
    coverage = LORE_COVERAGE

    def decode(self, s: Sniff) -> Decoded:
        tree = s.require_json()
        rows = tree if isinstance(tree, list) else envelope_rows(tree)
        at = "$" if isinstance(tree, list) else "$.data"
        if rows is None:
            if isinstance(tree, dict) and cbook.is_character_book(tree):
                ctx = MapContext("$")
                return Decoded(
                    [self.entity(s, cbook.book_to_body(tree, ctx), raw=tree, warnings=ctx.warnings)]
                )
            raise Malformed('a Risu lorebook export is {"type":"risu","data":[...]}', path="$.data")
        notes: list[str] = []
        body = lore.rows_to_body(rows, at=at, warnings=notes)
        e = self.entity(s, body, raw=tree, warnings=notes, mark=lore.ROWS_TAG)
        if not seal.holds(e.body, lore.ROWS_TAG, tree):
            basecache.remember(lore.ROWS_TAG, rows, body, input_bytes=s.size)  # for merge_rows
        return Decoded([e])

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        body = body_as(entity, LorebookBody)
        own = entity.twin(self.id)
        raw_book = own.raw if own else None
        if (
            isinstance(raw_book, dict)
            and envelope_rows(raw_book) is None
            and cbook.is_character_book(raw_book)
        ):
            # a character_book came in: it goes out in its own shape, overlaid with the body
            spelling = cbook.book_spelling(raw_book)
            base = LorebookBody.model_validate(cbook.book_to_body(raw_book, MapContext("$")))
            tree = merge3(
                raw_book,
                cbook.body_to_book(base, spelling=spelling),
                cbook.body_to_book(body, spelling=spelling),
                list_key=cbook.ENTRY_KEY,
            )
            return orjson.dumps(tree)
        rows, raw = lore_rows_for(entity, body)
        if isinstance(raw, list):  # a bare row array came in: a bare row array goes out
            return orjson.dumps(rows)
        if raw is not None:
            tree = raw if rows is raw["data"] else {**raw, "data": rows}
        else:
            tree = {"type": "risu", "ver": 1, "data": rows}
        return orjson.dumps(tree)
