"""data.extensions.risuai: every key first-class, real types kept, wrong types are typed errors."""

from __future__ import annotations

from typing import Any

import pytest

from bunzai_codecs import Malformed
from bunzai_codecs.entities import CharacterBody
from bunzai_codecs.formats._shared.wire import MapContext
from bunzai_codecs.formats.risu import risuai


def _read(r: dict[str, Any], data: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"attribution": {}, "behavior": {}, "settings": {}}
    risuai.read_risuai({**(data or {}), "extensions": {"risuai": r}}, body, MapContext("$.data"))
    return body


def test_every_key_maps() -> None:
    body = _read(
        {
            "bias": [["fog", -3.5]],
            "viewScreen": "vn",
            "utilityBot": True,
            "sdData": [["always", "lantern"]],
            "backgroundHTML": "<b>",
            "license": "CC BY-NC-SA 4.0",
            "triggerscript": [{"comment": "t", "type": "start", "conditions": [], "effect": []}],
            "additionalText": "Always mention the fog.",
            "virtualscript": "x = 1",
            "largePortrait": False,
            "lorePlus": True,
            "inlayViewScreen": True,
            "newGenData": {"prompt": "p", "negative": "n", "instructions": "i", "emotionInstructions": "e"},
            "vits": {"model": "m"},
            "lowLevelAccess": True,
            "defaultVariables": "a=1",
            "prebuiltAssetCommand": True,
            "prebuiltAssetExclude": ["assets/a.png"],
            "prebuiltAssetStyle": "dynamic",
            "backgroundCSS": "body{}",
            "toggles": "k=Label",
            "private": True,
        }
    )
    c = CharacterBody.model_validate(body)
    assert [(b.phrase, b.weight) for b in c.bias or []] == [("fog", -3.5)]
    r = c.settings.risu
    assert (r.viewScreen, r.utilityBot, r.largePortrait, r.lorePlus, r.inlayViewScreen) == (
        "vn",
        True,
        False,
        True,
        True,
    )
    ip = c.persona.imagePrompt
    assert (ip.prefix, ip.negative, ip.instructions, ip.emotionInstructions) == ("p", "n", "i", "e")
    assert [(x.label, x.value) for x in ip.rows or []] == [("always", "lantern")]
    assert c.persona.voice is not None and c.persona.voice.provider == "vits"
    assert c.persona.voice.extras == {"model": "m"}
    assert c.attribution.license == "CC BY-NC-SA 4.0"
    assert c.prompts.additionalText == "Always mention the fog."
    b = c.behavior
    assert b.triggerScripts == [{"comment": "t", "type": "start", "conditions": [], "effect": []}]
    assert (b.virtualScript, b.backgroundHTML, b.backgroundCSS, b.defaultVariables) == (
        "x = 1",
        "<b>",
        "body{}",
        "a=1",
    )
    assert b.moduleToggles == "k=Label" and b.privileged is True
    assert (b.prebuiltAsset.command, b.prebuiltAsset.exclude, b.prebuiltAsset.style) == (
        True,
        ["assets/a.png"],
        "dynamic",
    )


def test_custommoduletoggle_is_read_when_toggles_is_absent() -> None:
    assert _read({"customModuleToggle": "a=b"})["behavior"]["moduleToggles"] == "a=b"


def test_risuai_source_fills_in_for_a_missing_data_source() -> None:
    assert _read({"source": ["https://example.org/c"]})["attribution"]["source"] == ["https://example.org/c"]
    body: dict[str, Any] = {"attribution": {"source": ["kept"]}, "behavior": {}, "settings": {}}
    risuai.read_risuai({"extensions": {"risuai": {"source": ["x"]}}}, body, MapContext("$.data"))
    assert body["attribution"]["source"] == ["kept"]


