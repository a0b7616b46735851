"""Regex scripts carried inside another SillyTavern file, as a linked regex-set entity.

A chat-completion preset carries preset-scoped scripts in ``extensions.regex_scripts``; the whole
``settings.json`` carries the global ones in ``extension_settings.regex``. A non-empty list decodes
into its own regex-set entity (``_shared/st_regex.py``), linked from the file's primary entity by
``knowledgeRefs``, whose escrow twin — the native script list — is stored under the parent codec's
id. On export the list is re-embedded the way a card re-embeds its scripts: through that twin when
present (every unmapped script key survives), freshly otherwise; a link list without a regex set
drops the stale scripts; a link that does not resolve keeps the twin's scripts; an empty list is
not a set and stays as it is.
"""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core.codec import Codec, EmitContext
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.regex import RegexSetBody
from bunzai_codecs.formats._shared.links import KEEP, keep_or_drop
from bunzai_codecs.formats._shared.st_regex import body_to_scripts, embed_scripts, scripts_to_body
from bunzai_codecs.formats._shared.wire import MapContext, join_path

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
    sets = ctx.refs(entity, "regex")
    if sets:
        for r in sets:
            ctx.embed(r)
        if len(sets) == 1:
            return raw_scripts, embed_scripts(sets[0], codec.id)
        out: list[Any] = []
        for r in sets:
            assert isinstance(r.body, RegexSetBody)
            out.extend(body_to_scripts(r.body))
        return raw_scripts, out
    if not raw_scripts:
        return raw_scripts, raw_scripts  # nothing embedded, or an empty list: not a set
    if keep_or_drop(entity, ctx, "regex", raw_scripts) is KEEP:
        return raw_scripts, raw_scripts
    return raw_scripts, None  # the links say the scripts were removed
