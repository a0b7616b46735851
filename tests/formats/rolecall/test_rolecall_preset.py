"""``rolecall-preset``: a SillyTavern chat-completion preset plus RoleCall's keys
(docs/formats/rolecall.md#preset)."""

from __future__ import annotations

import json
from typing import Any

from bunzai_codecs import read
from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.entities import PresetBody, RegexSetBody
from tests.formats.codec_helpers import decode, dumps, export, rt_compare, sample_tree, scores, winner
from tests.formats.helpers import edited, sample

RCP = "rolecall-preset"
LANTERN = "rolecall/lantern.rolecall-preset.json"


def preset(data: bytes, name: str = "x.json") -> PresetBody:
    b = decode(data, name).primary.body
    assert isinstance(b, PresetBody)
    return b


def test_detection_0_95_beats_the_sillytavern_preset_reader_on_a_fingerprint() -> None:
    s = scores(sample(LANTERN))
    assert s[RCP] == 0.95 and s["sillytavern-preset"] == 0.9
    tree = sample_tree(LANTERN)
    plain = {k: v for k, v in tree.items() if k not in ("macro_engine_yaml", "choice_groups")}
    plain["extensions"] = {"regex_scripts": tree["extensions"]["regex_scripts"]}
    assert RCP not in scores(dumps(plain))  # a bare extensions.regex_scripts is not RoleCall's
    assert winner(dumps({**plain, "choice_groups": []})) == RCP
    assert winner(dumps({**plain, "macro_engine_yaml": ""})) == RCP
    assert winner(dumps({**plain, "extensions": {"linkedRegexScripts": []}})) == RCP
    wrapper = {"exportedAt": "2026-01-01", "type": "preset", "version": 1, "data": tree, **plain}
    assert RCP not in scores(dumps(wrapper))
    assert RCP not in scores(dumps({"choice_groups": [], "name": "not a preset"}))


def test_name_readme_and_choice_groups() -> None:
    b = preset(sample(LANTERN), "some-file-name.json")
    assert b.name == "Lantern Slow Burn"  # RoleCall's display name, not the file name
    assert b.description == "A gentle preset for long mysteries. Pick a pacing before you start."
    pace, gore, themes = b.choices
    assert (pace.id, pace.label, pace.type, pace.key, pace.default) == (
        "pace",
        "Pacing",
        "one",
        "pace",
        "slow",
    )
    assert [(o.id, o.label, o.value) for o in pace.options] == [
        ("slow", "Slow burn", "slow"),
        ("brisk", "Brisk", "brisk"),
    ]
    assert pace.extras == {"description": "How quickly the mystery unfolds."}
    assert (gore.type, gore.key, gore.default) == ("toggle", "gore", None)
    assert gore.extras == {"default": False}  # a boolean default has no canonical home
    assert (themes.default, themes.separator, themes.sortOrder) == (["sea"], ", ", 3)


def test_prompts_and_settings_use_the_sillytavern_mapping() -> None:
    b = preset(sample(LANTERN))
    assert [(p.id, p.enabled, p.placement) for p in b.prompts] == [
        ("main", True, "relative"),
        ("chatHistory", True, "relative"),
        ("clue-rule", True, "in_chat"),
    ]
    assert (b.samplers.temperature, b.samplers.topP, b.samplers.maxContext) == (0.85, 0.92, 16000)
    assert b.apiOptions.streamResponses is True


def test_st_regex_scripts_are_a_linked_set_linked_rolecall_payloads_stay_in_escrow() -> None:
    d = decode(sample(LANTERN))
    p, rx = d.entities
    assert p.links == {"knowledgeRefs": [rx.id]}
    assert isinstance(rx.body, RegexSetBody) and [r.label for r in rx.body.rules] == [
        "Strip stage directions"
    ]
    assert p.original[RCP].raw["extensions"]["linkedRegexScripts"][0]["id"] == "rx-tidy"


def test_round_trip_and_canonical_stability() -> None:
    data = sample(LANTERN)
    d = decode(data)
    out = export(d.primary, RCP, d.entities)
    assert rt_compare(data, out) == []
    again = decode(out)
    assert [e.body for e in again.entities] == [e.body for e in d.entities]


def test_edit_a_choice_label_and_the_readme() -> None:
    d = decode(sample(LANTERN))

    def change(b: dict[str, Any]) -> None:
        b["choices"][0]["label"] = "Pace"
        b["description"] = "Short readme."

    out = json.loads(export(edited(d.primary, change), RCP, d.entities))
    src = sample_tree(LANTERN)
    assert out["readme"] == "Short readme."
    assert out["choice_groups"][0]["label"] == "Pace"
    assert out["choice_groups"][0]["options"][0]["prompts"] == ["clue-rule"]  # escrow-only option key
    assert out["choice_groups"][1:] == src["choice_groups"][1:]
    assert out["macro_engine_yaml"] == src["macro_engine_yaml"]
    assert out["extensions"] == src["extensions"]


def test_fresh_export_carries_the_choice_groups_fingerprint() -> None:
    st = read(sample("sillytavern/preset-noir-detective.json"), "preset-noir-detective.json")
    out = export(st.primary, RCP, st.entities)
    tree = json.loads(out)
    assert tree["choice_groups"] == [] and tree["name"] == "preset-noir-detective"
    assert winner(out) == RCP


def test_cross_format_to_and_from_sillytavern() -> None:
    d = decode(sample(LANTERN))
    st_bytes = export(d.primary, "sillytavern-preset", d.entities)
    assert winner(st_bytes) == "sillytavern-preset"
    st = read(st_bytes, "Lantern Slow Burn.json")
    stb, rcb = st.primary.body, d.primary.body
    assert isinstance(stb, PresetBody) and isinstance(rcb, PresetBody)
    assert stb.prompts == rcb.prompts and stb.samplers == rcb.samplers
    assert len(st.entities) == 2  # the preset's regex scripts came along
    back = preset(export(st.primary, RCP, st.entities))
    assert back.prompts == rcb.prompts and back.name == "Lantern Slow Burn"


def test_bad_input_is_typed_with_a_path() -> None:
    tree = sample_tree(LANTERN)
    tree["choice_groups"][0]["options"] = "slow"
    try:
        read(dumps(tree), "bad.json", format=RCP)
    except Malformed as err:
        assert err.path == "$.choice_groups[0].options" and not getattr(err, "internal", False)
    else:
        raise AssertionError("no error")
    tree = sample_tree(LANTERN)
    tree["choice_groups"] = {"pace": {}}
    try:
        read(dumps(tree), "bad.json", format=RCP)
    except Malformed as err:
        assert err.path == "$.choice_groups"
    else:
        raise AssertionError("no error")
