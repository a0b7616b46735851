"""Losses found on real files from public repositories (issue 19, part 8), each fixed or classed as an
expected, reported change, and checked through the fidelity machinery (``cross_format`` rows): a
fixed loss leaves no lost or changed path behind; a classed one is reported, and reported expected.

The inputs are small stand-ins with the same shape as the real files (samples/ and the test's own
trees): the real files stay where they were found.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from bunzai_codecs import read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import CharacterBody, LorebookBody, PresetBody
from bunzai_codecs.fidelity import FidelityRow, cross_format

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def _sample(rel: str) -> Any:
    return json.loads((SAMPLES / rel).read_bytes())


def _read(tree: Any, name: str) -> Decoded:
    return read(orjson.dumps(tree), name)


def _cross(d: Decoded, target: str, e: CanonicalEntity | None = None) -> FidelityRow:
    return cross_format(e or d.primary, registry.get(target), pool=d.entities, input="t", name="t.json")


def _paths(row: FidelityRow, cls: str | None = None) -> set[str]:
    """Lost and changed path patterns of a row (of one class, when given)."""
    return {x.path for name, x in row.losses() if name != "added" and (cls is None or x.cls == cls)}


# -- a SillyTavern preset's verbosity "auto" and risu-preset ---------------------------------------


def test_verbosity_auto_survives_risu_preset() -> None:
    """SillyTavern's "auto" (send no verbosity) was dropped: Risu has no "auto", but its verbosity
    slider can be switched off (-1000, what Risu writes for "not set"), which reads back as auto."""
    tree = _sample("sillytavern/preset-noir-detective.json")
    tree["verbosity"] = "auto"
    d = _read(tree, "noir.json")
    body = d.primary.body
    assert isinstance(body, PresetBody) and body.apiOptions.verbosity == "auto"
    out = write(d.primary, "risu-preset", linked=d.entities)
    back = read(out.data, "noir.risup").primary
    assert back.original["risu-preset"].raw["verbosity"] == -1000
    assert isinstance(back.body, PresetBody) and back.body.apiOptions.verbosity == "auto"
    assert "apiOptions.verbosity" not in _paths(_cross(d, "risu-preset"))
    st = read(write(back, "sillytavern-preset").data, "noir.json").primary.body
    assert isinstance(st, PresetBody) and st.apiOptions.verbosity == "auto"


# -- a lorebook key holding a comma, to Risu --------------------------------------------------------


def _comma_world() -> dict[str, Any]:
    tree = _sample("sillytavern/world-harbor-town.json")
    first = next(iter(tree["entries"].values()))
    first["key"] = ["Smith, John", *first["key"]]
    return tree


@pytest.mark.parametrize("target", ["risu-lorebook", "risu"])
def test_a_key_holding_a_comma_is_a_reported_change_to_risu(target: str) -> None:
    """Risu keeps a row's keys as one comma-joined string and splits it on every comma, with no
    escape (its own reader splits "Smith, John" too). The split is reported, expected, never silent."""
    tree = _comma_world()
    if target == "risu":  # the same book, embedded in a card
        card = _sample("sillytavern/lighthouse-keeper.v2.json")
        book = _read(tree, "harbor.json").primary
        card["data"]["character_book"] = orjson.loads(write(book, "chub-lorebook").data)
        d = _read(card, "maren.json")
        row = _cross(d, target)
        prefix = "lorebook[]."
    else:
        d = _read(tree, "harbor.json")
        row = _cross(d, target)
        prefix = ""
    changed = {x.path: x.cls for x in row.changed}
    assert changed.get(f"{prefix}entries[].triggers[].text") == "expected", changed
    assert not _paths(row, "unexpected"), _paths(row, "unexpected")
    # a book without a comma in its keys keeps that path covered: an edit there is still a bug
    cov = registry.get("risu-lorebook").coverage
    assert cov.covers("entries[0].triggers[1].text")
    assert not cov.expects("entries[0].triggers[1].text", {"entries": [{"triggers": [{"text": "a"}]}]})


# -- SillyTavern world entries' own extensions --------------------------------------------------------

WORLD = "sillytavern/world-imported-from-card.json"


def _world() -> Decoded:
    return read((SAMPLES / WORLD).read_bytes(), "Gull Rock.json")


def test_world_entry_extensions_to_chub_are_an_expected_reported_loss() -> None:
    """A world made from a card book ("Import Card Lore") keeps each card entry's extensions in the
    entry. Their keys are the card book's own field slots (position, depth, display_index...), which
    a character_book entry holds for the entry itself: SillyTavern, writing a card book, overwrites
    them the same way. Reported, expected."""
    row = _cross(_world(), "chub-lorebook")
    assert not _paths(row, "unexpected"), _paths(row, "unexpected")
    lost = {x.path: x.cls for x in row.lost}
    assert lost.get("entries[].extensions.display_index") == "expected"
    assert lost.get("entries[].extensions.position") == "expected"


def test_world_entry_extensions_survive_rolecall() -> None:
    """RoleCall keeps ST fields it lacks in ``unsupportedFields``, beside the entry's own extension
    keys; ``vectorized`` was both a field and an extension key, and the extension key was lost."""
    d = _world()
    row = _cross(d, "rolecall-lorebook")
    assert not {p for p in _paths(row) if p.startswith("entries[].extensions")}, _paths(row)
    back = read(write(d.primary, "rolecall-lorebook").data, "x.json").primary.body
    src = d.primary.body
    assert isinstance(back, LorebookBody) and isinstance(src, LorebookBody)
    assert [e.extensions for e in back.entries] == [e.extensions for e in src.entries]
    assert [e.vectorized for e in back.entries] == [e.vectorized for e in src.entries]


def test_world_original_data_is_canonical_and_reported_when_lost() -> None:
    """``originalData`` (the card book a world was made from) rode only in the twin, so every
    conversion dropped it unreported. It is ``LorebookBody.sourceBook``: kept by SillyTavern worlds
    and vaud-json, an expected loss everywhere else."""
    d = _world()
    body = d.primary.body
    assert isinstance(body, LorebookBody)
    assert body.sourceBook == _sample(WORLD)["originalData"]
    for target in ("chub-lorebook", "risu-lorebook", "novelai-lorebook"):
        row = _cross(d, target)
        lost = {x.path: x.cls for x in row.lost}
        assert lost.get("sourceBook.entries[].content") == "expected", (target, lost)
    fresh = CanonicalEntity(kind="lorebook", id="lorebook-x", body=body)  # no twin: a fresh world
    out = orjson.loads(write(fresh, "sillytavern-lorebook").data)
    assert out["originalData"] == _sample(WORLD)["originalData"]


# -- a nickname equal to the name, to Backyard --------------------------------------------------------


@pytest.mark.parametrize("target", ["backyard", "byaf"])
def test_a_nickname_equal_to_the_name_is_no_loss(target: str) -> None:
    """Backyard writes the nickname as ``aiName`` when it differs from the display name; one equal
    to the name means what no nickname means (the name is used) and is not a loss."""
    d = read((SAMPLES / "sillytavern/starship-captain.v3.json").read_bytes(), "s.json")
    body = d.primary.body
    assert isinstance(body, CharacterBody)
    body.identity.nickname = body.identity.name
    row = _cross(d, target)
    assert "identity.nickname" not in _paths(row)
    body.identity.nickname = "Cap"  # a real nickname is still compared
    assert "identity.nickname" not in _paths(_cross(d, target))
    body.identity.nickname = "Someone Else"
    out = write(d.primary, target, linked=d.entities).data
    back = registry.get(target).decode(Sniff(out, "x" + registry.get(target).extension)).primary.body
    assert isinstance(back, CharacterBody) and back.identity.nickname == "Someone Else"


# -- SillyTavern -> Agnai -> SillyTavern ------------------------------------------------------------


def test_st_to_agnai_to_st_keeps_the_description_a_description() -> None:
    """Agnai keeps one text persona; its own Tavern export writes it as the card's description. The
    text persona was read back as the personality, so a card came home with its description moved."""
    d = read((SAMPLES / "sillytavern/starship-captain.v3.json").read_bytes(), "s.json")
    body = d.primary.body
    assert isinstance(body, CharacterBody)
    body.persona.personality = None  # the common card: a description, no separate personality
    there = read(write(d.primary, "agnai", linked=d.entities).data, "a.json")
    back = read(write(there.primary, "sillytavern", linked=there.entities).data, "b.json").primary.body
    assert isinstance(back, CharacterBody)
    assert back.identity.description == body.identity.description
    assert not back.persona.personality
    # with both, Agnai joins them (description first, as its importer does); the description stays first
    d = read((SAMPLES / "sillytavern/starship-captain.v3.json").read_bytes(), "s.json")
    src = d.primary.body
    assert isinstance(src, CharacterBody) and src.identity.description and src.persona.personality
    there = read(write(d.primary, "agnai", linked=d.entities).data, "a.json")
    got = there.primary.body
    assert isinstance(got, CharacterBody)
    assert got.identity.description == f"{src.identity.description}\n{src.persona.personality}"
    assert not got.persona.personality
    row = _cross(d, "agnai")
    assert not _paths(row, "unexpected"), _paths(row, "unexpected")


# -- a bare JSON array of Risu lorebook rows -----------------------------------------------------------


def test_a_bare_array_of_risu_lorebook_rows_is_read() -> None:
    """Risu regex scripts were read from a bare array; lorebook rows were rejected. Both are read,
    and a bare array is written back as a bare array."""
    export = _sample("risu/harbor_lorebook_export.json")
    rows = export["data"]
    data = orjson.dumps(rows)
    got = registry.detect(Sniff(data, "rows.json"))
    assert got is not None and got.id == "risu-lorebook"
    d = read(data, "rows.json")
    whole = read(orjson.dumps(export), "rows.json")
    assert d.primary.body == whole.primary.body
    assert orjson.loads(write(d.primary, "risu-lorebook").data) == rows
    # not ours: Risu regex rows, SillyTavern regex rows, Marinara rows, an empty array
    regex_rows = _sample("risu/harbor_regexscript_export.json")["data"]
    assert registry.detect(Sniff(orjson.dumps(regex_rows), "r.json")).id == "risu-regex"  # type: ignore[union-attr]
    assert registry.get("risu-lorebook").detect(Sniff(b"[]", "e.json")) == 0.0
    for rel in ("sillytavern/regex-scripts.json", "marinara/regex.api-rows.json"):
        assert registry.get("risu-lorebook").detect(Sniff((SAMPLES / rel).read_bytes(), "x.json")) == 0.0
