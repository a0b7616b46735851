"""risu-module: ``.risum`` modules and RisuRealm module JSON (regex set + linked lorebook, the rest in
escrow); always written back as a module. The old id ``risu-regex`` still reads a module for a release."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from bunzai_codecs import Malformed, read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import LorebookBody, RegexSetBody
from bunzai_codecs.formats.risu import risum

SAMPLES = Path(__file__).resolve().parents[3] / "samples"
MODULE = SAMPLES / "risu" / "lantern_harbor.risum"
RM = "risu-module"


def _score(data: bytes, name: str = "x.json") -> float:
    return registry.get(RM).detect(Sniff(data, name))


def _module(data: bytes) -> dict[str, object]:
    return risum.open_module(data).module


def test_detection_scores() -> None:
    assert _score(MODULE.read_bytes(), "m.risum") == 0.8
    assert _score(MODULE.read_bytes(), "no-suffix") == 0.8  # the bytes decide, not the name
    assert _score(orjson.dumps({"type": "risuModule", "name": "m", "id": "x", "regex": []})) == 0.8
    assert registry.detect(Sniff(MODULE.read_bytes(), "m.risum")).id == RM  # type: ignore[union-attr]
    rows = [{"comment": "a", "in": "x", "out": "y", "type": "editoutput"}]
    assert _score(orjson.dumps({"type": "regex", "data": rows})) == 0.0  # Risu's regex export
    assert _score(orjson.dumps(rows)) == 0.0
    assert _score(b"\x6f\x00garbage") == 0.0
    assert registry.get(RM).kind_of(Sniff(MODULE.read_bytes())) == "regex"


def test_module_decodes_to_regex_set_and_linked_lorebook() -> None:
    d = read(MODULE.read_bytes(), MODULE.name)
    rx, book = d.entities
    assert rx.source is not None and rx.source.format == RM
    assert rx.kind == "regex" and book.kind == "lorebook"
    assert rx.links == {"knowledgeRefs": [book.id]}
    assert isinstance(rx.body, RegexSetBody) and isinstance(book.body, LorebookBody)
    assert rx.body.name == "Lantern Harbor Module"
    assert rx.body.description == "Lore, display rules and a bell trigger for Lantern Harbor."
    assert [r.label for r in rx.body.rules] == ["Bell sound", "Drop OOC from prompt", "Harbor names bold"]
    assert book.body.name == "Lantern Harbor Module"
    assert [c.name for c in book.body.categories] == ["Harbor District"]
    assert [e.title for e in book.body.entries] == ["The Lighthouse", "Harbormaster"]
    # the lorebook's twin is the module's rows, under the module codec's id
    assert book.original[RM].raw is rx.original[RM].raw["module"]["lorebook"]


def test_module_escrow_keeps_triggers_assets_and_bytes() -> None:
    data = MODULE.read_bytes()
    rx = read(data, MODULE.name).primary
    twin = rx.original[RM]
    module = twin.raw["module"]
    assert [t["comment"] for t in module["trigger"]] == ["Ring the bell", "Lua greeter"]
    assert module["customModuleToggle"].startswith("=Harbor=group\n")
    assert module["assets"] == [["buoy", "", "png"]]
    assert twin.blobs["risum"] == data
    assert twin.json_style == "indent2"
    assert any("executable content" in w for w in rx.warnings)


def test_unedited_module_re_exports_its_bytes() -> None:
    data = MODULE.read_bytes()
    d = read(data, MODULE.name)
    out = write(d.primary, RM, linked=d.entities)
    assert out.data == data
    assert out.beside == []  # the lorebook rode along inside the module


def test_an_edited_module_is_still_a_module_with_everything_else_kept() -> None:
    data = MODULE.read_bytes()
    d = read(data, MODULE.name)
    rx, book = d.entities
    assert isinstance(rx.body, RegexSetBody) and isinstance(book.body, LorebookBody)
    rx.body.rules[0].replace = "BELL"
    rx.body.name = "Harbor (edited)"
    book.body.entries[0].content = "The lamp is out."
    out = write(rx, RM, linked=d.entities)
    assert out.beside == []
    opened = risum.open_module(out.data)
    before, after = _module(data), opened.module
    assert opened.assets == risum.open_module(data).assets  # asset blocks kept
    assert after["name"] == "Harbor (edited)"
    assert after["regex"][0]["out"] == "BELL"  # type: ignore[index]
    assert after["regex"][1:] == before["regex"][1:]  # type: ignore[index]
    for key in ("trigger", "customModuleToggle", "assets", "id"):
        assert after[key] == before[key], key
    back = read(out.data, "m.risum")
    assert back.primary.body == rx.body
    lore = back.entities[1].body
    assert isinstance(lore, LorebookBody)
    assert lore.entries[0].content == "The lamp is out."
    assert lore.entries[1:] == book.body.entries[1:]


def test_a_removed_lorebook_link_removes_the_module_lorebook() -> None:
    d = read(MODULE.read_bytes(), MODULE.name)
    rx = d.primary
    rx.links = {"knowledgeRefs": []}
    out = write(rx, RM, linked=d.entities).data
    assert "lorebook" not in _module(out)
    assert len(read(out, "m.risum").entities) == 1


def test_flat_module_json_stays_json() -> None:
    m = {**risum.open_module(MODULE.read_bytes()).module, "type": "risuModule", "assets": []}
    data = orjson.dumps(m)
    d = read(data, "realm.json")
    assert d.primary.source is not None and d.primary.source.format == RM
    assert d.primary.kind == "regex" and len(d.entities) == 2
    assert orjson.loads(write(d.primary, RM, linked=d.entities).data) == m
    body = d.primary.body
    assert isinstance(body, RegexSetBody)
    body.rules[1].find = "edited"
    edited = orjson.loads(write(d.primary, RM, linked=d.entities).data)
    assert edited["regex"][1]["in"] == "edited" and edited["trigger"] == m["trigger"]


def test_another_apps_regex_set_becomes_a_new_module() -> None:
    d = read((SAMPLES / "sillytavern/regex-scripts.json").read_bytes(), "regex-scripts.json")
    out = write(d.primary, RM, linked=d.entities, container="risum").data
    assert registry.detect(Sniff(out, "x.risum")).id == RM  # type: ignore[union-attr]
    tree = risum.open_module(out).tree
    assert tree["type"] == "risuModule" and list(tree) == ["module", "type"]
    m = tree["module"]
    assert list(m) == ["name", "description", "id", "regex", "assets"] and m["assets"] == []
    body = d.primary.body
    assert isinstance(body, RegexSetBody)
    assert m["name"] == body.name
    back = read(out, "x.risum").primary.body
    assert isinstance(back, RegexSetBody)
    assert [(r.label, r.find, r.replace) for r in back.rules] == [
        (r.label, r.find, r.replace) for r in sorted(body.rules, key=lambda r: r.sortOrder)
    ]
    assert write(d.primary, RM, linked=d.entities, container="risum").data == out  # deterministic
    # a JSON source keeps its container where the target has one: RisuRealm's flat module JSON
    flat = write(d.primary, RM, linked=d.entities)
    assert flat.extension == ".json" and orjson.loads(flat.data)["type"] == "risuModule"
    assert registry.detect(Sniff(flat.data, "x.json")).id == RM  # type: ignore[union-attr]
    again = read(flat.data, "x.json").primary.body
    assert isinstance(again, RegexSetBody) and again.rules == back.rules


def test_a_linked_lorebook_of_another_app_is_embedded() -> None:
    rx = read(MODULE.read_bytes(), MODULE.name).primary
    world = read((SAMPLES / "sillytavern/world-harbor-town.json").read_bytes(), "world-harbor-town.json")
    book = world.primary
    fresh = CanonicalEntity(kind="regex", id="regex-x", body=rx.body, links={"knowledgeRefs": [book.id]})
    out = write(fresh, RM, linked=[fresh, book])
    assert out.beside == []
    back = read(out.data, "x.risum").entities
    assert len(back) == 2
    got = back[1].body
    assert isinstance(got, LorebookBody) and isinstance(book.body, LorebookBody)
    assert [e.content for e in got.entries] == [e.content for e in book.body.entries]


def test_a_module_twin_stored_under_the_old_id_is_still_the_module() -> None:
    """bunzai 0.1.0 stored a module's twin under risu-regex (its vaud-json lines still do)."""
    data = MODULE.read_bytes()
    d = read(data, MODULE.name)
    for e in d.entities:
        e.original = {"risu-regex": e.original[RM]}
    assert write(d.primary, RM, linked=d.entities).data == data
    rx, book = d.entities
    assert isinstance(book.body, LorebookBody)
    book.body.entries[1].content = "edited"
    again = read(write(rx, RM, linked=d.entities).data, "m.risum")
    assert again.primary.body == rx.body and again.entities[1].body == book.body


