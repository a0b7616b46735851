"""The normalize stages as composite PTransforms, each usable and testable on its own.

    ListFiles -> (dedupe/join by uri) -> Pack -> Spread -> ReadBytes -> Detect -> Decode -> Validate
        -> CanonicalRecords / RoundTrip / Export

Every stage sends what it cannot handle to a ``rejects`` output as
``{"uri", "stage", "error", "message", "path"}`` and, when a whole input ends there, an
``inventory`` row: one row per listed input, saying how far it got (see ``inventory_row``). The
stages only talk to the codec library's registry and bundle API, so a new codec never changes them.
Counters live in the ``bunzai`` namespace (``COUNTERS`` lists them).
"""

from __future__ import annotations

import hashlib
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import apache_beam as beam
import orjson
from apache_beam.metrics import Metrics
from apache_beam.pvalue import TaggedOutput
from apache_beam.transforms.window import GlobalWindows

from bunzai_codecs import lint as lint_rules
from bunzai_codecs.bundle import VAUD, write
from bunzai_codecs.core import inflate, registry
from bunzai_codecs.core.entity import CanonicalEntity, Decoded, Source
from bunzai_codecs.core.errors import BunzaiError, LimitExceeded, Malformed, NotRecognized
from bunzai_codecs.core.sniff import MAX_INPUT_BYTES, Sniff
from bunzai_codecs.fidelity import FidelityRow, RowError, check_decoded, decode_row, reject_row
from bunzai_codecs.formats.vaud.codec import dumps
from pipeline.archives import archive_input, chain_url, member_protocol
from pipeline.index import INDEX, index_records
from pipeline.io import (
    FileRef,
    InputSpec,
    Output,
    Storage,
    checksum,
    list_files,
    read_bounded,
    staged_path,
    write_bytes,
)
from pipeline.memory import tune_gc
from pipeline.progress import note as note_progress
from pipeline.shards import record

NAMESPACE = "bunzai"

#: tagged outputs
REJECTS = "rejects"
INVENTORY = "inventory"
PATTERNS = "patterns"
UNCHANGED = "unchanged"
REFRESHED = "refreshed"
DELETED = "deleted"
WRITTEN = "written"
#: an input rejected whole: ``(inventory row, its rejects at that stage)``, for its fidelity row
REJECTED_WHOLE = "rejected_whole"

STAGES = ("list", "read", "detect", "decode", "validate", "export", "roundtrip")

#: every counter the stages bump (namespace ``bunzai``)
COUNTERS = {
    "inputs_listed": "files the listing found",
    "inputs_queued": "distinct listed files, queued to be read",
    "inputs_unchanged": "inputs --since found unchanged (not decoded again)",
    "inputs_read": "inputs read",
    "inputs_done": "inputs whose work (read to export, in the fused per-input chain) is over",
    "bytes_read": "bytes read",
    "inputs_detected": "inputs a codec recognised",
    "inputs_decoded": "inputs decoded into entities",
    "entities_decoded": "entities decoded",
    "entities_valid": "entities that passed validation",
    "lint_warnings": "lint warnings attached to entities",
    "exports_written": "export files written or staged",
    "fidelity_rows": "fidelity rows produced",
    "rejects": "reject records, all stages",
    "internal_errors": "rejects caused by a bunzai bug rather than the input",
}


_COUNTERS: dict[str, Any] = {}


def count(name: str, n: int = 1) -> None:
    # one counter object per name: Metrics.counter builds a MetricName and an updater on every
    # call, and this runs several times per input. The object finds the running step's metrics
    # container when it is incremented, so sharing it between steps and bundles is safe.
    c = _COUNTERS.get(name)
    if c is None:
        c = _COUNTERS[name] = Metrics.counter(NAMESPACE, name)
    c.inc(n)
    note_progress(name, n)  # the live display of a local run (pipeline/progress.py)


# -- records -------------------------------------------------------------------------------------

_READ_FAULTS = (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError)


def reject(uri: str, stage: str, exc: BaseException, *, prefix: str = "") -> dict[str, Any]:
    """A reject record for ``exc``. Typed errors say what and where; anything else is a bunzai bug
    (``InternalError``) or, for the read stage, the OS error's name."""
    if isinstance(exc, BunzaiError):
        rec = exc.to_record()
        if getattr(exc, "internal", False):
            count("internal_errors")
    elif isinstance(exc, NotImplementedError):  # a codec that reads a format but cannot write it
        rec = {"error": "Unsupported", "message": f"not supported: {exc}".rstrip(": "), "path": None}
    elif isinstance(exc, OSError):
        rec = {"error": type(exc).__name__, "message": " ".join(str(exc).split()), "path": None}
    else:
        count("internal_errors")
        rec = {
            "error": "InternalError",
            "message": f"{type(exc).__name__}: {' '.join(str(exc).split())}",
            "path": None,
        }
    count("rejects")
    count(f"rejects_{stage}")
    return {
        "uri": uri,
        "stage": stage,
        "error": rec["error"],
        "message": prefix + rec["message"],
        "path": rec["path"],
    }


