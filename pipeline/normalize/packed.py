"""The packed-shuffle codec: how the job's few per-input records cross a shuffle.

The local runners (the DirectRunner's FnApiRunner) hold a shuffle's values in the job process,
decoded into a grouping table. So what crosses a shuffle per listed file is packed: rows (JSON
values) ``PACK`` at a time into one zlib-compressed batch of compact JSON, a few bytes per row
where a record per row was ~2.7 KB (BENCHMARKS.md, "Pipeline memory"). Batches are keyed by a
stable hash cell of a uri (``cell_of``), and uris are compared by 128-bit digests
(``uri_digest``), the same on every worker and run.

Used by ``listing.Pack`` / ``listing.Spread`` (listed files, spread over the workers),
``pairing.PairWithPrevious`` (the dedupe / ``--since`` join) and ``balance.Balance`` (digests).
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Iterable, Iterator
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
    "PACK_LIMIT",
    "cell_of",
    "pack_pending",
    "pack_rows",
    "packed_uris",
    "unpack_pending",
    "unpack_rows",
    "uri_digest",
]
