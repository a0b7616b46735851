"""Chub's ``extensions.chub`` on Tavern cards: read by ``sillytavern`` through the Chub dialect, a
lens from the bag onto ``media.assets`` (docs/formats/chub.md#extensionschub-on-cards-chubdialect-a-lens)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import corpus_root

from bunzai_codecs import read
from bunzai_codecs.entities import CharacterBody
from bunzai_codecs.formats.chub.dialect import derived_media
from tests.formats.codec_helpers import decode, dumps, export, rt_compare, sample_tree, winner
from tests.formats.helpers import edited, sample

ST = "sillytavern"
BEXLEY = "chub/dockhand.chub.v3.json"


def body(data: bytes) -> CharacterBody:
    b = decode(data).primary.body
    assert isinstance(b, CharacterBody)
    return b


def card(chub: Any, **data: Any) -> bytes:
    return dumps(
        {
            "spec": "chara_card_v3",
            "spec_version": "3.0",
            "data": {"name": "C", **data, "extensions": {"chub": chub}},
        }
    )


def test_chub_cards_are_sillytavern_cards() -> None:
    assert winner(sample(BEXLEY)) == ST


def test_background_and_expressions_become_media_after_the_cards_own_assets() -> None:
    b = body(sample(BEXLEY))
    assert b.media.portrait is not None and b.media.portrait.ref == "https://example.invalid/bexley/main.png"
    assert [(m.role, m.ref, m.name, m.label) for m in b.media.assets or []] == [
        ("background", "https://example.invalid/bexley/market.webp", "background", "chub background_image"),
        ("emotion", "https://example.invalid/bexley/joy.png", "joy", "chub expression"),
        ("emotion", "https://example.invalid/bexley/anger.png", "anger", "chub expression"),  # {url}
    ]  # "broken": 5 is not an image reference: not derived


def test_the_bag_itself_stays_verbatim_in_extensions() -> None:
    assert body(sample(BEXLEY)).extensions["chub"] == sample_tree(BEXLEY)["data"]["extensions"]["chub"]


def test_alt_expressions_are_used_only_when_expressions_is_empty() -> None:
    alt = {"expressions": {}, "alt_expressions": {"sad": {"uri": "u-sad"}}}
    assert [m["ref"] for m in derived_media(alt)] == ["u-sad"]
    both = {"expressions": {"joy": "u-joy"}, "alt_expressions": {"sad": "u-sad"}}
    assert [m["ref"] for m in derived_media(both)] == ["u-joy"]
    assert derived_media({"expressions": None, "alt_expressions": None, "background_image": ""}) == []
    assert derived_media("not a bag") == [] and derived_media({"expressions": ["x"]}) == []
    obj = {"expressions": {"a": {"path": "p"}, "b": {"image": "i"}, "c": {"src": "s"}, "d": {"other": "o"}}}
    assert [m["ref"] for m in derived_media(obj)] == ["p", "i", "s"]


def test_round_trip_and_canonical_stability() -> None:
    data = sample(BEXLEY)
    d = decode(data)
    out = export(d.primary, ST)
    assert rt_compare(data, out) == []
    assert decode(out).primary.body == d.primary.body


def test_an_edit_does_not_turn_the_derived_media_into_card_assets() -> None:
    d = decode(sample(BEXLEY))
    out = json.loads(export(edited(d.primary, identity={"name": "Bex"}), ST))
    assert out["data"]["name"] == "Bex"
    assert out["data"]["assets"] == sample_tree(BEXLEY)["data"]["assets"]
    assert out["data"]["extensions"]["chub"] == sample_tree(BEXLEY)["data"]["extensions"]["chub"]


def test_a_card_without_assets_stays_without_assets() -> None:
    d = decode(card({"background_image": "https://x/bg.png"}, description="d"))
    b = d.primary.body
    assert (
        isinstance(b, CharacterBody) and b.media.portrait is not None and b.media.portrait.ref == "ccdefault:"
    )
    out = json.loads(export(edited(d.primary, identity={"description": "e"}), ST))
    assert "assets" not in out["data"]


def test_an_edited_derived_item_is_written_as_a_real_asset() -> None:
    d = decode(sample(BEXLEY))

    def change(b: dict[str, Any]) -> None:
        assert b["media"]["assets"]
        b["media"]["assets"][0]["ref"] = "https://example.invalid/bexley/night-market.webp"

    out = json.loads(export(edited(d.primary, change), ST))
    assert out["data"]["assets"][-1] == {
        "type": "background",
        "uri": "https://example.invalid/bexley/night-market.webp",
        "name": "background",
        "ext": "webp",
    }
    assert (
        out["data"]["extensions"]["chub"]["background_image"] == "https://example.invalid/bexley/market.webp"
    )


def test_to_another_tavern_app_the_bag_rides_along() -> None:
    d = decode(sample(BEXLEY))
    rc = json.loads(export(d.primary, "rolecall"))
    assert rc["data"]["extensions"]["chub"] == sample_tree(BEXLEY)["data"]["extensions"]["chub"]
    assert rc["data"]["assets"] == sample_tree(BEXLEY)["data"]["assets"]
    assert body(dumps(rc)).media == body(sample(BEXLEY)).media


def test_corpus_chub_card_detects_as_sillytavern_and_round_trips() -> None:
    root = corpus_root()
    if root is None:
        pytest.skip("shared corpus not present")
    p: Path = root / "chub/character.rich-extensions.hoplight-fixture.json"
    data = p.read_bytes()
    assert winner(data) == ST
    d = read(data, p.name)
    b = d.primary.body
    assert isinstance(b, CharacterBody)
    assert [(m.role, m.ref) for m in b.media.assets or []] == [
        ("background", "https://example.invalid/bg/dock.webp")
    ]
    assert b.extensions["chub"]["custom_css"].startswith("/* fixture css */")
    assert b.settings.talkativeness == 0.5
    out = export(d.primary, ST, d.entities)
    assert rt_compare(data, out) == [] and read(out, p.name).primary.body == b
