"""sillytavern-preset: chat-completion presets and PromptManager exports (docs/formats/sillytavern.md#preset---presetbody,
docs/canonical-model.md#preset)."""

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
from tests.conftest import ROOT, expect_rows

FMT = "sillytavern-preset"
SAMPLES = ROOT / "samples" / "sillytavern"
NOIR = SAMPLES / "preset-noir-detective.json"
EXPORT = SAMPLES / "preset-prompts-export.json"


def _decode(data: bytes, name: str = "Preset.json") -> CanonicalEntity:
    return registry.get(FMT).decode(Sniff(data, name)).primary


def _score(tree: Any) -> float:
    return registry.get(FMT).detect(Sniff(orjson.dumps(tree), "x.json"))


def _fresh(e: CanonicalEntity) -> dict[str, Any]:
    return orjson.loads(write(CanonicalEntity(kind=e.kind, id=e.id, body=e.body), FMT).data)


# -- detection ----------------------------------------------------------------------------------------


def test_presets_and_prompt_exports_detect_at_the_native_score() -> None:
    for p in (NOIR, EXPORT):
        s = Sniff(p.read_bytes(), p.name)
        assert registry.detect(s) == registry.Candidate(FMT, 0.9)
    # samplers and templates only, no prompts (a real community preset looks like this)
    assert (
        _score({"temperature": 1, "openai_max_context": 4095, "openai_max_tokens": 300, "wi_format": "{0}"})
        == 0.9
    )


@pytest.mark.parametrize(
    "tree",
    [
        {"temperature": 0.7, "top_p": 1},  # any app's samplers
        {"temp": 0.7, "rep_pen": 1.1, "genamt": 300},  # a text-completion preset
        {"entries": {"0": {"key": ["a"], "content": "b"}}},
        {"personas": {}, "persona_descriptions": {}},
        {"spec": "chara_card_v2", "data": {"name": "A"}},
        {"version": 1, "type": "full", "data": {"prompts": "none"}},
        [{"prompts": []}],
    ],
)
def test_what_the_preset_codec_does_not_claim(tree: Any) -> None:
    Codec.detect_errors.clear()
    assert _score(tree) < 0.5
    assert Codec.detect_errors == []


# -- decode --------------------------------------------------------------------------------------------


def test_prompts_follow_the_100001_order_and_unordered_prompts_come_last_disabled() -> None:
    b = _decode(NOIR.read_bytes(), NOIR.name).body
    assert b.name == "preset-noir-detective"
    assert [(p.id, p.enabled) for p in b.prompts] == [
        ("main", True),
        ("worldInfoBefore", True),
        ("personaDescription", True),
        ("charDescription", True),
        ("nsfw", False),
        ("worldInfoAfter", True),
        ("dialogueExamples", True),
        ("chatHistory", True),
        ("3f6b1c2e-rain", True),  # the order says enabled; the prompt's own "enabled": false is not in force
        ("jailbreak", True),
        ("9a0d-unused", False),  # in the pool, not in the order
    ]


def test_prompt_fields() -> None:
    prompts = {p.id: p for p in _decode(NOIR.read_bytes(), NOIR.name).body.prompts}
    main, rain, history, jb = (
        prompts["main"],
        prompts["3f6b1c2e-rain"],
        prompts["chatHistory"],
        prompts["jailbreak"],
    )
    assert (main.name, main.role, main.systemPrompt, main.marker, main.placement) == (
        "Main Prompt",
        "system",
        True,
        False,
        "relative",
    )
    assert main.content.startswith("Write {{char}}'s next reply")
    assert (history.marker, history.markerSlot, history.content, history.role) == (
        True,
        "chatHistory",
        "",
        None,
    )
    assert (rain.role, rain.placement, rain.injectionDepth, rain.injectionOrder) == ("user", "in_chat", 2, 50)
    assert rain.injectionTrigger == ["normal", "swipe"]
    assert rain.forbidOverrides is False and rain.systemPrompt is False
    assert jb.forbidOverrides is True


