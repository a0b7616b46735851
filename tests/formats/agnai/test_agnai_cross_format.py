"""Agnai <-> SillyTavern: a conversion keeps every value the target format holds, and Agnai's own
Tavern export (CCv2 with ``extensions.agnai``) reads onto the same canonical paths as a native
character. A loss is acceptable only where the target's coverage says it cannot hold the path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from agnai_helpers import (
    HARBOR,
    LANTERNFALL,
    MIRELLE,
    PIP,
    SAMPLES,
    decode,
    encode,
    tree,
    without_twins,
)

from bunzai_codecs import Malformed, read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.diff import Change, diff
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.entities import CharacterBody, LorebookBody
from tests.formats.helpers import edited

ST_SAMPLES = sorted((SAMPLES.parent / "sillytavern").glob("*"))
ST_CARDS = [p for p in ST_SAMPLES if p.suffix == ".png" or p.name.endswith((".v2.json", ".v3.json"))]
TAVERN_EXPORTS = {MIRELLE: SAMPLES / "Mirelle-Vane.tavern.json", PIP: SAMPLES / "Pip.tavern.json"}


def _convert(decoded: Decoded, fmt: str) -> Decoded:
    """Write the primary (with its links) as ``fmt`` and read the bytes back."""
    out = write(decoded.primary, fmt, linked=decoded.entities)
    return read(out.data, "converted.json")


def _book(d: Decoded) -> CanonicalEntity:
    [book] = [e for e in d.entities if e.kind == "lorebook"]
    return book


def _losses(before: Any, after: Any) -> list[Change]:
    """What a conversion removed or changed (an app filling in a value is not a loss)."""
    return [c for c in diff(before.dump(), after.dump(), empty_is_absent=True) if c.kind != "added"]


def _uncovered(changes: list[Change], fmt: str) -> list[str]:
    cov = registry.get(fmt).coverage
    return [str(c) for c in changes if cov.covers(c.path)]


# --- Agnai card -> SillyTavern card -------------------------------------------------------------


@pytest.mark.parametrize("path", [MIRELLE, PIP], ids=lambda p: p.name)
def test_agnai_card_to_sillytavern_keeps_what_a_tavern_card_holds(path: Path) -> None:
    src = read(path.read_bytes(), path.name)
    st = _convert(src, "sillytavern")
    assert st.primary.source is not None and st.primary.source.format == "sillytavern"
    assert _uncovered(_losses(src.primary.body, st.primary.body), "sillytavern") == []
    if len(src.entities) > 1:  # the MemoryBook became the card's character_book
        assert _uncovered(_losses(_book(src).body, _book(st).body), "sillytavern") == []


def test_agnai_card_as_a_tavern_card_carries_agnai_block_depth_prompt_and_book() -> None:
    src = read(MIRELLE.read_bytes(), MIRELLE.name)
    card = orjson.loads(write(src.primary, "sillytavern", linked=src.entities).data)
    native = tree(MIRELLE)
    data = card["data"]
    assert data["name"] == "Mirelle Vane" and data["creator_notes"] == native["description"]
    # the text persona is the definition, as Agnai's own Tavern export writes it
    assert data["description"] == native["persona"]["attributes"]["text"][0] and data["personality"] == ""
    assert data["extensions"]["depth_prompt"]["prompt"] == native["insert"]["prompt"]
    assert data["extensions"]["depth_prompt"]["depth"] == 4
    agnai = data["extensions"]["agnai"]
    assert list(agnai) == ["voice", "persona", "appearance", "json", "sprite"][:4]  # Agnai's order; no sprite
    assert agnai["voice"] == native["voice"] and agnai["persona"] == native["persona"]
    assert agnai["appearance"] == native["appearance"] and agnai["json"] == native["json"]
    rows = data["character_book"]["entries"]
    # weight is placement (insertion_order), priority is eviction, as Agnai's own export pairs them
    assert [(r["insertion_order"], r["priority"]) for r in rows] == [(100, 10), (90, 5)]
    assert [r["keys"] for r in rows] == [e["keywords"] for e in native["characterBook"]["entries"]]


@pytest.mark.parametrize("path", [MIRELLE, PIP], ids=lambda p: p.name)
def test_agnai_card_comes_back_from_sillytavern_losing_only_what_a_tavern_card_cannot_hold(
    path: Path,
) -> None:
    src = read(path.read_bytes(), path.name)
    back = _convert(_convert(src, "sillytavern"), "agnai")
    assert back.primary.source is not None and back.primary.source.format == "agnai"
    lost = _losses(src.primary.body, back.primary.body)
    assert _uncovered(lost, "sillytavern") == []
    # the persona, voice, sprite and response schema travelled inside extensions.agnai
    a, b = src.primary.body, back.primary.body
    assert isinstance(a, CharacterBody) and isinstance(b, CharacterBody)
    assert b.persona.structured == a.persona.structured and b.persona.personality == a.persona.personality
    assert b.media.sprite == a.media.sprite and b.settings.responseSchema == a.settings.responseSchema
    assert b.persona.voice is not None and a.persona.voice is not None
    assert b.persona.voice.model_copy(update={"disabled": None}) == a.persona.voice.model_copy(
        update={"disabled": None}
    )
    if len(src.entities) > 1:
        assert _losses(_book(src).body, _book(back).body) == []  # an empty extensions bag is no bag


# --- SillyTavern card -> Agnai card -------------------------------------------------------------


@pytest.mark.parametrize("path", ST_CARDS, ids=lambda p: p.name)
def test_sillytavern_card_to_agnai_keeps_what_agnai_holds(path: Path) -> None:
    src = read(path.read_bytes(), path.name)
    ag = _convert(src, "agnai")
    assert ag.primary.source is not None and ag.primary.source.format == "agnai"
    a, b = src.primary.body, ag.primary.body
    assert isinstance(a, CharacterBody) and isinstance(b, CharacterBody)
    lost = _losses(a, b)
    # the one merge Agnai makes: the definition and the personality become one text persona, read
    # back as the definition
    want = "\n".join(p for p in (a.identity.description, a.persona.personality) if p)
    assert b.identity.description == want and not b.persona.personality
    assert b.persona.structured is not None and b.persona.structured.kind == "text"
    merged = ("identity.description", "persona.personality")
    assert _uncovered([c for c in lost if c.path not in merged], "agnai") == []
    books = [e for e in src.entities if e.kind == "lorebook"]
    if books:
        assert _uncovered(_losses(books[0].body, _book(ag).body), "agnai-lorebook") == []


def test_a_tavern_book_embeds_in_agnai_as_a_memory_book() -> None:
    src = read((SAMPLES.parent / "sillytavern" / "lighthouse-keeper.v2.json").read_bytes(), "l.json")
    out = write(src.primary, "agnai", linked=src.entities)
    native = orjson.loads(out.data)
    book = native["characterBook"]
    assert book["kind"] == "memory" and "_id" not in book and "userId" not in book
    st_book = tree(SAMPLES.parent / "sillytavern" / "lighthouse-keeper.v2.json")["data"]["character_book"]
    assert [e["entry"] for e in book["entries"]] == [e["content"] for e in st_book["entries"]]
    assert [e["weight"] for e in book["entries"]] == [e["insertion_order"] for e in st_book["entries"]]
    assert all("selectiveLogic" not in e for e in book["entries"])  # never authored fresh
    # the card's regex scripts have no Agnai home: written beside, not dropped
    assert [b.entity.kind for b in out.beside] == ["regex"]


# --- Agnai's Tavern export through the sillytavern codec ----------------------------------------


@pytest.mark.parametrize("native", [MIRELLE, PIP], ids=lambda p: p.name)
def test_agnai_tavern_export_maps_its_agnai_block_to_the_native_paths(native: Path) -> None:
    tav = read(TAVERN_EXPORTS[native].read_bytes(), TAVERN_EXPORTS[native].name)
    assert tav.primary.source is not None and tav.primary.source.format == "sillytavern"
    n, t = read(native.read_bytes(), native.name).primary.body, tav.primary.body
    assert isinstance(n, CharacterBody) and isinstance(t, CharacterBody)
    assert t.persona.structured == n.persona.structured
    assert t.persona.appearance == n.persona.appearance
    assert t.settings.responseSchema == n.settings.responseSchema
    assert t.media.sprite == n.media.sprite
    assert n.persona.voice is not None and t.persona.voice is not None
    assert t.persona.voice.disabled is None  # voiceDisabled is not in the Tavern block
    assert t.persona.voice.model_copy(update={"disabled": n.persona.voice.disabled}) == n.persona.voice
    assert "agnai" not in t.extensions  # claimed by the dialect, not left in the bag


@pytest.mark.parametrize("path", list(TAVERN_EXPORTS.values()), ids=lambda p: p.name)
def test_agnai_tavern_export_round_trips_through_sillytavern(path: Path) -> None:
    d = read(path.read_bytes(), path.name)
    out = write(d.primary, "sillytavern", linked=d.entities)
    assert orjson.loads(out.data) == tree(path)
    again = read(out.data, "again.json")
    assert again.primary.body == d.primary.body


def test_agnai_png_export_reads_like_its_json_and_keeps_its_image() -> None:
    """Agnai's Tavern PNG: the avatar with one ``chara`` tEXt chunk (base64 CCv2) before IEND."""
    png_path = SAMPLES / "Pip.card.png"
    d = read(png_path.read_bytes(), png_path.name)
    assert d.primary.source is not None and d.primary.source.format == "sillytavern"
    as_json = read(TAVERN_EXPORTS[PIP].read_bytes(), "pip.json").primary.body
    for path in ("persona.structured", "persona.voice", "media.sprite", "greetings", "prompts"):
        section, _, leaf = path.partition(".")
        a, b = getattr(d.primary.body, section), getattr(as_json, section)
        assert (getattr(a, leaf) if leaf else a) == (getattr(b, leaf) if leaf else b), path
    out = write(d.primary, "sillytavern", linked=d.entities).data
    assert out == png_path.read_bytes()  # unedited: the same bytes


