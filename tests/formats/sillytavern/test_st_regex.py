"""ST regex scripts: the shared mapper (tavern/st_regex.py) and the `sillytavern-regex` codec.

Facts: SillyTavern's regex extension (docs/formats/sillytavern.md#regex-tavernst_regexpy); the model: docs/canonical-model.md#regexrule.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from bunzai_codecs import Malformed, read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import RegexSetBody
from bunzai_codecs.formats._shared.wire import MapContext
from bunzai_codecs.formats.tavern.st_regex import (
    body_to_scripts,
    join_find,
    rule_to_script,
    script_to_rule,
    scripts_to_body,
    split_find,
)
from tests.formats.helpers import sample


def _rule(script: dict[str, Any], index: int = 0) -> Any:
    body = RegexSetBody.model_validate({"rules": [script_to_rule(script, index, MapContext("$"))]})
    return body.rules[0]


@pytest.mark.parametrize(
    ("literal", "find", "flags"),
    [
        ("/a+b/gi", "a+b", "gi"),
        ("/x/", "x", ""),
        ("/a/b/c/g", "a/b/c", "g"),
        ("plain words", "plain words", ""),  # no slashes: the whole string is the pattern
        ("/abc", "/abc", ""),  # no closing slash
        ("/abc/gg", "/abc/gg", ""),  # repeated flag: ST uses the whole string as the pattern
        ("/abc/g x", "/abc/g x", ""),  # not letters after the slash
        ("//g", "//g", ""),  # empty pattern
        ("/\\d+/su", "\\d+", "su"),
    ],
)
def test_find_regex_literal_split(literal: str, find: str, flags: str) -> None:
    assert split_find(literal) == (find, flags)


@pytest.mark.parametrize(("find", "flags"), [("", ""), ("", "g"), ("a", ""), ("a/b", "gi"), ("//g", "")])
def test_find_regex_literal_round_trips(find: str, flags: str) -> None:
    """Regression (property tests): an empty pattern was written as ``//``, which ST's
    ``regexFromString`` and ``split_find`` read as the two-slash pattern, so an empty rule came
    back matching ``//``. It is written as ``""`` (ST: no regex); its flags mean nothing then."""
    assert split_find(join_find(find, flags)) == (find, flags if find else "")


@pytest.mark.parametrize(
    ("placement", "phases"),
    [
        ([1], ["input"]),
        ([2], ["output"]),
        ([3], ["slash"]),
        ([5], ["lorebook"]),
        ([6], ["reasoning"]),
        ([0], ["display"]),
        ([4], ["4"]),  # legacy "sendAs": kept verbatim
        ([1, 2, 2], ["input", "output"]),
        ([9], ["9"]),
    ],
)
def test_placement_numbers_are_phases(placement: list[int], phases: list[str]) -> None:
    assert _rule({"findRegex": "a", "placement": placement}).phases == phases


def test_markdown_and_prompt_only_are_targets() -> None:
    assert _rule({"findRegex": "a"}).targets is None
    assert _rule({"findRegex": "a", "markdownOnly": True}).targets == ["display"]
    assert _rule({"findRegex": "a", "promptOnly": True}).targets == ["prompt"]
    assert _rule({"findRegex": "a", "markdownOnly": True, "promptOnly": True}).targets == [
        "display",
        "prompt",
    ]


@pytest.mark.parametrize(
    ("value", "name"),
    [(0, "none"), (1, "raw"), (2, "escaped"), (True, "raw"), (False, "none"), (3, "3"), (None, None)],
)
def test_substitute_regex_is_macro_substitution_not_flags(value: Any, name: str | None) -> None:
    assert _rule({"findRegex": "/a/i", "substituteRegex": value}).substituteFind == name


def test_ids_missing_or_minus_one_become_the_index_and_repeats_are_made_unique() -> None:
    body = RegexSetBody.model_validate(
        scripts_to_body(
            [
                {"findRegex": "a"},
                {"id": -1, "findRegex": "b"},
                {"id": "u", "findRegex": "c"},
                {"id": "u", "findRegex": "d"},
            ]
        )
    )
    assert [r.id for r in body.rules] == ["0", "1", "u", "u-2"]
    assert [r.sortOrder for r in body.rules] == [0, 1, 2, 3]


