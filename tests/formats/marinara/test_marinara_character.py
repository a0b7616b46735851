"""marinara-character: the marinara_character envelope through the shared Tavern mapper."""

from __future__ import annotations

import orjson
import pytest

from bunzai_codecs import Malformed, read, write
from bunzai_codecs.core.codec import EmitContext
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.entities import CharacterBody, LorebookBody, RegexSetBody
from bunzai_codecs.formats.marinara.character import MarinaraCharacterCodec, iso_to_seconds, seconds_to_iso
from tests.formats.helpers import sample

from ._util import fresh, load_tree, mutated, sample_tree, score

NAME = "character.vesna.marinara.json"


def _read() -> list[CanonicalEntity]:
    return read(sample(f"marinara/{NAME}"), NAME).entities


def _body() -> CharacterBody:
    b = _read()[0].body
    assert isinstance(b, CharacterBody)
    return b


def test_scores_one_on_the_envelope_and_tavern_readers_stay_out() -> None:
    from bunzai_codecs.core import registry
    from bunzai_codecs.core.sniff import Sniff

    t = sample_tree(NAME)
    assert score("marinara-character", t) == 1.0
    assert score("marinara-character", t["data"]) == 0.0  # the bare card is a Tavern card
    assert score("marinara-character", {**t, "data": {**t["data"], "data": None}}) == 0.0
    assert score("marinara-character", {**t, "type": "marinara_persona"}) == 0.0
    s = Sniff(sample(f"marinara/{NAME}"), NAME)
    assert registry.get("sillytavern").detect(s) == 0.0
    assert registry.detect(s).id == "marinara-character"  # type: ignore[union-attr]


def test_card_fields_map_through_the_tavern_mapper() -> None:
    b = _body()
    assert b.identity.name == "Vesna Kade" and b.identity.characterVersion == "1.1"
    assert b.identity.description.startswith("{{char}} is a salvage diver")  # type: ignore[union-attr]
    assert b.persona.personality == "Blunt, superstitious, loyal to her crew."
    assert b.greetings.firstMessage.startswith('"You want the chapel bell?')  # type: ignore[union-attr]
    assert [g.text for g in b.greetings.alternateGreetings or []] == [
        '*Vesna wrings seawater out of her braid.* "Hiring?"'
    ]
    assert (
        b.attribution.creator == "samples"
        and b.attribution.creatorNotes == "Pairs with the Saltmarsh lorebook."
    )
    assert b.discovery.tags == ["diver", "horror"]
    assert b.settings.talkativeness == 0.4 and b.worldName == "Saltmarsh"
    (inj,) = b.prompts.depthInjections or []
    assert (inj.text, inj.depth, inj.role) == ("{{char}} never swims at night.", 3, "system")


def test_marinara_extension_keys() -> None:
    b = _body()
    # appearance has a canonical home (the dialect hook); the rest stay verbatim in extensions
    assert b.persona.appearance == "Short, broad-shouldered, a rope scar across one palm."
    assert "appearance" not in b.extensions
    ext = sample_tree(NAME)["data"]["data"]["extensions"]
    for key in (
        "backstory",
        "rpgStats",
        "nameColor",
        "dialogueColor",
        "boxColor",
        "avatarCrop",
        "conversationStatus",
        "convoBehavior",
    ):
        assert b.extensions[key] == ext[key], key
    assert isinstance(b.extensions["trackerCardColors"], str)  # a JSON string on characters too
    assert b.extensions["avatarCrop"] == {
        "srcX": 0,
        "srcY": 0.05,
        "srcWidth": 1,
        "srcHeight": 0.9,
    }  # an object here
    for key in ("talkativeness", "fav", "world", "depth_prompt", "regex_scripts"):
        assert key not in b.extensions


def test_envelope_media_and_dates() -> None:
    b = _body()
    p = b.media.portrait
    assert (
        p is not None
        and p.role == "portrait"
        and p.ref.startswith("data:image/png;base64,")
        and p.mime == "image/png"
    )
    assert [(a.role, a.name, a.mime) for a in b.media.assets or []] == [
        ("emotion", "happy.png", "image/png"),
        ("emotion", "afraid.png", "image/png"),
    ]
    assert b.attribution.createdAt == iso_to_seconds("2026-06-10T08:30:00.000Z") == 1781080200
    assert b.attribution.updatedAt == 1783591199.123


def test_no_avatar_means_no_portrait_not_the_ccv3_default_icon() -> None:
    t = mutated(sample_tree(NAME))
    del t["data"]["avatar"], t["data"]["sprites"]
    b = load_tree(t).body
    assert b.media.portrait is None and b.media.assets is None  # type: ignore[attr-defined]


def test_embedded_book_and_scripts_are_linked_entities() -> None:
    card, book, rx = _read()
    assert card.links == {"knowledgeRefs": [book.id, rx.id]}
    assert isinstance(book.body, LorebookBody) and book.body.name == "Vesna's notes"
    assert book.body.entries[0].title == "Chapel" and book.body.entries[0].sortOrder == 10
    assert isinstance(rx.body, RegexSetBody) and rx.body.rules[0].label == "Bubble speech"
    assert rx.body.rules[0].targets == ["display"]  # markdownOnly
    # linked twins live under the parent codec's id
    inner = sample_tree(NAME)["data"]["data"]
    assert book.original["marinara-character"].raw == inner["character_book"]
    assert rx.original["marinara-character"].raw == inner["extensions"]["regex_scripts"]


def test_round_trip_and_canonical_stability() -> None:
    es = _read()
    data = write(es[0], "marinara-character", linked=es).data
    assert orjson.loads(data) == sample_tree(NAME)
    again = read(data, NAME).entities
    assert [e.body for e in again] == [e.body for e in es]


