"""kobold-save: KoboldAI Lite / KoboldCpp and KoboldAI client saves, and Lite's world info export.

The samples are written by ``tests/formats/make_samples.py`` from the apps' save shapes; the
expectations below are spelled out from those generator constants, not from the codec's output.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from bunzai_codecs import Malformed, NotRecognized, read, write
from bunzai_codecs.convert import Options, losses, plan
from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import EmitContext
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import LorebookBody
from bunzai_codecs.fidelity import export_row
from tests.conftest import expect_rows
from tests.formats.helpers import covered_losses, edited, sample
from tests.formats.make_samples import CLIENT_SAVE, LITE_NO_WI, LITE_SAVE, LITE_WI, compact

CODEC = registry.get("kobold-save")
LITE, NO_WI, CLIENT, WI = (
    "kobold/harbor-watch.lite.json",
    "kobold/night-ferry.lite.json",
    "kobold/saltmarsh.client.json",
    "kobold/world_info.json",
)
SAMPLES = [LITE, NO_WI, CLIENT, WI]
ST_WORLD = "sillytavern/world-harbor-town.json"
ST_CARD = "sillytavern/lighthouse-keeper.v2.json"


def _book(rel: str) -> LorebookBody:
    body = read(sample(rel), Path(rel).name).primary.body
    assert isinstance(body, LorebookBody)
    return body


def _plain(tree: Any) -> Any:
    return json.loads(json.dumps(tree))


# -- detection ---------------------------------------------------------------------------------


def test_detection_scores() -> None:
    for rel in (LITE, NO_WI, CLIENT):
        assert CODEC.detect(Sniff(sample(rel), "x.json")) == 0.95
        assert registry.detect(Sniff(sample(rel), "x.json")).id == "kobold-save"  # type: ignore[union-attr]
    assert CODEC.detect(Sniff(sample(WI), "world_info.json")) == 0.85
    # the suffix does not matter: content decides
    assert CODEC.detect(Sniff(sample(LITE), "story.txt")) == 0.95


@pytest.mark.parametrize(
    "tree",
    [
        # AI Dungeon's world info export: {keys, entry} rows (the corpus keeps a real one as a reject)
        [{"id": 1, "keys": "Whiterun", "entry": "A city.", "hidden": False}],
        # KoboldAI United's own save: file_version, actions as an object, worldinfo_v2
        {"file_version": 2, "gamestarted": True, "prompt": "x", "actions": {"actions": {}}},
        {"prompt": "no gamestarted", "memory": "m"},
        {"gamestarted": "true", "prompt": "x"},
        {"gamestarted": True},
        [],
        [{"key": "a", "content": "only the two keys every list of rows might have"}],
        [
            {"key": "a", "content": "c", "keysecondary": "", "constant": False},
            {"keys": ["b"], "content": "c"},
        ],
        # RisuAI's bare lore rows: key, content, comment, selective, but secondkey and alwaysActive
        [
            {
                "key": "a",
                "secondkey": "",
                "content": "c",
                "comment": "",
                "selective": False,
                "alwaysActive": False,
            }
        ],
        {"entries": {"0": {"uid": 0, "key": ["a"], "content": "x"}}},  # SillyTavern world info
    ],
)
def test_what_it_must_not_claim(tree: object) -> None:
    assert CODEC.detect(Sniff(json.dumps(tree).encode(), "x.json")) == 0.0


# -- decode ------------------------------------------------------------------------------------


def test_a_lite_save_reads_its_world_info_notes_and_groups() -> None:
    b = _book(LITE)
    assert b.name == "harbor-watch.lite"  # the save's file name
    memory, note, watch, irel, causeway, air, bell = b.entries
    assert (memory.id, memory.title, memory.content, memory.constant) == (
        "memory",
        "Memory",
        LITE_SAVE["memory"],
        True,
    )
    assert (note.id, note.content, note.constant, note.position, note.depth) == (
        "authors-note",
        LITE_SAVE["authorsnote"],  # without its template
        True,
        "depth",
        3,
    )
    assert [t.text for t in watch.triggers or []] == ["harbor watch", "watchtower"]  # split and trimmed
    assert (watch.id, watch.title, watch.selective) == ("0", "Harbor watch", False)
    assert [t.text for t in irel.secondaryTriggers or []] == ["night", "smuggler"]
    assert (irel.selective, irel.selectiveLogic) == (True, "and_any")
    assert [t.text for t in causeway.secondaryTriggers or []] == ["storm"]  # keyanti
    assert (causeway.selectiveLogic, causeway.probability) == ("not_any", 50)  # "50" as Lite stores it
    assert (air.constant, air.triggers, air.title) == (True, [], "Entry 4")  # no comment: Entry N
    assert (bell.enabled, watch.enabled) == (False, True)  # widisabled
    assert [(c.id, c.name, c.sortOrder) for c in b.categories] == [
        ("group:People", "People", 0),
        ("group:Places", "Places", 1),
    ]
    assert (irel.categoryId, causeway.categoryId, air.categoryId, watch.categoryId) == (
        "group:People",
        "group:Places",
        "group:Places",
        None,
    )


def test_the_story_and_settings_stay_in_escrow() -> None:
    e = read(sample(LITE), "harbor-watch.lite.json").primary
    dumped = json.dumps(e.body.dump())
    for story in (LITE_SAVE["prompt"], *LITE_SAVE["actions"], LITE_SAVE["personal_notes"]):  # type: ignore[misc]
        assert str(story).strip() not in dumped
    twin = e.original["kobold-save"]
    assert (
        twin.raw["prompt"] == LITE_SAVE["prompt"] and twin.raw["savedsettings"] == LITE_SAVE["savedsettings"]
    )
    assert (twin.shape, twin.style) == ("save", "js")


def test_a_client_save_reads_its_folders() -> None:
    b = _book(CLIENT)
    ferryman, reeds, shop = b.entries[2:]
    assert [(c.id, c.name) for c in b.categories] == [("folder:1204933", "Villagers")]
    assert (ferryman.categoryId, reeds.categoryId, shop.categoryId) == (
        "folder:1204933",
        "folder:1204933",
        None,
    )
    assert [t.text for t in ferryman.triggers or []] == ["ferryman", "Old Pell"]
    assert reeds.title == "Entry 2" and "\u2014" in reeds.content  # ASCII-escaped in the file
    assert (shop.constant, shop.probability) == (True, 100)  # the client has no probability


def test_a_save_without_world_info_is_a_save() -> None:
    e = read(sample(NO_WI), "night-ferry.lite.json").primary
    assert e.source.format == "kobold-save"  # type: ignore[union-attr]
    b = e.body
    assert isinstance(b, LorebookBody)
    assert [(x.id, x.content) for x in b.entries] == [("memory", LITE_NO_WI["memory"])]  # no author's note
    assert e.original["kobold-save"].raw["prompt"] == LITE_NO_WI["prompt"]


def test_a_save_with_no_note_and_no_world_info_is_an_empty_book() -> None:
    tree = {"gamestarted": False, "prompt": "", "memory": "", "authorsnote": "", "actions": []}
    e = read(json.dumps(tree).encode(), "empty.json").primary
    assert e.source.format == "kobold-save" and e.body.entries == []  # type: ignore[union-attr]
    assert json.loads(write(e, "kobold-save").data) == tree


def test_the_world_info_export_reads_as_its_entries() -> None:
    b = _book(WI)
    assert [e.id for e in b.entries] == ["0", "1", "2", "3", "4"]
    assert [e.content for e in b.entries] == [str(x["content"]) for x in LITE_WI]
    lite = _book(LITE)
    assert [e.model_dump() for e in b.entries] == [e.model_dump() for e in lite.entries[2:]]


# -- round trips -------------------------------------------------------------------------------


@pytest.mark.parametrize("rel", SAMPLES)
def test_an_unedited_file_comes_back_byte_for_byte(rel: str) -> None:
    d = read(sample(rel), Path(rel).name)
    assert write(d.primary, "kobold-save").data == sample(rel)


def test_an_edit_touches_only_its_field_in_the_apps_layout() -> None:
    d = read(sample(LITE), "harbor-watch.lite.json")
    e = edited(d.primary, lambda b: b["entries"][3].update(content="Captain Irel retired."))
    out = write(e, "kobold-save").data
    want = copy.deepcopy(LITE_SAVE)
    want["worldinfo"][1]["content"] = "Captain Irel retired."  # type: ignore[index]
    assert out == compact(want)  # Lite's JSON.stringify layout, "probability": "50" and all kept

    d = read(sample(CLIENT), "saltmarsh.client.json")
    e = edited(d.primary, lambda b: b["entries"][1].update(content="Keep it short."))
    want = copy.deepcopy(CLIENT_SAVE)
    want["authorsnote"] = "Keep it short."
    assert write(e, "kobold-save").data == json.dumps(want, indent=3).encode()  # the client's layout


def test_deleting_an_entry_keeps_the_others_own_keys() -> None:
    d = read(sample(LITE), "harbor-watch.lite.json")
    e = edited(d.primary, lambda b: b["entries"].pop(2))  # the first world info entry
    out = json.loads(write(e, "kobold-save").data)
    assert out["worldinfo"] == LITE_WI[1:]  # keyanti, "50", wigroup stay on their own entries


def test_an_added_entry_gets_lites_shape() -> None:
    d = read(sample(CLIENT), "saltmarsh.client.json")
    new = {
        "id": "new",
        "title": "Causeway",
        "content": "Only at low tide.",
        "triggers": [{"text": "causeway"}, {"text": "low tide"}],
        "secondaryTriggers": [{"text": "storm"}],
        "selectiveLogic": "not_any",
        "probability": 40,
        "categoryId": "folder:1204933",
    }
    e = edited(d.primary, lambda b: b["entries"].append(new))
    out = json.loads(write(e, "kobold-save").data)
    assert out["worldinfo"][:3] == CLIENT_SAVE["worldinfo"]
    assert out["worldinfo"][3] == {
        "key": "causeway,low tide",
        "keysecondary": "",
        "keyanti": "storm",
        "content": "Only at low tide.",
        "comment": "Causeway",
        "folder": 1204933,
        "constant": False,
        "probability": 40,
        "wigroup": "",
        "widisabled": False,
    }
    back = read(json.dumps(out).encode(), "saltmarsh.json").primary.body
    assert back.entries[-1].model_dump(exclude={"id"}) == e.body.entries[-1].model_dump(exclude={"id"})  # type: ignore[attr-defined]


def test_the_notes_go_back_to_memory_and_authorsnote() -> None:
    d = read(sample(LITE), "harbor-watch.lite.json")
    e = edited(d.primary, lambda b: (b["entries"][0].update(content="New memory."), b["entries"].pop(1)))
    out = json.loads(write(e, "kobold-save").data)
    assert (out["memory"], out["authorsnote"]) == ("New memory.", "")
    assert out["anotetemplate"] == LITE_SAVE["anotetemplate"]
    assert out["worldinfo"] == LITE_WI  # not written as world info


def test_a_memory_entry_that_is_no_longer_constant_is_world_info() -> None:
    d = read(sample(NO_WI), "night-ferry.lite.json")
    e = edited(d.primary, lambda b: b["entries"][0].update(constant=False, triggers=[{"text": "Oona"}]))
    out = json.loads(write(e, "kobold-save").data)
    assert out["memory"] == "" and out["worldinfo"][0]["key"] == "Oona"


# -- other apps' books -------------------------------------------------------------------------


def test_a_foreign_book_becomes_a_lite_save() -> None:
    body = LorebookBody.model_validate(
        {
            "name": "Roads",
            "categories": [{"id": "c1", "name": "Places"}],
            "entries": [
                {
                    "id": "7",
                    "title": "Gate",
                    "content": "An iron gate.",
                    "triggers": [{"text": "gate"}, {"text": "ab+c", "isRegex": True, "flags": "i"}],
                    "secondaryTriggers": [{"text": "night"}],
                    "selective": True,
                    "selectiveLogic": "and_all",
                    "probability": 0,
                    "categoryId": "c1",
                    "position": "depth",
                },
                {"id": "memory", "title": "Memory", "content": "Always on.", "constant": True},
            ],
        }
    )
    e = CanonicalEntity(kind="lorebook", id="lorebook-abc", body=body)
    data = CODEC.encode(e, EmitContext())
    tree = json.loads(data)
    assert list(tree) == [
        "gamestarted",
        "prompt",
        "memory",
        "authorsnote",
        "anotetemplate",
        "actions",
        "actions_metadata",
        "worldinfo",
        "wifolders_d",
        "wifolders_l",
    ]
    assert data == compact(tree)  # Lite's layout
    assert tree["memory"] == "Always on." and tree["gamestarted"] is True
    (gate,) = tree["worldinfo"]
    assert gate["key"] == "gate,ab+c"  # no regex keys in KoboldAI: the pattern as text
    assert (gate["keysecondary"], gate["keyanti"], gate["selective"]) == (
        "night",
        "",
        True,
    )  # and_all -> and_any
    assert (gate["probability"], gate["wigroup"], gate["folder"]) == (1, "Places", None)  # 0 -> 1: never
    back = read(data, "Roads.json")
    assert back.primary.source.format == "kobold-save"  # type: ignore[union-attr]
    # what KoboldAI holds came back; what it cannot (regex flag, and_all, position) is the coverage's
    assert covered_losses(e, back.primary, "kobold-save") == []
    got = back.primary.body.entries  # type: ignore[attr-defined]
    # the notes read back first (a reshape the coverage declares: the file keeps them apart)
    assert [(x.id, x.content) for x in got] == [("memory", "Always on."), ("0", "An iron gate.")]


def test_a_key_with_a_comma_is_an_expected_reshape_not_a_bug() -> None:
    body = LorebookBody.model_validate(
        {"entries": [{"id": "0", "title": "t", "content": "c", "triggers": [{"text": "Smith, John"}]}]}
    )
    e = CanonicalEntity(kind="lorebook", id="lorebook-x", body=body)
    back = read(CODEC.encode(e, EmitContext()), "b.json").primary
    assert [t.text for t in back.body.entries[0].triggers] == ["Smith", "John"]  # type: ignore[attr-defined]
    assert covered_losses(e, back, "kobold-save") == []  # the reshape classes it expected


@pytest.mark.parametrize("rel", SAMPLES)
def test_to_world_info_and_back(rel: str) -> None:
    d = read(sample(rel), Path(rel).name)
    world = write(d.primary, "sillytavern-lorebook")
    st = read(world.data, "harbor.json")
    assert st.primary.source.format == "sillytavern-lorebook"  # type: ignore[union-attr]
    assert covered_losses(d.primary, st.primary, "sillytavern-lorebook") == []
    back = read(write(st.primary, "kobold-save").data, "again.json")
    assert covered_losses(st.primary, back.primary, "kobold-save") == []
    ours = [(x.content, x.constant, x.enabled, x.triggers or []) for x in d.primary.body.entries]  # type: ignore[attr-defined]
    again = [(x.content, x.constant, x.enabled, x.triggers or []) for x in back.primary.body.entries]  # type: ignore[attr-defined]
    assert again == ours


def _lorebooks_of_other_formats() -> list[tuple[str, int]]:
    from tests.formats.helpers import SAMPLES as ROOT

    out = []
    for f in sorted(ROOT.rglob("*")):
        if not f.is_file() or f.parent.name == "kobold":
            continue
        rel = f.relative_to(ROOT).as_posix()
        try:
            d = read(f.read_bytes(), f.name)
        except Exception:
            continue
        out += [(rel, i) for i, e in enumerate(d.entities) if e.kind == "lorebook"]
    return out


@pytest.mark.parametrize("rel,i", _lorebooks_of_other_formats())
def test_every_sample_lorebook_to_a_save_loses_only_what_koboldai_cannot_hold(rel: str, i: int) -> None:
    """Each lorebook the samples hold (cards' books, modules, worlds, books with folders) written
    as a save and read back: every difference is one the coverage predicts (Lite groups are names,
    keys are trimmed, notes come first...)."""
    d = read(sample(rel), Path(rel).name)
    e = d.entities[i]
    back = read(write(e, "kobold-save").data, "book.json").primary
    assert covered_losses(e, back, "kobold-save") == []


def test_world_info_to_a_save_reports_only_expected_losses() -> None:
    d = read(sample(ST_WORLD), "world-harbor-town.json")
    p = plan(Path(ST_WORLD), sample(ST_WORLD), Options(to="kobold-save", output="/nonexistent/out.json"))
    (row,) = losses(p)
    assert row.status == "expected"
    assert [x.path for x in row.lost + row.changed if x.cls == "unexpected"] == []
    expected = {x.path for x in row.lost + row.changed if x.cls == "expected"}
    assert {"entries[].position", "entries[].sortOrder"} <= expected  # KoboldAI has neither
    assert not expected & {"entries[].content", "entries[].title", "entries[].triggers[].text"}
    assert d.primary.source.format == "sillytavern-lorebook"  # type: ignore[union-attr]


def test_a_tavern_cards_book_to_a_save_and_a_save_into_a_card() -> None:
    """The Tavern card carries a lorebook as its ``character_book``: the card's book converts to a
    save (``--kind lorebook``), and a save's book embedded in a card reads back from the card with
    only the losses the card book's coverage predicts."""
    p = plan(Path(ST_CARD), sample(ST_CARD), Options(to="kobold-save", kind="lorebook", output="/x/out.json"))
    (row,) = losses(p)
    assert [x.path for x in row.lost + row.changed if x.cls == "unexpected"] == []
    assert any(x.path == "entries[].position" for x in row.changed)  # expected: no place in KoboldAI

    card = read(sample(ST_CARD), "card.json")
    save = read(sample(LITE), "harbor-watch.lite.json").primary
    others = [x for x in card.entities[1:] if x.kind != "lorebook"]
    refs = [save.id, *(x.id for x in others)]
    char = dataclasses.replace(card.primary, links={"knowledgeRefs": refs})
    pool = [char, save, *others]
    out = write(char, "sillytavern", linked=pool)
    assert out.beside == [] or all(x.entity.kind != "lorebook" for x in out.beside)  # the book is inside
    row = export_row(char, pool, out, name="card.json", input="card.json", source="sillytavern")
    assert row.error is None
    unexpected = [x.path for x in row.lost + row.changed if x.cls == "unexpected"]
    assert unexpected == []
    back = read(out.data, "card.json")
    book = next(x for x in back.entities if x.kind == "lorebook").body
    assert [x.content for x in book.entries] == [x.content for x in save.body.entries]  # type: ignore[attr-defined]


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "change,path",
    [
        (lambda t: t.update(worldinfo="none"), "$.worldinfo"),
        (lambda t: t["worldinfo"][0].update(key=["harbor"]), "$.worldinfo[0].key"),
        (lambda t: t["worldinfo"][2].update(probability=True), "$.worldinfo[2].probability"),
        (lambda t: t["worldinfo"][2].update(probability="often"), "$.worldinfo[2].probability"),
        (lambda t: t["worldinfo"][1].update(selective="maybe"), "$.worldinfo[1].selective"),
        (lambda t: t["worldinfo"][0].update(folder={"uid": 1}), "$.worldinfo[0].folder"),
        (lambda t: t["worldinfo"].append(7), "$.worldinfo[5]"),
        (lambda t: t.update(wifolders_d=[1]), "$.wifolders_d"),
        (lambda t: t.update(wifolders_l={"a": 1}), "$.wifolders_l"),
        (lambda t: t.update(memory={"text": "m"}), "$.memory"),
    ],
)
def test_wrong_shapes_are_malformed_with_the_path(change: Any, path: str) -> None:
    tree = _plain(LITE_SAVE)
    change(tree)
    with pytest.raises(Malformed) as ei:
        read(json.dumps(tree).encode(), "bad.json")
    assert ei.value.path == path


