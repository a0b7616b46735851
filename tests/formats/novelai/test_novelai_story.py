"""novelai-story: a NovelAI ``.story`` read as a lorebook; read-only (written back only over its twin).

The sample is written by ``tests/formats/make_samples.py``; expectations are spelled out from its
constants. The corpus ``.story`` (EXPECT.tsv still lists it as ``ANY``) must detect as
``novelai-story`` here.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from bunzai_codecs import Malformed, Unsupported, read, write
from bunzai_codecs.cli import main
from bunzai_codecs.core import registry
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import LorebookBody
from tests.formats.helpers import covered_losses, edited, sample
from tests.formats.make_samples import NAI_STORY, STORY_DOCUMENT, compact

CODEC = registry.get("novelai-story")
STORY = "novelai/lantern-road.story"
CORPUS_STORY = "novelai/story/novelai_tamriel_the_reign_of_katariah_create_character_20210622.story"


def _story() -> Any:
    return copy.deepcopy(NAI_STORY)


def _body(data: bytes) -> LorebookBody:
    body = read(data, "x.story").primary.body
    assert isinstance(body, LorebookBody)
    return body


# -- detection ---------------------------------------------------------------------------------


def test_detection() -> None:
    assert CODEC.detect(Sniff(sample(STORY), "lantern-road.story")) == 1.0
    assert CODEC.detect(Sniff(sample(STORY), "renamed.json")) == 1.0
    assert registry.detect(Sniff(sample(STORY), "x.story")).id == "novelai-story"  # type: ignore[union-attr]
    # nothing else claims a story, and a story claims no other NovelAI file
    for rel in ("novelai/hollin.lorebook", "novelai/night-in-hollin.scenario", "novelai/harbor-fog.preset"):
        assert CODEC.detect(Sniff(sample(rel), rel)) == 0.0


@pytest.mark.parametrize(
    "tree",
    [
        {"storyContainerVersion": "1", "content": {}},
        {"storyContainerVersion": True, "content": {}},
        {"storyContainerVersion": 1, "metadata": {}},
        {"storyContainerVersion": 1, "content": "text"},
        {"scenarioVersion": 3, "lorebook": {"lorebookVersion": 5, "entries": []}},
    ],
)
def test_what_it_must_not_claim(tree: object) -> None:
    assert CODEC.detect(Sniff(json.dumps(tree).encode(), "x.story")) == 0.0


# -- decode ------------------------------------------------------------------------------------


def test_the_story_reads_as_a_lorebook() -> None:
    b = _body(sample(STORY))
    meta, content = NAI_STORY["metadata"], NAI_STORY["content"]
    assert (b.name, b.description, b.tags) == (meta["title"], meta["description"], meta["tags"])  # type: ignore[index]
    memory, note, keepers, fog, storm = b.entries
    assert (memory.id, memory.content, memory.constant) == ("memory", content["context"][0]["text"], True)  # type: ignore[index]
    assert (note.id, note.content, note.position, note.depth) == (
        "authors-note",
        content["context"][1]["text"],  # type: ignore[index]
        "depth",
        3,
    )
    book = content["lorebook"]  # type: ignore[index]
    assert (keepers.id, keepers.title, keepers.sortOrder) == (
        book["entries"][0]["id"],
        "Lantern keepers",
        400,
    )
    assert [t.text for t in keepers.triggers or []] == ["lantern", "keeper", "milestone"]
    assert keepers.categoryId == book["categories"][0]["id"]
    assert [(t.text, t.isRegex, t.flags) for t in fog.triggers or []] == [("\\bfog(gy)?\\b", True, "i")]
    assert (storm.id, storm.title, storm.content, storm.constant) == (
        "ephemeral-0",
        "Ephemeral 1",
        "A storm gathers over the hills.",
        True,
    )
    assert [(c.name, c.enabled) for c in b.categories] == [("The road", True)]


def test_the_story_text_is_never_a_field_and_is_kept() -> None:
    e = read(sample(STORY), "lantern-road.story").primary
    dumped = json.dumps(e.body.dump())
    assert STORY_DOCUMENT not in dumped and "lantern road ran north" not in dumped
    assert e.original["novelai-story"].raw["content"]["document"] == STORY_DOCUMENT


def test_corpus_story_text_rides_the_twin(corpus: Path) -> None:
    data = (corpus / CORPUS_STORY).read_bytes()
    e = read(data, "katariah.story").primary
    assert e.source.format == "novelai-story"  # type: ignore[union-attr]
    text = json.loads(data)["content"]["story"]["text"]
    assert text[:60] not in json.dumps(e.body.dump())
    assert json.loads(write(e, "novelai-story").data)["content"]["story"]["text"] == text


def test_corpus_story_detects_as_novelai_story_and_round_trips_byte_for_byte(corpus: Path) -> None:
    """EXPECT.tsv lists this file as ANY (written before this format existed): it is ours now."""
    data = (corpus / CORPUS_STORY).read_bytes()
    s = Sniff(data, Path(CORPUS_STORY).name)
    assert registry.detect(s).id == "novelai-story"  # type: ignore[union-attr]
    d = read(data, Path(CORPUS_STORY).name)
    assert write(d.primary, "novelai-story").data == data  # its four-space layout too
    tree = json.loads(data)
    b = d.primary.body
    assert isinstance(b, LorebookBody)
    assert b.name == tree["metadata"]["title"]
    # a version 1 book: entries without ids read as their index, after the story's one context entry
    lore = tree["content"]["lorebook"]["entries"]
    assert [x.id for x in b.entries[:3]] == ["memory", "0", "1"]
    assert [x.content for x in b.entries[1:]] == [x["text"] for x in lore]


# -- round trips -------------------------------------------------------------------------------


def test_an_unedited_story_comes_back_byte_for_byte() -> None:
    d = read(sample(STORY), "lantern-road.story")
    assert write(d.primary, "novelai-story").data == sample(STORY)


def test_edits_go_to_their_own_keys() -> None:
    d = read(sample(STORY), "lantern-road.story")

    def change(b: dict[str, Any]) -> None:
        b["name"] = "The Lantern Road (revised)"
        b["entries"][0]["content"] = "The traveller is Ada."
        b["entries"][2]["content"] = "Keepers live in milestones."
        b["entries"][4]["content"] = "The storm breaks."

    out = write(edited(d.primary, change), "novelai-story").data
    want = _story()
    want["metadata"]["title"] = "The Lantern Road (revised)"
    want["content"]["context"][0]["text"] = "The traveller is Ada."
    want["content"]["lorebook"]["entries"][0]["text"] = "Keepers live in milestones."
    want["content"]["ephemeralContext"][0]["text"] = "The storm breaks."
    assert out == compact(want)  # NovelAI's layout; the document and every setting untouched


def test_deleting_the_authors_note_and_the_ephemeral_entry() -> None:
    d = read(sample(STORY), "lantern-road.story")
    e = edited(d.primary, lambda b: (b["entries"].pop(4), b["entries"].pop(1)))
    out = json.loads(write(e, "novelai-story").data)
    want = _story()
    want["content"]["context"][1]["text"] = ""  # NovelAI's slot stays, empty
    want["content"]["ephemeralContext"] = []
    assert out == json.loads(json.dumps(want))


def test_an_added_entry_joins_the_lorebook_in_novelais_shape() -> None:
    d = read(sample(STORY), "lantern-road.story")
    e = edited(
        d.primary,
        lambda b: b["entries"].insert(
            4, {"id": "²", "title": "Toll", "content": "One copper.", "triggers": [{"text": "toll"}]}
        ),
    )
    out = json.loads(write(e, "novelai-story").data)
    book = out["content"]["lorebook"]
    assert book["entries"][:2] == NAI_STORY["content"]["lorebook"]["entries"]  # type: ignore[index]
    new = book["entries"][2]
    assert (new["text"], new["displayName"], new["keys"], new["searchRange"]) == (
        "One copper.",
        "Toll",
        ["toll"],
        1000,
    )
    again = _body(json.dumps(out).encode())
    assert [x.content for x in again.entries] == [x.content for x in e.body.entries]  # type: ignore[attr-defined]


def test_an_authors_note_without_its_slot_is_refused_not_dropped() -> None:
    tree = _story()
    tree["content"]["context"] = tree["content"]["context"][:1]
    d = read(json.dumps(tree).encode(), "one-slot.story")
    assert [x.id for x in d.primary.body.entries][:2] == ["memory", "6c1e2f30-4a5b-4c6d-8e7f-901a2b3c4d01"]  # type: ignore[attr-defined]
    e = edited(
        d.primary, lambda b: b["entries"].insert(1, {"id": "authors-note", "content": "x", "constant": True})
    )
    with pytest.raises(Unsupported, match="authors-note"):
        write(e, "novelai-story")


# -- read-only ---------------------------------------------------------------------------------


def test_a_lorebook_from_anywhere_else_is_refused() -> None:
    d = read(sample("sillytavern/world-harbor-town.json"), "world-harbor-town.json")
    with pytest.raises(Unsupported, match=r"read-only.*novelai-lorebook"):
        write(d.primary, "novelai-story")
    assert registry.get("novelai-story").read_only
    assert registry.family_codec("novelai", "lorebook").id == "novelai-lorebook"  # type: ignore[union-attr]


def test_convert_to_a_read_only_format_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "hollin.lorebook"
    src.write_bytes(sample("novelai/hollin.lorebook"))
    out = tmp_path / "out.story"
    assert main(["convert", str(src), "--to", "novelai-story", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "novelai-story is read-only" in err and "novelai-lorebook" in err
    assert not out.exists()
    story = tmp_path / "lantern-road.story"
    story.write_bytes(sample(STORY))
    assert main(["convert", str(story), "--to", "novelai-story", "-o", str(out), "-q"]) == 0
    assert out.read_bytes() == sample(STORY)


def test_formats_says_read_only(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["formats"]) == 0
    head, *lines = capsys.readouterr().out.splitlines()
    at, end = head.index("WRITES"), head.index("APP")
    writes = {line.split()[0]: line[at:end].strip() for line in lines if line.strip()}
    assert writes["novelai-story"] == "read-only"
    assert writes["novelai-lorebook"] == writes["kobold-save"] == "yes"
    assert {w for f, w in writes.items() if f != "novelai-story"} == {"yes"}


# -- other formats -----------------------------------------------------------------------------


def test_to_world_info_keeps_what_sillytavern_holds() -> None:
    d = read(sample(STORY), "lantern-road.story")
    st = read(write(d.primary, "sillytavern-lorebook").data, "The Lantern Road.json")
    assert st.primary.source.format == "sillytavern-lorebook"  # type: ignore[union-attr]
    assert covered_losses(d.primary, st.primary, "sillytavern-lorebook") == []
    assert [x.content for x in st.primary.body.entries] == [x.content for x in d.primary.body.entries]  # type: ignore[attr-defined]


WRITERS = sorted(c.id for c in registry.for_kind("lorebook") if not c.read_only and not c.lossless)


def _only_expected(name: str, data: bytes, fmt: str) -> None:
    e = read(data, name).primary
    out = write(e, fmt)
    back = read(out.data, f"book{out.extension}").primary
    assert covered_losses(e, back, fmt) == [], (name, fmt)


@pytest.mark.parametrize("fmt", WRITERS)
def test_to_every_lorebook_format_only_expected_losses(fmt: str) -> None:
    """The story to every lorebook format bunzai writes: every difference is one the target's
    coverage predicts."""
    _only_expected("lantern-road.story", sample(STORY), fmt)


@pytest.mark.parametrize("fmt", WRITERS)
def test_corpus_story_to_every_lorebook_format_only_expected_losses(fmt: str, corpus: Path) -> None:
    """The corpus story (a version 1 book, AI Dungeon keys with spaces around them, which RisuAI
    and KoboldAI trim) the same way."""
    _only_expected("katariah.story", (corpus / CORPUS_STORY).read_bytes(), fmt)


def test_to_a_kobold_save_the_notes_stay_notes() -> None:
    d = read(sample(STORY), "lantern-road.story")
    save = json.loads(write(d.primary, "kobold-save").data)
    context = NAI_STORY["content"]["context"]  # type: ignore[index]
    assert (save["memory"], save["authorsnote"]) == (context[0]["text"], context[1]["text"])
    assert [x["content"] for x in save["worldinfo"]] == [
        "Each lantern on the road is tended by a keeper who lives in the milestone beside it.",
        "Fog on the road means the keepers are asleep.",
        "A storm gathers over the hills.",
    ]
    back = read(json.dumps(save).encode(), "The Lantern Road.json")
    assert covered_losses(d.primary, back.primary, "kobold-save") == []


def test_the_tavern_card_book_cannot_become_a_story(tmp_path: Path) -> None:
    card = tmp_path / "card.json"
    card.write_bytes(sample("sillytavern/lighthouse-keeper.v2.json"))
    assert (
        main(
            [
                "convert",
                str(card),
                "--kind",
                "lorebook",
                "--to",
                "novelai-story",
                "-o",
                str(tmp_path / "x.story"),
            ]
        )
        == 2
    )


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "change,path",
    [
        (lambda t: t["content"].update(lorebook=[]), "$.content.lorebook"),
        (lambda t: t["content"].update(lorebook={"entries": []}), "$.content.lorebook"),
        (
            lambda t: t["content"]["lorebook"]["entries"][0].update(keys="lantern"),
            "$.content.lorebook.entries[0].keys",
        ),
        (lambda t: t["content"].update(context="memory"), "$.content.context"),
        (lambda t: t["content"]["context"].append(3), "$.content.context[2]"),
        (
            lambda t: t["content"]["ephemeralContext"][0].update(text=["a"]),
            "$.content.ephemeralContext[0].text",
        ),
        (lambda t: t.update(metadata=[]), "$.metadata"),
        (lambda t: t["metadata"].update(tags="sample"), "$.metadata.tags"),
        (lambda t: t["metadata"].update(title={"t": 1}), "$.metadata.title"),
    ],
)
def test_wrong_shapes_are_malformed_with_the_path(change: Any, path: str) -> None:
    tree = _story()
    change(tree)
    with pytest.raises(Malformed) as ei:
        read(json.dumps(tree).encode(), "bad.story")
    assert ei.value.path == path


def test_a_huge_document_is_carried_not_decoded() -> None:
    tree = _story()
    tree["content"]["document"] = "A" * (8 * 1024 * 1024)  # never base64-decoded nor unpacked
    data = compact(tree)
    e = read(data, "big.story").primary
    assert write(e, "novelai-story").data == data
