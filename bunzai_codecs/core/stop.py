"""SIGTERM ends a command the way Ctrl-C does.

A scheduler's timeout, ``kill``, ``docker stop`` or a job runner sends SIGTERM. Python's default
for it is to die on the spot, before any ``finally``: a batch ``convert`` then leaves its hidden
staging folder in the output folder and ``normalize`` its ``.bunzai-staging/`` run. Inside
:func:`terminate_as_interrupt` SIGTERM raises :class:`Terminated` (a ``KeyboardInterrupt``) in the
main thread instead, so every command's interrupt path runs: staged files are removed, the output
is left as it was, one line says so, and the exit code is 143 (128 + SIGTERM), not Ctrl-C's 130.
A second SIGTERM while that clean-up runs is ignored (SIGKILL still ends the process).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from bunzai_codecs.exitcodes import Exit


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived while a command ran."""


def _on_term(signum: int, frame: FrameType | None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the clean-up that follows runs to its end
    raise Terminated()


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` in the main thread; the previous handler
    is put back afterwards. Outside the main thread (where Python cannot set handlers) a no-op."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def interrupt_of(exc: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C or SIGTERM behind ``exc``, if any: a runner that ran the interrupted code (Beam
    wraps what a DoFn raises in a ``RuntimeError``) keeps it as a cause or context."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def interrupted_exit(exc: KeyboardInterrupt) -> int:
    """143 for a command ended by SIGTERM, 130 for Ctrl-C."""
    return Exit.TERMINATED if isinstance(exc, Terminated) else Exit.INTERRUPTED


__all__ = [
    "Terminated",
    "interrupt_of",
    "interrupted_exit",
    "terminate_as_interrupt",
]
