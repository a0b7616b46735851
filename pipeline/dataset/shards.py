"""Sorted, deterministic JSONL shards (canonical lines, fidelity rows, rejects, the input inventory,
the entity index) written with bounded memory on any runner.

Same inputs, same files: names and bytes depend only on the records, never on how a runner
bundled or ordered them, nor on how many workers it had. Inside a shard, records are in the order
of their *record*, ``<16 hex of sha256(key)><natural key as JSON>\\t<line>\\n`` (the hash spreads
records evenly, the natural key orders them, and the line itself, which never holds a raw tab or
newline, breaks the last ties). Which records a shard holds is decided one of two ways:

**By unit** (the canonical lines). The listing cuts the run's inputs into ``n`` *units* by a hash
of their uri (``pipeline/normalize/packed.py::unit_of``; ``n`` from the listed bytes and count
alone, so the same inputs give the same units on any runner), and one unit is one element of the
shuffle that spreads the inputs over the workers: a worker reads, decodes and validates every
input of a unit one after the other. Canonical shard ``i`` holds the lines of unit ``i``.
``_WriteUnits`` runs fused with the stage that makes the lines: it keeps the current unit's
lines, and when the next unit begins (or the bundle ends) sorts them in memory and writes them
**once**, straight to their final file. No line crosses a shuffle (the local runners hold shuffled
data in memory) and none is written twice. A unit is about ``--shard-bytes`` of input, so what a
worker holds is bounded whatever the archive's size; one that outgrows ``spill_bytes`` (a listing
that misjudged it) is sorted in pieces into local files, merged when it ends.

Under ``--since`` a unit's shard also holds the lines carried from the previous run, which are
read in another stage: then both sides are staged as sorted runs (below) and merged per unit.

**By hash cell** (rejects, inventory, fidelity rows, the index: records of several producers,
small beside the lines). An external sort:

1. ``_StageRuns`` runs fused with the stage that makes the records: it buffers them, and every
   ``flush_bytes`` (and at the end of a bundle) writes one sorted *run* file to a staging folder,
   noting where each of ``GRID`` hash cells starts in it (``RunInfo``; for records by unit, where
   each unit starts). Only that note is shuffled.
2. The plan: the total size gives the number of shards ``n`` (at least 1; ``target_bytes`` each;
   at most ``GRID``); shard ``i`` owns hash cells ``[i*GRID/n, (i+1)*GRID/n)``.
3. ``_MergeShard`` k-way merges its cell range of every run into the shard (in the staging folder,
   for the commit: ``pipeline/dataset/commit.py``), written atomically, and reports its record
   count, size and sha256. More than ``FAN_IN`` runs are merged in levels, through local temporary
   files, so its memory does not grow with them.

``WriteDatasets`` writes every dataset of a run this way with one plan and one merge step for all
of them (each step of a local runner costs every worker a bundle), and ``ShardSpec.sink`` says how
a shard's lines become its file (JSONL as they are; the entity index writes Parquet).
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import IO, Any, Protocol

import apache_beam as beam
import fsspec
import orjson
from apache_beam.transforms.window import GlobalWindows

from pipeline.normalize.streams import each
from pipeline.runtime.storage import Output, open_atomic, read_lines, staged_path, write_bytes

#: hash cells; also the most shards one dataset by hash cell is cut into
GRID = 256
#: hex digits of the unit a record by unit starts with (units are below ``16 ** UNIT_DIGITS``)
UNIT_DIGITS = 4
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


def sort_key(key: str, natural: Sequence[str]) -> bytes:
    """What orders a record: ``key``'s hash (16 hex of sha256), then ``natural`` as JSON."""
    hk = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16].encode("ascii")
    return hk + orjson.dumps(list(natural))


def record(key: str, natural: Sequence[str], line: bytes) -> bytes:
    """The sortable form of ``line``: placed by ``key``'s hash, ordered by ``natural``."""
    return sort_key(key, natural) + b"\t" + line + b"\n"


def unit_record(unit: int, rec: bytes) -> bytes:
    """``rec`` placed in ``unit`` (its first ``UNIT_DIGITS`` hex digits): runs of records by unit
    sort unit by unit, and inside a unit as the records do."""
    return b"%04x" % unit + rec


def line_of(rec: bytes) -> bytes:
    """The JSONL line (with its newline) a record carries."""
    return rec[rec.index(b"\t") + 1 :]


# -- how a shard's lines become its file ---------------------------------------------------------

#: a sink: the shard's lines (each with its newline), in order, into a binary file ->
#: ``(records, bytes written, sha256 of the bytes written)``
Sink = Callable[[Iterable[bytes], IO[bytes]], tuple[int, int, str]]


