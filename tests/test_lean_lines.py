"""Lean canonical lines: big bytes in a blob store by digest, the line bounded, read back exactly."""

from __future__ import annotations

import base64
from pathlib import Path

import orjson
import pytest

from bunzai_codecs import LimitExceeded, Malformed, read
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.media import digest
from bunzai_codecs.formats.vaud.codec import INLINE_MAX, STORED, dumps, from_tree

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
#: files whose entities carry bytes above ``INLINE_MAX``: a charx (a zip member), a NovelAI PNG lorebook
WITH_BYTES = ("risu/oswin_the_lamplighter.charx", "novelai/hollin.naidata.png")


def _entities(rel: str) -> list[CanonicalEntity]:
    path = SAMPLES / rel
    return read(path.read_bytes(), path.name, uri=str(path)).entities


def _lean(e: CanonicalEntity, **kw: int) -> tuple[bytes, dict[str, bytes]]:
    store: dict[str, bytes] = {}
    return dumps(e, store=store, **kw), store


@pytest.mark.parametrize("rel", WITH_BYTES)
def test_a_lean_line_keeps_big_bytes_out_and_reads_back_exactly(rel: str) -> None:
    for e in _entities(rel):
        line, store = _lean(e)
        tree = orjson.loads(line)
        # every stored blob is listed with its size, and is big; nothing big is inline
        listed = {i["sha256"]: i["bytes"] for i in tree.get(STORED, [])}
        assert listed == {k: len(v) for k, v in store.items()}
        assert all(len(v) > INLINE_MAX and digest(v) == k for k, v in store.items())
        for k, b64 in (tree.get("media") or {}).items():
            assert len(base64.b64decode(b64)) <= INLINE_MAX, k
        for blob in store.values():
            assert base64.b64encode(blob) not in line
        # read back with the store: the same entity, the same lean and self-contained lines
        back = from_tree(tree, fetch=store.__getitem__)
        assert dumps(back, store={}) == line
        assert dumps(back) == dumps(e)
        assert back.media == e.media


def test_the_samples_give_lean_lines_smaller_than_self_contained_ones() -> None:
    """The point of it: the PNG card's picture and the charx's members leave the line."""
    shrunk = 0
    for rel in WITH_BYTES:
        for e in _entities(rel):
            line, store = _lean(e)
            if store:
                shrunk += 1
                assert len(line) < len(dumps(e)) - sum(len(v) for v in store.values())
    assert shrunk >= len(WITH_BYTES)


def test_small_bytes_stay_inline() -> None:
    e = _entities("sillytavern/tidepool.png")[0]  # a PNG card with a picture of a few hundred bytes
    assert e.media and all(len(v) <= INLINE_MAX for v in e.media.values())
    line, store = _lean(e)
    assert store == {} and STORED not in orjson.loads(line) and line == dumps(e)
    assert from_tree(orjson.loads(line)).media == e.media  # self-contained: no fetch needed
    big, store = _lean(e, inline_max=100)
    assert set(e.media) <= set(store) and len(big) < len(line)  # the picture, and the card chunks


def test_a_lean_line_read_alone_names_where_its_bytes_are() -> None:
    e = _entities("risu/oswin_the_lamplighter.charx")[0]
    line, store = _lean(e)
    assert store
    with pytest.raises(Malformed, match=r"blob store \(blobs/[0-9a-f]{2}/[0-9a-f]{64}\)"):
        from_tree(orjson.loads(line))


def test_a_missing_or_altered_blob_is_an_error() -> None:
    e = _entities("risu/oswin_the_lamplighter.charx")[0]
    line, store = _lean(e)
    key = sorted(store)[0]

    def missing(k: str) -> bytes:
        if k == key:
            raise FileNotFoundError(k)
        return store[k]

    with pytest.raises(Malformed, match="missing from the dataset's blob store"):
        from_tree(orjson.loads(line), fetch=missing)
    altered = {**store, key: store[key] + b"x"}
    with pytest.raises(Malformed, match="does not match its sha256"):
        from_tree(orjson.loads(line), fetch=altered.__getitem__)


def test_a_line_above_the_bound_keeps_its_escrow_in_the_store() -> None:
    e = _entities("sillytavern/lighthouse-keeper.v2.json")[0]
    full, _ = _lean(e)
    body_only = len(orjson.dumps({"body": e.body.dump()}))
    bound = body_only + 2000  # room for the body and the small fields, not for the escrow too
    assert len(full) > bound
    line, store = _lean(e, bound=bound)
    tree = orjson.loads(line)
    assert len(line) <= bound
    assert isinstance(tree["original"], str) and tree["original"].startswith("sha256:")
    key = tree["original"].removeprefix("sha256:")
    assert orjson.loads(store[key]) == orjson.loads(full)["original"]
    back = from_tree(tree, fetch=store.__getitem__)
    assert dumps(back) == dumps(e)
    assert dumps(back, store={}, bound=bound) == line


def test_a_body_above_the_bound_is_refused_with_a_typed_error() -> None:
    e = _entities("sillytavern/lighthouse-keeper.v2.json")[0]
    with pytest.raises(LimitExceeded, match="above the 500-byte bound"):
        _lean(e, bound=500)
