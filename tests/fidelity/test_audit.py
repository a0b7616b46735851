"""`bunzai audit`: a baseline recorded from a run, doctored baselines and regressed codecs must fail
with a message that says what regressed; what only one run covered is never compared."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from bunzai_codecs import audit, cli
from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import Coverage
from bunzai_codecs.exitcodes import Exit
from bunzai_codecs.fidelity import FidelityRow, check_file
from bunzai_codecs.fidelity.report import build_report, rows_jsonl, write_report

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
    # toys.book()'s canonical body weighs 144 (tests/fidelity/test_kept.py does the sum by hand)
    assert (
        "pair\tlorebook\ttoy-lore -> toy-leaky\tlossless\tn=1 lossless=1 expected=0 unexpected=0 errors=0 "
        "weight=144 lost=0" in pairs
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
    assert _audit(report, baseline) == Exit.REGRESSION
    err = capsys.readouterr().err
    assert "1 regression(s)" in err
    assert (
        "LOSSY  lorebook toy-lore -> toy-narrow: lossless on all 1 entities in the baseline, now 1 of 1 lose data, "
        'e.g. s/book.json "Lanternfall": lost description (expected)'
    ) in err
    # the hint is a command the user can run, not a developer's make target
    assert "make baseline" not in err
    assert f"`bunzai audit --report {report} --baseline {baseline} --write-baseline`" in err


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
    assert _audit(report, baseline) == Exit.REGRESSION
    err = capsys.readouterr().err
    assert (
        "REJECT      s/junk.bin: decoded as toy-lore in the baseline, now rejected: NotRecognized: no format recognised"
        in err
    )
    assert (
        "ROUND TRIP  s/unstable.json (toy-unstable): native round trip was lossless, now unexpected: "
        "native: lost ['x-unknown'] (unexpected), changed title (unexpected)"
    ) in err


def test_a_canonical_stability_regression_fails_the_audit(
    recorded: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 37, behaviour 5: a file whose canonical stability was lossless in the baseline and is
    not now fails the audit, on its own (its native round trip as it was)."""
    report, baseline = recorded
    _doctor(
        baseline,
        "toy-unstable\tnative=unexpected\tstability=unexpected",
        "toy-unstable\tnative=unexpected\tstability=lossless",
    )
    assert _audit(report, baseline) == Exit.REGRESSION
    err = capsys.readouterr().err
    assert "1 regression(s)" in err
    assert (
        "ROUND TRIP  s/unstable.json (toy-unstable): canonical stability was lossless, now unexpected: "
    ) in err


