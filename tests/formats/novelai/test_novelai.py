"""novelai-lorebook: .lorebook JSON, the PNG naidata card and a .scenario's embedded book."""

from __future__ import annotations

import base64
import json
import uuid
from pathlib import Path

import pytest

from bunzai_codecs import Malformed, read, write
from bunzai_codecs.core import png, registry
from bunzai_codecs.core.codec import EmitContext
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import LorebookBody
from tests.conftest import expect_rows
from tests.formats.helpers import chunks, edited, sample, text_chunk, text_json, tiny_png
from tests.formats.make_samples import CAT, NAI_BOOK, NAI_SCENARIO

CODEC = registry.get("novelai-lorebook")
BOOK, V3, CARD, SCENARIO = (
    "novelai/hollin.lorebook",
    "novelai/moonwell.v3.lorebook",
    "novelai/hollin.naidata.png",
    "novelai/night-in-hollin.scenario",
)


# -- detection ---------------------------------------------------------------------------------


def test_detection() -> None:
    assert CODEC.detect(Sniff(sample(BOOK), "b.lorebook")) == 1.0
    assert CODEC.detect(Sniff(sample(BOOK), "b.json")) == 1.0
    assert CODEC.detect(Sniff(sample(CARD), "c.png")) == 1.0
    # a scenario is a container: claimed below certainty so a dedicated codec would win
    assert CODEC.detect(Sniff(sample(SCENARIO), "s.scenario")) == 0.9
    # a bad naidata payload is still ours to reject precisely
    assert CODEC.detect(Sniff(tiny_png(text_chunk("naidata", b"%%")), "c.png")) == 1.0


@pytest.mark.parametrize(
    "tree",
    [
        {"entries": {"0": {"uid": 0, "key": ["a"], "content": "x"}}},  # SillyTavern world info
        {"lorebookVersion": "6", "entries": []},
        {"lorebookVersion": True, "entries": []},
        {"lorebookVersion": 6, "entries": {}},
        {"scenarioVersion": 3, "title": "no book"},
        {"name": "x", "entries": [{"keys": ["a"], "content": "x"}]},  # a CCv3 character_book
    ],
)
def test_what_it_must_not_claim(tree: object) -> None:
    assert CODEC.detect(Sniff(json.dumps(tree).encode(), "x.json")) == 0.0


def test_an_image_generation_png_is_not_a_lorebook() -> None:
    png = tiny_png(text_chunk("Software", b"NovelAI"), text_chunk("Comment", b'{"prompt": "x"}'))
    assert CODEC.detect(Sniff(png, "gen.png")) == 0.0


# -- decode ------------------------------------------------------------------------------------


def test_decode_maps_entries_and_categories() -> None:
    e = read(sample(BOOK), "hollin.lorebook").primary
    b = e.body
    assert isinstance(b, LorebookBody)
    assert b.name == ""  # a NovelAI book has no name
    orchard, warden, rule = b.entries
    assert orchard.id == "5d0c1f4e-2b7a-4f09-8d3e-61a2c4b9e001"
    assert orchard.title == "Hollin Orchard"
    assert orchard.content == "The orchard of Hollin grows silver pears that ripen only under moonlight."
    assert [(t.text, t.isRegex) for t in orchard.triggers or []] == [
        ("Hollin", False),
        ("orchard", False),
        ("silver pear", False),
    ]
    assert orchard.categoryId == CAT
    # budgetPriority is the insertion order; priority is untouched
    assert (orchard.sortOrder, warden.sortOrder, rule.sortOrder) == (400, 650, -200)
    assert orchard.priority == 100
    # /.../flags is a regex key
    regex = (warden.triggers or [])[0]
    assert (regex.text, regex.isRegex, regex.flags) == ("\\bAldous\\b", True, "i")
    assert warden.categoryId is None  # ""
    # searchRange counts characters: not a scan depth
    assert warden.scanDepth is None
    assert (rule.enabled, rule.constant, rule.triggers) == (False, True, [])
    assert [(c.id, c.name, c.enabled, c.sortOrder) for c in b.categories] == [(CAT, "Places", True, 0)]


def test_v3_entries_without_ids_or_names() -> None:
    b = read(sample(V3), "moonwell.lorebook").primary.body
    assert isinstance(b, LorebookBody)
    assert [(e.id, e.title) for e in b.entries] == [("0", "Moonwell"), ("1", "Entry 2")]
    assert b.categories == []


