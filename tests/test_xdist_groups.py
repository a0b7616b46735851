"""``make test`` runs the tests under ``-n auto --dist loadgroup``: the tests of one ``xdist_group``
must share one worker, or a group's module-scoped fixture (a Dataflow translation, a package
build, a pipeline run) is made again on every worker (tests/conftest.py, ``_xdist_groups``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: the project's hook, as the tiny suite's conftest.py
CONFTEST = "from tests.conftest import pytest_collection_modifyitems  # noqa: F401\n"
SUITE = """
import os

import pytest


def _note(what: str) -> None:
    with open("log", "a") as f:
        f.write(f"{what} {os.environ['PYTEST_XDIST_WORKER']}\\n")


@pytest.fixture(scope="module")
def made() -> int:
    _note("fixture")
    return 1


@pytest.mark.xdist_group("one")
@pytest.mark.parametrize("i", range(8))
def test_grouped(made: int, i: int) -> None:
    _note(f"grouped{i}")


@pytest.mark.parametrize("i", range(8))
def test_free(i: int) -> None:
    pass
"""


def test_a_groups_tests_share_one_worker_and_its_module_fixture(tmp_path: Path) -> None:
    pytest.importorskip("xdist")
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_suite.py").write_text(SUITE)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTEST_XDIST_WORKER", None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "16 passed" in done.stdout
    log = [line.split() for line in (tmp_path / "log").read_text().splitlines()]
    assert sorted(what for what, _ in log) == ["fixture", *(f"grouped{i}" for i in range(8))]
    assert len({worker for _, worker in log}) == 1, log  # one worker, one fixture
