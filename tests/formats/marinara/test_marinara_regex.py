"""marinara-regex: the three file shapes, the SillyTavern firewall, applyMode/promptOnly, raw rows."""

from __future__ import annotations

import pytest

from bunzai_codecs import Malformed, NotRecognized, read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import EmitContext
from bunzai_codecs.entities import RegexSetBody
from bunzai_codecs.formats.marinara.regex import MarinaraRegexCodec
from tests.formats.helpers import sample

from ._util import fresh, load, load_tree, out_tree, sample_tree, score

ST_ROW = {
    "id": "2d5b1c59-2f8a-4e2e-9c56-8f8b9d5f7a11",
    "scriptName": "Hide thoughts",
    "findRegex": "/<think>[\\s\\S]*?<\\/think>/gs",
    "replaceString": "",
    "trimStrings": [],
    "placement": [2],
    "disabled": False,
    "markdownOnly": True,
    "promptOnly": False,
    "runOnEdit": True,
    "substituteRegex": 0,
    "minDepth": None,
    "maxDepth": None,
}


# -- detection ---------------------------------------------------------------------------------


def test_scores_api_rows_095_and_tagged_exports_certain() -> None:
    assert score("marinara-regex", sample_tree("regex.api-rows.json")) == 0.95
    assert score("marinara-regex", sample_tree("marinara-regexes.json")) == 1.0
    assert score("marinara-regex", sample_tree("regex.single.json")) == 1.0


def test_real_exports_without_ids_are_not_rejected_by_the_id_gate() -> None:
    bulk = sample_tree("marinara-regexes.json")
    assert all("id" not in r for r in bulk["regexScripts"])
    assert registry.detect(read_sniff(bulk)).id == "marinara-regex"  # type: ignore[union-attr]
    # a bare array of decoded rows without ids (the bulk export's list pulled out) still reads
    assert score("marinara-regex", bulk["regexScripts"]) == 0.95


def read_sniff(tree: object) -> object:
    import orjson

    from bunzai_codecs.core.sniff import Sniff

    return Sniff(orjson.dumps(tree), "x.json")


def test_firewall_scriptName_means_sillytavern() -> None:
    # one ST row poisons the whole array, whatever the other rows say
    rows = sample_tree("regex.api-rows.json")
    assert score("marinara-regex", [ST_ROW]) == 0.0
    assert score("marinara-regex", [*rows, {**rows[0], "scriptName": "x"}]) == 0.0


def test_firewall_needs_a_marinara_signal() -> None:
    # findRegex/replaceString alone is both dialects' wire: no targetCharacterIds, no order, no
    # string placement -> not claimed
    bare = {"id": "a", "findRegex": "x", "replaceString": "y", "placement": [1]}
    assert score("marinara-regex", [bare]) == 0.0
    assert score("marinara-regex", [{**bare, "order": 3}]) == 0.95
    assert score("marinara-regex", [{**bare, "placement": ["user_input"]}]) == 0.95
    assert score("marinara-regex", [{**bare, "placement": '["ai_output"]'}]) == 0.95
    assert score("marinara-regex", [{**bare, "targetCharacterIds": "[]"}]) == 0.95


@pytest.mark.parametrize(
    "tree",
    [
        [],
        [1, 2],
        [{"id": 5, "findRegex": "x", "order": 1}],  # a non-string id
        [{"id": "a", "findRegex": 5, "order": 1}],
        {"kind": "marinara.regex-scripts", "regexScripts": "[]"},
        {"kind": "marinara.regex-script"},
        {"type": "marinara_lorebook", "data": {"entries": []}},
    ],
)
def test_not_claimed(tree: object) -> None:
    assert score("marinara-regex", tree) == 0.0


# -- decode ------------------------------------------------------------------------------------


def test_api_rows_decode_field_by_field() -> None:
    e = load("regex.api-rows.json")
    assert e.kind == "regex"
    body = e.body
    assert isinstance(body, RegexSetBody)
    assert body.name == "regex.api-rows"  # the set has no wire home: the file stem
    a, b, c = body.rules
    assert a.id == "rx_Hq3mT0aZ9vLw" and a.label == "Strip OOC asides"
    assert a.find == "\\(\\(OOC:[\\s\\S]*?\\)\\)" and a.flags == "gi" and a.replace == ""
    assert a.enabled is True  # "true"
    assert a.trimStrings is None  # "[]" reads as absent
    assert a.phases == ["output", "input"]  # '["ai_output","user_input"]'
    assert a.targets == ["prompt"]  # applyMode null, promptOnly "true"
    assert a.minDepth is None and a.maxDepth == 4
    assert a.characterIds is None and a.sortOrder == 0
    assert a.extras == {
        "marinaraCreatedAt": "2026-07-01T10:00:00.000Z",
        "marinaraUpdatedAt": "2026-07-02T11:30:00.000Z",
    }
    assert b.enabled is False  # "false"
    assert b.trimStrings == ["~"]
    assert b.characterIds == ["char_Vesna01"]
    assert b.minDepth == 0 and b.sortOrder == 1
    assert c.targets == ["display", "prompt"]  # applyMode both
    assert c.phases == ["input"]


