"""SillyTavern's text-completion presets (sillytavern-textgen, -kobold, -novel) and Advanced Formatting
templates (sillytavern-instruct, -context, -sysprompt, -reasoning): detection, field map, round trip."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bunzai_codecs import Malformed, read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import PresetBody
from tests.conftest import expect_rows
from tests.formats.codec_helpers import rt_compare
from tests.formats.helpers import edited, sample

NEW = (
    "sillytavern-textgen",
    "sillytavern-kobold",
    "sillytavern-novel",
    "sillytavern-instruct",
    "sillytavern-context",
    "sillytavern-sysprompt",
    "sillytavern-reasoning",
)
SAMPLES = {
    "sillytavern/textgen-Lantern-Balanced.json": "sillytavern-textgen",
    "sillytavern/kobold-Tidewater.json": "sillytavern-kobold",
    "sillytavern/novel-Quiet-Harbor.json": "sillytavern-novel",
    "sillytavern/instruct-Harbor-ChatML.json": "sillytavern-instruct",
    "sillytavern/instruct-legacy-Vicuna.json": "sillytavern-instruct",
    "sillytavern/context-Harbor-Story.json": "sillytavern-context",
    "sillytavern/sysprompt-Harbor-Narrator.json": "sillytavern-sysprompt",
    "sillytavern/reasoning-Harbor-Think.json": "sillytavern-reasoning",
}
CORPUS_ROWS = [r for r in expect_rows("sillytavern") if r[1] in NEW]


def _read(rel: str) -> CanonicalEntity:
    return read(sample(rel), rel.rsplit("/", 1)[-1]).primary


def _body(rel: str) -> dict[str, Any]:
    return _read(rel).body.dump()


def _scores(tree: Any) -> dict[str, float]:
    s = Sniff(json.dumps(tree).encode(), "x.json")
    return {c.id: c.score for c in registry.detect_all(s).candidates}


def _fresh(e: CanonicalEntity, fmt: str) -> dict[str, Any]:
    bare = CanonicalEntity(kind=e.kind, id=e.id, body=e.body)
    return json.loads(write(bare, fmt).data)


# -- detection ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("rel,fmt", sorted(SAMPLES.items()))
def test_samples_detect_as_their_kind(rel: str, fmt: str) -> None:
    best = registry.detect(Sniff(sample(rel), rel))
    assert best is not None and best.id == fmt


@pytest.mark.parametrize(
    "tree,expected",
    [
        ({"name": "x", "content": "y"}, {"sillytavern-sysprompt": 0.6}),  # any {name, content}: never sure
        ({"name": "x", "content": "y", "post_history": ""}, {"sillytavern-sysprompt": 0.8}),
        ({"name": "x", "content": "y", "id": 3}, {}),  # another app's record
        ({"name": 1, "content": "y"}, {}),
        ({"name": "r", "prefix": "<t>", "suffix": "</t>", "separator": ""}, {"sillytavern-reasoning": 0.9}),
        ({"name": "r", "prefix": "<t>", "suffix": "</t>", "separator": "", "x": 1}, {}),
        ({"name": "r", "prefix": "<t>", "suffix": "</t>"}, {}),
        ({"temp": 1, "rep_pen": 1}, {}),  # too little to say which API
        ({"temp": 1, "rep_pen": 1, "typical_p": 1}, {"sillytavern-textgen": 0.9}),
        ({"temp": 1, "rep_pen": 1, "typical": 1}, {"sillytavern-kobold": 0.9}),
        (
            {"temperature": 1, "repetition_penalty": 1, "tail_free_sampling": 1, "phrase_rep_pen": "off"},
            {"sillytavern-novel": 0.9},
        ),
        ({"temperature": 1, "repetition_penalty": 1, "tail_free_sampling": 1}, {}),
        ({"input_sequence": "a", "output_sequence": "b", "name": "n"}, {"sillytavern-instruct": 0.6}),
        ({"input_sequence": 1, "output_sequence": "b", "name": "n"}, {}),
        ({"story_string": "{{description}}", "name": "n"}, {"sillytavern-context": 0.6}),
        (
            {"story_string": "s", "example_separator": "", "chat_start": "", "single_line": False},
            {"sillytavern-context": 0.95},
        ),
    ],
)
def test_detection_scores(tree: dict[str, Any], expected: dict[str, float]) -> None:
    got = {k: v for k, v in _scores(tree).items() if k in NEW}
    assert got == expected


def test_other_presets_are_not_claimed() -> None:
    for rel in ("sillytavern/preset-noir-detective.json", "risu/harbor_night_shift_preset.json"):
        s = Sniff(sample(rel), rel)
        assert {c.id for c in registry.detect_all(s).candidates} & set(NEW) == set(), rel


def test_formatting_templates_yield_to_sillytavern_preset_family_default() -> None:
    """``sillytavern-preset`` stays SillyTavern's preset codec for a linked preset of another app."""
    assert registry.family_codec("sillytavern", "preset").id == "sillytavern-preset"  # type: ignore[union-attr]


