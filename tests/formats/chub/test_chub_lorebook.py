"""``chub-lorebook``: a Chub lorebook (``character_book`` JSON with a book-level ``extensions.chub``,
docs/formats/chub.md#lorebook)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import corpus_root

from bunzai_codecs import read, write
from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.entities import LorebookBody
from tests.formats.codec_helpers import decode, dumps, export, rt_compare, sample_tree, scores, winner
from tests.formats.helpers import edited, sample

CL = "chub-lorebook"
MARKET = "chub/market-lore.chub-lorebook.json"


def book(data: bytes) -> LorebookBody:
    b = decode(data).primary.body
    assert isinstance(b, LorebookBody)
    return b


def corpus_book() -> bytes:
    root = corpus_root()
    if root is None:
        pytest.skip("shared corpus not present")
    p: Path = root / "chub/lorebook.example-lorebook.chub.book.json"
    return p.read_bytes()


def test_chub_identity_wins_by_content_over_the_generic_book_readers() -> None:
    s = scores(sample(MARKET))
    assert s[CL] == 1.0
    assert all(v < 1.0 for k, v in s.items() if k != CL)
    assert winner(sample(MARKET)) == CL
    real = scores(corpus_book())
    assert real[CL] == 1.0 and real["sillytavern-lorebook"] < 1.0
    assert winner(corpus_book()) == CL


def test_a_book_without_the_chub_bag_is_left_to_sillytavern_lorebook() -> None:
    tree = sample_tree(MARKET)
    del tree["extensions"]["chub"]
    assert CL not in scores(dumps(tree))
    assert winner(dumps(tree)) == "sillytavern-lorebook"
    assert CL not in scores(dumps({**sample_tree(MARKET), "extensions": {"chub": "x"}}))
    assert CL not in scores(dumps({**sample_tree(MARKET), "entries": {}}))


def test_fields_map_through_the_shared_character_book_mapper() -> None:
    b = book(sample(MARKET))
    assert (b.name, b.description, b.globalScanDepth, b.tokenBudget, b.globalRecursion) == (
        "Floating Market",
        "Lore for the floating market.",
        10,
        600,
        True,
    )
    assert b.extensions == {"chub": sample_tree(MARKET)["extensions"]["chub"]}
    lantern, harbor = b.entries
    assert [(t.text, t.isRegex, t.flags) for t in lantern.triggers or []] == [
        ("lantern", False, None),
        ("lamp ?oil", True, "i"),
    ]
    assert (lantern.position, lantern.priority, lantern.sortOrder) == ("world", 5, 20)
    assert (lantern.selectiveLogic, lantern.probability) == ("and_all", 80)  # top-level Chub keys
    assert lantern.extensions == {"weight": 10, "addMemo": True, "characterFilter": None}
    assert (harbor.title, harbor.comment) == ("the harbormaster", None)
    assert harbor.position == ""  # Chub's empty position, verbatim
    assert harbor.probability == 100  # useProbability false
    assert (harbor.caseSensitive, harbor.excludeRecursion, harbor.depth) == (True, True, 2)


@pytest.mark.parametrize("which", ["sample", "corpus"])
def test_round_trip_and_canonical_stability(which: str) -> None:
    data = sample(MARKET) if which == "sample" else corpus_book()
    d = decode(data)
    out = export(d.primary, CL)
    assert rt_compare(data, out) == []
    assert decode(out).primary.body == d.primary.body


def test_an_edit_keeps_the_book_level_chub_bag_and_unmapped_entry_keys() -> None:
    d = decode(corpus_book())

    def change(b: dict[str, Any]) -> None:
        b["entries"][0]["content"] = "Edited."
        del b["entries"][-1]

    out = json.loads(export(edited(d.primary, change), CL))
    src = json.loads(corpus_book())
    assert out["extensions"] == src["extensions"]
    assert out["entries"][0]["content"] == "Edited."
    assert out["entries"][0]["extensions"] == src["entries"][0]["extensions"]
    assert out["entries"][1:] == src["entries"][1:-1]
    assert (
        "displayIndex" in out["entries"][0]["extensions"]
        and "display_index" not in out["entries"][0]["extensions"]
    )
    assert list(out) == list(src)


def test_quirk_the_prompt_injection_entry_is_data() -> None:
    d = decode(corpus_book())
    b = d.primary.body
    assert isinstance(b, LorebookBody)
    hits = [e for e in b.entries if "IGNORE ALL OTHER INSTRUCTIONS" in e.content]
    assert len(hits) == 1
    assert rt_compare(corpus_book(), export(d.primary, CL)) == []


def test_cross_format_to_and_from_sillytavern_world_info() -> None:
    d = decode(sample(MARKET))
    world = export(d.primary, "sillytavern-lorebook")
    st = read(world, "Floating Market.json").primary.body
    cb = d.primary.body
    assert isinstance(st, LorebookBody) and isinstance(cb, LorebookBody)
    for a, b in zip(st.entries, cb.entries, strict=True):
        assert (a.content, a.enabled, a.constant, a.selectiveLogic) == (
            b.content,
            b.enabled,
            b.constant,
            b.selectiveLogic,
        )
        assert a.triggers == b.triggers and a.sortOrder == b.sortOrder
    src = read(sample("sillytavern/world-harbor-town.json"), "world-harbor-town.json").primary
    out = export(src, CL)
    back = read(out, "x.json", format=CL).primary.body
    assert isinstance(back, LorebookBody) and isinstance(src.body, LorebookBody)
    assert [(e.title, e.content) for e in back.entries] == [(e.title, e.content) for e in src.body.entries]
    first = json.loads(out)["entries"][0]["extensions"]
    assert "excludeRecursion" in first  # Chub's camelCase spelling


def test_a_card_book_converts_to_chub_lorebook_through_bundle_write() -> None:
    d = read(sample("sillytavern/lighthouse-keeper.v2.json"), "l.json")
    lore = next(e for e in d.entities if e.kind == "lorebook")
    out = write(lore, CL, linked=d.entities).data
    b = read(out, "x.json", format=CL).primary.body
    assert b == lore.body


def test_bad_input_is_typed_with_a_path() -> None:
    tree = sample_tree(MARKET)
    tree["entries"][1]["keys"] = "harbormaster"
    with pytest.raises(Malformed) as err:
        read(dumps(tree), "bad.json")
    assert err.value.path == "$.entries[1].keys"
    tree = sample_tree(MARKET)
    tree["entries"][0]["extensions"] = []
    with pytest.raises(Malformed) as err:
        read(dumps(tree), "bad.json")
    assert err.value.path == "$.entries[0].extensions"
    with pytest.raises(Malformed) as err:
        read(b"[1]", "bad.json", format=CL)
    assert err.value.path == "$"


def test_a_fresh_export_carries_the_chub_mark_and_is_detected_as_chub() -> None:
    """Another app's book written as chub-lorebook is Chub's book, not any app's bare book: the
    export has an empty ``extensions.chub`` (no Chub id yet), which reading does not put in the body."""
    src = read(sample("sillytavern/world-harbor-town.json"), "world-harbor-town.json").primary
    out = export(src, CL)
    assert json.loads(out)["extensions"]["chub"] == {}
    assert winner(out) == CL
    back = read(out, "x.json").primary
    assert back.source is not None and back.source.format == CL
    assert back.body.extensions == src.body.extensions  # the mark is not data
    assert export(back, CL) == out
