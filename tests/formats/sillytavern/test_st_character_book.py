"""CCv2/V3 `character_book` <-> canonical lorebook (tavern/character_book.py), every entry field.

Expected values come from SillyTavern's sources and the V2/V3 card specs (docs/formats/sillytavern.md#lorebook-an-embedded-character_book-taverncharacter_bookpy)
and the model (docs/canonical-model.md#lorebook).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.core.overlay import merge3
from bunzai_codecs.entities import LorebookBody
from bunzai_codecs.formats._shared.wire import MapContext
from bunzai_codecs.formats.tavern.character_book import (
    ENTRY_KEY,
    body_to_book,
    book_spelling,
    book_to_body,
    is_character_book,
)
from bunzai_codecs.formats.tavern.lore import parse_key
from tests.formats.helpers import sample


def _book(book: dict[str, Any]) -> LorebookBody:
    return LorebookBody.model_validate(book_to_body(book))


def _entry(entry: dict[str, Any]) -> Any:
    return _book({"entries": [entry]}).entries[0]


def _sample_book() -> dict[str, Any]:
    return json.loads(sample("sillytavern/lighthouse-keeper.v2.json"))["data"]["character_book"]


def test_st_written_entry_maps_every_field() -> None:
    book = _book(_sample_book())
    assert book.name == "Gull Rock" and len(book.entries) == 3
    wren = book.entries[1]
    assert wren.id == "1"
    assert wren.title == "The drowned ship" and wren.comment is None
    assert wren.content.startswith("The Wren sank")
    assert [t.text for t in wren.triggers or []] == ["Wren", "ship"]
    assert [t.text for t in wren.secondaryTriggers or []] == ["drowned", "wreck"]
    assert wren.selective is True
    assert wren.selectiveLogic == "and_all"  # extensions.selectiveLogic 3
    assert wren.position == "depth"  # extensions.position 4 beats "after_char"
    assert (wren.depth, wren.role) == (2, "assistant")
    assert wren.sortOrder == 250 and wren.priority == 100
    assert wren.probability == 40
    assert (wren.scanDepth, wren.caseSensitive, wren.matchWholeWords) == (6, True, True)
    assert (wren.excludeRecursion, wren.preventRecursion, wren.delayUntilRecursion) == (True, True, 2)
    assert (wren.sticky, wren.cooldown, wren.delay) == (3, 5, 1)
    assert (wren.group, wren.groupWeight, wren.groupOverride, wren.useGroupScoring) == (
        "secrets",
        60,
        True,
        None,
    )
    assert wren.scanSources == ["character_description", "character_scenario"]
    assert wren.generationTriggers == ["normal", "swipe"]
    assert (wren.ignoreBudget, wren.vectorized, wren.automationId, wren.displayIndex) == (
        True,
        False,
        "qr-wreck",
        1,
    )
    assert wren.outletName == ""
    assert wren.extensions is None  # every key of its extensions is claimed

    storm = book.entries[2]
    assert storm.title == "Entry 3"  # no name, empty comment
    assert storm.enabled is False and storm.constant is True
    assert storm.position == "outlet" and storm.outletName == "weather"
    assert storm.probability == 100  # useProbability false: ST does not apply it
    assert storm.role == "system"  # role null
    assert storm.sortOrder == 50


@pytest.mark.parametrize(
    ("n", "name"),
    [
        (0, "world"),
        (1, "character"),
        (2, "author_note_top"),
        (3, "author_note_bottom"),
        (4, "depth"),
        (5, "before_example"),
        (6, "after_example"),
        (7, "outlet"),
        (8, "8"),
    ],
)
def test_position_ints_map_to_names_and_back(n: int, name: str) -> None:
    e = _entry({"keys": [], "content": "", "position": "after_char", "extensions": {"position": n}})
    assert e.position == name
    out = body_to_book(LorebookBody(entries=[e]))["entries"][0]
    assert out["extensions"]["position"] == n
    assert out["position"] == ("before_char" if n == 0 else "after_char")  # ST's coarse string


def test_position_string_without_the_int_and_unknown_strings() -> None:
    assert _entry({"position": "before_char"}).position == "world"
    assert _entry({"position": "after_char"}).position == "character"
    # ST's importer reads anything but before_char as after-char: a missing position too
    assert _entry({}).position == "character"
    # off-spec values are kept verbatim (open enum) and written back as they were
    e = _entry({"position": "before_char_defs"})
    assert e.position == "before_char_defs"
    out = body_to_book(LorebookBody(entries=[e]))["entries"][0]
    assert out["position"] == "before_char_defs" and "position" not in out["extensions"]


@pytest.mark.parametrize(("n", "name"), [(0, "and_any"), (1, "not_all"), (2, "not_any"), (3, "and_all")])
def test_selective_logic_numbers(n: int, name: str) -> None:
    e = _entry({"extensions": {"selectiveLogic": n}})
    assert e.selectiveLogic == name
    assert body_to_book(LorebookBody(entries=[e]))["entries"][0]["extensions"]["selectiveLogic"] == n


def test_unknown_selective_logic_falls_back_with_a_warning() -> None:
    ctx = MapContext("$.b")
    row = book_to_body({"entries": [{"extensions": {"selectiveLogic": 9}}]}, ctx)["entries"][0]
    assert row["selectiveLogic"] == "and_any"
    assert ctx.warnings == [
        "$.b.entries[0].extensions.selectiveLogic: unknown selectiveLogic 9 read as and_any"
    ]


def test_regex_keys_are_split_and_use_regex_alone_does_not_make_a_regex() -> None:
    e = _entry({"keys": ["/lamp ?room/i", "plain", "/a/b/gm", "/no end", "//"], "use_regex": True})
    assert [(t.text, t.isRegex, t.flags) for t in e.triggers or []] == [
        ("lamp ?room", True, "i"),
        ("plain", False, None),
        ("a/b", True, "gm"),
        ("/no end", False, None),
        ("//", False, None),
    ]
    out = body_to_book(LorebookBody(entries=[e]))["entries"][0]
    assert out["keys"] == ["/lamp ?room/i", "plain", "/a/b/gm", "/no end", "//"]
    assert out["use_regex"] is True  # any trigger is a regex
    plain = body_to_book(LorebookBody(entries=[_entry({"keys": ["x"], "use_regex": True})]))["entries"][0]
    assert plain["use_regex"] is False  # a V3 reader honouring it must not turn "x" into a regex


def test_key_flags_outside_gimsuy_are_plain_text() -> None:
    assert parse_key("/abc/x") == {"text": "/abc/x"}
    assert parse_key("/abc/") == {"text": "abc", "isRegex": True, "flags": None}


def test_title_is_name_then_comment_then_entry_n() -> None:
    a = _entry({"name": "N", "comment": "C"})
    assert (a.title, a.comment) == ("N", "C")
    b = _entry({"name": "N", "comment": "N"})
    assert (b.title, b.comment) == ("N", None)
    c = _entry({"comment": "C"})
    assert (c.title, c.comment) == ("C", None)
    d = _entry({"name": "", "comment": ""})
    assert d.title == "Entry 1"
    # written back: a separate comment needs both keys; otherwise the comment is the title (ST)
    w = body_to_book(LorebookBody(entries=[a, c]))["entries"]
    assert (w[0]["name"], w[0]["comment"]) == ("N", "C")
    assert "name" not in w[1] and w[1]["comment"] == "C"


def test_probability_and_use_probability() -> None:
    assert _entry({"extensions": {"probability": 30, "useProbability": True}}).probability == 30
    assert _entry({"extensions": {"probability": 30, "useProbability": False}}).probability == 100
    assert _entry({"extensions": {"probability": None}}).probability == 100
    # Chub writes them at the entry's top level
    assert _entry({"probability": 25}).probability == 25
    out = body_to_book(LorebookBody(entries=[_entry({"extensions": {"probability": 30}})]))["entries"][0]
    assert (out["extensions"]["probability"], out["extensions"]["useProbability"]) == (30, True)
    out = body_to_book(LorebookBody(entries=[_entry({})]))["entries"][0]
    assert (out["extensions"]["probability"], out["extensions"]["useProbability"]) == (100, False)


def test_editing_probability_of_an_st_entry_switches_use_probability_on() -> None:
    """The overlay must not keep a stale useProbability:false next to an edited probability."""
    raw = {
        "entries": [
            {
                "id": 0,
                "keys": ["a"],
                "content": "x",
                "extensions": {"probability": 50, "useProbability": False},
            }
        ]
    }
    base = _book(raw)
    edited = base.model_copy(deep=True)
    edited.entries[0].probability = 30
    out = merge3(raw, body_to_book(base), body_to_book(edited), list_key=ENTRY_KEY)
    x = out["entries"][0]["extensions"]
    assert (x["probability"], x["useProbability"]) == (30, True)


def test_camel_case_extension_keys_from_risu_and_chub_are_read() -> None:
    e = _entry(
        {
            "extensions": {
                "excludeRecursion": True,
                "displayIndex": 7,
                "groupWeight": 20,
                "caseSensitive": False,
                "matchWholeWords": True,
                "scanDepth": 3,
                "addMemo": True,
                "weight": 4,
            }
        }
    )
    assert (e.excludeRecursion, e.displayIndex, e.groupWeight) == (True, 7, 20)
    assert (e.caseSensitive, e.matchWholeWords, e.scanDepth) == (False, True, 3)
    assert e.extensions == {"addMemo": True, "weight": 4}  # unclaimed keys stay, verbatim
    # snake_case wins when both spellings are present
    assert _entry({"extensions": {"groupWeight": 1, "group_weight": 2}}).groupWeight == 2
    assert _entry({"extensions": {"group_weight": 2, "groupWeight": 1}}).groupWeight == 2


def test_case_sensitive_extensions_first_then_the_spec_field() -> None:
    assert _entry({"case_sensitive": True, "extensions": {"case_sensitive": False}}).caseSensitive is False
    assert _entry({"case_sensitive": True, "extensions": {"case_sensitive": None}}).caseSensitive is True
    assert _entry({"case_sensitive": False}).caseSensitive is False
    out = body_to_book(LorebookBody(entries=[_entry({"case_sensitive": True})]))["entries"][0]
    assert "case_sensitive" not in out and out["extensions"]["case_sensitive"] is True


def test_spelling_is_detected_and_written_back() -> None:
    camel = {"entries": [{"extensions": {"excludeRecursion": False, "displayIndex": 0}}]}
    assert book_spelling(camel) == "camel"
    assert book_spelling(_sample_book()) == "snake"
    out = body_to_book(_book(camel), spelling="camel")["entries"][0]["extensions"]
    assert "excludeRecursion" in out and "exclude_recursion" not in out


def test_delay_until_recursion_bool_or_level() -> None:
    assert _entry({"extensions": {"delay_until_recursion": True}}).delayUntilRecursion == 1
    assert _entry({"extensions": {"delay_until_recursion": False}}).delayUntilRecursion == 0
    assert _entry({"extensions": {"delay_until_recursion": 3}}).delayUntilRecursion == 3
    out = body_to_book(LorebookBody(entries=[_entry({})]))["entries"][0]["extensions"]
    assert out["delay_until_recursion"] is False  # what ST writes for "no delay"


def test_character_filter_and_risu_folder() -> None:
    e = _entry({"character_filter": {"isExclude": True, "names": ["Amy"], "tags": []}, "folder": "folder:1"})
    assert (
        e.characterFilter is not None and e.characterFilter.isExclude and e.characterFilter.names == ["Amy"]
    )
    assert e.categoryId == "folder:1"
    out = body_to_book(LorebookBody(entries=[e]))["entries"][0]
    assert out["character_filter"] == {"isExclude": True, "names": ["Amy"], "tags": []}
    assert out["folder"] == "folder:1"


def test_book_level_fields() -> None:
    book = _book(
        {
            "name": "B",
            "description": "d",
            "scan_depth": 5,
            "token_budget": 500,
            "recursive_scanning": False,
            "extensions": {"risu_fullWordMatching": True, "chub": {"id": 1}},
            "entries": [],
        }
    )
    assert (book.name, book.description, book.globalScanDepth, book.tokenBudget, book.globalRecursion) == (
        "B",
        "d",
        5,
        500,
        False,
    )
    assert book.globalMatchWholeWords is True
    assert book.extensions == {"chub": {"id": 1}}
    out = body_to_book(book)
    assert out["extensions"] == {"chub": {"id": 1}, "risu_fullWordMatching": True}
    assert (out["scan_depth"], out["token_budget"], out["recursive_scanning"]) == (5, 500, False)


def test_ids_missing_repeated_and_string() -> None:
    book = _book({"entries": [{}, {"id": 5}, {"id": 5}, {"id": "x"}]})
    assert [e.id for e in book.entries] == ["0", "5", "5-2", "x"]
    assert [e["id"] for e in body_to_book(book)["entries"]] == [0, 5, "5-2", "x"]


def test_every_field_survives_body_to_book_to_body() -> None:
    book = _book(_sample_book())
    assert _book(body_to_book(book)) == book


def test_unedited_book_overlay_is_the_twin() -> None:
    raw = _sample_book()
    base = body_to_book(_book(raw))
    assert merge3(raw, base, body_to_book(_book(raw)), list_key=ENTRY_KEY) is raw


def test_is_character_book() -> None:
    assert is_character_book(_sample_book())
    assert is_character_book({"name": "x", "entries": []})
    assert not is_character_book({"entries": {"0": {"key": []}}})  # ST world info
    assert not is_character_book({"entries": [{"keywords": ["a"], "entry": "x"}]})  # Agnai memory book
    assert not is_character_book([])


@pytest.mark.parametrize(
    ("book", "path"),
    [
        ({"entries": {"0": {}}}, "$.data.character_book.entries"),
        ({"entries": [{}, "x"]}, "$.data.character_book.entries[1]"),
        ({"entries": [{"keys": "a,b"}]}, "$.data.character_book.entries[0].keys"),
        ({"entries": [{}, {}, {}, {"keys": ["a", None]}]}, "$.data.character_book.entries[3].keys[1]"),
        ({"entries": [{"enabled": "yes"}]}, "$.data.character_book.entries[0].enabled"),
        ({"entries": [{"extensions": []}]}, "$.data.character_book.entries[0].extensions"),
        (
            {"entries": [{"extensions": {"depth": "deep"}}]},
            "$.data.character_book.entries[0].extensions.depth",
        ),
        (
            {"entries": [{"extensions": {"exclude_recursion": 2}}]},
            "$.data.character_book.entries[0].extensions.exclude_recursion",
        ),
        ({"entries": [{"insertion_order": [1]}]}, "$.data.character_book.entries[0].insertion_order"),
        ({"entries": [{"id": True}]}, "$.data.character_book.entries[0].id"),
        ({"entries": [{"position": {"x": 1}}]}, "$.data.character_book.entries[0].position"),
        ({"scan_depth": "far", "entries": []}, "$.data.character_book.scan_depth"),
    ],
)
def test_wrong_types_are_malformed_with_the_json_path(book: dict[str, Any], path: str) -> None:
    with pytest.raises(Malformed) as err:
        book_to_body(book, MapContext("$.data.character_book"))
    assert err.value.path == path