def test_an_edit_rewrites_only_the_edited_part_of_the_agnai_block() -> None:
    d = read(TAVERN_EXPORTS[PIP].read_bytes(), "pip.json")
    sprite = d.primary.body.model_dump()["media"]["sprite"]
    sprite["eyeColor"] = "#00ff00"
    out = encode(edited(d.primary, media={"sprite": sprite}), "sillytavern", d.entities)
    want = tree(TAVERN_EXPORTS[PIP])["data"]["extensions"]["agnai"]
    want["sprite"]["eyeColor"] = "#00ff00"
    assert out["data"]["extensions"]["agnai"] == want


def test_the_agnai_block_is_not_written_for_a_card_that_holds_nothing_only_agnai_writes() -> None:
    for p in ST_CARDS:
        d = read(p.read_bytes(), p.name)
        card = encode(without_twins(d.primary), "sillytavern")
        assert "agnai" not in card["data"]["extensions"], p.name
    # a voice alone (RisuAI and Marinara have one too) does not make a card Agnai's
    d = read(ST_CARDS[0].read_bytes(), ST_CARDS[0].name)
    voiced = edited(d.primary, persona={"voice": {"provider": "vits", "extras": {"model": "m"}}})
    assert "agnai" not in encode(without_twins(voiced), "sillytavern")["data"]["extensions"]


