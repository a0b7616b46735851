"""pipeline/memory.py: the malloc settings reach this process and the workers it starts."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pipeline import memory


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc settings")
def test_settings_reach_child_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    memory.tune_malloc()
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os; print(os.environ['MALLOC_ARENA_MAX'], os.environ['MALLOC_MMAP_THRESHOLD_'])",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.split() == [str(memory.ARENA_MAX), str(memory.MMAP_THRESHOLD)]


def test_values_already_set_win_and_bad_ones_are_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "not a number")
    assert memory.tune_malloc() is False
    import os

    assert os.environ["MALLOC_ARENA_MAX"] == "4"
