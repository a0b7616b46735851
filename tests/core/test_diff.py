from bunzai_codecs.core.diff import diff


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
