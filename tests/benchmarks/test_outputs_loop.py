"""``bench.pipe.OutputsLoop``, the yardstick of issue 31's pipeline row: one process doing
``normalize --fidelity off``'s per-input work and writing its outputs. It must do the same work:
over samples/ it writes exactly the canonical lines and inventory rows the goldens hold (the
pipeline's own outputs of that folder), only in input order, unsorted and unsharded."""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from bench.pipe import OutputsLoop
from tests.pipeline import goldens

ROOT = Path(__file__).resolve().parents[2]


def _rows(data: bytes) -> set[bytes]:
    return {orjson.dumps(orjson.loads(line), option=orjson.OPT_SORT_KEYS) for line in data.splitlines()}


def test_the_outputs_loop_writes_what_normalize_writes(tmp_path: Path) -> None:
    paths = sorted(
        (str(p), p.relative_to(ROOT).as_posix()) for p in (ROOT / "samples").rglob("*") if p.is_file()
    )
    loop = OutputsLoop(str(tmp_path / "out"))
    wall, cpu = loop.run(paths)
    assert wall > 0 and cpu > 0
    stored = goldens.load()
    canonical = goldens.canonical_bytes(stored["canonical/part-00000-of-00001.txt"])
    written = (tmp_path / "out" / "canonical.jsonl").read_bytes()
    assert sorted(written.splitlines()) == sorted(canonical.splitlines())  # the same lines, byte for byte
    inventory = stored["inventory/part-00000-of-00001.jsonl"].encode()
    assert _rows((tmp_path / "out" / "inventory.jsonl").read_bytes()) == _rows(inventory)
    assert len(os.listdir(tmp_path / "out" / "blobs")) >= 1  # the lean lines' blobs, once each
    assert (tmp_path / "out" / "index.parquet").stat().st_size > 0