def test_samplers_options_and_templates() -> None:
    b = _decode(NOIR.read_bytes(), NOIR.name).body
    assert b.samplers.model_dump(exclude_none=True) == {
        "temperature": 0.85,
        "topP": 0.95,
        "topK": 40,
        "minP": 0.05,
        "topA": 0,
        "repetitionPenalty": 1,
        "frequencyPenalty": 0.1,
        "presencePenalty": 0,
        "maxContext": 32768,
        "maxTokens": 600,
    }
    assert b.generation.model_dump(exclude_none=True) == {
        "seed": -1,
        "completions": 1,
        "maxContextUnlocked": False,
    }
    api = b.apiOptions
    assert (api.reasoningEffort, api.verbosity, api.promptPostProcessing) == ("medium", "low", "none")
    assert (api.streamResponses, api.squashSystemMessages, api.showThoughts) == (True, True, False)
    assert (api.functionCalling, api.enableWebSearch, api.requestImages) == (False, False, False)
    assert b.systemPrompts.impersonation == "[Write your next reply as {{user}}.]"
    assert b.systemPrompts.groupNudge == "[Write the next reply only as {{char}}.]"
    assert b.systemPrompts.assistantPrefill == ""
    assert b.templates.worldInfoFormat == "[Case notes: {0}]"
    assert (b.behavior.namesBehavior, b.behavior.continuePostfix, b.behavior.continuePrefill) == (
        1,
        " ",
        False,
    )


def test_the_100000_order_is_used_when_there_is_no_100001() -> None:
    tree = {
        "prompts": [{"identifier": "a", "name": "A"}, {"identifier": "b", "name": "B"}],
        "prompt_order": [{"character_id": 100000, "order": [{"identifier": "b", "enabled": False}]}],
    }
    assert [(p.id, p.enabled) for p in _decode(orjson.dumps(tree)).body.prompts] == [
        ("b", False),
        ("a", False),
    ]


def test_without_any_order_prompts_keep_their_array_order_and_own_enabled() -> None:
    tree = {
        "openai_max_context": 1,
        "wi_format": "{0}",
        "stream_openai": True,
        "prompts": [{"identifier": "x", "enabled": False}, {"identifier": "y"}],
    }
    assert [(p.id, p.enabled) for p in _decode(orjson.dumps(tree)).body.prompts] == [
        ("x", False),
        ("y", True),
    ]


def test_prompt_manager_export() -> None:
    e = _decode(EXPORT.read_bytes(), EXPORT.name)
    # main and chatHistory are in the order but not in the export's prompts: skipped
    assert [(p.id, p.enabled) for p in e.body.prompts] == [
        ("16fd2706-8baf-433b-82eb-8c7fada847da", True),
        ("7c9e6679-7425-40de-944b-e07fc1f90ae7", False),
    ]
    depth = e.body.prompts[0]
    assert (depth.role, depth.placement, depth.injectionDepth) == ("assistant", "in_chat", 1)
    assert e.body.samplers.temperature is None


# -- round trips and escrow -------------------------------------------------------------------------------


def _roundtrip(data: bytes, name: str) -> tuple[CanonicalEntity, bytes]:
    d = read(data, name)
    return d.primary, write(d.primary, FMT, linked=d.entities).data


@pytest.mark.parametrize("path", [NOIR, EXPORT], ids=lambda p: p.name)
def test_samples_round_trip_and_are_canonically_stable(path: Path) -> None:
    data = path.read_bytes()
    e, out = _roundtrip(data, path.name)
    assert orjson.loads(out) == orjson.loads(data)
    assert read(out, path.name).primary.body == e.body


@pytest.mark.parametrize(("rel", "fmt"), [r for r in expect_rows(FMT) if r[1] == FMT] or [("-", FMT)])
def test_corpus_presets_detect_and_round_trip(corpus: Path, rel: str, fmt: str) -> None:
    src = corpus / rel
    data = src.read_bytes()
    assert registry.detect(Sniff(data, src.name)) == registry.Candidate(fmt, 0.9)
    e, out = _roundtrip(data, src.name)
    assert orjson.loads(out) == orjson.loads(data)
    assert read(out, src.name).primary.body == e.body
    assert read(orjson.dumps(_fresh(e)), src.name).primary.body == e.body
    assert e.warnings == []


def test_connection_data_never_leaves_escrow() -> None:
    e = _decode(NOIR.read_bytes(), NOIR.name)
    fresh = _fresh(e)
    for key in (
        "chat_completion_source",
        "openrouter_model",
        "proxy_password",
        "reverse_proxy",
        "wrap_in_quotes",
    ):
        assert key not in fresh
    assert orjson.loads(write(e, FMT).data)["openrouter_model"] == "anthropic/claude-sonnet-4.5"


def test_a_fresh_export_writes_the_effective_order_slot() -> None:
    e = _decode(NOIR.read_bytes(), NOIR.name)
    fresh = _fresh(e)
    assert [s["character_id"] for s in fresh["prompt_order"]] == [100001]
    assert fresh["prompt_order"][0]["order"][-1] == {"identifier": "9a0d-unused", "enabled": False}
    assert fresh["custom_prompt_post_processing"] == ""
    assert read(orjson.dumps(fresh), NOIR.name).primary.body == e.body