# -- field map ----------------------------------------------------------------------------------------


def test_textgen_fields() -> None:
    b = _body("sillytavern/textgen-Lantern-Balanced.json")
    assert b["name"] == "textgen-Lantern-Balanced"  # the file name
    s = b["samplers"]
    assert (s["temperature"], s["minP"], s["repetitionPenalty"], s["presencePenalty"]) == (
        0.95,
        0.05,
        1.05,
        0.1,
    )
    assert (s["dynamicTemperature"], s["dynamicTemperatureMin"], s["dynamicTemperatureMax"]) == (
        True,
        0.7,
        1.3,
    )
    assert s["drySequenceBreakers"] == ["\n", ":", '"', "*", "{{char}}"]  # a JSON text in the file
    assert (s["dryMultiplier"], s["dryPenaltyLastN"], s["xtcProbability"]) == (0.8, 1024, 0.5)
    assert s["samplerOrder"] == [
        "repetitionPenalty",
        "topK",
        "topA",
        "tailFreeSampling",
        "typicalP",
        "topP",
        "temperature",
    ]
    assert (s["maxTokens"], s["maxContext"]) == (350, 16384)  # genamt, max_length
    assert "penaltyAlpha" not in s and "numBeams" not in s  # backend switches: escrow only


def test_kobold_fields_and_linked_regex() -> None:
    d = read(sample("sillytavern/kobold-Tidewater.json"), "kobold-Tidewater.json")
    s = d.primary.body.dump()["samplers"]
    assert (s["typicalP"], s["tailFreeSampling"], s["topK"], s["repetitionPenaltySlope"]) == (
        1,
        0.95,
        100,
        0.7,
    )
    assert s["mirostatMode"] == 0 and s["grammar"] == ""
    assert [e.kind for e in d.entities] == ["preset", "regex"]
    assert d.primary.knowledge_refs == [d.entities[1].id]
    assert [r.label for r in d.entities[1].body.rules] == ["Trim trailing name"]  # type: ignore[attr-defined]


def test_novel_fields_and_length_spellings() -> None:
    s = _body("sillytavern/novel-Quiet-Harbor.json")["samplers"]
    assert s["samplerOrder"] == ["temperature", "minP", "topK", "topP"]
    assert (s["frequencyPenalty"], s["phraseRepetitionPenalty"], s["mirostatEta"]) == (0.002, "light", 1)
    assert (s["maxTokens"], s["maxContext"]) == (150, 8000)  # NovelAI's spelling: max_length is the reply
    saved = {
        "temperature": 1,
        "repetition_penalty": 1.2,
        "tail_free_sampling": 1,
        "phrase_rep_pen": "off",
        "genamt": 200,
        "max_length": 4096,
    }
    s2 = read(json.dumps(saved).encode(), "Mine.json").primary.body.dump()["samplers"]
    assert (s2["maxTokens"], s2["maxContext"]) == (200, 4096)  # as SillyTavern saves one: genamt + max_length


