"""The dataset's blob store: media and big escrow bytes kept once, by digest.

A canonical line is lean (``bunzai_codecs.formats.vaud.codec.dumps`` with a store): every media
entry and escrow blob above ``INLINE_MAX`` bytes leaves the line and is named by its sha256; the
line lists those digests under ``stored``. The dataset keeps each such blob once, as
``blobs/<first 2 hex>/<sha256>``, however many lines (of this run and of the runs ``--since``
carried forward) name it.

How a blob gets to its place, per digest:

- ``StoreBlobs`` runs fused with ``Validate`` (the bytes never cross a shuffle): for each blob of a
  fresh line it notes ``kept`` when the output folder already holds the file (an earlier run into
  the same folder: it is not written again), else writes it once to the run's staging folder
  (``staged``; a worker skips a digest it, or another worker, already staged);
- a line carried forward by ``--since`` names its digests (``stored_of``, in ``CarryForward``):
  ``previous``;
- ``SettleBlobs`` (in ``WriteOutputs``) reduces those small records to one per digest (``kept``
  wins, then ``staged``, then ``previous``), leaves a ``previous`` one in place when the output
  folder holds it (``--since`` into the previous run's own folder) and copies it into the staging
  folder otherwise, and gives the commit the paths to move (``staged``) and to leave in place
  (``kept``). The commit's prune removes every file under ``blobs/`` that no line of the run names.
  Nothing reaches ``blobs/`` before the commit.

The manifest counts them under ``counts.blobs``: ``count`` and ``bytes`` of every blob the lines
name, ``new`` / ``newBytes`` written by this run, ``carried`` / ``carriedBytes`` taken from the
previous dataset (kept in place or copied).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import apache_beam as beam
from apache_beam.pvalue import TaggedOutput

from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.formats.vaud.codec import STORED, dumps
from pipeline.runtime.storage import Output, copy_file, join, staged_path, write_bytes

#: the blob store's folder in a dataset
BLOBS_DIR = "blobs"
#: how a blob's path is made (the manifest says it)
LAYOUT = "blobs/<first 2 hex of sha256>/<sha256>"

KEPT, STAGED, PREVIOUS = "kept", "staged", "previous"
_RANK = {KEPT: 0, STAGED: 1, PREVIOUS: 2}

#: a blob reference: ``(sha256, (bytes, where))``
Ref = tuple[str, tuple[int, str]]


def blob_rel(key: str) -> str:
    """``blobs/ab/abcdef...``: a blob's path in the dataset, from its sha256 (lowercase hex)."""
    if len(key) != 64 or any(c not in "0123456789abcdef" for c in key):
        raise ValueError(f"not a sha256 digest: {key!r}")
    return f"{BLOBS_DIR}/{key[:2]}/{key}"


def lean_line(e: CanonicalEntity) -> tuple[bytes, dict[str, bytes]]:
    """The canonical line of ``e`` and the blobs it keeps out of itself (digest -> bytes)."""
    store: dict[str, bytes] = {}
    line = dumps(e, store=store)
    return line, store


def stored_of(line: bytes) -> list[tuple[str, int]]:
    """``(sha256, bytes)`` of every blob a canonical line names (its ``stored`` list, the line's last
    key), without parsing the body and escrow; a full parse when the short cut does not apply."""
    k = line.rfind(b',"' + STORED.encode() + b'":[')
    items: Any = None
    if k >= 0:
        start = k + len(STORED) + 4
        try:
            items, end = json.JSONDecoder().raw_decode(line[start:].decode("utf-8"))
            if start + end != len(line) - 1:
                items = None
        except ValueError:
            items = None
    if items is None:
        import orjson

        items = orjson.loads(line).get(STORED) or []
    return [(str(i["sha256"]), int(i["bytes"])) for i in items]


