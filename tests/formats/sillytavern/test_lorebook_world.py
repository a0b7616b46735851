"""sillytavern-lorebook: SillyTavern world info files (docs/formats/sillytavern.md#sillytavern-world-info-chat-completion-presets-personas, docs/canonical-model.md#lorebook)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from bunzai_codecs import Malformed, read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import Codec
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.sniff import Sniff
from tests.conftest import ROOT, expect_rows

FMT = "sillytavern-lorebook"
SAMPLES = ROOT / "samples" / "sillytavern"
HARBOR = SAMPLES / "world-harbor-town.json"
LEGACY = SAMPLES / "world-legacy-minimal.json"


def _bytes(tree: Any) -> bytes:
    return orjson.dumps(tree)


def _world(**entry: Any) -> bytes:
    return _bytes({"entries": {"0": {"uid": 0, "key": ["k"], "content": "c", **entry}}})


def _decode(data: bytes, name: str = "World.json") -> CanonicalEntity:
    return registry.get(FMT).decode(Sniff(data, name)).primary


def _fresh(e: CanonicalEntity) -> dict[str, Any]:
    """The entity written without its twin, as an export from another app would be."""
    bare = CanonicalEntity(kind=e.kind, id=e.id, body=e.body)
    return orjson.loads(write(bare, FMT).data)


def _score(data: bytes, name: str = "x.json") -> float:
    return registry.get(FMT).detect(Sniff(data, name))


# -- detection ----------------------------------------------------------------------------------------


def test_world_info_files_detect_at_the_native_score() -> None:
    for p in (HARBOR, LEGACY):
        s = Sniff(p.read_bytes(), p.name)
        assert registry.get(FMT).detect(s) == 0.9
        assert registry.detect(s) == registry.Candidate(FMT, 0.9)
    assert _score(b'{"entries": {}}') == 0.9  # a new, empty world


@pytest.mark.parametrize(
    "tree",
    [
        {"spec": "chara_card_v2", "data": {"name": "A", "character_book": {"entries": []}}},
        {"type": "risu", "ver": 1, "data": [{"key": "a", "content": "b"}]},
        {"entries": {"0": "not an entry"}},
        {"entries": {"0": {"unrelated": 1}}},
        {"entries": [{"keywords": ["a"], "entry": "b", "name": "c"}], "kind": "memory"},
        {"lorebookVersion": 6, "entries": [{"text": "a", "keys": ["b"]}]},
        {"personas": {}, "persona_descriptions": {}},
        [{"entries": {}}],
    ],
)
def test_what_world_info_does_not_claim(tree: Any) -> None:
    Codec.detect_errors.clear()
    assert _score(_bytes(tree)) < 0.5
    assert Codec.detect_errors == []


# -- decode, field by field -----------------------------------------------------------------------------


def test_harbor_sample_decodes_every_field() -> None:
    e = _decode(HARBOR.read_bytes(), HARBOR.name)
    b = e.body
    assert b.name == "world-harbor-town"  # the file stem
    assert b.extensions == {"harbor_editor": {"version": 2}}
    assert [x.id for x in b.entries] == ["0", "1", "2", "3", "4", "5", "6", "7", "9"]
    harbor, keeper, council, smugglers, weather, gull, dialect, tavern, outlet = b.entries

    assert harbor.title == "The Harbor"
    assert [t.model_dump(exclude_none=True) for t in harbor.triggers or []] == [
        {"text": "harbor", "isRegex": False},
        {"text": "port ?town", "isRegex": True, "flags": "i"},
    ]
    assert harbor.secondaryTriggers == []
    assert harbor.position == "world" and harbor.role == "system"  # role null is system
    assert harbor.scanSources == ["character_description", "character_scenario"]
    assert harbor.sticky == 0 and harbor.cooldown == 0 and harbor.delay == 0
    assert harbor.characterFilter is not None and harbor.characterFilter.isExclude is False
    assert harbor.generationTriggers == []
    assert (harbor.group, harbor.outletName, harbor.automationId) == ("", "", "")  # verbatim, as a card book

    assert keeper.position == "character"
    assert [t.text for t in keeper.secondaryTriggers or []] == ["storm", "night"]
    assert keeper.selective is True and keeper.selectiveLogic == "not_all"
    assert keeper.sortOrder == 90 and keeper.probability == 75
    assert (
        keeper.ignoreBudget is True and keeper.excludeRecursion is True and keeper.preventRecursion is False
    )
    assert keeper.delayUntilRecursion == 2
    assert (keeper.group, keeper.groupOverride, keeper.groupWeight, keeper.useGroupScoring) == (
        "keepers",
        True,
        40,
        False,
    )
    assert (keeper.scanDepth, keeper.caseSensitive, keeper.matchWholeWords) == (6, True, True)
    assert keeper.automationId == "qr-lighthouse"
    assert (keeper.sticky, keeper.cooldown, keeper.delay) == (3, 2, 5)
    assert keeper.generationTriggers == ["normal", "continue"]
    assert keeper.displayIndex == 1
    assert keeper.characterFilter is not None
    assert keeper.characterFilter.model_dump() == {
        "isExclude": True,
        "names": ["Brenna"],
        "tags": ["1718000000000"],
    }
    assert keeper.scanSources is None  # the entry has no match* flags at all

    assert council.enabled is False and council.position == "author_note_top"
    assert council.selectiveLogic == "not_any"
    assert council.probability == 100  # useProbability false: the 30 is not in force (twin keeps it)
    assert smugglers.position == "author_note_bottom" and smugglers.selectiveLogic == "and_all"
    assert (weather.position, weather.depth, weather.role, weather.constant) == ("depth", 2, "user", True)
    assert (gull.position, gull.depth, gull.role) == ("depth", 0, "assistant")
    assert dialect.position == "before_example"
    assert tavern.position == "after_example"
    assert tavern.title == "Entry 8"  # blank comment: the entry's place in the book
    assert outlet.position == "outlet" and outlet.outletName == "MapPanel"
    assert outlet.extensions == {"my_tool": {"pinned": True}}
    assert all(x.priority == 100 for x in b.entries)  # world info has no eviction axis
    assert e.warnings == []


def test_legacy_minimal_entries_get_the_template_defaults() -> None:
    mill, river = _decode(LEGACY.read_bytes(), LEGACY.name).body.entries
    assert mill.title == "Entry 1" and mill.selective is False
    assert (mill.depth, mill.role, mill.probability, mill.sortOrder, mill.delayUntilRecursion) == (
        4,
        "system",
        100,
        100,
        0,
    )
    assert mill.scanSources is None and mill.generationTriggers is None and mill.characterFilter is None
    assert river.constant is True and river.position == "character"


# -- enumerations ----------------------------------------------------------------------------------------

POSITIONS = {
    0: "world",
    1: "character",
    2: "author_note_top",
    3: "author_note_bottom",
    4: "depth",
    5: "before_example",
    6: "after_example",
    7: "outlet",
}


@pytest.mark.parametrize(("number", "name"), POSITIONS.items())
def test_every_position_number_maps_to_its_name_and_back(number: int, name: str) -> None:
    e = _decode(_world(position=number))
    assert e.body.entries[0].position == name
    assert _fresh(e)["entries"]["0"]["position"] == number


@pytest.mark.parametrize(("number", "name"), {0: "system", 1: "user", 2: "assistant"}.items())
def test_every_role_number_maps_to_its_name_and_back(number: int, name: str) -> None:
    e = _decode(_world(position=4, role=number))
    assert e.body.entries[0].role == name
    assert _fresh(e)["entries"]["0"]["role"] == number


@pytest.mark.parametrize(("number", "name"), {0: "and_any", 1: "not_all", 2: "not_any", 3: "and_all"}.items())
def test_every_selective_logic_number_maps_to_its_name_and_back(number: int, name: str) -> None:
    e = _decode(_world(selectiveLogic=number, keysecondary=["s"]))
    assert e.body.entries[0].selectiveLogic == name
    assert _fresh(e)["entries"]["0"]["selectiveLogic"] == number


@pytest.mark.parametrize("value", [8, -1, "before_char_defs"])
def test_an_unknown_position_is_kept_verbatim(value: Any) -> None:
    e = _decode(_world(position=value))
    assert e.body.entries[0].position == str(value)
    assert _fresh(e)["entries"]["0"]["position"] == value  # numbers stay numbers
    assert orjson.loads(write(e, FMT).data)["entries"]["0"]["position"] == value


def test_an_unknown_selective_logic_reads_as_and_any_and_the_twin_keeps_it() -> None:
    data = _world(selectiveLogic=7)
    e = _decode(data)
    assert e.body.entries[0].selectiveLogic == "and_any"
    assert any("selectiveLogic" in w and "7" in w for w in e.warnings)
    assert orjson.loads(write(e, FMT).data) == orjson.loads(data)


def test_an_unknown_role_reads_as_system_and_the_twin_keeps_it() -> None:
    data = _world(position=4, role=5)
    e = _decode(data)
    assert e.body.entries[0].role == "system"
    assert e.warnings and "role" in e.warnings[0]
    assert orjson.loads(write(e, FMT).data) == orjson.loads(data)


@pytest.mark.parametrize(
    ("wire", "level", "back"), [(False, 0, False), (True, 1, True), (3, 3, 3), (0, 0, False)]
)
def test_delay_until_recursion_is_a_bool_or_a_level(wire: Any, level: int, back: Any) -> None:
    e = _decode(_world(delayUntilRecursion=wire))
    assert e.body.entries[0].delayUntilRecursion == level
    assert (
        _fresh(e)["entries"]["0"]["delayUntilRecursion"] is back
        or _fresh(e)["entries"]["0"]["delayUntilRecursion"] == back
    )


def test_a_key_is_a_regex_only_when_written_slash_pattern_slash_flags() -> None:
    e = _decode(_world(key=["/a/b/gi", "/plain", "a/b/", "/x/q", "//"]))
    got = [(t.text, t.isRegex, t.flags) for t in e.body.entries[0].triggers or []]
    assert got == [
        ("a/b", True, "gi"),
        ("/plain", False, None),
        ("a/b/", False, None),
        ("/x/q", False, None),
        ("//", False, None),
    ]
    assert _fresh(e)["entries"]["0"]["key"] == ["/a/b/gi", "/plain", "a/b/", "/x/q", "//"]


# -- round trips ----------------------------------------------------------------------------------------


def _roundtrip(data: bytes, name: str) -> tuple[CanonicalEntity, bytes]:
    d = read(data, name)
    return d.primary, write(
        d.primary, d.primary.source.format if d.primary.source else FMT, linked=d.entities
    ).data


@pytest.mark.parametrize("path", [HARBOR, LEGACY], ids=lambda p: p.name)
def test_samples_round_trip_and_are_canonically_stable(path: Path) -> None:
    data = path.read_bytes()
    e, out = _roundtrip(data, path.name)
    assert orjson.loads(out) == orjson.loads(data)
    assert read(out, path.name).primary.body == e.body
    fresh = _fresh(e)  # a twin-less export decodes to the same body too
    assert read(_bytes(fresh), path.name).primary.body == e.body


@pytest.mark.parametrize(("rel", "fmt"), [r for r in expect_rows(FMT) if r[1] == FMT] or [("-", FMT)])
def test_corpus_world_info_detects_and_round_trips(corpus: Path, rel: str, fmt: str) -> None:
    src = corpus / rel
    data = src.read_bytes()
    assert registry.detect(Sniff(data, src.name)) == registry.Candidate(fmt, 0.9)
    e, out = _roundtrip(data, src.name)
    assert orjson.loads(out) == orjson.loads(data)
    assert read(out, src.name).primary.body == e.body
    assert e.warnings == []


def test_an_edit_changes_only_its_entry_and_spells_out_no_defaults() -> None:
    data = LEGACY.read_bytes()
    src = orjson.loads(data)
    e = _decode(data, LEGACY.name)
    e.body.entries[0].content = "The mill turns again."
    out = orjson.loads(write(e, FMT).data)
    assert out["entries"]["1"] == src["entries"]["1"]
    assert out["entries"]["0"] == {**src["entries"]["0"], "content": "The mill turns again."}
    assert list(out["entries"]["0"]) == list(src["entries"]["0"])  # key order and key set kept


def test_deleting_and_adding_entries_keeps_the_others_byte_for_byte() -> None:
    data = HARBOR.read_bytes()
    src = orjson.loads(data)
    e = _decode(data, HARBOR.name)
    new = e.body.entries[0].model_copy(update={"id": "new-entry", "title": "Fish market"})
    e.body.entries = [x for x in e.body.entries if x.id != "2"] + [new]
    out = orjson.loads(write(e, FMT).data)
    # the new entry takes the lowest uid no entry of the twin used: it inherits nothing from "2"
    assert list(out["entries"]) == ["0", "1", "3", "4", "5", "6", "7", "9", "8"]
    assert out["entries"]["8"]["uid"] == 8 and out["entries"]["8"]["comment"] == "Fish market"
    for k in ("0", "1", "3", "9"):
        assert out["entries"][k] == src["entries"][k]
    assert out["extensions"] == src["extensions"]


def test_original_data_and_unknown_keys_ride_in_escrow() -> None:
    tree = {
        "entries": {"0": {"uid": 0, "key": ["a"], "content": "b", "addMemo": False, "x_future": [1, 2]}},
        "originalData": {"name": "Book", "entries": [{"keys": ["a"], "content": "b"}]},
        "name": "Display name",
    }
    e = _decode(_bytes(tree), "stem.json")
    assert e.body.name == "stem"
    e.body.entries[0].content = "c"
    out = orjson.loads(write(e, FMT).data)
    assert out["originalData"] == tree["originalData"] and out["name"] == "Display name"
    assert out["entries"]["0"]["x_future"] == [1, 2] and out["entries"]["0"]["addMemo"] is False


def test_a_fresh_export_writes_the_book_name_and_the_full_entry_template() -> None:
    e = _decode(LEGACY.read_bytes(), LEGACY.name)
    out = _fresh(e)
    assert out["name"] == "world-legacy-minimal"
    entry = out["entries"]["1"]
    assert entry["comment"] == "River" and entry["disable"] is False and entry["useProbability"] is True
    assert {"sticky", "cooldown", "delay", "scanDepth", "caseSensitive", "role"} <= set(entry)
    assert "matchScenario" not in entry and "triggers" not in entry  # the source had neither


# -- bad input -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tree", "path"),
    [
        ([1, 2], "$"),
        ({"name": "x"}, "$.entries"),
        ({"entries": "0"}, "$.entries"),
        ({"entries": {"0": 5}}, "$.entries['0']"),
        ({"entries": {"0": {"key": "a, b"}}}, "$.entries['0'].key"),
        ({"entries": {"0": {"key": ["a", {"x": 1}]}}}, "$.entries['0'].key[1]"),
        ({"entries": {"0": {"key": [], "keysecondary": 3}}}, "$.entries['0'].keysecondary"),
        ({"entries": {"0": {"triggers": "normal"}}}, "$.entries['0'].triggers"),
        (
            {"entries": {"0": {"characterFilter": {"names": "Brenna"}}}},
            "$.entries['0'].characterFilter.names",
        ),
    ],
)
def test_bad_structure_is_a_typed_error_with_its_path(tree: Any, path: str) -> None:
    with pytest.raises(Malformed) as err:
        read(_bytes(tree), "bad.json", format=FMT)
    assert err.value.path == path
    assert not getattr(err.value, "internal", False)


def test_not_json_is_malformed() -> None:
    with pytest.raises(Malformed):
        read(b"entries: {}", "bad.json", format=FMT)


def test_a_wrong_scalar_is_a_warning_and_the_default() -> None:
    data = _world(order="soon", probability=True, comment=["x"], depth="7")
    e = _decode(data)
    x = e.body.entries[0]
    assert (x.sortOrder, x.probability, x.title, x.depth) == (100, 100, "Entry 1", 7)
    assert sorted(e.warnings) == [  # "7" is read (and noted); the others are the default (and noted)
        "$.entries['0'].comment: expected a string, found an array; read as ''",
        "$.entries['0'].depth: expected a number, found the string '7'; read as 7",
        "$.entries['0'].order: expected a number, found the string 'soon'; read as 100",
        "$.entries['0'].probability: expected a number, found the boolean true; read as 100",
    ]
    assert orjson.loads(write(e, FMT).data) == orjson.loads(data)
