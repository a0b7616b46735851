"""Cross-format: each new character format to and from the SillyTavern card, and the lore they
carry to and from its embedded ``character_book``. What the target declares it carries must
survive; what it cannot hold is an expected loss (coverage)."""

from __future__ import annotations

import json

import pytest

from bunzai_codecs import read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import EmitContext
from bunzai_codecs.entities import CharacterBody, LorebookBody
from tests.formats.helpers import chunks, covered_losses, sample

ST_CARD = "sillytavern/lighthouse-keeper.v2.json"
ST_PNG = "sillytavern/tidepool.png"
OURS = {
    "pygmalion": ["pygmalion/oskar.pygmalion.json", "pygmalion/ines.pygmalion.png"],
    "backyard": ["backyard/maelis.v4.backyard.png", "backyard/tidecaller.v2.backyard.png"],
    "byaf": ["backyard/maelis.byaf"],
}


def _books(entities: list) -> list[LorebookBody]:  # type: ignore[type-arg]
    return [e.body for e in entities if e.kind == "lorebook"]


@pytest.mark.parametrize("fmt,rel", [(f, r) for f, rels in OURS.items() for r in rels])
def test_to_sillytavern_keeps_what_a_tavern_card_carries(fmt: str, rel: str) -> None:
    d = read(sample(rel), rel)
    assert d.primary.source.format == fmt  # type: ignore[union-attr]
    card = write(d.primary, "sillytavern", linked=d.entities)
    assert card.beside == []  # the lore went into the card's character_book
    back = read(card.data, "card.json")
    assert back.primary.source.format == "sillytavern"  # type: ignore[union-attr]
    assert covered_losses(d.primary, back.primary, "sillytavern") == []
    ours, theirs = _books(d.entities), _books(back.entities)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert [(e.content, e.triggers) for e in a.entries] == [(e.content, e.triggers) for e in b.entries]


@pytest.mark.parametrize("fmt", ["pygmalion", "backyard", "byaf"])
def test_from_sillytavern_keeps_what_the_target_carries(fmt: str) -> None:
    d = read(sample(ST_CARD), "card.json")
    out = write(d.primary, fmt, linked=d.entities)
    back = read(out.data, f"x{registry.get(fmt).extension}")
    assert back.primary.source.format == fmt  # type: ignore[union-attr]
    assert covered_losses(d.primary, back.primary, fmt) == []
    src = d.primary.body
    got = back.primary.body
    assert isinstance(src, CharacterBody) and isinstance(got, CharacterBody)
    assert got.identity.name == "Maren"
    assert got.identity.description == src.identity.description
    assert got.greetings.firstMessage == src.greetings.firstMessage
    beside = sorted(x.entity.kind for x in out.beside)
    if fmt == "pygmalion":
        assert beside == ["lorebook", "regex"]  # no slot for either: written beside (vaud-json)
        return
    assert beside == ["regex"]  # Backyard carries the lore as lore items, not regex scripts
    st_book, our_book = _books(d.entities)[0], _books(back.entities)[0]
    assert [e.content for e in our_book.entries] == [e.content for e in st_book.entries if e.enabled]
    assert [[t.text for t in e.triggers or []] for e in our_book.entries] == [
        [t.text for t in e.triggers or []] for e in st_book.entries if e.enabled
    ]


@pytest.mark.parametrize("fmt", ["pygmalion", "backyard"])
def test_a_tavern_png_keeps_its_picture(fmt: str) -> None:
    d = read(sample(ST_PNG), "tidepool.png")
    codec = registry.get(fmt)
    out = codec.encode(d.primary, EmitContext.for_entities(d.entities, container="png"))
    assert [x for t, x in chunks(out) if t == b"IDAT"] == [
        x for t, x in chunks(sample(ST_PNG)) if t == b"IDAT"
    ]
    keywords = [x.split(b"\0", 1)[0].lower() for t, x in chunks(out) if t in (b"tEXt", b"zTXt", b"iTXt")]
    assert b"ccv3" not in keywords  # the Tavern card payload is not carried over stale
    back = read(out, "x.png")
    assert back.primary.source.format == fmt  # type: ignore[union-attr]
    assert covered_losses(d.primary, back.primary, fmt) == []


def test_pygmalion_json_to_tavern_and_back_is_stable_on_the_five_keys() -> None:
    d = read(sample("pygmalion/oskar.pygmalion.json"), "oskar.json")
    card = json.loads(write(d.primary, "sillytavern").data)
    data = card.get("data", card)
    assert data["name"] == "Oskar"
    assert data["description"].startswith("Oskar runs the galley")
    assert data.get("personality", "") == ""  # char_persona is the description, not also the personality
    again = read(write(read(json.dumps(card).encode(), "c.json").primary, "pygmalion").data, "o.json")
    assert covered_losses(d.primary, again.primary, "pygmalion") == []
