"""``agnai``: Agnai's native character JSON. Expectations are written from the facts
read from Agnai's source (docs/formats/agnai.md#character), never from the codec's own output."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from agnai_helpers import (
    CHARACTERS,
    LANTERNFALL,
    MIRELLE,
    PIP,
    decode,
    dumps,
    encode,
    score,
    tree,
    without_twins,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from bunzai_codecs import BunzaiError, Malformed, read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.entity import KNOWLEDGE_REFS
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import CharacterBody, LorebookBody
from tests.formats.helpers import edited

# --- detection ----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", CHARACTERS, ids=lambda p: p.name)
def test_native_exports_detect_with_certainty(path: Path) -> None:
    s = Sniff(path.read_bytes(), path.name)
    assert registry.detect(s) == registry.Candidate("agnai", 1.0)
    assert registry.get("agnai-lorebook").detect(s) == 0.0


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"kind": "library-character"}, "a library character is another kind"),
        ({"persona": None}, "persona must be an object"),
        ({"persona": "text"}, "persona must be an object"),
        ({"greeting": None}, "greeting must be a string"),
    ],
)
def test_detection_needs_every_clause(change: dict[str, Any], why: str) -> None:
    t = tree(PIP)
    t.update(change)
    assert score("agnai", t) == 0.0, why


def test_a_missing_greeting_is_not_an_agnai_character() -> None:
    t = tree(PIP)
    del t["greeting"]
    assert score("agnai", t) == 0.0


def test_bunzai_own_entity_of_an_agnai_character_is_vaud_json_not_agnai() -> None:
    primary = read(MIRELLE.read_bytes(), MIRELLE.name).primary
    vaud = write(primary, "vaud-json").data
    s = Sniff(vaud, "m.vaud.json")
    assert registry.get("agnai").detect(s) == 0.0
    assert registry.detect(s).id == "vaud-json"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "t",
    [
        {"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": "x", "first_mes": "hi"}},
        {"name": "x", "persona": {"kind": "text"}, "greeting": "hi", "scenario": "", "sampleChat": ""},
        {"kind": "memory", "name": "b", "entries": []},
        [{"kind": "character", "persona": {}, "greeting": ""}],
        "character",
    ],
    ids=["tavern-v2", "kind-less", "memory-book", "array", "string"],
)
def test_other_shapes_are_not_claimed(t: Any) -> None:
    assert score("agnai", t) == 0.0


# --- decode: field by field, from the facts -----------------------------------------------------


def test_server_export_decodes_field_by_field() -> None:
    decoded = read(MIRELLE.read_bytes(), MIRELLE.name)
    card, book = decoded.entities
    b = card.body
    assert isinstance(b, CharacterBody)
    assert b.identity.name == "Mirelle Vane"
    # Agnai's description is creator notes...
    assert b.attribution.creatorNotes is not None and b.attribution.creatorNotes.startswith("A cartographer")
    assert b.identity.culture == "en-us" and b.identity.characterVersion == "1.2"
    # ...and a one-element text persona is the definition (Agnai's own Tavern export writes it as
    # the card's description), structured records the kind
    assert b.persona.structured is not None and b.persona.structured.kind == "text"
    assert b.persona.structured.attributes is None
    assert b.identity.description == tree(MIRELLE)["persona"]["attributes"]["text"][0]
    assert b.persona.personality is None
    assert b.persona.scenario == tree(MIRELLE)["scenario"]
    assert b.persona.appearance is not None and b.persona.appearance.startswith("Tall")
    # voice: service -> provider; voiceId/rate first-class; the ElevenLabs knobs ride extras
    v = b.persona.voice
    assert v is not None and v.provider == "elevenlabs" and v.voiceId == "21m00Tcm4TlvDq8ikWAM"
    assert v.rate == 1 and v.pitch is None and v.disabled is False
    assert v.extras == {"model": "eleven_multilingual_v1", "stability": 0.45, "similarityBoost": 0.8}
    # imageSettings: the four affixes only; sampler knobs are not canonical
    ip = b.persona.imagePrompt
    assert (ip.prefix, ip.suffix, ip.negative) == (
        "watercolor illustration, ",
        ", warm lamplight",
        "blurry, extra fingers",
    )
    assert ip.template == "{{prefix}} {{prompt}} {{suffix}}" and ip.rows is None
    assert b.prompts.systemPrompt == "" and b.prompts.postHistoryInstructions is not None
    assert b.prompts.prefill is None
    [inj] = b.prompts.depthInjections or []
    assert inj.text == "[{{char}} never guesses distances; she measures.]" and inj.depth == 4
    assert inj.role is None and inj.origin is None and inj.enabled is None  # the wire has none
    assert b.greetings.firstMessage is not None and b.greetings.firstMessage.startswith("*Mirelle")
    assert [g.text for g in b.greetings.alternateGreetings or []] == tree(MIRELLE)["alternateGreetings"]
    assert b.examples.exampleMessages is not None and b.examples.exampleMessages.startswith("<START>")
    assert b.media.portrait is not None
    assert b.media.portrait.ref == "/assets/char-8e4b1c7a-2f6d-4a90-b3e5-71c2d9f0a6b4.png"
    assert b.media.portrait.role == "portrait" and b.media.portrait.mime == "image/png"
    assert b.media.sprite is None and b.media.visualKind == "avatar"  # "sprite": null is no sprite
    assert b.attribution.creator == "bunzai samples"
    assert b.attribution.createdAt == 1718098937.305  # 2024-06-11T09:42:17.305Z
    assert b.attribution.updatedAt == 1725300351.02
    assert b.discovery.tags == ["fantasy", "explorer", "slow burn"]
    assert b.settings.responseSchema == tree(MIRELLE)["json"]
    assert b.extensions == {}
    # the characterBook (a MemoryBook) is a linked lorebook of its own
    assert card.links == {KNOWLEDGE_REFS: [book.id]}
    assert book.kind == "lorebook" and isinstance(book.body, LorebookBody)
    assert book.body.name == "Lanternfall gazetteer" and book.body.globalScanDepth == 50
    assert book.original["agnai"].raw is not None  # the twin sits under the parent codec's id
    # residue with no canonical home stays in the twin
    raw = card.original["agnai"].raw
    assert raw["userId"] == "5d0f6b2e-3c1a-4e8b-9f4d-2a7c6e1b9d30" and raw["folder"] == "Lanternfall"


def test_guest_export_decodes_attribute_persona_sprite_and_data_url() -> None:
    b = read(PIP.read_bytes(), PIP.name).primary.body
    assert isinstance(b, CharacterBody)
    # a W++ attribute map is kept verbatim, and there is no personality text
    assert b.persona.structured is not None and b.persona.structured.kind == "wpp"
    assert b.persona.structured.attributes == {
        "species": ["clockwork owl"],
        "personality": ["nosy", "loyal", "melodramatic"],
        "likes": ["brass polish", "riddles"],
    }
    assert b.persona.personality is None
    # the flat FullSprite: 15 part slots, the colours and gender lifted out
    sp = b.media.sprite
    assert sp is not None and sp.gender == "female" and sp.eyeColor == "#d4a017"
    assert sp.bodyColor == "#b87333" and sp.hairColor == "#5c4033"
    assert len(sp.parts) == 15 and sp.parts["front_hair"] == "front_hair_4"
    assert b.media.visualKind == "sprite"
    assert b.media.portrait is not None and b.media.portrait.mime == "image/png"
    assert b.media.portrait.ref.startswith("data:image/png;base64,")
    v = b.persona.voice
    assert v is not None and v.provider == "webspeechsynthesis"
    assert (v.pitch, v.rate, v.disabled, v.extras) == (1.3, 1.1, True, None)
    assert b.prompts.depthInjections is None  # the editor default {prompt: "", depth: 3} is no injection
    assert b.attribution.creatorNotes == ""
    assert b.greetings.alternateGreetings == []  # [] differs from absent
    assert b.examples.exampleMessages == ""
    ip = b.persona.imagePrompt
    assert (ip.prefix, ip.suffix, ip.negative, ip.template) == ("", "", "", None)


# --- round trip and canonical stability ---------------------------------------------------------


@pytest.mark.parametrize("path", CHARACTERS, ids=lambda p: p.name)
def test_samples_round_trip_with_no_difference(path: Path) -> None:
    decoded = read(path.read_bytes(), path.name)
    out = write(decoded.primary, "agnai", linked=decoded.entities)
    assert orjson.loads(out.data) == tree(path)
    assert out.data == path.read_bytes()  # the samples are in Agnai's own JSON.stringify(x, null, 2)
    assert out.beside == []  # the book went back inside


@pytest.mark.parametrize("path", CHARACTERS, ids=lambda p: p.name)
def test_canonical_stability_same_format_edited_and_fresh(path: Path) -> None:
    decoded = read(path.read_bytes(), path.name)
    card = decoded.primary
    again = decode(encode(card, "agnai", decoded.entities)).primary
    assert again.body == card.body
    changed = edited(card, identity={"name": "Renamed"}, persona={"appearance": "Shorter now."})
    assert decode(encode(changed, "agnai")).primary.body == changed.body
    fresh = decode(encode(without_twins(card), "agnai")).primary
    assert fresh.body == card.body


def test_server_residue_survives_an_edit() -> None:
    t = tree(MIRELLE)
    t["_id"] = "8e4b1c7a-2f6d-4a90-b3e5-71c2d9f0a6b4"  # a document read from the database, not an export
    card = decode(t).primary
    out = encode(edited(card, identity={"name": "M. Vane"}), "agnai")
    assert out["name"] == "M. Vane"
    assert out["_id"] == t["_id"] and out["userId"] == t["userId"] and out["favorite"] is False
    assert out["folder"] == "Lanternfall"


def test_fresh_export_is_a_native_character_without_server_keys() -> None:
    card = decode(tree(PIP)).primary
    out = encode(without_twins(card), "agnai")
    assert out["kind"] == "character"
    assert "_id" not in out and "userId" not in out and "characterBook" not in out
    assert out["persona"] == tree(PIP)["persona"]
    assert out["voice"] == tree(PIP)["voice"] and out["voiceDisabled"] is True
    assert out["sprite"] == tree(PIP)["sprite"]
    assert score("agnai", out) == 1.0


# --- quirks, one test each ----------------------------------------------------------------------


def test_quirk_multi_element_text_persona_collapses_to_its_first_element() -> None:
    """The one documented loss: only attributes.text[0] has a canonical home."""
    t = tree(PIP)
    t["persona"] = {"kind": "text", "attributes": {"text": ["First paragraph.", "Second paragraph."]}}
    card = decode(t).primary
    assert card.body.identity.description == "First paragraph."  # type: ignore[union-attr]
    # an unedited round trip still returns the twin's array...
    assert encode(card, "agnai")["persona"] == t["persona"]
    # ...an edit elsewhere leaves the persona alone...
    assert encode(edited(card, identity={"name": "Pip II"}), "agnai")["persona"] == t["persona"]
    # ...but an edited persona is rebuilt with one text, and any other format sees only the first
    out = encode(edited(card, identity={"description": "First paragraph, revised."}), "agnai")
    assert out["persona"] == {"kind": "text", "attributes": {"text": ["First paragraph, revised."]}}
    assert encode(without_twins(card), "agnai")["persona"]["attributes"]["text"] == ["First paragraph."]


def test_quirk_image_settings_non_affix_keys_survive_an_edit() -> None:
    card = decode(tree(MIRELLE)).primary
    src = tree(MIRELLE)["imageSettings"]
    out = encode(
        edited(card, persona={"imagePrompt": {"prefix": "ink sketch, ", "suffix": ", warm lamplight"}}),
        "agnai",
    )
    # prefix rewritten, negative and template cleared, every sampler/provider key untouched
    want = {k: v for k, v in src.items() if k not in ("negative", "template")}
    want["prefix"] = "ink sketch, "
    assert out["imageSettings"] == want
    assert list(out["imageSettings"]) == [k for k in src if k in want]  # key order kept
    # clearing every affix keeps the sampler block
    out = encode(edited(card, persona={"imagePrompt": {}}), "agnai")
    assert out["imageSettings"] == {
        k: v for k, v in src.items() if k not in ("prefix", "suffix", "negative", "template")
    }
    # a twin whose imageSettings had no affix at all still keeps its knobs when one is added
    t = tree(PIP)
    t["imageSettings"] = {
        "type": "horde",
        "steps": 30,
        "cfg": 8,
        "horde": {"sampler": "k_euler", "model": "x"},
    }
    card = decode(t).primary
    out = encode(edited(card, persona={"imagePrompt": {"negative": "text, watermark"}}), "agnai")
    assert out["imageSettings"] == {**t["imageSettings"], "negative": "text, watermark"}


def test_quirk_only_the_first_depth_injection_is_written() -> None:
    card = decode(tree(MIRELLE)).primary
    injections = [
        {"text": "first", "depth": 2, "role": "user", "origin": "depth_prompt"},
        {"text": "second", "depth": 0},
    ]
    out = encode(edited(card, prompts={"depthInjections": injections}), "agnai")
    assert out["insert"] == {"prompt": "first", "depth": 2}  # no role, origin or second slot
    fresh = encode(without_twins(edited(card, prompts={"depthInjections": injections})), "agnai")
    assert fresh["insert"] == {"prompt": "first", "depth": 2}
    # removing the injection removes the slot
    assert "insert" not in encode(edited(card, prompts={"depthInjections": None}), "agnai")


def test_quirk_description_is_creator_notes_and_the_text_persona_takes_the_definition() -> None:
    card = decode(tree(PIP)).primary
    body = card.body.model_dump()
    body["persona"]["structured"] = None
    body["identity"]["description"] = "{{char}} is a clockwork owl."
    body["persona"]["personality"] = "Nosy, loyal."
    body["attribution"]["creatorNotes"] = "For testing."
    entity = edited(card, **body)
    out = encode(without_twins(entity), "agnai")
    assert out["description"] == "For testing."
    assert out["persona"] == {
        "kind": "text",
        "attributes": {"text": ["{{char}} is a clockwork owl.\nNosy, loyal."]},
    }


def test_quirk_prefill_is_read_when_present_and_written_only_when_the_twin_had_it() -> None:
    t = tree(PIP)
    t["prefill"] = "*Pip clicks*"
    card = decode(t).primary
    assert card.body.prompts.prefill == "*Pip clicks*"  # type: ignore[union-attr]
    assert encode(edited(card, prompts={"prefill": "*whirr*"}), "agnai")["prefill"] == "*whirr*"
    plain = decode(tree(PIP)).primary
    assert "prefill" not in encode(edited(plain, prompts={"prefill": "*whirr*"}), "agnai")
    assert "prefill" not in encode(without_twins(card), "agnai")


def test_quirk_embedded_book_canonicalises_like_the_standalone_book() -> None:
    """Container invariance: the same MemoryBook gives the same body embedded or on its own."""
    book_tree = tree(LANTERNFALL)
    t = tree(PIP)
    t["characterBook"] = book_tree
    embedded = decode(t).entities[1]
    standalone = decode(book_tree).primary
    assert embedded.body == standalone.body


def test_quirk_linked_book_is_re_embedded_through_its_twin() -> None:
    decoded = read(MIRELLE.read_bytes(), MIRELLE.name)
    card, book = decoded.entities
    renamed = edited(book, name="Gazetteer (revised)")
    out = encode(card, "agnai", [renamed])
    want = tree(MIRELLE)["characterBook"]
    want["name"] = "Gazetteer (revised)"
    assert out["characterBook"] == want  # _id/userId of the embedded copy stay: it is the same document
    assert list(out) == list(tree(MIRELLE))  # characterBook stays where it was


def test_quirk_explicitly_empty_links_drop_a_stale_book_and_unresolved_links_keep_it() -> None:
    decoded = read(MIRELLE.read_bytes(), MIRELLE.name)
    card = decoded.primary
    unlinked = edited(card)
    unlinked.links = {KNOWLEDGE_REFS: []}
    assert "characterBook" not in encode(unlinked, "agnai")
    # links that cannot be resolved: keep the twin's copy rather than lose the book
    assert encode(card, "agnai", [])["characterBook"] == tree(MIRELLE)["characterBook"]
    # no book at all: no characterBook key, never an empty one
    assert "characterBook" not in encode(without_twins(unlinked), "agnai")


def test_quirk_a_foreign_book_is_embedded_as_a_clean_memory_book() -> None:
    card = decode(tree(PIP)).primary
    book = decode(tree(LANTERNFALL)).primary
    foreign = without_twins(book)
    card.links = {KNOWLEDGE_REFS: [foreign.id]}
    out = encode(card, "agnai", [foreign])
    assert out["characterBook"]["kind"] == "memory"
    assert [e["entry"] for e in out["characterBook"]["entries"]] == [
        e["entry"] for e in tree(LANTERNFALL)["entries"]
    ]
    assert "_id" not in out["characterBook"] and "userId" not in out["characterBook"]


def test_quirk_unparseable_dates_stay_in_the_twin_with_a_warning() -> None:
    t = tree(PIP)
    t["createdAt"] = "last tuesday"
    card = decode(t).primary
    assert card.body.attribution.createdAt is None  # type: ignore[union-attr]
    assert any("createdAt" in w for w in card.warnings)
    assert encode(edited(card, identity={"name": "P"}), "agnai")["createdAt"] == "last tuesday"


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "value", "where"),
    [
        (("persona",), "plain text", "$.persona"),
        (("persona", "kind"), 3, "$.persona.kind"),
        (("persona", "attributes"), ["a"], "$.persona.attributes"),
        (("persona", "attributes", "likes"), "riddles", "$.persona.attributes.likes"),
        (("name",), True, "$.name"),
        (("tags",), "fantasy", "$.tags"),
        (("alternateGreetings",), ["hi", True], "$.alternateGreetings[1]"),
        (("voice",), "elevenlabs", "$.voice"),
        (("voice", "service"), 1, "$.voice.service"),
        (("sprite", "body"), 4, "$.sprite.body"),
        (("insert",), {"prompt": "x", "depth": "deep"}, "$.insert.depth"),
        (("json",), [], "$.json"),
        (("imageSettings", "prefix"), False, "$.imageSettings.prefix"),
        (("extensions",), "none", "$.extensions"),
        (("characterBook",), {"kind": "memory", "entries": {"0": {}}}, "$.characterBook.entries"),
        (("characterBook",), {"entries": [{"keywords": "a,b"}]}, "$.characterBook.entries[0].keywords"),
    ],
)
def test_bad_input_is_a_typed_error_with_its_path(path: tuple[str, ...], value: Any, where: str) -> None:
    t = tree(PIP)
    node = t
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    with pytest.raises(Malformed) as info:
        decode(t, fmt="agnai")
    assert info.value.path == where
    assert not getattr(info.value, "internal", False)


@pytest.mark.parametrize(
    "data", [b"[]", b'"x"', b"{not json", b""], ids=["array", "string", "broken", "empty"]
)
def test_non_objects_are_typed_errors(data: bytes) -> None:
    with pytest.raises(BunzaiError) as info:
        read(data, "x.json", format="agnai")
    assert not getattr(info.value, "internal", False)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
    max_leaves=10,
)
_KEYS = sorted(set(orjson.loads(MIRELLE.read_bytes())) | set(orjson.loads(PIP.read_bytes())))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(_KEYS), _JSON, st.booleans())
def test_hostile_values_never_escape_as_internal_errors(key: str, value: Any, pip: bool) -> None:
    t = tree(PIP if pip else MIRELLE)
    t[key] = value
    try:
        decoded = decode(dumps(t), fmt="agnai")
    except BunzaiError as exc:
        assert not getattr(exc, "internal", False), exc
        return
    out = write(decoded.primary, "agnai", linked=decoded.entities).data
    assert decode(out, fmt="agnai").primary.body == decoded.primary.body
