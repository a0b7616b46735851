"""The entity index: one Parquet row per canonical entity, the columns a hub filters on.

    index/part-NNNNN-of-NNNNN.parquet

A row is made by ``index_row`` — a pure function of the entity (its body, links, provenance and
warnings, as the canonical line holds them) and the one pipeline fact the entity does not carry,
the status of its input's native round trip. ``COLUMNS`` is the one definition of the table: the
Parquet schema (``SCHEMA``), the BigQuery table schema (``bigquery_schema``), the JSON Schema of a
row (docs/schema/index-row.schema.json) and the column table of docs/entity-index.md are all made
from it (``python -m pipeline.index docs`` writes both; ``make schema`` runs it).

The rows take the path of every other dataset (pipeline/dataset/shards.py): each is a sortable record made
where its entity is made (fused with ``RoundTrip``, or ``Validate`` with ``--fidelity off``), the
records are externally sorted and cut into shards by content, and each sorted shard is then written
as one Parquet file into the run's staging folder, for the commit (pipeline/dataset/commit.py). So the same
inputs give the same files, byte for byte: rows in a fixed order (by a hash of the entity id), row
groups of a fixed number of rows, and no timestamp in the file (Parquet's ``created_by`` names the
pyarrow version only). Unchanged inputs of a ``--since`` run carry their rows from the previous
run's index files, as their canonical lines are carried.

The Parquet files are written with pyarrow through the output's fsspec filesystem rather than with
Beam's file sinks (``apache_beam.io.parquetio``): those write through Beam's own filesystems (no
fsspec stores, no ``--storage-options``), straight to the final folder (past the staged commit),
and assign rows to shards at random — the files would differ from run to run.
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apache_beam as beam
import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.media import items as media_items
from bunzai_codecs.lint import RULES
from pipeline.dataset.shards import ShardInfo, ShardSpec, WriteShards, record
from pipeline.runtime.storage import Output, Storage, open_atomic, read_lines, staged_path

#: the dataset's name: its folder in the output and its key under the manifest's ``outputs.shards``
INDEX = "index"
#: bumped when a column changes meaning or type (also in each file's schema metadata)
INDEX_VERSION = 1
#: rows per Parquet row group: a fixed count, so the files depend on the rows only
ROW_GROUP = 50_000
#: the warning a pipeline adds to an entity whose linked entity failed validation (not a lint rule)
LINKS_REJECTED = "links.rejected"
_CODE = re.compile(r"^([a-z][a-z0-9]*(?:\.[a-z0-9-]+)+): ")


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    #: ``string``, ``int32``, ``int64`` or ``list<string>``
    type: str
    nullable: bool
    description: str


COLUMNS: tuple[Column, ...] = (
    Column("id", "string", False, "The canonical entity id (`<kind>-<24 hex>`), as in the canonical line."),
    Column("kind", "string", False, "`character`, `lorebook`, `regex`, `persona` or `preset`."),
    Column(
        "name",
        "string",
        False,
        "The entity's name: a character's `identity.name`, otherwise `name`; empty when it has none.",
    ),
    Column(
        "creator",
        "string",
        True,
        "`attribution.creator` of a character, persona or preset; null when absent or the kind has none.",
    ),
    Column(
        "tags", "list<string>", False, "`discovery.tags` of a character, `tags` of a lorebook; else empty."
    ),
    Column(
        "links",
        "list<string>",
        False,
        "Ids of the entities it links to (`links.knowledgeRefs`: a card's lorebook and regex set), each "
        "a row of the index too.",
    ),
    Column("source_uri", "string", False, "Where this run read the entity (`source.uri`)."),
    Column("source_format", "string", False, "The format it was decoded from (`source.format`)."),
    Column("source_sha256", "string", False, "sha256 (hex) of the source file (`source.sha256`)."),
    Column("source_bytes", "int64", False, "Size of the source file in bytes (`source.bytes`)."),
    Column(
        "greetings",
        "int32",
        True,
        "A character's greetings: the first message (when not empty), alternate and group-only "
        "greetings; null for other kinds.",
    ),
    Column("lore_entries", "int32", True, "A lorebook's entries; null for other kinds."),
    Column("regex_rules", "int32", True, "A regex set's rules; null for other kinds."),
    Column("prompts", "int32", True, "A preset's prompts; null for other kinds."),
    Column(
        "assets",
        "int32",
        False,
        "Media items the body names: the portrait and every other asset (`media.portrait`, `media.assets`).",
    ),
    Column(
        "text_chars",
        "int64",
        False,
        "Characters (Unicode code points) of every text value in the body: names, descriptions, "
        "greetings, entries, prompts, regexes, extension data.",
    ),
    Column(
        "warnings",
        "int32",
        False,
        "Warnings the entity carries (`warnings` of the canonical line: the codec's and the lint rules').",
    ),
    Column(
        "lint_warnings",
        "int32",
        False,
        "Of those, the warnings of lint rules (and `links.rejected`: a linked entity failed validation).",
    ),
    Column(
        "lint_codes",
        "list<string>",
        False,
        "The distinct rule ids of those lint warnings, sorted (`lorebook.entry-no-trigger`, ...).",
    ),
    Column(
        "native_roundtrip",
        "string",
        True,
        "Status of the source file's same-format round trip (the fidelity `native` row): `lossless`, "
        "`expected`, `unexpected` or `error`; null with `--fidelity off` (or when the check itself "
        "crashed: a `roundtrip` reject says so).",
    ),
)

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
#: what docs/ publishes
SCHEMA_FILE = "schema/index-row.schema.json"
DOC_FILE = "entity-index.md"


# -- the row ---------------------------------------------------------------------------------------


#: how the walk below treats a value by its exact type: ``_TEXT`` a string (its length counts),
#: ``_ITEMS`` a list or tuple, ``_VALUES`` a dict, ``_FIELDS`` a pydantic model (its ``__dict__``),
#: ``_NONE`` anything else; learnt per type the first time one is met (the checks are the type's)
_TEXT, _ITEMS, _VALUES, _FIELDS, _NONE = range(5)
_KIND: dict[type, int] = {
    str: _TEXT,
    list: _ITEMS,
    tuple: _ITEMS,
    dict: _VALUES,
    int: _NONE,
    type(None): _NONE,
}


def _kind(t: type) -> int:
    if issubclass(t, str):
        k = _TEXT
    elif issubclass(t, (list, tuple)):
        k = _ITEMS
    elif issubclass(t, dict):
        k = _VALUES
    elif hasattr(t, "__pydantic_fields__"):
        k = _FIELDS
    else:
        k = _NONE
    _KIND[t] = k
    return k


def _text_chars(value: Any) -> int:
    """Code points of every string inside a body (its fields, lists and opaque dicts' values).

    Each value's treatment is looked up by its exact type (``_KIND``), and a container's strings
    are summed as its children are scanned: a walk over a lorebook's thousands of fields and
    scalars with a ``hasattr`` each was as costly as the card's decode."""
    kinds = _KIND
    t = type(value)
    k = kinds.get(t)
    if k is None:
        k = _kind(t)
    if k == _TEXT:
        return len(value)
    total = 0
    stack = [value]
    pop, push = stack.pop, stack.append
    while stack:
        v = pop()
        t = type(v)
        k = kinds.get(t)
        if k is None:
            k = _kind(t)
        if k == _VALUES:
            kids = v.values()
        elif k == _FIELDS:
            kids = v.__dict__.values()
        elif k == _ITEMS:
            kids = v
        else:
            continue
        for c in kids:
            t = type(c)
            if t is str:
                total += len(c)
                continue
            if c is None or t is int or t is bool:
                continue
            k = kinds.get(t)
            if k is None:
                k = _kind(t)
            if k == _TEXT:
                total += len(c)
            elif k != _NONE:
                push(c)
    return total


def lint_codes(warnings: Iterable[str]) -> list[str]:
    """The lint rule id of each warning that is a lint rule's (``rule: message (path)``)."""
    out = []
    for w in warnings:
        m = _CODE.match(w)
        if m and (m.group(1) in RULES or m.group(1) == LINKS_REJECTED):
            out.append(m.group(1))
    return out


def index_row(entity: CanonicalEntity, *, native: str | None) -> dict[str, Any]:
    """The index row of an entity stamped by this run (its ``source`` set), given the status of its
    input's native round trip (None: not checked)."""
    src = entity.source
    if src is None:
        raise ValueError(f"{entity.kind} {entity.id} has no source: only stamped entities are indexed")
    body: Any = entity.body
    kind = entity.kind
    identity = getattr(body, "identity", None)
    name = identity.name if identity is not None else getattr(body, "name", "")
    attribution = getattr(body, "attribution", None)
    creator = getattr(attribution, "creator", None) if attribution is not None else None
    discovery = getattr(body, "discovery", None)
    tags = (discovery.tags if discovery is not None else getattr(body, "tags", None)) or []
    greetings = None
    if kind == "character":
        g = body.greetings
        greetings = (
            (1 if g.firstMessage else 0) + len(g.alternateGreetings or ()) + len(g.groupOnlyGreetings or ())
        )
    codes = lint_codes(entity.warnings)
    return {
        "id": entity.id,
        "kind": kind,
        "name": name or "",
        "creator": creator if isinstance(creator, str) else None,
        "tags": [str(t) for t in tags],
        "links": list(entity.knowledge_refs),
        "source_uri": src.uri,
        "source_format": src.format,
        "source_sha256": src.sha256,
        "source_bytes": src.bytes,
        "greetings": greetings,
        "lore_entries": len(body.entries) if kind == "lorebook" else None,
        "regex_rules": len(body.rules) if kind == "regex" else None,
        "prompts": len(body.prompts) if kind == "preset" else None,
        "assets": sum(1 for _ in media_items(body)),
        "text_chars": _text_chars(body),
        "warnings": len(entity.warnings),
        "lint_warnings": len(codes),
        "lint_codes": sorted(set(codes)),
        "native_roundtrip": native,
    }


def row_record(row: dict[str, Any]) -> bytes:
    """The sortable shard record of a row (pipeline/dataset/shards.py): placed and ordered by its entity id,
    then its source (identical files give entities with one id)."""
    return record(row["id"], [row["id"], row["source_uri"]], orjson.dumps(row))


def index_rows(entities: Iterable[CanonicalEntity], native: str | None) -> Iterator[dict[str, Any]]:
    for e in entities:
        yield index_row(e, native=native)


def unchecked_rows(valid: Any) -> Iterator[dict[str, Any]]:
    """The rows of a ``ValidInput``'s entities when no round trip is made (``--fidelity off``);
    with one, ``RoundTrip`` makes them (it knows the native status)."""
    return index_rows((ve.entity for ve in valid.accepted), None)


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
        self.fs.rm_file(src)
        yield ShardInfo(shard.dataset, rel, n, size, sha)


class WriteIndex(beam.PTransform):
    """Index rows (producers: a dict of PCollections by name, each written where it is made) ->
    the staged Parquet shards ``index/part-NNNNN-of-NNNNN.parquet``, as ``ShardInfo``s for the
    manifest and the commit."""

    def __init__(self, output: Output, staging: str, *, target_bytes: int) -> None:
        super().__init__()
        self.output = output
        self.staging = staging
        self.target_bytes = target_bytes

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


class CarryIndex(beam.PTransform):
    """The previous run's index rows of inputs this run did not process again (``skip``: a side
    input, uri -> True, of the refreshed and deleted inputs)."""

    def __init__(self, urls: Sequence[str], storage: Storage, skip: Any) -> None:
        super().__init__()
        self.urls = list(urls)
        self.storage = storage
        self.skip = skip

    def expand(self, pbegin: Any) -> Any:
        return (
            pbegin
            | "Files" >> beam.Create(self.urls)
            | "Spread" >> beam.Reshuffle()
            | "Rows" >> beam.ParDo(_ReadIndex(self.storage))
            | "Keep" >> beam.FlatMap(_carry, self.skip)
        )


# -- BigQuery --------------------------------------------------------------------------------------

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


class LoadBigQuery(beam.PTransform):
    """The run's shards (``ShardInfo``s; the index files are picked) -> their rows loaded into a BigQuery table with
    Beam's BigQuery sink (file loads; the table is replaced: it mirrors the last committed run).
    ``committed`` (the commit's output, the manifest's URL) gates the load: a run that is not
    committed loads nothing."""

    def __init__(self, table: str, output: Output, committed: Any) -> None:
        super().__init__()
        self.table = check_bigquery_table(table)
        self.output = output
        self.committed = committed

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


# -- the published schema ---------------------------------------------------------------------------

_JSON_TYPES: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "int32": {"type": "integer", "minimum": -(2**31), "maximum": 2**31 - 1},
    "int64": {"type": "integer"},
    "list<string>": {"type": "array", "items": {"type": "string"}},
}