def test_toggling_a_prompt_keeps_the_pool_order_and_the_other_slots() -> None:
    data = NOIR.read_bytes()
    src = orjson.loads(data)
    e = _decode(data, NOIR.name)
    e.body.prompts[4].enabled = True  # nsfw
    e.body.prompts[0].content = "Noir, but brief."
    out = orjson.loads(write(e, FMT).data)
    assert [p["identifier"] for p in out["prompts"]] == [p["identifier"] for p in src["prompts"]]
    assert out["prompt_order"][0] == src["prompt_order"][0]  # the 100000 slot, untouched
    assert out["prompt_order"][1]["order"][4] == {"identifier": "nsfw", "enabled": True}
    assert out["prompts"][0] == {**src["prompts"][0], "content": "Noir, but brief."}
    assert out["prompts"][9] == src["prompts"][9]  # its stray "enabled": false survives


def test_reordering_prompts_rewrites_only_the_effective_order() -> None:
    data = NOIR.read_bytes()
    src = orjson.loads(data)
    e = _decode(data, NOIR.name)
    e.body.prompts.insert(0, e.body.prompts.pop(9))  # jailbreak first
    out = orjson.loads(write(e, FMT).data)
    assert out["prompt_order"][1]["order"][0] == {"identifier": "jailbreak", "enabled": True}
    assert out["prompts"] == src["prompts"]


def test_a_changed_sampler_is_written_and_unknown_keys_stay() -> None:
    e = _decode(NOIR.read_bytes(), NOIR.name)
    e.body.samplers.temperature = 0.6
    e.body.apiOptions.promptPostProcessing = "strict"
    out = orjson.loads(write(e, FMT).data)
    assert out["temperature"] == 0.6 and out["custom_prompt_post_processing"] == "strict"
    assert out["extensions"]["preset_author_note"] == "noir v2"


# -- bad input --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tree", "path"),
    [
        ([1], "$"),
        ({"prompts": {"main": {}}, "prompt_order": []}, "$.prompts"),
        ({"prompts": [{"identifier": "a"}, "b"], "prompt_order": []}, "$.prompts[1]"),
        ({"prompts": [], "prompt_order": "main"}, "$.prompt_order"),
        ({"prompts": [], "prompt_order": [{"character_id": 100001, "order": {}}]}, "$.prompt_order[0].order"),
        (
            {"prompts": [{"identifier": "a"}], "prompt_order": [{"character_id": 100001, "order": [3]}]},
            "$.prompt_order[0].order[0]",
        ),
        ({"prompts": [{"identifier": "a", "injection_trigger": "normal"}]}, "$.prompts[0].injection_trigger"),
        ({"version": 1, "type": "full", "data": {"prompts": [7]}}, "$.data.prompts[0]"),
    ],
)
def test_bad_structure_is_a_typed_error_with_its_path(tree: Any, path: str) -> None:
    with pytest.raises(Malformed) as err:
        read(orjson.dumps(tree), "bad.json", format=FMT)
    assert err.value.path == path
    assert not getattr(err.value, "internal", False)


def test_a_wrong_scalar_is_a_warning_and_the_twin_keeps_it() -> None:
    tree = {
        "temperature": "hot",
        "top_p": "0.9",
        "stream_openai": "yes",
        "wi_format": "{0}",
        "openai_max_context": 1,
    }
    e = _decode(orjson.dumps(tree))
    assert e.body.samplers.temperature is None and e.body.samplers.topP == 0.9
    assert e.body.apiOptions.streamResponses is None
    assert e.warnings == [  # "0.9" is read (and noted); the others are the default (and noted)
        "$.temperature: expected a number, found the string 'hot'; read as None",
        "$.top_p: expected a number, found the string '0.9'; read as 0.9",
        "$.stream_openai: expected a boolean, found the string 'yes'; read as None",
    ]
    assert orjson.loads(write(e, FMT).data) == tree


# -- preset regex scripts: a linked regex set ----------------------------------------------------------


def test_preset_regex_scripts_are_a_linked_regex_set() -> None:
    d = read(NOIR.read_bytes(), NOIR.name)
    preset, scripts = d.entities
    assert scripts.kind == "regex" and preset.links == {"knowledgeRefs": [scripts.id]}
    assert scripts.original[FMT].raw == orjson.loads(NOIR.read_bytes())["extensions"]["regex_scripts"]
    rules = scripts.body.rules
    assert [(r.label, r.find, r.flags, r.phases, r.targets) for r in rules] == [
        ("Strip OOC", "\\(OOC:.*?\\)", "gs", ["output"], ["prompt"]),
        (
            "Italic thoughts",
            "\\{\\{thought\\}\\}(.+?)\\{\\{\\/thought\\}\\}",
            "g",
            ["input", "output"],
            ["display"],
        ),
    ]
    assert rules[1].maxDepth == 10 and rules[0].runOnEdit is True
    assert scripts.body.name == "preset-noir-detective"


