"""The error taxonomy: every failure a library call can raise on bad input.

A reject must be actionable, so each error carries the input's uri and, where known, the JSON path
(``$.data.character_book.entries[3].keys``) or byte offset where the problem is. The pipeline turns
these into reject records; the CLI prints ``str(error)`` (one line) and exits 3. Any other exception
escaping a codec is a bug in bunzai, not a property of the input.
"""

from __future__ import annotations

import re
from typing import Any


class BunzaiError(Exception):
    """Base class: something about one input (or one export) cannot be handled."""

    #: short stable name used in reject records and exit messages: a subclass's is its class name in
    #: kebab case (``LimitExceeded`` -> ``limit-exceeded``) unless it sets its own
    code = "error"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "code" not in cls.__dict__:
            cls.code = re.sub(r"(?<!^)(?=[A-Z])", "-", cls.__name__).lower()

    def __init__(
        self,
        message: str,
        *,
        uri: str | None = None,
        path: str | None = None,
        offset: int | None = None,
        internal: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.uri = uri
        self.path = path
        self.offset = offset
        #: True when the input was not the cause: a decoder let a stray ``KeyError``/``TypeError``
        #: escape on hostile input (``core.codec`` wraps it), which is a bug in bunzai to hunt down
        self.internal = internal

    def with_uri(self, uri: str | None) -> BunzaiError:
        """Attach the input's uri when the raiser did not know it (returns self for ``raise``)."""
        if self.uri is None and uri:
            self.uri = uri
        return self

    def where(self) -> str:
        parts = []
        if self.path:
            parts.append(self.path)
        if self.offset is not None:
            parts.append(f"byte {self.offset}")
        return " at ".join(parts)

    def __str__(self) -> str:
        head = f"{self.uri}: " if self.uri else ""
        where = self.where()
        loc = f" ({where})" if where else ""
        # one line, always: messages may quote input text
        msg = " ".join(self.message.split())
        return f"{head}{type(self).__name__}: {msg}{loc}"

    def to_record(self) -> dict[str, Any]:
        """The reject-record fields this error knows about (the pipeline adds uri and stage)."""
        return {
            "error": type(self).__name__,
            "message": " ".join(self.message.split()),
            "path": self.path
            if self.path is not None
            else (f"@{self.offset}" if self.offset is not None else None),
        }


class NotRecognized(BunzaiError):
    """No codec scored the input above the accept threshold (or a named codec does not fit it)."""


class Malformed(BunzaiError):
    """The input claims a format but breaks it: bad JSON, bad base64, a wrong type at a path, bad CRC."""


class LimitExceeded(Malformed):
    """A safety bound was hit before any work was done: archive size, entry count, inflate ratio, depth."""


class Unsupported(BunzaiError):
    """Well-formed, but asks for something bunzai does not do (an export of a kind to a format of another)."""


class EditedExportBlocked(BunzaiError):
    """An edited export is gated off for this format until its round trip is proven byte-exact."""


class ValidationFailed(BunzaiError):
    """The decoded entity breaks the canonical model (pydantic) or an error-level lint rule."""


ERRORS: tuple[type[BunzaiError], ...] = (
    NotRecognized,
    Malformed,
    LimitExceeded,
    Unsupported,
    EditedExportBlocked,
    ValidationFailed,
)


def json_path(parts: tuple[str | int, ...] | list[str | int]) -> str:
    """``("data", "entries", 3, "keys")`` -> ``$.data.entries[3].keys``."""
    return join_path("$", *parts)


def join_path(base: str, *parts: str | int) -> str:
    """``join_path("$.data", "entries", 3)`` -> ``$.data.entries[3]`` (keys that are not identifiers are quoted)."""
    out = base
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        elif p.isidentifier():
            out += f".{p}"
        else:
            out += "[" + repr(p) + "]"
    return out