def json_schema() -> dict[str, Any]:
    """JSON Schema of an index row (docs/schema/index-row.schema.json)."""
    props = {}
    for c in COLUMNS:
        t = dict(_JSON_TYPES[c.type])
        if c.nullable:
            t["type"] = [t["type"], "null"]
        props[c.name] = {**t, "description": c.description, "x-parquet-type": c.type}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://bunzai.invalid/schema/index-row.schema.json",
        "title": "bunzai entity index row",
        "description": "One row of index/part-NNNNN-of-NNNNN.parquet: an entity of the canonical dataset "
        f"(index version {INDEX_VERSION}).",
        "type": "object",
        "properties": props,
        "required": [c.name for c in COLUMNS],
        "additionalProperties": False,
    }


def markdown() -> str:
    """docs/entity-index.md."""
    bq = bigquery_schema()["fields"]
    rows = "\n".join(
        f"| `{c.name}` | `{c.type}` | {'yes' if c.nullable else 'no'} | `{f['type']}` {f['mode']} | "
        f"{c.description} |"
        for c, f in zip(COLUMNS, bq, strict=True)
    )
    return f"""# The entity index

<!-- generated by `make schema` (python -m pipeline.index docs) from pipeline/index.py: do not edit -->

`bunzai normalize` writes, beside the canonical lines, an index of the entities they hold:
`index/part-NNNNN-of-NNNNN.parquet`, one row per canonical line (an entity; identical files give
entities with one id, a row each), with the columns a hub filters on. The manifest lists the files
under `outputs.shards.index` with their rows, bytes and sha256. A dataset built twice from the same
inputs has byte-identical index files: the rows are in a fixed order (by a hash of the entity id),
cut into files as the JSONL datasets are (`--shard-bytes` of rows in their JSON form), in row
groups of {ROW_GROUP:,} rows, zstd-compressed, with no timestamp in the file. The schema
(version {INDEX_VERSION}, recorded in each file's metadata as `bunzai.index.version`) is also
published as a JSON Schema of a row: [schema/index-row.schema.json](schema/index-row.schema.json).
With `--bigquery-table PROJECT:DATASET.TABLE` the same rows are loaded into BigQuery
(deploy/README.md); the BigQuery column is given beside each Parquet type.

| column | Parquet type | nullable | BigQuery | what it holds |
|---|---|---|---|---|
{rows}

Join it with the canonical lines by `id` (each line's `id`) for anything the index does not hold;
the README's "Querying the dataset" has DuckDB examples.
"""


def write_docs(docs: Path) -> list[Path]:
    """docs/schema/index-row.schema.json and docs/entity-index.md, written atomically."""
    from bunzai_codecs.core.files import write_atomic
    from bunzai_codecs.support import schema_bytes

    out = [docs / SCHEMA_FILE, docs / DOC_FILE]
    out[0].parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out[0], schema_bytes(json_schema()))
    write_atomic(out[1], markdown().encode("utf-8"))
    return out


def main(argv: Sequence[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m pipeline.index DOCS_DIR", file=sys.stderr)
        return 2
    for p in write_docs(Path(argv[0])):
        print(p)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))


__all__ = [
    "BIGQUERY_TABLE",
    "COLUMNS",
    "DOC_FILE",
    "INDEX",
    "INDEX_VERSION",
    "SCHEMA",
    "SCHEMA_FILE",
    "CarryIndex",
    "LoadBigQuery",
    "WriteIndex",
    "bigquery_schema",
    "check_bigquery_table",
    "index_row",
    "index_rows",
    "json_schema",
    "lint_codes",
    "markdown",
    "read_rows",
    "row_record",
    "unchecked_rows",
    "write_parquet",
]
