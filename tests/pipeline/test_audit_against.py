"""``normalize --audit-against PREVIOUS_OUTPUT``: the nightly run audits itself against the previous
night's output once it is written, and exits with the audit's code."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bunzai_codecs import audit
from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import Coverage
from bunzai_codecs.exitcodes import Exit
from jobs.normalize import run as run_job
from pipeline.runtime.errors import UsageError
from pipeline.runtime.options import parse
from tests.fidelity import toys

from .conftest import PINNED, SharedRuns

pytestmark = pytest.mark.slow  # runs the pipeline


class _NarrowerRegressed(toys.ToyLoreNarrow):
    """toy-narrow after a change that stops writing keys (its coverage narrowed to match): only
    the kept share of the pairs into it shows it."""

    id = "toy-narrow"
    family = "narrow"
    entry_keys = ("text",)
    coverage = Coverage.of("name", "entries[].content")


def _write_toys(src: Path) -> None:
    src.mkdir()
    (src / "book.toylore.json").write_bytes(toys.book())
    (src / "card.toycard.json").write_bytes(toys.card())


@pytest.fixture
def inputs(shared: SharedRuns) -> Iterator[Path]:
    """The toy inputs (written once per session, read-only), with the toy codecs registered."""
    with registry.using(toys.TOYS):
        yield shared.folder("toy-inputs", _write_toys)


def _normalize(src: Path, out: Path, *extra: str) -> int:
    return run_job([*PINNED, "--input", str(src), "--output", str(out), *extra])


def _night1(shared: SharedRuns, src: Path) -> Path:
    """The first night: a plain run over the toy inputs, made once per session (read-only)."""
    run = shared.run_argv("--input", str(src))
    assert run.manifest["balance"]["ok"] and run.manifest["commit"] == {"ok": True}
    return Path(run.output)


def test_a_nightly_run_passes_against_the_same_codecs_and_fails_on_a_regression(
    shared: SharedRuns, inputs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    night2, night3 = (tmp_path / f"night{i}" for i in (2, 3))
    night1 = _night1(shared, inputs)
    capsys.readouterr()
    assert _normalize(inputs, night2, "--audit-against", str(night1)) == 0
    out = capsys.readouterr().out
    assert out.index("bunzai normalize") < out.index(f"bunzai audit: no regressions against {night1}")
    # pairs: the book to the 7 other toy lorebook formats, the card to the 3 other toy card formats,
    # and the card's book to all 8 toy lorebook formats
    assert "2 inputs and 18 format pairs compared" in out

    with registry.using({**toys.TOYS, "toy-narrow": _NarrowerRegressed}):
        code = _normalize(inputs, night3, "--audit-against", f"{night1}/")
    assert code == Exit.REGRESSION
    err = capsys.readouterr().err
    # the book (and the card's copy of it) lost 41 of 144 to toy-narrow; now also the trigger
    # texts 6 + 6 + 5 and their isRegex flags 3 (tests/fidelity/test_kept.py has the sums)
    assert (
        "KEPT  lorebook toy-lore -> toy-narrow: kept 71.53% of the content in the baseline, now 57.64%"
    ) in err
    assert "KEPT  lorebook toy-card -> toy-narrow" in err
    # the run itself is complete: written, then audited
    assert (night3 / "manifest.json").is_file() and (night3 / "fidelity" / "report.json").is_file()
    # a looser stated tolerance lets the same run pass
    with registry.using({**toys.TOYS, "toy-narrow": _NarrowerRegressed}):
        code = _normalize(inputs, night3, "--audit-against", str(night1), "--audit-tolerance", "15")
    assert code == 0


def test_the_committed_style_tsv_and_a_report_json_work_too(
    shared: SharedRuns, inputs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    night1 = _night1(shared, inputs)
    baseline = tmp_path / "baseline.tsv"
    assert audit.main(["--report", str(night1), "--baseline", str(baseline), "--write-baseline"]) == 0
    for previous in (baseline, night1 / "fidelity" / "report.json"):
        assert _normalize(inputs, tmp_path / "night2", "--audit-against", str(previous)) == 0
        assert f"bunzai audit: no regressions against {previous}" in capsys.readouterr().out


def test_a_missing_previous_run_stops_before_the_run(
    inputs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "night2"
    assert _normalize(inputs, out, "--audit-against", str(tmp_path / "night0")) == 2
    assert f"--audit-against: {tmp_path / 'night0'}: no baseline" in capsys.readouterr().err
    assert not out.exists()  # nothing ran


def test_the_options_are_checked(tmp_path: Path) -> None:
    out = str(tmp_path / "out")
    cfg = parse([*PINNED, "--output", out, "--audit-against", "s3://b/night1", "--audit-tolerance", "2"])[0]
    assert (cfg.audit_against, cfg.audit_tolerance) == ("s3://b/night1", 2.0)
    assert cfg.public()["auditAgainst"] == "s3://b/night1"
    assert parse([*PINNED, "--output", out])[0].public()["auditAgainst"] is None
    # an option of this process, not of the pipeline: Beam never sees it
    options = parse([*PINNED, "--output", out, "--audit_against", "gs://b/night1"])[1]
    assert "gs://b/night1" not in str(options.get_all_options(retain_unknown_options=True))
    for bad, why in (
        (["--audit-against", out], "inside --output"),
        (["--audit-against", f"{out}/fidelity/"], "inside --output"),
        (["--audit-against", str(tmp_path / "prev"), "--fidelity", "off"], "cannot run with --fidelity off"),
        (["--audit-tolerance", "1"], "needs --audit-against"),
        (["--audit-against", str(tmp_path / "prev"), "--audit-tolerance", "-1"], "percentage points"),
        (["--audit-against", str(tmp_path / "prev"), "--audit-tolerance", "x"], "not a number"),
        (["--audit-against"], "expected one argument"),
    ):
        with pytest.raises(UsageError, match=why):
            parse([*PINNED, "--output", out, *bad])
