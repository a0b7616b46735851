"""``lumiverse-persona`` (the account object, docs/formats/lumiverse.md#persona) and ``lumiverse-preset`` (the
``lumiverse_preset`` wrapper, docs/formats/lumiverse.md#preset)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bunzai_codecs import read
from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.entities import PersonaBody, PresetBody
from tests.formats.codec_helpers import decode, dumps, export, rt_compare, sample_tree, scores, winner
from tests.formats.helpers import edited, sample

LVP = "lumiverse-persona"
LVS = "lumiverse-preset"
REN = "lumiverse/ren.lumiverse-persona.json"
STORY = "lumiverse/storyteller.lumiverse-preset.json"


# --- persona --------------------------------------------------------------------------------------


def test_persona_detection_beats_the_flat_card_heuristic() -> None:
    s = scores(sample(REN))
    assert s[LVP] == 0.95 and s["sillytavern"] == 0.6
    tree = sample_tree(REN)
    assert LVP not in scores(dumps({k: v for k, v in tree.items() if k != "objective_pronoun"}))
    assert LVP not in scores(dumps({**tree, "subjective_pronoun": None}))


def test_persona_fields() -> None:
    b = decode(sample(REN)).primary.body
    assert isinstance(b, PersonaBody)
    assert (b.name, b.content, b.brief) == (
        "Ren",
        "{{user}} is Ren, who catalogues what other people throw away.",
        "night archivist",
    )
    assert b.presentation.imageUrl == "avatars/ren.webp" and b.attribution.source == "lumiverse"
    assert b.worldName is None  # attached_world_book_id is an id, not a world name


def test_persona_round_trip_edit_and_stability() -> None:
    data = sample(REN)
    d = decode(data)
    out = export(d.primary, LVP)
    assert rt_compare(data, out) == [] and decode(out).primary.body == d.primary.body
    e = edited(d.primary, content="{{user}} is Ren.")
    tree = json.loads(export(e, LVP))
    assert tree["description"] == "{{user}} is Ren."
    assert {k: v for k, v in tree.items() if k != "description"} == {
        k: v for k, v in sample_tree(REN).items() if k != "description"
    }


def test_persona_cross_format_to_and_from_sillytavern() -> None:
    d = decode(sample(REN))
    st = read(export(d.primary, "sillytavern-persona"), "personas.json").primary.body
    lv = d.primary.body
    assert isinstance(st, PersonaBody) and isinstance(lv, PersonaBody)
    assert (st.name, st.content, st.brief) == (lv.name, lv.content, lv.brief)
    src = read(sample("sillytavern/personas-backup.json"), "personas-backup.json").primary
    out = export(src, LVP)
    assert winner(out) == LVP
    back = decode(out).primary.body
    assert isinstance(back, PersonaBody) and isinstance(src.body, PersonaBody)
    assert (back.name, back.content, back.brief) == (src.body.name, src.body.content, src.body.brief)


def test_persona_bad_input_is_typed() -> None:
    with pytest.raises(Malformed) as err:
        read(dumps({**sample_tree(REN), "possessive_pronoun": ["their"]}), "p.json", format=LVP)
    assert err.value.path == "$.possessive_pronoun"
    with pytest.raises(Malformed) as err:
        read(b"[]", "p.json", format=LVP)
    assert err.value.path == "$"


# --- preset ---------------------------------------------------------------------------------------


def test_preset_detection() -> None:
    assert scores(sample(STORY)) == {LVS: 1.0}
    assert LVS not in scores(dumps({**sample_tree(STORY), "preset": []}))
    assert LVS not in scores(sample("sillytavern/preset-noir-detective.json"))


def test_preset_blocks_and_settings() -> None:
    b = decode(sample(STORY)).primary.body
    assert isinstance(b, PresetBody)
    assert (b.name, b.description) == ("Storyteller", "Third-person narration with a slow reveal.")
    head, main, chat, nudge, after = b.prompts
    assert (head.marker, head.extras) == (False, {"marker": "category", "position": "pre_history"})
    assert (main.forbidOverrides, main.placement, main.content) == (
        True,
        "relative",
        "Narrate as {{char}} in third person.",
    )
    assert (chat.marker, chat.markerSlot) == (True, "chatHistory")
    assert (nudge.enabled, nudge.placement, nudge.injectionDepth, nudge.role) == (False, "in_chat", 1, "user")
    assert nudge.injectionTrigger == ["normal", "continue"]
    assert after.enabled is True  # no enabled key: only an explicit false disables
    assert after.extras == {"position": "post_history", "color": "teal"}
    assert (b.samplers.temperature, b.samplers.topP, b.samplers.maxTokens, b.samplers.maxContext) == (
        0.9,
        0.95,
        600,
        24000,
    )
    assert b.apiOptions.streamResponses is True and b.apiOptions.squashSystemMessages is True
    assert (
        b.systemPrompts.impersonation == "Write as {{user}}." and b.systemPrompts.continueNudge == "Continue."
    )
    assert b.behavior.sendIfEmpty == "" and b.behavior.continuePrefill is False
    assert b.generation.seed == -1


def test_preset_round_trip_edit_and_stability() -> None:
    data = sample(STORY)
    d = decode(data)
    out = export(d.primary, LVS)
    assert rt_compare(data, out) == [] and decode(out).primary.body == d.primary.body

    def change(b: dict[str, Any]) -> None:
        b["prompts"][1]["content"] = "Narrate in third person."
        b["samplers"]["temperature"] = 1.0

    tree = json.loads(export(edited(d.primary, change), LVS))
    src = sample_tree(STORY)
    p, s = tree["preset"], src["preset"]
    assert p["blocks"][1]["content"] == "Narrate in third person."
    assert p["blocks"][0] == s["blocks"][0] and p["blocks"][4] == s["blocks"][4]
    assert p["samplerOverrides"]["temperature"] == 1.0
    assert p["promptVariables"] == s["promptVariables"] and tree["cover_url"] == src["cover_url"]
    assert p["advancedSettings"]["customStops"] == ["\n{{user}}:"]


def test_preset_cross_format_to_and_from_sillytavern() -> None:
    d = decode(sample(STORY))
    st = read(export(d.primary, "sillytavern-preset"), "Storyteller.json").primary.body
    lv = d.primary.body
    assert isinstance(st, PresetBody) and isinstance(lv, PresetBody)
    assert [(p.name, p.content, p.enabled) for p in st.prompts] == [
        (p.name, p.content, p.enabled) for p in lv.prompts
    ]
    assert [p.id for p in st.prompts][2] == "chatHistory"  # a marker takes SillyTavern's slot name
    assert st.samplers == lv.samplers
    src = read(sample("sillytavern/preset-noir-detective.json"), "preset-noir-detective.json").primary
    out = export(src, LVS)
    assert winner(out) == LVS
    back = decode(out).primary.body
    assert isinstance(back, PresetBody) and isinstance(src.body, PresetBody)
    assert [(p.id, p.content, p.enabled, p.role) for p in back.prompts] == [
        (p.id, p.content, p.enabled, p.role or "system") for p in src.body.prompts
    ]
    assert back.samplers.temperature == src.body.samplers.temperature


def test_preset_bad_input_is_typed() -> None:
    tree = sample_tree(STORY)
    tree["preset"]["blocks"][2] = "chat"
    with pytest.raises(Malformed) as err:
        read(dumps(tree), "p.json", format=LVS)
    assert err.value.path == "$.preset.blocks[2]"
    tree = sample_tree(STORY)
    tree["preset"]["samplerOverrides"] = [0.9]
    with pytest.raises(Malformed) as err:
        read(dumps(tree), "p.json", format=LVS)
    assert err.value.path == "$.preset.samplerOverrides"
