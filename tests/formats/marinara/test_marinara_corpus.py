"""Real Marinara files (../shared/corpus/marinara): each detects as EXPECT.tsv says, round-trips to
an equal JSON tree and is canonically stable. Samples: each is claimed by exactly one codec."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from conftest import expect_rows

from bunzai_codecs import read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.sniff import Sniff

from ._util import SAMPLES

ROWS = [(rel, fmt) for rel, fmt in expect_rows() if rel.startswith("marinara/") and fmt != "ANY"]


@pytest.mark.parametrize(("rel", "fmt"), ROWS, ids=[r for r, _ in ROWS])
def test_corpus_file_detects_and_round_trips(corpus: Path, rel: str, fmt: str) -> None:
    data = (corpus / rel).read_bytes()
    best = registry.detect(Sniff(data, rel))
    assert best is not None and best.id == fmt
    decoded = read(data, rel)
    e = decoded.primary
    assert e.source is not None and e.source.format == fmt
    out = write(e, fmt, linked=decoded.entities).data
    assert orjson.loads(out) == orjson.loads(data)
    again = read(out, rel).primary
    assert again.body == e.body
    assert not getattr(e, "warnings", None)


def test_every_marinara_corpus_row_is_covered() -> None:
    rows = [r for r in expect_rows() if r[0].startswith("marinara/")]
    if not rows:
        pytest.skip("shared corpus not present")
    assert {f for _, f in rows} >= {"marinara-lorebook", "marinara-preset", "marinara-regex"}


@pytest.mark.parametrize("path", sorted(SAMPLES.glob("*.json")), ids=lambda p: p.name)
def test_each_sample_is_claimed_by_one_marinara_codec_only(path: Path) -> None:
    s = Sniff(path.read_bytes(), path.name)
    scores = {c.id: c.detect(s) for c in registry.all_codecs()}
    claimed = [cid for cid, sc in scores.items() if sc >= 0.5]
    assert len([c for c in claimed if c.startswith("marinara-")]) == 1, scores
    assert registry.detect(s).id.startswith("marinara-")  # type: ignore[union-attr]