def test_decode_the_png_card() -> None:
    e = read(sample(CARD), "hollin.png").primary
    book = read(sample(BOOK), "hollin.lorebook").primary.body
    assert e.body.model_copy(update={"media": None}) == book
    assert e.original["novelai-lorebook"].container == "png"
    # the PNG (without its naidata chunk) is the book's picture
    p = e.body.media.portrait  # type: ignore[union-attr]
    assert p is not None and p.ref == "ccdefault:" and p.role == "portrait"
    assert e.media[p.sha256 or ""] == png.replace_text(sample(CARD), remove=("naidata",))


def test_a_scenario_yields_its_lorebook_and_keeps_the_rest() -> None:
    d = read(sample(SCENARIO), "night.scenario")
    assert len(d.entities) == 1 and d.primary.kind == "lorebook"
    assert [e.content for e in d.primary.body.entries] == [  # type: ignore[attr-defined]
        "Moonwell: a spring that reflects tomorrow's sky.",
        "Nobody drinks from the Moonwell twice.",
    ]
    twin = d.primary.original["novelai-lorebook"]
    assert twin.container == "scenario"
    assert twin.scenario["prompt"] == NAI_SCENARIO["prompt"]


# -- round trips -------------------------------------------------------------------------------


@pytest.mark.parametrize("rel", [BOOK, V3, SCENARIO])
def test_json_round_trips_are_the_same_tree(rel: str) -> None:
    d = read(sample(rel), rel)
    out = write(d.primary, "novelai-lorebook").data
    assert json.loads(out) == json.loads(sample(rel))
    assert list(json.loads(out)) == list(json.loads(sample(rel)))  # key order too


def test_png_round_trip_is_byte_identical() -> None:
    d = read(sample(CARD), "c.png")
    assert write(d.primary, "novelai-lorebook").data == sample(CARD)


def test_an_edit_touches_only_its_field_and_keeps_the_snake_case_flags() -> None:
    d = read(sample(BOOK), "b.lorebook")
    e = edited(d.primary, lambda b: b["entries"][1].update(content="Aldous whistles now.", sortOrder=700))
    out = json.loads(write(e, "novelai-lorebook").data)
    expected = json.loads(json.dumps(NAI_BOOK))
    expected["entries"][1]["text"] = "Aldous whistles now."
    expected["entries"][1]["contextConfig"]["budgetPriority"] = 700
    assert out == expected  # searchRange 2500, keyRelative, generate_once... untouched
    assert read(json.dumps(out).encode(), "again.lorebook").primary.body == e.body


def test_a_png_edit_keeps_the_chunk_right_after_ihdr() -> None:
    d = read(sample(CARD), "c.png")
    e = edited(d.primary, lambda b: b["entries"][0].update(title="The Orchard"))
    out = write(e, "novelai-lorebook").data
    types = [t for t, _ in chunks(out)]
    assert types == [t for t, _ in chunks(sample(CARD))] and types[1] == b"tEXt"
    tree = text_json(out, "naidata")
    assert tree["entries"][0]["displayName"] == "The Orchard"
    assert tree["entries"][1:] == NAI_BOOK["entries"][1:]  # type: ignore[index]
    assert [c for c in chunks(out) if c[0] != b"tEXt"] == [c for c in chunks(sample(CARD)) if c[0] != b"tEXt"]


def test_a_scenario_edit_writes_the_whole_scenario() -> None:
    d = read(sample(SCENARIO), "s.scenario")
    e = edited(d.primary, lambda b: b["entries"][0].update(content="A spring of tomorrows."))
    out = json.loads(write(e, "novelai-lorebook").data)
    assert list(out) == list(NAI_SCENARIO)
    assert out["lorebook"]["entries"][0]["text"] == "A spring of tomorrows."
    assert "id" not in out["lorebook"]["entries"][1]  # an unedited v3 entry stays as it was
    assert {k: v for k, v in out.items() if k != "lorebook"} == {
        k: v for k, v in NAI_SCENARIO.items() if k != "lorebook"
    }


def test_an_added_entry_gets_the_full_shape() -> None:
    d = read(sample(BOOK), "b.lorebook")
    e = edited(
        d.primary,
        lambda b: b["entries"].append(
            {"id": "new", "title": "Gate", "content": "Iron.", "triggers": [{"text": "gate"}]}
        ),
    )
    out = json.loads(write(e, "novelai-lorebook").data)
    assert out["entries"][:3] == NAI_BOOK["entries"]
    new = out["entries"][3]
    uuid.UUID(new["id"])
    assert (new["text"], new["displayName"], new["keys"]) == ("Iron.", "Gate", ["gate"])
    assert new["contextConfig"]["trimDirection"] == "trimBottom" and new["searchRange"] == 1000
    assert new["contextConfig"]["budgetPriority"] == 100


