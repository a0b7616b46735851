"""The packed-shuffle codec: how the job's few per-input records cross a shuffle.

The local runners (the DirectRunner's FnApiRunner) hold a shuffle's values in the job process,
decoded into a grouping table. So what crosses a shuffle per listed file is packed: rows (JSON
values) ``PACK`` at a time into one zlib-compressed batch of compact JSON, a few bytes per row
where a record per row was ~2.7 KB (BENCHMARKS.md, "Pipeline memory"). Batches are keyed by a
stable hash cell of a uri (``cell_of``), and uris are compared by 128-bit digests
(``uri_digest``), the same on every worker and run.

Used by ``listing.Pack`` / ``listing.Spread`` (listed files, spread over the workers),
``pairing.PairWithPrevious`` (the dedupe / ``--since`` join) and ``balance.Balance`` (digests).

**Units.** ``Spread`` hands the inputs to the workers a *unit* at a time: the listed files are cut
into ``units_for(totals)`` units by a hash of their uri (``unit_of``), and one unit is one element
of its shuffle, so one worker handles all of a unit's inputs one after the other and writes the
unit's canonical shard once (pipeline/dataset/shards.py). The number of units depends only on what
was listed (how many files, how many bytes), so the same inputs give the same units, and the same
shards, on every runner and with any number of workers: about ``--shard-bytes`` of input each, but
at most ``UNIT_BYTES`` (a unit's lines are sorted in one worker's memory), and, for a small
archive, enough units for a few workers to share it (``UNIT_INPUTS`` inputs at the least each, up
to ``SPREAD_UNITS`` units).
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from bunzai_codecs.core import inflate
from pipeline.normalize.elements import Pending
from pipeline.runtime.storage import FileRef

#: a packed batch is bunzai's own, but every inflate is bounded
PACK_LIMIT = 64 << 20


def uri_digest(uri: str) -> int:
    """128 bits of blake2b of ``uri``: stable on every worker and run (unlike ``hash``). The balance
    compares these; two uris with one digest could only make a sound run look unbalanced (the
    digests would count fewer listed inputs than the inventory has rows), never hide a lost one;
    at a billion uris the odds are ~1e-21."""
    return int.from_bytes(hashlib.blake2b(uri.encode("utf-8"), digest_size=16).digest(), "big")


def cell_of(uri: str, cells: int) -> int:
    """A stable hash cell for ``uri``."""
    return uri_digest(uri) % cells


#: listed bytes per unit at the most, whatever ``--shard-bytes`` says: a unit's canonical lines (about
#: as many bytes as its inputs; more for JSON, less for pictures, which go to the blob store) are
#: held and sorted in one worker's memory, where the runs of the earlier design were flushed at
#: 32 MiB too
UNIT_BYTES = 32 << 20
#: a unit whose lines outgrow this many times its share is sorted in pieces (local files)
SPILL_FACTOR = 4
#: inputs per unit at the least, while a run has fewer than ``SPREAD_UNITS`` units by size
UNIT_INPUTS = 256
#: units a small run is cut into at most by its number of inputs (so that a few workers share it)
SPREAD_UNITS = 64
#: the most units: a unit is at most this many hex digits in a staged record (shards.UNIT_DIGITS)
MAX_UNITS = 4096
#: what an input whose size the store did not give counts for
UNKNOWN_SIZE = 64 << 10


def unit_of(uri: str, units: int) -> int:
    """The unit of the input ``uri`` when the run has ``units`` units."""
    return uri_digest(uri) % units if units > 1 else 0


def units_for(totals: Sequence[tuple[int, int]], shard_bytes: int) -> int:
    """How many units a run's inputs are cut into: ``totals`` are ``(inputs, bytes)`` pairs of the
    listing (summed here, in any order): about ``shard_bytes`` of input per unit, and at least one
    unit per ``UNIT_INPUTS`` inputs up to ``SPREAD_UNITS``; between 1 and ``MAX_UNITS``. A unit
    is never more than ``UNIT_BYTES``."""
    inputs = sum(n for n, _ in totals)
    size = sum(b for _, b in totals)
    by_size = -(-size // max(1, min(shard_bytes, UNIT_BYTES)))
    by_count = min(SPREAD_UNITS, -(-inputs // UNIT_INPUTS))
    return max(1, min(MAX_UNITS, max(by_size, by_count)))


@dataclass(frozen=True)
class InputUnits:
    """The units of a run with ``--shard-bytes`` ``shard_bytes`` (``shards.Units``)."""

    shard_bytes: int

    def count(self, totals: Sequence[tuple[int, int]]) -> int:
        return units_for(totals, self.shard_bytes)

    def of(self, uri: str, count: int) -> int:
        return unit_of(uri, count)

    @property
    def spill_bytes(self) -> int:
        """A unit's lines above this are sorted in pieces (``shards.WriteDatasets``)."""
        return SPILL_FACTOR * min(self.shard_bytes, UNIT_BYTES)


def pack_rows(rows: list[Any]) -> bytes:
    """Rows (JSON values) as one compact zlib batch: what crosses a shuffle packed."""
    return zlib.compress(orjson.dumps(rows), 1)


def unpack_rows(batch: bytes) -> list[Any]:
    """The rows of a ``pack_rows`` batch (inflated within ``PACK_LIMIT``)."""
    rows: list[Any] = orjson.loads(inflate.bounded(batch, PACK_LIMIT))
    return rows


def pack_pending(pending: Iterable[Pending]) -> bytes:
    """Listed files (with their previous inventory rows) as one batch."""
    return pack_rows(
        [
            (p.ref.uri, p.ref.root, p.ref.path, p.ref.size, p.ref.etag, p.prev, p.shared, *_parts(p.ref))
            for p in pending
        ]
    )


def _parts(ref: FileRef) -> tuple[list[str], ...]:
    """The row's last item for an input of several files (``FileRef.parts``), none for a file."""
    return (list(ref.parts),) if ref.parts else ()


def unpack_pending(batch: bytes) -> Iterator[Pending]:
    """The ``Pending`` of a ``pack_pending`` batch."""
    for uri, root, path, size, etag, prev, shared, *parts in unpack_rows(batch):
        yield Pending(FileRef(uri, root, path, size, etag, tuple(parts[0]) if parts else ()), prev, shared)


def packed_uris(packed: tuple[int, bytes]) -> list[str]:
    """The uris of a ``(cell, pack_pending batch)``."""
    return [row[0] for row in unpack_rows(packed[1])]


__all__ = [
    "MAX_UNITS",
    "PACK_LIMIT",
    "SPILL_FACTOR",
    "SPREAD_UNITS",
    "UNIT_BYTES",
    "UNIT_INPUTS",
    "UNKNOWN_SIZE",
    "InputUnits",
    "cell_of",
    "pack_pending",
    "pack_rows",
    "packed_uris",
    "unit_of",
    "units_for",
    "unpack_pending",
    "unpack_rows",
    "uri_digest",
]
