"""The run's sharded datasets: where each is written, and how one of its elements becomes a
sortable shard record (pipeline/dataset/shards.py).

| dataset | files | elements (``streams.Results``) |
|---|---|---|
| canonical | ``canonical/part-*.jsonl`` | shard records of vaud-json lines (a carried line is never parsed in full) |
| fidelity | ``fidelity/rows-*.jsonl`` | fidelity rows (``FidelityRow.to_json()``) |
| rejects | ``rejects/part-*.jsonl`` | reject rows |
| inventory | ``inventory/part-*.jsonl`` | inventory rows, one per listed input |

Rows are dicts until their run is staged: the record (placed by a key's hash, ordered by a natural
key) is made by the shard writer, fused with the stage that made the row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from pipeline.dataset.shards import ShardSpec, record
from pipeline.normalize.elements import ValidInput

CANONICAL, FIDELITY, REJECTS_DS, INVENTORY_DS = "canonical", "fidelity", "rejects", "inventory"


def canonical_record(entity_id: str, uri: str, line: bytes) -> bytes:
    """The shard record of a canonical line: by entity id, then source uri."""
    return record(entity_id, [entity_id, uri], line)


def canonical_records(v: ValidInput) -> Iterator[bytes]:
    """The shard records of an input's valid entities."""
    for ve in v.accepted:
        yield canonical_record(ve.entity.id, v.uri, ve.line)


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


@dataclass(frozen=True)
class Dataset:
    #: the dataset's name: its folder, the manifest's key and the ``streams.Results`` field
    name: str
    spec: ShardSpec
    #: an element -> its shard record; None: the elements are shard records already
    record: Callable[[Any], bytes] | None = None


#: every sharded dataset, in the order they are written
DATASETS = (
    Dataset(CANONICAL, ShardSpec("canonical")),
    Dataset(REJECTS_DS, ShardSpec("rejects"), reject_record),
    Dataset(INVENTORY_DS, ShardSpec("inventory"), inventory_record),
    Dataset(FIDELITY, ShardSpec("fidelity", "rows"), fidelity_record),
)


__all__ = [
    "CANONICAL",
    "DATASETS",
    "FIDELITY",
    "INVENTORY_DS",
    "REJECTS_DS",
    "Dataset",
    "canonical_record",
    "canonical_records",
    "fidelity_record",
    "inventory_record",
    "reject_record",
]
