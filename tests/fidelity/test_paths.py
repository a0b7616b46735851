"""How a row's differences become the report's path losses (``fidelity/paths.py``): which class an
added value gets in each view, how an added container is counted, and how concrete paths fold into
the patterns the report groups by (canonical paths as coverage patterns, native paths keeping their
object keys)."""

from __future__ import annotations

from bunzai_codecs.core.codec import Coverage
from bunzai_codecs.core.diff import Change
from bunzai_codecs.fidelity.paths import _canonical_losses, _group, _status
from bunzai_codecs.fidelity.rows import PathLoss


def test_a_value_added_in_a_same_format_round_trip_is_unexpected() -> None:
    """Same format (no coverage): a value the file did not have is a difference the report must
    show (the row is not lossless); across formats an added value is only information."""
    added = [Change("extensions.x", "added", None, "v")]
    _, _, same = _canonical_losses(added, None)
    assert same == [PathLoss("extensions.x", "unexpected", 1, "extensions.x")]
    assert _status([], [], same) == "unexpected"
    _, _, cross = _canonical_losses(added, Coverage.of("name"))
    assert cross == [PathLoss("extensions.x", "info", 1, "extensions.x")]
    assert _status([], [], cross) == "lossless"


def test_an_added_container_counts_each_of_its_leaves() -> None:
    entry = {"title": "t", "content": "c", "empty": ""}
    _, _, added = _canonical_losses([Change("entries[2]", "added", None, entry)], None, "lorebook[0].")
    assert added == [
        PathLoss("lorebook[].entries[].content", "unexpected", 1, "lorebook[0].entries[2].content"),
        PathLoss("lorebook[].entries[].title", "unexpected", 1, "lorebook[0].entries[2].title"),
    ]


def test_paths_fold_into_patterns_canonical_and_native() -> None:
    canonical = [
        ("entries[0].extensions['my-app'].x", "unexpected"),
        ("entries[7].extensions['other'].x", "unexpected"),
    ]
    assert _group(canonical, True) == [
        PathLoss("entries[].extensions.*.x", "unexpected", 2, "entries[0].extensions['my-app'].x")
    ]
    # a native path keeps its object keys (each is a field of the file), only indices fold
    native = [
        ("data['my-app'][0]", "unexpected"),
        ("data['my-app'][3]", "unexpected"),
        ("data.b", "unexpected"),
    ]
    assert _group(native, False) == [
        PathLoss("data.b", "unexpected", 1, "data.b"),
        PathLoss("data['my-app'][]", "unexpected", 2, "data['my-app'][0]"),
    ]
