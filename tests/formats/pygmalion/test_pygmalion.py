"""pygmalion: the classic flat character JSON (and the same JSON in a PNG chara chunk)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from bunzai_codecs import Malformed, Unsupported, read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import EmitContext
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import CharacterBody
from tests.conftest import expect_rows
from tests.formats.helpers import chunks, edited, sample, text_chunk, text_json, tiny_png

CODEC = registry.get("pygmalion")


def _json(tree: object, name: str = "c.json") -> Sniff:
    return Sniff(json.dumps(tree).encode(), name)


# -- detection ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tree",
    [
        {"char_name": "A", "char_persona": "p"},
        {"char_greeting": "hi", "world_scenario": "s"},
        {"char_persona": "p", "char_greeting": "hi"},
        {"name": "A", "char_persona": "p", "world_scenario": "s", "metadata": {"version": 1}},
    ],
)
def test_the_original_rule_claims_the_flat_shape(tree: dict[str, str]) -> None:
    assert CODEC.detect(_json(tree)) == 1.0


@pytest.mark.parametrize(
    "tree",
    [
        # Tavern cards belong to the sillytavern codec, even with stray char_* keys
        {"spec": "chara_card_v2", "data": {"name": "A"}, "char_name": "A", "char_persona": "p"},
        {"data": {"name": "A"}, "char_persona": "p", "char_greeting": "g"},
        {"name": "A", "description": "d", "personality": "p", "first_mes": "hi", "scenario": "s"},
        # a canonical entity, an Agnai character, a Backyard character
        {"kind": "character", "char_persona": "p", "char_greeting": "g"},
        {"aiName": "A", "char_persona": "p", "char_greeting": "g"},
        {"aiPersona": "x", "char_name": "A", "char_persona": "p"},
        # one signal is not enough; char_name alone neither
        {"char_persona": "p"},
        {"char_name": "A", "char_greeting": "hi"},
        {"char_persona": 3, "char_greeting": 4},
    ],
)
def test_what_it_must_not_claim(tree: dict[str, object]) -> None:
    assert CODEC.detect(_json(tree)) == 0.0


def test_png_with_the_flat_json_in_chara_is_claimed_and_a_tavern_png_is_not() -> None:
    flat = base64.b64encode(json.dumps({"char_name": "A", "char_persona": "p"}).encode())
    tavern = base64.b64encode(json.dumps({"spec": "chara_card_v2", "data": {"name": "A"}}).encode())
    assert CODEC.detect(Sniff(tiny_png(text_chunk("chara", flat)), "a.png")) == 1.0
    assert CODEC.detect(Sniff(tiny_png(text_chunk("chara", tavern)), "a.png")) == 0.0
    assert CODEC.detect(Sniff(tiny_png(text_chunk("chara", b"%%%")), "a.png")) == 0.0


def test_a_tavern_png_card_is_passed_over_without_parsing_its_payload(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # every codec's detector sees every input: a 20 KB Tavern card in `chara` must not be parsed
    # here just to find it has `spec` (the card codec parses it once, when it decodes)
    from bunzai_codecs.formats.pygmalion import codec as pyg

    def boom(*_: object) -> object:
        raise AssertionError("parsed")

    monkeypatch.setattr(pyg, "png_payload", boom)
    tavern = {"spec": "chara_card_v2", "data": {"name": "A", "description": "d" * 5000}}
    png = tiny_png(text_chunk("chara", base64.b64encode(json.dumps(tavern).encode())))
    assert CODEC.detect(Sniff(png, "a.png")) == 0.0
    assert registry.detect(Sniff(png, "a.png")).id == "sillytavern"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "payload",
    [
        # a key spelled with an escaped character is the same key
        b'{"char_name": "A", "char\\u005fpersona": "p"}',
        b'{"char_greeting": "hi", "world\\u005Fscenario": "s"}',
        # UTF-16 with a BOM is read as text
        json.dumps({"char_name": "A", "char_persona": "p"}).encode("utf-16"),
        # a UTF-8 BOM in front
        b'\xef\xbb\xbf{"char_persona": "p", "char_greeting": "g"}',
    ],
)
def test_the_shared_parse_never_misses_a_flat_payload(payload: bytes) -> None:
    png = tiny_png(text_chunk("chara", base64.b64encode(payload)))
    assert CODEC.detect(Sniff(png, "a.png")) == 1.0


def test_samples_detect_as_pygmalion() -> None:
    for rel in ("pygmalion/oskar.pygmalion.json", "pygmalion/ines.pygmalion.png"):
        assert registry.detect(Sniff(sample(rel), rel)).id == "pygmalion"  # type: ignore[union-attr]


# -- decode ------------------------------------------------------------------------------------


def test_decode_json_maps_the_five_keys() -> None:
    e = read(sample("pygmalion/oskar.pygmalion.json"), "oskar.json").primary
    b = e.body
    assert isinstance(b, CharacterBody)
    assert b.identity.name == "Oskar"
    assert b.identity.description == (
        "Oskar runs the galley of a fishing trawler. Gruff, generous, allergic to shellfish."
    )
    assert b.persona.personality is None  # char_persona is the definition, not mirrored
    assert (
        b.persona.scenario == "A trawler in the northern sea, three days from port, a storm on the horizon."
    )
    assert b.greetings.firstMessage == "*Oskar slides a bowl across the counter.* Eat first. Questions later."
    assert b.examples.exampleMessages == (
        "<START>\n{{user}}: What's in the stew?\n{{char}}: Potatoes, patience and a secret."
    )
    assert e.original["pygmalion"].raw["metadata"]["tool"]["name"] == "Sample Character Editor"
    assert e.knowledge_refs == []


def test_decode_png_reads_the_chara_chunk_and_keeps_macros_verbatim() -> None:
    e = read(sample("pygmalion/ines.pygmalion.png"), "ines.png").primary
    assert e.body.identity.name == "Ines"  # type: ignore[attr-defined]
    assert e.body.examples.exampleMessages == (  # type: ignore[attr-defined]
        "<USER>: Do you get lonely?\n<BOT>: The gulls would be offended."
    )
    assert e.original["pygmalion"].container == "png"
    portrait = e.body.media.portrait  # type: ignore[attr-defined]
    assert portrait is not None and (portrait.ref, portrait.primary) == ("ccdefault:", True)


def test_name_is_the_fallback_when_char_name_is_absent() -> None:
    e = CODEC.decode(_json({"name": "Fallback", "char_persona": "p", "char_greeting": "g"})).primary
    assert e.body.identity.name == "Fallback"  # type: ignore[attr-defined]


# -- round trips -------------------------------------------------------------------------------


def test_json_round_trip_is_the_same_tree() -> None:
    data = sample("pygmalion/oskar.pygmalion.json")
    d = read(data, "oskar.json")
    out = write(d.primary, "pygmalion", linked=d.entities).data
    assert json.loads(out) == json.loads(data)


def test_png_round_trip_is_byte_identical() -> None:
    data = sample("pygmalion/ines.pygmalion.png")
    d = read(data, "ines.png")
    assert write(d.primary, "pygmalion").data == data


def test_an_edit_rewrites_only_its_key_and_keeps_metadata() -> None:
    d = read(sample("pygmalion/oskar.pygmalion.json"), "oskar.json")
    e = edited(d.primary, lambda b: b["greetings"].update(firstMessage="Soup's on."))
    out = json.loads(write(e, "pygmalion").data)
    src = json.loads(sample("pygmalion/oskar.pygmalion.json"))
    assert out["char_greeting"] == "Soup's on."
    assert {k: v for k, v in out.items() if k != "char_greeting"} == {
        k: v for k, v in src.items() if k != "char_greeting"
    }
    assert "name" not in out  # written only when the source had it
    assert list(out) == list(src)


def test_name_is_rewritten_with_char_name_when_the_source_had_it() -> None:
    d = read(sample("pygmalion/ines.pygmalion.png"), "ines.png")
    e = edited(d.primary, lambda b: b["identity"].update(name="Inès"))
    out = write(e, "pygmalion").data
    tree = text_json(out, "chara")
    assert tree["name"] == tree["char_name"] == "Inès"
    src = chunks(sample("pygmalion/ines.pygmalion.png"))
    assert [c for c in chunks(out) if c[0] != b"tEXt"] == [c for c in src if c[0] != b"tEXt"]


def test_canonical_stability_after_an_edit() -> None:
    d = read(sample("pygmalion/ines.pygmalion.png"), "ines.png")
    e = edited(d.primary, lambda b: b["persona"].update(scenario="A calm night."))
    again = read(write(e, "pygmalion").data, "again.png").primary
    assert again.body == e.body


def test_a_foreign_body_exports_the_five_keys_and_drops_personality() -> None:
    body = CharacterBody.model_validate(
        {
            "identity": {"name": "Vell", "description": "A courier."},
            "persona": {"personality": "Restless.", "scenario": "Rooftops."},
            "greetings": {"firstMessage": "Package for you."},
        }
    )
    e = CanonicalEntity(kind="character", id="character-x", body=body)
    out = json.loads(CODEC.encode(e, EmitContext()))
    assert out == {
        "char_name": "Vell",
        "char_persona": "A courier.",
        "char_greeting": "Package for you.",
        "world_scenario": "Rooftops.",
        "example_dialogue": "",
    }
    back = CODEC.decode(Sniff(CODEC.encode(e, EmitContext()), "v.json")).primary.body
    assert back.identity == body.identity and back.persona.scenario == "Rooftops."  # type: ignore[attr-defined]


# -- bad input ---------------------------------------------------------------------------------


def test_chara_chunk_with_bad_base64_is_malformed_with_its_offset() -> None:
    data = tiny_png(text_chunk("chara", b"not base64!!"))
    with pytest.raises(Malformed, match="base64") as ei:
        CODEC.decode(Sniff(data, "bad.png"))
    assert ei.value.offset == data.index(b"tEXt") - 4  # the chunk's length field


def test_wrong_types_are_malformed_with_the_path() -> None:
    with pytest.raises(Malformed) as ei:
        CODEC.decode(_json({"char_name": "A", "char_persona": ["p"], "char_greeting": "g"}))
    assert (ei.value.path, ei.value.message) == ("$.char_persona", "expected a string, found an array")
    with pytest.raises(Malformed) as ei:
        CODEC.decode(_json([1, 2]))
    assert ei.value.path == "$"


# -- corpus ------------------------------------------------------------------------------------


@pytest.mark.parametrize("rel,fmt", expect_rows("pygmalion"))
def test_corpus_detects_and_round_trips(corpus: Path, rel: str, fmt: str) -> None:
    data = (corpus / rel).read_bytes()
    d = read(data, rel)
    assert d.primary.source.format == fmt  # type: ignore[union-attr]
    out = write(d.primary, fmt, linked=d.entities).data
    assert json.loads(out) == json.loads(data)


def test_container_options() -> None:
    body = CharacterBody.model_validate({"identity": {"name": "Vell", "description": "A courier."}})
    e = CanonicalEntity(kind="character", id="character-x", body=body)
    out = CODEC.encode(e, EmitContext(options={"container": "png"}))
    assert text_json(out, "chara")["char_name"] == "Vell"
    image = sample("backyard/tidecaller.v2.backyard.png")
    out = CODEC.encode(e, EmitContext(options={"image": image}))
    assert [d for t, d in chunks(out) if t == b"IDAT"] == [d for t, d in chunks(image) if t == b"IDAT"]
    d = read(sample("pygmalion/ines.pygmalion.png"), "ines.png")
    as_json = json.loads(CODEC.encode(d.primary, EmitContext(options={"container": "json"})))
    assert as_json == text_json(sample("pygmalion/ines.pygmalion.png"), "chara")
    with pytest.raises(Unsupported):
        CODEC.encode(e, EmitContext(options={"container": "webp"}))
