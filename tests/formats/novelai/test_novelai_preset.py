"""novelai-preset: NovelAI's text generation preset export (.preset), and its conversion to and from
SillyTavern's NovelAI presets (sillytavern-novel)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bunzai_codecs import Malformed, read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import PresetBody
from tests.formats.helpers import edited, sample

FMT = "novelai-preset"
REL = "novelai/harbor-fog.preset"
CODEC = registry.get(FMT)


def _tree() -> dict[str, Any]:
    return json.loads(sample(REL))


def _read(tree: Any, name: str = "p.preset") -> CanonicalEntity:
    return read(json.dumps(tree).encode(), name).primary


def test_detection() -> None:
    assert registry.detect(Sniff(sample(REL), "harbor-fog.preset")) == registry.Candidate(FMT, 0.95)
    assert CODEC.detect(Sniff(sample(REL), "x.json")) == 0.95  # the suffix is only a hint


def test_only_novelai_claims_it() -> None:
    assert [c.id for c in registry.detect_all(Sniff(sample(REL), "harbor-fog.preset")).candidates] == [FMT]


@pytest.mark.parametrize(
    "tree",
    [
        {"presetVersion": 3, "name": "img", "parameters": {"scale": 5, "sampler": "k_euler", "steps": 28}},
        {"presetVersion": True, "parameters": {"temperature": 1}},
        {"presetVersion": 3, "parameters": [1]},
        {"temperature": 1, "repetition_penalty": 1.1, "tail_free_sampling": 1, "phrase_rep_pen": "off"},
    ],
)
def test_not_claimed(tree: dict[str, Any]) -> None:
    assert CODEC.detect(Sniff(json.dumps(tree).encode(), "x.preset")) == 0.0


def test_fields() -> None:
    e = read(sample(REL), "harbor-fog.preset").primary
    b = e.body.dump()
    assert b["name"] == "Harbor Fog"
    s = b["samplers"]
    assert (s["temperature"], s["maxTokens"], s["tailFreeSampling"], s["minP"]) == (1.05, 90, 0.9, 0.02)
    assert (s["frequencyPenalty"], s["phraseRepetitionPenalty"]) == (0.01, "medium")
    assert (s["unifiedLinear"], s["unifiedQuad"], s["unifiedConf"]) == (0.35, 0.2, 0.05)
    assert (s["cfgScale"], s["topG"], s["mirostatEta"]) == (1, 0, 1)
    assert s["samplerOrder"] == ["unified", "minP", "topP"]
    assert s["disabledSamplers"] == [
        "cfg",
        "temperature",
        "tailFreeSampling",
        "topK",
        "topA",
        "typicalP",
        "mirostat",
        "topG",
    ]
    assert e.warnings == []


def test_round_trip_is_byte_identical() -> None:
    e = read(sample(REL), "harbor-fog.preset").primary
    assert write(e, FMT).data == sample(REL)


def test_an_edit_changes_its_parameter_only() -> None:
    e = edited(read(sample(REL), "harbor-fog.preset").primary, lambda b: b["samplers"].update(topP=0.9))
    out = json.loads(write(e, FMT).data)
    want = _tree()
    want["parameters"]["top_p"] = 0.9
    assert out == want


def test_reordering_writes_the_enabled_samplers_first() -> None:
    e = edited(
        read(sample(REL), "harbor-fog.preset").primary,
        lambda b: b["samplers"].update(samplerOrder=["topP", "unified"], disabledSamplers=["minP"]),
    )
    order = json.loads(write(e, FMT).data)["parameters"]["order"]
    assert order == [
        {"id": "top_p", "enabled": True},
        {"id": "math1", "enabled": True},
        {"id": "min_p", "enabled": False},
    ]


def test_an_unknown_sampler_id_is_kept() -> None:
    tree = _tree()
    tree["parameters"]["order"].append({"id": "future_sampler", "enabled": True})
    e = _read(tree)
    assert e.body.samplers.samplerOrder[-1] == "future_sampler"  # type: ignore[index]
    fresh = CanonicalEntity(kind="preset", id=e.id, body=e.body)
    assert {"id": "future_sampler", "enabled": True} in json.loads(write(fresh, FMT).data)["parameters"][
        "order"
    ]


def test_sillytavern_numbers_in_the_order_are_read() -> None:
    tree = _tree()
    tree["parameters"]["order"] = [9, 2]
    e = _read(tree)
    assert e.body.samplers.samplerOrder == ["unified", "topP"]
    e2 = edited(e, lambda b: b["samplers"].update(samplerOrder=["topP"]))
    assert json.loads(write(e2, FMT).data)["parameters"]["order"] == [2]  # the file's own spelling


def test_fresh_export_is_deterministic_and_complete() -> None:
    body = PresetBody.model_validate(
        {
            "name": "Mine",
            "samplers": {"temperature": 0.8, "samplerOrder": ["temperature", "repetitionPenalty"]},
        }
    )
    e = CanonicalEntity(kind="preset", id="preset-m", body=body)
    a, b = write(e, FMT).data, write(e, FMT).data
    assert a == b
    out = json.loads(a)
    assert (out["presetVersion"], out["name"], out["remoteId"], out["model"]) == (
        3,
        "Mine",
        "",
        "llama-3-erato-v1",
    )
    assert len(out["id"]) == 36
    p = out["parameters"]
    assert (p["temperature"], p["max_length"], p["top_p"]) == (0.8, 150, 1)
    assert p["order"] == [{"id": "temperature", "enabled": True}]  # NovelAI has no repetition penalty sampler
    assert registry.detect(Sniff(a, "Mine.preset")).id == FMT  # type: ignore[union-attr]


def test_to_sillytavern_and_back() -> None:
    nai = read(sample(REL), "harbor-fog.preset").primary
    st = json.loads(write(nai, "sillytavern-novel").data)
    assert st["order"] == [9, 10, 2]
    assert (st["max_length"], st["max_context"]) == (90, 8000)
    assert (st["math1_temp"], st["phrase_rep_pen"], st["repetition_penalty_frequency"]) == (
        0.35,
        "medium",
        0.01,
    )
    back = read(json.dumps(st).encode(), "Harbor Fog.json").primary
    again = json.loads(write(back, FMT).data)["parameters"]
    for k, v in _tree()["parameters"].items():
        if k not in ("order", "cfg_scale", "cfg_uc", "top_g", "repetition_penalty_default_whitelist"):
            assert again[k] == v, k
    assert again["order"] == [{"id": i, "enabled": True} for i in ("math1", "min_p", "top_p")]


def test_sillytavern_novel_to_novelai() -> None:
    st = read(sample("sillytavern/novel-Quiet-Harbor.json"), "Quiet Harbor.json").primary
    out = json.loads(write(st, FMT).data)
    assert out["name"] == "Quiet Harbor"
    assert [o["id"] for o in out["parameters"]["order"]] == ["temperature", "min_p", "top_k", "top_p"]


@pytest.mark.parametrize(
    "change,path",
    [
        (lambda t: t.update(parameters="x"), "$.parameters"),
        (lambda t: t["parameters"].update(order={"id": "top_p"}), "$.parameters.order"),
        (lambda t: t["parameters"]["order"].__setitem__(0, {"enabled": True}), "$.parameters.order[0].id"),
        (lambda t: t["parameters"]["order"].__setitem__(0, "top_p"), "$.parameters.order[0]"),
    ],
)
def test_wrong_shapes_are_malformed_with_the_path(change: Any, path: str) -> None:
    tree = _tree()
    change(tree)
    with pytest.raises(Malformed) as ei:
        read(json.dumps(tree).encode(), "p.preset", format=FMT)
    assert ei.value.path == path
