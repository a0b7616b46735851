"""``faulty://``: the local disk as an fsspec filesystem that fails where a test says.

``faulty:///tmp/x`` is ``/tmp/x``, but the filesystem is not local as the pipeline sees it (its
protocol is neither ``file`` nor ``local``), so writes take the object-store path: ``pipe_file``,
``put_file`` from a local spool, and the commit's move as an object store does it: a copy
(``cp_file``, a ``"write"`` of the destination) then a delete (``rm_file``, a ``"remove"``).
``FaultyFileSystem.fault`` decides, for each operation (``"write"``, ``"move"`` (``mv``, which the
pipeline no longer calls), ``"list"``, ``"remove"``) and path, the exception to raise instead (or
``None``). Tests run the pipeline in-process (FnApiRunner), so the class
attribute reaches every DoFn; ``faults(...)`` sets it for the length of a ``with``.
"""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import fsspec
from fsspec.implementations.local import LocalFileSystem

Fault = Callable[[str, str], BaseException | None]


def _none(op: str, path: str) -> BaseException | None:
    return None


class FaultyFileSystem(LocalFileSystem):
    protocol = ("faulty",)
    root_marker = "/"
    fault: ClassVar[Fault] = staticmethod(_none)
    #: every (operation, path) asked, to check a fault was really met
    seen: ClassVar[list[tuple[str, str]]] = []

    def __init__(self, **kwargs: Any) -> None:
        kwargs["auto_mkdir"] = True  # an object store needs no folders
        super().__init__(**kwargs)

    @classmethod
    def _strip_protocol(cls, path: Any) -> Any:
        if isinstance(path, str) and path.startswith("faulty://"):
            path = path[len("faulty://") :] or "/"
        return super()._strip_protocol(path)

    def unstrip_protocol(self, name: str) -> str:
        return f"faulty://{name}"

    def _check(self, op: str, path: str) -> None:
        FaultyFileSystem.seen.append((op, path))
        exc = FaultyFileSystem.fault(op, path)
        if exc is not None:
            raise exc

    def _open(self, path: Any, mode: str = "rb", **kwargs: Any) -> Any:
        if any(c in mode for c in "wax"):
            self._check("write", self._strip_protocol(path))
        return super()._open(path, mode, **kwargs)

    def put_file(self, path1: Any, path2: Any, *args: Any, **kwargs: Any) -> Any:
        self._check("write", self._strip_protocol(path2))
        return super().put_file(path1, path2, *args, **kwargs)

    def cp_file(self, path1: Any, path2: Any, **kwargs: Any) -> Any:
        self._check("write", self._strip_protocol(path2))
        return super().cp_file(path1, path2, **kwargs)

    def mv(self, path1: Any, path2: Any, *args: Any, **kwargs: Any) -> Any:
        self._check("move", self._strip_protocol(path2))
        return super().mv(path1, path2, *args, **kwargs)

    def ls(self, path: Any, detail: bool = False, **kwargs: Any) -> Any:
        self._check("list", self._strip_protocol(path))
        return super().ls(path, detail=detail, **kwargs)

    def rm_file(self, path: Any) -> Any:
        self._check("remove", self._strip_protocol(path))
        return super().rm_file(path)


fsspec.register_implementation("faulty", FaultyFileSystem, clobber=True)


@contextlib.contextmanager
def faults(fault: Fault) -> Iterator[list[tuple[str, str]]]:
    """``fault`` in force (and a fresh ``seen`` list, yielded) for the block."""
    FaultyFileSystem.fault = staticmethod(fault)  # type: ignore[assignment]
    FaultyFileSystem.seen = []
    try:
        yield FaultyFileSystem.seen
    finally:
        FaultyFileSystem.fault = staticmethod(_none)  # type: ignore[assignment]


def disk_full(after_writes: int) -> Fault:
    """``ENOSPC`` for every file write after the first ``after_writes`` (a disk that fills up)."""
    state = {"writes": 0}

    def fault(op: str, path: str) -> BaseException | None:
        if op != "write":
            return None
        state["writes"] += 1
        if state["writes"] > after_writes:
            return OSError(errno.ENOSPC, "No space left on device", path)
        return None

    return fault


__all__ = ["FaultyFileSystem", "disk_full", "faults"]
