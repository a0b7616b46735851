"""A live progress display for the long commands (``bunzai fidelity``, ``bunzai normalize``).

    with Progress("fidelity", unit="files", total=len(paths), quiet=args.quiet) as bar:
        for path in paths:
            ...
            bar.advance(rejected=int(failed))

On a terminal it is a tqdm bar: done / total, rate and ETA, with the counters beside it. Without
one (a pipe, a log file, CI) it is one plain line every ``interval`` seconds (default 10; the
environment variable ``BUNZAI_PROGRESS_INTERVAL`` changes it), and a last line when it closes.
``quiet`` shows nothing. It writes to stderr (stdout stays the command's output), and a caller
may feed it from another thread (``set``): updates are serialised.
"""

from __future__ import annotations

import io
import os
import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import IO, Any

#: seconds between two plain lines (no terminal)
DEFAULT_INTERVAL = 10.0
INTERVAL_ENV = "BUNZAI_PROGRESS_INTERVAL"


def interval_from_env(default: float = DEFAULT_INTERVAL) -> float:
    text = os.environ.get(INTERVAL_ENV, "").strip()
    try:
        value = float(text) if text else default
    except ValueError:
        return default
    return max(0.0, value)


def _duration(seconds: float) -> str:
    s = max(0, round(seconds))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def _unsized(stream: IO[str]) -> bool:
    """Whether the terminal reports no size (a pseudo-terminal nobody sized): tqdm would then
    draw an empty bar, or none at all."""
    try:
        size = os.get_terminal_size(stream.fileno())
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return True
    return size.columns <= 0 or size.lines <= 0


class Progress:
    """Progress of ``done`` out of ``total`` (which may be unknown for a while, or grow), with
    named counters shown beside it (``read 420, decoded 400, rejected 20``)."""

    def __init__(
        self,
        label: str,
        *,
        unit: str = "files",
        total: int | None = None,
        stream: IO[str] | None = None,
        quiet: bool = False,
        interval: float | None = None,
        tty: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.unit = unit
        self.total = total
        self.done = 0
        self.counts: dict[str, int] = {}
        self.status = ""
        self.stream: IO[str] = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.interval = interval_from_env() if interval is None else interval
        self.clock = clock
        self._lock = threading.Lock()
        self._started = clock()
        self._last_line: float | None = None
        self._closed = False
        self._bar: Any = None
        if tty is None:
            isatty = getattr(self.stream, "isatty", None)
            tty = bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"
        self.tty = tty
        if not quiet and tty:
            from tqdm import tqdm  # only a terminal needs it

            unsized = _unsized(self.stream)
            self._bar = tqdm(
                total=total,
                desc=label,
                unit=unit[:-1] if unit.endswith("s") else unit,
                file=self.stream,
                dynamic_ncols=not unsized,  # follows the window, where it has a size
                ncols=80 if unsized else None,
                nrows=24 if unsized else None,
                mininterval=0.2,
                leave=True,
            )

    # -- feeding it ---------------------------------------------------------------------------------

    def set(
        self, *, done: int | None = None, total: int | None = None, status: str | None = None, **counts: int
    ) -> None:
        """Absolute values (what a poller that sums counters has)."""
        with self._lock:
            if done is not None:
                self.done = done
            if total is not None:
                self.total = total
            if status is not None:
                self.status = status
            self.counts.update(counts)
            self._show()

    def advance(self, n: int = 1, **increments: int) -> None:
        """``n`` more done; each counter in ``increments`` grows by its value."""
        with self._lock:
            self.done += n
            for k, v in increments.items():
                self.counts[k] = self.counts.get(k, 0) + v
            self._show()

    def write(self, text: str) -> None:
        """A line of the command's own (``--verbose``), printed above the bar rather than through it."""
        with self._lock:
            if self._bar is not None:
                self._bar.write(text, file=self.stream)
            else:
                print(text, file=self.stream)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self.quiet:
                return
            if self._bar is not None:
                self._sync_bar()
                self._bar.close()
            else:
                self._line()

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- showing it ---------------------------------------------------------------------------------

    def _postfix(self) -> str:
        parts = [f"{k} {v}" for k, v in self.counts.items()]
        if self.status:
            parts.append(self.status)
        return ", ".join(parts)

    def _sync_bar(self) -> None:
        bar = self._bar
        if self.total is not None and bar.total != self.total:
            bar.total = self.total
        bar.set_postfix_str(self._postfix(), refresh=False)
        if self.done != bar.n:
            bar.update(self.done - bar.n)  # refreshes when mininterval has passed
        else:
            bar.refresh()

    def _show(self) -> None:
        if self.quiet or self._closed:
            return
        if self._bar is not None:
            self._sync_bar()
            return
        if not (self.done or self.status or any(self.counts.values())):
            return  # nothing counted yet (a pipeline starting): a line of zeros says nothing
        now = self.clock()
        since = now - (self._last_line if self._last_line is not None else self._started)
        if since >= self.interval:
            self._line()

    def line(self) -> str:
        """The plain line for the current state."""
        elapsed = self.clock() - self._started
        head = f"{self.label}: {self.done}"
        if self.total:
            head += f"/{self.total} {self.unit} ({100 * self.done // max(1, self.total)}%)"
        else:
            head += f" {self.unit}"
        parts = [head]
        post = self._postfix()
        if post:
            parts.append(post)
        rate = self.done / elapsed if elapsed > 0 else 0.0
        if rate > 0:
            parts.append(f"{rate:.1f} {self.unit}/s")
        if self.total and rate > 0 and self.done < self.total:
            parts.append(f"ETA {_duration((self.total - self.done) / rate)}")
        parts.append(f"elapsed {_duration(elapsed)}")
        return ", ".join(parts)

    def _line(self) -> None:
        self._last_line = self.clock()
        try:
            self.stream.write(self.line() + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: progress is never worth a failure
            self.quiet = True


__all__ = ["DEFAULT_INTERVAL", "INTERVAL_ENV", "Progress", "interval_from_env"]