def jsonl_sink(lines: Iterable[bytes], f: IO[bytes]) -> tuple[int, int, str]:
    """The lines as they are: a JSONL file."""
    digest = hashlib.sha256()
    records = size = 0
    for line in lines:
        f.write(line)
        digest.update(line)
        records += 1
        size += len(line)
    return records, size, digest.hexdigest()


@dataclass(frozen=True, slots=True)
class ShardSpec:
    """Where one sharded dataset's files go: ``<dir>/<prefix>-00000-of-00003<suffix>``, and how
    its lines become a file (``sink``)."""

    dir: str
    prefix: str = "part"
    suffix: str = ".jsonl"
    sink: Sink = jsonl_sink

    def rel(self, index: int, count: int) -> str:
        return f"{self.dir}/{self.prefix}-{index:05d}-of-{count:05d}{self.suffix}"


@dataclass(frozen=True)
class Dataset:
    """One sharded dataset: its name (its folder, the manifest's key, the ``streams.Results``
    field), its files, and how an element becomes its shard record.

    By hash cell: ``record(element)`` is the element's record (None: the elements are records).
    By unit (``by_unit``): ``place(element)`` is ``(uri, sort key, line)``, the uri deciding the
    unit (``unit_of(uri, units)``)."""

    name: str
    spec: ShardSpec
    record: Callable[[Any], bytes] | None = None
    place: Callable[[Any], tuple[str, bytes, bytes]] | None = None

    @property
    def by_unit(self) -> bool:
        return self.place is not None


class Units(Protocol):
    """How a run's inputs are cut into units (``pipeline/normalize/packed.py::InputUnits``)."""

    def count(self, totals: Any) -> int:
        """The number of units, from the listing's side input ``totals``."""
        ...

    def of(self, uri: str, count: int) -> int:
        """The unit of the input ``uri`` among ``count``."""
        ...


# -- what crosses the shuffle --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunInfo:
    dataset: str
    path: str
    records: int
    bytes: int
    #: byte offset where each hash cell (or unit) starts (one more entry than cells; the last is
    #: the file size)
    offsets: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ShardTask:
    spec: ShardSpec
    index: int
    count: int
    ranges: tuple[tuple[str, int, int], ...]
    dataset: str = ""


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


def cell_offsets(records: Sequence[bytes], cells: int = GRID, digits: int = 2) -> tuple[int, ...]:
    """Where each cell starts in the concatenation of sorted ``records`` (a record's cell: its first
    ``digits`` hex digits; the hash cell, or the unit of a record by unit)."""
    offsets = [0] * (cells + 1)
    pos = 0
    c = 0
    for rec in records:
        cell = int(rec[:digits], 16)
        while c <= cell:
            offsets[c] = pos
            c += 1
        pos += len(rec)
    while c <= cells:
        offsets[c] = pos
        c += 1
    return tuple(offsets)


# -- by unit: written once -------------------------------------------------------------------------


def _merged_lines(parts: Sequence[Iterator[bytes]]) -> Iterator[bytes]:
    return (line_of(rec) for rec in _merge(parts))


def _local_records(path: str) -> Iterator[bytes]:
    with open(path, "rb") as f:
        yield from f


class _WriteUnits(beam.DoFn):
    """Elements of a dataset by unit -> each unit's shard, written once (``ShardInfo``). The runner
    hands over every element of one unit before the next unit's (a unit is one element of the
    shuffle before it); a unit that comes back after it was written is a broken promise, and fails
    the bundle rather than overwrite its shard with part of it."""

    def __init__(self, ds: Dataset, output: Output, staging: str, units: Units, spill_bytes: int) -> None:
        self.ds = ds
        self.output = output
        self.staging = staging
        self.units = units
        self.spill_bytes = spill_bytes

    def setup(self) -> None:
        self.fs, self.root = self.output.open()
        self.tmp = ""

    def teardown(self) -> None:
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def start_bundle(self) -> None:
        self.unit = -1
        self.count = 0
        self.buf: list[tuple[bytes, bytes]] = []
        self.size = 0
        self.spills: list[str] = []
        self.written: set[int] = set()

    def process(self, element: Any, totals: Any) -> Iterator[ShardInfo]:
        if not self.count:
            self.count = self.units.count(totals)
        place = self.ds.place
        assert place is not None
        uri, key, line = place(element)
        unit = self.units.of(uri, self.count)
        if unit != self.unit:
            yield from self._flush()
            if unit in self.written:
                raise RuntimeError(
                    f"{self.ds.name}: unit {unit} came back after its shard was written "
                    "(the runner split a unit); nothing of it is overwritten"
                )
            self.unit = unit
        self.buf.append((key, line))
        self.size += len(key) + len(line) + 2
        if self.size >= self.spill_bytes:
            self._spill()

    def finish_bundle(self) -> Iterator[Any]:
        for info in self._flush():
            yield GlobalWindows.windowed_value(info)

    def _sorted_records(self) -> list[bytes]:
        self.buf.sort()
        return [key + b"\t" + line + b"\n" for key, line in self.buf]

    def _spill(self) -> None:
        """The unit outgrew memory: its records so far, sorted, into a local file."""
        if not self.tmp:
            self.tmp = tempfile.mkdtemp(prefix="bunzai-unit-")
        path = os.path.join(self.tmp, f"{self.unit}-{len(self.spills)}.bin")
        with open(path, "wb") as f:
            f.writelines(self._sorted_records())
        self.spills.append(path)
        self.buf, self.size = [], 0

    def _flush(self) -> Iterator[ShardInfo]:
        if self.unit < 0:
            return
        unit, spills = self.unit, self.spills
        self.unit, self.spills = -1, []
        self.written.add(unit)
        spec = self.ds.spec
        rel = spec.rel(unit, self.count)
        if spills:
            parts = [_local_records(p) for p in spills] + [iter(self._sorted_records())]
            lines: Iterable[bytes] = _merged_lines(parts)
        else:
            self.buf.sort()
            lines = (line + b"\n" for _, line in self.buf)
        try:
            with open_atomic(self.fs, f"{self.root}/{staged_path(self.staging, rel)}") as f:
                records, size, sha = spec.sink(lines, f)
        finally:
            for p in spills:
                with contextlib.suppress(OSError):
                    os.remove(p)
        self.buf, self.size = [], 0
        yield ShardInfo(self.ds.name, rel, records, size, sha)