def test_a_bad_agnai_block_is_a_typed_error_with_the_card_path() -> None:
    t = tree(TAVERN_EXPORTS[PIP])
    t["data"]["extensions"]["agnai"]["persona"]["kind"] = 3
    with pytest.raises(Malformed) as info:
        decode(t, fmt="sillytavern")
    assert info.value.path == "$.data.extensions.agnai.persona.kind"
    t["data"]["extensions"]["agnai"] = ["voice"]
    with pytest.raises(Malformed) as info:
        decode(t, fmt="sillytavern")
    assert info.value.path == "$.data.extensions.agnai"
    assert not getattr(info.value, "internal", False)


def test_a_book_read_from_agnai_keeps_its_axes_through_a_tavern_card() -> None:
    src = read(MIRELLE.read_bytes(), MIRELLE.name)
    st_book = _book(_convert(src, "sillytavern")).body
    assert isinstance(st_book, LorebookBody)
    assert [(e.sortOrder, e.priority) for e in st_book.entries] == [(100, 10), (90, 5)]
    assert [e.comment for e in st_book.entries] == ["", "Faction"]
    assert [e.position for e in st_book.entries] == ["world", "character"]


# --- Agnai book <-> SillyTavern world info ------------------------------------------------------

WORLDS = sorted((SAMPLES.parent / "sillytavern").glob("world-*.json"))


