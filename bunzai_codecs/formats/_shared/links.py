"""Re-embedding linked entities: the rule every bundle format applies on export.

A card (or preset, or module) decodes the lorebooks and regex sets it carries into their own
entities, linked by ``links.knowledgeRefs`` (docs/formats/sillytavern.md#bundles). On export, for each kind it
can embed, a codec asks ``ctx.refs(entity, kind)``:

- linked entities of that kind that the context resolves: embed them (through their own twin under
  the codec's id when they have one) and call ``ctx.embed`` for each;
- none: :func:`keep_or_drop` says whether the twin's embedded copy stays (:data:`KEEP`) or goes
  (:data:`DROP`).

:func:`embed_twin` is how one linked entity becomes the subtree the file embeds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from bunzai_codecs.core import basecache
from bunzai_codecs.core.codec import EmitContext
from bunzai_codecs.core.entity import KNOWLEDGE_REFS, CanonicalEntity, EntityKind
from bunzai_codecs.core.overlay import ListKey, overlay_twin


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


def embed_twin(
    linked: CanonicalEntity,
    codec_id: str,
    native: type,
    tag: str,
    read: Callable[[Any], Any],
    write: Callable[[Any, Any], Any],
    *,
    list_key: ListKey | None = None,
) -> Any:
    """A linked entity as the subtree a file of ``codec_id`` embeds: its twin under ``codec_id``
    (when it is a ``native``: the ``dict`` or ``list`` the file held) with the body's edits laid
    over it, the twin itself when the body is unedited (``core.overlay.overlay_twin``: the body
    the decoder marked with ``tag``, ``core.seal``, or one equal to the twin's); else a fresh
    subtree. ``read`` maps a twin to its body dict (unless the decoder remembered it under ``tag``,
    ``core.basecache``); ``write(body, twin)`` is the writer, ``twin`` ``None`` for a fresh
    subtree (the twin's tree otherwise, for its spelling)."""
    twin = linked.twin(codec_id)
    raw = twin.raw if twin else None
    if not isinstance(raw, native):
        return write(linked.body, None)

    def mapped() -> Any:  # asked only when the decoder's mark cannot answer (``core.seal``)
        kept = basecache.recall(tag, raw)  # what the decoder mapped from this very tree
        return read(raw) if kept is None else kept

    return overlay_twin(raw, linked.body, mapped, lambda b: write(b, raw), list_key=list_key, tag=tag)
