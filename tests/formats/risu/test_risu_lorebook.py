"""risu-lorebook: detection, the row map, folders (with and without U+F000), stable ids, overlay."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from bunzai_codecs import Malformed, read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import LorebookBody
from bunzai_codecs.formats.risu import lore

SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "risu"
SAMPLE = SAMPLES / "harbor_lorebook_export.json"
F = "\uf000folder:"


def _score(tree: object, name: str = "x.json") -> float:
    return registry.get("risu-lorebook").detect(Sniff(orjson.dumps(tree), name))


def _decode(data: bytes, name: str = "lorebook_export.json") -> LorebookBody:
    body = read(data, name).primary.body
    assert isinstance(body, LorebookBody)
    return body


def test_detection_scores() -> None:
    assert _score({"type": "risu", "ver": 1, "data": []}) == 1.0
    assert _score({"type": "risu", "data": [{"key": "a"}]}) == 1.0
    # not ours: an ST world book, a regex export, a module, a bare list
    assert _score({"entries": {"0": {"key": ["a"]}}}) == 0.0
    assert _score({"type": "regex", "data": []}) == 0.0
    assert _score({"type": "risu", "data": {}}) == 0.0
    assert _score([{"key": "a"}]) == 0.0


def test_sample_detects_as_risu_lorebook() -> None:
    assert registry.detect(Sniff(SAMPLE.read_bytes(), SAMPLE.name)).id == "risu-lorebook"  # type: ignore[union-attr]


def test_decode_sample_field_by_field() -> None:
    body = _decode(SAMPLE.read_bytes())
    assert body.name == ""  # the export carries no book name or settings
    assert body.globalScanDepth is None and body.tokenBudget is None
    assert [c.name for c in body.categories] == ["Harbor District", "People"]
    assert [c.sortOrder for c in body.categories] == [100, 200]
    light, master, oswin, tilde, tide, _stub = body.entries
    assert light.id == "b6f0c1d2-0001-4a00-8000-000000000001"
    assert light.title == "The Lighthouse" and light.comment is None
    assert [t.text for t in light.triggers or []] == ["lighthouse", "lantern tower"]
    assert light.sortOrder == 120 and light.priority == 100
    assert light.categoryId == F + "7d3c2a10-4b5e-4f60-8a71-0c9d2e3f4a5b"
    assert light.position == "world" and light.enabled is True
    # useRegex: the key is /pattern/flags
    (t,) = master.triggers or []
    assert (t.text, t.isRegex, t.flags) == ("harbou?r ?master", True, "i")
    assert master.id == "2"  # no source id: the row index
    # activationPercent -> probability, stamped on each primary trigger; secondkey -> secondaries
    assert oswin.probability == 40
    assert [tr.probability for tr in oswin.triggers or []] == [40]
    assert [tr.text for tr in oswin.secondaryTriggers or []] == ["storm", "rain"]
    assert oswin.selective is True
    assert tilde.caseSensitive is True and tilde.extensions == {"risu_case_sensitive": True}
    assert tide.constant is True and tide.triggers is None and tide.sortOrder == 50


def test_decorators_stay_in_content() -> None:
    body = _decode(SAMPLE.read_bytes())
    assert body.entries[0].content.startswith("@@depth 2\n@@role system\n")
    assert body.entries[0].depth == 4 and body.entries[0].role == "system"  # not parsed
    assert body.entries[3].content.startswith("@@exclude_keys Oswin\n")
    assert body.entries[3].selectiveLogic == "and_any"


def test_u_f000_folders_match_with_or_without_the_mark() -> None:
    body = _decode(SAMPLE.read_bytes())
    people = body.categories[1]
    assert people.id == "folder:9e41b7c2-1d3a-4e5f-9a6b-7c8d9e0f1a2b"  # the folder row lost its U+F000
    # the child wrote the key with U+F000, the other child without: both land in the folder
    assert body.entries[2].categoryId == people.id
    assert body.entries[3].categoryId == people.id
    harbor = body.categories[0]
    assert harbor.id.startswith("\uf000folder:")
    assert lore.folder_norm(harbor.id) == "folder:7d3c2a10-4b5e-4f60-8a71-0c9d2e3f4a5b"


def test_duplicate_ids_get_stable_suffixes() -> None:
    body = _decode(SAMPLE.read_bytes())
    ids = [e.id for e in body.entries]
    assert ids[2:4] == ["dup-1", "dup-1-2"]
    assert ids[5] == "dup-1-3"  # the child stub shares the id too
    assert _decode(SAMPLE.read_bytes()).entries[5].id == "dup-1-3"  # same on every decode


def test_same_format_round_trip_is_the_same_tree() -> None:
    data = SAMPLE.read_bytes()
    d = read(data, SAMPLE.name)
    out = write(d.primary, "risu-lorebook", linked=d.entities).data
    assert orjson.loads(out) == orjson.loads(data)


def test_canonical_stability() -> None:
    d = read(SAMPLE.read_bytes(), SAMPLE.name)
    again = read(write(d.primary, "risu-lorebook").data, "x.json").primary
    assert again.body == d.primary.body


def test_an_edit_rewrites_one_row_and_keeps_its_residue() -> None:
    d = read(SAMPLE.read_bytes(), SAMPLE.name)
    body = d.primary.body
    assert isinstance(body, LorebookBody)
    body.entries[3].content = "Tilde retired."
    rows = orjson.loads(write(d.primary, "risu-lorebook").data)["data"]
    orig = orjson.loads(SAMPLE.read_bytes())["data"]
    assert rows[5]["content"] == "Tilde retired."
    assert rows[5]["loreCache"] is None and rows[5]["id"] == "dup-1"  # unmapped residue and source id
    assert rows[:5] == orig[:5] and rows[6:] == orig[6:]


def test_deleting_an_entry_keeps_every_other_rows_residue() -> None:
    d = read(SAMPLE.read_bytes(), SAMPLE.name)
    body = d.primary.body
    assert isinstance(body, LorebookBody)
    del body.entries[2]  # Oswin
    rows = orjson.loads(write(d.primary, "risu-lorebook").data)["data"]
    orig = orjson.loads(SAMPLE.read_bytes())["data"]
    assert rows == orig[:4] + orig[5:]


def test_edited_rows_do_not_gain_writer_defaults() -> None:
    d = read(SAMPLE.read_bytes(), SAMPLE.name)
    body = d.primary.body
    assert isinstance(body, LorebookBody)
    body.entries[5].content = "stub text"  # the child stub has no bookVersion and no useRegex
    rows = orjson.loads(write(d.primary, "risu-lorebook").data)["data"]
    assert "bookVersion" not in rows[7] and "useRegex" not in rows[7]
    assert rows[7]["mode"] == "child"


def test_fresh_export_writes_risu_rows() -> None:
    body = LorebookBody.model_validate(
        {
            "categories": [{"id": "c1", "name": "Places"}],
            "entries": [
                {
                    "id": "1",
                    "title": "Dock",
                    "content": "Wet planks.",
                    "triggers": [{"text": "dock"}, {"text": "pie?r", "isRegex": True, "flags": "i"}],
                    "categoryId": "c1",
                    "probability": 30,
                    "caseSensitive": False,
                }
            ],
        }
    )
    from bunzai_codecs.core.codec import EmitContext
    from bunzai_codecs.core.entity import CanonicalEntity

    e = CanonicalEntity(kind="lorebook", id="lorebook-x", body=body)
    tree = orjson.loads(registry.get("risu-lorebook").encode(e, EmitContext()))
    assert tree["type"] == "risu" and tree["ver"] == 1
    folder, row = tree["data"]
    assert folder["mode"] == "folder" and folder["key"] == F + "c1"
    assert row["key"] == "dock, /pie?r/i" and row["useRegex"] is True
    assert row["folder"] == F + "c1" and row["activationPercent"] == 30
    assert row["extentions"] == {"risu_case_sensitive": False}
    assert "id" not in row  # the row's own index: it reads back the same without an id


def test_a_numeric_uid_that_is_not_the_row_index_is_written() -> None:
    """Regression: numeric ids (SillyTavern and Chub uids 1, 2, 3...) were taken for index ids and
    left out, so they read back as row positions 0, 1, 2: every entry's id shifted."""
    world = {
        "entries": {
            str(uid): {"uid": uid, "key": [k], "content": f"about {k}", "comment": k}
            for uid, k in ((1, "dock"), (2, "pier"), (7, "gull"))
        }
    }
    src = read(orjson.dumps(world), "harbor.json")
    assert [e.id for e in src.primary.body.entries] == ["1", "2", "7"]  # type: ignore[attr-defined]
    tree = orjson.loads(write(src.primary, "risu-lorebook").data)
    assert [r.get("id") for r in tree["data"]] == ["1", "2", "7"]
    back = read(orjson.dumps(tree), "harbor.json")
    assert [e.id for e in back.primary.body.entries] == ["1", "2", "7"]  # type: ignore[attr-defined]
    # an id that is its row's index is still left out: uid 0 first, uid 1 second
    world = {
        "entries": {
            "0": {"uid": 0, "key": ["a"], "content": "x"},
            "1": {"uid": 1, "key": ["b"], "content": "y"},
        }
    }
    tree = orjson.loads(write(read(orjson.dumps(world), "w.json").primary, "risu-lorebook").data)
    assert [r.get("id") for r in tree["data"]] == [None, None]


