"""Nightly runs: ``--since URL_OF_PREVIOUS_MANIFEST``, and step ``CarryForward``.

The previous manifest names its inventory shards (one row per input: uri, size, checksum, sha256,
entity ids, where it stopped). Each listed input is paired with its previous row by uri; one whose
size and store checksum (ETag, md5, zip CRC) match — or, on stores without checksums such as local
disks, whose sha256 matches once read — is *unchanged*: it is not decoded again. Its canonical
lines, fidelity rows and rejects are carried forward from the previous run's shards, and its
exports are copied (or, when the output folder is the same, kept). Every other previous result
(changed or deleted inputs) is dropped, so the output is always the complete set.

The previous results are only reused when they are what this run would produce: same codec
library (a fingerprint of its source), same ``--max-file-bytes``, same ``--fidelity`` (a run
without the cross-format rows must not pass carried rows off as this mode's, nor carry rows a
mode does not make), and every format now exported was exported then. Otherwise the manifest says ``since.honoured: false`` with the reason, and the
run processes everything.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any

import apache_beam as beam
import orjson
from apache_beam.pvalue import TaggedOutput

import bunzai_codecs
from bunzai_codecs.core import registry
from bunzai_codecs.lint import ID_PATTERN
from pipeline.dataset.blobs import PREVIOUS, stored_of
from pipeline.dataset.datasets import CANONICAL, FIDELITY, INVENTORY_DS, REJECTS_DS, CanonicalLine
from pipeline.dataset.index.parquet import CarryIndex
from pipeline.dataset.index.rows import INDEX
from pipeline.dataset.lines import ReadShards, line_meta
from pipeline.dataset.manifest import ManifestError, read_manifest, shard_paths
from pipeline.export.files import ExportCandidate, export_formats_for, export_rel
from pipeline.normalize.elements import Pending, inventory_row
from pipeline.normalize.streams import Results, results
from pipeline.runtime.errors import MissingInput
from pipeline.runtime.options import NormalizeConfig
from pipeline.runtime.storage import Storage, join


def codec_fingerprint() -> str:
    """sha256 over the codec library's source files: results made by other code are not reused."""
    root = Path(bunzai_codecs.__file__).resolve().parent
    h = hashlib.sha256()
    for p in sorted(root.rglob("*.py")):
        h.update(p.relative_to(root).as_posix().encode() + b"\0")
        h.update(p.read_bytes() + b"\0")
    return h.hexdigest()


@dataclass(frozen=True)
class Previous:
    """What ``--since`` points at, and whether its results can be reused."""

    manifest: str
    #: the previous output folder (the manifest's folder)
    root: str
    honoured: bool
    reason: str | None = None
    #: dataset -> shard paths relative to ``root``
    shards: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def urls(self, dataset: str) -> list[str]:
        return [join(self.root, rel) for rel in self.shards.get(dataset, ())]

    def public(self) -> dict[str, Any]:
        return {"manifest": self.manifest, "honoured": self.honoured, "reason": self.reason}


def load_previous(cfg: NormalizeConfig, fingerprint: str) -> Previous | None:
    if not cfg.since:
        return None
    url = cfg.since
    try:
        m = read_manifest(cfg.storage, url)
    except FileNotFoundError:
        raise MissingInput(f"--since: no manifest at {url}") from None
    except ManifestError as exc:
        raise MissingInput(f"--since: {exc}") from None
    root = url.rsplit("/", 1)[0] if "/" in url else "."
    shards = shard_paths(m)
    prev_opts = m.get("options", {})
    reason = None
    if m.get("bunzai", {}).get("codecFingerprint") != fingerprint:
        reason = "the codec library changed since that run"
    elif prev_opts.get("maxFileBytes") != cfg.max_file_bytes:
        reason = "--max-file-bytes differs from that run"
    elif not set(cfg.export) <= set(prev_opts.get("export") or ()):
        reason = "this run exports formats that run did not"
    elif prev_opts.get("fidelity", "full") != cfg.fidelity:  # manifests before --fidelity: full
        reason = f"--fidelity {cfg.fidelity} differs from that run's ({prev_opts.get('fidelity', 'full')})"
    elif INVENTORY_DS not in shards:
        reason = "that manifest lists no inventory"
    elif INDEX not in shards:  # a run before the entity index: its rows cannot be carried
        reason = "that manifest lists no entity index"
    return Previous(url, root, reason is None, reason, shards)


#: ``_carry_canonical``'s output of the uris its lines account for
ACCOUNTED = "accounted"


#: ``CarryForward``'s output of the blobs the carried canonical lines name
STORED_REFS = "stored"


def _carry_canonical(line: bytes, skip: dict[str, bool]) -> Iterator[Any]:
    meta = line_meta(line)
    eid, uri = meta.id, meta.uri
    if uri not in skip:
        yield CanonicalLine(uri, eid, line)
        yield TaggedOutput(ACCOUNTED, uri)
        for key, size in stored_of(line):  # the blobs it names: carried too (pipeline/dataset/blobs.py)
            yield TaggedOutput(STORED_REFS, (key, (size, PREVIOUS)))


