"""The entity index's files: ``index/part-NNNNN-of-NNNNN.parquet``, each a sorted shard of its rows
written as Parquet (``INDEX_SPEC``: pipeline/dataset/shards.py sorts, ``parquet_sink`` writes) and
read back for ``--since`` (``CarryIndex``) and the BigQuery load (``read_rows``). Written with pyarrow through the output's fsspec filesystem, byte for byte the same
for the same rows (pipeline/dataset/index/__init__.py says why not with Beam's Parquet sink).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import apache_beam as beam
import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.dataset.index.rows import COLUMNS, INDEX, INDEX_VERSION, ROW_GROUP
from pipeline.dataset.shards import ShardSpec
from pipeline.runtime.storage import Storage

_ARROW = {
    "string": pa.string(),
    "int32": pa.int32(),
    "int64": pa.int64(),
    # named as Parquet's compliant nested type names it, so a file reads back with this very schema
    "list<string>": pa.list_(pa.field("element", pa.string(), nullable=False)),
}
#: the Parquet (Arrow) schema of the index files
SCHEMA = pa.schema(
    [pa.field(c.name, _ARROW[c.type], nullable=c.nullable) for c in COLUMNS],
    metadata={b"bunzai.index.version": str(INDEX_VERSION).encode("ascii")},
)


# -- writing -------------------------------------------------------------------------------------


class _Hashing:
    """A write-only file that digests and counts what goes through it (Parquet writes sequentially)."""

    def __init__(self, f: Any) -> None:
        self.f = f
        self.sha = hashlib.sha256()
        self.size = 0
        self.closed = False

    def write(self, data: Any) -> int:
        b = bytes(data)
        self.f.write(b)
        self.sha.update(b)
        self.size += len(b)
        return len(b)

    def tell(self) -> int:
        return self.size

    def flush(self) -> None:
        self.f.flush()

    def close(self) -> None:  # the caller's ``open_atomic`` closes the real file
        self.closed = True

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def readable(self) -> bool:
        return False


def write_parquet(rows: Iterable[dict[str, Any]], f: Any) -> tuple[int, int, str]:
    """``rows`` (index row dicts, in order) as one Parquet file into the binary file ``f``;
    ``(rows, bytes, sha256)``. The bytes depend on the rows (and the pyarrow version) only."""
    out = _Hashing(f)
    n = 0
    with pq.ParquetWriter(
        out,
        SCHEMA,
        compression="zstd",
        version="2.6",
        use_dictionary=True,
        write_statistics=True,
    ) as writer:
        batch: list[dict[str, Any]] = []
        for row in rows:
            batch.append(row)
            if len(batch) >= ROW_GROUP:
                writer.write_table(pa.Table.from_pylist(batch, schema=SCHEMA), row_group_size=ROW_GROUP)
                n += len(batch)
                batch = []
        if batch or n == 0:  # an empty index is a file with the schema and no rows
            writer.write_table(pa.Table.from_pylist(batch, schema=SCHEMA), row_group_size=ROW_GROUP)
            n += len(batch)
    return n, out.size, out.sha.hexdigest()


def parquet_sink(lines: Iterable[bytes], f: Any) -> tuple[int, int, str]:
    """A shard's rows (their JSON lines, in order) as one Parquet file (``shards.Sink``)."""
    return write_parquet((orjson.loads(line) for line in lines), f)


#: the index's files: ``index/part-NNNNN-of-NNNNN.parquet``, each a sorted shard of rows
INDEX_SPEC = ShardSpec(INDEX, suffix=".parquet", sink=parquet_sink)


# -- reading (--since; the BigQuery load) -----------------------------------------------------------


def read_rows(fs: Any, path: str) -> Iterator[dict[str, Any]]:
    """The rows of one index file. Read whole through ``cat_file`` (which retries a store's
    transient errors; a file object may read a failed range as the end of the file)."""
    pf = pq.ParquetFile(pa.BufferReader(fs.cat_file(path)))
    for batch in pf.iter_batches(batch_size=ROW_GROUP):
        yield from batch.to_pylist()


class _ReadIndex(beam.DoFn):
    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    def process(self, url: str) -> Iterator[dict[str, Any]]:
        fs, path = self.storage.fs(url)
        yield from read_rows(fs, path)


def _carry(row: dict[str, Any], skip: dict[str, bool]) -> Iterator[dict[str, Any]]:
    if row["source_uri"] not in skip:
        yield row


@dataclass
class CarryIndex(beam.PTransform):
    """The previous run's index rows of inputs this run did not process again (``skip``: a side
    input, uri -> True, of the refreshed and deleted inputs)."""

    urls: Sequence[str]
    storage: Storage
    skip: Any

    def expand(self, pbegin: Any) -> Any:
        return (
            pbegin
            | "Files" >> beam.Create(list(self.urls))
            | "Spread" >> beam.Reshuffle()
            | "Rows" >> beam.ParDo(_ReadIndex(self.storage))
            | "Keep" >> beam.FlatMap(_carry, self.skip)
        )


__all__ = ["INDEX_SPEC", "SCHEMA", "CarryIndex", "parquet_sink", "read_rows", "write_parquet"]