def test_applymode_null_with_promptonly_false_is_display_only() -> None:
    # not "undefined" (the seed): Marinara runs such a script on the display copy only
    e = load("regex.api-rows.json")
    assert e.body.rules[1].targets == ["display"]  # type: ignore[attr-defined]


def test_single_export_names_the_set_after_its_script() -> None:
    e = load("regex.single.json")
    assert e.body.name == "Curly quotes"  # type: ignore[attr-defined]
    (r,) = e.body.rules  # type: ignore[attr-defined]
    assert r.id == "0" and r.sortOrder == 5 and r.replace == "“$1”" and r.targets == ["display", "prompt"]


def test_bulk_export_rules_get_index_ids() -> None:
    e = load("marinara-regexes.json")
    rules = e.body.rules  # type: ignore[attr-defined]
    assert [r.id for r in rules] == ["0", "1"]
    assert rules[0].targets == ["display"] and rules[1].targets == ["prompt"]
    assert rules[1].characterIds == ["char_Vesna01", "char_Orrin02"] and rules[1].minDepth == 2


def test_target_prompt_preset_ids_and_the_old_characterId_column() -> None:
    row = {"id": "r", "findRegex": "x", "order": 0, "targetPromptPresetIds": '["pre_1"]', "characterId": "c9"}
    rule = load_tree([row]).body.rules[0]  # type: ignore[attr-defined]
    assert rule.presetIds == ["pre_1"] and rule.characterIds == ["c9"]
    rule = load_tree([{**row, "characterId": None}]).body.rules[0]  # type: ignore[attr-defined]
    assert rule.characterIds is None  # null = global


def test_duplicate_ids_are_stable_and_unique() -> None:
    rows = [{"id": "same", "findRegex": str(i), "order": i} for i in range(3)]
    ids = [r.id for r in load_tree(rows).body.rules]  # type: ignore[attr-defined]
    assert ids == ["same", "same-2", "same-3"]
    assert ids == [r.id for r in load_tree(rows).body.rules]  # type: ignore[attr-defined]


# -- round trip and escrow ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ["regex.api-rows.json", "marinara-regexes.json", "regex.single.json"])
def test_samples_round_trip_and_are_canonically_stable(name: str) -> None:
    e = load(name)
    data = write(e, "marinara-regex").data
    import orjson

    assert orjson.loads(data) == sample_tree(name)
    again = read(data, name).primary
    assert again.body == e.body


def test_string_booleans_and_json_strings_survive_an_edit() -> None:
    e = load("regex.api-rows.json")
    rules = e.body.rules  # type: ignore[attr-defined]
    rules[0].label = "Strip OOC"
    rules[1].enabled = True
    rules[1].trimStrings = ["~", "!"]
    rows = out_tree(e)
    raw = sample_tree("regex.api-rows.json")
    assert rows[0]["name"] == "Strip OOC"
    assert rows[0]["enabled"] == "true" and rows[0]["placement"] == raw[0]["placement"]
    assert rows[1]["enabled"] == "true"  # written back as a string, like its neighbours
    assert rows[1]["trimStrings"] == '["~","!"]'  # still a JSON string
    assert rows[1]["targetCharacterIds"] == raw[1]["targetCharacterIds"]
    assert rows[1]["promptOnly"] == "false" and rows[1]["applyMode"] is None  # unchanged: raw null
    assert rows[2] == raw[2]


@pytest.mark.parametrize(
    ("targets", "mode", "prompt_only"),
    [
        (["prompt"], "prompt", True),
        (["display"], "display", False),
        (["display", "prompt"], "both", False),
        (None, "both", False),
    ],
)
def test_targets_encode_to_applymode_and_promptonly(
    targets: list[str] | None, mode: str, prompt_only: bool
) -> None:
    e = load("marinara-regexes.json")
    e.body.rules[0].targets = targets  # type: ignore[attr-defined]
    row = out_tree(e)["regexScripts"][0]
    assert row["applyMode"] == mode and row["promptOnly"] is prompt_only


