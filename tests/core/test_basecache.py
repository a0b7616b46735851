"""core.basecache: the decoder's mapped body dicts, reused by same-format exports of the same tree.

The cache may only ever save work: an export with it must give the bytes an export without it
gives, and an in-place edit of the body must show in the export either way.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bunzai_codecs import bundle
from bunzai_codecs.core import basecache
from bunzai_codecs.entities.character import CharacterBody
from bunzai_codecs.entities.lorebook import LorebookBody

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def test_recall_is_by_identity_not_equality() -> None:
    basecache.clear()
    tree = {"a": [1]}
    basecache.remember("t", tree, {"m": 1}, input_bytes=10)
    assert basecache.recall("t", tree) == {"m": 1}
    assert basecache.recall("t", {"a": [1]}) is None  # an equal tree is not the tree
    assert basecache.recall("other", tree) is None


def test_only_the_last_few_small_inputs_are_kept() -> None:
    basecache.clear()
    trees = [{"i": i} for i in range(basecache.SIZE + 3)]
    for t in trees:
        basecache.remember("t", t, t, input_bytes=10)
    assert basecache.recall("t", trees[0]) is None
    assert basecache.recall("t", trees[-1]) is trees[-1]
    big = {"big": True}
    basecache.remember("t", big, big, input_bytes=basecache.MAX_INPUT + 1)
    assert basecache.recall("t", big) is None


@pytest.mark.parametrize(
    "name",
    [
        "sillytavern/lighthouse-keeper.v2.json",
        "sillytavern/tidepool.png",
        "sillytavern/world-harbor-town.json",
    ],
)
def test_export_is_the_same_with_and_without_the_cache(name: str) -> None:
    data = (SAMPLES / name).read_bytes()
    d = bundle.read(data, name)
    fmt = d.primary.source.format  # type: ignore[union-attr]
    hit = bundle.write(d.primary, fmt, linked=d.entities).data
    basecache.clear()
    miss = bundle.write(d.primary, fmt, linked=d.entities).data
    assert hit == miss


def test_an_edit_in_place_shows_in_the_export_with_the_cache_warm() -> None:
    name = "sillytavern/lighthouse-keeper.v2.json"
    d = bundle.read((SAMPLES / name).read_bytes(), name)
    card, book = d.entities[0], d.entities[1]
    assert isinstance(card.body, CharacterBody) and isinstance(book.body, LorebookBody)
    card.body.identity.name = "Renamed In Place"
    book.body.entries[0].content = "edited in place"
    out = bundle.write(card, "sillytavern", linked=d.entities).data
    assert b"Renamed In Place" in out and b"edited in place" in out


def test_a_risu_lorebook_edit_in_place_shows_with_the_cache_warm() -> None:
    name = "risu/harbor_lorebook_export.json"
    d = bundle.read((SAMPLES / name).read_bytes(), name)
    book = d.primary
    assert isinstance(book.body, LorebookBody) and book.source is not None
    assert book.source.format == "risu-lorebook"
    book.body.entries[0].content = "edited in place"
    assert b"edited in place" in bundle.write(book, "risu-lorebook").data


def test_a_mutated_escrow_tree_breaks_the_rule_and_is_caught() -> None:
    """The cache is only right while nothing mutates a twin's tree after decode: the check mode the
    test suite runs in catches a mutation instead of returning the stale mapping."""
    assert basecache.CHECK  # tests/conftest.py turns the check on for every test
    name = "sillytavern/lighthouse-keeper.v2.json"
    d = bundle.read((SAMPLES / name).read_bytes(), name)
    card = d.entities[0]
    twin = card.twin("sillytavern")
    assert twin is not None and isinstance(twin.raw, dict)
    twin.raw["data"]["name"] = "mutated behind the cache's back"  # breaks the escrow rule
    with pytest.raises(basecache.RuleBroken):
        bundle.write(card, "sillytavern", linked=d.entities)


def test_the_check_is_what_catches_it() -> None:
    basecache.clear()
    tree = {"a": [1]}
    basecache.remember("t", tree, {"m": 1}, input_bytes=10)
    tree["a"].append(2)
    with pytest.raises(basecache.RuleBroken):
        basecache.recall("t", tree)
    basecache.CHECK = False
    try:
        assert basecache.recall("t", tree) == {"m": 1}  # unchecked: the stale mapping comes back
    finally:
        basecache.CHECK = True
