"""``ReadBytes``: a listed file's bytes, read bounded, or the reason it was not read.

Under ``--since`` a file whose size and store checksum (or, where the store gives none, sha256)
match the previous run's inventory row is *unchanged*: it is not read again (pipeline/normalize/since.py
carries its results forward).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import apache_beam as beam
from apache_beam.pvalue import TaggedOutput

from bunzai_codecs.core import fileset
from bunzai_codecs.core.errors import BunzaiError, LimitExceeded, Malformed
from bunzai_codecs.core.sniff import Sniff
from pipeline.normalize.archives import chain_url, member_protocol
from pipeline.normalize.elements import (
    INVENTORY,
    REJECTED_WHOLE,
    REJECTS,
    InputFile,
    Pending,
    inventory_row,
    reject,
)
from pipeline.runtime import fixed_cost
from pipeline.runtime.counters import count
from pipeline.runtime.memory import tune_gc
from pipeline.runtime.storage import FileRef, Storage, is_local, read_bounded

#: tagged outputs: ``Pending`` that ``--since`` need not read again, and uris the previous run had
#: that this run processes anew
UNCHANGED = "unchanged"
REFRESHED = "refreshed"

_READ_FAULTS = (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError)


class _ReadBytes(beam.DoFn):
    def __init__(self, inputs: tuple[str, ...], storage: Storage, max_bytes: int, since: bool) -> None:
        self.inputs = inputs
        self.storage = storage
        self.max_bytes = max_bytes
        self.since = since

    def setup(self) -> None:
        fixed_cost.install()  # Beam's memos in whatever worker process the runner starts
        tune_gc()  # see pipeline/runtime/memory.py: decoding builds thousands of small objects per input
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
            if ref.parts:
                data = read_parts(self._fs(ref), ref, self.max_bytes)
            else:
                data = read_bounded(self._fs(ref), ref.path, self.max_bytes, ref.size)
        except BunzaiError as refused:  # a card folder's symbolic link
            yield from self._fail(pending, status, refused.with_uri(ref.uri))
            return
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
            # an input of several files is named as its uri names it (the YAML's, the card folder's)
            named = ref.uri.split("::", 1)[0].rstrip("/") if ref.parts else ref.path
            s = Sniff(data, named.rsplit("/", 1)[-1], uri=ref.uri)
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


def read_parts(fs: Any, ref: FileRef, max_bytes: int) -> bytes:
    """The file set of an input of several files (``FileRef.parts``): each file read bounded by
    what ``max_bytes`` leaves (``OverflowError`` past it). A card folder's file that is a symbolic
    link, or not inside the folder once resolved, is refused (a link could point anywhere)."""
    if len(ref.parts) > fileset.LIMITS.max_entries:
        raise LimitExceeded(f"an input of more than {fileset.LIMITS.max_entries} files")
    files: dict[str, bytes] = {}
    left = max_bytes
    base = ref.path.rstrip("/")
    real = os.path.realpath(base) if is_local(fs) else None
    for name in ref.parts:
        p = f"{base}/{name}"
        if real is not None and (os.path.islink(p) or not os.path.realpath(p).startswith(real + os.sep)):
            raise Malformed(f"{name}: a symbolic link in a card folder is not read")
        data = read_bounded(fs, p, left)
        left -= len(data)
        files[name] = data
    return fileset.pack(files)


@dataclass
class ReadBytes(beam.PTransform):
    """``Pending`` -> ``InputFile`` (main; the bytes in a ``Sniff``), ``rejects``, ``inventory``,
    ``unchanged`` (``Pending`` that ``--since`` need not read again) and ``refreshed`` (uris the
    previous run had that this run processes anew). Reads are bounded by ``max_bytes``.

    ``shared_sizes`` (``SharedSizes``' output) sets each ``InputFile.shared``; without it every
    input counts as shared (its exports go through the staged commit)."""

    inputs: tuple[str, ...]
    storage: Storage
    max_bytes: int
    since: bool = False
    shared_sizes: Any = None

    def expand(self, pending: Any) -> Any:
        side = () if self.shared_sizes is None else (beam.pvalue.AsDict(self.shared_sizes),)
        dofn = _ReadBytes(self.inputs, self.storage, self.max_bytes, self.since)
        return pending | beam.ParDo(dofn, *side).with_outputs(
            REJECTS, INVENTORY, UNCHANGED, REFRESHED, REJECTED_WHOLE, main="files"
        )


__all__ = ["REFRESHED", "UNCHANGED", "ReadBytes"]
