"""The lineage's one regex rule mapper (``tavern/regex_rows.py``): each app's rule row is a table of
columns (SillyTavern's, Lumiverse's, RoleCall's, Marinara's), read and written by the same code."""

from __future__ import annotations

from typing import Any

import pytest

from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.entities.regex import RegexRule, RegexSetBody
from bunzai_codecs.formats._shared.wire import MapContext
from bunzai_codecs.formats.lumiverse.regex import ROW as LUMIVERSE
from bunzai_codecs.formats.marinara.regex import ROW as MARINARA
from bunzai_codecs.formats.rolecall.regex import ROW as ROLECALL
from bunzai_codecs.formats.tavern import regex_rows as rx
from bunzai_codecs.formats.tavern.st_regex import ST_ROW

#: a made-up app: a new app's rule row is this much data
TOY = rx.RuleRow(
    "toy",
    (
        rx.Id(),
        rx.Text("title", "label"),
        rx.Text("pattern", "find"),
        rx.Text("with", "replace"),
        rx.Placement("when", {"in": "input", "out": "output"}),
        rx.Flag("off", "enabled", negated=True),
        rx.Extras(),
    ),
)


def _rule(table: rx.RuleRow, row: dict[str, Any], index: int = 0) -> RegexRule:
    rule = rx.rule_of(table, row, index, MapContext("$"))
    rule.setdefault("id", f"given-{index}")  # Marinara's reader gives the ids (by the file's shape)
    return RegexRule.model_validate(rule)


def test_a_row_reads_through_its_columns_and_writes_back_in_the_apps_key_order() -> None:
    row = {"off": False, "with": "b", "pattern": "a+", "when": ["out", "later"], "title": "t", "note": 1}
    rule = _rule(TOY, row, 3)
    assert (rule.id, rule.label, rule.find, rule.replace) == ("3", "t", "a+", "b")
    assert rule.phases == ["output", "later"] and rule.enabled and rule.sortOrder == 3
    assert rule.extras == {"note": 1}  # a key no column maps
    out = rx.row_of(TOY, rule, 3)
    assert list(out) == ["id", "title", "pattern", "with", "when", "off", "note"]
    assert out == {**row, "id": "3"}


def test_a_wrong_value_is_malformed_at_its_path_and_a_coercible_one_is_noted() -> None:
    with pytest.raises(Malformed) as err:
        rx.rule_of(TOY, {"when": "out"}, 0, MapContext("$.rules[0]"))
    assert (err.value.path, err.value.message) == ("$.rules[0].when", "expected an array, found a string")
    ctx = MapContext("$")
    assert rx.rule_of(TOY, {"title": 7}, 0, ctx)["label"] == "7"
    assert ctx.warnings == ["$.title: expected a string, found the number 7; read as '7'"]


def test_columns_read_in_canonical_order_after_the_ones_an_app_reads_first() -> None:
    two_wrong = {"title": [], "when": {}}  # label before phases in the canonical order
    with pytest.raises(Malformed) as err:
        rx.rule_of(TOY, two_wrong, 0, MapContext("$"))
    assert err.value.path == "$.title"
    first = rx.RuleRow("toy", TOY.columns, reads=("when",))
    with pytest.raises(Malformed) as err:
        rx.rule_of(first, two_wrong, 0, MapContext("$"))
    assert err.value.path == "$.when"


def test_reads_must_name_keys_the_columns_map() -> None:
    with pytest.raises(ValueError, match="reads names keys no column maps"):
        rx.RuleRow("toy", TOY.columns, reads=("nope",))


@pytest.mark.parametrize(
    ("table", "placement", "array", "item"),
    [
        (ST_ROW, "placement", "an array of placement numbers", "a placement number"),
        (ROLECALL, "placement", "an array of placement names", "a placement name"),
        (MARINARA, "placement", "an array", "a string"),
    ],
)
def test_a_placement_error_says_what_the_app_spells_placements_with(
    table: rx.RuleRow, placement: str, array: str, item: str
) -> None:
    row = {"findRegex": "x"} if table is MARINARA else {}
    with pytest.raises(Malformed, match=f"expected {array}, found an object"):
        rx.rule_of(table, {**row, placement: {}}, 0, MapContext("$"))
    with pytest.raises(Malformed, match=f"expected {item}, found a boolean"):
        rx.rule_of(table, {**row, placement: [True]}, 0, MapContext("$"))


RULES = RegexSetBody.model_validate(
    {
        "rules": [
            {"id": "a", "label": "One", "find": "x+", "flags": "gi", "replace": "y", "phases": ["output"]},
            {"id": "b", "label": "Two", "find": "z", "replace": "", "enabled": False, "sortOrder": 1},
        ]
    }
).rules


@pytest.mark.parametrize("table", [ST_ROW, LUMIVERSE, ROLECALL, MARINARA], ids=lambda t: t.app)
def test_every_apps_fresh_rows_read_back_as_the_rules_they_hold(table: rx.RuleRow) -> None:
    rows = rx.rows_of(table, RULES)
    back = [_rule(table, r, i) for i, r in enumerate(rows)]
    for was, now in zip(RULES, back, strict=True):
        assert (now.label, now.find, now.replace, now.enabled, now.sortOrder) == (
            was.label,
            was.find,
            was.replace,
            was.enabled,
            was.sortOrder,
        )
        assert now.phases == was.phases
    assert [r.id for r in back] == (["given-0", "given-1"] if table is MARINARA else ["a", "b"])
