"""pipeline/runtime/memory.py: the malloc settings reach this process and the workers it starts; the
collector threshold is raised where inputs are handled."""

from __future__ import annotations

import gc
import subprocess
import sys
from typing import Any

import pytest

from pipeline.runtime import memory


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


@pytest.fixture
def gc_threshold() -> Any:
    """Restores the collector's settings whatever the test does to them."""
    before, enabled = gc.get_threshold(), gc.isenabled()
    yield before
    gc.set_threshold(*before)
    if enabled:
        gc.enable()
    else:
        gc.disable()


def test_tune_gc_raises_the_young_threshold_once(gc_threshold: Any) -> None:
    gc.set_threshold(memory.CPYTHON_GEN0, 10, 10)
    assert memory.tune_gc() is True
    assert gc.get_threshold() == (memory.GC_GEN0, 10, 10)  # the older generations keep theirs
    assert memory.tune_gc() is False  # already there


def test_tune_gc_leaves_a_higher_threshold_and_a_disabled_collector(gc_threshold: Any) -> None:
    gc.set_threshold(memory.GC_GEN0 * 5, 3, 4)
    assert memory.tune_gc() is False
    assert gc.get_threshold() == (memory.GC_GEN0 * 5, 3, 4)
    gc.set_threshold(0, 10, 10)  # 0 switches automatic collection off
    assert memory.tune_gc() is False
    assert gc.get_threshold()[0] == 0
    gc.set_threshold(memory.CPYTHON_GEN0, 10, 10)
    gc.disable()
    assert memory.tune_gc() is False
    assert gc.get_threshold()[0] == memory.CPYTHON_GEN0


def test_the_stages_that_handle_inputs_tune_the_collector(gc_threshold: Any) -> None:
    from pipeline.normalize.decode import _Decode
    from pipeline.normalize.read import _ReadBytes
    from pipeline.normalize.roundtrip import _RoundTrip
    from pipeline.runtime.storage import Storage

    for dofn in (
        _ReadBytes(("memory://bunzai-gc",), Storage(), 1 << 20, False),
        _Decode(),
        _RoundTrip(),
    ):
        gc.set_threshold(memory.CPYTHON_GEN0, 10, 10)
        dofn.setup()
        assert gc.get_threshold()[0] == memory.GC_GEN0, type(dofn).__name__
