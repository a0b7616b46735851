"""The dedupe / ``--since`` join: each listed uri once, with the previous run's inventory row.

Both sides cross the shuffle packed per hash cell (pipeline/normalize/packed.py) and each cell is joined in
memory where it is grouped; with one input and no ``--since`` (a listing never names a file twice)
there is no join at all.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import KW_ONLY, dataclass
from typing import Any

import apache_beam as beam
from apache_beam.pvalue import TaggedOutput
from apache_beam.transforms.window import GlobalWindows

from pipeline.normalize.elements import Pending
from pipeline.normalize.packed import cell_of, pack_rows, unpack_rows
from pipeline.runtime.storage import FileRef

#: tagged output: uris only the previous run had
DELETED = "deleted"
#: hash cells the dedupe / ``--since`` join groups by: one group holds ~1/JOIN_CELLS of the listing
JOIN_CELLS = 256
#: ``now`` and ``prev`` rows per packed join batch
JOIN_PACK = 64
_NOW, _PREV = 0, 1


class _PackForJoin(beam.DoFn):
    """``(uri, row)`` -> ``(cell, (side, batch))``: rows of one hash cell, ``JOIN_PACK`` to a
    zlib-compressed batch. The local runners hold a shuffle's values in the job process, decoded;
    a batch is a few bytes per row there, where a record per row was ~2.7 KB."""

    def __init__(self, side: int) -> None:
        self.side = side

    def start_bundle(self) -> None:
        self.bufs: dict[int, list[Any]] = {}

    def process(self, item: tuple[str, Any]) -> Iterator[tuple[int, tuple[int, bytes]]]:
        cell = cell_of(item[0], JOIN_CELLS)
        buf = self.bufs.setdefault(cell, [])
        buf.append(item)
        if len(buf) >= JOIN_PACK:
            yield self._batch(cell)

    def finish_bundle(self) -> Iterator[Any]:
        for cell in list(self.bufs):
            yield GlobalWindows.windowed_value(self._batch(cell))

    def _batch(self, cell: int) -> tuple[int, tuple[int, bytes]]:
        rows = self.bufs.pop(cell)
        return cell, (self.side, pack_rows(rows))


def _pair_cell(item: tuple[int, Any]) -> Iterator[Any]:
    """One hash cell's batches -> a ``Pending`` per distinct listed uri (with its previous
    inventory row, if any) and ``deleted`` for each uri only the previous run had."""
    now: dict[str, list[list[Any]]] = {}
    prev: dict[str, dict[str, Any]] = {}
    for side, packed in item[1]:
        rows = unpack_rows(packed)
        if side == _NOW:
            for uri, ref in rows:
                now.setdefault(uri, []).append(ref)
        else:
            for uri, row in rows:
                prev.setdefault(uri, row)  # an inventory has one row per uri
    for uri in sorted(now.keys() | prev.keys()):
        refs = now.get(uri)
        if refs:
            # two inputs naming one file: it is read once, from the first input
            root, path, size, etag, parts = min(refs, key=lambda r: r[0])
            yield Pending(FileRef(uri, root, path, size, etag, tuple(parts)), prev.get(uri))
        else:
            yield TaggedOutput(DELETED, uri)


@dataclass(frozen=True)
class Paired:
    #: one ``Pending`` per distinct uri
    pending: Any
    #: uris only the previous run had; None without a join (no previous run to have any)
    deleted: Any


@dataclass
class PairWithPrevious(beam.PTransform):
    """``FileRef``s + the previous inventory (uri -> row) -> ``Pending`` per distinct uri, and the
    uris only the previous run had (``deleted``).

    ``previous=None`` with ``join=False`` (one input and no ``--since``: a listing never names a
    file twice) skips the join: the local runners hold a shuffle's data in memory, and this one
    would hold every listed file."""

    previous: Any = None
    _: KW_ONLY
    join: bool = True

    def expand(self, refs: Any) -> Paired:
        if not self.join and self.previous is None:
            return Paired(refs | "AsPending" >> beam.Map(Pending), None)
        # both sides cross the shuffle packed per hash cell (``_PackForJoin``); each cell is
        # joined in memory where it is grouped
        now = (
            refs
            | "ByUri" >> beam.Map(lambda r: (r.uri, (r.root, r.path, r.size, r.etag, list(r.parts))))
            | "PackNow" >> beam.ParDo(_PackForJoin(_NOW))
        )
        previous = self.previous if self.previous is not None else refs.pipeline | beam.Create([])
        prev = (
            previous
            | "PrevByUri" >> beam.Map(lambda row: (row["uri"], row))
            | "PackPrev" >> beam.ParDo(_PackForJoin(_PREV))
        )
        out = (
            (now, prev)
            | "Sides" >> beam.Flatten()
            | "Join" >> beam.GroupByKey()
            | "Pair" >> beam.FlatMap(_pair_cell).with_outputs(DELETED, main="pending")
        )
        return Paired(out.pending, out.deleted)


__all__ = ["DELETED", "JOIN_CELLS", "JOIN_PACK", "PairWithPrevious", "Paired"]