def reject_record(rec: dict[str, Any]) -> bytes:
    """The sortable shard record of a reject."""
    natural = [rec["uri"], rec["stage"], rec["error"], rec["path"] or "", rec["message"]]
    return record(rec["uri"], natural, orjson.dumps(rec))


def inventory_row(
    ref: FileRef,
    status: str,
    *,
    sha256: str | None = None,
    format: str | None = None,
    entities: list[str] | tuple[str, ...] = (),
    decoded: int = 0,
    rejected: str | None = None,
) -> dict[str, Any]:
    """What the manifest's inventory says about one input. ``--since`` reads it back: ``size`` and
    ``etag`` (or ``sha256`` when the store gives no checksum) decide "unchanged"; ``entities`` are
    the ids whose canonical lines came from it; ``rejected`` is the stage where it stopped."""
    return {
        "uri": ref.uri,
        "size": ref.size,
        "etag": ref.etag,
        "sha256": sha256,
        "status": status,
        "format": format,
        "entities": list(entities),
        "decoded": decoded,
        "rejected": rejected,
    }


def inventory_record(row: dict[str, Any]) -> bytes:
    return record(row["uri"], [row["uri"]], orjson.dumps(row))


# -- elements ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Pending:
    """A listed file, with what the previous run's inventory said about it (``--since``)."""

    ref: FileRef
    prev: dict[str, Any] | None = None
    #: another listed file has the same size, so it may hold the same bytes and give entities with
    #: the same ids: its exports compete for their paths (see ``ExportCandidate``)
    shared: bool = True


@dataclass(slots=True)
class InputFile:
    ref: FileRef
    sniff: Sniff
    #: ``new`` or ``changed``
    status: str
    shared: bool = True


@dataclass(slots=True)
class Detected:
    file: InputFile
    format: str
    score: float


@dataclass(slots=True)
class DecodedInput:
    file: InputFile
    format: str
    score: float
    #: the codec's output as it was: fidelity checks compare the file with what the codec writes back
    decoded: Decoded


@dataclass(slots=True)
class ValidEntity:
    #: the entity with this run's provenance and its lint warnings
    entity: CanonicalEntity
    #: its canonical JSONL line (vaud-json), without the newline
    line: bytes


@dataclass(slots=True)
class ValidInput:
    file: InputFile
    format: str
    score: float
    decoded: Decoded
    accepted: list[ValidEntity] = field(default_factory=list)

    @property
    def uri(self) -> str:
        return self.file.ref.uri


@dataclass(frozen=True, slots=True)
class ExportCandidate:
    """An export ready to be committed to ``exports/<format>/<entity-id><ext>``.

    Identical input files give entities with the same id; their exports compete for one path and
    the smallest uri wins, so the file's bytes never depend on which worker finished last.
    """

    rel: str
    uri: str
    #: the staged bytes (a fresh export), or
    staged: str | None = None
    #: the previous run's file to copy (an unchanged input under ``--since``)
    previous: str | None = None


# -- List ----------------------------------------------------------------------------------------