# -- by hash cell (and by unit under --since): runs, then a merge -------------------------------


class _StageRuns(beam.DoFn):
    """Buffers records (made from the elements by the dataset) and writes them as sorted runs into
    the staging folder."""

    def __init__(
        self,
        ds: Dataset,
        output: Output,
        staging: str,
        flush_bytes: int,
        units: Units | None = None,
    ) -> None:
        self.ds = ds
        self.output = output
        self.staging = staging
        self.flush_bytes = flush_bytes
        self.units = units

    def setup(self) -> None:
        self.fs, self.root = self.output.open()

    def start_bundle(self) -> None:
        self.buf: list[bytes] = []
        self.size = 0
        self.count = 0

    def process(self, element: Any, totals: Any = None) -> Iterator[RunInfo]:
        ds = self.ds
        if ds.place is not None:
            assert self.units is not None
            if not self.count:
                self.count = self.units.count(totals)
            uri, key, line = ds.place(element)
            rec = unit_record(self.units.of(uri, self.count), key + b"\t" + line + b"\n")
        else:
            rec = element if ds.record is None else ds.record(element)
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
        path = f"{self.root}/{self.staging}/{self.ds.name}/run-{uuid.uuid4().hex}.bin"
        write_bytes(self.fs, path, b"".join(buf))
        offsets = cell_offsets(buf, self.count, UNIT_DIGITS) if self.ds.by_unit else cell_offsets(buf)
        yield RunInfo(self.ds.name, path, len(buf), size, offsets)