def test_instruct_fields() -> None:
    i = _body("sillytavern/instruct-Harbor-ChatML.json")
    assert i["name"] == "Harbor ChatML"
    ins = i["instruct"]
    assert (ins["inputSequence"], ins["outputSuffix"], ins["stopSequence"]) == (
        "<|im_start|>user",
        "<|im_end|>\n",
        "<|im_end|>",
    )
    assert (ins["namesBehavior"], ins["wrap"], ins["activationRegex"]) == ("always", True, "harbor|chatml")
    assert ins["storyStringPrefix"] == "<|im_start|>system"


def test_legacy_instruct_reads_as_sillytavern_migrates_it() -> None:
    b = _body("sillytavern/instruct-legacy-Vicuna.json")
    ins = b["instruct"]
    assert ins["namesBehavior"] == "always"  # names: true
    assert ins["outputSuffix"] == "\n"  # separator_sequence
    assert [(p["id"], p["content"][:10]) for p in b["prompts"]] == [("main", "A chat bet")]
    assert "systemSequencePrefix" not in ins  # dropped by SillyTavern: escrow only


def test_legacy_instruct_edit_keeps_the_legacy_spelling() -> None:
    e = edited(
        _read("sillytavern/instruct-legacy-Vicuna.json"), lambda b: b["instruct"].update(namesBehavior="none")
    )
    out = json.loads(write(e, "sillytavern-instruct").data)
    assert (out["names"], out["names_force_groups"]) == (False, False)
    assert "names_behavior" not in out and out["separator_sequence"] == "\n"


def test_context_fields() -> None:
    c = _body("sillytavern/context-Harbor-Story.json")["context"]
    assert c["storyString"].startswith("{{#if system}}")
    assert (c["exampleSeparator"], c["chatStart"]) == ("--- example ---", "--- the night shift begins ---")
    assert (c["storyStringPosition"], c["storyStringDepth"], c["storyStringRole"]) == (1, 6, "system")
    assert c["trimSentences"] is True


def test_sysprompt_is_the_main_and_post_history_prompts() -> None:
    b = _body("sillytavern/sysprompt-Harbor-Narrator.json")
    assert [(p["id"], p["role"], p["systemPrompt"]) for p in b["prompts"]] == [
        ("main", "system", True),
        ("jailbreak", "system", True),
    ]
    assert b["prompts"][1]["content"].startswith("Remember: the fog")


def test_sysprompt_from_a_chat_completion_preset_takes_main_and_jailbreak() -> None:
    cc = _read("sillytavern/preset-noir-detective.json")
    by_id = {p.id: p.content for p in cc.body.prompts}  # type: ignore[attr-defined]
    out = _fresh(cc, "sillytavern-sysprompt")
    assert out == {"name": cc.body.name, "content": by_id["main"], "post_history": by_id.get("jailbreak", "")}


def test_reasoning_fields() -> None:
    assert _body("sillytavern/reasoning-Harbor-Think.json")["reasoning"] == {
        "prefix": "<thinking>\n",
        "suffix": "\n</thinking>",
        "separator": "\n\n",
    }


# -- round trip and edits -----------------------------------------------------------------------------


@pytest.mark.parametrize("rel,fmt", sorted(SAMPLES.items()))
def test_samples_round_trip(rel: str, fmt: str) -> None:
    data = sample(rel)
    d = read(data, rel.rsplit("/", 1)[-1])
    out = write(d.primary, fmt, linked=d.entities).data
    assert json.loads(out) == json.loads(data)
    back = read(out, rel.rsplit("/", 1)[-1], format=fmt)
    assert [e.body for e in back.entities] == [e.body for e in d.entities]


def test_an_edit_changes_its_key_only() -> None:
    rel = "sillytavern/textgen-Lantern-Balanced.json"
    e = edited(
        _read(rel), lambda b: b["samplers"].update(temperature=0.5, samplerOrder=["temperature", "topP"])
    )
    before, after = json.loads(sample(rel)), json.loads(write(e, "sillytavern-textgen").data)
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    assert changed == {"temp", "sampler_order"}
    assert after["temp"] == 0.5 and after["sampler_order"] == [5, 2]
    assert after["penalty_alpha"] == 0 and after["sampler_priority"] == before["sampler_priority"]  # escrow


