"""Sorted, deterministic JSONL shards (canonical lines, fidelity rows, rejects, the input inventory)
written with bounded memory on any runner.

Same inputs, same files: names and bytes depend only on the records, never on how a runner
bundled or ordered them. Sorting needs every record of a shard in one place, but a shuffle of
every canonical line (escrow twins, base64 images) would hold the whole archive in memory on the
local runners, which buffer shuffled data in RAM. So this is an external sort:

1. ``_StageRuns`` runs fused with the stage that makes the records: it buffers them, and every
   ``flush_bytes`` (and at the end of a bundle) writes one sorted *run* file to a staging folder,
   noting where each of ``GRID`` hash cells starts in it. Only that note (``RunInfo``) is shuffled.
2. The plan: the total size gives the number of shards ``n`` (at least 1; ``target_bytes`` each;
   at most ``GRID``); shard ``i`` owns hash cells ``[i*GRID/n, (i+1)*GRID/n)``.
3. ``_MergeShard`` k-way merges its cell range of every run into ``<dir>/<prefix>-<i>-of-<n>.jsonl``
   (in the staging folder, for the commit: ``pipeline/dataset/commit.py``), written atomically, and reports
   its record count, size and sha256. More than ``FAN_IN`` runs
   are merged in levels, through local temporary files, so its memory does not grow with them.

A record is ``<16 hex of sha256(key)><natural key as JSON>\\t<line>\\n``: the hash spreads records
evenly over the cells, the natural key orders them inside a cell, and the line itself (which never
holds a raw tab or newline: compact JSON escapes them) breaks the last ties.
"""

from __future__ import annotations

import hashlib
import heapq
import os
import tempfile
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any

import apache_beam as beam
import fsspec
import orjson
from apache_beam.transforms.window import GlobalWindows

from pipeline.normalize.streams import each
from pipeline.runtime.storage import Output, open_atomic, read_lines, staged_path, write_bytes

#: hash cells; also the most shards one dataset is cut into
GRID = 256
#: runs merged at once. Every open run holds its current record (escrow twins with base64 images
#: run to hundreds of KiB) and its read-ahead, and the number of runs grows with the archive (one
#: per ``flush_bytes`` of records): past ``FAN_IN``, groups of runs are first merged into local
#: temporary files (a shard's worth of data at most, read back at once), so a merging worker's
#: memory stays flat whatever the archive's size
FAN_IN = 64
#: read-ahead per run while merging: at most ``_RANGE_BLOCK`` each and ``MERGE_BUDGET`` for all
#: the runs of one merge together, but never under ``_MIN_BLOCK``
_RANGE_BLOCK = 1 << 20
MERGE_BUDGET = 32 << 20
_MIN_BLOCK = 64 << 10
#: records buffered before a run is written, whatever their size: small records (inventory rows,
#: rejects) kept for a whole bundle pin the allocator's pools they sit in, so a worker's memory
#: grew with every input it processed
FLUSH_RECORDS = 2048


def record(key: str, natural: Sequence[str], line: bytes) -> bytes:
    """The sortable form of ``line``: placed by ``key``'s hash, ordered by ``natural``."""
    hk = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16].encode("ascii")
    return hk + orjson.dumps(list(natural)) + b"\t" + line + b"\n"


def line_of(rec: bytes) -> bytes:
    """The JSONL line (with its newline) a record carries."""
    return rec[rec.index(b"\t") + 1 :]


@dataclass(frozen=True, slots=True)
class ShardSpec:
    """One sharded dataset: ``<dir>/<prefix>-00000-of-00003.jsonl``."""

    dir: str
    prefix: str = "part"

    def rel(self, index: int, count: int) -> str:
        return f"{self.dir}/{self.prefix}-{index:05d}-of-{count:05d}.jsonl"


