"""``agnai-lorebook``: Agnai's memory book. Expectations come from the facts
read from Agnai's source (docs/formats/agnai.md#lorebook-memorybook)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from agnai_helpers import (
    BOOKS,
    HARBOR,
    LANTERNFALL,
    MIRELLE,
    decode,
    encode,
    score,
    tree,
    without_twins,
)

from bunzai_codecs import BunzaiError, Malformed, read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.diff import diff
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import LorebookBody
from tests.formats.helpers import edited


def _book(entries: list[dict[str, Any]], **book: Any) -> dict[str, Any]:
    return {"kind": "memory", "name": "B", **book, "entries": entries}


def _row(i: int, **extra: Any) -> dict[str, Any]:
    return {
        "name": f"E{i}",
        "entry": f"text {i}",
        "keywords": [f"k{i}"],
        "priority": 0,
        "weight": 0,
        "enabled": True,
        **extra,
    }


# --- detection ----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", BOOKS, ids=lambda p: p.name)
def test_book_exports_detect_with_certainty(path: Path) -> None:
    s = Sniff(path.read_bytes(), path.name)
    assert registry.detect(s) == registry.Candidate("agnai-lorebook", 1.0)
    assert registry.get("agnai").detect(s) == 0.0


def test_a_kind_less_native_book_scores_0_9() -> None:
    t = tree(LANTERNFALL)
    del t["kind"]
    assert score("agnai-lorebook", t) == 0.9


def test_a_standalone_ccv3_character_book_scores_0_7() -> None:
    t = {"name": "W", "entries": [{"keys": ["a"], "content": "A.", "insertion_order": 5, "enabled": True}]}
    assert score("agnai-lorebook", t) == 0.7


@pytest.mark.parametrize(
    "t",
    [
        {"entries": {"0": {"uid": 0, "key": ["a"], "content": "A."}}},  # SillyTavern world info
        {"type": "risu", "ver": 1, "data": [{"key": "a", "content": "A."}]},  # Risu lore file
        {"kind": "character", "entries": [{"entry": "x", "keywords": []}]},
        {"kind": "scenario", "entries": [{"entry": "x", "keywords": []}]},
        {"spec": "chara_card_v2", "data": {}, "entries": [{"keys": ["a"], "content": "A."}]},
        {"name": "empty", "entries": []},  # nothing says Agnai
        {"lorebookVersion": 6, "entries": [{"text": "A.", "keys": ["a"], "displayName": "A"}]},  # NovelAI
        {"entries": [1, 2]},
        [{"kind": "memory"}],
    ],
    ids=[
        "st-world",
        "risu",
        "agnai-character",
        "scenario-book",
        "card",
        "empty-kindless",
        "novelai",
        "scalars",
        "array",
    ],
)
def test_other_shapes_are_not_claimed(t: Any) -> None:
    assert score("agnai-lorebook", t) == 0.0


def test_corpus_files_of_other_formats_are_not_claimed_beyond_the_ccv3_soft_path(corpus: Path) -> None:
    for line in (corpus / "EXPECT.tsv").read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        rel, fmt = line.split("\t")[:2]
        if fmt.startswith("agnai"):
            continue
        s = Sniff((corpus / rel).read_bytes(), rel)
        assert registry.get("agnai").detect(s) == 0.0, rel
        # only a standalone CCv3 book may get the 0.7 soft score, which the dedicated readers outbid
        assert registry.get("agnai-lorebook").detect(s) <= (
            0.7 if fmt in ("chub-lorebook", "sillytavern-lorebook") else 0.0
        ), rel


# --- decode -------------------------------------------------------------------------------------


def test_book_export_decodes_field_by_field() -> None:
    book = read(LANTERNFALL.read_bytes(), LANTERNFALL.name).primary
    b = book.body
    assert isinstance(b, LorebookBody)
    assert b.name == "Lanternfall" and b.description == "Streets, guilds and weather of the drowned city."
    assert b.lorebookType == "other"  # Agnai books are general library entities
    assert b.globalScanDepth is None and b.tokenBudget is None and b.globalRecursion is None
    assert [e.id for e in b.entries] == ["0", "1", "2"]  # no ids in the file: the index
    e0, e1, e2 = b.entries
    assert e0.title == "Saltmarket" and e0.content.startswith("Saltmarket is the oldest")
    assert [(t.text, t.isRegex) for t in e0.triggers or []] == [("Saltmarket", False), ("cellars", False)]
    # weight is placement (sortOrder), priority is eviction: never mixed
    assert (e1.sortOrder, e1.priority) == (5, 10)
    assert (e2.sortOrder, e2.priority, e2.enabled) == (2, 1, False)
    assert e0.position == "world" and e0.selectiveLogic == "and_any" and e0.probability == 100
    assert e0.caseSensitive is None and e0.matchWholeWords is None and e0.scanDepth is None


def test_st_imported_book_decodes_its_residue() -> None:
    b = read(HARBOR.read_bytes(), HARBOR.name).primary.body
    assert isinstance(b, LorebookBody)
    oda, smugglers, lighthouse = b.entries
    assert b.description == ""
    # ST numeric positions copied raw by Agnai's world-info import
    assert (oda.position, smugglers.position, lighthouse.position) == ("world", "depth", "character")
    assert smugglers.selective is True and smugglers.selectiveLogic == "not_any"  # ST 2
    assert [t.text for t in smugglers.secondaryTriggers or []] == ["night", "fog"]
    assert smugglers.excludeRecursion is True and oda.excludeRecursion is False
    assert oda.secondaryTriggers == []  # [] differs from absent
    assert lighthouse.enabled is False
    assert {(e.sortOrder, e.priority) for e in b.entries} == {(0, 0)}


def test_entry_defaults_and_probability_gate() -> None:
    t = _book(
        [
            {"entry": "a", "keywords": []},
            {"name": "", "entry": "b", "keywords": [], "probability": 40, "useProbability": False},
            {"name": "c", "entry": "c", "keywords": [], "probability": 140, "comment": "c"},
            {"name": "d", "entry": "d", "keywords": [], "probability": 25, "comment": "note"},
        ]
    )
    a, b, c, d = decode(t).primary.body.entries  # type: ignore[union-attr]
    assert (a.title, b.title) == ("Entry 1", "Entry 2")  # no name: Entry N
    assert a.enabled is True and a.constant is False and a.sortOrder == 100 and a.priority == 100
    assert b.probability == 100  # useProbability false: the probability does not apply
    assert c.probability == 100  # clamped to 0..100
    assert d.probability == 25
    assert c.comment is None and d.comment == "note"  # a comment equal to the title is not a second note


def test_ccv3_book_is_read_by_the_shared_mapper_and_written_as_a_memory_book() -> None:
    t = {
        "name": "W",
        "scan_depth": 8,
        "entries": [
            {"id": 3, "keys": ["a"], "content": "A.", "insertion_order": 5, "priority": 7, "name": "Alpha"},
            {"keys": ["b"], "secondary_keys": ["c"], "content": "B.", "case_sensitive": True},
        ],
    }
    # a dedicated CCv3 book reader outbids the 0.7 soft path; asked for by name, Agnai reads it
    assert score("agnai-lorebook", t) == 0.7
    winner = registry.detect(Sniff(orjson.dumps(t), "w.json"))
    assert winner is not None and winner.id != "agnai-lorebook" and winner.score > 0.7
    book = decode(t, fmt="agnai-lorebook").primary
    assert book.source is not None and book.source.format == "agnai-lorebook"
    b = book.body
    assert isinstance(b, LorebookBody) and b.globalScanDepth == 8
    alpha, beta = b.entries
    # CCv3 insertion_order is placement, priority eviction: the same axes as weight and priority
    assert (alpha.id, alpha.title, alpha.sortOrder, alpha.priority) == ("3", "Alpha", 5, 7)
    assert beta.title == "Entry 2" and beta.caseSensitive is True
    assert [x.text for x in beta.secondaryTriggers or []] == ["c"]
    out = encode(book, "agnai-lorebook")  # a real MemoryBook, not the CCv3 tree
    assert out["kind"] == "memory" and out["scanDepth"] == 8 and "scan_depth" not in out
    assert out["entries"][0] == {
        "id": 3,
        "name": "Alpha",
        "entry": "A.",
        "keywords": ["a"],
        "priority": 7,
        "weight": 5,
        "enabled": True,
        "position": "after_char",  # a CCv3 entry without position is after the character
    }
    assert decode(out).primary.body.entries[1].caseSensitive is None  # type: ignore[union-attr]


# --- round trip and canonical stability ---------------------------------------------------------


@pytest.mark.parametrize("path", BOOKS, ids=lambda p: p.name)
def test_samples_round_trip_with_no_difference(path: Path) -> None:
    book = read(path.read_bytes(), path.name).primary
    data = write(book, "agnai-lorebook").data
    assert orjson.loads(data) == tree(path)
    assert data == path.read_bytes()


@pytest.mark.parametrize("path", BOOKS, ids=lambda p: p.name)
def test_canonical_stability_same_format_edited_and_fresh(path: Path) -> None:
    book = read(path.read_bytes(), path.name).primary
    assert decode(encode(book, "agnai-lorebook")).primary.body == book.body
    entries = book.body.model_dump()["entries"]
    entries[0]["content"] = "Rewritten."
    entries.append({"id": "new", "title": "Added", "content": "New entry.", "triggers": [{"text": "added"}]})
    changed = edited(book, entries=entries)
    assert decode(encode(changed, "agnai-lorebook")).primary.body == changed.body


@pytest.mark.parametrize(
    ("path", "losses"),
    [
        (LANTERNFALL, []),
        # residue a fresh MemoryBook cannot hold: ST's depth position, ST-import selectiveLogic
        (HARBOR, ["entries[1].position", "entries[1].selectiveLogic"]),
    ],
    ids=["lanternfall", "harbor"],
)
def test_a_fresh_export_loses_only_the_documented_residue(path: Path, losses: list[str]) -> None:
    book = read(path.read_bytes(), path.name).primary
    again = decode(encode(without_twins(book), "agnai-lorebook")).primary
    assert [c.path for c in diff(book.body.dump(), again.body.dump())] == losses
    for loss in losses:
        assert not registry.get("agnai-lorebook").coverage.covers(loss)  # an expected loss


# --- quirks, one test each ----------------------------------------------------------------------


def test_quirk_selective_logic_residue_is_kept_and_never_authored() -> None:
    book = decode(tree(HARBOR)).primary
    raw_smugglers = tree(HARBOR)["entries"][1]
    entries = book.body.model_dump()["entries"]
    entries[1]["content"] = "Smugglers moved on."
    out = encode(edited(book, entries=entries), "agnai-lorebook")
    assert out["entries"][1] == {**raw_smugglers, "entry": "Smugglers moved on."}  # residue untouched
    entries[1]["selectiveLogic"] = "and_all"
    assert encode(edited(book, entries=entries), "agnai-lorebook")["entries"][1]["selectiveLogic"] == 3
    # an entry that never had the residue does not grow it, and a fresh export never writes it
    entries[0]["selectiveLogic"] = "not_all"
    assert "selectiveLogic" not in encode(edited(book, entries=entries), "agnai-lorebook")["entries"][0]
    fresh = encode(without_twins(book), "agnai-lorebook")
    assert all("selectiveLogic" not in e for e in fresh["entries"])


def test_quirk_unknown_selective_logic_reads_as_and_any_with_a_warning() -> None:
    book = decode(_book([_row(0, selectiveLogic=9)])).primary
    assert book.body.entries[0].selectiveLogic == "and_any"  # type: ignore[union-attr]
    assert book.warnings and "selectiveLogic" in book.warnings[0]
    assert encode(book, "agnai-lorebook")["entries"][0]["selectiveLogic"] == 9


def test_quirk_server_keys_are_never_reintroduced() -> None:
    book = decode(tree(LANTERNFALL)).primary
    assert "_id" not in encode(edited(book, name="Renamed"), "agnai-lorebook")
    fresh = encode(without_twins(book), "agnai-lorebook")
    assert "_id" not in fresh and "userId" not in fresh
    # a book that came embedded in a character (with the server's keys) exported on its own
    _card, embedded = read(MIRELLE.read_bytes(), MIRELLE.name).entities
    assert embedded.original["agnai"].raw["_id"] == "__bundled__characterbook__"
    out = encode(embedded, "agnai-lorebook")
    assert "_id" not in out and "userId" not in out
    assert out == {k: v for k, v in tree(MIRELLE)["characterBook"].items() if k not in ("_id", "userId")}


def test_quirk_book_fields_keep_presence_or_absence() -> None:
    absent = decode(_book([_row(0)])).primary
    out = encode(edited(absent, name="Renamed"), "agnai-lorebook")
    assert not {"scanDepth", "tokenBudget", "recursiveScanning", "extensions", "description"} & set(out)
    present = decode(_book([_row(0)], scanDepth=50, tokenBudget=500, recursiveScanning=False)).primary
    out = encode(edited(present, name="Renamed"), "agnai-lorebook")
    assert (out["scanDepth"], out["tokenBudget"], out["recursiveScanning"]) == (50, 500, False)
    out = encode(edited(present, globalScanDepth=None, tokenBudget=800), "agnai-lorebook")
    assert "scanDepth" not in out and out["tokenBudget"] == 800 and out["recursiveScanning"] is False


def test_quirk_duplicate_ids_get_stable_ids_and_keep_their_own_rows() -> None:
    rows = [
        _row(0, id=7, mark="a"),
        _row(1, id=7, mark="b"),
        _row(2, id=3, mark="c"),
        _row(3, id=7, mark="d"),
    ]
    book = decode(_book(rows)).primary
    assert [e.id for e in book.body.entries] == ["7", "7-2", "3", "7-3"]  # type: ignore[union-attr]
    assert [e.id for e in decode(_book(rows)).primary.body.entries] == ["7", "7-2", "3", "7-3"]  # type: ignore[union-attr]
    entries = book.body.model_dump()["entries"]
    entries.reverse()
    entries[0]["content"] = "edited d"
    out = encode(edited(book, entries=entries), "agnai-lorebook")
    # each row's unknown field stays with its own entry, whatever the order
    assert [(e["mark"], e["entry"]) for e in out["entries"]] == [
        ("d", "edited d"),
        ("c", "text 2"),
        ("b", "text 1"),
        ("a", "text 0"),
    ]
    assert [e["id"] for e in out["entries"]] == [7, 3, 7, 7]  # the raw ids are not rewritten


def test_quirk_entries_pair_with_their_rows_by_id_after_a_delete() -> None:
    rows = [_row(0, id=1, extra="one"), _row(1, id=2, extra="two"), _row(2, id=3, extra="three")]
    book = decode(_book(rows)).primary
    entries = [e for e in book.body.model_dump()["entries"] if e["id"] != "2"]
    out = encode(edited(book, entries=entries), "agnai-lorebook")
    assert out["entries"] == [rows[0], rows[2]]


def test_quirk_an_id_less_row_that_moves_gets_its_id_and_name_written() -> None:
    rows = [{"entry": "a", "keywords": []}, {"entry": "b", "keywords": []}]
    book = decode(_book(rows)).primary
    entries = book.body.model_dump()["entries"]
    entries.reverse()
    changed = edited(book, entries=entries)
    out = encode(changed, "agnai-lorebook")
    assert out["entries"] == [
        {"entry": "b", "keywords": [], "id": 1, "name": "Entry 2"},
        {**rows[0], "id": 0, "name": "Entry 1"},
    ]
    assert decode(out).primary.body == changed.body


def test_quirk_positions_fall_back_to_agnai_two_values_on_a_fresh_export() -> None:
    book = decode(_book([_row(i) for i in range(4)])).primary
    entries = book.body.model_dump()["entries"]
    for e, pos in zip(entries, ["world", "character", "author_note_top", "before_char_defs"], strict=True):
        e["position"] = pos
    out = encode(without_twins(edited(book, entries=entries)), "agnai-lorebook")
    assert [e.get("position") for e in out["entries"]] == [
        None,
        "after_char",
        "after_char",
        "before_char_defs",
    ]


def test_quirk_regex_triggers_are_written_as_their_text() -> None:
    book = decode(_book([_row(0)])).primary
    entries = book.body.model_dump()["entries"]
    entries[0]["triggers"] = [{"text": "drag(on|oon)", "isRegex": True, "flags": "i"}, {"text": "wyrm"}]
    out = encode(without_twins(edited(book, entries=entries)), "agnai-lorebook")
    assert out["entries"][0]["keywords"] == ["drag(on|oon)", "wyrm"]


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("t", "where"),
    [
        ({"kind": "memory", "name": "B"}, "$.entries"),
        ({"kind": "memory", "entries": {"0": {}}}, "$.entries"),
        (_book([_row(0), "second"]), "$.entries[1]"),
        (_book([_row(0, keywords="a, b")]), "$.entries[0].keywords"),
        (_book([_row(0, keywords=["a", True])]), "$.entries[0].keywords[1]"),
        (_book([_row(0, weight="heavy")]), "$.entries[0].weight"),
        (_book([_row(0, priority=True)]), "$.entries[0].priority"),
        (_book([_row(0, id=True)]), "$.entries[0].id"),
        (_book([_row(0, entry=["x"])]), "$.entries[0].entry"),
        (_book([_row(0, position={"at": 1})]), "$.entries[0].position"),
        (_book([_row(0)], scanDepth="deep"), "$.scanDepth"),
        (_book([_row(0)], name=False), "$.name"),
        ({"name": "W", "entries": [{"keys": "a", "content": "A."}]}, "$.entries[0].keys"),
    ],
)
def test_bad_input_is_a_typed_error_with_its_path(t: Any, where: str) -> None:
    with pytest.raises(Malformed) as info:
        decode(t, fmt="agnai-lorebook")
    assert info.value.path == where
    assert not getattr(info.value, "internal", False)


@pytest.mark.parametrize(
    "data",
    [b"[]", b"3", b'{"kind": "memory", ', b"\xff\xfe\x00"],
    ids=["array", "number", "truncated", "junk"],
)
def test_non_objects_are_typed_errors(data: bytes) -> None:
    with pytest.raises(BunzaiError) as info:
        read(data, "b.json", format="agnai-lorebook")
    assert not getattr(info.value, "internal", False)