def test_an_edit_keeps_marinara_keys_gallery_and_comment() -> None:
    es = _read()
    b = es[0].body
    assert isinstance(b, CharacterBody)
    b.identity.name = "Vesna"
    b.persona.appearance = "Rope-scarred."
    b.attribution.updatedAt = 1783600000
    t = orjson.loads(write(es[0], "marinara-character", linked=es).data)
    raw = sample_tree(NAME)
    inner = t["data"]["data"]
    assert inner["name"] == "Vesna" and inner["extensions"]["appearance"] == "Rope-scarred."
    assert inner["extensions"]["rpgStats"] == raw["data"]["data"]["extensions"]["rpgStats"]
    assert inner["extensions"]["trackerCardColors"] == raw["data"]["data"]["extensions"]["trackerCardColors"]
    assert t["data"]["gallery"] == raw["data"]["gallery"] and t["data"]["sprites"] == raw["data"]["sprites"]
    assert t["data"]["metadata"] == {**raw["data"]["metadata"], "updatedAt": "2026-07-09T12:26:40.000Z"}
    assert "assets" not in inner and "creation_date" not in inner and "modification_date" not in inner
    assert inner["character_book"] == raw["data"]["data"]["character_book"]


def test_edited_linked_book_is_re_embedded_and_an_empty_link_list_drops_it() -> None:
    card, book, rx = _read()
    assert isinstance(book.body, LorebookBody)
    book.body.entries[0].content = "The bell rings at low tide."
    t = orjson.loads(write(card, "marinara-character", linked=[card, book, rx]).data)
    entry = t["data"]["data"]["character_book"]["entries"][0]
    assert entry["content"] == "The bell rings at low tide." and entry["priority"] == 10
    card.links = {"knowledgeRefs": [rx.id]}
    t = orjson.loads(write(card, "marinara-character", linked=[card, rx]).data)
    assert "character_book" not in t["data"]["data"]
    assert (
        t["data"]["data"]["extensions"]["regex_scripts"]
        == sample_tree(NAME)["data"]["data"]["extensions"]["regex_scripts"]
    )


def test_fresh_export_is_a_v2_envelope_that_reads_back() -> None:
    es = _read()
    card = fresh(es[0])
    card.links = dict(es[0].links)
    t = orjson.loads(write(card, "marinara-character", linked=[card, *(fresh(e) for e in es[1:])]).data)
    assert t["type"] == "marinara_character" and t["version"] == 1
    assert (t["data"]["spec"], t["data"]["spec_version"]) == ("chara_card_v2", "2.0")
    inner = t["data"]["data"]
    assert "assets" not in inner and inner["extensions"]["appearance"].startswith("Short")
    assert t["data"]["avatar"].startswith("data:image/png") and [
        s["filename"] for s in t["data"]["sprites"]
    ] == [
        "happy.png",
        "afraid.png",
    ]
    assert t["data"]["metadata"] == {
        "createdAt": "2026-06-10T08:30:00.000Z",
        "updatedAt": "2026-07-09T09:59:59.123Z",
    }
    assert inner["character_book"]["entries"][0]["content"].startswith("The chapel sank")
    assert inner["extensions"]["regex_scripts"][0]["scriptName"] == "Bubble speech"
    again = read(orjson.dumps(t), "vesna.marinara.json").entities
    assert again[0].body == card.body
    assert again[1].body == es[1].body and again[2].body == es[2].body


def test_dates_convert_exactly() -> None:
    for iso in ("2026-04-24T21:08:12.910Z", "2026-05-01T20:06:36.000Z", "1999-12-31T23:59:59.999Z"):
        assert seconds_to_iso(iso_to_seconds(iso)) == iso  # type: ignore[arg-type]
    assert iso_to_seconds("not a date") is None


def test_unreadable_metadata_date_warns_and_stays_in_the_twin() -> None:
    t = mutated(sample_tree(NAME))
    t["data"]["metadata"]["createdAt"] = "yesterday"
    e = load_tree(t)
    assert e.body.attribution.createdAt is None and any("yesterday" in w for w in e.warnings)  # type: ignore[attr-defined]


def test_empty_codec_context_on_an_entity_of_another_kind_is_unsupported() -> None:
    from bunzai_codecs import Unsupported

    e = CanonicalEntity(kind="lorebook", id="lorebook-x", body=LorebookBody())
    with pytest.raises(Unsupported):
        MarinaraCharacterCodec().encode(e, EmitContext())


@pytest.mark.parametrize(
    ("edit", "path"),
    [
        (lambda c: c.__setitem__("data", []), "$.data.data"),
        (lambda c: c["data"].__setitem__("name", {"first": "V"}), "$.data.data.name"),
        (lambda c: c["data"]["extensions"].__setitem__("appearance", 1), "$.data.data.extensions.appearance"),
        (lambda c: c.__setitem__("avatar", 3), "$.data.avatar"),
        (lambda c: c.__setitem__("sprites", {}), "$.data.sprites"),
        (lambda c: c["sprites"].__setitem__(1, {"filename": "x", "data": None}), "$.data.sprites[1].data"),
        (lambda c: c.__setitem__("metadata", "x"), "$.data.metadata"),
        (lambda c: c["data"].__setitem__("character_book", "x"), "$.data.data.character_book"),
    ],
)
def test_bad_input_is_a_typed_error_with_its_path(edit: object, path: str) -> None:
    t = mutated(sample_tree(NAME))
    edit(t["data"])  # type: ignore[operator]
    with pytest.raises(Malformed) as err:
        load_tree(t, fmt="marinara-character")
    assert err.value.path == path and not getattr(err.value, "internal", False)
