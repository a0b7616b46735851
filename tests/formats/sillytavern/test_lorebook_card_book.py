"""sillytavern-lorebook, fallback shapes: a standalone CCv3 ``lorebook_v3`` file and a bare
(Chub / card-extracted) ``character_book``, read through the shared card-book mapper and written
back in their own shape."""

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
from tests.conftest import ROOT

FMT = "sillytavern-lorebook"
SAMPLES = ROOT / "samples" / "sillytavern"
V3 = SAMPLES / "world-book-v3.json"
BARE = SAMPLES / "world-character-book.json"


def _score(tree: Any) -> float:
    return registry.get(FMT).detect(Sniff(orjson.dumps(tree), "x.json"))


def test_scores_sit_below_world_info_and_above_the_other_apps_fallbacks() -> None:
    assert registry.detect(Sniff(V3.read_bytes(), V3.name)) == registry.Candidate(FMT, 0.8)
    assert registry.detect(Sniff(BARE.read_bytes(), BARE.name)) == registry.Candidate(FMT, 0.78)
    assert _score({"spec": "lorebook_v3", "data": {"entries": []}}) == 0.8


@pytest.mark.parametrize(
    "tree",
    [
        {"spec": "lorebook_v3", "data": {"entries": {}}},
        {"spec": "lorebook_v3", "data": []},
        {"kind": "memory", "entries": [{"keys": ["a"], "content": "b"}]},
        {"type": "risu", "entries": [{"keys": ["a"], "content": "b"}]},
        {"lorebookVersion": 6, "entries": [{"keys": ["a"], "text": "b"}]},
        {"entries": [{"keywords": ["a"], "entry": "b"}]},
        {"entries": []},
        {"entries": ["a"]},
    ],
)
def test_what_the_fallback_does_not_claim(tree: Any) -> None:
    Codec.detect_errors.clear()
    assert _score(tree) < 0.5
    assert Codec.detect_errors == []


def test_lorebook_v3_decodes_through_the_card_book_mapper() -> None:
    e = read(V3.read_bytes(), V3.name).primary
    b = e.body
    assert (b.name, b.description, b.globalScanDepth, b.tokenBudget, b.globalRecursion) == (
        "Saltmere Almanac",
        "Tides, festivals and guilds of Saltmere.",
        4,
        1024,
        False,
    )
    tides, lantern = b.entries
    assert [(t.text, t.isRegex, t.flags) for t in tides.triggers or []] == [
        ("tide", False, None),
        ("spring tides?", True, "i"),
    ]
    assert tides.position == "world"
    assert (lantern.position, lantern.depth, lantern.role, lantern.selectiveLogic) == (
        "depth",
        2,
        "assistant",
        "and_all",
    )
    assert (lantern.probability, lantern.sticky, lantern.ignoreBudget) == (60, 2, True)
    assert lantern.scanSources == ["persona_description"] and lantern.generationTriggers == ["normal"]


def test_a_bare_book_is_named_by_itself_else_by_its_file() -> None:
    b = read(BARE.read_bytes(), BARE.name).primary.body
    assert b.name == "Guilds of Saltmere"
    guild, master = b.entries
    assert (guild.id, guild.title, guild.comment, guild.priority, guild.sortOrder) == (
        "3",
        "Net-menders",
        "oldest guild",
        5,
        20,
    )
    assert (master.enabled, master.constant, master.title) == (False, True, "Entry 2")
    tree = orjson.loads(BARE.read_bytes())
    del tree["name"]
    assert read(orjson.dumps(tree), "harbor-guilds.json").primary.body.name == "harbor-guilds"


@pytest.mark.parametrize("path", [V3, BARE], ids=lambda p: p.name)
def test_book_shapes_round_trip_in_their_own_shape(path: Path) -> None:
    data = path.read_bytes()
    e = read(data, path.name).primary
    out = write(e, FMT).data
    assert orjson.loads(out) == orjson.loads(data)
    assert read(out, path.name).primary.body == e.body


def test_an_edited_book_entry_keeps_its_unknown_keys_and_the_wrapper() -> None:
    data = V3.read_bytes()
    src = orjson.loads(data)
    e = read(data, V3.name).primary
    e.body.entries[1].content = "Lanterns, and a parade."
    out = orjson.loads(write(e, FMT).data)
    assert out["spec"] == "lorebook_v3"
    assert out["data"]["entries"][0] == src["data"]["entries"][0]
    assert out["data"]["entries"][1]["content"] == "Lanterns, and a parade."
    assert out["data"]["entries"][1]["use_regex"] is True


def test_a_book_exported_fresh_becomes_world_info() -> None:
    e = read(BARE.read_bytes(), BARE.name).primary
    tree = orjson.loads(write(CanonicalEntity(kind="lorebook", id="x", body=e.body), FMT).data)
    assert list(tree["entries"]) == ["3", "7"] and tree["name"] == "Guilds of Saltmere"
    assert tree["entries"]["3"]["order"] == 20 and tree["entries"]["7"]["disable"] is True


@pytest.mark.parametrize(
    ("tree", "path"),
    [
        (
            {"spec": "lorebook_v3", "data": {"entries": [{"keys": "a", "content": "b"}]}},
            "$.data.entries[0].keys",
        ),
        ({"entries": [{"keys": ["a"], "content": "b"}, 4]}, "$.entries[1]"),
        (
            {"name": "n", "entries": [{"keys": ["a"], "content": "b", "extensions": []}]},
            "$.entries[0].extensions",
        ),
    ],
)
def test_bad_book_structure_is_a_typed_error_with_its_path(tree: Any, path: str) -> None:
    with pytest.raises(Malformed) as err:
        read(orjson.dumps(tree), "bad.json", format=FMT)
    assert err.value.path == path
    assert not getattr(err.value, "internal", False)