def test_a_foreign_lorebook_becomes_a_version_6_book() -> None:
    body = LorebookBody.model_validate(
        {
            "name": "World",
            "categories": [{"id": "folder1", "name": "People"}],
            "entries": [
                {
                    "id": "0",
                    "title": "Town",
                    "content": "A town.",
                    "triggers": [{"text": "town"}],
                    "sortOrder": 50,
                },
                {
                    "id": "1",
                    "content": "Rx",
                    "triggers": [{"text": "ab+c", "isRegex": True, "flags": "i"}],
                    "categoryId": "folder1",
                },
            ],
        }
    )
    e = CanonicalEntity(kind="lorebook", id="lorebook-abc", body=body)
    out = json.loads(CODEC.encode(e, EmitContext()))
    assert out["lorebookVersion"] == 6 and out["settings"] == {"orderByKeyLocations": False}
    first, second = out["entries"]
    assert first["keys"] == ["town"] and first["contextConfig"]["budgetPriority"] == 50
    assert second["keys"] == ["/ab+c/i"]
    assert isinstance(first["contextConfig"]["insertionType"], str)  # string enums
    cat = out["categories"][0]
    assert second["category"] == cat["id"] != "folder1"
    for x in (first["id"], second["id"], cat["id"]):
        uuid.UUID(x)
    again = read(json.dumps(out).encode(), "w.lorebook").primary.body
    assert [(x.title, x.content, x.triggers, x.sortOrder) for x in again.entries] == [  # type: ignore[attr-defined]
        (x.title, x.content, x.triggers, x.sortOrder) for x in body.entries
    ]


# -- bad input ---------------------------------------------------------------------------------


def test_naidata_with_bad_base64_is_malformed_with_its_offset() -> None:
    data = tiny_png(after_ihdr=text_chunk("naidata", b"this is not base64!"))
    with pytest.raises(Malformed, match="not valid base64") as ei:
        read(data, "bad.png")
    assert ei.value.offset == 33


def test_naidata_that_is_not_a_book_is_malformed() -> None:
    data = tiny_png(after_ihdr=text_chunk("naidata", base64.b64encode(b'{"lorebookVersion": 5}')))
    with pytest.raises(Malformed) as ei:
        read(data, "bad.png")
    assert ei.value.path == "$.entries"
    data = tiny_png(after_ihdr=text_chunk("naidata", base64.b64encode(b"[1")))
    with pytest.raises(Malformed, match="naidata"):
        read(data, "bad.png")


@pytest.mark.parametrize(
    "change,path",
    [
        (lambda b: b["entries"][0].update(keys="Hollin"), "$.entries[0].keys"),
        (lambda b: b["entries"][1].update(keys=["ok", None]), "$.entries[1].keys[1]"),
        (
            lambda b: b["entries"][2].update(contextConfig={"budgetPriority": "high"}),
            "$.entries[2].contextConfig.budgetPriority",
        ),
        (lambda b: b["entries"][0].update(enabled="yes"), "$.entries[0].enabled"),
        (lambda b: b["entries"].append(7), "$.entries[3]"),
        (lambda b: b.update(categories={}), "$.categories"),
    ],
)
def test_wrong_shapes_are_malformed_with_the_path(change: object, path: str) -> None:
    tree = json.loads(sample(BOOK))
    change(tree)  # type: ignore[operator]
    with pytest.raises(Malformed) as ei:
        read(json.dumps(tree).encode(), "b.lorebook")
    assert ei.value.path == path


# -- corpus ------------------------------------------------------------------------------------


@pytest.mark.parametrize("rel,fmt", expect_rows("novelai"))
def test_corpus_detects_and_round_trips(corpus: Path, rel: str, fmt: str) -> None:
    data = (corpus / rel).read_bytes()
    d = read(data, rel)
    assert d.primary.source.format == fmt  # type: ignore[union-attr]
    out = write(d.primary, fmt).data
    if rel.endswith(".png"):
        assert out == data
    else:
        assert json.loads(out) == json.loads(data)


def test_corpus_scenario_decodes_to_its_book_and_round_trips(corpus: Path) -> None:
    data = (corpus / "novelai/scenario.crystal-dragon-encounter.scenario").read_bytes()
    d = read(data, "s.scenario")
    assert d.primary.source.format == "novelai-lorebook"  # type: ignore[union-attr]
    assert [e.title for e in d.primary.body.entries] == [  # type: ignore[attr-defined]
        "Galena the witch of the tower",
        "Simja",
        "Crystal Dragon",
    ]
    assert json.loads(write(d.primary, "novelai-lorebook").data) == json.loads(data)
    book = json.loads((corpus / "novelai/lorebook.crystal-dragon.v6.lorebook.json").read_bytes())
    assert d.primary.body == read(json.dumps(book).encode(), "b.json").primary.body
