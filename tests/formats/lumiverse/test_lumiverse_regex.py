"""``lumiverse-regex``: the ``lumiverse_regex_scripts`` export file (docs/formats/lumiverse.md#regex-export-file-and-module-rows)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bunzai_codecs import read
from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.entities import RegexSetBody
from tests.formats.codec_helpers import decode, dumps, export, rt_compare, sample_tree, scores, winner
from tests.formats.helpers import edited, sample

LVR = "lumiverse-regex"
CLEANUP = "lumiverse/cleanup.lumiverse-regex.json"


def regex(data: bytes, name: str = "x.json") -> RegexSetBody:
    b = decode(data, name).primary.body
    assert isinstance(b, RegexSetBody)
    return b


def test_detection_is_certain_on_the_type_and_a_scripts_array() -> None:
    assert scores(sample(CLEANUP)) == {LVR: 1.0}
    tree = sample_tree(CLEANUP)
    assert LVR not in scores(dumps({**tree, "scripts": {}}))
    assert LVR not in scores(dumps({**tree, "type": "regex"}))
    assert LVR not in scores(dumps(tree["scripts"]))


def test_scripts_map_onto_rules() -> None:
    b = regex(sample(CLEANUP), "cleanup.lumiverse-regex.json")
    assert b.name == "cleanup.lumiverse-regex"  # the file name: the export has none
    dots, mem = b.rules
    assert (dots.id, dots.label, dots.find, dots.replace, dots.flags) == (
        "lv-1",
        "Collapse ellipses",
        "\\.{4,}",
        "...",
        "g",
    )
    assert dots.phases == ["output"] and dots.targets == ["display", "prompt"]
    assert dots.substituteFind == "none" and dots.enabled and dots.trimStrings is None
    assert dots.extras is not None and dots.extras["folder"] == "tidy" and dots.extras["user_id"] == "u-7"
    assert dots.extras["description"] == "Four or more dots become three."
    assert mem.phases == ["memory", "lorebook"]  # memory is Lumiverse-only: kept verbatim
    assert mem.targets == ["response"] and mem.substituteFind == "after"
    assert (mem.enabled, mem.minDepth, mem.runOnEdit, mem.trimStrings) == (False, 1, True, ["<mem>"])


def test_round_trip_and_canonical_stability() -> None:
    data = sample(CLEANUP)
    d = decode(data)
    out = export(d.primary, LVR)
    assert rt_compare(data, out) == []
    assert decode(out).primary.body == d.primary.body


def test_edit_keeps_account_fields_of_the_row() -> None:
    d = decode(sample(CLEANUP))

    def change(b: dict[str, Any]) -> None:
        b["rules"][0]["targets"] = ["display"]
        b["rules"].pop(1)

    out = json.loads(export(edited(d.primary, change), LVR))
    (row,) = out["scripts"]
    src = sample_tree(CLEANUP)["scripts"][0]
    assert row["target"] == ["display"]
    assert {k: v for k, v in row.items() if k != "target"} == {k: v for k, v in src.items() if k != "target"}


def test_cross_format_to_and_from_sillytavern() -> None:
    d = decode(sample(CLEANUP))
    st_bytes = export(d.primary, "sillytavern-regex")
    assert winner(st_bytes) == "sillytavern-regex"
    st = read(st_bytes, "cleanup.json").primary.body
    lv = d.primary.body
    assert isinstance(st, RegexSetBody) and isinstance(lv, RegexSetBody)
    assert [(r.find, r.flags, r.replace, r.enabled, r.minDepth) for r in st.rules] == [
        (r.find, r.flags, r.replace, r.enabled, r.minDepth) for r in lv.rules
    ]
    assert st.rules[0].targets == ["display", "prompt"]
    src = read(sample("sillytavern/regex-scripts.json"), "regex-scripts.json").primary
    back = regex(export(src, LVR))
    assert isinstance(src.body, RegexSetBody)
    assert [(r.label, r.find, r.flags, r.replace, r.phases, r.enabled) for r in back.rules] == [
        (r.label, r.find, r.flags, r.replace, r.phases, r.enabled) for r in src.body.rules
    ]
    # ST's "edit the stored text" (no targets) becomes Lumiverse's response target
    assert all(r.targets is not None for r in back.rules)


@pytest.mark.parametrize(
    ("row", "path"),
    [
        ({"find_regex": ["x"]}, "$.scripts[0].find_regex"),
        ({"find_regex": "x", "placement": "ai_output"}, "$.scripts[0].placement"),
        ({"find_regex": "x", "target": {"prompt": True}}, "$.scripts[0].target"),
        ({"find_regex": "x", "disabled": "no"}, "$.scripts[0].disabled"),
    ],
)
def test_bad_rows_are_typed_errors_with_their_path(row: dict[str, object], path: str) -> None:
    with pytest.raises(Malformed) as err:
        read(dumps({"version": 1, "type": "lumiverse_regex_scripts", "scripts": [row]}), "bad.json")
    assert err.value.path == path and not getattr(err.value, "internal", False)
    with pytest.raises(Malformed) as err:
        read(dumps({"version": 1, "type": "lumiverse_regex_scripts", "scripts": [row, 5]}), "bad.json")
