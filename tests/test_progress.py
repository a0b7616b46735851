"""The progress display (bunzai_codecs/progress.py): a bar on a terminal, a plain line every
``interval`` seconds without one, nothing with ``quiet``; and ``bunzai fidelity`` showing it under a
pseudo-terminal. Time is a fake clock here: nothing depends on how fast the machine is."""

from __future__ import annotations

import io
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

from bunzai_codecs.progress import Progress

ROOT = Path(__file__).resolve().parents[1]


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_without_a_terminal_a_line_every_interval() -> None:
    clock, out = Clock(), io.StringIO()
    p = Progress("job", unit="files", total=10, stream=out, interval=10.0, clock=clock, tty=False)
    p.advance(read=1)
    clock.t = 9.9
    p.advance(read=1)
    assert out.getvalue() == ""  # not yet
    clock.t = 10.0
    p.advance(read=1, rejected=1)
    assert out.getvalue().splitlines() == [
        "job: 3/10 files (30%), read 3, rejected 1, 0.3 files/s, ETA 0:23, elapsed 0:10"
    ]
    clock.t = 15.0
    p.set(done=4)
    assert len(out.getvalue().splitlines()) == 1
    clock.t = 20.0
    p.set(done=5, status="writing")  # a poller that only sets values gets its line too
    assert out.getvalue().splitlines()[-1].startswith("job: 5/10 files (50%), read 3, rejected 1, writing")
    p.close()  # and a last line, whatever the time
    assert len(out.getvalue().splitlines()) == 3
    p.close()
    assert len(out.getvalue().splitlines()) == 3


def test_no_line_before_anything_was_counted() -> None:
    """A poller's first reading comes before the pipeline counted anything: the plain line waits
    for something to say (issue 32: ``bunzai export: 0 lines, selected 0, written 0``)."""
    clock, out = Clock(), io.StringIO()
    p = Progress("bunzai export", unit="lines", stream=out, interval=1.0, clock=clock, tty=False)
    clock.t = 5.0
    p.set(done=0, total=None, status="", selected=0, written=0)
    assert out.getvalue() == ""
    p.set(done=110, selected=25, written=25)
    assert out.getvalue().splitlines() == [
        "bunzai export: 110 lines, selected 25, written 25, 22.0 lines/s, elapsed 0:05"
    ]


def test_an_unknown_total_and_the_interval_from_the_environment(monkeypatch: object) -> None:
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    monkeypatch.setenv("BUNZAI_PROGRESS_INTERVAL", "0")
    clock, out = Clock(), io.StringIO()
    p = Progress("listing", unit="inputs", stream=out, clock=clock, tty=False)
    p.set(done=0, status="listing")
    assert out.getvalue() == "listing: 0 inputs, listing, elapsed 0:00\n"


def test_quiet_shows_nothing() -> None:
    out = io.StringIO()
    with Progress("job", total=3, stream=out, interval=0.0, tty=False, quiet=True) as p:
        p.advance(3)
    with Progress("job", total=3, stream=out, tty=True, quiet=True) as p:
        p.advance(3)
    assert out.getvalue() == ""


def test_on_a_terminal_a_bar() -> None:
    out = io.StringIO()
    with Progress("job", unit="files", total=4, stream=out, tty=True) as p:
        for _ in range(4):
            p.advance(read=1)
    text = out.getvalue()
    assert "job: 100%|" in text and "4/4" in text and "read 4" in text


def test_the_commands_own_lines_go_above_the_bar() -> None:
    for tty in (True, False):
        out = io.StringIO()
        with Progress("job", total=2, stream=out, tty=tty, interval=100.0) as p:
            p.advance()
            p.write("a.json: 3 checks, worst lossless")
            p.advance()
        assert "a.json: 3 checks, worst lossless\n" in out.getvalue()


def test_a_closed_stream_never_fails_the_work() -> None:
    out = io.StringIO()
    p = Progress("job", total=2, stream=out, interval=0.0, tty=False)
    out.close()
    p.advance()
    p.close()


def run_in_pty(argv: list[str], env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run ``argv`` with a pseudo-terminal as its stdout and stderr; what it printed, as text."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, cwd=ROOT, env=env, close_fds=True
    )
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    os.close(master)
    return proc.wait(), b"".join(chunks).decode("utf-8", "replace")


def test_fidelity_shows_a_bar_on_a_terminal(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TERM"} | {"TERM": "xterm"}
    code, text = run_in_pty(
        [
            sys.executable,
            "-m",
            "bunzai_codecs.cli",
            "fidelity",
            "samples/sillytavern",
            "-o",
            str(tmp_path / "r"),
        ],
        env,
    )
    assert code == 0, text
    n = len([p for p in (ROOT / "samples" / "sillytavern").iterdir() if not p.name.startswith(".")])
    assert re.search(rf"bunzai fidelity: 100%\|[^|]*\| {n}/{n} \[", text), text
    assert "\r" in text  # redrawn in place


def test_fidelity_without_a_terminal_prints_plain_lines(tmp_path: Path) -> None:
    env = dict(os.environ, BUNZAI_PROGRESS_INTERVAL="0")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bunzai_codecs.cli",
            "fidelity",
            "samples/sillytavern",
            "-o",
            str(tmp_path / "r"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("bunzai fidelity: ")]
    n = len([p for p in (ROOT / "samples" / "sillytavern").iterdir() if not p.name.startswith(".")])
    assert lines[0].startswith(f"bunzai fidelity: 1/{n} files")
    assert lines[-1].startswith(f"bunzai fidelity: {n}/{n} files (100%), rejected 0")
    assert "\r" not in proc.stderr
    quiet = subprocess.run(
        [
            sys.executable,
            "-m",
            "bunzai_codecs.cli",
            "fidelity",
            "samples/sillytavern",
            "-o",
            str(tmp_path / "q"),
            "-q",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )
    assert quiet.returncode == 0 and quiet.stderr == ""
