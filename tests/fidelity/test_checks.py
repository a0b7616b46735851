"""The three fidelity checks on hand-made entities whose losses are known in advance (tests/fidelity/toys.py)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from bunzai_codecs import read
from bunzai_codecs.core import png, registry
from bunzai_codecs.core.archive import write_zip
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.entities import LorebookBody
from bunzai_codecs.fidelity import (
    ROW_SCHEMA,
    FidelityRow,
    PathLoss,
    canonical_stability,
    check_file,
    compare_native,
    cross_format,
    native_round_trip,
)

from . import toys

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def toy_registry() -> Iterator[None]:
    with registry.using(toys.TOYS):
        yield


def _by(
    rows: list[FidelityRow], check: str, target: str | None = None, kind: str | None = None
) -> list[FidelityRow]:
    return [
        r
        for r in rows
        if r.check == check and (target is None or r.target == target) and (kind is None or r.kind == kind)
    ]


def _paths(losses: list[PathLoss]) -> dict[str, tuple[str, int]]:
    return {x.path: (x.cls, x.count) for x in losses}


# -- check 1: native round trip --------------------------------------------------------------------


def test_native_round_trip_through_the_twin_is_lossless() -> None:
    data = toys.book(extra_number="0.5")
    decoded = read(data, "b.toylore.json")
    row = native_round_trip(data, decoded, input="b", source="toy-lore")
    assert row.status == "lossless" and not row.lost and not row.changed and not row.added
    assert row.check == "native" and row.source == row.target == "toy-lore"


def test_native_round_trip_names_every_key_a_leaky_codec_drops() -> None:
    t = orjson.loads(toys.book())
    t["toy"] = "toy-leaky"
    data = orjson.dumps(t)
    row = native_round_trip(data, read(data, "b.json"), input="b", source="toy-leaky")
    assert row.status == "unexpected"
    # the unknown object is reported where it was, keys kept (native paths are not canonical paths)
    assert _paths(row.lost) == {"x-unknown": ("unexpected", 1)} or _paths(row.lost) == {
        "['x-unknown']": ("unexpected", 1)
    }
    assert row.lost[0].at in ("x-unknown", "['x-unknown']")


def test_native_error_is_a_row_not_an_exception() -> None:
    t = orjson.loads(toys.book())
    t["toy"] = "toy-crash"
    data = orjson.dumps(t)
    row = native_round_trip(data, read(data, "b.json"), input="b", source="toy-crash")
    assert row.status == "error" and row.error is not None
    assert row.error.type == "KeyError" and row.error.internal


# -- check 2: canonical stability --------------------------------------------------------------


def test_stability_holds_for_a_faithful_codec_and_its_linked_book() -> None:
    decoded = read(toys.card(), "c.json")
    rows = canonical_stability(decoded, input="c", source="toy-card")
    assert [(r.kind, r.status) for r in rows] == [("character", "lossless"), ("lorebook", "lossless")]
    assert rows[1].entity == decoded.entities[1].id and rows[1].name == "Lanternfall"


def test_stability_catches_a_body_that_drifts_through_its_own_format() -> None:
    t = orjson.loads(toys.book())
    t["toy"] = "toy-unstable"
    data = orjson.dumps(t)
    decoded = read(data, "b.json")
    assert decoded.primary.body.name == "Lanternfall*"  # type: ignore[attr-defined]
    (row,) = canonical_stability(decoded, input="b", source="toy-unstable")
    assert row.status == "unexpected"
    assert row.changed == [PathLoss("name", "unexpected", 1, "name")]
    assert not row.lost and not row.added
    native = native_round_trip(data, decoded, input="b", source="toy-unstable")
    assert _paths(native.changed) == {"title": ("unexpected", 1)}


def test_a_format_that_names_entities_after_files_is_read_back_under_the_input_name() -> None:
    t = orjson.loads(toys.book())
    t["toy"] = "toy-named"
    del t["title"]
    data = orjson.dumps(t)
    decoded = read(data, "Harbor Town.json")
    assert decoded.primary.body.name == "Harbor Town"  # type: ignore[attr-defined]
    rows = canonical_stability(
        decoded, input="x/Harbor Town.json", source="toy-named", name="Harbor Town.json"
    )
    assert [r.status for r in rows] == ["lossless"]


# -- check 3: cross-format ---------------------------------------------------------------------------


def _book_entity() -> tuple[CanonicalEntity, list[CanonicalEntity]]:
    decoded = read(toys.book(), "b.toylore.json")
    return decoded.primary, decoded.entities


def test_cross_format_to_a_narrow_target_classes_every_loss_as_expected() -> None:
    e, pool = _book_entity()
    row = cross_format(e, registry.get("toy-narrow"), pool=pool, input="b", source="toy-lore")
    assert row.status == "expected" and row.target == "toy-narrow"
    lost = _paths(row.lost)
    # description, titles (2), one comment, one enabled=True kept by default, one probability 50
    assert lost["description"] == ("expected", 1)
    assert lost["entries[].comment"] == ("expected", 1)
    assert lost["entries[].title"] == ("expected", 2)
    changed = _paths(row.changed)
    # probability 50 comes back as the default 100; ids come back as list positions
    assert changed == {"entries[].probability": ("expected", 1), "entries[].id": ("expected", 2)}
    assert row.changed[1].at == "entries[1].probability"
    assert all(x.cls == "expected" for x in row.lost + row.changed)
    # what the target carries came through
    assert "entries[].content" not in lost and "entries[].triggers[].text" not in lost and "name" not in lost


def test_cross_exports_are_named_after_the_entity_as_apps_name_them() -> None:
    e, pool = _book_entity()
    row = cross_format(e, registry.get("toy-named"), pool=pool, input="b", source="toy-lore", name="b.json")
    assert "name" not in _paths(row.changed)  # read back from "Lanternfall.json"


def test_cross_format_flags_a_path_the_target_claims_but_drops_as_unexpected() -> None:
    e, pool = _book_entity()
    row = cross_format(e, registry.get("toy-buggy"), pool=pool, input="b", source="toy-lore")
    assert row.status == "unexpected"
    lost = _paths(row.lost)
    assert lost["entries[].comment"] == ("unexpected", 1)
    assert lost["description"] == ("unexpected", 1)
    assert lost["entries[].title"] == ("expected", 2)


def test_cross_format_to_a_faithful_target_is_lossless() -> None:
    t = orjson.loads(toys.book())
    t["toy"] = "toy-unstable"  # any other format whose entries the full toy-lore shape holds
    decoded = read(toys.book(), "b.json")
    row = cross_format(
        decoded.primary, registry.get("toy-lore"), pool=decoded.entities, input="b", source="x"
    )
    assert row.status == "lossless", row


def test_cross_format_errors_are_classed_internal_or_refused() -> None:
    e, pool = _book_entity()
    crash = cross_format(e, registry.get("toy-crash"), pool=pool, input="b", source="toy-lore")
    refuse = cross_format(e, registry.get("toy-refuse"), pool=pool, input="b", source="toy-lore")
    assert crash.status == refuse.status == "error"
    assert crash.error is not None and crash.error.internal and crash.error.type == "KeyError"
    assert refuse.error is not None and not refuse.error.internal and refuse.error.type == "Unsupported"
    assert "writes nothing" in refuse.error.message


def test_cross_format_follows_a_linked_book_written_beside_the_card() -> None:
    decoded = read(toys.card(), "c.json")
    row = cross_format(
        decoded.primary, registry.get("toy-lite"), pool=decoded.entities, input="c", source="toy-card"
    )
    # the lite card has no description; the book went beside it as vaud-json and came back whole
    assert _paths(row.lost) == {"identity.description": ("expected", 1)}
    assert row.status == "expected" and not row.changed


def test_cross_format_classes_an_embedded_books_losses_by_its_apps_lorebook_coverage() -> None:
    decoded = read(toys.card(), "c.json")
    row = cross_format(
        decoded.primary, registry.get("toy-dropbook"), pool=decoded.entities, input="c", source="toy-card"
    )
    lost = _paths(row.lost)
    # linked paths are grouped like any other: lorebook[] + the book's canonical path
    assert lost == {
        "lorebook[].entries[].comment": ("expected", 1),
        "lorebook[].entries[].title": ("expected", 2),
    }
    assert row.lost[0].at == "lorebook[0].entries[0].comment"
    assert _paths(row.changed) == {
        "lorebook[].entries[].id": ("expected", 2),
        "lorebook[].entries[].probability": ("expected", 1),
    }
    assert row.status == "expected"


def test_cross_format_classes_an_embedded_books_losses_by_the_carriers_embedded_coverage() -> None:
    # a Tavern card's character_book is not its app's lorebook file: the card says what it holds
    table = {
        **toys.TOYS,
        "toy-ownbook": toys.ToyCardOwnBook,
        "toy-ownbook-undeclared": toys.ToyCardOwnBookUndeclared,
    }
    with registry.using(table):
        decoded = read(toys.card(), "c.json")
        rows = {
            t: cross_format(
                decoded.primary, registry.get(t), pool=decoded.entities, input="c", source="toy-card"
            )
            for t in ("toy-ownbook", "toy-ownbook-undeclared")
        }
    declared, undeclared = rows["toy-ownbook"], rows["toy-ownbook-undeclared"]
    assert _paths(declared.lost) == {
        "lorebook[].entries[].comment": ("expected", 1),
        "lorebook[].entries[].title": ("expected", 2),
    }
    assert _paths(declared.changed) == {
        "lorebook[].entries[].id": ("expected", 2),
        "lorebook[].entries[].probability": ("expected", 1),
    }
    assert declared.status == "expected"
    # judged by the app's lorebook codec (toy-lore), the same drops are bugs
    assert _paths(undeclared.lost) == {
        "lorebook[].entries[].comment": ("unexpected", 1),
        "lorebook[].entries[].title": ("unexpected", 2),
    }
    assert undeclared.status == "unexpected"


def test_cross_format_reports_a_linked_book_that_vanished_as_unexpected() -> None:
    decoded = read(toys.card(), "c.json")
    row = cross_format(
        decoded.primary, registry.get("toy-swallow"), pool=decoded.entities, input="c", source="toy-card"
    )
    lost = _paths(row.lost)
    assert row.status == "unexpected"
    assert lost["lorebook[].name"] == ("unexpected", 1)
    assert lost["lorebook[].entries[].content"] == ("unexpected", 2)
    assert lost["lorebook[].entries[].triggers[].text"] == ("unexpected", 3)


def test_links_the_pool_cannot_resolve_are_not_the_targets_fault() -> None:
    card = read(toys.card(), "c.json").primary
    row = cross_format(card, registry.get("toy-card"), pool=[card], input="c", source="x")
    assert row.status == "lossless"


# -- check_file: all checks on one input ---------------------------------------------------------


def test_check_file_runs_every_check_against_every_target_of_the_kind() -> None:
    rows = check_file(toys.book(), "b.toylore.json", input="samples/b.toylore.json")
    assert rows[0].check == "decode" and rows[0].status == "decoded" and rows[0].source == "toy-lore"
    assert {r.input for r in rows} == {"samples/b.toylore.json"}
    assert len({r.sha256 for r in rows}) == 1 and len(rows[0].sha256) == 64
    (native,) = _by(rows, "native")
    assert native.status == "lossless"
    assert [r.status for r in _by(rows, "stability")] == ["lossless"]
    cross = {r.target: r.status for r in _by(rows, "cross")}
    # every lorebook codec but the source and vaud-json
    assert cross == {
        "toy-narrow": "expected",
        "toy-buggy": "unexpected",
        "toy-crash": "error",
        "toy-refuse": "error",
        "toy-unstable": cross["toy-unstable"],
        "toy-leaky": "lossless",
        "toy-named": "lossless",
    }
    # decoding appends "*" to the name: changed, and toy-unstable claims the name
    assert cross["toy-unstable"] == "unexpected"


def test_check_file_checks_linked_entities_against_their_own_kind() -> None:
    rows = check_file(toys.card(), "c.json", input="c")
    book_cross = {r.target for r in _by(rows, "cross", kind="lorebook")}
    assert "toy-lore" in book_cross and "toy-narrow" in book_cross
    assert {r.source for r in rows} == {"toy-card"}  # a linked entity's source is its file's format
    card_cross = {r.target for r in _by(rows, "cross", kind="character")}
    assert card_cross == {"toy-lite", "toy-dropbook", "toy-swallow"}


def test_an_input_that_does_not_decode_gives_one_rejected_row() -> None:
    (row,) = check_file(b"\x00\x01not anything", "x.bin", input="x.bin")
    assert row.check == "decode" and row.status == "rejected" and row.entity == "" and row.kind == ""
    assert row.error is not None and row.error.type == "NotRecognized" and not row.error.internal


def test_a_vaud_file_is_checked_as_vaud_whatever_its_entities_came_from() -> None:
    data = (ROOT / "samples" / "vaud" / "aria.vaud.json").read_bytes()
    rows = check_file(data, "aria.vaud.json", input="aria")
    assert {r.source for r in rows} == {"vaud-json"}
    assert _by(rows, "native")[0].status == "lossless"


# -- the native comparison per container -----------------------------------------------------------


def _png(text: dict[str, bytes], idat: bytes = b"\x00pixels") -> bytes:
    chunks = [png.Chunk(b"IHDR", b"\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00")]
    chunks += [png.make_text_chunk(k, v) for k, v in text.items()]
    chunks += [png.Chunk(b"IDAT", idat), png.Chunk(b"IEND", b"")]
    return png.build(chunks)


def _b64(tree: object) -> bytes:
    return base64.b64encode(json.dumps(tree).encode())


def test_png_compares_text_payloads_as_trees_and_other_chunks_as_bytes() -> None:
    a = _png({"chara": _b64({"data": {"name": "Aria", "tags": ["x"]}})})
    # same tree, different base64 spacing/key order: no difference
    b = _png({"chara": base64.b64encode(b'{ "data" : {"tags":["x"], "name":"Aria"} }')})
    assert compare_native(a, b) == []
    c = _png({"chara": _b64({"data": {"name": "Ária", "tags": ["x"]}})}, idat=b"\x00other")
    got = {(ch.path, ch.kind) for ch in compare_native(a, c)}
    assert got == {("png.chara.data.name", "changed"), ("png.chunks[1]", "changed")}
    d = _png({})
    assert ("png.chara", "removed") in {(ch.path, ch.kind) for ch in compare_native(a, d)}


def test_zip_compares_json_members_as_trees_and_others_as_bytes() -> None:
    a = write_zip([("card.json", b'{"a": 1, "b": [1, 2]}'), ("assets/i.png", b"img"), ("x.txt", b"t")])
    b = write_zip([("assets/i.png", b"img"), ("card.json", b'{"b":[1,2],"a":1.0}'), ("x.txt", b"t")])
    assert compare_native(a, b) == []
    c = write_zip(
        [("card.json", b'{"a": 2, "b": [1, 2]}'), ("assets/i.png", b"IMG"), ("y.txt", b"t")],
        prefix=b"\xff\xd8\xff",
    )
    got = {(ch.path, ch.kind) for ch in compare_native(a, c)}
    assert got == {
        ("zip.prefix", "changed"),
        ("zip['card.json'].a", "changed"),
        ("zip['assets/i.png']", "changed"),
        ("zip['x.txt']", "removed"),
        ("zip['y.txt']", "added"),
    }


def test_json_and_json_lines_compare_as_trees_other_bytes_as_bytes() -> None:
    assert compare_native(b'{"a": [1, {"b": 2}]}', b'\xef\xbb\xbf{"a":[1,{"b":2.0}]}') == []
    assert [str(c) for c in compare_native(b'{"a": 1}', b'{"a": "1"}')] == ["a: 1 -> '1'"]
    assert compare_native(b'{"a":1}\n{"b":2}\n', b'{"a":1}\n{"b":3}\n')[0].path == "line[1].b"
    assert compare_native(b"\x00\x01", b"\x00\x01") == []
    assert compare_native(b"\x00\x01", b"\x00\x02")[0].path == "$"


# -- the row format ------------------------------------------------------------------------------------


def test_rows_survive_json_and_match_the_committed_schema() -> None:
    rows = check_file(toys.card(), "c.json", input="c") + check_file(b"junk", "j", input="j")
    for r in rows:
        assert FidelityRow.from_json(orjson.loads(orjson.dumps(r.to_json()))) == r
    committed = json.loads((ROOT / "docs" / "schema" / "fidelity-row.schema.json").read_text())
    assert committed == ROW_SCHEMA, "docs/schema/fidelity-row.schema.json is stale: run `make schema`"
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(ROW_SCHEMA)
    for r in rows:
        validator.validate(r.to_json())
    assert {r.status for r in rows} >= {"decoded", "rejected", "lossless", "expected", "error"}


def test_book_body_from_toy_matches_the_hand_written_expectation() -> None:
    """Guards the toys themselves: the losses above are only meaningful if decoding is right."""
    body = LorebookBody.model_validate(toys.lore_body(orjson.loads(toys.book())))
    assert body.name == "Lanternfall" and body.description == "A rainy city."
    assert [e.id for e in body.entries] == ["a", "b"]
    assert body.entries[0].comment == "opens in rain" and body.entries[1].comment is None
    assert body.entries[1].probability == 50 and body.entries[0].probability == 100
    assert [t.text for t in body.entries[1].triggers or []] == ["bridge", "river"]