def _carry_rows(line: bytes, skip: dict[str, bool]) -> Iterator[dict[str, Any]]:
    """A previous fidelity or reject row, as a row (it is written, counted and reported as the
    rows this run makes are)."""
    row: dict[str, Any] = orjson.loads(line)
    if row["uri"] not in skip:
        yield row


@dataclass
class CarryForward(beam.PTransform):
    """Step ``CarryForward``: the previous run's results for the inputs this run did not process
    again.

    ``{"unchanged": Pending, "refreshed": uris, "deleted": uris}`` -> ``Results``: every previous
    canonical line, fidelity row and reject whose uri is neither refreshed (processed anew) nor
    deleted (``NotCarried``, a side input); the inventory rows of the unchanged inputs; their
    export files as candidates (``export``: this run's formats); the uris the carried canonical
    lines account for. ``fidelity``: this run makes fidelity rows (then so did that run: its
    results are reused only under the same ``--fidelity``).
    """

    previous: Previous
    storage: Storage
    _: KW_ONLY
    export: tuple[str, ...] = ()
    fidelity: bool = True

    def expand(self, left: dict[str, Any]) -> Results:
        skip_uris = (left["refreshed"], left["deleted"]) | "NotCarried" >> beam.Flatten()
        skip = beam.pvalue.AsDict(skip_uris | "SkipSet" >> beam.Map(lambda u: (u, True)))
        pbegin = beam.pvalue.PBegin(skip_uris.pipeline)
        prev, st = self.previous, self.storage
        canon = (
            pbegin
            | "ReadCanonical" >> ReadShards(prev.urls(CANONICAL), st)
            | "KeepCanonical"
            >> beam.FlatMap(_carry_canonical, skip).with_outputs(ACCOUNTED, STORED_REFS, main="records")
        )
        rejects = (
            pbegin
            | "ReadRejects" >> ReadShards(prev.urls(REJECTS_DS), st)
            | "KeepRejects" >> beam.FlatMap(_carry_rows, skip)
        )
        unchanged = left["unchanged"] | "UnchangedRows" >> beam.Map(unchanged_row)
        fidelity, exports = {}, {}
        if self.fidelity:
            fidelity["carried"] = (
                pbegin
                | "ReadFidelity" >> ReadShards(prev.urls(FIDELITY), st)
                | "KeepFidelity" >> beam.FlatMap(_carry_rows, skip)
            )
        if self.export:
            exports["carried"] = left["unchanged"] | "CarriedExports" >> beam.FlatMap(
                carried_exports, prev.root, self.export
            )
        index = pbegin | "CarryIndex" >> CarryIndex(prev.urls(INDEX), st, skip)
        return results(
            canonical={"carried": canon.records},
            index_rows={"carried": index},
            inventory={"unchanged": unchanged},
            rejects={"carried": rejects},
            fidelity=fidelity,
            exports=exports,
            accounted={"carried": canon[ACCOUNTED]},
            blobs={"carried": canon[STORED_REFS]},
        )


def previous_inventory(pbegin: Any, previous: Previous, storage: Storage) -> Any:
    return (
        pbegin
        | "ReadPrevInventory" >> ReadShards(previous.urls(INVENTORY_DS), storage)
        | "ParsePrevInventory" >> beam.Map(orjson.loads)
    )


def unchanged_row(p: Pending) -> dict[str, Any]:
    """The inventory row of an unchanged input: the previous row, marked unchanged."""
    prev = p.prev or {}
    return {
        **inventory_row(
            p.ref,
            "unchanged",
            sha256=prev.get("sha256"),
            format=prev.get("format"),
            entities=prev.get("entities") or (),
            decoded=prev.get("decoded") or 0,
            rejected=prev.get("rejected"),
        )
    }


def carried_exports(p: Pending, previous_root: str, formats: tuple[str, ...]) -> Iterator[ExportCandidate]:
    """The previous run's export files of an unchanged input's entities."""
    for eid in (p.prev or {}).get("entities") or ():
        if not isinstance(eid, str) or not ID_PATTERN.match(eid):
            continue  # a doctored inventory: its ids become file names
        kind = eid.split("-", 1)[0]
        for fmt in export_formats_for(kind, formats):
            # an export is named after the container its bytes are (a PNG card .png, a JSON one
            # .json): every name the format's containers give; the ones the run did not write are
            # skipped at the commit
            for ext in dict.fromkeys(c.suffixes[0] for c in registry.get(fmt).container_list()):
                rel = export_rel(fmt, eid, ext)
                yield ExportCandidate(rel, p.ref.uri, previous=join(previous_root, rel))


__all__ = [
    "CarryForward",
    "Previous",
    "carried_exports",
    "codec_fingerprint",
    "load_previous",
    "previous_inventory",
    "unchanged_row",
]