def test_bad_rows_are_typed_errors_with_paths() -> None:
    with pytest.raises(Malformed) as e:
        read(b'{"type":"risu","ver":1,"data":[{"key":"a"},3]}', "x.json")
    assert e.value.path == "$.data[1]"
    with pytest.raises(Malformed) as e:
        read(b'{"type":"risu","ver":1,"data":[{"key":"a","insertorder":true}]}', "x.json")
    assert e.value.path == "$.data[0].insertorder"
    with pytest.raises(Malformed) as e:
        read(b'{"type":"risu","data":[{"extentions":[1]}]}', "x.json")
    assert e.value.path == "$.data[0].extentions"


def test_corpus_lorebooks_detect_and_round_trip(corpus: Path) -> None:
    for path in sorted((corpus / "risu" / "lorebook").glob("*.json")):
        data = path.read_bytes()
        assert registry.detect(Sniff(data, path.name)).id == "risu-lorebook"  # type: ignore[union-attr]
        d = read(data, path.name)
        out = write(d.primary, "risu-lorebook", linked=d.entities).data
        assert orjson.loads(out) == orjson.loads(data), path.name
        again = read(out, path.name).primary
        assert again.body == d.primary.body


def test_corpus_folder_keys_are_u_f000(corpus: Path) -> None:
    body = _decode((corpus / "risu/lorebook/worldtest001_lorebook_export.json").read_bytes())
    assert len(body.categories) == 7
    assert all(c.id.startswith(F) for c in body.categories)
    ids = {c.id for c in body.categories}
    assert sum(1 for e in body.entries if e.categoryId in ids) == 85


def test_a_bare_character_book_scores_075_and_keeps_its_shape() -> None:
    book = {
        "name": "Harbor",
        "entries": [
            {"id": 0, "keys": ["dock"], "content": "Wet planks.", "insertion_order": 10, "enabled": True},
            {"id": 1, "keys": ["/pie?r/i"], "content": "Long pier.", "insertion_order": 20, "enabled": True},
        ],
    }
    assert _score(book) == 0.75
    assert _score({**book, "type": "other"}) == 0.0
    # NovelAI's lorebook also has an entries array: not a character_book
    assert _score({"lorebookVersion": 6, "entries": [{"keys": ["a"], "text": "b"}]}) == 0.0
    d = read(orjson.dumps(book), "book.json", format="risu-lorebook")
    body = d.primary.body
    assert isinstance(body, LorebookBody)
    assert [e.title for e in body.entries] == ["Entry 1", "Entry 2"]
    assert body.entries[1].triggers and body.entries[1].triggers[0].isRegex
    assert orjson.loads(write(d.primary, "risu-lorebook").data) == book