@dataclass(frozen=True, slots=True)
class RunInfo:
    dataset: str
    path: str
    records: int
    bytes: int
    #: byte offset where each hash cell starts (``GRID + 1`` entries; the last is the file size)
    offsets: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ShardTask:
    spec: ShardSpec
    index: int
    count: int
    ranges: tuple[tuple[str, int, int], ...]


@dataclass(frozen=True, slots=True)
class ShardInfo:
    """A written shard, as the manifest lists it."""

    dataset: str
    rel: str
    records: int
    bytes: int
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.rel, "records": self.records, "bytes": self.bytes, "sha256": self.sha256}


def cell_offsets(records: Sequence[bytes]) -> tuple[int, ...]:
    """Where each hash cell starts in the concatenation of sorted ``records``."""
    offsets = [0] * (GRID + 1)
    pos = 0
    c = 0
    for rec in records:
        cell = int(rec[:2], 16)
        while c <= cell:
            offsets[c] = pos
            c += 1
        pos += len(rec)
    while c <= GRID:
        offsets[c] = pos
        c += 1
    return tuple(offsets)


class _StageRuns(beam.DoFn):
    """Buffers records (made from the elements by ``record``, if given) and writes them as sorted
    runs into the staging folder."""

    def __init__(
        self,
        dataset: str,
        output: Output,
        staging: str,
        flush_bytes: int,
        record: Callable[[Any], bytes] | None = None,
    ) -> None:
        self.dataset = dataset
        self.output = output
        self.staging = staging
        self.flush_bytes = flush_bytes
        self.record = record

    def setup(self) -> None:
        self.fs, self.root = self.output.open()

    def start_bundle(self) -> None:
        self.buf: list[bytes] = []
        self.size = 0

    def process(self, element: Any) -> Iterator[RunInfo]:
        rec = element if self.record is None else self.record(element)
        self.buf.append(rec)
        self.size += len(rec)
        if self.size >= self.flush_bytes or len(self.buf) >= FLUSH_RECORDS:
            yield from self._flush()

    def finish_bundle(self) -> Iterator[Any]:
        for info in self._flush():
            yield GlobalWindows.windowed_value(info)

    def _flush(self) -> Iterator[RunInfo]:
        if not self.buf:
            return
        buf, size = self.buf, self.size
        self.buf, self.size = [], 0
        buf.sort()
        path = f"{self.root}/{self.staging}/{self.dataset}/run-{uuid.uuid4().hex}.bin"
        write_bytes(self.fs, path, b"".join(buf))
        yield RunInfo(self.dataset, path, len(buf), size, cell_offsets(buf))


