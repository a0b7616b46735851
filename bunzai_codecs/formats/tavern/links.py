"""Re-embedding linked entities: the one rule every Tavern-lineage file applies on export.

A card (or a preset, a Marinara envelope, a settings file) decodes the lorebook and the regex scripts
it carries into their own entities, linked by ``links.knowledgeRefs`` (see docs/architecture.md,
"Bundles"). On export, for each kind it can embed, the codec asks ``ctx.refs(entity, kind)``:

- linked entities of that kind that the context resolves: embed them (through their own twin under
  the codec's id when they have one: :func:`linked_book`, :func:`linked_scripts`) and call
  ``ctx.embed`` for each; several regex sets are written as one script list;
- none: ``_shared/links.py::keep_or_drop`` (the rule every bundle format shares) says whether the
  twin's embedded copy stays (``KEEP``) or goes (``DROP``); an empty script list is not a set and
  stays as it is.

:func:`relink` applies the result to a card tree's ``data`` object wherever the format keeps it
(``data`` of a V2/V3 card, the top of a flat one, ``data.data`` of a Marinara envelope), copying only
the dicts on the way: the twin's tree is never mutated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from bunzai_codecs.core.codec import EmitContext
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.entities import RegexSetBody
from bunzai_codecs.formats._shared.links import DROP, KEEP, keep_or_drop
from bunzai_codecs.formats.tavern.character_book import embed_book
from bunzai_codecs.formats.tavern.st_regex import body_to_scripts, embed_scripts

BOOK_KEY = "character_book"
SCRIPTS_KEY = "regex_scripts"


#: "absent" in a twin lookup (distinct from a present null)
_ABSENT: Final[Any] = object()


def linked_book(codec_id: str, entity: CanonicalEntity, ctx: EmitContext, old: Any) -> Any:
    """The ``character_book`` to embed: the first linked lorebook (through its twin under
    ``codec_id`` when it has one), else :data:`KEEP` or :data:`DROP` the twin's copy ``old``."""
    books = ctx.refs(entity, "lorebook")
    if books:
        ctx.embed(books[0])
        return embed_book(books[0], codec_id)
    return keep_or_drop(entity, ctx, "lorebook", old)


def linked_scripts(
    codec_id: str,
    entity: CanonicalEntity,
    ctx: EmitContext,
    old: Any,
    sets: Sequence[CanonicalEntity] | None = None,
    embed: Callable[[CanonicalEntity, str], Any] = embed_scripts,
) -> Any:
    """The ``regex_scripts`` to embed: the linked regex sets (``sets``, default every resolved
    regex link) as one list, a lone set through its twin under ``codec_id`` (``embed``: as ST
    scripts unless the file holds another app's rows); else :data:`KEEP` or :data:`DROP` the twin's
    list ``old`` (an empty list is kept: it is not a set)."""
    if sets is None:
        sets = ctx.refs(entity, "regex")
    if sets:
        for r in sets:
            ctx.embed(r)
        if len(sets) == 1:
            return embed(sets[0], codec_id)
        out: list[Any] = []
        for r in sets:
            assert isinstance(r.body, RegexSetBody)
            out.extend(body_to_scripts(r.body))
        return out
    if isinstance(old, list) and not old:
        return KEEP  # an empty list is not an embedded set
    return keep_or_drop(entity, ctx, "regex", old)


def fresh_links(
    codec_id: str, entity: CanonicalEntity, ctx: EmitContext, sets: Sequence[CanonicalEntity] | None = None
) -> tuple[Any, Any]:
    """``(book, scripts)`` for a fresh card: what the links call for, ``None`` where nothing is."""
    book = linked_book(codec_id, entity, ctx, None)
    scripts = linked_scripts(codec_id, entity, ctx, None, sets)
    return (None if book is KEEP or book is DROP else book), (
        None if scripts is KEEP or scripts is DROP else scripts
    )


def relink(
    codec_id: str,
    entity: CanonicalEntity,
    ctx: EmitContext,
    tree: Any,
    at: tuple[str, ...],
    sets: Sequence[CanonicalEntity] | None = None,
) -> Any:
    """``tree`` with the book and scripts the links call for set or dropped in its card ``data``
    object at key path ``at``; ``tree`` itself when nothing changes (or it has no such object)."""
    data = _dig(tree, at)
    if not isinstance(data, dict):
        return tree
    old_book = data.get(BOOK_KEY, _ABSENT)
    book = linked_book(codec_id, entity, ctx, None if old_book is _ABSENT else old_book)
    ext = data.get("extensions")
    old_scripts = ext.get(SCRIPTS_KEY, _ABSENT) if isinstance(ext, dict) else _ABSENT
    scripts = linked_scripts(codec_id, entity, ctx, None if old_scripts is _ABSENT else old_scripts, sets)
    return apply_links(tree, at, book, scripts)


def apply_links(tree: Any, at: tuple[str, ...], book: Any, scripts: Any) -> Any:
    """Set or drop (:data:`DROP`) or leave (:data:`KEEP`) the embedded book and scripts of the card
    ``data`` object at key path ``at`` of ``tree``, copying only the dicts on the way."""
    data = _dig(tree, at)
    if not isinstance(data, dict):
        return tree
    raw_ext = data.get("extensions")
    ext: dict[str, Any] = raw_ext if isinstance(raw_ext, dict) else {}
    book_changed = book is DROP and BOOK_KEY in data
    if book is not KEEP and book is not DROP:
        old = data.get(BOOK_KEY, _ABSENT)
        book_changed = book is not old and book != old
    scripts_changed = scripts is DROP and SCRIPTS_KEY in ext
    if scripts is not KEEP and scripts is not DROP:
        old_s = ext.get(SCRIPTS_KEY, _ABSENT)
        scripts_changed = scripts is not old_s and scripts != old_s
    if not book_changed and not scripts_changed:
        return tree
    data = dict(data)
    if book_changed:
        if book is DROP:
            del data[BOOK_KEY]
        else:
            data[BOOK_KEY] = book
    if scripts_changed:
        ext = dict(ext)
        if scripts is DROP:
            ext.pop(SCRIPTS_KEY, None)
        else:
            ext[SCRIPTS_KEY] = scripts
        data["extensions"] = ext
    return _replace(tree, at, data)


def embedded_links(tree: Any, at: tuple[str, ...]) -> tuple[Any, Any]:
    """``(book, scripts)`` a card tree embeds at ``at``, :data:`DROP` for one it does not hold: what
    :func:`apply_links` needs to give another tree the same links."""
    data = _dig(tree, at)
    data = data if isinstance(data, dict) else {}
    ext = data.get("extensions")
    scripts = ext.get(SCRIPTS_KEY, DROP) if isinstance(ext, dict) else DROP
    return data.get(BOOK_KEY, DROP), scripts


def _dig(tree: Any, at: tuple[str, ...]) -> Any:
    for k in at:
        if not isinstance(tree, dict):
            return None
        tree = tree.get(k)
    return tree


def _replace(tree: dict[str, Any], at: tuple[str, ...], value: dict[str, Any]) -> dict[str, Any]:
    if not at:
        return value
    out = dict(tree)
    out[at[0]] = _replace(tree[at[0]], at[1:], value)
    return out


__all__ = [
    "apply_links",
    "embedded_links",
    "fresh_links",
    "linked_book",
    "linked_scripts",
    "relink",
]
