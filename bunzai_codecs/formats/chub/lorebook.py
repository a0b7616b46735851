"""``chub-lorebook``: a Chub lorebook as the Chub API serves it (``node.definition`` of
``GET /api/lorebooks/{user}/{slug}?full=true``).

The shape is a CCv3 ``character_book`` with an array of entries (docs/formats/chub.md#lorebook), plus a
book-level ``extensions.chub`` bag (``id``, ``full_path``, ``expressions``, ``alt_expressions``,
``related_lorebooks``). The field map is the shared ``character_book`` mapper
(``tavern/character_book.py``): Chub writes ST's extended entry fields in camelCase inside
``extensions`` (``excludeRecursion``, ``displayIndex``) and ``selectiveLogic``/``probability`` at the
entry's top level, which that mapper reads. Chub's own entry keys (``weight``, ``addMemo``, a
``characterFilter: null``) stay in each entry's ``extensions``; the book's ``extensions`` (the
``chub`` bag included) in ``LorebookBody.extensions``.

Detection: 1.0 for a ``character_book``-shaped object (``entries`` an array of CCv3 rows) whose
``extensions.chub`` is an object — the Chub identity that no other app writes. A bare book without
it is left to ``sillytavern-lorebook`` (0.78); this codec never claims it.

Round trip: the escrow twin is the whole file; a same-format export overlays the body's edits on it
(``merge3`` with entries paired by ``id``), so an unedited book comes back as it was, book-level
``extensions.chub`` and every unmapped entry key included. A fresh export (no twin) is the shared
``character_book`` writer's output in Chub's camelCase spelling, 2-space JSON, with the Chub identity
``extensions.chub`` as an empty object when the book has none (a book Chub never served has no id or
path yet); without it the file would be any app's bare book. An empty ``chub`` object is that mark
and nothing more: it is not read into the body, so a book gains nothing by passing through Chub.
"""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core.codec import EmitContext
from bunzai_codecs.entities import LorebookBody
from bunzai_codecs.formats._shared.tree_codec import TreeCodec
from bunzai_codecs.formats._shared.wire import MapContext, obj
from bunzai_codecs.formats.chub.detect import is_chub_book
from bunzai_codecs.formats.chub.dialect import CHUB
from bunzai_codecs.formats.tavern.character_book import (
    CHARACTER_BOOK_COVERAGE,
    ENTRY_KEY,
    Spelling,
    body_to_book,
    book_spelling,
    book_to_body,
)


def _to_body(tree: dict[str, Any], ctx: MapContext | None = None) -> dict[str, Any]:
    """``book_to_body`` without the empty identity mark a fresh export adds (see the docstring)."""
    body = book_to_body(tree, ctx)
    ext = body.get("extensions")
    if isinstance(ext, dict) and ext.get(CHUB) == {}:
        rest = {k: v for k, v in ext.items() if k != CHUB}
        body["extensions"] = rest or None
    return body


def _to_book(body: LorebookBody, spelling: Spelling) -> dict[str, Any]:
    """``body_to_book`` with the Chub identity: an empty ``extensions.chub`` when the body has none."""
    book = body_to_book(body, spelling=spelling)
    ext = book.get("extensions") or {}
    if not isinstance(ext.get(CHUB), dict):
        book["extensions"] = {**ext, CHUB: {}}
    return book


class ChubLorebook(TreeCodec):
    """Chub lorebooks (``character_book`` JSON with a book-level ``extensions.chub``)."""

    id = "chub-lorebook"
    coverage = CHARACTER_BOOK_COVERAGE

    list_key = ENTRY_KEY

    @staticmethod
    def read(tree: Any, ctx: Any) -> dict[str, Any]:
        return _to_body(obj(tree, "$", "a lorebook object"), ctx)

    @staticmethod
    def write(body: LorebookBody) -> dict[str, Any]:
        """A fresh book: Chub's camelCase spelling."""
        return _to_book(body, "camel")

    def to_native(self, body: LorebookBody, twin: dict[str, Any] | None, ctx: EmitContext) -> dict[str, Any]:
        """The twin's spelling (camelCase or snake_case keys) when there is one."""
        return self.write(body) if twin is None else _to_book(body, book_spelling(twin))


__all__ = ["ChubLorebook", "is_chub_book"]