def test_other_fields() -> None:
    r = _rule(
        {
            "scriptName": "S",
            "findRegex": "/q/",
            "replaceString": "$1",
            "trimStrings": ["x", "{{char}}"],
            "disabled": True,
            "runOnEdit": True,
            "minDepth": -1,
            "maxDepth": 5,
        }
    )
    assert (r.label, r.replace, r.trimStrings, r.enabled, r.runOnEdit, r.minDepth, r.maxDepth) == (
        "S",
        "$1",
        ["x", "{{char}}"],
        False,
        True,
        -1,
        5,
    )
    assert _rule({"findRegex": "a", "trimStrings": []}).trimStrings is None


def test_rule_to_script_writes_st_shape() -> None:
    r = _rule(
        {
            "id": "i",
            "scriptName": "S",
            "findRegex": "/a/g",
            "placement": [2],
            "promptOnly": True,
            "substituteRegex": 1,
        }
    )
    assert rule_to_script(r) == {
        "id": "i",
        "scriptName": "S",
        "findRegex": "/a/g",
        "replaceString": "",
        "trimStrings": [],
        "placement": [2],
        "disabled": False,
        "markdownOnly": False,
        "promptOnly": True,
        "substituteRegex": 1,
        "minDepth": None,
        "maxDepth": None,
    }


def test_display_phase_is_written_as_st_migrates_it() -> None:
    """ST's deprecated placement 0 became "both directions + markdownOnly"."""
    r = _rule({"findRegex": "a", "placement": [0]})
    s = rule_to_script(r)
    assert (s["placement"], s["markdownOnly"]) == ([1, 2], True)
    again = _rule(s)
    assert (again.phases, again.targets) == (["input", "output"], ["display"])


def test_phases_st_has_no_number_for_are_dropped() -> None:
    r = RegexSetBody.model_validate({"rules": [{"id": "0", "phases": ["request", "output"]}]}).rules[0]
    assert rule_to_script(r)["placement"] == [2]


@pytest.mark.parametrize(
    ("flags", "use_flags", "written"),
    [
        ("gi<order 5>", None, "/a/gi"),  # a Risu directive has no ST form: dropped
        ("g<cbs,move_top>", True, "/a/g"),  # letters inside the directive are not flags
        ("gim", None, "/a/gim"),
        ("ggq", None, "/a/g"),  # ST refuses a repeated or unknown letter: only valid ones, once
        ("gi", False, "/a/g"),  # Risu custom flags off: Risu runs the rule with g
    ],
)
def test_only_flags_st_reads_are_written_so_the_pattern_survives(
    flags: str, use_flags: bool | None, written: str
) -> None:
    """Regression: Risu's ``gi<order 5>`` was written as ``/a/gi<order 5>``, which ST (and bunzai)
    read as one literal pattern: the find text itself changed."""
    rule = {"id": "0", "find": "a", "flags": flags, "useFlags": use_flags, "phases": ["output"]}
    r = RegexSetBody.model_validate({"rules": [rule]}).rules[0]
    s = rule_to_script(r)
    assert s["findRegex"] == written
    assert _rule(s).find == "a"


def test_every_mapped_field_is_stable() -> None:
    scripts = json.loads(sample("sillytavern/regex-scripts.json"))
    body = RegexSetBody.model_validate(scripts_to_body(scripts))
    again = RegexSetBody.model_validate(scripts_to_body(body_to_scripts(body)))
    assert again.rules == body.rules


# --- the sillytavern-regex codec --------------------------------------------------------------


def _score(data: Any, name: str = "x.json") -> float:
    return registry.get("sillytavern-regex").detect(Sniff(json.dumps(data).encode(), name))


def test_detection_scores() -> None:
    assert _score(json.loads(sample("sillytavern/regex-scripts.json"))) == 0.9
    assert _score(json.loads(sample("sillytavern/regex-Censor.json"))) == 0.9
    # not claimed: an empty array, other arrays, an object without scriptName, cards, world info
    assert _score([]) == 0.0
    assert _score([{"findRegex": "a", "scriptName": "s"}, {"name": "x"}]) == 0.0
    assert _score({"findRegex": "a", "replaceString": "b"}) == 0.0
    assert _score({"spec": "chara_card_v2", "data": {}}) == 0.0
    assert _score({"entries": {}}) == 0.0


