"""``rolecall-regex``: one RoleCall script file with its rules (docs/formats/rolecall.md#regex)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bunzai_codecs import read
from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.entities import RegexSetBody
from tests.formats.codec_helpers import decode, dumps, export, rt_compare, sample_tree, scores, winner
from tests.formats.helpers import edited, sample

RCR = "rolecall-regex"
TIDY = "rolecall/tidy-quotes.rolecall-regex.json"


def regex(data: bytes) -> RegexSetBody:
    b = decode(data).primary.body
    assert isinstance(b, RegexSetBody)
    return b


def test_detection_is_0_9_for_an_object_whose_rules_all_have_a_pattern_or_replacement() -> None:
    assert scores(sample(TIDY)) == {RCR: 0.9}
    tree = sample_tree(TIDY)
    assert RCR not in scores(dumps(tree["rules"]))  # an array of scripts is not claimed
    assert RCR not in scores(dumps({**tree, "rules": []}))
    assert RCR not in scores(dumps({**tree, "rules": [*tree["rules"], {"substitution": "x"}]}))
    assert RCR not in scores(sample("sillytavern/regex-Censor.json"))


def test_rules_map_onto_canonical_rules() -> None:
    b = regex(sample(TIDY))
    assert b.name == "Tidy quotes"
    curly, ooc = b.rules
    assert (curly.id, curly.label, curly.find, curly.replace, curly.flags) == (
        "curly",
        "Curly to straight quotes",
        "[\u201c\u201d]",
        '"',
        "g",
    )
    assert curly.phases == ["output", "display"] and curly.enabled and curly.trimStrings is None
    assert curly.extras == {"description": "Model output sometimes uses curly quotes."}
    assert ooc.phases == ["input", "request"]  # prompt_only is the outgoing prompt
    assert ooc.flags == "g"  # absent: RoleCall's default
    assert (ooc.enabled, ooc.minDepth, ooc.maxDepth, ooc.runOnEdit, ooc.sortOrder) == (False, 2, 10, True, 1)
    assert ooc.trimStrings == ["  "] and ooc.extras == {"color": "#aa3300"}


def test_round_trip_and_canonical_stability() -> None:
    data = sample(TIDY)
    d = decode(data)
    out = export(d.primary, RCR)
    assert rt_compare(data, out) == []
    assert decode(out).primary.body == d.primary.body


def test_edit_a_rule_keeps_its_unmapped_keys() -> None:
    d = decode(sample(TIDY))

    def change(b: dict[str, Any]) -> None:
        b["rules"][1]["find"] = "\\(ooc:[^)]*\\)"
        b["rules"][1]["phases"] = ["input"]

    rules = json.loads(export(edited(d.primary, change), RCR))["rules"]
    assert rules[0] == sample_tree(TIDY)["rules"][0]
    assert rules[1]["find_pattern"] == "\\(ooc:[^)]*\\)" and rules[1]["placement"] == ["user_input"]
    assert rules[1]["color"] == "#aa3300" and "flags" not in rules[1]


def test_cross_format_to_sillytavern_and_back() -> None:
    d = decode(sample(TIDY))
    st_bytes = export(d.primary, "sillytavern-regex")
    st = read(st_bytes, "tidy.json")
    assert st.primary.source is not None and st.primary.source.format == "sillytavern-regex"
    stb, rcb = st.primary.body, d.primary.body
    assert isinstance(stb, RegexSetBody) and isinstance(rcb, RegexSetBody)
    assert [(r.find, r.flags, r.replace, r.enabled) for r in stb.rules] == [
        (r.find, r.flags, r.replace, r.enabled) for r in rcb.rules
    ]
    scripts = json.loads(st_bytes)
    assert scripts[0]["findRegex"] == "/[\u201c\u201d]/g" and scripts[0]["markdownOnly"] is True
    back = regex(export(st.primary, RCR))
    assert [(r.label, r.find, r.replace, r.minDepth) for r in back.rules] == [
        (r.label, r.find, r.replace, r.minDepth) for r in rcb.rules
    ]


def test_cross_format_from_a_sillytavern_script() -> None:
    st = read(sample("sillytavern/regex-Censor.json"), "regex-Censor.json").primary
    out = export(st, RCR)
    assert winner(out) == RCR
    back, src = regex(out), st.body
    assert isinstance(src, RegexSetBody)
    assert [(r.find, r.flags, r.replace, r.phases, r.enabled) for r in back.rules] == [
        (r.find, r.flags, r.replace, r.phases, r.enabled) for r in src.rules
    ]


@pytest.mark.parametrize(
    ("rule", "path"),
    [
        ({"find_pattern": "x", "placement": "ai_output"}, "$.rules[0].placement"),
        ({"find_pattern": "x", "placement": [None]}, "$.rules[0].placement[0]"),
        ({"find_pattern": ["x"]}, "$.rules[0].find_pattern"),
        ({"find_pattern": "x", "enabled": "yes"}, "$.rules[0].enabled"),
        ({"find_pattern": "x", "trim_strings": "  "}, "$.rules[0].trim_strings"),
    ],
)
def test_bad_rules_are_typed_errors_with_their_path(rule: dict[str, object], path: str) -> None:
    with pytest.raises(Malformed) as err:
        read(dumps({"rules": [rule]}), "bad.json", format=RCR)
    assert err.value.path == path and not getattr(err.value, "internal", False)
