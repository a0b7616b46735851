"""risu-regex: the export envelope, bare rows, .risum modules (regex + linked lorebook), overlay."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from bunzai_codecs import Malformed, read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import LorebookBody, RegexSetBody
from bunzai_codecs.formats.risu import risum, scripts

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
    assert _score(MODULE.read_bytes(), "m.risum") == 0.8
    assert _score(MODULE.read_bytes(), "no-suffix") == 0.8  # the bytes decide, not the name
    assert _score(orjson.dumps({"type": "risuModule", "name": "m", "id": "x", "regex": []})) == 0.8
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


def test_module_decodes_to_regex_set_and_linked_lorebook() -> None:
    d = read(MODULE.read_bytes(), MODULE.name)
    rx, book = d.entities
    assert rx.kind == "regex" and book.kind == "lorebook"
    assert rx.links == {"knowledgeRefs": [book.id]}
    assert isinstance(rx.body, RegexSetBody) and isinstance(book.body, LorebookBody)
    assert rx.body.name == "Lantern Harbor Module"
    assert rx.body.description == "Lore, display rules and a bell trigger for Lantern Harbor."
    assert [r.label for r in rx.body.rules] == ["Bell sound", "Drop OOC from prompt", "Harbor names bold"]
    assert book.body.name == "Lantern Harbor Module"
    assert [c.name for c in book.body.categories] == ["Harbor District"]
    assert [e.title for e in book.body.entries] == ["The Lighthouse", "Harbormaster"]
    # the lorebook's twin is the module's rows, under the parent codec's id
    assert book.original["risu-regex"]["raw"] is rx.original["risu-regex"]["raw"]["module"]["lorebook"]


def test_module_escrow_keeps_triggers_assets_and_bytes() -> None:
    data = MODULE.read_bytes()
    rx = read(data, MODULE.name).primary
    twin = rx.original["risu-regex"]
    module = twin["raw"]["module"]
    assert [t["comment"] for t in module["trigger"]] == ["Ring the bell", "Lua greeter"]
    assert module["customModuleToggle"].startswith("=Harbor=group\n")
    assert module["assets"] == [["buoy", "", "png"]]
    assert twin["blobs"]["risum"] == data
    assert twin["jsonStyle"] == "indent2"
    assert any("executable content" in w for w in rx.warnings)


def test_unedited_module_re_exports_its_bytes() -> None:
    data = MODULE.read_bytes()
    d = read(data, MODULE.name)
    out = write(d.primary, "risu-regex", linked=d.entities)
    assert out.data == data
    assert out.beside == []  # the lorebook rode along inside the module


def test_edited_module_exports_rows_and_the_lorebook_beside() -> None:
    d = read(MODULE.read_bytes(), MODULE.name)
    rx = d.primary
    assert isinstance(rx.body, RegexSetBody)
    rx.body.rules[0].replace = "BELL"
    out = write(rx, "risu-regex", linked=d.entities)
    tree = orjson.loads(out.data)
    assert tree["type"] == "regex" and tree["data"][0]["out"] == "BELL"
    (side,) = out.beside
    assert side.format == "risu-lorebook"
    lore = orjson.loads(side.data)
    assert lore["type"] == "risu"
    assert lore["data"] == rx.original["risu-regex"]["raw"]["module"]["lorebook"]


def test_edited_module_lorebook_is_not_silently_dropped() -> None:
    d = read(MODULE.read_bytes(), MODULE.name)
    rx, book = d.entities
    assert isinstance(book.body, LorebookBody)
    book.body.entries[0].content = "The lamp is out."
    out = write(rx, "risu-regex", linked=d.entities)
    assert out.data != MODULE.read_bytes()
    (side,) = out.beside
    assert orjson.loads(side.data)["data"][1]["content"] == "The lamp is out."


def test_flat_module_json_decodes_like_a_module() -> None:
    m = {**risum.open_module(MODULE.read_bytes()).module, "type": "risuModule", "assets": []}
    data = orjson.dumps(m)
    d = read(data, "realm.json")
    assert d.primary.kind == "regex" and len(d.entities) == 2
    out = write(d.primary, "risu-regex", linked=d.entities).data
    assert orjson.loads(out) == m


def test_bad_rows_are_typed_errors() -> None:
    with pytest.raises(Malformed) as e:
        read(b'{"type":"regex","data":[{"in":"x","type":5}]}', "x.json")
    assert e.value.path == "$.data[0].type"
    with pytest.raises(Malformed) as e:
        read(b'{"type":"regex","data":["x"]}', "x.json")
    assert e.value.path == "$.data[0]"


def test_corpus_regex_and_modules(corpus: Path) -> None:
    files = [corpus / "risu/regex/rpg-module_regexscript.json", *sorted((corpus / "risu").rglob("*.risum"))]
    for path in files:
        data = path.read_bytes()
        assert registry.detect(Sniff(data, path.name)).id == "risu-regex", path.name  # type: ignore[union-attr]
        d = read(data, path.name)
        out = write(d.primary, "risu-regex", linked=d.entities).data
        if path.suffix == ".risum":
            assert out == data, path.name
        else:
            assert orjson.loads(out) == orjson.loads(data)
        assert read(out, path.name).primary.body == d.primary.body


def test_corpus_module_lorebooks_are_linked(corpus: Path) -> None:
    d = read((corpus / "risu/card/veil-of-night/module.risum").read_bytes(), "module.risum")
    rx, book = d.entities
    assert isinstance(book.body, LorebookBody)
    assert len(book.body.entries) + len(book.body.categories) == 83
    assert rx.links["knowledgeRefs"] == [book.id]
    assert len(rx.original["risu-regex"]["raw"]["module"]["trigger"]) == 11
    novelist = read((corpus / "risu/module/novelist_module.risum").read_bytes(), "n.risum")
    assert len(novelist.entities) == 1  # no lorebook rows: nothing to link
    body = novelist.primary.body
    assert isinstance(body, RegexSetBody)
    phases = {p for r in body.rules for p in r.phases}
    assert {"input", "output", "request", "display", "edittrans"} <= phases
    assert sum(1 for r in body.rules if not r.enabled) == 9


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