def test_decode_the_array_sample() -> None:
    d = read(sample("sillytavern/regex-scripts.json"), "regex-scripts.json")
    assert d.primary.source is not None and d.primary.source.format == "sillytavern-regex"
    body = d.primary.body
    assert isinstance(body, RegexSetBody)
    assert body.name == "regex-scripts"  # the file stem
    a, b = body.rules
    assert (a.id, a.label, a.find, a.flags, a.replace) == (
        "a7c4e1d0-2f3b-4c5d-8e9f-0a1b2c3d4e5f",
        "Curly quotes to straight",
        "[“”]",
        "g",
        '"',
    )
    assert (a.phases, a.targets, a.runOnEdit, a.substituteFind, a.enabled) == (
        ["input", "output"],
        None,
        True,
        "none",
        True,
    )
    assert (b.id, b.find, b.flags, b.phases, b.targets, b.substituteFind, b.minDepth, b.maxDepth) == (
        "1",
        "\\(OOC:[^)]*\\)",
        "gi",
        ["output", "reasoning"],
        ["display"],
        "raw",
        0,
        4,
    )


def test_decode_a_single_script_names_the_set_after_it_and_keeps_its_shape() -> None:
    raw = sample("sillytavern/regex-Censor.json")
    d = read(raw, "regex-Censor.json")
    body = d.primary.body
    assert isinstance(body, RegexSetBody)
    assert body.name == "Censor" and len(body.rules) == 1
    r = body.rules[0]
    assert (r.find, r.flags, r.replace, r.substituteFind, r.targets) == (
        "darn",
        "",
        "d**n",
        "escaped",
        ["display"],
    )
    out = write(d.primary, "sillytavern-regex").data
    assert json.loads(out) == json.loads(raw)  # an object again, "darn" still bare


def test_edit_one_rule_keeps_the_others_and_unknown_keys() -> None:
    scripts = json.loads(sample("sillytavern/regex-scripts.json"))
    scripts[0]["x_app_flag"] = 7
    d = read(json.dumps(scripts).encode(), "pack.json")
    e = d.primary
    body = e.body.model_copy(deep=True)
    assert isinstance(body, RegexSetBody)
    body.rules[1].replace = "[ooc]"
    e.body = body
    out = json.loads(write(e, "sillytavern-regex").data)
    assert out[0] == scripts[0]
    assert out[1] == {**scripts[1], "replaceString": "[ooc]"}


def test_fresh_export_one_rule_is_an_object_several_an_array() -> None:
    one = CanonicalEntity(
        kind="regex",
        id="regex-1",
        body=RegexSetBody.model_validate({"rules": [{"id": "r", "label": "L", "find": "a", "flags": "g"}]}),
    )
    assert json.loads(write(one, "sillytavern-regex").data)["findRegex"] == "/a/g"
    two = CanonicalEntity(
        kind="regex",
        id="regex-2",
        body=RegexSetBody.model_validate({"rules": [{"id": "a"}, {"id": "b"}]}),
    )
    assert isinstance(json.loads(write(two, "sillytavern-regex").data), list)


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ('[{"findRegex": "a", "scriptName": "s"}, 5]', "$[1]"),
        ('[{"findRegex": "a", "scriptName": "s", "placement": "2"}]', "$[0].placement"),
        ('{"findRegex": "a", "scriptName": "s", "placement": [true]}', "$.placement[0]"),
        ('{"findRegex": "a", "scriptName": "s", "disabled": "no"}', "$.disabled"),
        ('{"findRegex": ["a"], "scriptName": "s"}', "$.findRegex"),
    ],
)
def test_bad_input_is_a_typed_error_with_its_path(data: str, path: str) -> None:
    with pytest.raises(Malformed) as err:
        read(data.encode(), "x.json", format="sillytavern-regex")
    assert err.value.path == path
    assert not getattr(err.value, "internal", False)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("id", {}),
        ("scriptName", []),
        ("replaceString", {}),
        ("trimStrings", "x"),
        ("markdownOnly", "yes"),
        ("promptOnly", 2),
        ("runOnEdit", "no"),
        ("substituteRegex", []),
        ("minDepth", "deep"),
        ("maxDepth", [2]),
    ],
)
def test_every_field_of_a_script_names_its_path(key: str, value: object) -> None:
    # paths are built only on error (never on the happy path): each one must still be exact
    script = {"findRegex": "/a/g", "scriptName": "s", "replaceString": "r", key: value}
    with pytest.raises(Malformed) as err:
        read(json.dumps([{"findRegex": "b", "scriptName": "t"}, script]).encode(), "x.json")
    assert err.value.path == f"$[1].{key}"
    card = {"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": "A"}}
    card["data"]["extensions"] = {"regex_scripts": [script]}
    with pytest.raises(Malformed) as err:
        read(json.dumps(card).encode(), "card.json")
    assert err.value.path == f"$.data.extensions.regex_scripts[0].{key}"