class _ListFiles(beam.DoFn):
    def __init__(
        self, inputs: tuple[str, ...], storage: Storage, output: str | None, max_bytes: int = MAX_INPUT_BYTES
    ) -> None:
        self.inputs = inputs
        self.storage = storage
        self.output = output
        self.max_bytes = max_bytes

    def setup(self) -> None:
        self.out_fs: Any = None
        self.out_root = ""
        if self.output is not None:
            try:
                self.out_fs, root = self.storage.fs(self.output)
                self.out_root = root.rstrip("/") + "/"
            except Exception:  # the output is checked where it is written
                pass

    def display_data(self) -> dict[str, Any]:  # the job page (Dataflow) shows what is read
        return {"inputs": " ".join(self.inputs)}

    def _is_output(self, fs: Any, path: str) -> bool:
        """A file under the output folder (``--input . --output out``): never read back as input."""
        return fs is self.out_fs and (path + "/").startswith(self.out_root)

    def process(self, index: int) -> Iterator[Any]:
        url = self.inputs[index]
        spec = InputSpec.parse(url)
        errors: list[OSError] = []
        n = 0
        try:
            fs, path = self.storage.fs(url)
            proto = archive_input(url, fs, path, self.max_bytes)
            if proto is not None:  # a plain archive: a folder of inputs (pipeline/archives.py)
                spec = InputSpec.parse(chain_url(proto, url))
                fs, path = self.storage.fs(spec.url)
            root = spec.root_path(fs)
            for p, info in list_files(fs, path, on_error=errors.append):
                if self._is_output(fs, p):
                    continue
                n += 1
                count("inputs_listed")
                yield FileRef(spec.uri_for(root, p), index, p, info.get("size"), checksum(info))
        except Exception as exc:  # a missing path, a bucket we may not list, an unreadable zip
            yield TaggedOutput(REJECTS, reject(url, "list", exc))
        if n == 0 and len(errors) == 1 and isinstance(errors[0], FileNotFoundError):
            # nothing found because the glob's folder is not there: the input does not exist
            yield TaggedOutput(REJECTS, reject(url, "list", errors[0]))
            errors = []
        for err in errors:  # a folder below the input that could not be listed
            yield TaggedOutput(REJECTS, reject(getattr(err, "filename", None) or url, "list", err))
        yield TaggedOutput(PATTERNS, (index, n))


class ListFiles(beam.PTransform):
    """Input indexes -> ``FileRef`` per file (main), ``rejects``, ``patterns`` ((index, matched)).

    Globs are expanded on the workers, one input per element, streamed: the listing of one folder
    (or one S3 page) is in memory at a time. Files under ``output`` are never listed. An input that
    is a plain ``.zip`` / ``.tar`` / ``.tar.gz`` archive, not a card container, lists its members
    (pipeline/archives.py); ``max_bytes`` bounds the read that tells the two apart.
    """

    def __init__(
        self,
        inputs: tuple[str, ...],
        storage: Storage,
        output: str | None = None,
        max_bytes: int = MAX_INPUT_BYTES,
    ) -> None:
        super().__init__()
        self.inputs = inputs
        self.storage = storage
        self.output = output
        self.max_bytes = max_bytes

    def expand(self, indexes: Any) -> Any:
        dofn = _ListFiles(self.inputs, self.storage, self.output, self.max_bytes)
        return indexes | beam.ParDo(dofn).with_outputs(REJECTS, PATTERNS, main="files")


#: hash cells ``Spread`` groups the packed batches into: enough for a big fleet's parallelism
SPREAD_CELLS = 4096
#: listed files per packed batch: a few KiB compressed, and many batches even for a small archive
PACK = 64
#: a packed batch is bunzai's own, but every inflate is bounded
_PACK_LIMIT = 64 << 20


def uri_digest(uri: str) -> int:
    """128 bits of blake2b of ``uri``: stable on every worker and run (unlike ``hash``). The balance
    compares these; two uris with one digest could only make a sound run look unbalanced (the
    digests would count fewer listed inputs than the inventory has rows), never hide a lost one;
    at a billion uris the odds are ~1e-21."""
    return int.from_bytes(hashlib.blake2b(uri.encode("utf-8"), digest_size=16).digest(), "big")


def cell_of(uri: str, cells: int) -> int:
    """A stable hash cell for ``uri``."""
    return uri_digest(uri) % cells


def _pack_rows(rows: list[Any]) -> bytes:
    """Rows (JSON values) as one compact zlib batch: what crosses a shuffle packed."""
    return zlib.compress(orjson.dumps(rows), 1)


def _unpack_rows(batch: bytes) -> list[Any]:
    rows: list[Any] = orjson.loads(inflate.bounded(batch, _PACK_LIMIT))
    return rows


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
        return cell, (self.side, _pack_rows(rows))


def _pair_cell(item: tuple[int, Any]) -> Iterator[Any]:
    """One hash cell's batches -> a ``Pending`` per distinct listed uri (with its previous
    inventory row, if any) and ``deleted`` for each uri only the previous run had."""
    now: dict[str, list[list[Any]]] = {}
    prev: dict[str, dict[str, Any]] = {}
    for side, packed in item[1]:
        rows = _unpack_rows(packed)
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
            yield Pending(FileRef(uri, *min(refs, key=lambda r: r[0])), prev.get(uri))
        else:
            yield TaggedOutput(DELETED, uri)


@dataclass(frozen=True)
class Paired:
    #: one ``Pending`` per distinct uri
    pending: Any
    #: uris only the previous run had
    deleted: Any