def plan(runs: Iterable[RunInfo], spec: ShardSpec, target_bytes: int) -> list[ShardTask]:
    """Cut the runs into shards of about ``target_bytes`` along the hash cells."""
    ordered = sorted(runs, key=lambda r: r.path)
    total = sum(r.bytes for r in ordered)
    n = max(1, min(GRID, -(-total // max(1, target_bytes))))
    tasks = []
    for i in range(n):
        lo, hi = i * GRID // n, (i + 1) * GRID // n
        ranges = tuple(
            (r.path, r.offsets[lo], r.offsets[hi]) for r in ordered if r.offsets[hi] > r.offsets[lo]
        )
        tasks.append(ShardTask(spec, i, n, ranges))
    return tasks


def merge_block(runs: int) -> int:
    """The read-ahead per run when ``runs`` runs are merged at once."""
    return max(_MIN_BLOCK, min(_RANGE_BLOCK, MERGE_BUDGET // max(1, runs)))


def _read_range(fs: Any, path: str, start: int, end: int, block: int = _RANGE_BLOCK) -> Iterator[bytes]:
    # through read_lines (cat_file ranges), not fs.open: a transient store error must raise, not
    # read as the end of the run (s3fs's file object returns b"" after a 503 or dropped connection)
    pos = start
    for rec in read_lines(fs, path, start, end, block=block):
        pos += len(rec)
        yield rec
    if pos != end:
        raise OSError(f"staging run {path} ends at byte {pos}, expected {end}")


def _merge(streams: Sequence[Iterator[bytes]]) -> Iterator[bytes]:
    return heapq.merge(*streams) if len(streams) > 1 else iter(streams[0]) if streams else iter(())


class _MergeShard(beam.DoFn):
    def __init__(self, dataset: str, output: Output, staging: str) -> None:
        self.dataset = dataset
        self.output = output
        self.staging = staging

    def setup(self) -> None:
        self.fs, self.root = self.output.open()
        self.local = fsspec.filesystem("file")

    def process(self, task: ShardTask) -> Iterator[ShardInfo]:
        rel = task.spec.rel(task.index, task.count)
        digest = hashlib.sha256()
        records = size = 0
        with tempfile.TemporaryDirectory(prefix="bunzai-merge-") as tmp:
            ranges = [(self.fs, p, s, e) for p, s, e in task.ranges]
            level = 0
            while len(ranges) > FAN_IN:  # merge groups of runs into local files first
                merged = []
                for g in range(0, len(ranges), FAN_IN):
                    path = os.path.join(tmp, f"{level}-{g // FAN_IN}.bin")
                    n = 0
                    with open(path, "wb") as f:
                        for rec in _merge(self._streams(ranges[g : g + FAN_IN])):
                            f.write(rec)
                            n += len(rec)
                    merged.append((self.local, path, 0, n))
                if level:  # the previous level's own files are read: drop them (never a run:
                    for _, path, _, _ in ranges:  # other shards read their own cells of it)
                        os.remove(path)
                ranges, level = merged, level + 1
            with open_atomic(self.fs, f"{self.root}/{staged_path(self.staging, rel)}") as f:
                for rec in _merge(self._streams(ranges)):
                    line = line_of(rec)
                    f.write(line)
                    digest.update(line)
                    records += 1
                    size += len(line)
        yield ShardInfo(self.dataset, rel, records, size, digest.hexdigest())

    @staticmethod
    def _streams(ranges: Sequence[tuple[Any, str, int, int]]) -> list[Iterator[bytes]]:
        block = merge_block(len(ranges))
        return [_read_range(fs, p, s, e, block) for fs, p, s, e in ranges]


@dataclass
class WriteShards(beam.PTransform):
    """Records (``record(...)`` bytes) from one or more PCollections -> sorted shards.

    Give each producer its own PCollection (a tuple, or a dict by name) rather than a Flatten: the
    run writer then fuses with each producer, and nothing big is ever materialised between stages.
    ``record``: the elements are rows, and this makes each one's record (where the run is staged).
    """

    dataset: str
    spec: ShardSpec
    output: Output
    staging: str
    _: KW_ONLY
    target_bytes: int
    flush_bytes: int = 32 << 20
    record: Callable[[Any], bytes] | None = None

    def expand(self, producers: Any) -> Any:
        if isinstance(producers, beam.PCollection):
            producers = (producers,)
        if not isinstance(producers, dict):
            producers = {str(i): pc for i, pc in enumerate(producers)}
        stage = _StageRuns(self.dataset, self.output, self.staging, self.flush_bytes, self.record)
        runs = list(each("Runs", producers, beam.ParDo, stage).values())
        merged = runs[0] if len(runs) == 1 else tuple(runs) | "AllRuns" >> beam.Flatten()
        spec, target = self.spec, self.target_bytes
        return (
            merged
            | "CollectRuns" >> beam.combiners.ToList()
            | "Plan" >> beam.FlatMap(plan, spec, target)
            | "Spread" >> beam.Reshuffle()
            | "Merge" >> beam.ParDo(_MergeShard(self.dataset, self.output, self.staging))
        )


__all__ = [
    "FAN_IN",
    "GRID",
    "MERGE_BUDGET",
    "ShardInfo",
    "ShardSpec",
    "WriteShards",
    "cell_offsets",
    "line_of",
    "merge_block",
    "plan",
    "record",
]
