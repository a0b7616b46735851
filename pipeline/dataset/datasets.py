"""The run's sharded datasets: where each is written, and how one of its elements becomes a
sortable shard record (pipeline/dataset/shards.py).

| dataset | files | elements (``streams.Results``) | shards |
|---|---|---|---|
| canonical | ``canonical/part-*.jsonl`` | ``CanonicalLine``: a vaud-json line, its entity id and its input's uri (a carried line is never parsed in full) | one per unit of inputs, written once |
| fidelity | ``fidelity/rows-*.jsonl`` | fidelity rows (``FidelityRow.to_json()``) | by hash cell |
| rejects | ``rejects/part-*.jsonl`` | reject rows | by hash cell |
| inventory | ``inventory/part-*.jsonl`` | inventory rows, one per listed input | by hash cell |
| index | ``index/part-*.parquet`` | entity index rows (``index.rows.index_row``) | by hash cell, each shard one Parquet file |

Rows are dicts until their run is staged: the record (placed by a key's hash, ordered by a natural
key) is made by the shard writer, fused with the stage that made the row.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import orjson

from pipeline.dataset.index.parquet import INDEX_SPEC
from pipeline.dataset.index.rows import INDEX, row_record
from pipeline.dataset.shards import Dataset, ShardSpec, record, sort_key
from pipeline.normalize.elements import ValidInput

CANONICAL, FIDELITY, REJECTS_DS, INVENTORY_DS = "canonical", "fidelity", "rejects", "inventory"


class CanonicalLine(NamedTuple):
    """A canonical line on its way to its shard: the uri of the input it came from decides its unit."""

    uri: str
    id: str
    line: bytes


def canonical_lines(v: ValidInput) -> Iterator[CanonicalLine]:
    """The canonical lines of an input's valid entities."""
    for ve in v.accepted:
        yield CanonicalLine(v.uri, ve.entity.id, ve.line)


def canonical_place(c: CanonicalLine) -> tuple[str, bytes, bytes]:
    """Where a canonical line goes: its input's unit; ordered by entity id, then source uri."""
    return c.uri, sort_key(c.id, [c.id, c.uri]), c.line


def canonical_record(entity_id: str, uri: str, line: bytes) -> bytes:
    """The shard record of a canonical line: by entity id, then source uri (what orders it inside
    its unit's shard)."""
    return record(entity_id, [entity_id, uri], line)


def fidelity_record(row: dict[str, Any]) -> bytes:
    """The shard record of a fidelity row."""
    natural = [row["entity"], row["check"], row["target"], row["uri"]]
    return record(row["entity"], natural, orjson.dumps(row))


def reject_record(rec: dict[str, Any]) -> bytes:
    """The shard record of a reject."""
    natural = [rec["uri"], rec["stage"], rec["error"], rec["path"] or "", rec["message"]]
    return record(rec["uri"], natural, orjson.dumps(rec))


def inventory_record(row: dict[str, Any]) -> bytes:
    """The shard record of an inventory row."""
    return record(row["uri"], [row["uri"]], orjson.dumps(row))


#: every sharded dataset, in the order they are written
DATASETS = (
    Dataset(CANONICAL, ShardSpec("canonical"), place=canonical_place),
    Dataset(REJECTS_DS, ShardSpec("rejects"), reject_record),
    Dataset(INVENTORY_DS, ShardSpec("inventory"), inventory_record),
    Dataset(FIDELITY, ShardSpec("fidelity", "rows"), fidelity_record),
    Dataset(INDEX, INDEX_SPEC, row_record),
)


__all__ = [
    "CANONICAL",
    "DATASETS",
    "FIDELITY",
    "INVENTORY_DS",
    "REJECTS_DS",
    "CanonicalLine",
    "canonical_lines",
    "canonical_place",
    "canonical_record",
    "fidelity_record",
    "inventory_record",
    "reject_record",
]
