"""``--bigquery-table``: the committed entity index loaded into BigQuery with Beam's BigQuery sink,
its table schema made from the index's ``COLUMNS``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import apache_beam as beam

from pipeline.dataset.index.parquet import read_rows
from pipeline.dataset.index.rows import COLUMNS, INDEX
from pipeline.dataset.shards import ShardInfo
from pipeline.runtime.storage import Output

#: ``PROJECT:DATASET.TABLE`` (a project id may carry a ``domain.com:`` prefix)
BIGQUERY_TABLE = re.compile(
    r"^(?P<project>(?:[a-z][a-z0-9.-]*[a-z0-9]:)?[a-z][a-z0-9-]{4,28}[a-z0-9])"
    r":(?P<dataset>[A-Za-z0-9_]{1,1024})\.(?P<table>[A-Za-z0-9_-]{1,1024})$"
)
_BQ_TYPES = {"string": "STRING", "int32": "INTEGER", "int64": "INTEGER", "list<string>": "STRING"}


def bigquery_schema() -> dict[str, Any]:
    """The BigQuery table schema of the index (``{"fields": [...]}``, as ``bq`` and Beam take it)."""
    return {
        "fields": [
            {
                "name": c.name,
                "type": _BQ_TYPES[c.type],
                "mode": "REPEATED" if c.type.startswith("list") else "NULLABLE" if c.nullable else "REQUIRED",
                "description": c.description.replace("`", ""),
            }
            for c in COLUMNS
        ]
    }


def check_bigquery_table(spec: str) -> str:
    """``spec`` when it is ``PROJECT:DATASET.TABLE``; else ``ValueError`` (one line)."""
    if not BIGQUERY_TABLE.match(spec):
        raise ValueError(
            f"--bigquery-table {spec!r} is not PROJECT:DATASET.TABLE (e.g. my-project:bunzai.entities)"
        )
    return spec


class _CommittedRows(beam.DoFn):
    """The rows of one committed index file (read once the manifest is written)."""

    def __init__(self, output: Output) -> None:
        self.output = output

    def process(self, shard: ShardInfo, _manifest: Any) -> Iterator[dict[str, Any]]:
        fs, root = self.output.open()
        yield from read_rows(fs, f"{root}/{shard.rel}")


@dataclass
class LoadBigQuery(beam.PTransform):
    """The run's shards (``ShardInfo``s; the index files are picked) -> their rows loaded into a BigQuery table with
    Beam's BigQuery sink (file loads; the table is replaced: it mirrors the last committed run).
    ``committed`` (the commit's output, the manifest's URL) gates the load: a run that is not
    committed loads nothing."""

    table: str
    output: Output
    committed: Any

    def __post_init__(self) -> None:
        check_bigquery_table(self.table)

    def expand(self, shards: Any) -> Any:
        from apache_beam.io.gcp.bigquery import BigQueryDisposition, WriteToBigQuery

        return (
            shards
            | "IndexFiles" >> beam.Filter(lambda s: s.dataset == INDEX)
            | "AfterCommit"
            >> beam.ParDo(_CommittedRows(self.output), beam.pvalue.AsSingleton(self.committed))
            | "Load"
            >> WriteToBigQuery(
                self.table,
                schema=bigquery_schema(),
                method=WriteToBigQuery.Method.FILE_LOADS,
                create_disposition=BigQueryDisposition.CREATE_IF_NEEDED,
                write_disposition=BigQueryDisposition.WRITE_TRUNCATE,
            )
        )


__all__ = ["BIGQUERY_TABLE", "LoadBigQuery", "bigquery_schema", "check_bigquery_table"]