def test_a_number_where_text_belongs_is_read_and_noted() -> None:
    tree = _plain(LITE_SAVE)
    tree["worldinfo"][0]["comment"] = 42
    e = read(json.dumps(tree).encode(), "odd.json").primary
    assert e.body.entries[2].title == "42"  # type: ignore[attr-defined]
    assert any("$.worldinfo[0].comment" in w for w in e.warnings)
    assert json.loads(write(e, "kobold-save").data)["worldinfo"][0]["comment"] == 42  # the twin's value


def test_forced_on_something_else_it_says_what_is_missing() -> None:
    with pytest.raises(Malformed, match="gamestarted") as ei:
        CODEC.decode(Sniff(b'{"prompt": "x"}', "x.json"))
    assert ei.value.path == "$.gamestarted"


# -- corpus ------------------------------------------------------------------------------------


@pytest.mark.parametrize("rel,fmt", expect_rows("kobold"))
def test_corpus_saves_detect_and_round_trip_byte_for_byte(corpus: Path, rel: str, fmt: str) -> None:
    data = (corpus / rel).read_bytes()
    d = read(data, Path(rel).name)
    assert d.primary.source.format == fmt  # type: ignore[union-attr]
    assert write(d.primary, fmt).data == data


def test_corpus_client_saves_map_their_world_info(corpus: Path) -> None:
    data = (corpus / "kobold/javaman-aid-converter/half_life_2_start_20210621.json").read_bytes()
    tree = json.loads(data)
    b = read(data, "half_life_2_start_20210621.json").primary.body
    assert isinstance(b, LorebookBody)
    assert [x.id for x in b.entries[:1]] == ["authors-note"]  # memory is "": no memory entry
    wi = b.entries[1:]
    assert len(wi) == len(tree["worldinfo"]) == 25
    assert [x.content for x in wi] == [x["content"] for x in tree["worldinfo"]]
    assert [t.text for t in wi[0].triggers or []] == [
        k.strip() for k in tree["worldinfo"][0]["key"].split(",")
    ]


def test_corpus_ai_dungeon_world_info_is_rejected(corpus: Path) -> None:
    with pytest.raises(NotRecognized):
        read((corpus / "aidungeon/9-npcs.json").read_bytes(), "9-npcs.json")
