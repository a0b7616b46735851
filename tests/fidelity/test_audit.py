"""`bunzai audit`: a baseline recorded from a run, doctored baselines and regressed codecs must fail
with a message that says what regressed; what only one run covered is never compared."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from bunzai_codecs import cli
from bunzai_codecs.core import registry
from bunzai_codecs.fidelity import FidelityRow, check_file
from bunzai_codecs.fidelity_report import build_report, rows_jsonl, write_report
from jobs import audit

from . import toys


@pytest.fixture(autouse=True)
def toy_registry() -> Iterator[None]:
    with registry.using(toys.TOYS):
        yield


def _inputs() -> dict[str, bytes]:
    unstable = orjson.loads(toys.book())
    unstable["toy"] = "toy-unstable"
    return {
        "s/book.json": toys.book(),
        "s/card.json": toys.card(),
        "s/unstable.json": orjson.dumps(unstable),
        "s/junk.bin": b"\x00 not a file bunzai reads",
    }


def _run(folder: Path, files: dict[str, bytes] | None = None, targets: list[str] | None = None) -> Path:
    rows: list[FidelityRow] = []
    for key, data in sorted((files or _inputs()).items()):
        rows += check_file(data, key.rsplit("/", 1)[-1], input=key, targets=targets)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rows-00000-of-00001.jsonl").write_bytes(rows_jsonl(rows))
    write_report(build_report(rows, {"roots": ["s"]}), folder)
    return folder / "report.json"


def _audit(report: Path, baseline: Path, *extra: str) -> int:
    return cli.main(["audit", "--report", str(report), "--baseline", str(baseline), *extra])


@pytest.fixture
def recorded(tmp_path: Path) -> tuple[Path, Path]:
    report = _run(tmp_path / "run")
    baseline = tmp_path / "baseline.tsv"
    assert _audit(report, baseline, "--write-baseline") == 0
    return report, baseline


def _doctor(baseline: Path, old: str, new: str) -> None:
    text = baseline.read_text()
    assert old in text, f"{old!r} not in the baseline:\n{text}"
    baseline.write_text(text.replace(old, new))


def test_the_baseline_is_small_sorted_readable_text(recorded: tuple[Path, Path]) -> None:
    _, baseline = recorded
    lines = [x for x in baseline.read_text().splitlines() if not x.startswith("#")]
    assert lines[0] == "roots\ts"
    inputs = [x for x in lines if x.startswith("input\t")]
    assert inputs == sorted(inputs) and len(inputs) == 4
    assert "input\ts/junk.bin\t" in "\n".join(inputs) and "\trejected\tNotRecognized" in "\n".join(inputs)
    assert any(
        x.startswith("input\ts/book.json\t")
        and x.endswith("\tdecoded\ttoy-lore\tnative=lossless\tstability=lossless")
        for x in inputs
    )
    pairs = [x for x in lines if x.startswith("pair\t")]
    assert pairs == sorted(pairs)
    assert (
        "pair\tlorebook\ttoy-lore -> toy-leaky\tlossless\tn=1 lossless=1 expected=0 unexpected=0 errors=0"
        in pairs
    )
    unexpected = [x for x in lines if x.startswith("unexpected\t")]
    assert "unexpected\tlorebook\ttoy-lore -> toy-buggy\tlost\tentries[].comment\t1" in unexpected
    assert "unexpected\tlorebook\ttoy-lore -> toy-crash\terror\tKeyError\t1" in unexpected
    # the text round-trips through the parser
    snap = audit.Snapshot.from_text(baseline.read_text())
    assert snap.to_text() == baseline.read_text()


def test_the_same_run_passes(recorded: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    report, baseline = recorded
    assert _audit(report, baseline) == 0
    out = capsys.readouterr().out
    assert "no regressions" in out and "4 inputs" in out


def test_a_doctored_lossless_pair_fails_with_a_clear_message(
    recorded: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    report, baseline = recorded
    _doctor(
        baseline,
        "pair\tlorebook\ttoy-lore -> toy-narrow\tlossy\tn=1 lossless=0 expected=1 unexpected=0 errors=0",
        "pair\tlorebook\ttoy-lore -> toy-narrow\tlossless\tn=1 lossless=1 expected=0 unexpected=0 errors=0",
    )
    assert _audit(report, baseline) == audit.EXIT_REGRESSION
    err = capsys.readouterr().err
    assert "1 regression(s)" in err
    assert (
        "LOSSY  lorebook toy-lore -> toy-narrow: lossless on all 1 entities in the baseline, now 1 of 1 lose data, "
        'e.g. s/book.json "Lanternfall": lost description (expected)'
    ) in err
    assert "make baseline" in err


def test_doctored_inputs_fail_as_reject_and_round_trip(
    recorded: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    report, baseline = recorded
    text = baseline.read_text()
    junk = next(x for x in text.splitlines() if x.startswith("input\ts/junk.bin"))
    _doctor(
        baseline,
        junk,
        junk.replace("\trejected\tNotRecognized", "\tdecoded\ttoy-lore\tnative=lossless\tstability=lossless"),
    )
    _doctor(
        baseline,
        "toy-unstable\tnative=unexpected\tstability=unexpected",
        "toy-unstable\tnative=lossless\tstability=unexpected",
    )
    assert _audit(report, baseline) == 1
    err = capsys.readouterr().err
    assert (
        "REJECT      s/junk.bin: decoded as toy-lore in the baseline, now rejected: NotRecognized: no format recognised"
        in err
    )
    assert (
        "ROUND TRIP  s/unstable.json (toy-unstable): native round trip was lossless, now unexpected: "
        "native: lost ['x-unknown'] (unexpected), changed title (unexpected)"
    ) in err


def test_a_removed_unexpected_line_is_a_new_unexpected_path(
    recorded: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    report, baseline = recorded
    _doctor(baseline, "unexpected\tlorebook\ttoy-lore -> toy-buggy\tlost\tentries[].comment\t1\n", "")
    _doctor(baseline, "unexpected\tlorebook\ttoy-lore -> toy-crash\terror\tKeyError\t1\n", "")
    assert _audit(report, baseline) == 1
    err = capsys.readouterr().err
    assert (
        "UNEXPECTED  lorebook toy-lore -> toy-buggy: new unexpected lost path entries[].comment (1 entities)"
        in err
    )
    assert (
        "UNEXPECTED  lorebook toy-lore -> toy-crash: new unexpected fails with KeyError (1 entities)" in err
    )


class _LeakyRegressed(toys.ToyLoreNarrow):
    """toy-leaky after a bad change: same id and coverage, but it now writes only content and keys."""

    id = "toy-leaky"
    family = "leaky"
    coverage = toys.ToyLore.coverage


def test_a_codec_change_that_loses_data_fails_the_audit(
    recorded: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, baseline = recorded
    with registry.using({**toys.TOYS, "toy-leaky": _LeakyRegressed}):
        report = _run(tmp_path / "regressed")
    assert _audit(report, baseline) == 1
    err = capsys.readouterr().err
    assert "LOSSY       lorebook toy-lore -> toy-leaky: lossless on all 1 entities" in err
    assert "UNEXPECTED  lorebook toy-lore -> toy-leaky: new unexpected lost path entries[].title" in err
    assert "UNEXPECTED  lorebook toy-lore -> toy-leaky: new unexpected changed path entries[].id" in err


def test_only_what_both_runs_covered_is_compared(
    recorded: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, baseline = recorded
    files = _inputs()
    del files["s/card.json"]  # e.g. CI without the corpus
    del files["s/unstable.json"]
    files["s/book.json"] = toys.book(edited=True)  # changed since the baseline: not comparable
    files["s/new.json"] = toys.book(another=1)  # not in the baseline
    # a regressed codec that only the changed / new inputs would reveal
    with registry.using({**toys.TOYS, "toy-leaky": _LeakyRegressed}):
        report = _run(tmp_path / "partial", files)
    assert _audit(report, baseline) == 0
    out = capsys.readouterr().out
    assert "no regressions" in out and "1 inputs" in out
    assert "note: 2 baseline inputs were not in this run (not compared)" in out
    assert "note: 1 inputs of this run are not in the baseline (not compared)" in out
    assert "note: 1 inputs changed since the baseline (not compared)" in out


def test_new_format_pairs_are_noted_not_failed(
    recorded: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report, baseline = recorded
    text = baseline.read_text()
    kept = [x for x in text.splitlines() if "toy-buggy" not in x]
    baseline.write_text("\n".join(kept) + "\n")
    assert _audit(report, baseline) == 0
    assert "format pairs are not in the baseline (not compared)" in capsys.readouterr().out


def test_improvements_are_reported_and_do_not_fail(
    recorded: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    report, baseline = recorded
    _doctor(
        baseline,
        "pair\tlorebook\ttoy-lore -> toy-leaky\tlossless\tn=1 lossless=1 expected=0 unexpected=0 errors=0",
        "pair\tlorebook\ttoy-lore -> toy-leaky\tlossy\tn=1 lossless=0 expected=1 unexpected=0 errors=0",
    )
    assert _audit(report, baseline) == 0
    out = capsys.readouterr().out
    assert "1 improvement(s)" in out and "toy-lore -> toy-leaky: now lossless on all 1 entities" in out


def test_usage_errors_exit_2_with_the_reason(
    tmp_path: Path, recorded: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    report, baseline = recorded
    assert _audit(tmp_path / "nowhere" / "report.json", baseline) == audit.EXIT_USAGE
    assert "no such report" in capsys.readouterr().err
    assert _audit(report, tmp_path / "none.tsv") == audit.EXIT_USAGE
    assert "record one with --write-baseline" in capsys.readouterr().err
    bad = tmp_path / "bad.tsv"
    bad.write_text("roots\ts\npair\tlorebook\tno arrow here\tlossless\tn=1\n")
    assert _audit(report, bad) == audit.EXIT_USAGE
    assert f"{bad}:2: cannot read this line" in capsys.readouterr().err


def test_python_m_jobs_audit_is_the_same_command(recorded: tuple[Path, Path]) -> None:
    report, baseline = recorded
    assert audit.main(["--report", str(report), "--baseline", str(baseline)]) == 0
    _doctor(
        baseline,
        "toy-lore -> toy-leaky\tlossless\tn=1 lossless=1",
        "toy-lore -> toy-leaky\tlossless\tn=2 lossless=2",
    )
    assert audit.main(["--report", str(report.parent), "--baseline", str(baseline)]) == 0
    _doctor(
        baseline,
        "toy-lore -> toy-narrow\tlossy\tn=1 lossless=0 expected=1",
        "toy-lore -> toy-narrow\tlossless\tn=1 lossless=1 expected=0",
    )
    assert audit.main(["--report", str(report), "--baseline", str(baseline)]) == 1
