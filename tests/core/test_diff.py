from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bunzai_codecs.core.diff import Change, diff, join


def test_paths_name_the_place_of_each_change() -> None:
    a = {"entries": [{"content": "x", "keys": ["a"]}], "name": "n"}
    b = {"entries": [{"content": "y", "keys": ["a", "b"]}], "extra": 1}
    got = [str(c) for c in diff(a, b)]
    assert got == [
        "entries[0].content: 'x' -> 'y'",
        "entries[0].keys[1]: added",
        "extra: added",
        "name: removed",
    ]


def test_numbers_compare_by_value_but_bools_are_not_numbers() -> None:
    assert diff({"a": 1}, {"a": 1.0}) == []
    assert [c.kind for c in diff({"a": 1}, {"a": True})] == ["changed"]


def test_empty_is_absent_for_cross_format_views() -> None:
    a = {"alternateGreetings": [], "x": ""}
    assert diff(a, {}, empty_is_absent=True) == []
    assert len(diff(a, {})) == 2


def test_odd_keys_are_quoted() -> None:
    assert [c.path for c in diff({"a b": 1}, {"a b": 2})] == ["['a b']"]


def test_limit_stops_early() -> None:
    assert len(diff(list(range(100)), list(range(1, 101)), limit=5)) == 5


# -- the fast paths (issue 21) give exactly the walk's answer --------------------------------------


def _reference(a: Any, b: Any, eia: bool = False, limit: int | None = None) -> list[Change]:
    """The walk as it was before its fast paths: every node visited, every path spelled."""

    def empty(v: Any) -> bool:
        return v is None or v == "" or v == [] or v == {}

    def same(x: Any, y: Any) -> bool:
        if isinstance(x, bool) or isinstance(y, bool):
            return type(x) is type(y) and x == y
        if isinstance(x, int | float) and isinstance(y, int | float):
            return x == y
        return type(x) is type(y) and x == y

    out: list[Change] = []

    def walk(a: Any, b: Any, path: str) -> None:
        if limit is not None and len(out) >= limit:
            return
        if a is b:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for k in sorted(a.keys() | b.keys(), key=str):
                if k not in b:
                    if not (eia and empty(a[k])):
                        out.append(Change(join(path, k), "removed", a[k], None))
                elif k not in a:
                    if not (eia and empty(b[k])):
                        out.append(Change(join(path, k), "added", None, b[k]))
                else:
                    walk(a[k], b[k], join(path, k))
            return
        if isinstance(a, list) and isinstance(b, list):
            for i in range(max(len(a), len(b))):
                if i >= len(b):
                    out.append(Change(join(path, i), "removed", a[i], None))
                elif i >= len(a):
                    out.append(Change(join(path, i), "added", None, b[i]))
                else:
                    walk(a[i], b[i], join(path, i))
            return
        if same(a, b):
            return
        if eia and empty(a) and empty(b):
            return
        if eia and empty(a):
            out.append(Change(path, "added", a, b))
        elif eia and empty(b):
            out.append(Change(path, "removed", a, b))
        else:
            out.append(Change(path, "changed", a, b))

    walk(a, b, "")
    return out


# small alphabets so the two trees often share (and almost share) subtrees: 1 / 1.0 / True, "" / None
_scalars = st.sampled_from([None, "", "a", "b", 0, 1, 1.0, True, False, -0.0, 0.0, float("nan"), 2**70])
_keys = st.sampled_from(["a", "b", "c d", "", "1"])
_trees = st.recursive(
    _scalars,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(_keys, kids, max_size=4),
    max_leaves=25,
)


@settings(max_examples=400, deadline=None)
@given(_trees, _trees, st.booleans(), st.sampled_from([None, 1, 3]))
def test_the_fast_paths_report_what_the_full_walk_reports(
    a: Any, b: Any, eia: bool, limit: int | None
) -> None:
    assert [(c.path, c.kind) for c in diff(a, b, empty_is_absent=eia, limit=limit)] == [
        (c.path, c.kind) for c in _reference(a, b, eia, limit)
    ]
    # a tree against a copy of itself with one leaf spelled as another type of the same value
    c = {"x": [a, {"k": 1}], "y": b}
    d = {"x": [a, {"k": True}], "y": b}
    assert [(x.path, x.kind) for x in diff(c, d)] == [(x.path, x.kind) for x in _reference(c, d)]


def _reordered(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _reordered(v[k]) for k in reversed(list(v))}
    if isinstance(v, list):
        return [_reordered(x) for x in v]
    return v


@settings(max_examples=200, deadline=None)
@given(_trees, _trees)
def test_key_order_never_matters(a: Any, b: Any) -> None:
    want = [(c.path, c.kind) for c in _reference(a, b)]
    assert [(c.path, c.kind) for c in diff(_reordered(a), b)] == want
    assert [(c.path, c.kind) for c in diff(a, _reordered(b))] == want
