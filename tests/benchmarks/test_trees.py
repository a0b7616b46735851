"""``python -m bench.trees``: the same measurement in several source trees, runs alternating."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import gen, trees

ROOT = Path(__file__).resolve().parents[2]


def test_proc_cpu_reads_the_fields_after_the_last_parenthesis() -> None:
    # pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
    stat = b"4242 (python -c x) (y) S 1 4242 4242 0 -1 4194560 10 0 0 0 250 75 3 1 20 0 5 0\n"
    assert trees.proc_cpu(stat, 100) == pytest.approx(3.25)


def test_a_tree_that_is_not_a_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        trees.main([str(tmp_path), "1", f"gone={tmp_path / 'no-such-tree'}"])
    assert exc.value.code == 2
    assert "LABEL=FOLDER" in capsys.readouterr().err


@pytest.mark.slow  # a corpus and a fresh interpreter that imports the codecs
def test_same_work_runs_in_the_named_tree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus"
    gen.ensure(str(corpus), 20, 7)
    argv = [str(corpus), "20", f"this={ROOT}", "--measure", "same-work", "--rounds", "1", "--repeat", "1"]
    assert trees.main([*argv, "--fidelity", "off,full"]) == 0
    out = capsys.readouterr().out
    assert " round 0 this: files=20 cpu off=" in out and " full/off=" in out, out
