"""The body dicts decoders mapped from escrow trees, kept a short while for the encoders.

A same-format export asks "did the body change since decode?": it maps the twin's tree to a body
dict again, validates it (the *base* body) and compares it with the entity's body, or three-way
merges the native trees of both. Mapping is the Python-heavy half of that (a lore entry is dozens
of keys). The twin's tree is never mutated after decode (the escrow rule), and a mapper is a pure
function of the tree, so the dict the decoder mapped from that very tree object *is* the dict the
encoder would map again. ``remember`` keeps it, by the tree's identity, for the last few trees
decoded in this process; ``recall`` returns it only for the same tree object (the cache holds a
reference, so the identity cannot be reused while it is kept); a miss maps again.

The dict is validated again by the encoder (validation never mutates its input), never handed out
or changed. Decoders call ``remember`` only where nothing edits the dict after the mapper returned
it, and with a ``tag`` naming the mapper and whatever else the mapping depends on (a codec's
dialects).
"""

from __future__ import annotations

from typing import Any

#: how many mapped trees are kept (the last decoded ones: an export follows its read closely)
SIZE = 8
#: inputs above this many bytes are not kept (a few big trees must not outlive their entities)
MAX_INPUT = 1024 * 1024

_kept: dict[tuple[str, int], tuple[Any, Any]] = {}


def remember(tag: str, tree: Any, mapped: Any, *, input_bytes: int) -> None:
    """Keep ``mapped``, the dict ``tag``'s mapper made of ``tree`` (read from an input of
    ``input_bytes`` bytes)."""
    if input_bytes > MAX_INPUT:
        return
    try:
        while len(_kept) >= SIZE:
            del _kept[next(iter(_kept))]  # the oldest
    except (KeyError, RuntimeError, StopIteration):  # another thread evicted at the same time
        pass
    _kept[(tag, id(tree))] = (tree, mapped)


def recall(tag: str, tree: Any) -> Any | None:
    """The dict ``tag``'s mapper made of this very ``tree`` object at decode, else ``None``."""
    hit = _kept.get((tag, id(tree)))
    if hit is not None and hit[0] is tree:
        return hit[1]
    return None


def clear() -> None:
    _kept.clear()