def test_a_canonical_stability_improvement_is_reported_and_does_not_fail(
    recorded: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    report, baseline = recorded
    book = next(x for x in baseline.read_text().splitlines() if x.startswith("input\ts/book.json\t"))
    _doctor(baseline, book, book.replace("stability=lossless", "stability=unexpected"))
    assert _audit(report, baseline) == 0
    out = capsys.readouterr().out
    assert "1 improvement(s)" in out
    assert "s/book.json (toy-lore): canonical stability was unexpected, now lossless" in out


def test_a_removed_unexpected_line_is_a_new_unexpected_path(
    recorded: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    report, baseline = recorded
    _doctor(baseline, "unexpected\tlorebook\ttoy-lore -> toy-buggy\tlost\tentries[].comment\t1\n", "")
    _doctor(baseline, "unexpected\tlorebook\ttoy-lore -> toy-crash\terror\tKeyError\t1\n", "")
    assert _audit(report, baseline) == Exit.REGRESSION
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
    assert _audit(report, baseline) == Exit.REGRESSION
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
    assert _audit(tmp_path / "nowhere" / "report.json", baseline) == Exit.INPUT
    assert "no such report" in capsys.readouterr().err
    assert _audit(report, tmp_path / "none.tsv") == Exit.INPUT
    assert "record one with --write-baseline" in capsys.readouterr().err
    bad = tmp_path / "bad.tsv"
    bad.write_text("roots\ts\npair\tlorebook\tno arrow here\tlossless\tn=1\n")
    assert _audit(report, bad) == Exit.INPUT
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
    assert audit.main(["--report", str(report), "--baseline", str(baseline)]) == Exit.REGRESSION


# -- a previous run as the baseline -------------------------------------------------------------------


class _NarrowerRegressed(toys.ToyLoreNarrow):
    """toy-narrow after a change that also stops writing keys, with its coverage narrowed to
    match: every loss is still expected and the pair was lossy already, so only the kept share
    shows it."""

    id = "toy-narrow"
    family = "narrow"
    entry_keys = ("text",)
    coverage = Coverage.of("name", "entries[].content")


def test_a_previous_report_json_or_its_folder_is_a_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _run(tmp_path / "old")
    new = _run(tmp_path / "new")
    for baseline in (old, old.parent, Path(f"{old.parent}/")):
        assert cli.main(["audit", "--report", str(new), "--baseline", str(baseline)]) == 0
        out = capsys.readouterr().out
        assert f"no regressions against {baseline}" in out and "4 inputs and 25 format pairs compared" in out


def test_a_previous_run_catches_a_codec_regression(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _run(tmp_path / "old")
    with registry.using({**toys.TOYS, "toy-leaky": _LeakyRegressed}):
        new = _run(tmp_path / "new")
    assert cli.main(["audit", "--report", str(new), "--baseline", str(old.parent)]) == Exit.REGRESSION
    err = capsys.readouterr().err
    assert "LOSSY       lorebook toy-lore -> toy-leaky: lossless on all 1 entities" in err
    assert "UNEXPECTED  lorebook toy-lore -> toy-leaky: new unexpected lost path entries[].title" in err
    # toy-leaky now loses the book's description 13, titles 6 + 6, comment 13, ids 1 + 1 and
    # probability 1 = 41 of 144 (as toy-narrow does): kept 100% -> 71.53%
    assert (
        "KEPT        lorebook toy-lore -> toy-leaky: kept 100.00% of the content in the baseline, now 71.53% "
        "(28.47 points less; tolerance 0.1); more lost at "
    ) in err


def test_the_kept_rule_catches_a_loss_the_other_rules_accept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _run(tmp_path / "old")
    with registry.using({**toys.TOYS, "toy-narrow": _NarrowerRegressed}):
        new = _run(tmp_path / "new")
    assert cli.main(["audit", "--report", str(new), "--baseline", str(old)]) == Exit.REGRESSION
    err = capsys.readouterr().err
    # the book (144) lost 41 to toy-narrow; now also its three trigger texts "market" 6, "bridge" 6
    # and "river" 5 (their isRegex flags go with them: 3): 61 lost, kept 83/144 = 57.64% (was 71.53%)
    # the same book reaches toy-narrow from three sources (the book, the card's copy, the unstable
    # one), and nothing but the kept share regressed
    assert "3 regression(s)" in err
    assert [x.split()[0] for x in err.splitlines() if x.startswith("  ")] == ["KEPT"] * 3
    assert (
        "KEPT  lorebook toy-lore -> toy-narrow: kept 71.53% of the content in the baseline, now 57.64% "
        "(13.89 points less; tolerance 0.1); more lost at lost entries[].triggers[].text (+17), "
        "lost entries[].triggers[].isRegex (+3)"
    ) in err
    # a stated tolerance above the drop lets it pass
    assert cli.main(["audit", "--report", str(new), "--baseline", str(old), "--kept-tolerance", "14"]) == 0


def test_the_tsv_baseline_records_and_checks_kept_weights(
    recorded: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    report, baseline = recorded
    # toy-lore -> toy-narrow: 41 of 144 lost (test_kept works it out); doctored to 30 lost
    _doctor(
        baseline,
        "toy-lore -> toy-narrow\tlossy\tn=1 lossless=0 expected=1 unexpected=0 errors=0 weight=144 lost=41",
        "toy-lore -> toy-narrow\tlossy\tn=1 lossless=0 expected=1 unexpected=0 errors=0 weight=144 lost=30",
    )
    assert _audit(report, baseline) == Exit.REGRESSION
    err = capsys.readouterr().err
    # 114/144 = 79.17% in the baseline, 103/144 = 71.53% now; a TSV keeps no paths, so the
    # message names what this run loses most
    assert (
        "KEPT  lorebook toy-lore -> toy-narrow: kept 79.17% of the content in the baseline, now 71.53% "
        "(7.64 points less; tolerance 0.1); most lost at lost description (13), lost entries[].comment (13), "
        "lost entries[].title (12)"
    ) in err
    assert _audit(report, baseline, "--kept-tolerance", "8") == 0
    capsys.readouterr()
    _doctor(baseline, " weight=144 lost=30", " weight=144 lost=150")
    assert _audit(report, baseline) == Exit.INPUT
    assert "weight and lost go together, lost <= weight" in capsys.readouterr().err


def test_a_tsv_kept_share_is_compared_only_over_the_same_inputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = {**_inputs(), "s/book2.json": toys.book(another=1)}
    baseline = tmp_path / "baseline.tsv"
    assert _audit(_run(tmp_path / "old", files), baseline, "--write-baseline") == 0
    del files["s/book2.json"]  # e.g. a corpus file, absent in CI
    with registry.using({**toys.TOYS, "toy-narrow": _NarrowerRegressed}):
        report = _run(tmp_path / "new", files)
    # the baseline's toy-lore totals count book2: a share over book.json alone does not compare
    # with them, so toy-lore's drop is not judged; the card's and the unstable book's are
    assert _audit(report, baseline) == Exit.REGRESSION
    err = capsys.readouterr().err
    kept = [x.split(":")[0].split()[1:] for x in err.splitlines() if x.startswith("  KEPT")]
    assert kept == [
        ["lorebook", "toy-card", "->", "toy-narrow"],
        ["lorebook", "toy-unstable", "->", "toy-narrow"],
    ]
    assert "note: 7 format pairs' kept share not compared: the baseline counts inputs of their source" in err
    # a previous run's rows are recounted over the inputs both read: toy-lore's drop is found too
    assert _audit(report, tmp_path / "old") == Exit.REGRESSION
    assert "KEPT  lorebook toy-lore -> toy-narrow: kept 71.53%" in capsys.readouterr().err


def test_a_normalize_output_folder_is_a_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = _run(tmp_path / "old" / "fidelity").parent
    (old / "manifest.json").write_text('{"options": {"fidelity": "full"}}')
    new = _run(tmp_path / "new" / "fidelity").parent
    assert cli.main(["audit", "--report", str(new), "--baseline", str(old)]) == 0
    assert "4 inputs and 25 format pairs compared" in capsys.readouterr().out
    off = tmp_path / "off"
    off.mkdir()
    (off / "manifest.json").write_text('{"options": {"fidelity": "off"}}')
    assert cli.main(["audit", "--report", str(new), "--baseline", str(off)]) == Exit.INPUT
    assert f"{off}: no fidelity rows (rows-*.jsonl) there (that run was made with --fidelity off)" in (
        capsys.readouterr().err
    )


def test_a_broken_rows_file_is_named_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _run(tmp_path / "old")
    new = _run(tmp_path / "new")
    rows = old.parent / "rows-00000-of-00001.jsonl"
    rows.write_bytes(rows.read_bytes() + b'{"input": "x"}\n')
    n = rows.read_bytes().count(b"\n")
    assert cli.main(["audit", "--report", str(new), "--baseline", str(old)]) == Exit.INPUT
    assert f"{rows}:{n}: not a fidelity row" in capsys.readouterr().err


def test_every_input_is_checked_after_one_that_changed(recorded: tuple[Path, Path]) -> None:
    """(mutation testing: audit) Inputs are checked in order and one that changed never ends the
    check: a book now detected as another format is a regression, a card rejected in the baseline
    and decoded now is an improvement, and a round trip that regressed after both is still found."""
    report, baseline = recorded
    lines = baseline.read_text().splitlines()
    book = next(x for x in lines if x.startswith("input\ts/book.json\t"))
    card = next(x for x in lines if x.startswith("input\ts/card.json\t"))
    _doctor(baseline, book, book.replace("\tdecoded\ttoy-lore\t", "\tdecoded\ttoy-other\t"))
    _doctor(baseline, card, "\t".join([*card.split("\t")[:3], "rejected", "NotRecognized"]))
    _doctor(
        baseline,
        "toy-unstable\tnative=unexpected\tstability=unexpected",
        "toy-unstable\tnative=lossless\tstability=unexpected",
    )
    got = audit.audit_runs(audit.open_baseline(str(baseline)), audit.open_run(str(report)))
    assert [k for k, _ in got.regressions] == ["detect", "round trip"]
    assert got.regressions[0][1] == "s/book.json: detected as toy-other in the baseline, now as toy-lore"
    assert "s/card.json: was rejected (NotRecognized), now decodes as toy-card" in got.improvements
