"""marinara-preset: raw rows, sectionOrder, choices, and parameters merged back into their string."""

from __future__ import annotations

import json

import pytest

from bunzai_codecs import Malformed, read, write
from bunzai_codecs.entities import PresetBody, PresetPrompt

from ._util import fresh, load, load_tree, mutated, out_tree, sample_tree, score

NAME = "preset.tidewater.marinara.json"


def _body() -> PresetBody:
    b = load(NAME).body
    assert isinstance(b, PresetBody)
    return b


def test_scores_095() -> None:
    assert score("marinara-preset", sample_tree(NAME)) == 0.95
    t = sample_tree(NAME)
    assert score("marinara-preset", {**t, "data": {"preset": t["data"]["preset"]}}) == 0.0
    assert score("marinara-preset", {**t, "data": {**t["data"], "preset": "x"}}) == 0.0
    assert score("marinara-preset", {**t, "type": "marinara_chat_preset"}) == 0.0


def test_header_and_parameters_decode() -> None:
    b = _body()
    assert (b.name, b.description, b.attribution.creator) == (
        "Tidewater Narrator",
        "A small narrator preset for the samples.",
        "samples",
    )
    s = b.samplers
    assert (s.temperature, s.topP, s.topK, s.minP, s.maxTokens, s.maxContext) == (
        0.9,
        0.95,
        40,
        0.05,
        1200,
        32000,
    )
    assert (s.frequencyPenalty, s.presencePenalty, s.stopSequences) == (0.1, 0, ["\n{{user}}:"])
    assert b.generation.maxContextUnlocked is False  # useMaxContext
    a = b.apiOptions
    assert (a.reasoningEffort, a.verbosity, a.serviceTier, a.squashSystemMessages, a.showThoughts) == (
        "medium",
        None,  # null: not sent
        "flex",
        False,
        True,
    )
    assert b.systemPrompts.assistantPrefill == ""
    assert b.behavior.wrapFormat == "markdown"


def test_prompts_follow_section_order() -> None:
    b = _body()
    assert [p.id for p in b.prompts] == [
        "main",
        "character",
        "lorebook",
        "chat_history",
        "section_1783000000001",
    ]


def test_prompt_fields() -> None:
    main, char, world, hist, nudge = _body().prompts
    assert main.marker is False and main.forbidOverrides is True and main.role == "system"
    assert main.content.startswith("You narrate Tidewater") and main.placement == "relative"
    assert (char.marker, char.markerSlot, char.groupId) == (
        True,
        "character",
        "grp_Lore",
    )  # no ST name: verbatim
    assert char.extras == {"markerConfig": {"characterFields": ["description", "personality"]}}
    assert (world.markerSlot, world.groupId) == ("worldInfo", "grp_World")
    assert hist.markerSlot == "chatHistory" and hist.groupId is None
    assert (nudge.placement, nudge.injectionDepth, nudge.injectionOrder, nudge.role) == (
        "in_chat",
        2,
        50,
        "user",
    )
    assert main.wrapInXml is False and main.xmlTagName is None  # legacy columns, "" = none


def test_a_section_without_enabled_is_disabled() -> None:
    # Marinara's importer: true only for true or "true"; the sample's nudge has no enabled column
    assert "enabled" not in sample_tree(NAME)["data"]["sections"][4]
    assert _body().prompts[4].enabled is False


def test_groups_follow_group_order() -> None:
    g = [x.model_dump(exclude_none=True) for x in _body().groups]
    assert g == [
        {"id": "grp_Lore", "name": "Lore", "order": 100, "enabled": False},
        {"id": "grp_World", "name": "World", "parentGroupId": "grp_Lore", "order": 200, "enabled": True},
    ]


def test_choices_decode_json_string_options_and_defaults() -> None:
    tide, themes = _body().choices
    assert (tide.id, tide.key, tide.label, tide.type) == ("cb_Tide", "tide", "Where is the tide?", "one")
    assert [(o.id, o.label, o.value) for o in tide.options] == [
        ("opt_low", "Low", "low tide, the causeway is open"),
        ("opt_high", "High", "high tide, the causeway is flooded"),
    ]
    assert tide.default == "low tide, the causeway is open" and tide.randomPick is True
    assert tide.extras == {"displayMode": "buttons", "optionSort": "manual"} and tide.sortOrder == 0
    assert themes.type == "many" and themes.separator == " and "
    assert themes.default == ["creeping dread", "grief"]


@pytest.mark.parametrize(
    "name",
    [NAME],
)
def test_sample_round_trips_and_is_canonically_stable(name: str) -> None:
    e = load(name)
    data = write(e, "marinara-preset").data
    assert json.loads(data) == sample_tree(name)
    assert read(data, name).primary.body == e.body


def test_parameters_are_merged_back_so_unmapped_keys_survive() -> None:
    e = load(NAME)
    e.body.samplers.temperature = 0.7  # type: ignore[attr-defined]
    e.body.apiOptions.verbosity = "low"  # type: ignore[attr-defined]
    e.body.samplers.topK = None  # type: ignore[attr-defined]
    p = out_tree(e)["data"]["preset"]
    assert isinstance(p["parameters"], str)
    got = json.loads(p["parameters"])
    raw = json.loads(sample_tree(NAME)["data"]["preset"]["parameters"])
    assert got["temperature"] == 0.7 and got["verbosity"] == "low" and "topK" not in got
    for key in (
        "customThinkingTags",
        "customParameters",
        "enabledParameters",
        "strictRoleFormatting",
        "singleUserMessage",
    ):
        assert got[key] == raw[key], key
    assert list(got) == [k for k in raw if k != "topK"]  # key order kept
    # the other JSON-string columns were not touched: their exact strings come back
    for col in ("sectionOrder", "groupOrder", "defaultChoices", "variableGroups", "conversationPrompt"):
        assert p[col] == sample_tree(NAME)["data"]["preset"][col]