def test_a_v158_row_without_applymode_gets_none_on_edit() -> None:
    row = {
        "id": "old",
        "name": "n",
        "enabled": "true",
        "findRegex": "a",
        "replaceString": "b",
        "trimStrings": "[]",
        "placement": '["ai_output"]',
        "flags": "g",
        "promptOnly": "true",
        "order": 0,
    }
    e = load_tree([row])
    assert e.body.rules[0].targets == ["prompt"]  # type: ignore[attr-defined]
    e.body.rules[0].replace = "c"  # type: ignore[attr-defined]
    (out,) = out_tree(e)
    assert out["replaceString"] == "c" and "applyMode" not in out and "targetCharacterIds" not in out
    assert out["promptOnly"] == "true"


def test_phases_marinara_lacks_are_dropped_unknown_ones_kept() -> None:
    e = load("marinara-regexes.json")
    e.body.rules[0].phases = ["output", "display", "reasoning", "future_step"]  # type: ignore[attr-defined]
    assert out_tree(e)["regexScripts"][0]["placement"] == ["ai_output", "future_step"]


def test_single_export_with_more_rules_becomes_a_bulk_export() -> None:
    e = load("regex.single.json")
    rule = e.body.rules[0]  # type: ignore[attr-defined]
    e.body.rules.append(rule.model_copy(update={"id": "1", "label": "Second"}))  # type: ignore[attr-defined]
    t = out_tree(e)
    assert t["kind"] == "marinara.regex-scripts" and t["exportedAt"] == "2026-07-04T09:20:00.000Z"
    assert [r["name"] for r in t["regexScripts"]] == ["Curly quotes", "Second"]
    assert "kind" not in t["regexScripts"][0] and "exportedAt" not in t["regexScripts"][0]


def test_reordered_rules_keep_their_own_rows() -> None:
    e = load("regex.api-rows.json")
    rules = e.body.rules  # type: ignore[attr-defined]
    rules.reverse()
    rules[0].label = "renamed"
    rows = out_tree(e)
    raw = sample_tree("regex.api-rows.json")
    assert [r["id"] for r in rows] == [raw[2]["id"], raw[1]["id"], raw[0]["id"]]
    assert rows[1] == raw[1] and rows[2] == raw[0]
    assert rows[0]["createdAt"] == raw[2]["createdAt"]


def test_fresh_export_is_a_bare_array_that_reads_back() -> None:
    e = fresh(load("regex.api-rows.json"))
    rows = out_tree(e, "marinara-regex")
    assert isinstance(rows, list) and rows[0]["id"] == "rx_Hq3mT0aZ9vLw"
    assert rows[0]["enabled"] is True and rows[0]["placement"] == ["ai_output", "user_input"]
    assert rows[0]["createdAt"] == "2026-07-01T10:00:00.000Z"
    again = load_tree(rows, "regex.api-rows.json")
    assert again.source.format == "marinara-regex"  # type: ignore[union-attr]
    assert again.body == e.body


def test_fresh_export_of_an_empty_set_is_a_bulk_export() -> None:
    from bunzai_codecs.core.entity import CanonicalEntity

    e = CanonicalEntity(kind="regex", id="regex-x", body=RegexSetBody(name="none"))
    data = MarinaraRegexCodec().encode(e, EmitContext())
    assert load_tree(__import__("orjson").loads(data)).body.rules == []  # type: ignore[attr-defined]


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tree", "path"),
    [
        ([{"id": "a", "findRegex": 5, "order": 1}], "$[0].findRegex"),
        ([{"id": "a", "findRegex": "x", "placement": 3}], "$[0].placement"),
        ([{"id": "a", "findRegex": "x", "trimStrings": "[oops"}], "$[0].trimStrings"),
        ([{"id": "a", "findRegex": "x", "enabled": "yes"}], "$[0].enabled"),
        ([{"id": "a", "findRegex": "x", "order": "first"}], "$[0].order"),
        ([{"id": "a", "findRegex": "x"}, "row"], "$[1]"),
        ([ST_ROW], "$[0].scriptName"),
        ({"kind": "marinara.regex-scripts", "regexScripts": {}}, "$.regexScripts"),
        (
            {"kind": "marinara.regex-scripts", "regexScripts": [{"findRegex": "x", "placement": [1]}]},
            "$.regexScripts[0].placement[0]",
        ),
    ],
)
def test_bad_input_is_a_typed_error_with_its_path(tree: object, path: str) -> None:
    with pytest.raises(Malformed) as err:
        load_tree(tree, fmt="marinara-regex")
    assert err.value.path == path
    assert not getattr(err.value, "internal", False)


def test_not_a_regex_file_is_not_recognized() -> None:
    with pytest.raises(NotRecognized):
        load_tree({"type": "marinara_preset"}, fmt="marinara-regex")


def test_sample_bytes_detect_as_marinara_regex() -> None:
    for name in ("regex.api-rows.json", "marinara-regexes.json", "regex.single.json"):
        assert read(sample(f"marinara/{name}"), name).primary.source.format == "marinara-regex"  # type: ignore[union-attr]