def test_the_old_id_still_reads_a_module_for_a_release() -> None:
    data = MODULE.read_bytes()
    d = read(data, MODULE.name, format="risu-regex")
    assert d.primary.source is not None and d.primary.source.format == RM
    assert registry.moved_note("risu-regex") is not None
    with pytest.raises(Malformed) as err:
        registry.get("risu-regex").decode(Sniff(data, MODULE.name))
    assert RM in str(err.value)


def test_risu_regex_writes_the_regex_export_of_a_module_and_its_lorebook_beside() -> None:
    d = read(MODULE.read_bytes(), MODULE.name)
    rx = d.primary
    out = write(rx, "risu-regex", linked=d.entities)
    tree = orjson.loads(out.data)
    assert tree == {"type": "regex", "data": rx.original[RM].raw["module"]["regex"]}
    assert registry.detect(Sniff(out.data, "x.json")).id == "risu-regex"  # type: ignore[union-attr]
    (side,) = out.beside
    assert side.format == "risu-lorebook"
    assert orjson.loads(side.data)["data"] == rx.original[RM].raw["module"]["lorebook"]


def test_bad_input_is_typed() -> None:
    with pytest.raises(Malformed) as err:
        read(b'{"type":"regex","data":[]}', "x.json", format=RM)
    assert err.value.path == "$"
    with pytest.raises(Malformed):
        read(b"\x6f\x00\xff\xff\xff\xff", "x.risum", format=RM)