def test_string_booleans_and_json_columns_are_written_as_strings() -> None:
    e = load(NAME)
    main = e.body.prompts[0]  # type: ignore[attr-defined]
    main.enabled = False
    hist = e.body.prompts[3]  # type: ignore[attr-defined]
    hist.extras = {"markerConfig": {"chatHistoryOptions": {"maxMessages": 20}}}
    e.body.groups[0].enabled = True  # type: ignore[attr-defined]
    e.body.choices[1].type = "one"  # type: ignore[attr-defined]
    d = out_tree(e)["data"]
    by_id = {s["id"]: s for s in d["sections"]}
    assert by_id["sec_Main"]["enabled"] == "false" and by_id["sec_Main"]["forbidOverrides"] == "true"
    assert (
        by_id["sec_Hist"]["markerConfig"] == '{"type":"chat_history","chatHistoryOptions":{"maxMessages":20}}'
    )
    assert {g["id"]: g["enabled"] for g in d["groups"]} == {"grp_Lore": "true", "grp_World": "true"}
    assert d["choiceBlocks"][1]["multiSelect"] == "false" and isinstance(d["choiceBlocks"][1]["options"], str)


def test_default_choices_keep_keys_no_block_asks_for() -> None:
    e = load(NAME)
    e.body.choices[0].default = "high tide, the causeway is flooded"  # type: ignore[attr-defined]
    got = json.loads(out_tree(e)["data"]["preset"]["defaultChoices"])
    assert got == {
        "tide": "high tide, the causeway is flooded",
        "themes": ["creeping dread", "grief"],
        "orphan": "kept although no block asks for it",
    }


def test_reordering_prompts_rewrites_section_order_and_keeps_rows() -> None:
    e = load(NAME)
    ps = e.body.prompts  # type: ignore[attr-defined]
    ps.insert(0, ps.pop())  # the nudge first
    d = out_tree(e)["data"]
    assert json.loads(d["preset"]["sectionOrder"]) == [
        "sec_Nudge",
        "sec_Main",
        "sec_Char",
        "sec_World",
        "sec_Hist",
    ]
    raw = {s["id"]: s for s in sample_tree(NAME)["data"]["sections"]}
    for s in d["sections"]:
        assert s == raw[s["id"]]  # rows unchanged, even the one without enabled


def test_added_prompt_is_a_raw_row() -> None:
    e = load(NAME)
    e.body.prompts.append(PresetPrompt(id="jailbreak", name="JB", content="Stay bold.", role="system"))  # type: ignore[attr-defined]
    d = out_tree(e)["data"]
    row = d["sections"][-1]
    assert (
        row["id"] == "jailbreak"
        and row["identifier"] == "jailbreak"
        and row["presetId"] == "pre_Tidewater0001"
    )
    assert row["enabled"] == "true" and row["isMarker"] == "false" and row["markerConfig"] is None
    assert json.loads(d["preset"]["sectionOrder"])[-1] == "jailbreak"


def test_fresh_export_is_raw_rows_and_reads_back() -> None:
    e = fresh(load(NAME))
    t = out_tree(e, "marinara-preset")
    assert t["type"] == "marinara_preset" and t["version"] == 1
    p = t["data"]["preset"]
    assert isinstance(p["parameters"], str) and isinstance(p["sectionOrder"], str)
    assert t["data"]["sections"][0]["enabled"] == "true"
    again = load_tree(t, "tidewater.marinara.json")
    assert again.source.format == "marinara-preset"  # type: ignore[union-attr]
    assert again.body == e.body


@pytest.mark.parametrize(
    ("edit", "path"),
    [
        (lambda d: d["sections"].__setitem__(0, 7), "$.data.sections[0]"),
        (lambda d: d.__setitem__("groups", "x"), "$.data.groups"),
        (lambda d: d["preset"].__setitem__("parameters", "{temperature"), "$.data.preset.parameters"),
        (
            lambda d: d["preset"].__setitem__("parameters", '{"temperature":"hot"}'),
            "$.data.preset.parameters.temperature",
        ),
        (lambda d: d["preset"].__setitem__("parameters", "[1]"), "$.data.preset.parameters"),
        (lambda d: d["preset"].__setitem__("sectionOrder", "[1,{}]"), "$.data.preset.sectionOrder[1]"),
        (lambda d: d["sections"][1].__setitem__("markerConfig", "[]"), "$.data.sections[1].markerConfig"),
        (
            lambda d: d["choiceBlocks"][0].__setitem__("options", '[{"id":true}]'),
            "$.data.choiceBlocks[0].options[0].id",
        ),
    ],
)
def test_bad_input_is_a_typed_error_with_its_path(edit: object, path: str) -> None:
    t = mutated(sample_tree(NAME))
    edit(t["data"])  # type: ignore[operator]
    with pytest.raises(Malformed) as err:
        load_tree(t, fmt="marinara-preset")
    assert err.value.path == path and not getattr(err.value, "internal", False)
