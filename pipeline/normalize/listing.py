"""Step ``List``: from ``--input`` URLs to the files to read, each once, spread over the workers.

    Inputs -> List (ListFiles) -> PairWithPrevious (dedupe by uri; --since) -> [SharedSizes]
      -> Pack (+ totals) -> Spread (one unit of inputs per element; pipeline/normalize/packed.py)

Only small records cross its shuffles (listed files packed 64 to a zlib batch, sizes summed where
they are listed); the bytes are read in the next step (pipeline/normalize/per_input.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import apache_beam as beam
from apache_beam.pvalue import TaggedOutput
from apache_beam.transforms.window import GlobalWindows

from bunzai_codecs.core.sniff import MAX_INPUT_BYTES
from pipeline.normalize.archives import archive_input, chain_url
from pipeline.normalize.counts import deleted_counts
from pipeline.normalize.elements import REJECTS, Pending, reject
from pipeline.normalize.packed import (
    UNKNOWN_SIZE,
    InputUnits,
    cell_of,
    pack_pending,
    unit_of,
    unpack_pending,
)
from pipeline.normalize.pairing import PairWithPrevious
from pipeline.normalize.since import Previous, previous_inventory
from pipeline.normalize.streams import Results, results
from pipeline.runtime.counters import count
from pipeline.runtime.options import NormalizeConfig
from pipeline.runtime.storage import FileRef, InputSpec, Storage, checksum, list_files

#: tagged output of ``ListFiles``: ``(input index, files matched)``
PATTERNS = "patterns"
#: tagged output of ``Pack``: ``(files, bytes)`` it packed, once per bundle (what the units are
#: cut from: ``packed.units_for``)
TOTALS = "totals"
#: hash cells ``Spread`` groups the packed batches into: enough for a big fleet's parallelism
SPREAD_CELLS = 4096
#: listed files per packed batch: a few KiB compressed, and many batches even for a small archive
PACK = 64


class _ListFiles(beam.DoFn):
    def __init__(
        self, inputs: tuple[str, ...], storage: Storage, output: str | None, max_bytes: int = MAX_INPUT_BYTES
    ) -> None:
        self.inputs = inputs
        self.storage = storage
        self.output = output
        self.max_bytes = max_bytes

    def setup(self) -> None:
        self.out_fs: Any = None
        self.out_root = ""
        if self.output is not None:
            try:
                self.out_fs, root = self.storage.fs(self.output)
                self.out_root = root.rstrip("/") + "/"
            except Exception:  # the output is checked where it is written
                pass

    def display_data(self) -> dict[str, Any]:  # the job page (Dataflow) shows what is read
        return {"inputs": " ".join(self.inputs)}

    def _is_output(self, fs: Any, path: str) -> bool:
        """A file under the output folder (``--input . --output out``): never read back as input."""
        return fs is self.out_fs and (path + "/").startswith(self.out_root)

    def process(self, index: int) -> Iterator[Any]:
        url = self.inputs[index]
        spec = InputSpec.parse(url)
        errors: list[OSError] = []
        n = 0
        try:
            fs, path = self.storage.fs(url)
            proto = archive_input(url, fs, path, self.max_bytes)
            if proto is not None:  # a plain archive: a folder of inputs (pipeline/normalize/archives.py)
                spec = InputSpec.parse(chain_url(proto, url))
                fs, path = self.storage.fs(spec.url)
            root = spec.root_path(fs)
            for p, info in list_files(fs, path, on_error=errors.append, groups=True):
                if self._is_output(fs, p):
                    continue
                n += 1
                count("inputs_listed")
                parts = info.get("parts")
                if parts:  # one input of several files (a card folder, a character and its picture)
                    uri, base = spec.uri_for(root, p), info["base"]
                    yield FileRef(uri, index, base, info.get("size"), checksum(info), tuple(parts))
                    continue
                yield FileRef(spec.uri_for(root, p), index, p, info.get("size"), checksum(info))
        except Exception as exc:  # a missing path, a bucket we may not list, an unreadable zip
            yield TaggedOutput(REJECTS, reject(url, "list", exc))
        for err in errors:  # a folder below the input that could not be listed (or vanished)
            yield TaggedOutput(REJECTS, reject(getattr(err, "filename", None) or url, "list", err))
        yield TaggedOutput(PATTERNS, (index, n))


@dataclass
class ListFiles(beam.PTransform):
    """Input indexes -> ``FileRef`` per file (main), ``rejects``, ``patterns`` ((index, matched)).

    Globs are expanded on the workers, one input per element, streamed: the listing of one folder
    (or one S3 page) is in memory at a time. Files under ``output`` are never listed. An input that
    is a plain ``.zip`` / ``.tar`` / ``.tar.gz`` archive, not a card container, lists its members
    (pipeline/normalize/archives.py); ``max_bytes`` bounds the read that tells the two apart.
    """

    inputs: tuple[str, ...]
    storage: Storage
    output: str | None = None
    max_bytes: int = MAX_INPUT_BYTES

    def expand(self, indexes: Any) -> Any:
        dofn = _ListFiles(self.inputs, self.storage, self.output, self.max_bytes)
        return indexes | beam.ParDo(dofn).with_outputs(REJECTS, PATTERNS, main="files")


class SharedSizes(beam.PTransform):
    """``Pending`` -> ``(size, None)`` for every size more than one listed file has: the side
    input ``ReadBytes`` sets ``shared`` from. Identical files (the only ones whose entities share
    ids) have equal sizes, so an input of a size nobody else has writes its exports straight to
    their paths; the others go through the staged commit that picks one winner per path. Only
    sizes cross the shuffle (summed per size where they are listed), never the files."""

    def expand(self, pending: Any) -> Any:
        return (
            pending
            | "Sizes" >> beam.FlatMap(lambda p: [(p.ref.size, 1)] if p.ref.size is not None else [])
            | "PerSize" >> beam.CombinePerKey(sum)
            | "Repeated" >> beam.FlatMap(lambda kv: [(kv[0], None)] if kv[1] > 1 else [])
        )


class _Pack(beam.DoFn):
    def start_bundle(self) -> None:
        self.buf: list[Pending] = []
        self.files = self.bytes = 0

    def process(self, p: Pending) -> Iterator[tuple[int, bytes]]:
        count("inputs_queued")
        self.buf.append(p)
        self.files += 1
        self.bytes += UNKNOWN_SIZE if p.ref.size is None else p.ref.size
        if len(self.buf) >= PACK:
            yield self._batch()

    def finish_bundle(self) -> Iterator[Any]:
        if self.buf:
            yield GlobalWindows.windowed_value(self._batch())
        if self.files:
            yield TaggedOutput(TOTALS, GlobalWindows.windowed_value((self.files, self.bytes)))

    def _batch(self) -> tuple[int, bytes]:
        buf, self.buf = self.buf, []
        return cell_of(buf[0].ref.uri, SPREAD_CELLS), pack_pending(buf)


class Pack(beam.PTransform):
    """``Pending`` -> ``(cell, batch)`` (main): ``PACK`` of them per zlib-compressed batch (uris of
    one archive share long prefixes). The local runners hold shuffled data in memory, and what they
    hold per listed file is then ~40 bytes instead of a grouping-table entry with decoded objects.
    ``totals``: ``(files, bytes)`` packed, per bundle."""

    def expand(self, pending: Any) -> Any:
        return pending | beam.ParDo(_Pack()).with_outputs(TOTALS, main="batches")


class _Repack(beam.DoFn):
    """Batches -> batches of one unit each, keyed by their unit."""

    def __init__(self, units: InputUnits) -> None:
        self.units = units

    def start_bundle(self) -> None:
        self.bufs: dict[int, list[Pending]] = {}
        self.count = 0

    def process(self, item: tuple[int, bytes], totals: Any) -> Iterator[tuple[int, bytes]]:
        if not self.count:
            self.count = self.units.count(totals)
        for p in unpack_pending(item[1]):
            unit = unit_of(p.ref.uri, self.count)
            buf = self.bufs.setdefault(unit, [])
            buf.append(p)
            if len(buf) >= PACK:
                yield unit, pack_pending(self.bufs.pop(unit))

    def finish_bundle(self) -> Iterator[Any]:
        for unit, buf in sorted(self.bufs.items()):
            yield GlobalWindows.windowed_value((unit, pack_pending(buf)))


@dataclass
class Spread(beam.PTransform):
    """``Pack``'s batches -> their ``Pending``, spread over the workers a unit at a time
    (pipeline/normalize/packed.py): every input of a unit comes out of one element of the shuffle,
    one after the other, on one worker (the listing of one input is one element, so everything
    downstream of it would otherwise run on one worker). ``totals``: ``Pack``'s."""

    units: InputUnits
    totals: Any

    def by_unit(self) -> beam.ParDo:
        """Batches -> ``(unit, batch)``: the batches repacked one unit each."""
        return beam.ParDo(_Repack(self.units), beam.pvalue.AsList(self.totals))

    def expand(self, packed: Any) -> Any:
        return (
            packed
            | "ByUnit" >> self.by_unit()
            | "Group" >> beam.GroupByKey()
            | "Unpack" >> beam.FlatMap(lambda kv: (p for batch in kv[1] for p in unpack_pending(batch)))
        )


