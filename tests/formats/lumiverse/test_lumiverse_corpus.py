"""The real Lumiverse file EXPECT.tsv names detects, round-trips, is canonically stable and survives
vaud-json."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import corpus_root, expect_rows

from bunzai_codecs import read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import CharacterBody
from tests.formats.codec_helpers import rt_compare

ROWS = expect_rows("lumiverse")
IDS = [r[0] for r in ROWS]


def _path(rel: str) -> Path:
    root = corpus_root()
    if root is None:
        pytest.skip("shared corpus not present")
    return root / rel


def test_the_corpus_has_the_rows_this_suite_expects() -> None:
    if corpus_root() is None:
        pytest.skip("shared corpus not present")
    assert {f for _, f in ROWS} == {"lumiverse"}


@pytest.mark.parametrize(("rel", "fmt"), ROWS, ids=IDS)
def test_corpus_file_detects_round_trips_and_is_stable(rel: str, fmt: str) -> None:
    data = _path(rel).read_bytes()
    d = registry.detect_all(Sniff(data, rel))
    assert d.best is not None and d.best.id == fmt, d.candidates
    decoded = read(data, rel)
    assert all(not e.warnings for e in decoded.entities)
    out = write(decoded.primary, fmt, linked=decoded.entities)
    assert rt_compare(data, out.data) == [] and out.beside == []
    assert [e.body for e in read(out.data, rel).entities] == [e.body for e in decoded.entities]
    back = read(write(decoded.primary, "vaud-json", linked=decoded.entities).data, "x.vaud.json")
    assert rt_compare(data, write(back.primary, fmt, linked=back.entities).data) == []


def test_hoplight_fixture_keeps_every_lumiverse_key() -> None:
    b = read(
        _path("lumiverse/character.rich-extensions.hoplight-fixture.json").read_bytes(), "l.json"
    ).primary.body
    assert isinstance(b, CharacterBody)
    assert b.extensions["alternate_character_name"] == "Aria"
    assert b.extensions["expressions"]["mappings"] == {"neutral": "img-neutral", "angry": "img-angry"}
    assert b.extensions["lumiverse_image_gen_lora"]["weight"] == 0.85
    assert b.extensions["world_book_ids"] == ["wb-fixture-1"]
