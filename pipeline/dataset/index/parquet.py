"""The entity index's files: ``index/part-NNNNN-of-NNNNN.parquet``, written from the sorted shards of
its rows (``WriteIndex``) and read back for ``--since`` (``CarryIndex``) and the BigQuery load
(``read_rows``). Written with pyarrow through the output's fsspec filesystem, byte for byte the same
for the same rows (pipeline/dataset/index/__init__.py says why not with Beam's Parquet sink).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any

import apache_beam as beam
import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.dataset.index.rows import COLUMNS, INDEX, INDEX_VERSION, ROW_GROUP, row_record
from pipeline.dataset.shards import ShardInfo, ShardSpec, WriteShards
from pipeline.runtime.storage import Output, Storage, open_atomic, read_lines, remove_file, staged_path

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


def parquet_rel(jsonl_rel: str) -> str:
    return jsonl_rel.removesuffix(".jsonl") + ".parquet"


class _ToParquet(beam.DoFn):
    """A staged, sorted JSONL shard of rows -> the Parquet file beside it (the JSONL is removed)."""

    def __init__(self, output: Output, staging: str) -> None:
        self.output = output
        self.staging = staging

    def setup(self) -> None:
        self.fs, self.root = self.output.open()

    def process(self, shard: ShardInfo) -> Iterator[ShardInfo]:
        src = f"{self.root}/{staged_path(self.staging, shard.rel)}"
        rel = parquet_rel(shard.rel)
        read = hashlib.sha256()

        def rows() -> Iterator[dict[str, Any]]:
            # bounded by the size the merge wrote, not by the store's answer to a size query: in
            # the S3 fault test (tests/pipeline/test_faults.py) that answer was 0 for the object
            # just written, and the shard read as empty
            for line in read_lines(self.fs, src, 0, shard.bytes):
                read.update(line)
                yield orjson.loads(line)

        with open_atomic(self.fs, f"{self.root}/{staged_path(self.staging, rel)}") as f:
            n, size, sha = write_parquet(rows(), f)
            if n != shard.records or read.hexdigest() != shard.sha256:  # before the file appears
                raise OSError(
                    f"{rel}: read {n} rows of the {shard.records} its sorted shard holds, or other bytes"
                )
        remove_file(self.fs, src)
        yield ShardInfo(shard.dataset, rel, n, size, sha)


@dataclass
class WriteIndex(beam.PTransform):
    """Index rows (producers: a dict of PCollections by name, each written where it is made) ->
    the staged Parquet shards ``index/part-NNNNN-of-NNNNN.parquet``, as ``ShardInfo``s for the
    manifest and the commit."""

    output: Output
    staging: str
    _: KW_ONLY
    target_bytes: int

    def expand(self, producers: Any) -> Any:
        sorted_rows = producers | "Sort" >> WriteShards(
            INDEX,
            ShardSpec(INDEX),
            self.output,
            self.staging,
            target_bytes=self.target_bytes,
            record=row_record,
        )
        return sorted_rows | "Parquet" >> beam.ParDo(_ToParquet(self.output, self.staging))


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


__all__ = ["SCHEMA", "CarryIndex", "WriteIndex", "parquet_rel", "read_rows", "write_parquet"]