def test_empty_strings_risu_always_writes_are_absent() -> None:
    c = CharacterBody.model_validate(
        _read(
            {
                "additionalText": "",
                "virtualscript": "",
                "defaultVariables": "",
                "vits": {},
                "newGenData": {"prompt": ""},
            }
        )
    )
    assert c.prompts.additionalText is None and c.behavior.virtualScript is None
    assert c.persona.voice is None and c.persona.imagePrompt.prefix is None


@pytest.mark.parametrize(
    ("r", "path"),
    [
        ({"bias": [["fog", "5"]]}, "$.data.extensions.risuai.bias[0][1]"),
        ({"bias": "fog"}, "$.data.extensions.risuai.bias"),
        ({"sdData": [["a"]]}, "$.data.extensions.risuai.sdData[0]"),
        ({"largePortrait": "yes"}, "$.data.extensions.risuai.largePortrait"),
        ({"newGenData": []}, "$.data.extensions.risuai.newGenData"),
        ({"triggerscript": [1]}, "$.data.extensions.risuai.triggerscript"),
        ({"prebuiltAssetCommand": 1}, "$.data.extensions.risuai.prebuiltAssetCommand"),
        ({"vits": "x"}, "$.data.extensions.risuai.vits"),
    ],
)
def test_wrong_types_are_typed_errors_with_paths(r: dict[str, Any], path: str) -> None:
    with pytest.raises(Malformed) as e:
        _read(r)
    assert e.value.path == path


def test_risuai_not_an_object() -> None:
    with pytest.raises(Malformed) as e:
        risuai.read_risuai({"extensions": {"risuai": []}}, {}, MapContext("$.data"))
    assert e.value.path == "$.data.extensions.risuai"


def test_fresh_write_has_risus_key_set_and_defaults() -> None:
    r = risuai.write_risuai(CharacterBody(), charx=True)
    assert list(r) == [
        "bias",
        "viewScreen",
        "utilityBot",
        "sdData",
        "additionalText",
        "virtualscript",
        "largePortrait",
        "lorePlus",
        "inlayViewScreen",
        "newGenData",
        "vits",
        "lowLevelAccess",
        "defaultVariables",
        "prebuiltAssetCommand",
        "prebuiltAssetExclude",
        "prebuiltAssetStyle",
    ]
    assert r["viewScreen"] == "none" and r["prebuiltAssetCommand"] == "" and r["vits"] == {}
    full = risuai.write_risuai(CharacterBody(), scripts=[{"in": "a"}], charx=False)
    assert full["customScripts"] == [{"in": "a"}] and full["triggerscript"] == []


def test_write_then_read_is_stable() -> None:
    # a partial risuai block is completed once (Risu writes every key); from then on it is a fixed point
    body = CharacterBody.model_validate(
        _read({"bias": [["x", 1]], "prebuiltAssetCommand": "", "license": "MIT", "lowLevelAccess": True})
    )
    once = CharacterBody.model_validate(_read(risuai.write_risuai(body)))
    twice = CharacterBody.model_validate(_read(risuai.write_risuai(once)))
    assert once.bias == body.bias and once.attribution.license == "MIT"
    assert once.behavior.prebuiltAsset.command == "" and once.behavior.privileged is True
    assert twice == once


def test_the_dialect_can_stay_quiet_for_cards_without_risu_data() -> None:
    from bunzai_codecs.formats.risu.charx import RisuDialect
    from bunzai_codecs.formats.tavern.fields import body_to_data

    quiet = RisuDialect(charx=False, always=False)
    plain = CharacterBody.model_validate({"identity": {"name": "A"}})
    assert "risuai" not in body_to_data(plain, dialects=(quiet,))["extensions"]
    risu = CharacterBody.model_validate({"identity": {"name": "A"}, "settings": {"risu": {"lorePlus": True}}})
    r = body_to_data(risu, dialects=(quiet,))["extensions"]["risuai"]
    assert r["lorePlus"] is True and r["customScripts"] == [] and r["triggerscript"] == []
    assert "risuai" in body_to_data(plain, dialects=(RisuDialect(),))["extensions"]