class PairWithPrevious(beam.PTransform):
    """``FileRef``s + the previous inventory (uri -> row) -> ``Pending`` per distinct uri, and the
    uris only the previous run had (``deleted``).

    ``previous=None`` with ``join=False`` (one input and no ``--since``: a listing never names a
    file twice) skips the join: the local runners hold a shuffle's data in memory, and this one
    would hold every listed file."""

    def __init__(self, previous: Any = None, *, join: bool = True) -> None:
        super().__init__()
        self.previous = previous
        self.join = join or previous is not None

    def expand(self, refs: Any) -> Paired:
        if not self.join:
            return Paired(
                refs | "AsPending" >> beam.Map(Pending),
                refs.pipeline | "NoneDeleted" >> beam.Create([]),
            )
        # both sides cross the shuffle packed per hash cell (``_PackForJoin``); each cell is
        # joined in memory where it is grouped
        now = (
            refs
            | "ByUri" >> beam.Map(lambda r: (r.uri, (r.root, r.path, r.size, r.etag)))
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


class SharedSizes(beam.PTransform):
    """``Pending`` -> ``(size, None)`` for every size more than one listed file has: the side
    input ``ReadBytes`` sets ``shared`` from. Identical files (the only ones whose entities share
    ids) have equal sizes, so an input of a size nobody else has writes its exports straight to
    their paths; the others go through the staged commit that picks one winner per path. Only
    sizes cross the shuffle (summed per size where they are listed), never the files."""

    def expand(self, pending: Any) -> Any:
        return (
            pending
            | "Sizes" >> beam.FlatMap(lambda p: [(p.ref.size, 1)] if p.ref.size is not None else [])
            | "PerSize" >> beam.CombinePerKey(sum)
            | "Repeated" >> beam.FlatMap(lambda kv: [(kv[0], None)] if kv[1] > 1 else [])
        )


class _Pack(beam.DoFn):
    def start_bundle(self) -> None:
        self.buf: list[Pending] = []

    def process(self, p: Pending) -> Iterator[tuple[int, bytes]]:
        count("inputs_queued")
        self.buf.append(p)
        if len(self.buf) >= PACK:
            yield self._batch()

    def finish_bundle(self) -> Iterator[Any]:
        if self.buf:
            yield GlobalWindows.windowed_value(self._batch())

    def _batch(self) -> tuple[int, bytes]:
        rows = [
            (p.ref.uri, p.ref.root, p.ref.path, p.ref.size, p.ref.etag, p.prev, p.shared) for p in self.buf
        ]
        self.buf = []
        return cell_of(rows[0][0], SPREAD_CELLS), _pack_rows(rows)


def unpack(packed: tuple[int, bytes]) -> Iterator[Pending]:
    """The ``Pending`` of a batch ``Pack`` made."""
    for uri, root, path, size, etag, prev, shared in _unpack_rows(packed[1]):
        yield Pending(FileRef(uri, root, path, size, etag), prev, shared)


def packed_uris(packed: tuple[int, bytes]) -> list[str]:
    """The uris of a batch ``Pack`` made."""
    return [row[0] for row in _unpack_rows(packed[1])]


class Pack(beam.PTransform):
    """``Pending`` -> ``(cell, batch)``: ``PACK`` of them per zlib-compressed batch (uris of one
    archive share long prefixes). The local runners hold shuffled data in memory, and what they
    hold per listed file is then ~40 bytes instead of a grouping-table entry with decoded objects."""

    def expand(self, pending: Any) -> Any:
        return pending | beam.ParDo(_Pack())


class Spread(beam.PTransform):
    """``Pack``'s batches -> their ``Pending``, spread over the workers (the listing of one input is
    one element, so everything downstream of it would otherwise run on one worker)."""

    def expand(self, packed: Any) -> Any:
        return (
            packed
            | "Group" >> beam.GroupByKey()
            | "Unpack" >> beam.FlatMap(lambda kv: (p for batch in kv[1] for p in unpack((kv[0], batch))))
        )


# -- ReadBytes -----------------------------------------------------------------------------------


class _ReadBytes(beam.DoFn):
    def __init__(self, inputs: tuple[str, ...], storage: Storage, max_bytes: int, since: bool) -> None:
        self.inputs = inputs
        self.storage = storage
        self.max_bytes = max_bytes
        self.since = since

    def setup(self) -> None:
        tune_gc()  # see pipeline/memory.py: decoding builds thousands of small objects per input
        self.fss: list[Any] = []
        for url in self.inputs:
            try:
                self.fss.append(self.storage.fs(url)[0])
            except Exception as exc:  # listing rejected this input already; nothing of it arrives
                self.fss.append(exc)
        #: input index -> the filesystem of its members, for an input the listing read as an archive
        self.archives: dict[int, Any] = {}

    def _fs(self, ref: FileRef) -> Any:
        url = self.inputs[ref.root]
        proto = member_protocol(ref.uri, url)
        if proto is None:
            return self.fss[ref.root]
        if ref.root not in self.archives:
            self.archives[ref.root] = self.storage.fs(chain_url(proto, url))[0]
        return self.archives[ref.root]

    def process(self, pending: Pending, shared_sizes: Any = None) -> Iterator[Any]:
        yield from self._process(pending, shared_sizes)
        # resumed once the stages fused after this one have consumed every output: the input's
        # whole chain (detect to export) is over
        count("inputs_done")

    def _process(self, pending: Pending, shared_sizes: Any) -> Iterator[Any]:
        ref, prev = pending.ref, pending.prev
        shared = True if shared_sizes is None else ref.size is None or ref.size in shared_sizes
        status = "new" if prev is None else "changed"
        verify = False  # no checksum from the store: compare digests after reading
        if prev is not None and self.since and prev.get("size") == ref.size:
            if ref.etag and prev.get("etag"):
                if ref.etag == prev["etag"]:
                    yield from self._unchanged(pending)
                    return
            elif prev.get("sha256"):
                verify = True
        if ref.size is not None and ref.size > self.max_bytes:
            exc = LimitExceeded(
                f"input is {ref.size} bytes; --max-file-bytes is {self.max_bytes}", uri=ref.uri
            )
            yield from self._fail(pending, status, exc)
            return
        try:
            data = read_bounded(self._fs(ref), ref.path, self.max_bytes, ref.size)
        except OverflowError:
            exc = LimitExceeded(f"input is over --max-file-bytes ({self.max_bytes})", uri=ref.uri)
            yield from self._fail(pending, status, exc)
            return
        except _READ_FAULTS as exc:  # gone or forbidden: a reject. Anything else (a dropped
            yield from self._fail(pending, status, exc)  # connection) raises; the runner retries.
            return
        count("inputs_read")
        count("bytes_read", len(data))
        try:
            s = Sniff(data, ref.path.rsplit("/", 1)[-1], uri=ref.uri)
        except BunzaiError as exc:
            yield from self._fail(pending, status, exc)
            return
        if verify and prev is not None and s.sha256 == prev["sha256"]:
            yield from self._unchanged(pending)
            return
        if prev is not None:
            yield TaggedOutput(REFRESHED, ref.uri)
        yield InputFile(ref, s, status, shared and pending.shared)

    def _unchanged(self, pending: Pending) -> Iterator[Any]:
        count("inputs_unchanged")
        yield TaggedOutput(UNCHANGED, pending)

    def _fail(self, pending: Pending, status: str, exc: BaseException) -> Iterator[Any]:
        if pending.prev is not None:
            yield TaggedOutput(REFRESHED, pending.ref.uri)
        rec = reject(pending.ref.uri, "read", exc)
        inv = inventory_row(pending.ref, status, rejected="read")
        yield TaggedOutput(REJECTS, rec)
        yield TaggedOutput(INVENTORY, inv)
        yield TaggedOutput(REJECTED_WHOLE, (inv, [rec]))


class ReadBytes(beam.PTransform):
    """``Pending`` -> ``InputFile`` (main; the bytes in a ``Sniff``), ``rejects``, ``inventory``,
    ``unchanged`` (``Pending`` that ``--since`` need not read again) and ``refreshed`` (uris the
    previous run had that this run processes anew). Reads are bounded by ``max_bytes``.

    ``shared_sizes`` (``SharedSizes``' output) sets each ``InputFile.shared``; without it every
    input counts as shared (its exports go through the staged commit)."""

    def __init__(
        self,
        inputs: tuple[str, ...],
        storage: Storage,
        max_bytes: int,
        since: bool = False,
        shared_sizes: Any = None,
    ) -> None:
        super().__init__()
        self.dofn = _ReadBytes(inputs, storage, max_bytes, since)
        self.shared_sizes = shared_sizes

    def expand(self, pending: Any) -> Any:
        side = () if self.shared_sizes is None else (beam.pvalue.AsDict(self.shared_sizes),)
        return pending | beam.ParDo(self.dofn, *side).with_outputs(
            REJECTS, INVENTORY, UNCHANGED, REFRESHED, REJECTED_WHOLE, main="files"
        )


# -- Detect / Decode -----------------------------------------------------------------------------


class _Detect(beam.DoFn):
    def process(self, f: InputFile) -> Iterator[Any]:
        try:
            cand = registry.require(f.sniff)
        except NotRecognized as exc:
            rec = reject(f.ref.uri, "detect", exc)
            inv = inventory_row(f.ref, f.status, sha256=f.sniff.sha256, rejected="detect")
            yield TaggedOutput(REJECTS, rec)
            yield TaggedOutput(INVENTORY, inv)
            yield TaggedOutput(REJECTED_WHOLE, (inv, [rec]))
            return
        count("inputs_detected")
        count(f"detected_{cand.id}")
        yield Detected(f, cand.id, cand.score)


class Detect(beam.PTransform):
    """``InputFile`` -> ``Detected`` (the registry's winner), ``rejects`` and ``inventory``."""

    def expand(self, files: Any) -> Any:
        return files | beam.ParDo(_Detect()).with_outputs(REJECTS, INVENTORY, REJECTED_WHOLE, main="detected")


class _Decode(beam.DoFn):
    def setup(self) -> None:
        tune_gc()  # a no-op where ReadBytes, fused with this stage, did it already

    def process(self, d: Detected) -> Iterator[Any]:
        f = d.file
        try:
            # the codec's output as it is (Validate stamps this run's source on copies): the native
            # fidelity check compares the file with exactly what the codec writes back
            decoded = registry.get(d.format).decode(f.sniff)
            if not decoded.entities:
                raise Malformed(f"{d.format} decoded no entity", uri=f.ref.uri)
        except Exception as exc:
            rec = reject(f.ref.uri, "decode", exc)
            inv = inventory_row(f.ref, f.status, sha256=f.sniff.sha256, format=d.format, rejected="decode")
            yield TaggedOutput(REJECTS, rec)
            yield TaggedOutput(INVENTORY, inv)
            yield TaggedOutput(REJECTED_WHOLE, (inv, [rec]))
            return
        count("inputs_decoded")
        count("entities_decoded", len(decoded.entities))
        yield DecodedInput(f, d.format, d.score, decoded)


class Decode(beam.PTransform):
    """``Detected`` -> ``DecodedInput`` (a bundle: the primary entity and the ones it links),
    ``rejects`` and ``inventory``."""

    def expand(self, detected: Any) -> Any:
        return detected | beam.ParDo(_Decode()).with_outputs(
            REJECTS, INVENTORY, REJECTED_WHOLE, main="decoded"
        )


# -- Validate ------------------------------------------------------------------------------------


class _Validate(beam.DoFn):
    def process(self, d: DecodedInput) -> Iterator[Any]:
        f = d.file
        uri = f.ref.uri
        entities = d.decoded.entities
        bundle = d.decoded.by_id()
        findings = {e.id: lint_rules.lint(e, bundle) for e in entities}
        rejected: dict[str, CanonicalEntity] = {}
        recs: list[dict[str, Any]] = []
        for e in entities:
            errs = lint_rules.errors(findings[e.id])
            if errs:
                more = f" (+{len(errs) - 1} more)" if len(errs) > 1 else ""
                exc = errs[0].to_error(e, uri)
                exc.message += more
                recs.append(reject(uri, "validate", exc))
                yield TaggedOutput(REJECTS, recs[-1])
                rejected[e.id] = e
        # this run's provenance: where the pipeline read the entity (a vaud-json input's own,
        # earlier ``source`` is replaced, so every canonical line accounts for one listed input)
        src = Source(uri=uri, format=d.format, score=d.score, sha256=f.sniff.sha256, bytes=f.sniff.size)
        out = ValidInput(f, d.format, d.score, d.decoded)
        for e in entities:
            if e.id in rejected:
                continue
            notes = [str(w) for w in lint_rules.warnings(findings[e.id])]
            for ref in e.knowledge_refs:
                if ref in rejected:
                    notes.append(f"links.rejected: linked {rejected[ref].kind} {ref} failed validation")
            count("lint_warnings", len(notes))
            stamped = CanonicalEntity(
                kind=e.kind,
                id=e.id,
                body=e.body,
                links=e.links,
                original=e.original,
                source=src,
                warnings=[*e.warnings, *notes],
            )
            try:
                line = dumps(stamped)
            except Exception as exc:  # escrow that is not JSON: a codec bug
                recs.append(reject(uri, "validate", exc, prefix=f"{e.kind} {e.id}: "))
                yield TaggedOutput(REJECTS, recs[-1])
                continue
            out.accepted.append(ValidEntity(stamped, line))
        count("entities_valid", len(out.accepted))
        inv = inventory_row(
            f.ref,
            f.status,
            sha256=f.sniff.sha256,
            format=d.format,
            entities=[v.entity.id for v in out.accepted],
            decoded=len(entities),
            rejected=None if out.accepted else "validate",
        )
        yield TaggedOutput(INVENTORY, inv)
        if out.accepted:
            yield out
        else:
            yield TaggedOutput(REJECTED_WHOLE, (inv, recs))


class Validate(beam.PTransform):
    """``DecodedInput`` -> ``ValidInput`` (entities that pass the lint rules, stamped with their
    source and carrying their warnings), ``rejects`` (one per entity with an error-level finding)
    and ``inventory`` (one row per input that reached this stage)."""

    def expand(self, decoded: Any) -> Any:
        return decoded | beam.ParDo(_Validate()).with_outputs(
            REJECTS, INVENTORY, REJECTED_WHOLE, main="valid"
        )


# -- outputs -------------------------------------------------------------------------------------


def canonical_records(v: ValidInput) -> Iterator[bytes]:
    for ve in v.accepted:
        yield record(ve.entity.id, [ve.entity.id, v.uri], ve.line)


class _RoundTrip(beam.DoFn):
    """The three fidelity checks of ``bunzai_codecs.fidelity`` on one input, plus its ``decode``
    row; rows of entities that failed validation are left out (they have no canonical line).
    Without ``cross`` (``--fidelity native``) the cross-format conversions are not made."""

    def __init__(self, cross: bool = True) -> None:
        self.targets: tuple[str, ...] | None = None if cross else ()

    def setup(self) -> None:
        tune_gc()

    def process(self, v: ValidInput) -> Iterator[Any]:
        keep = {ve.entity.id for ve in v.accepted}
        s = v.file.sniff
        where = {"input": v.uri, "sha256": s.sha256, "uri": v.uri}
        try:
            rows = [
                decode_row(v.decoded, source=v.format, **where),
                *check_decoded(
                    s.data, v.decoded, source=v.format, name=s.name, targets=self.targets, **where
                ),
            ]
        except Exception as exc:  # check_decoded turns codec failures into rows; this is a bug of ours
            yield TaggedOutput(REJECTS, reject(v.uri, "roundtrip", exc))
            rows = []
        # the entity index's rows, with the status of the input's native round trip (pipeline/index.py)
        native = next((r.status for r in rows if r.check == "native"), None)
        for rec in index_records((ve.entity for ve in v.accepted), native):
            yield TaggedOutput(INDEX, rec)
        bugs: set[tuple[str, str, str]] = set()
        for row in rows:
            if row.entity not in keep and row.check != "decode":
                continue
            err = row.error
            # one reject per crash: the native and the stability check hit the same encoder
            if err is not None and err.internal and (row.target, err.type, err.message) not in bugs:
                bugs.add((row.target, err.type, err.message))
                bug = RuntimeError(
                    f"{row.check} round trip through {row.target} of {row.entity}: {err.type}: {err.message}"
                )
                yield TaggedOutput(REJECTS, reject(v.uri, "roundtrip", bug))
            count("fidelity_rows")
            yield fidelity_record(row)


def fidelity_record(row: FidelityRow) -> bytes:
    """The sortable shard record of a fidelity row."""
    natural = [row.entity, row.check, row.target, row.uri]
    return record(row.entity, natural, orjson.dumps(row.to_json()))  # as --since carries them


#: stages after which an input is over: its fidelity ``decode`` row says ``rejected``
_INPUT_ENDS = ("read", "detect", "decode", "validate")


def rejected_record(item: tuple[dict[str, Any], list[dict[str, Any]]]) -> Iterator[bytes]:
    """The ``decode`` fidelity row (as a shard record) of an input this run rejected whole, from the
    stage that rejected it: its inventory row (sha256, where it stopped) and the rejects that stage
    made for it (what stopped it; the first by error and message when there are several)."""
    inv, rejects = item
    stage = inv.get("rejected")
    if stage not in _INPUT_ENDS:
        return
    uri = inv["uri"]
    recs = sorted(
        (r for r in rejects if r["stage"] == stage and r["uri"] == uri),
        key=lambda r: (r["error"], r["message"]),
    )
    err = recs[0] if recs else {"error": "Rejected", "message": f"rejected at {stage}"}
    error = RowError(err["error"], err["message"], internal=err["error"] == "InternalError")
    row = reject_row(
        error, input=uri, sha256=inv.get("sha256") or "", uri=uri, source=inv.get("format") or ""
    )
    count("fidelity_rows")
    yield fidelity_record(row)


def rejected_rows(item: tuple[str, dict[str, list[Any]]]) -> Iterator[bytes]:
    """``rejected_record`` over an input's inventory rows and rejects grouped by uri."""
    _uri, groups = item
    for inv in groups["inventory"]:
        yield from rejected_record((inv, list(groups["rejects"])))


class RoundTrip(beam.PTransform):
    """``ValidInput`` -> fidelity row records (a ``decode`` row, then the native, stability and,
    with ``cross``, the cross-format checks of ``bunzai_codecs.fidelity``), plus ``rejects`` for a
    check that crashed on a bug (its row says ``error`` with ``internal``)."""

    def __init__(self, cross: bool = True) -> None:
        super().__init__()
        self.cross = cross

    def expand(self, valid: Any) -> Any:
        return valid | beam.ParDo(_RoundTrip(self.cross)).with_outputs(REJECTS, INDEX, main="rows")


class _Export(beam.DoFn):
    def __init__(self, formats: tuple[str, ...], output: Output, staging: str) -> None:
        self.formats = formats
        self.output = output
        self.staging = staging

    def setup(self) -> None:
        self.fs, self.root = self.output.open()

    def process(self, v: ValidInput) -> Iterator[Any]:
        linked = [ve.entity for ve in v.accepted]
        for ve in v.accepted:
            e = ve.entity
            for fmt in export_formats_for(e.kind, self.formats):
                try:
                    ex = write(e, fmt, linked=linked)
                except Exception as exc:
                    yield TaggedOutput(
                        REJECTS, reject(v.uri, "export", exc, prefix=f"{fmt}: {e.kind} {e.id}: ")
                    )
                    continue
                rel = export_rel(fmt, e.id, ex.extension)
                count("exports_written")
                if not v.file.shared:  # nobody else can write this path: straight to it (staged)
                    write_bytes(self.fs, f"{self.root}/{staged_path(self.staging, rel)}", ex.data)
                    yield TaggedOutput(WRITTEN, rel)
                    continue
                staged = f"{self.root}/{self.staging}/exports/{uuid.uuid4().hex}"
                write_bytes(self.fs, staged, ex.data)
                yield ExportCandidate(rel, v.uri, staged=staged)


def export_formats_for(kind: str, formats: tuple[str, ...]) -> list[str]:
    """The requested formats that hold entities of ``kind`` (vaud-json holds every kind)."""
    return [f for f in formats if f == VAUD or registry.get(f).kind == kind]


def export_rel(fmt: str, entity_id: str, extension: str) -> str:
    """``exports/<format>/<entity-id><ext>``; an id that is not a plain name never gets this far
    (lint rule ``entity.id``), and is refused here too: ids come from input files."""
    if not lint_rules.ID_PATTERN.match(entity_id):
        raise ValueError(f"not an entity id: {entity_id!r}")
    return f"exports/{fmt}/{entity_id}{extension}"


class Export(beam.PTransform):
    """``ValidInput`` -> per (entity, requested format of its kind): the path written (``written``)
    when the input is not ``shared``, else an ``ExportCandidate`` staged under the output's staging
    folder (main); ``rejects`` for exports a codec refused. Linked entities a format embeds are
    embedded; each entity also gets its own files in the formats of its kind."""

    def __init__(self, formats: tuple[str, ...], output: Output, staging: str) -> None:
        super().__init__()
        self.dofn = _Export(formats, output, staging)

    def expand(self, valid: Any) -> Any:
        return valid | beam.ParDo(self.dofn).with_outputs(REJECTS, WRITTEN, main="candidates")


__all__ = [
    "COUNTERS",
    "NAMESPACE",
    "STAGES",
    "Decode",
    "DecodedInput",
    "Detect",
    "Detected",
    "Export",
    "ExportCandidate",
    "InputFile",
    "ListFiles",
    "Pack",
    "PairWithPrevious",
    "Paired",
    "Pending",
    "ReadBytes",
    "RoundTrip",
    "SharedSizes",
    "Spread",
    "ValidInput",
    "Validate",
    "canonical_records",
    "export_formats_for",
    "export_rel",
    "fidelity_record",
    "inventory_record",
    "inventory_row",
    "packed_uris",
    "reject",
    "reject_record",
    "rejected_record",
    "rejected_rows",
    "unpack",
    "uri_digest",
]
