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

It earned its place when every same-format write compared its body with the dict: a round trip of a
card with a book, an ST world or a Risu lorebook cost ~10 % less
(docs/perf-notes/2026-11-30-codec-optimisations.md). A body marked unedited since decode
(``core.seal``) needs no dict, and keeping every decoded tree alive for a while costs the reads
more than it saves (docs/perf-notes/2026-12-03-read-path.md): decoders keep only the dicts of the
bodies left without a mark (``seal.keep_unless_marked``). Its rule — an escrow tree and the dict
mapped from it are never mutated after decode — is checked, not trusted: with :data:`CHECK` on (the
test suite turns it on in ``tests/conftest.py``) ``remember`` keeps a serialised copy of both and
``recall`` raises :class:`RuleBroken` when either changed since.
"""

from __future__ import annotations

from typing import Any

#: how many mapped trees are kept (the last decoded ones: an export follows its read closely)
SIZE = 8
#: inputs above this many bytes are not kept (a few big trees must not outlive their entities)
MAX_INPUT = 1024 * 1024

#: check, not trust, the rules the fast paths rest on (the test suite, the hostile and fuzz runs):
#: this cache's on every ``recall`` (a serialisation of each tree and mapped dict), a body's
#: "unedited since decode" mark against full validation (``core.seal``, ``overlay.unedited``), and
#: detection by the formats' claims against asking every format (``core.claims``, ``registry``)
CHECK = False

_kept: dict[tuple[str, int], tuple[Any, Any]] = {}
_copies: dict[tuple[str, int], str] = {}


class RuleBroken(AssertionError):
    """An escrow tree, or the dict mapped from it, was mutated after decode."""


def remember(tag: str, tree: Any, mapped: Any, *, input_bytes: int) -> None:
    """Keep ``mapped``, the dict ``tag``'s mapper made of ``tree`` (read from an input of
    ``input_bytes`` bytes)."""
    if input_bytes > MAX_INPUT:
        return
    try:
        while len(_kept) >= SIZE:
            oldest = next(iter(_kept))
            del _kept[oldest]
            _copies.pop(oldest, None)
    except (KeyError, RuntimeError, StopIteration):  # another thread evicted at the same time
        pass
    _kept[(tag, id(tree))] = (tree, mapped)
    if CHECK:
        _copies[(tag, id(tree))] = _serialised(tree, mapped)


def recall(tag: str, tree: Any) -> Any | None:
    """The dict ``tag``'s mapper made of this very ``tree`` object at decode, else ``None``."""
    hit = _kept.get((tag, id(tree)))
    if hit is not None and hit[0] is tree:
        copy = _copies.get((tag, id(tree))) if CHECK else None
        if copy is not None and copy != _serialised(tree, hit[1]):
            raise RuleBroken(f"basecache: the {tag} tree or its mapped dict was mutated after decode")
        return hit[1]
    return None


def clear() -> None:
    _kept.clear()
    _copies.clear()


def _serialised(tree: Any, mapped: Any) -> str:
    return repr((tree, mapped))  # any value (JSON trees, models), every nested change shows
