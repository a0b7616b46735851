"""`bunzai fidelity PATH... -o DIR`: walks files, writes rows, report.json and report.html."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from bunzai_codecs import cli
from bunzai_codecs.core import registry
from bunzai_codecs.exitcodes import Exit
from bunzai_codecs.fidelity.report import read_rows

from . import toys


@pytest.fixture(autouse=True)
def toy_registry() -> Iterator[None]:
    with registry.using(toys.TOYS):
        yield


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "in"
    (root / "books").mkdir(parents=True)
    (root / "books" / "b.toylore.json").write_bytes(toys.book())
    (root / "c.toycard.json").write_bytes(toys.card())
    (root / "notes.txt").write_bytes(b"not a card")
    (root / ".hidden").write_bytes(b"skipped")
    return root


def test_writes_rows_and_both_reports_with_labelled_input_keys(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert cli.main(["fidelity", f"corpus={tree}", "-o", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "report.html",
        "report.json",
        "rows-00000-of-00001.jsonl",
    ]
    rows = list(read_rows(out))
    assert {r.input for r in rows} == {
        "corpus/books/b.toylore.json",
        "corpus/c.toycard.json",
        "corpus/notes.txt",
    }
    rep = orjson.loads((out / "report.json").read_bytes())
    assert rep["meta"] == {"roots": ["corpus"]}
    assert rep["inputs"]["files"] == 3 and rep["inputs"]["rejected"] == 1
    assert str(tree) not in (out / "report.json").read_text()  # no machine-specific paths
    assert "3 files (1 rejected)" in capsys.readouterr().err


def test_a_folder_is_labelled_by_its_name_and_to_limits_targets(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert cli.main(["fidelity", str(tree / "books"), "--to", "toy-narrow", "-o", str(out), "-q"]) == 0
    rows = list(read_rows(out))
    assert {r.input for r in rows} == {"books/b.toylore.json"}
    assert {r.target for r in rows if r.check == "cross"} == {"toy-narrow"}


def test_exclude_globs_match_names_and_keys(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["fidelity", f"x={tree}", "--exclude", "*.txt", "--exclude", "x/books/*", "-o", str(out), "-q"]
    assert cli.main(args) == 0
    assert {r.input for r in read_rows(out)} == {"x/c.toycard.json"}


def test_the_same_inputs_give_the_same_bytes(tree: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert cli.main(["fidelity", str(tree), "-o", str(a), "-q"]) == 0
    assert cli.main(["fidelity", str(tree), "-o", str(b), "-q"]) == 0
    for name in ("rows-00000-of-00001.jsonl", "report.json", "report.html"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_a_missing_path_is_an_input_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["fidelity", str(tmp_path / "nope"), "-o", str(tmp_path / "o")]) == Exit.INPUT
    assert "no such file or directory" in capsys.readouterr().err
