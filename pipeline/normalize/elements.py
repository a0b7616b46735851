"""What flows between the normalize stages: the elements, and the two rows every stage may make.

    Pending -> InputFile -> Detected -> DecodedInput -> ValidInput (its ValidEntity list)

Every stage sends what it cannot handle to a ``rejects`` output as ``reject()`` rows
(``{"uri", "stage", "error", "message", "path"}``) and, when a whole input ends there, an
``inventory`` row (``inventory_row()``): one row per listed input, saying how far it got, and a
``rejected_whole`` pair for its fidelity ``decode`` row (pipeline/normalize/roundtrip.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.errors import BunzaiError
from bunzai_codecs.core.sniff import Sniff
from pipeline.runtime.counters import count
from pipeline.runtime.storage import FileRef

#: tagged outputs every stage that can stop an input has
REJECTS = "rejects"
INVENTORY = "inventory"
#: an input rejected whole: ``(inventory row, its rejects at that stage)``, for its fidelity row
REJECTED_WHOLE = "rejected_whole"

STAGES = ("list", "read", "detect", "decode", "validate", "export", "roundtrip")


# -- rows ----------------------------------------------------------------------------------------


def reject(uri: str, stage: str, exc: BaseException, *, prefix: str = "") -> dict[str, Any]:
    """A reject row for ``exc``. Typed errors say what and where; anything else is a bunzai bug
    (``InternalError``) or, for the read stage, the OS error's name."""
    if isinstance(exc, BunzaiError):
        rec = exc.to_record()
        if exc.internal:
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


# -- elements ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Pending:
    """A listed file, with what the previous run's inventory said about it (``--since``)."""

    ref: FileRef
    prev: dict[str, Any] | None = None
    #: another listed file has the same size, so it may hold the same bytes and give entities with
    #: the same ids: its exports compete for their paths (see ``export.ExportCandidate``)
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
    #: its canonical JSONL line (lean vaud-json: big bytes in the blob store), without the newline
    line: bytes
    #: the bytes the line keeps in the dataset's blob store, by sha256 (``pipeline/dataset/blobs.py``)
    blobs: dict[str, bytes] = field(default_factory=dict)


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


__all__ = [
    "INVENTORY",
    "REJECTED_WHOLE",
    "REJECTS",
    "STAGES",
    "DecodedInput",
    "Detected",
    "InputFile",
    "Pending",
    "ValidEntity",
    "ValidInput",
    "inventory_row",
    "reject",
]
