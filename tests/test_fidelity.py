"""Fidelity checks 1 (native round trip) and 2 (canonical stability), and the row they produce."""

from __future__ import annotations

import base64
from typing import Any

import orjson

from bunzai_codecs import read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.archive import write_zip
from bunzai_codecs.core.codec import Codec, EmitContext
from bunzai_codecs.core.entity import CanonicalEntity, Decoded, canonical_id
from bunzai_codecs.core.errors import Unsupported
from bunzai_codecs.core.png import build, make_text_chunk, read_chunks
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import CharacterBody, LorebookBody
from bunzai_codecs.fidelity import MAX_PATHS, FidelityRow, check_decoded, compare_native, linked_target
from tests.hostile.generate import tiny_png


def paths(changes: list[Any]) -> list[tuple[str, str]]:
    return [(c.path, c.kind) for c in changes]


def test_json_compares_as_trees() -> None:
    assert compare_native(b'{"a": 1, "b": [1, 2]}', b'{"b":[1,2],"a":1.0}') == []
    assert paths(compare_native(b'{"a": 1, "b": [1, 2]}', b'{"a": 2, "b": [1], "c": 0}')) == [
        ("$.a", "changed"),
        ("$.b[1]", "removed"),
        ("$.c", "added"),
    ]
    assert paths(compare_native(b'{"x":1}\n{"y":1}\n', b'{"x":1}\n{"y":2}\n')) == [("$[1].y", "changed")]
    assert paths(compare_native(b"\x00\x01", b"\x00\x02")) == [("$", "changed")]


def _png(payload: dict[str, Any], image: bytes = b"\x00\xff\x00\x00") -> bytes:
    chunks = read_chunks(tiny_png())
    text = make_text_chunk("chara", base64.b64encode(orjson.dumps(payload)))
    out = [chunks[0], text, *chunks[1:]]
    if image != b"\x00\xff\x00\x00":
        out = [c if c.type != b"IDAT" else type(c)(b"IDAT", image) for c in out]
    return build(out)


def test_png_compares_text_payloads_and_the_other_chunks() -> None:
    a = _png({"data": {"name": "A", "tags": ["x"]}})
    assert compare_native(a, _png({"data": {"tags": ["x"], "name": "A"}})) == []
    assert paths(compare_native(a, _png({"data": {"name": "B", "tags": ["x"]}}))) == [
        ("png[chara].data.name", "changed")
    ]
    assert paths(compare_native(a, _png({"data": {"name": "A", "tags": ["x"]}}, image=b"\x00"))) == [
        ("png.chunks", "changed")
    ]
    assert paths(compare_native(a, tiny_png())) == [("png[chara]", "removed")]


def test_zip_compares_members() -> None:
    a = write_zip([("card.json", b'{"name": "A"}'), ("assets/i.png", b"img")])
    assert compare_native(a, write_zip([("card.json", b'{ "name":"A" }'), ("assets/i.png", b"img")])) == []
    b = write_zip(
        [("card.json", b'{"name": "B"}'), ("assets/i.png", b"IMG"), ("extra.txt", b"")],
        prefix=b"\xff\xd8\xff",
    )
    assert paths(compare_native(a, b)) == [
        ("zip.prefix", "changed"),
        ("zip[assets/i.png]", "changed"),
        ("zip[card.json].name", "changed"),
        ("zip[extra.txt]", "added"),
    ]


def _bundle() -> tuple[bytes, Decoded]:
    d = "cd" * 32
    book = CanonicalEntity(
        kind="lorebook",
        id=canonical_id("lorebook", d, "book"),
        body=LorebookBody.model_validate({"entries": [{"id": "0", "content": "x", "constant": True}]}),
    )
    card = CanonicalEntity(
        kind="character",
        id=canonical_id("character", d),
        body=CharacterBody.model_validate({"identity": {"name": "A"}}),
        links={"knowledgeRefs": [book.id]},
    )
    data = write(card, "vaud-json", linked=[book]).data
    return data, read(data, "a.vaud.json", uri="mem://a.vaud.json")


def test_check_decoded_gives_a_native_row_and_a_canonical_row_per_entity() -> None:
    data, decoded = _bundle()
    rows = check_decoded(Sniff(data, "a.vaud.json", uri="mem://a.vaud.json"), decoded, "vaud-json")
    assert [(r.check, r.kind, r.status) for r in rows] == [
        ("native", "character", "lossless"),
        ("canonical", "character", "lossless"),
        ("canonical", "lorebook", "lossless"),
    ]
    native = rows[0]
    assert native.added == ("$[0].source", "$[1].source")  # read stamps a source; not a loss
    assert all(r.uri == "mem://a.vaud.json" and r.source == r.target == "vaud-json" for r in rows)


def test_a_failing_encoder_gives_failed_rows_not_an_exception() -> None:
    class DecodeOnly(Codec):
        id = "decode-only"
        kind = "character"
        family = "test"

        def detect(self, s: Sniff) -> float:
            return 1.0 if s.json_object and "decode_only" in s.json_object else 0.0

        def decode(self, s: Sniff) -> Decoded:
            return Decoded([self.entity(s, {"identity": {"name": "D"}}, raw=s.json)])

        def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
            raise Unsupported("this format is read-only")

    with registry.using({**registry.CODECS, "decode-only": DecodeOnly}):
        data = b'{"decode_only": true}'
        decoded = read(data, "x.json")
        rows = check_decoded(Sniff(data, "x.json"), decoded, "decode-only")
        assert [(r.check, r.status, r.error) for r in rows] == [
            ("native", "failed", "Unsupported: this format is read-only")
        ]
        # a linked entity of an app without a codec for its kind is written as vaud-json
        assert linked_target(_bundle()[1].entities[1], DecodeOnly()).id == "vaud-json"


def test_rows_round_trip_as_json_and_cap_their_paths() -> None:
    _, decoded = _bundle()
    big = {"k": list(range(MAX_PATHS + 10))}
    from bunzai_codecs.core.diff import diff
    from bunzai_codecs.fidelity import _row

    row = _row(decoded.primary, "u", "native", "f", "f", diff(big, {"k": []}))
    assert row.status == "lossy" and len(row.lost) == MAX_PATHS and row.truncated == 10
    assert FidelityRow.from_json(orjson.loads(orjson.dumps(row.to_json()))) == row
    assert list(row.to_json()) == [
        "entity",
        "kind",
        "uri",
        "check",
        "source",
        "target",
        "status",
        "lost",
        "added",
        "changed",
        "truncated",
        "error",
    ]
