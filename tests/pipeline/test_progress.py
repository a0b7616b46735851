"""Live progress of ``bunzai normalize`` on the local runners (pipeline/runtime/progress.py): a bar under a
pseudo-terminal, plain lines without one, nothing with ``--quiet``; on Dataflow, the job's console
URL."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path
from typing import Any

import pytest
from apache_beam.options.pipeline_options import PipelineOptions

from jobs.normalize import run as run_job
from jobs.runner import console_url, submitted

from .conftest import EXPECTED, PINNED, ROOT, SharedRuns


def run_in_pty(argv: list[str], rows: int = 40, cols: int = 160) -> tuple[int, str]:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    env = dict(os.environ, TERM="xterm")
    env.pop("BUNZAI_PROGRESS_INTERVAL", None)
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, cwd=ROOT, env=env)
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    os.close(master)
    return proc.wait(), b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.slow  # runs the pipeline
def test_normalize_shows_a_bar_on_a_terminal(shared: SharedRuns, tmp_path: Path) -> None:
    argv = [*PINNED, "--input", str(shared.inputs), "--output", str(tmp_path / "out")]
    code, text = run_in_pty([sys.executable, "-m", "jobs.normalize", *argv])
    assert code == 0, text
    n = len(EXPECTED)
    assert re.search(
        rf"bunzai normalize: 100%\|[^|]*\| {n}/{n} \[[^\]]*listed {n}, read {n}, decoded", text
    ), text
    assert "INPUTS  listed 10" in text  # then the summary


@pytest.mark.slow  # runs the pipeline
def test_normalize_without_a_terminal_prints_plain_lines(
    shared: SharedRuns, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("BUNZAI_PROGRESS_INTERVAL", "0")  # a line at every poll (default: every 10 s)
    argv = [*PINNED, "--input", str(shared.inputs), "--output", str(tmp_path / "out")]
    assert run_job(argv) == 0
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("bunzai normalize: ")]
    n = len(EXPECTED)
    assert lines, err
    assert lines[-1].startswith(
        f"bunzai normalize: {n}/{n} inputs (100%), listed {n}, read {n}, decoded 6, rejects 6"
    )
    assert "\r" not in err

    assert run_job([*argv, "--quiet"]) == 0
    assert capsys.readouterr().err == ""


class _Result:
    has_job = True

    def job_id(self) -> str:
        return "2024-06-02_01_02_03-1234567890"


def test_dataflow_prints_the_jobs_console_url() -> None:
    options = PipelineOptions(["--project=bunzai-dry-run", "--region=us-central1"])
    url = console_url(_Result(), options)  # type: ignore[arg-type]
    assert url == (
        "https://console.cloud.google.com/dataflow/jobs/us-central1/2024-06-02_01_02_03-1234567890"
        "?project=bunzai-dry-run"
    )
    built: Any = type("B", (), {"output": type("O", (), {"url": "gs://b/out"})()})()
    assert url in submitted(_Result(), built.output.url, url, prog="bunzai normalize")  # type: ignore[arg-type]
    assert console_url(type("R", (), {"has_job": False})(), options) is None  # type: ignore[arg-type]
