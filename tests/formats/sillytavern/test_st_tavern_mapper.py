"""The shared Tavern mapper (tavern/fields.py): CCv1/V2/V3 data fields <-> the canonical character.

Expectations are written from the card specs (docs/formats/sillytavern.md#character-the-cards-data-tavernfieldspy) and
docs/canonical-model.md#characterbody, not from the mapper's output.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.entities import CharacterBody
from bunzai_codecs.formats._shared.wire import MapContext
from bunzai_codecs.formats.tavern.fields import (
    DEFAULT_ICON,
    V2_SHAPE,
    CardShape,
    TavernDialect,
    body_to_card,
    body_to_data,
    card_shape,
    card_to_body,
    data_to_body,
)
from tests.formats.helpers import sample


def _body(data: dict[str, Any], **kw: Any) -> CharacterBody:
    return CharacterBody.model_validate(data_to_body(data, **kw))


def test_v2_sample_maps_field_by_field() -> None:
    card = json.loads(sample("sillytavern/lighthouse-keeper.v2.json"))
    b, shape = card_to_body(card)
    body = CharacterBody.model_validate(b)
    assert shape == CardShape(wrapped=True, spec="chara_card_v2", spec_version="2.0", mirror=True)
    assert body.identity.name == "Maren"
    assert body.identity.description.startswith("{{char}} keeps the lighthouse")
    assert body.identity.characterVersion == "1.2"
    assert body.persona.personality == "dry, patient, superstitious about the weather"
    assert body.persona.scenario == "{{user}} washes ashore after a storm."
    assert body.greetings.firstMessage.startswith("*A lantern")
    assert [g.text for g in body.greetings.alternateGreetings or []] == [
        '*The foghorn groans twice.* "Two blasts means a ship. You don\'t look like a ship."'
    ]
    assert body.greetings.groupOnlyGreetings == []
    assert body.examples.exampleMessages.startswith("<START>")
    assert body.prompts.systemPrompt == ""
    assert body.prompts.postHistoryInstructions == "Keep {{char}}'s answers short unless asked about the sea."
    [inj] = body.prompts.depthInjections or []
    assert (inj.text, inj.depth, inj.role, inj.origin) == (
        "{{char}} never says the name of the drowned ship aloud.",
        4,
        "system",
        "depth_prompt",
    )
    assert body.attribution.creator == "bunzai samples"
    assert (
        body.attribution.creatorNotes == "A slow-burn mystery card. The lorebook holds the island's secrets."
    )
    assert body.discovery.tags == ["mystery", "coastal"]
    assert body.settings.talkativeness == 0.5  # the string "0.5"
    assert body.worldName == "Gull Rock"
    # claimed keys (talkativeness, fav, world, depth_prompt, regex_scripts) are not in extensions
    assert body.extensions == {"custom_tool/notes": {"reviewed": True}}
    # no `assets`: CCv3's default icon, the card image itself
    assert body.media.portrait is not None and body.media.portrait.ref == "ccdefault:"
    assert body.media.assets is None


def test_v3_sample_maps_every_v3_field() -> None:
    b, shape = card_to_body(json.loads(sample("sillytavern/starship-captain.v3.json")))
    body = CharacterBody.model_validate(b)
    assert shape.v3 and not shape.mirror
    assert body.identity.nickname == "Cap"
    assert body.attribution.creatorNotesMultilingual == {
        "en": "English notes. Works best with a low temperature.",
        "de": "Deutsche Hinweise.",
    }
    assert body.attribution.source == ["https://example.invalid/cards/ilse"]
    assert body.attribution.createdAt == 1735689600
    # 1740787200123 is milliseconds (RisuAI writes them): seconds, exactly
    assert body.attribution.updatedAt == 1740787200.123
    assert [g.text for g in body.greetings.groupOnlyGreetings or []] == ['"Crew, bridge. Now."']
    assert body.settings.talkativeness == 0.8
    assert body.persona.imagePrompt.prefix == "woman in a navy flight jacket, grey streak in dark hair"
    assert body.persona.imagePrompt.negative == "cartoon"
    assert body.extensions == {"app_x": {"theme": "amber"}}
    # the main icon is the portrait wherever it sits; the rest keep their order
    p = body.media.portrait
    assert p is not None and (p.role, p.ref, p.name, p.primary, p.mime) == (
        "portrait",
        "ccdefault:",
        "main",
        True,
        "image/png",
    )
    assets = body.media.assets or []
    assert [(a.role, a.ref, a.name, a.mime) for a in assets] == [
        ("background", "embeded://assets/background/image/bridge.webp", "bridge", "image/webp"),
        ("emotion", "embeded://assets/emotion/image/smug.png", "smug", "image/png"),
        ("other", "https://example.invalid/badge.gif", "badge", "image/gif"),
    ]


def test_v1_flat_card_reads_the_six_fields_and_st_v1_extras() -> None:
    v1 = {
        "name": "Old",
        "description": "d",
        "personality": "p",
        "scenario": "s",
        "first_mes": "hi",
        "mes_example": "",
        "creatorcomment": "notes",
        "talkativeness": "0.3",
    }
    b, shape = card_to_body(v1)
    body = CharacterBody.model_validate(b)
    assert not shape.wrapped and shape.notes_key == "creatorcomment"
    assert body.identity.name == "Old" and body.greetings.firstMessage == "hi"
    assert body.attribution.creatorNotes == "notes"
    assert body.settings.talkativeness == 0.3
    flat = body_to_card(body, shape)
    assert "spec" not in flat and flat["creatorcomment"] == "notes"
    assert {k: flat[k] for k in ("name", "description", "personality", "scenario", "first_mes")} == {
        "name": "Old",
        "description": "d",
        "personality": "p",
        "scenario": "s",
        "first_mes": "hi",
    }


def test_v3_fields_are_read_whatever_the_label_says() -> None:
    """Decode by shape, not label: ST keeps V3 fields on V2-labelled cards."""
    b, _ = card_to_body(
        {
            "spec": "chara_card_v2",
            "spec_version": "2.0",
            "data": {"name": "X", "nickname": "Y", "source": ["a"]},
        }
    )
    body = CharacterBody.model_validate(b)
    assert body.identity.nickname == "Y" and body.attribution.source == ["a"]
    assert body_to_card(body, V2_SHAPE)["data"]["nickname"] == "Y"


def test_talkativeness_number_strings_and_garbage() -> None:
    assert _body({"extensions": {"talkativeness": "1"}}).settings.talkativeness == 1
    assert _body({"extensions": {"talkativeness": 0.25}}).settings.talkativeness == 0.25
    assert _body({"extensions": {"talkativeness": "lots"}}).settings.talkativeness is None
    assert _body({"extensions": {"talkativeness": "nan"}}).settings.talkativeness is None


def test_empty_depth_prompt_is_no_injection_and_role_is_never_invented() -> None:
    assert (
        _body(
            {"extensions": {"depth_prompt": {"prompt": "", "depth": 4, "role": "system"}}}
        ).prompts.depthInjections
        is None
    )
    body = _body({"extensions": {"depth_prompt": {"prompt": "x", "depth": 0}}})
    [inj] = body.prompts.depthInjections or []
    assert (inj.depth, inj.role) == (0, None)
    assert body_to_data(body)["extensions"]["depth_prompt"] == {"prompt": "x", "depth": 0}


def test_world_empty_string_is_no_world() -> None:
    assert _body({"extensions": {"world": ""}}).worldName is None
    assert "world" not in body_to_data(_body({"extensions": {"world": ""}}))["extensions"]


def test_dates_zero_is_unknown_and_ms_are_converted_per_field() -> None:
    body = _body({"creation_date": 0, "modification_date": 1_700_000_000_000})
    assert body.attribution.createdAt is None
    assert body.attribution.updatedAt == 1_700_000_000
    assert body_to_data(body)["modification_date"] == 1_700_000_000


def test_alternate_greetings_string_and_tags_string_are_wrapped_like_st() -> None:
    body = _body({"alternate_greetings": "only one", "tags": "a, b,,c"})
    assert [g.text for g in body.greetings.alternateGreetings or []] == ["only one"]
    assert body.discovery.tags == ["a", "b", "c"]


def test_source_that_is_not_strings_stays_in_the_twin_with_a_warning() -> None:
    ctx = MapContext("$.data")
    b = data_to_body({"source": [{"name": "rolecall"}]}, ctx)
    assert b["attribution"]["source"] is None
    assert ctx.warnings and "$.data.source" in ctx.warnings[0]


def test_fav_is_claimed_but_not_mapped() -> None:
    """`fav` is ST UI state: escrow only, never in body.extensions."""
    body = _body({"extensions": {"fav": True, "zzz": 1}})
    assert body.extensions == {"zzz": 1}
    assert "fav" not in body_to_data(body)["extensions"]


def test_sd_character_prompt_maps_to_the_image_prompt() -> None:
    body = _body({"extensions": {"sd_character_prompt": {"positive": "red hat", "negative": ""}}})
    assert body.persona.imagePrompt.prefix == "red hat" and body.persona.imagePrompt.negative is None
    assert body_to_data(body)["extensions"]["sd_character_prompt"] == {"positive": "red hat", "negative": ""}


def test_fresh_v3_data_has_every_required_field_in_spec_order() -> None:
    d = body_to_data(CharacterBody.model_validate({"identity": {"name": "N"}}))
    assert list(d) == [
        "name",
        "description",
        "personality",
        "scenario",
        "first_mes",
        "mes_example",
        "creator_notes",
        "system_prompt",
        "post_history_instructions",
        "alternate_greetings",
        "tags",
        "creator",
        "character_version",
        "extensions",
        "group_only_greetings",
        "assets",
    ]
    assert d["assets"] == []  # a body with no portrait at all: explicitly no assets
    card = body_to_card(CharacterBody.model_validate({"identity": {"name": "N"}}))
    assert (card["spec"], card["spec_version"]) == ("chara_card_v3", "3.0")


def test_default_icon_round_trips_as_no_assets() -> None:
    body = _body({"name": "x"})
    assert "assets" not in body_to_data(body)
    body = _body({"name": "x", "assets": [DEFAULT_ICON]})
    assert body.media.portrait is not None and body.media.assets is None
    assert "assets" not in body_to_data(body)


def test_st_hybrid_mirror_follows_data_on_write() -> None:
    card = json.loads(sample("sillytavern/lighthouse-keeper.v2.json"))
    body = CharacterBody.model_validate(card_to_body(card)[0])
    body.identity.name = "Maren Holt"
    out = body_to_card(body, card_shape(card))
    assert out["name"] == out["data"]["name"] == "Maren Holt"
    assert out["creatorcomment"] == out["data"]["creator_notes"]


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({"name": ["x"]}, "$.data.name"),
        ({"extensions": []}, "$.data.extensions"),
        ({"alternate_greetings": [1, {"t": 1}]}, "$.data.alternate_greetings[1]"),
        ({"tags": {"a": 1}}, "$.data.tags"),
        ({"creation_date": "yesterday"}, "$.data.creation_date"),
        ({"assets": {"type": "icon"}}, "$.data.assets"),
        ({"assets": [{"type": "icon", "uri": 5.5, "name": "main"}, "x"]}, "$.data.assets[1]"),
        ({"creator_notes_multilingual": {"en": 1}}, "$.data.creator_notes_multilingual.en"),
        ({"extensions": {"depth_prompt": "x"}}, "$.data.extensions.depth_prompt"),
        (
            {"extensions": {"depth_prompt": {"prompt": "x", "depth": "deep"}}},
            "$.data.extensions.depth_prompt.depth",
        ),
    ],
)
def test_wrong_types_are_malformed_with_the_json_path(data: dict[str, Any], path: str) -> None:
    with pytest.raises(Malformed) as err:
        data_to_body(data)
    assert err.value.path == path


def test_card_with_spec_but_no_data_is_malformed_at_data() -> None:
    with pytest.raises(Malformed) as err:
        card_to_body({"spec": "chara_card_v2", "spec_version": "2.0", "name": "x"})
    assert err.value.path == "$.data"
    with pytest.raises(Malformed) as err:
        card_to_body({"spec": "chara_card_v3", "data": "nope"})
    assert err.value.path == "$.data"


# --- the dialect hook ---------------------------------------------------------------------------


class _Demo(TavernDialect):
    """What an app codec does: own `extensions.demo`, map it, write it back."""

    name = "demo"
    claims = frozenset({"demo"})

    def read(self, data: Mapping[str, Any], body: dict[str, Any], ctx: MapContext) -> None:
        demo = data.get("extensions", {}).get("demo") or {}
        if "voice" in demo:
            body["persona"]["voice"] = {"provider": "demo", "voiceId": demo["voice"]}

    def write(self, body: CharacterBody, data: dict[str, Any]) -> None:
        v = body.persona.voice
        if v is not None and v.provider == "demo":
            data["extensions"]["demo"] = {"voice": v.voiceId}


def test_a_dialect_claims_its_key_and_maps_it_both_ways() -> None:
    data = {"name": "x", "extensions": {"demo": {"voice": "v1"}, "other": 1}}
    plain = _body(data)
    assert plain.extensions == {"demo": {"voice": "v1"}, "other": 1}  # unclaimed: kept verbatim
    body = _body(data, dialects=(_Demo(),))
    assert body.extensions == {"other": 1}
    assert body.persona.voice is not None and body.persona.voice.voiceId == "v1"
    out = body_to_data(body, dialects=(_Demo(),))
    assert out["extensions"] == {"other": 1, "demo": {"voice": "v1"}}


def test_canonical_stability_of_fresh_bodies() -> None:
    """decode(encode(body)) == body for bodies that use every field the format holds."""
    body = CharacterBody.model_validate(
        {
            "identity": {"name": "A", "nickname": "a", "description": "d", "characterVersion": "2"},
            "persona": {"personality": "p", "scenario": "s", "imagePrompt": {"prefix": "x", "negative": "y"}},
            "prompts": {
                "systemPrompt": "sys",
                "postHistoryInstructions": "phi",
                "depthInjections": [{"text": "t", "depth": 2, "role": "user", "origin": "depth_prompt"}],
            },
            "greetings": {
                "firstMessage": "f",
                "alternateGreetings": [{"text": "g1"}],
                "groupOnlyGreetings": [{"text": "g2"}],
            },
            "examples": {"exampleMessages": "e"},
            "media": {
                "portrait": {
                    "role": "portrait",
                    "ref": "https://x/y.png",
                    "name": "main",
                    "primary": True,
                    "mime": "image/png",
                },
                "assets": [
                    {
                        "role": "emotion",
                        "ref": "embeded://e/happy.webp",
                        "name": "happy",
                        "mime": "image/webp",
                    }
                ],
            },
            "attribution": {
                "creator": "c",
                "creatorNotes": "n",
                "creatorNotesMultilingual": {"en": "n"},
                "source": ["u"],
                "createdAt": 1,
                "updatedAt": 2.5,
            },
            "discovery": {"tags": ["t"]},
            "settings": {"talkativeness": 0.1},
            "worldName": "W",
            "extensions": {"k": [1, 2]},
        }
    )
    again = CharacterBody.model_validate(card_to_body(body_to_card(body))[0])
    assert again == body