def test_dropping_the_regex_link_removes_the_scripts() -> None:
    d = read(sample("sillytavern/kobold-Tidewater.json"), "kobold-Tidewater.json")
    e = d.primary
    e.links = {"knowledgeRefs": []}
    out = json.loads(write(e, "sillytavern-kobold", linked=[e]).data)
    assert "regex_scripts" not in out.get("extensions", {})


def test_fresh_exports_carry_every_key_with_neutral_values() -> None:
    body = PresetBody.model_validate({"name": "N", "samplers": {"temperature": 0.7, "topK": 20}})
    e = CanonicalEntity(kind="preset", id="preset-x", body=body)
    tg = json.loads(write(e, "sillytavern-textgen").data)
    assert (tg["temp"], tg["top_k"], tg["top_p"], tg["rep_pen"], tg["dry_multiplier"]) == (0.7, 20, 1, 1, 0)
    assert "name" not in tg  # a sampler preset is named by its file
    kb = json.loads(write(e, "sillytavern-kobold").data)
    assert (kb["temp"], kb["typical"], kb["sampler_order"]) == (0.7, 1, [6, 0, 1, 3, 4, 2, 5])
    nv = json.loads(write(e, "sillytavern-novel").data)
    assert (nv["temperature"], nv["max_context"], nv["max_length"], nv["order"]) == (
        0.7,
        8000,
        150,
        [1, 5, 0, 2, 3, 4],
    )
    ins = json.loads(write(e, "sillytavern-instruct").data)
    assert list(ins)[-1] == "name" and ins["input_sequence"] == "" and ins["names_behavior"] == "force"
    rs = json.loads(write(e, "sillytavern-reasoning").data)
    assert rs == {"name": "N", "prefix": "", "suffix": "", "separator": ""}


def test_kobold_and_textgen_share_the_kobold_sampler_order() -> None:
    kb = _read("sillytavern/kobold-Tidewater.json")
    back = read(write(kb, "sillytavern-textgen").data, "t.json").primary.body.dump()["samplers"]
    want = kb.body.dump()["samplers"]
    for k in (
        "temperature",
        "topP",
        "topK",
        "typicalP",
        "tailFreeSampling",
        "repetitionPenaltyRange",
        "samplerOrder",
    ):
        assert back[k] == want[k], k


def test_a_sampler_order_the_app_has_no_id_for_is_an_expected_loss() -> None:
    cov = registry.get("sillytavern-kobold").coverage
    body = {"samplers": {"samplerOrder": ["unified", "topP"]}}
    assert cov.covers("samplers.samplerOrder[0]")
    assert not cov.for_body(body).covers("samplers.samplerOrder[0]")
    assert cov.for_body({"samplers": {"samplerOrder": ["topP", "7"]}}).covers("samplers.samplerOrder[0]")


# -- hostile shapes -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rel,change,path",
    [
        ("sillytavern/kobold-Tidewater.json", lambda t: t.update(sampler_order="6,0,1"), "$.sampler_order"),
        ("sillytavern/novel-Quiet-Harbor.json", lambda t: t.update(order=[0, {"id": 1}]), "$.order[1]"),
        (
            "sillytavern/textgen-Lantern-Balanced.json",
            lambda t: t.update(sampler_order=[6, None]),
            "$.sampler_order[1]",
        ),
    ],
)
def test_wrong_structures_are_malformed_with_the_path(rel: str, change: Any, path: str) -> None:
    tree = json.loads(sample(rel))
    change(tree)
    with pytest.raises(Malformed) as ei:
        read(json.dumps(tree).encode(), rel.rsplit("/", 1)[-1])
    assert ei.value.path == path