def _as_world(book: CanonicalEntity) -> Decoded:
    """The book written as a world-info file and read back under its own name (ST names a world
    by its file, as bunzai's bundle writer does)."""
    assert isinstance(book.body, LorebookBody)
    data = write(book, "sillytavern-lorebook").data
    return read(data, f"{book.body.name}.json")


@pytest.mark.parametrize("path", [LANTERNFALL, HARBOR], ids=lambda p: p.name)
def test_agnai_book_to_world_info_keeps_what_world_info_holds(path: Path) -> None:
    src = read(path.read_bytes(), path.name).primary
    world = _as_world(src).primary
    assert world.source is not None and world.source.format == "sillytavern-lorebook"
    assert _uncovered(_losses(src.body, world.body), "sillytavern-lorebook") == []
    a, b = src.body, world.body
    assert isinstance(a, LorebookBody) and isinstance(b, LorebookBody)
    # placement survives as ST's order; eviction priority has no world-info home
    assert [e.sortOrder for e in b.entries] == [e.sortOrder for e in a.entries]
    assert [(e.title, e.content, e.enabled) for e in b.entries] == [
        (e.title, e.content, e.enabled) for e in a.entries
    ]
    assert [e.triggers for e in b.entries] == [e.triggers for e in a.entries]


def test_agnai_st_residue_goes_home_to_world_info() -> None:
    """An entry Agnai imported from SillyTavern gets its ST position and logic back."""
    world = _as_world(read(HARBOR.read_bytes(), HARBOR.name).primary)
    raw = orjson.loads(write(world.primary, "sillytavern-lorebook").data)
    smugglers = next(e for e in raw["entries"].values() if e["comment"] == "Smugglers")
    assert smugglers["position"] == 4 and smugglers["selectiveLogic"] == 2
    assert smugglers["keysecondary"] == ["night", "fog"] and smugglers["excludeRecursion"] is True
    assert world.primary.body.name == "Harbor Ward"  # type: ignore[union-attr]


@pytest.mark.parametrize("path", [LANTERNFALL, HARBOR], ids=lambda p: p.name)
def test_agnai_book_comes_back_from_world_info_losing_only_what_either_cannot_hold(path: Path) -> None:
    src = read(path.read_bytes(), path.name).primary
    back = read(write(_as_world(src).primary, "agnai-lorebook").data, "back.json").primary
    wi, ag = registry.get("sillytavern-lorebook").coverage, registry.get("agnai-lorebook").coverage
    lost = _losses(src.body, back.body)
    # priority and the book description have no world-info home; a fresh MemoryBook holds no ST
    # position or logic (the residue the Harbor book carried)
    assert [str(c) for c in lost if wi.covers(c.path) and ag.covers(c.path)] == []
    assert {c.path.rsplit(".", 1)[-1] for c in lost} <= {
        "priority",
        "description",
        "position",
        "selectiveLogic",
    }


@pytest.mark.parametrize("path", WORLDS, ids=lambda p: p.name)
def test_world_info_to_agnai_book_keeps_what_agnai_holds(path: Path) -> None:
    src = read(path.read_bytes(), path.name).primary
    out = write(src, "agnai-lorebook").data
    book = orjson.loads(out)
    assert book["kind"] == "memory" and "_id" not in book and "userId" not in book
    assert all("selectiveLogic" not in e for e in book["entries"])  # never authored fresh
    back = read(out, "book.json").primary
    assert back.source is not None and back.source.format == "agnai-lorebook"
    assert _uncovered(_losses(src.body, back.body), "agnai-lorebook") == []
