"""Live progress of a normalize run on the local runners.

Beam's counters (namespace ``bunzai``) can only be read once a local run is over. So every
``count()`` of the stages (pipeline/runtime/counters.py) is also added to a tally of the process it runs
in; when the job process asked for it — ``BUNZAI_PROGRESS_DIR`` names a folder in the environment,
which the runner's worker processes inherit — each process writes its tally there every
``FLUSH`` seconds, and ``Watch`` in the job process sums the files into the display
(``bunzai_codecs.progress.Progress``). Where the variable is not set (Dataflow workers, a run
without ``Watch``) nothing is tallied or written.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

import orjson

from bunzai_codecs.progress import Progress

ENV = "BUNZAI_PROGRESS_DIR"
#: seconds between two writes of a process's tally, and between two polls of the job process
FLUSH = 0.5
POLL = 0.25


class _Tally:
    """One process's counts, written to ``<folder>/<pid>-<id>.json`` while they change."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.pid = os.getpid()
        self.path = os.path.join(folder, f"{self.pid}-{uuid.uuid4().hex}.json")
        self.counts: dict[str, int] = {}
        self.lock = threading.Lock()
        self.dirty = False
        self.stopped = threading.Event()
        threading.Thread(target=self._loop, name="bunzai-progress", daemon=True).start()

    def add(self, name: str, n: int) -> None:
        with self.lock:
            self.counts[name] = self.counts.get(name, 0) + n
            self.dirty = True

    def _loop(self) -> None:
        while not self.stopped.wait(FLUSH):
            self.flush()

    def flush(self) -> None:
        with self.lock:
            if not self.dirty:
                return
            data = orjson.dumps(self.counts)
            self.dirty = False
        tmp = f"{self.path}.tmp"
        try:
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, self.path)
        except OSError:  # the run is over and its folder gone: stop
            self.stopped.set()
            _TALLIES.pop(self.folder, None)


_TALLIES: dict[str, _Tally] = {}
_LOCK = threading.Lock()


def note(name: str, n: int = 1) -> None:
    """Add ``n`` to counter ``name`` of this process's tally, if the job process is watching."""
    folder = os.environ.get(ENV)
    if not folder:
        return
    tally = _TALLIES.get(folder)
    if tally is None or tally.pid != os.getpid():
        with _LOCK:
            tally = _TALLIES.get(folder)
            if tally is None or tally.pid != os.getpid():
                if not os.path.isdir(folder):
                    return
                tally = _TALLIES[folder] = _Tally(folder)
    tally.add(name, n)


def read_counts(folder: str) -> dict[str, int]:
    """The sum of every process's tally in ``folder``."""
    total: dict[str, int] = {}
    for p in Path(folder).glob("*.json"):
        try:
            counts = orjson.loads(p.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            continue
        for k, v in counts.items():
            total[k] = total.get(k, 0) + int(v)
    return total


def flush_here() -> None:
    """Write this process's tally now (the job process's own, before its last poll)."""
    folder = os.environ.get(ENV)
    tally = _TALLIES.get(folder) if folder else None
    if tally is not None:
        tally.flush()


def show(display: Progress, counts: dict[str, int]) -> None:
    """The normalize counters as the display shows them: done / total inputs (distinct listed
    files; ``done`` = their read-to-export work is over), listed, read, decoded, rejects."""
    listed = counts.get("inputs_listed", 0)
    total = counts.get("inputs_queued", 0) or listed
    done = counts.get("inputs_done", 0)
    fields = {
        "listed": listed,
        "read": counts.get("inputs_read", 0),
        "decoded": counts.get("inputs_decoded", 0),
        "rejects": counts.get("rejects", 0),
    }
    if counts.get("inputs_unchanged"):
        fields["unchanged"] = counts["inputs_unchanged"]
    if not total:
        status = "listing"
    elif done >= total:
        status = "writing shards, report and manifest"
    else:
        status = ""
    display.set(done=done, total=total or None, status=status, **fields)


class Watch:
    """While open: ``BUNZAI_PROGRESS_DIR`` is set to a fresh folder and a thread feeds ``display``
    from it. Closing stops the thread, shows the last counts, and removes the folder."""

    def __init__(
        self, display: Progress, show: Callable[[Progress, dict[str, int]], None] | None = None
    ) -> None:
        self.display = display
        #: how the counters are shown (default: normalize's)
        self.show = show
        self.folder = ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._previous: str | None = None

    def __enter__(self) -> Watch:
        self.folder = tempfile.mkdtemp(prefix="bunzai-progress-")
        self._previous = os.environ.get(ENV)
        os.environ[ENV] = self.folder
        self._thread = threading.Thread(target=self._loop, name="bunzai-progress-watch", daemon=True)
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(POLL):
            self.poll()

    def poll(self) -> None:
        with contextlib.suppress(Exception):  # a display problem never stops the run
            (self.show or show)(self.display, read_counts(self.folder))

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        flush_here()
        self.poll()
        tally = _TALLIES.pop(self.folder, None)
        if tally is not None:
            tally.stopped.set()
        if self._previous is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = self._previous
        shutil.rmtree(self.folder, ignore_errors=True)


@contextlib.contextmanager
def watching(
    display: Progress | None, show: Callable[[Progress, dict[str, int]], None] | None = None
) -> Iterator[Any]:
    """``Watch(display, show)`` when there is a display, else nothing."""
    if display is None or display.quiet:
        yield None
        return
    with Watch(display, show) as w:
        yield w


__all__ = ["ENV", "Watch", "flush_here", "note", "read_counts", "show", "watching"]
