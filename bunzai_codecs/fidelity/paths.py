"""Differences grouped into path losses: each changed path reduced to its pattern
(``entries[].content``), classed expected or unexpected by the target's coverage, with a count and
the first concrete path; ``_Part``, the differences of one entity pair under its prefix, and the
linked entities a row compares beside an entity."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bunzai_codecs.core.codec import Coverage, normalize_path
from bunzai_codecs.core.diff import Change, join
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.fidelity.rows import _INDEX, LossClass, PathLoss, Status

#: ``normalize_path`` memoised: an entity's paths recur in its row for every target
_pattern_of = functools.lru_cache(maxsize=1 << 16)(normalize_path)


def _pattern(path: str, canonical: bool) -> str:
    return _pattern_of(path) if canonical else _INDEX.sub("[]", path)


def _group(items: Iterable[tuple[str, LossClass]], canonical: bool) -> list[PathLoss]:
    """Concrete paths -> patterns with counts, first concrete path kept, sorted by pattern."""
    return _group_patterns((path, _pattern(path, canonical), cls) for path, cls in items)


def _group_patterns(items: Iterable[tuple[str, str, LossClass]]) -> list[PathLoss]:
    """``_group`` of ``(concrete path, its pattern, class)``: the pattern already known."""
    seen: dict[tuple[str, LossClass], list[Any]] = {}
    for path, pattern, cls in items:
        key = (pattern, cls)
        if key in seen:
            seen[key][0] += 1
        else:
            seen[key] = [1, path]
    return [PathLoss(p, c, n, at) for (p, c), (n, at) in sorted(seen.items())]


def _status(lost: list[PathLoss], changed: list[PathLoss], added: list[PathLoss]) -> Status:
    classes = {x.cls for x in (*lost, *changed, *added)}
    if "unexpected" in classes:
        return "unexpected"
    if "expected" in classes:
        return "expected"
    return "lossless"


def _leaf_paths(value: Any, path: str, out: list[str]) -> None:
    """The path of every non-empty leaf below ``value`` (a removed entry becomes its fields),
    appended to ``out``. (``join`` is inlined for string keys: this runs for every field of every
    lore entry a target drops.)"""
    if isinstance(value, dict):
        for k in sorted(value, key=str):
            v = value[k]
            p = (f"{path}.{k}" if path else k) if k.__class__ is str and k.isidentifier() else join(path, k)
            if v is None or v.__class__ is str:
                if v:
                    out.append(p)
            else:
                _leaf_paths(v, p, out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _leaf_paths(v, f"{path}[{i}]", out)
    elif not (value is None or value == ""):
        out.append(path)


def _classer(coverage: Coverage | None) -> Callable[[str], tuple[str, LossClass]]:
    """``path -> (its pattern, class)`` for a lost or changed body path under ``coverage`` (None:
    unexpected). Where ``covers`` depends on the pattern alone (no reshape answering for a body),
    each pattern is classed once: a lorebook's row asks for the same field of every entry."""
    if coverage is None:
        return lambda path: (_pattern_of(path), "unexpected")
    if coverage.body is not None and coverage.reshapes:  # the value at each concrete path counts
        return lambda path: (
            _pattern_of(path),
            "unexpected" if coverage.covers(path) else "expected",
        )
    memo: dict[str, LossClass] = {}

    def cls(path: str) -> tuple[str, LossClass]:
        pattern = _pattern_of(path)
        c = memo.get(pattern)
        if c is None:
            c = memo[pattern] = "unexpected" if coverage.covers(path) else "expected"
        return pattern, c

    return cls


def _canonical_losses(
    changes: Sequence[Change], coverage: Coverage | None, prefix: str = ""
) -> tuple[list[PathLoss], list[PathLoss], list[PathLoss]]:
    """Split body changes into lost/changed/added, classed by ``coverage`` (None: all unexpected,
    the same-format view). Removed or added containers are expanded to their leaves so each leaf is
    classed on its own."""
    classed = _classer(coverage)
    info: LossClass = "info" if coverage is not None else "unexpected"
    # the pattern of ``prefix + path`` is the prefix's pattern + the path's (a prefix is
    # ``<kind>[i].``: no pattern step spans the seam); the path's own is what ``classed`` gives
    pp = _pattern_of(prefix) if prefix else ""

    lost: list[tuple[str, str, LossClass]] = []
    changed: list[tuple[str, str, LossClass]] = []
    added: list[tuple[str, str, LossClass]] = []
    paths: list[str] = []
    for ch in changes:
        if ch.kind == "changed":
            own, c = classed(ch.path)
            changed.append((prefix + ch.path, pp + own, c))
            continue
        value = ch.before if ch.kind == "removed" else ch.after
        paths.clear()
        if isinstance(value, dict | list):
            _leaf_paths(value, ch.path, paths)
        else:
            paths.append(ch.path)
        if ch.kind == "removed":
            for p in paths:
                own, c = classed(p)
                lost.append((prefix + p, pp + own, c))
        else:
            for p in paths:
                added.append((prefix + p, pp + _pattern_of(p), info))
    return _group_patterns(lost), _group_patterns(changed), _group_patterns(added)


def _linked_of(e: CanonicalEntity, pool: Sequence[CanonicalEntity]) -> list[CanonicalEntity]:
    by_id = {x.id: x for x in pool}
    return [by_id[i] for i in e.knowledge_refs if i in by_id and i != e.id]


def _by_kind(items: Iterable[tuple[CanonicalEntity, Any]]) -> dict[str, list[tuple[CanonicalEntity, Any]]]:
    out: dict[str, list[tuple[CanonicalEntity, Any]]] = {}
    for x, c in items:
        out.setdefault(x.kind, []).append((x, c))
    return out


@dataclass(slots=True)
class _Part:
    """The differences of one entity pair: body changes (classed by ``coverage``; None: every one
    unexpected) and the media items' changes, already classed, all under ``prefix``."""

    changes: list[Change]
    coverage: Coverage | None
    prefix: str = ""
    media: list[tuple[str, str, LossClass]] = field(default_factory=list)
