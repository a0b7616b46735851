"""Re-embedding linked entities: the rule every bundle format applies on export.

A card (or preset, or module) decodes the lorebooks and regex sets it carries into their own
entities, linked by ``links.knowledgeRefs`` (docs/formats/sillytavern.md#bundles). On export, for each kind it
can embed, a codec asks ``ctx.refs(entity, kind)``:

- linked entities of that kind that the context resolves: embed them (through their own twin under
  the codec's id when they have one) and call ``ctx.embed`` for each;
- none: :func:`keep_or_drop` says whether the twin's embedded copy stays (:data:`KEEP`) or goes
  (:data:`DROP`).
"""

from __future__ import annotations

from typing import Any, Final

from bunzai_codecs.core.codec import EmitContext
from bunzai_codecs.core.entity import KNOWLEDGE_REFS, CanonicalEntity, EntityKind


class _Sentinel:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


#: keep the twin's embedded copy as it is
KEEP: Final[Any] = _Sentinel("KEEP")
#: remove the twin's embedded copy: the links say the entity no longer carries one
DROP: Final[Any] = _Sentinel("DROP")


def keep_or_drop(entity: CanonicalEntity, ctx: EmitContext, kind: EntityKind, old: Any) -> Any:
    """With no resolvable link of ``kind``: :data:`KEEP` the twin's copy ``old`` when there is
    nothing to drop, when the entity has no link list at all, or when a link of that kind exists
    that this context cannot resolve (the caller did not pass it: the copy is not known stale);
    otherwise :data:`DROP` it — an explicit link list without that kind means it was removed."""
    if old is None:
        return KEEP
    refs = entity.links.get(KNOWLEDGE_REFS)
    prefix = f"{kind}-"  # canonical ids start with their kind (core.entity.canonical_id)
    if refs is None or any(r.startswith(prefix) and r not in ctx.linked for r in refs):
        return KEEP
    return DROP


__all__ = ["DROP", "KEEP", "keep_or_drop"]