def test_corpus_modules(corpus: Path) -> None:
    for path in sorted((corpus / "risu").rglob("*.risum")):
        data = path.read_bytes()
        assert registry.detect(Sniff(data, path.name)).id == RM, path.name  # type: ignore[union-attr]
        d = read(data, path.name)
        assert write(d.primary, RM, linked=d.entities).data == data, path.name
        body = d.primary.body
        assert isinstance(body, RegexSetBody)
        body.description = (body.description or "") + " (edited)"
        out = write(d.primary, RM, linked=d.entities).data
        back = read(out, path.name)
        assert back.primary.body == body, path.name
        assert [e.body for e in back.entities[1:]] == [e.body for e in d.entities[1:]], path.name
        assert risum.open_module(out).assets == risum.open_module(data).assets, path.name


def test_corpus_module_lorebooks_are_linked(corpus: Path) -> None:
    d = read((corpus / "risu/card/veil-of-night/module.risum").read_bytes(), "module.risum")
    rx, book = d.entities
    assert isinstance(book.body, LorebookBody)
    assert len(book.body.entries) + len(book.body.categories) == 83
    assert rx.links["knowledgeRefs"] == [book.id]
    assert len(rx.original[RM].raw["module"]["trigger"]) == 11
    novelist = read((corpus / "risu/module/novelist_module.risum").read_bytes(), "n.risum")
    assert len(novelist.entities) == 1  # no lorebook rows: nothing to link
    body = novelist.primary.body
    assert isinstance(body, RegexSetBody)
    phases = {p for r in body.rules for p in r.phases}
    assert {"input", "output", "request", "display", "edittrans"} <= phases
    assert sum(1 for r in body.rules if not r.enabled) == 9