def test_wrong_scalars_are_warnings_and_the_twin_keeps_them() -> None:
    tree = json.loads(sample("sillytavern/context-Harbor-Story.json"))
    tree["story_string_role"] = 7
    tree["trim_sentences"] = "yes"
    tree["dry"] = 1
    data = json.dumps(tree).encode()
    e = read(data, "c.json").primary
    c = e.body.dump()["context"]
    assert "storyStringRole" not in c and "trimSentences" not in c
    assert any("story_string_role" in w for w in e.warnings) and any(
        "trim_sentences" in w for w in e.warnings
    )
    assert json.loads(write(e, "sillytavern-context").data) == tree


# -- the real files -----------------------------------------------------------------------------------


@pytest.mark.parametrize("rel,fmt", CORPUS_ROWS)
def test_corpus_detects_round_trips_and_is_stable(corpus: Path, rel: str, fmt: str) -> None:
    data = (corpus / rel).read_bytes()
    name = rel.rsplit("/", 1)[-1]
    best = registry.detect(Sniff(data, name))
    assert best is not None and best.id == fmt
    d = read(data, name)
    assert d.primary.warnings == []
    out = write(d.primary, fmt, linked=d.entities).data
    assert rt_compare(data, out) == []
    assert read(out, name, format=fmt).primary.body == d.primary.body


def test_corpus_has_every_new_kind(corpus: Path) -> None:
    assert {fmt for _, fmt in CORPUS_ROWS} == set(NEW)


def test_corpus_values(corpus: Path) -> None:
    base = corpus / "sillytavern"

    def body(rel: str) -> dict[str, Any]:
        return read((base / rel).read_bytes(), rel.rsplit("/", 1)[-1]).primary.body.dump()

    assert body("st-2024-09-presets/kobold-Godlike.json")["samplers"]["samplerOrder"] == [
        "repetitionPenalty",
        "temperature",
        "typicalP",
        "tailFreeSampling",
        "topP",
        "topA",
        "topK",
    ]
    golden = body("st-1.18.0-presets/novel-Erato-Golden-Arrow.json")["samplers"]
    assert golden["samplerOrder"] == ["unified", "topP"]
    assert (golden["unifiedLinear"], golden["unifiedQuad"]) == (0.3, 0.19)
    assert body("st-1.18.0-presets/reasoning-DeepSeek.json")["reasoning"]["prefix"] == "<think>\n"
    assert body("st-1.18.0-presets/instruct-Mistral-V3-Tekken.json")["instruct"]["systemSameAsUser"] is True
    assert body("st-1.18.0-presets/sysprompt-Actor.json")["prompts"][0]["content"].startswith(
        "You are an expert actor"
    )


def test_a_sampler_id_no_app_has_is_kept_as_text_and_never_written() -> None:
    tree = json.loads(sample("sillytavern/kobold-Tidewater.json"))
    tree["sampler_order"] = [6, 1e308, 18446744073709551615, 7]
    e = read(json.dumps(tree).encode(), "k.json").primary
    assert e.body.samplers.samplerOrder == ["repetitionPenalty", "1e+308", "18446744073709551615", "7"]  # type: ignore[attr-defined]
    assert (
        json.loads(write(e, "sillytavern-kobold", linked=[e]).data)["sampler_order"] == tree["sampler_order"]
    )
    fresh = CanonicalEntity(kind="preset", id=e.id, body=e.body)
    assert json.loads(write(fresh, "sillytavern-textgen").data)["sampler_order"] == [6, 7]


def test_an_instruct_switch_is_read_and_never_added() -> None:
    old = {
        "name": "n",
        "input_sequence": "a",
        "output_sequence": "b",
        "enabled": True,
        "wrap": True,
        "macro": True,
    }
    e = read(json.dumps(old).encode(), "i.json").primary
    assert e.body.instruct.enabled is True  # type: ignore[attr-defined]
    assert json.loads(write(e, "sillytavern-instruct").data) == old
    risu = PresetBody.model_validate({"name": "R", "instruct": {"enabled": False, "chatTemplate": "chatml"}})
    out = json.loads(
        write(CanonicalEntity(kind="preset", id="preset-r", body=risu), "sillytavern-instruct").data
    )
    assert "enabled" not in out  # picking the template must not switch instruct mode
