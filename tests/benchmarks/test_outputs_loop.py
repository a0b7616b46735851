"""``bench.pipe.OutputsLoop``, the yardstick of issue 31's pipeline row: one process doing
``normalize --fidelity off``'s per-input work and writing its outputs. It must do the same work:
over samples/ it writes exactly the canonical lines and inventory rows the goldens hold (the
pipeline's own outputs of that folder), only in input order, unsorted and unsharded. The loop reads
one file per input, as the bench's corpus holds: the inputs of several files (a card folder, a
character YAML with its picture) are left out, and so are their lines in the goldens."""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from bench.pipe import OutputsLoop
from bunzai_codecs.inputs import walk
from pipeline.dataset.lines import line_meta
from tests.pipeline import goldens

ROOT = Path(__file__).resolve().parents[2]


def _rows(data: bytes) -> set[bytes]:
    return {orjson.dumps(orjson.loads(line), option=orjson.OPT_SORT_KEYS) for line in data.splitlines()}


def test_the_outputs_loop_writes_what_normalize_writes(tmp_path: Path) -> None:
    single = [i.path for i in walk(ROOT / "samples") if not i.folder and i.picture is None]
    paths = sorted((str(p), p.relative_to(ROOT).as_posix()) for p in single)
    uris = {uri for _, uri in paths}
    assert len(uris) < len(list((ROOT / "samples").rglob("*.*")))  # some inputs are several files
    loop = OutputsLoop(str(tmp_path / "out"))
    wall, cpu = loop.run(paths)
    assert wall > 0 and cpu > 0
    stored = goldens.load()
    canonical = b"".join(
        line
        for line in goldens.canonical_bytes(stored["canonical/part-00000-of-00001.txt"]).splitlines(True)
        if line_meta(line).uri in uris
    )
    assert canonical
    written = (tmp_path / "out" / "canonical.jsonl").read_bytes()
    assert sorted(written.splitlines()) == sorted(canonical.splitlines())  # the same lines, byte for byte
    inventory = _rows(stored["inventory/part-00000-of-00001.jsonl"].encode())
    inventory = {row for row in inventory if orjson.loads(row)["uri"] in uris}
    assert _rows((tmp_path / "out" / "inventory.jsonl").read_bytes()) == inventory
    assert len(os.listdir(tmp_path / "out" / "blobs")) >= 1  # the lean lines' blobs, once each
    assert (tmp_path / "out" / "index.parquet").stat().st_size > 0
