"""Regex scripts carried inside another SillyTavern file, as a linked regex-set entity.

A chat-completion preset carries preset-scoped scripts in ``extensions.regex_scripts``; the whole
``settings.json`` carries the global ones in ``extension_settings.regex``. A non-empty list decodes
into its own regex-set entity (``tavern/st_regex.py``), linked from the file's primary entity by
``knowledgeRefs``, whose escrow twin — the native script list — is stored under the parent codec's
id. On export the list is re-embedded by the rule a card re-embeds its scripts by
(``tavern/links.py``): through that twin when present (every unmapped script key survives), freshly
otherwise; a link list without a regex set drops the stale scripts; a link that does not resolve
keeps the twin's scripts; an empty list is not a set and stays as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bunzai_codecs.core.codec import Codec, EmitContext, body_as
from bunzai_codecs.core.entity import KNOWLEDGE_REFS, CanonicalEntity
from bunzai_codecs.core.overlay import ListKey, merge3
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import PresetBody
from bunzai_codecs.formats._shared.links import DROP, KEEP
from bunzai_codecs.formats._shared.wire import MapContext, join_path
from bunzai_codecs.formats.tavern.links import linked_scripts
from bunzai_codecs.formats.tavern.st_regex import scripts_to_body

#: the escrow part name of a linked script list (its entity id is derived from it)
PART = ("regex", "regex_scripts")


def decode_scripts(
    codec: Codec, s: Sniff, scripts: list[Any], where: tuple[str, ...], name: str
) -> CanonicalEntity | None:
    """The regex-set entity for the script list found at ``where`` in ``s``'s tree, named
    ``name``; ``None`` for an empty list (nothing to link)."""
    if not scripts:
        return None
    ctx = MapContext(join_path("$", *where))
    body = scripts_to_body(scripts, name=name, ctx=ctx)
    e = codec.entity(s, body, raw=scripts, part=PART, kind="regex")
    e.warnings.extend(ctx.warnings)
    return e


def embedded_scripts(
    codec: Codec, entity: CanonicalEntity, ctx: EmitContext, raw_scripts: list[Any] | None
) -> tuple[list[Any] | None, list[Any] | None]:
    """``(base, fresh)`` script lists for the parent's three-way merge: ``base`` is the twin's list
    (``None`` when it had none), ``fresh`` the list the entity's links call for now (``None``: no
    scripts). Linked sets are marked embedded in ``ctx``."""
    fresh = linked_scripts(codec.id, entity, ctx, raw_scripts)
    if fresh is KEEP:
        return raw_scripts, raw_scripts  # nothing embedded, an empty list (not a set), or kept
    if fresh is DROP:
        return raw_scripts, None  # the links say the scripts were removed
    return raw_scripts, fresh


#: where a preset keeps its scripts
PRESET_SCRIPTS = ("extensions", "regex_scripts")


def preset_scripts(tree: Any, r: MapContext) -> list[Any] | None:
    """``extensions.regex_scripts`` of a preset tree, or None when it has none."""
    if not isinstance(tree, dict):
        return None
    ext = tree.get("extensions")
    if not isinstance(ext, dict) or ext.get("regex_scripts") is None:
        return None
    return r.arr(ext["regex_scripts"], PRESET_SCRIPTS)


def link_scripts(
    codec: Codec, s: Sniff, parent: CanonicalEntity, scripts: list[Any] | None, name: str
) -> CanonicalEntity | None:
    """Decode a preset's ``extensions.regex_scripts`` (``None``: it has none) into a regex-set
    entity linked from ``parent``, which takes its warnings too; ``None`` when there is no set."""
    linked = decode_scripts(codec, s, scripts, PRESET_SCRIPTS, name) if scripts is not None else None
    if linked is not None:
        parent.links[KNOWLEDGE_REFS] = [linked.id]
        parent.warnings.extend(linked.warnings)
    return linked


def overlay_scripts(
    codec: Codec,
    entity: CanonicalEntity,
    ctx: EmitContext,
    raw_scripts: list[Any] | None,
    base: dict[str, Any],
    fresh: dict[str, Any],
) -> None:
    """Give a preset's ``base`` and ``fresh`` trees (of a three-way merge with its twin) the
    ``extensions.regex_scripts`` the twin had and the links call for now."""
    b, f = embedded_scripts(codec, entity, ctx, raw_scripts)
    if b is not None or f is not None:
        base["extensions"] = {} if b is None else {"regex_scripts": b}
        fresh["extensions"] = {} if f is None else {"regex_scripts": f}


def preset_tree(
    codec: Codec,
    entity: CanonicalEntity,
    ctx: EmitContext,
    raw: dict[str, Any] | None,
    name: str,
    to_body: Callable[[dict[str, Any], str, MapContext], tuple[dict[str, Any], Any]],
    to_native: Callable[[PresetBody, Any], dict[str, Any]],
    list_key: ListKey,
) -> dict[str, Any]:
    """The tree of a preset that carries ``extensions.regex_scripts``: its twin ``raw`` (named
    ``name``; ``to_body(raw, name, reader)`` reads it back as a body and a layout) with the body's
    edits and the scripts the links call for merged in, or without a twin a fresh
    ``to_native(body, None)`` with the linked scripts."""
    body = body_as(entity, PresetBody)
    if raw is None:
        out = to_native(body, None)
        fresh_scripts(codec, entity, ctx, out)
        return out
    r = MapContext(lenient=True)
    old, layout = to_body(raw, name, r)
    base = to_native(PresetBody.model_validate(old), layout)
    fresh = to_native(body, layout)
    overlay_scripts(codec, entity, ctx, preset_scripts(raw, r), base, fresh)
    merged: dict[str, Any] = merge3(raw, base, fresh, list_key=list_key)
    return merged


def fresh_scripts(codec: Codec, entity: CanonicalEntity, ctx: EmitContext, tree: dict[str, Any]) -> None:
    """Give a fresh preset tree the linked regex sets as ``extensions.regex_scripts``, if any."""
    _, f = embedded_scripts(codec, entity, ctx, None)
    if f:
        tree["extensions"] = {"regex_scripts": f}
