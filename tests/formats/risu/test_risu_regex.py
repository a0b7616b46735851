"""risu-regex: Risu's regex export envelope, bare rows, overlay (modules are risu-module: test_risu_module.py)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from bunzai_codecs import Malformed, read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import RegexSetBody
from bunzai_codecs.formats.risu import scripts

SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "risu"
EXPORT = SAMPLES / "harbor_regexscript_export.json"
MODULE = SAMPLES / "lantern_harbor.risum"


def _score(data: bytes, name: str = "x.json") -> float:
    return registry.get("risu-regex").detect(Sniff(data, name))


def _rules(data: bytes, name: str) -> RegexSetBody:
    body = read(data, name).primary.body
    assert isinstance(body, RegexSetBody)
    return body


def test_detection_scores() -> None:
    rows = [{"comment": "a", "in": "x", "out": "y", "type": "editoutput"}]
    assert _score(orjson.dumps({"type": "regex", "data": rows})) == 1.0
    assert _score(orjson.dumps(rows)) == 0.85
    # a module is risu-module's, whatever it is named
    assert _score(MODULE.read_bytes(), "m.risum") == 0.0
    assert _score(orjson.dumps({"type": "risuModule", "name": "m", "id": "x", "regex": []})) == 0.0
    # not ours: SillyTavern regex rows, a lorebook export, arbitrary arrays
    assert _score(orjson.dumps([{"scriptName": "a", "findRegex": "/x/g", "replaceString": ""}])) == 0.0
    assert _score(orjson.dumps({"type": "risu", "data": []})) == 0.0
    assert _score(orjson.dumps([{"in": "x"}])) == 0.0
    assert _score(orjson.dumps([])) == 0.0
    assert _score(b"\x6f\x00garbage") == 0.0


def test_decode_every_type_value() -> None:
    body = _rules(EXPORT.read_bytes(), EXPORT.name)
    assert body.name == "harbor_regexscript_export"
    got = [(r.phases, r.enabled) for r in body.rules]
    assert got == [
        (["input"], True),
        (["output"], True),
        (["request"], True),  # editprocess
        (["display"], True),
        (["edittrans"], True),  # no canonical phase: kept verbatim
        ([], False),  # disabled
    ]
    assert [r.id for r in body.rules] == ["0", "1", "2", "3", "4", "5"]
    assert [r.sortOrder for r in body.rules] == [0, 1, 2, 3, 4, 5]


def test_able_flag_and_flag_directives() -> None:
    body = _rules(EXPORT.read_bytes(), EXPORT.name)
    shout, bell, _, bold, *_ = body.rules
    assert (shout.useFlags, shout.flags) == (False, "g")  # no custom flag: Risu runs with g
    assert (bell.useFlags, bell.flags) == (True, "gi<order 5>")
    assert bold.flags == "g<cbs,move_top>"
    assert (bell.label, bell.find, bell.replace) == ("Bell sound", "\\*ding\\*", "🔔")


def test_editrequest_is_read_and_unknown_keys_ride_extras() -> None:
    rows = [{"comment": "a", "in": "x", "out": "y", "type": "editrequest", "note": 1}]
    (r,) = _rules(orjson.dumps({"type": "regex", "data": rows}), "x.json").rules
    assert r.phases == ["request"] and r.extras == {"note": 1}


def test_export_round_trip_and_stability() -> None:
    data = EXPORT.read_bytes()
    d = read(data, EXPORT.name)
    out = write(d.primary, "risu-regex").data
    assert orjson.loads(out) == orjson.loads(data)
    assert read(out, EXPORT.name).primary.body == d.primary.body


def test_an_edited_rule_keeps_the_other_rows_and_a_fresh_request_writes_editprocess() -> None:
    d = read(EXPORT.read_bytes(), EXPORT.name)
    body = d.primary.body
    assert isinstance(body, RegexSetBody)
    body.rules[0].phases = ["request"]
    body.rules[4].replace = "harbor!"
    rows = orjson.loads(write(d.primary, "risu-regex").data)["data"]
    orig = orjson.loads(EXPORT.read_bytes())["data"]
    assert rows[0]["type"] == "editprocess"
    assert rows[4] == {**orig[4], "out": "harbor!"}
    assert rows[1:4] == orig[1:4] and rows[5] == orig[5]


def test_bad_rows_are_typed_errors() -> None:
    with pytest.raises(Malformed) as e:
        read(b'{"type":"regex","data":[{"in":"x","type":5}]}', "x.json")
    assert e.value.path == "$.data[0].type"
    with pytest.raises(Malformed) as e:
        read(b'{"type":"regex","data":["x"]}', "x.json")
    assert e.value.path == "$.data[0]"


def test_corpus_regex_export(corpus: Path) -> None:
    path = corpus / "risu/regex/rpg-module_regexscript.json"
    data = path.read_bytes()
    assert registry.detect(Sniff(data, path.name)).id == "risu-regex"  # type: ignore[union-attr]
    d = read(data, path.name)
    out = write(d.primary, "risu-regex", linked=d.entities).data
    assert orjson.loads(out) == orjson.loads(data)
    assert read(out, path.name).primary.body == d.primary.body


def test_a_fresh_export_writes_rules_in_run_order() -> None:
    """Regression (property tests): Risu runs scripts in array order, but fresh rows were written in
    list order whatever ``sortOrder`` said, so a Marinara set (explicit ``order`` column) changed its
    run order on the way to Risu. Rows are written sorted by ``sortOrder``, as the ST codec does."""
    from bunzai_codecs.core.codec import EmitContext
    from bunzai_codecs.core.entity import CanonicalEntity

    body = RegexSetBody.model_validate(
        {
            "name": "set",
            "rules": [
                {"id": "a", "label": "runs second", "find": "b", "sortOrder": 5},
                {"id": "b", "label": "runs first", "find": "a", "sortOrder": -1},
            ],
        }
    )
    data = registry.get("risu-regex").encode(
        CanonicalEntity(kind="regex", id="regex-x", body=body), EmitContext()
    )
    rows = orjson.loads(data)["data"]
    assert [r["comment"] for r in rows] == ["runs first", "runs second"]


def test_fresh_rows_are_written_in_run_order() -> None:
    """Regression: Risu runs a list's scripts in array order, but fresh rows were written in list
    order whatever each rule's sortOrder said."""
    body = RegexSetBody.model_validate(
        {
            "rules": [
                {"id": "late", "label": "late", "find": "b", "phases": ["output"], "sortOrder": 20},
                {"id": "early", "label": "early", "find": "a", "phases": ["output"], "sortOrder": -5},
                {"id": "tie", "label": "tie", "find": "c", "phases": ["output"], "sortOrder": 20},
            ]
        }
    )
    assert [r["comment"] for r in scripts.body_to_rows(body)] == ["early", "late", "tie"]
