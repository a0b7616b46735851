"""What the other apps' presets hold of SillyTavern's text-completion presets and templates: RisuAI's
instruct chat template, stop strings and main prompt, Marinara's thinking tags, Lumiverse's stop
strings; SillyTavern's chat-completion preset keeps its fingerprint with no prompts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bunzai_codecs import read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import PresetBody
from tests.formats.helpers import edited, sample


def _entity(body: dict[str, Any]) -> CanonicalEntity:
    return CanonicalEntity(kind="preset", id="preset-t", body=PresetBody.model_validate(body))


def _back(e: CanonicalEntity, fmt: str, name: str = "t.json") -> PresetBody:
    out = write(e, fmt).data
    body = read(out, name, format=fmt).primary.body
    assert isinstance(body, PresetBody)
    return body


# -- RisuAI -------------------------------------------------------------------------------------------


def _risup(data: bytes) -> dict[str, Any]:
    """The botPreset inside a fresh ``.risup`` export (read back through its own container)."""
    tree = read(data, "p.risup").primary.original["risu-preset"].raw
    assert isinstance(tree, dict)
    return tree


def test_risu_instruct_template_and_stop_strings() -> None:
    tree = json.loads(sample("risu/harbor_night_shift_preset.json"))
    tree.update(useInstructPrompt=True, instructChatTemplate="jinja", JinjaTemplate="{{ messages }}")
    tree["localStopStrings"] = ["\nUser:"]
    e = read(json.dumps(tree).encode(), "p.json").primary
    assert e.body.instruct.model_dump(exclude_none=True) == {  # type: ignore[attr-defined]
        "enabled": True,
        "chatTemplate": "jinja",
        "jinjaTemplate": "{{ messages }}",
    }
    assert e.body.samplers.stopSequences == ["\nUser:"]  # type: ignore[attr-defined]
    changed = edited(e, lambda b: b["instruct"].update(chatTemplate="chatml"))
    out = json.loads(write(changed, "risu-preset").data)
    assert out["instructChatTemplate"] == "chatml"
    assert {k: v for k, v in out.items() if k != "instructChatTemplate"} == {
        k: v for k, v in tree.items() if k != "instructChatTemplate"
    }


def test_risu_corpus_preset_names_its_chat_template(corpus: Path) -> None:
    data = (corpus / "risu/preset/RISUCO_ELYSIUM_8.0_preset.risup").read_bytes()
    body = read(data, "p.risup").primary.body
    assert body.instruct.model_dump(exclude_none=True) == {  # type: ignore[attr-defined]
        "enabled": False,
        "chatTemplate": "chatml",
        "jinjaTemplate": "",
    }


def test_a_system_prompt_to_risu_is_its_main_prompt_with_its_name() -> None:
    sp = read(sample("sillytavern/sysprompt-Harbor-Narrator.json"), "s.json").primary
    data = write(sp, "risu-preset").data
    out = _risup(data)
    assert [(p["type"], p["type2"], p["name"]) for p in out["promptTemplate"]] == [
        ("plain", "main", "Main Prompt"),
        ("plain", "normal", "Post-History Instructions"),
    ]
    back = read(data, "p.risup").primary.body
    assert [p.content for p in back.prompts] == [p.content for p in sp.body.prompts]  # type: ignore[attr-defined]


def test_a_legacy_risu_preset_still_writes_back_legacy() -> None:
    legacy = {
        "name": "Old",
        "mainPrompt": "Be kind.",
        "jailbreak": "",
        "globalNote": "",
        "formatingOrder": ["main", "chats", "jailbreak"],
        "temperature": 80,
        "PresensePenalty": -1000,
    }
    e = read(json.dumps(legacy).encode(), "old.json").primary
    out = _risup(write(CanonicalEntity(kind="preset", id=e.id, body=e.body), "risu-preset").data)
    assert "promptTemplate" not in out and out["formatingOrder"] == ["main", "chats", "jailbreak"]


# -- Marinara -----------------------------------------------------------------------------------------


def test_marinara_thinking_tags_are_the_reasoning_marks() -> None:
    e = _entity({"name": "R", "reasoning": {"prefix": "<think>", "suffix": "</think>", "separator": "\n"}})
    out = json.loads(write(e, "marinara-preset").data)
    params = json.loads(out["data"]["preset"]["parameters"])
    assert params["customThinkingTags"] == [{"open": "<think>", "close": "</think>"}]
    back = _back(e, "marinara-preset", "r.marinara.json")
    assert (back.reasoning.prefix, back.reasoning.suffix, back.reasoning.separator) == (
        "<think>",
        "</think>",
        None,
    )


def test_marinara_several_thinking_tags_stay_unread_and_are_kept() -> None:
    tree = json.loads(sample("marinara/preset.tidewater.marinara.json"))
    params = json.loads(tree["data"]["preset"]["parameters"])
    params["customThinkingTags"] = [{"open": "<a>", "close": "</a>"}, {"open": "<b>", "close": "</b>"}]
    tree["data"]["preset"]["parameters"] = json.dumps(params)
    e = read(json.dumps(tree).encode(), "p.marinara.json").primary
    assert e.body.reasoning.prefix is None  # type: ignore[attr-defined]
    changed = edited(e, lambda b: b.update(name="Renamed"))
    out = json.loads(write(changed, "marinara-preset").data)
    assert (
        json.loads(out["data"]["preset"]["parameters"])["customThinkingTags"] == params["customThinkingTags"]
    )


# -- Lumiverse ----------------------------------------------------------------------------------------


def test_lumiverse_custom_stop_strings() -> None:
    tree = json.loads(sample("lumiverse/storyteller.lumiverse-preset.json"))
    tree["preset"]["advancedSettings"]["customStopStrings"] = ["\n{{user}}:", "###"]
    e = read(json.dumps(tree).encode(), "p.json").primary
    assert e.body.samplers.stopSequences == ["\n{{user}}:", "###"]  # type: ignore[attr-defined]
    assert json.loads(write(e, "lumiverse-preset").data) == tree
    st = _entity({"name": "S", "samplers": {"stopSequences": ["END"]}})
    assert _back(st, "lumiverse-preset").samplers.stopSequences == ["END"]


# -- SillyTavern chat completion ----------------------------------------------------------------------


def test_a_chat_completion_preset_without_prompts_is_still_one() -> None:
    """A text-completion preset's samplers written as a chat-completion preset: the prompt lists are
    what make the file SillyTavern's (and RoleCall's) preset when few chat-completion keys remain."""
    nai = read(sample("novelai/harbor-fog.preset"), "harbor-fog.preset").primary
    for fmt in ("sillytavern-preset", "rolecall-preset"):
        data = write(nai, fmt).data
        out = json.loads(data)
        assert out["prompts"] == [] and out["prompt_order"] == [{"character_id": 100001, "order": []}]
        assert registry.detect(Sniff(data, "x.json")).id == fmt  # type: ignore[union-attr]