def plan(
    runs: Iterable[RunInfo], spec: ShardSpec, target_bytes: int, units: int = 0, *, dataset: str = ""
) -> list[ShardTask]:
    """Cut the runs into shards: one per unit (``units``), else of about ``target_bytes`` along the
    hash cells."""
    ordered = sorted(runs, key=lambda r: r.path)
    if units:
        n = units
        bounds = [(i, i + 1) for i in range(n)]
    else:
        total = sum(r.bytes for r in ordered)
        n = max(1, min(GRID, -(-total // max(1, target_bytes))))
        bounds = [(i * GRID // n, (i + 1) * GRID // n) for i in range(n)]
    tasks = []
    for i, (lo, hi) in enumerate(bounds):
        ranges = tuple(
            (r.path, r.offsets[lo], r.offsets[hi]) for r in ordered if r.offsets[hi] > r.offsets[lo]
        )
        tasks.append(ShardTask(spec, i, n, ranges, dataset))
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
    """A ``ShardTask`` -> its shard (the records of its ranges of every run, merged); a
    ``ShardInfo`` (a shard written already, by unit) passes through."""

    def __init__(self, output: Output, staging: str) -> None:
        self.output = output
        self.staging = staging

    def setup(self) -> None:
        self.fs, self.root = self.output.open()
        self.local = fsspec.filesystem("file")

    def process(self, task: ShardTask | ShardInfo) -> Iterator[ShardInfo]:
        if isinstance(task, ShardInfo):
            yield task
            return
        rel = task.spec.rel(task.index, task.count)
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
                records, size, sha = task.spec.sink(_merged_lines(self._streams(ranges)), f)
        yield ShardInfo(task.dataset, rel, records, size, sha)

    @staticmethod
    def _streams(ranges: Sequence[tuple[Any, str, int, int]]) -> list[Iterator[bytes]]:
        block = merge_block(len(ranges))
        return [_read_range(fs, p, s, e, block) for fs, p, s, e in ranges]


def _plan_all(
    _: Any,
    found: list[RunInfo | ShardInfo],
    datasets: Sequence[Dataset],
    target_bytes: int,
    units: Units | None,
    totals: Any = None,
) -> Iterator[ShardTask | ShardInfo]:
    """Every dataset's merge tasks; the shards of a dataset by unit written already pass, and the
    units nothing was written for get an empty shard (every unit is a file)."""
    count = units.count(totals) if units is not None else 0
    for ds in datasets:
        runs = [r for r in found if isinstance(r, RunInfo) and r.dataset == ds.name]
        done = [s for s in found if isinstance(s, ShardInfo) and s.dataset == ds.name]
        if not ds.by_unit:
            yield from plan(runs, ds.spec, target_bytes, dataset=ds.name)
            continue
        written = {s.rel for s in done}
        yield from done
        for task in plan(runs, ds.spec, target_bytes, count, dataset=ds.name):
            if ds.spec.rel(task.index, task.count) not in written:
                yield task


@dataclass
class WriteDatasets(beam.PTransform):
    """``{dataset name: producers}`` -> the ``ShardInfo`` of every shard of every dataset.

    ``datasets`` says what each is; give each producer its own PCollection (a dict by name) rather
    than a Flatten, so that each dataset's writer fuses with each producer and nothing big is ever
    materialised between stages. A dataset by unit with one producer is written once by
    ``_WriteUnits`` (``units``: how the inputs were cut, and ``totals`` the listing's side input it
    reads); with several (``--since``: the lines carried forward), its records are staged as runs
    and merged per unit, as the datasets by hash cell are. One plan and one merge step serve them
    all."""

    datasets: Sequence[Dataset]
    output: Output
    staging: str
    _: KW_ONLY
    target_bytes: int
    flush_bytes: int = 32 << 20
    units: Units | None = None
    totals: Any = None
    #: a unit larger than this is sorted in pieces (local files) and merged when it ends
    spill_bytes: int = 128 << 20

    def expand(self, streams: Mapping[str, Mapping[str, Any]]) -> Any:
        side = () if self.totals is None else (beam.pvalue.AsList(self.totals),)
        spill = self.spill_bytes
        found: list[Any] = []
        present = []  # a dataset without producers (--fidelity off: fidelity) has no files
        for ds in self.datasets:
            producers = dict(streams.get(ds.name) or {})
            if not producers:
                continue
            present.append(ds)
            p = next(iter(producers.values())).pipeline
            label = f"Write{ds.name.title()}"
            if ds.by_unit:
                if self.units is None or self.totals is None:
                    raise ValueError(f"{ds.name} is written by unit: give units and totals")
                if len(producers) == 1:
                    dofn: beam.DoFn = _WriteUnits(ds, self.output, self.staging, self.units, spill)
                else:
                    dofn = _StageRuns(ds, self.output, self.staging, self.flush_bytes, self.units)
                found += each(label, producers, beam.ParDo, dofn, *side).values()
            else:
                stage = _StageRuns(ds, self.output, self.staging, self.flush_bytes)
                found += each(label, producers, beam.ParDo, stage).values()
        if not present:
            raise ValueError("no dataset has a producer")
        datasets, target, units = tuple(present), self.target_bytes, self.units
        # the plan reads every run note as a side input: it runs once they are all made
        runs = beam.pvalue.AsList(tuple(found) | "AllRuns" >> beam.Flatten())
        return (
            p
            | "Once" >> beam.Create([None])
            | "Plan" >> beam.FlatMap(_plan_all, runs, datasets, target, units, *side)
            | "Spread" >> beam.Reshuffle()
            | "Merge" >> beam.ParDo(_MergeShard(self.output, self.staging))
        )


@dataclass
class WriteShards(beam.PTransform):
    """Records (``record(...)`` bytes) from one or more PCollections -> sorted shards of one dataset
    by hash cell (``WriteDatasets`` with one dataset).

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
        ds = Dataset(self.dataset, self.spec, self.record)
        return {ds.name: producers} | WriteDatasets(
            (ds,), self.output, self.staging, target_bytes=self.target_bytes, flush_bytes=self.flush_bytes
        )


__all__ = [
    "FAN_IN",
    "GRID",
    "MERGE_BUDGET",
    "UNIT_DIGITS",
    "Dataset",
    "RunInfo",
    "ShardInfo",
    "ShardSpec",
    "Sink",
    "Units",
    "WriteDatasets",
    "WriteShards",
    "cell_offsets",
    "jsonl_sink",
    "line_of",
    "merge_block",
    "plan",
    "record",
    "sort_key",
    "unit_record",
]