class Listed(NamedTuple):
    """What ``ListInputs`` gives the run."""

    #: one ``Pending`` per distinct listed file, spread over the workers
    pending: Any
    #: the same files as ``Pack``'s batches (what the balance checks the outputs against)
    packed: Any
    #: ``(files, bytes)`` listed, in parts: what the units are cut from (``packed.InputUnits``)
    totals: Any
    #: ``(size, None)`` for every size several listed files share (``SharedSizes``); None
    #: without exports
    shared_sizes: Any
    #: ``(input index, files matched)``
    patterns: Any
    #: uris only the previous run had (``--since``; None when nothing is joined)
    deleted: Any
    #: the listing's rejects (an input that does not exist, a folder that cannot be listed) and
    #: the count of deleted inputs
    results: Results


@dataclass
class ListInputs(beam.PTransform):
    """Pipeline -> ``Listed``: every input listed, each file once (paired with its previous
    inventory row under ``--since``: ``previous``, a run whose results are reused), packed and
    spread for reading."""

    cfg: NormalizeConfig
    previous: Previous | None

    def expand(self, pbegin: Any) -> Listed:
        cfg = self.cfg
        listing = (
            pbegin
            | "Inputs" >> beam.Create(list(range(len(cfg.inputs))))
            | "Files" >> ListFiles(cfg.inputs, cfg.storage, cfg.output, cfg.max_file_bytes)
        )
        if self.previous is not None:
            previous = previous_inventory(pbegin, self.previous, cfg.storage)
            paired = listing.files | "PairWithPrevious" >> PairWithPrevious(previous)
        else:  # one input lists each file once: nothing to join unless there are several
            paired = listing.files | "PairWithPrevious" >> PairWithPrevious(join=len(cfg.inputs) > 1)
        # whether another listed file has the same size matters only to exports (see SharedSizes)
        shared_sizes = paired.pending | "SharedSizes" >> SharedSizes() if cfg.export else None
        packed = paired.pending | "Pack" >> Pack()
        units = InputUnits(cfg.shard_bytes)
        # the listing of one input is one element: spread over the workers, a unit at a time
        pending = packed.batches | "Spread" >> Spread(units, packed[TOTALS])
        counts = {}
        if paired.deleted is not None:
            counts["deleted"] = paired.deleted | "CountDeleted" >> beam.FlatMap(deleted_counts)
        made = results(rejects={"list": listing.rejects}, counts=counts)
        return Listed(
            pending, packed.batches, packed[TOTALS], shared_sizes, listing.patterns, paired.deleted, made
        )


__all__ = [
    "PACK",
    "PATTERNS",
    "SPREAD_CELLS",
    "TOTALS",
    "ListFiles",
    "ListInputs",
    "Listed",
    "Pack",
    "SharedSizes",
    "Spread",
]