class _StoreBlobs(beam.DoFn):
    """``ValidInput`` -> a blob reference per (worker, digest) of its lines; writes new blobs to the
    staging folder, once."""

    def __init__(self, output: Output, staging: str) -> None:
        self.output = output
        self.staging = staging

    def setup(self) -> None:
        self.fs, self.root = self.output.open()
        self.seen: dict[str, str] = {}

    def process(self, v: Any) -> Iterator[Ref]:
        for ve in v.accepted:
            for key, data in sorted(ve.blobs.items()):
                if key in self.seen:
                    continue
                rel = blob_rel(key)
                if self.fs.exists(f"{self.root}/{rel}"):
                    where = KEPT  # an earlier run into this folder wrote it: not written again
                else:
                    where = STAGED
                    staged = f"{self.root}/{staged_path(self.staging, rel)}"
                    if not self.fs.exists(staged):
                        write_bytes(self.fs, staged, data)
                self.seen[key] = where
                yield key, (len(data), where)


@dataclass
class StoreBlobs(beam.PTransform):
    """``ValidInput`` -> ``(sha256, (bytes, "kept" | "staged"))`` records (small: no bytes)."""

    output: Output
    staging: str

    def expand(self, valid: Any) -> Any:
        return valid | beam.ParDo(_StoreBlobs(self.output, self.staging))


def _best(places: Iterable[tuple[int, str]]) -> tuple[int, str]:
    return min(places, key=lambda p: (_RANK[p[1]], p[0]))


class _Settle(beam.DoFn):
    def __init__(self, output: Output, staging: str, previous_root: str | None) -> None:
        self.output = output
        self.staging = staging
        self.previous_root = previous_root

    def setup(self) -> None:
        self.fs, self.root = self.output.open()

    def process(self, item: tuple[str, tuple[int, str]]) -> Iterator[Any]:
        key, (size, where) = item
        rel = blob_rel(key)
        if where == PREVIOUS and self.fs.exists(f"{self.root}/{rel}"):
            where = KEPT  # --since into the previous run's own folder: the file stays where it is
        if where == PREVIOUS:
            if self.previous_root is None:  # cannot happen: only carried lines say previous
                raise RuntimeError(f"blob {key} has no previous run to come from")
            src_fs, src = self.output.storage.fs(join(self.previous_root, rel))
            try:
                copy_file(src_fs, src, self.fs, f"{self.root}/{staged_path(self.staging, rel)}")
            except FileNotFoundError:
                raise RuntimeError(
                    f"--since: the previous dataset has no {rel}, which a line it carries forward names"
                ) from None
        if where == KEPT:
            yield TaggedOutput(KEPT, rel)
        else:
            yield rel
        new = where == STAGED
        yield TaggedOutput("counts", (("blobs", "count"), 1))
        yield TaggedOutput("counts", (("blobs", "bytes"), size))
        yield TaggedOutput("counts", (("blobs", "new" if new else "carried"), 1))
        yield TaggedOutput("counts", (("blobs", "newBytes" if new else "carriedBytes"), size))


@dataclass
class SettleBlobs(beam.PTransform):
    """Blob references (fresh and carried) -> one per digest: ``staged`` paths for the commit to move
    (main), ``kept`` paths to leave in place, and ``counts`` pairs for the manifest."""

    output: Output
    staging: str
    previous_root: str | None

    def expand(self, refs: Any) -> Any:
        return (
            refs
            | "OnePerDigest" >> beam.CombinePerKey(_best)
            | "Settle"
            >> beam.ParDo(_Settle(self.output, self.staging, self.previous_root)).with_outputs(
                KEPT, "counts", main="staged"
            )
        )


def blob_counts(counts: dict[tuple[str, ...], int]) -> dict[str, Any]:
    """The manifest's ``counts.blobs``."""
    names = ("count", "bytes", "new", "newBytes", "carried", "carriedBytes")
    return {n: counts.get(("blobs", n), 0) for n in names}


def blob_rows(counts: dict[str, Any] | None, output: Output) -> list[tuple[str, str]]:
    """The summary's line for the blob store (none when the lines name no blob)."""
    if not counts or not counts.get("count"):
        return []
    what = (
        f"{counts['count']} blobs, {counts['bytes']} bytes ({counts['new']} new, {counts['carried']} carried)"
    )
    return [(output.display(f"{BLOBS_DIR}/"), what)]


__all__ = [
    "BLOBS_DIR",
    "LAYOUT",
    "SettleBlobs",
    "StoreBlobs",
    "blob_counts",
    "blob_rel",
    "blob_rows",
    "lean_line",
    "stored_of",
]
