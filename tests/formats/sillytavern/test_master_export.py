"""sillytavern-master: the Advanced Formatting master export, one linked entity per template, written
back as one file."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bunzai_codecs import read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import PresetBody
from tests.formats.helpers import edited, sample

FMT = "sillytavern-master"
REL = "sillytavern/ST-formatting-2025-03-14.json"
NAME = "ST-formatting-2025-03-14.json"
PARTS = {
    "instruct": "sillytavern-instruct",
    "context": "sillytavern-context",
    "sysprompt": "sillytavern-sysprompt",
    "preset": "sillytavern-textgen",
    "reasoning": "sillytavern-reasoning",
}


def _decoded() -> Decoded:
    return read(sample(REL), NAME)


def _tree() -> dict[str, Any]:
    return json.loads(sample(REL))


def _changed(a: dict[str, Any], b: dict[str, Any]) -> dict[str, set[str]]:
    """Per top-level section, the keys whose value differs."""
    out = {}
    for k in a.keys() | b.keys():
        x, y = a.get(k) or {}, b.get(k) or {}
        diff = {kk for kk in x.keys() | y.keys() if x.get(kk) != y.get(kk)}
        if diff:
            out[k] = diff
    return out


# -- detection ----------------------------------------------------------------------------------------


def test_detection() -> None:
    best = registry.detect(Sniff(sample(REL), NAME))
    assert best == registry.Candidate(FMT, 0.95)


@pytest.mark.parametrize(
    "tree,score",
    [
        ({"sysprompt": {"name": "n", "content": "c"}}, 0.95),
        ({"srw": {"value": "", "show": False}}, 0.95),
        ({"instruct": {"name": "n"}}, 0.0),  # not a section SillyTavern imports
        ({"sysprompt": {"name": "n", "content": "c"}, "other": 1}, 0.0),  # not only section keys
        ({}, 0.0),
        ({"preset": {"temp": 1, "top_k": 0, "top_p": 1, "rep_pen": 1}}, 0.95),
    ],
)
def test_detection_scores(tree: dict[str, Any], score: float) -> None:
    assert registry.get(FMT).detect(Sniff(json.dumps(tree).encode(), "m.json")) == score


# -- decoding -----------------------------------------------------------------------------------------


def test_one_linked_entity_per_part() -> None:
    d = _decoded()
    primary, parts = d.primary, d.entities[1:]
    assert primary.knowledge_refs == [p.id for p in parts]
    assert [next(iter(p.original)) for p in parts] == list(PARTS.values())
    assert [p.body.name for p in parts] == [
        "Harbor Mistral",
        "Harbor Plain",
        "Harbor Narrator",
        "Harbor Warm",
        "Harbor Think",
    ]
    assert len({p.id for p in d.entities}) == 6
    # each part is what the template alone decodes to
    for key, p in zip(PARTS, parts, strict=True):
        alone = read(json.dumps(_tree()[key]).encode(), f"{p.body.name}.json", format=PARTS[key]).primary
        assert p.body == alone.body.model_copy(update={"name": p.body.name}), key


def test_the_primary_holds_the_whole_bundle() -> None:
    b = _decoded().primary.body.dump()
    assert b["name"] == "ST-formatting-2025-03-14"
    assert b["instruct"]["inputSequence"] == "[INST]"
    assert b["context"]["storyString"].startswith("{{#if system}}")
    assert [p["id"] for p in b["prompts"]] == ["main"]
    assert (b["samplers"]["temperature"], b["samplers"]["maxContext"]) == (1.1, 12288)
    assert b["reasoning"]["prefix"] == "<think>\n"
    assert b["systemPrompts"]["assistantPrefill"] == "*The lamp hisses.*"  # srw.value


def test_a_section_sillytavern_would_not_import_stays_in_escrow() -> None:
    tree = _tree()
    tree["context"] = {"story_string": "s"}  # no name: SillyTavern skips it
    data = json.dumps(tree).encode()
    d = read(data, NAME)
    assert [next(iter(p.original)) for p in d.entities[1:]] == [
        "sillytavern-instruct",
        "sillytavern-sysprompt",
        "sillytavern-textgen",
        "sillytavern-reasoning",
    ]
    assert "storyString" not in d.primary.body.dump()["context"]
    assert any("$.context" in w for w in d.primary.warnings)
    assert json.loads(write(d.primary, FMT, linked=d.entities).data) == tree


# -- writing ------------------------------------------------------------------------------------------


def test_round_trip_is_one_file() -> None:
    d = _decoded()
    out = write(d.primary, FMT, linked=d.entities)
    assert json.loads(out.data) == _tree()
    assert out.beside == []  # every part went back into the file
    back = read(out.data, NAME)
    assert [e.body for e in back.entities] == [e.body for e in d.entities]


def test_an_edited_part_changes_its_section() -> None:
    d = _decoded()
    d.entities[1] = edited(d.entities[1], lambda b: b["instruct"].update(inputSequence="[USER]"))
    out = json.loads(write(d.primary, FMT, linked=d.entities).data)
    assert _changed(_tree(), out) == {"instruct": {"input_sequence"}}
    assert out["instruct"]["input_sequence"] == "[USER]"


def test_an_edited_primary_changes_the_sections_it_touches() -> None:
    d = _decoded()

    def change(b: dict[str, Any]) -> None:
        b["reasoning"]["prefix"] = "<r>"
        b["samplers"]["temperature"] = 0.6
        b["systemPrompts"]["assistantPrefill"] = "Fog."

    d.entities[0] = edited(d.primary, change)
    out = json.loads(write(d.primary, FMT, linked=d.entities).data)
    assert _changed(_tree(), out) == {"reasoning": {"prefix"}, "preset": {"temp"}, "srw": {"value"}}
    assert out["srw"] == {"value": "Fog.", "show": False}


def test_without_its_parts_the_primary_still_writes_every_section() -> None:
    d = _decoded()
    out = write(d.primary, FMT, linked=[d.primary])
    assert json.loads(out.data) == _tree()


def test_fresh_export_from_one_template() -> None:
    tg = read(sample("sillytavern/textgen-Lantern-Balanced.json"), "textgen-Lantern-Balanced.json")
    out = json.loads(write(tg.primary, FMT, linked=tg.entities).data)
    assert list(out) == ["preset"]
    assert out["preset"]["name"] == "textgen-Lantern-Balanced"
    assert out["preset"]["penalty_alpha"] == 0  # the template's own twin, every key kept
    assert registry.detect(Sniff(json.dumps(out).encode(), "m.json")).id == FMT  # type: ignore[union-attr]


def test_fresh_export_from_a_whole_preset_writes_each_template_it_holds() -> None:
    body = PresetBody.model_validate(
        {
            "name": "Mixed",
            "prompts": [{"id": "main", "content": "Be brief."}],
            "instruct": {"inputSequence": "<u>", "outputSequence": "<a>"},
            "reasoning": {"prefix": "<t>", "suffix": "</t>"},
            "systemPrompts": {"assistantPrefill": "Well,"},
        }
    )
    out = json.loads(write(CanonicalEntity(kind="preset", id="preset-m", body=body), FMT).data)
    assert list(out) == ["instruct", "sysprompt", "reasoning", "srw"]
    assert out["sysprompt"] == {"name": "Mixed", "content": "Be brief.", "post_history": ""}
    assert out["srw"] == {"value": "Well,", "show": False}
    back = read(json.dumps(out).encode(), "Mixed.json")
    assert back.primary.body.instruct.inputSequence == "<u>"
    assert len(back.entities) == 4


def test_an_empty_preset_is_still_a_master_export() -> None:
    e = CanonicalEntity(kind="preset", id="preset-e", body=PresetBody(name="Empty"))
    out = json.loads(write(e, FMT).data)
    assert out == {"sysprompt": {"name": "Empty", "content": "", "post_history": ""}}


def test_another_app_gets_the_bundle_and_each_part_beside_it() -> None:
    d = _decoded()
    out = write(d.primary, "risu-preset", linked=d.entities)
    assert [b.format for b in out.beside] == ["risu-preset"] * 5
    out = write(d.primary, "sillytavern-preset", linked=d.entities)
    assert [b.format for b in out.beside] == list(PARTS.values())  # SillyTavern's own template formats


def test_an_edit_calling_for_a_section_the_file_lacks_adds_it() -> None:
    tree = _tree()
    del tree["reasoning"], tree["srw"]
    d = read(json.dumps(tree).encode(), NAME)

    def change(b: dict[str, Any]) -> None:
        b["reasoning"] = {"prefix": "<r>", "suffix": "</r>"}
        b["systemPrompts"]["assistantPrefill"] = "So,"

    d.entities[0] = edited(d.primary, change)
    out = json.loads(write(d.primary, FMT, linked=d.entities).data)
    assert out["reasoning"] == {
        "name": "ST-formatting-2025-03-14",
        "prefix": "<r>",
        "suffix": "</r>",
        "separator": "",
    }
    assert out["srw"] == {"value": "So,", "show": False}
    assert {k: v for k, v in out.items() if k not in ("reasoning", "srw")} == tree


def test_a_newly_linked_template_joins_the_file() -> None:
    tree = _tree()
    del tree["reasoning"]
    d = read(json.dumps(tree).encode(), NAME)
    think = read(sample("sillytavern/reasoning-Harbor-Think.json"), "r.json").primary
    d.primary.links["knowledgeRefs"].append(think.id)
    out = write(d.primary, FMT, linked=[*d.entities, think])
    assert json.loads(out.data)["reasoning"] == json.loads(sample("sillytavern/reasoning-Harbor-Think.json"))
    assert out.beside == []
