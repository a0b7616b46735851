"""Replay every saved fuzz input (seeds and crashers) through the harnesses' own check, without atheris."""

from __future__ import annotations

import pytest

from .check import CORPUS, TARGETS, check

INPUTS = sorted(
    (t, p) for t in TARGETS for p in (CORPUS / t).iterdir() if p.is_file() and not p.name.startswith(".")
)


def test_every_target_has_a_saved_corpus() -> None:
    assert {t for t, _ in INPUTS} == set(TARGETS)


@pytest.mark.parametrize(("target", "path"), INPUTS, ids=[f"{t}/{p.name}" for t, p in INPUTS])
def test_saved_input_raises_only_typed_errors(target: str, path: object) -> None:
    from pathlib import Path

    assert isinstance(path, Path)
    check(target, path.read_bytes())


def test_every_harness_names_a_target() -> None:
    harnesses = {p.stem.removeprefix("fuzz_") for p in CORPUS.parent.glob("fuzz_*.py")}
    assert harnesses == set(TARGETS)
