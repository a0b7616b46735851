"""The fidelity walks take short-cuts for speed (docs/perf-notes/2026-12-02-codec-and-fidelity-second-pass.md): ``content_units`` and
``_leaf_paths`` inline ``content_weight`` and ``join`` for plain values, ``diff`` sorts only the keys
that may differ, and a prefixed path's pattern is the prefix's pattern + the path's. Each test here
holds a short-cut to the rule it stands for, spelled out plainly, over every sample and corpus body
and over values the short-cuts pass to the general rule (subclasses, bytes, non-string keys)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from bunzai_codecs.core.diff import diff, join
from bunzai_codecs.fidelity import content_units, content_weight
from bunzai_codecs.fidelity.paths import _leaf_paths, _pattern_of
from tests.core.test_diff import _reference as _diff_rule
from tests.fidelity.test_shared_work import _inputs


class _Str(str):
    pass


class _Int(int):
    pass


#: values the short-cuts do not take themselves: each must still follow the rule
ODD: dict[Any, Any] = {
    "name": _Str("odd"),
    "count": _Int(3),
    "blob": b"xy",
    "ok": True,
    "ratio": 0.5,
    "empty": "",
    "none": None,
    "weird key": {"a-b": [1, "", None, {"x": _Str("")}]},
    1: "int key",
    "media": {
        "portrait": {"size": _Int(48), "sha256": "ab"},
        "assets": [{"size": True}, {"size": -4}, {"size": 0}, {"size": 12, "name": "n"}],
    },
}


def _units_rule(value: Any, path: str = "") -> Iterator[tuple[str, int]]:
    """``content_units`` as its docstring says: every populated unit, by ``content_weight``."""
    w = content_weight(path, value)
    if w is not None:
        if w > 0:
            yield path, w
    elif isinstance(value, dict):
        for k in sorted(value, key=str):
            yield from _units_rule(value[k], join(path, k))
    else:
        for i, v in enumerate(value):
            yield from _units_rule(v, join(path, i))


def _leaves_rule(value: Any, path: str) -> list[str]:
    if isinstance(value, dict):
        return [p for k in sorted(value, key=str) for p in _leaves_rule(value[k], join(path, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _leaves_rule(v, join(path, i))]
    return [] if value is None or value == "" else [path]


def _dumps() -> Iterator[dict[str, Any]]:
    for _, _, _, decoded in _inputs():
        for e in decoded.entities:
            yield e.body.dump()
    yield copy.deepcopy(ODD)


def _edited(d: Any, n: int = 0) -> Any:
    """``d`` with every third value changed, emptied or dropped, recursively (a target's losses)."""
    if isinstance(d, dict):
        out = {}
        for i, (k, v) in enumerate(d.items()):
            r = (i + n) % 5
            if r == 0:
                continue
            out[k] = _edited(v, n + i) if r != 1 else ("" if isinstance(v, str) else 1.0 if v == 1 else v)
        return out
    if isinstance(d, list):
        return [_edited(v, n + i) for i, v in enumerate(d[: max(0, len(d) - n % 2)])]
    return d


def test_content_units_follow_content_weight() -> None:
    seen = 0
    for dump in _dumps():
        assert list(content_units(dump)) == list(_units_rule(dump))
        seen += 1
    assert seen > 100


def test_leaf_paths_are_every_populated_leaf() -> None:
    for dump in _dumps():
        for path in ("", "entries[3]"):
            got: list[str] = []
            _leaf_paths(dump, path, got)
            assert got == _leaves_rule(dump, path)


def test_diff_passing_over_equal_keys_gives_every_change_in_order() -> None:
    seen = 0
    for dump in _dumps():
        other = _edited(dump)
        for eia in (False, True):
            # the walk as it was before any short-cut, spelled out apart from core/diff.py
            want = _diff_rule(dump, other, eia)
            back = _diff_rule(other, dump, eia)
            assert diff(dump, other, empty_is_absent=eia) == want
            assert diff(other, dump, empty_is_absent=eia) == back
            seen += len(want)
    assert seen > 1000


def test_a_prefixed_pattern_is_the_prefix_pattern_and_the_path_pattern() -> None:
    prefixes = ["lorebook[0].", "regex[12].", "character[3]."]
    paths = {"", "['a b'].x", "['1'][2]"}
    for dump in _dumps():
        paths.update(p for p, _ in content_units(dump))
        leaves: list[str] = []
        _leaf_paths(dump, "", leaves)
        paths.update(leaves)
    for prefix in prefixes:
        for p in paths:
            assert _pattern_of(prefix + p) == _pattern_of(prefix) + _pattern_of(p), (prefix, p)