def test_an_edited_script_is_re_embedded_through_its_twin() -> None:
    data = NOIR.read_bytes()
    src = orjson.loads(data)
    d = read(data, NOIR.name)
    preset, scripts = d.entities
    scripts.body.rules[0].replace = "[ooc removed]"
    out = write(preset, FMT, linked=d.entities)
    assert out.beside == []  # embedded, no file of its own
    tree = orjson.loads(out.data)
    assert tree["extensions"]["regex_scripts"][0] == {
        **src["extensions"]["regex_scripts"][0],
        "replaceString": "[ooc removed]",
    }
    assert tree["extensions"]["regex_scripts"][1] == src["extensions"]["regex_scripts"][1]
    assert tree["extensions"]["preset_author_note"] == "noir v2"


def test_unlinking_the_scripts_drops_them_and_an_unresolved_link_keeps_them() -> None:
    data = NOIR.read_bytes()
    d = read(data, NOIR.name)
    preset = d.primary
    assert orjson.loads(write(preset, FMT).data) == orjson.loads(data)  # link not resolvable: kept
    preset.links["knowledgeRefs"] = []
    tree = orjson.loads(write(preset, FMT, linked=d.entities).data)
    assert tree["extensions"] == {"preset_author_note": "noir v2"}


def test_a_fresh_preset_embeds_its_linked_scripts() -> None:
    d = read(NOIR.read_bytes(), NOIR.name)
    preset, scripts = d.entities
    bare = CanonicalEntity(kind="preset", id=preset.id, body=preset.body, links=preset.links)
    tree = orjson.loads(write(bare, FMT, linked=[scripts]).data)
    assert [s["scriptName"] for s in tree["extensions"]["regex_scripts"]] == ["Strip OOC", "Italic thoughts"]
    again = read(orjson.dumps(tree), NOIR.name)
    assert again.entities[1].body.rules == scripts.body.rules


def test_empty_or_malformed_preset_scripts() -> None:
    tree = {"prompts": [], "prompt_order": [], "extensions": {"regex_scripts": []}}
    d = read(orjson.dumps(tree), "p.json")
    assert len(d.entities) == 1 and orjson.loads(write(d.primary, FMT, linked=d.entities).data) == tree
    with pytest.raises(Malformed) as err:
        read(
            orjson.dumps(
                {**tree, "extensions": {"regex_scripts": [{"scriptName": "s", "findRegex": ["x"]}]}}
            ),
            "p.json",
        )
    assert err.value.path == "$.extensions.regex_scripts[0].findRegex"


def test_unknown_prompt_values_are_kept_verbatim() -> None:
    tree = {
        "prompts": [{"identifier": "a", "role": "tool", "injection_position": 2, "content": "x"}],
        "prompt_order": [{"character_id": 100001, "order": [{"identifier": "a", "enabled": True}]}],
        "reasoning_effort": "maximum",
        "names_behavior": 7,
    }
    e = _decode(orjson.dumps(tree))
    p = e.body.prompts[0]
    assert (p.role, p.placement) == ("tool", "2")
    assert (e.body.apiOptions.reasoningEffort, e.body.behavior.namesBehavior) == ("maximum", 7)
    fresh = _fresh(e)
    assert fresh["prompts"][0]["role"] == "tool" and fresh["prompts"][0]["injection_position"] == 2
    assert fresh["reasoning_effort"] == "maximum" and fresh["names_behavior"] == 7


def test_an_order_slot_without_its_order_list_is_a_typed_error() -> None:
    """Regression (fuzz corpus json/crash-42f1dcd7...): a prompt_order slot for the effective
    character without an ``order`` key raised KeyError inside the decoder."""
    import orjson

    from bunzai_codecs.core import registry
    from bunzai_codecs.core.errors import Malformed
    from bunzai_codecs.core.sniff import Sniff

    tree = {
        "prompts": [{"identifier": "main", "name": "Main", "content": "x"}],
        "prompt_order": [{"character_id": 100001, "ordgr": [{"identifier": "main", "enabled": True}]}],
    }
    with pytest.raises(Malformed) as e:
        registry.get("sillytavern-preset").decode(Sniff(orjson.dumps(tree), "p.json"))
    assert not getattr(e.value, "internal", False)
    assert e.value.path == "$.prompt_order[0].order"
