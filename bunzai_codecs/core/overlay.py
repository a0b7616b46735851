"""Escrow overlay: write a native tree that keeps the twin wherever the canonical body is unchanged.

A same-format export must reproduce the file it came from, including everything the canonical
model does not map (unknown keys, odd spellings like a ``"0.5"`` string for a number) — and still
carry the edits a user made to the canonical body. ``merge3`` is the three-way merge that does it:

- ``raw``  — the native tree stored in escrow (what the file said);
- ``base`` — what the codec's fresh writer makes of the body decoded from ``raw``;
- ``new``  — what the same writer makes of the entity's current body.

Wherever ``new`` equals ``base`` the body did not change there, so ``raw`` is kept verbatim;
elsewhere ``new`` wins. A key the writer produces but ``raw`` never had stays absent while its value
is unchanged (an edit elsewhere in the same object does not spell out the twin's defaults). Keys only ``raw`` has (unmapped) survive; keys the writer produced for the
old body but not for the new one are removed. Unchanged subtrees are shared with ``raw``, never
copied, and ``raw`` is never mutated.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

ListKey = Callable[[Any], Hashable | None]


def overlay_twin(
    raw: Any, body: Any, mapped: Any, to_native: Callable[[Any], Any], *, list_key: ListKey | None = None
) -> Any:
    """A same-format export through an escrow twin: ``raw`` itself when the body the twin decodes to
    (``mapped``: the codec's body dict for ``raw``, validated here as ``body``'s model) equals
    ``body``; else ``merge3`` over ``raw`` of the codec's writer (``to_native``) applied to both."""
    base = type(body).model_validate(mapped)
    if base == body:
        return raw
    return merge3(raw, to_native(base), to_native(body), list_key=list_key)


def by_id(item: Any) -> Any:
    """The common ``list_key``: list items (lore entries, categories, regex rules) paired by their
    ``id``; an item without one (or not an object) pairs by position."""
    return item.get("id") if isinstance(item, dict) else None


def merge3(raw: Any, base: Any, new: Any, *, list_key: ListKey | None = None) -> Any:
    """Three-way merge of native trees (see module docstring).

    ``list_key``, when given, pairs list items by identity (e.g. a lore entry's ``uid``) instead of
    by position, so deleting or reordering entries keeps every other entry's twin.
    """
    if new == base:
        return raw
    if isinstance(new, dict) and isinstance(base, dict) and isinstance(raw, dict):
        out: dict[Any, Any] = {}
        for k, v in raw.items():
            if k in new:
                out[k] = merge3(v, base[k], new[k], list_key=list_key) if k in base else new[k]
            elif k not in base:
                out[k] = v  # never mapped: carried through
            # else: the writer made it for the old body, not the new one: removed
        for k, v in new.items():
            if k not in raw and not (k in base and base[k] == v):
                out[k] = v  # new, or changed; a default the twin never spelled out stays unwritten
        return out
    if isinstance(new, list) and isinstance(base, list) and isinstance(raw, list) and len(raw) == len(base):
        if list_key is not None:
            keyed = _merge_keyed(raw, base, new, list_key)
            if keyed is not None:
                return keyed
        m = min(len(new), len(base))
        head = [
            merge3(r, b, n, list_key=list_key) for r, b, n in zip(raw[:m], base[:m], new[:m], strict=True)
        ]
        return head + new[m:]
    return new


def _merge_keyed(raw: list[Any], base: list[Any], new: list[Any], key: ListKey) -> list[Any] | None:
    """Pair items by ``key``; ``None`` when keys are missing or repeat (fall back to positions)."""
    try:
        bkeys = [key(b) for b in base]
        nkeys = [key(n) for n in new]
    except Exception:
        return None
    if None in bkeys or None in nkeys or len(set(bkeys)) != len(bkeys) or len(set(nkeys)) != len(nkeys):
        return None
    where = {k: i for i, k in enumerate(bkeys)}
    out = []
    for k, n in zip(nkeys, new, strict=True):
        i = where.get(k)
        out.append(n if i is None else merge3(raw[i], base[i], n, list_key=key))
    return out
