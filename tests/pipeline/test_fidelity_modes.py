"""``--fidelity {off,native,full}``: what each mode writes, that every input is still accounted for,
and that ``--since`` never carries rows made under another mode."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from pipeline.runtime.errors import UsageError
from pipeline.runtime.options import parse

from .conftest import EXPECTED, PINNED, SAMPLES, Run, SharedRuns, copy_output, normalize
from .test_normalize import _sample_files, check_accounting

pytestmark = pytest.mark.slow  # runs the pipeline

#: outputs that do not depend on the mode
SAME_IN_EVERY_MODE = ("canonical/", "rejects/", "inventory/")


class _ByMode(dict[str, Run]):
    """mode -> the shared run in that mode over the hand-made inputs and the bundled samples, made
    when first asked for (so parallel workers make different modes at once); "src": the inputs."""

    def __init__(self, shared: SharedRuns) -> None:
        super().__init__(src=Run({}, {}, str(shared.inputs)))
        self.shared = shared

    def __missing__(self, mode: str) -> Run:
        run = self[mode] = self.shared.run("--input", str(SAMPLES), "--fidelity", mode)
        return run


@pytest.fixture(scope="module")
def runs(shared: SharedRuns) -> dict[str, Run]:
    """One run per mode over the hand-made inputs and the bundled samples."""
    return _ByMode(shared)


def _plain(shared: SharedRuns, mode: str) -> Run:
    """The shared run over the hand-made inputs alone in ``mode`` (full is the default: no flag, the
    run other test files share too)."""
    return shared.run() if mode == "full" else shared.run("--fidelity", mode)


def _listed(runs: dict[str, Run]) -> set[str]:
    return {f"{runs['src'].output}/{rel}" for rel in EXPECTED} | set(_sample_files())


def _pick(run: Run, prefixes: tuple[str, ...]) -> dict[str, bytes]:
    return {k: v for k, v in run.files().items() if k.startswith(prefixes)}


def test_the_option_parses_and_defaults_to_full() -> None:
    assert parse([*PINNED])[0].fidelity == "full"
    assert parse([*PINNED, "--fidelity", "native"])[0].fidelity == "native"
    assert parse([*PINNED, "--fidelity=off"])[0].public()["fidelity"] == "off"
    with pytest.raises((SystemExit, UsageError)):
        parse([*PINNED, "--fidelity", "cross"])


@pytest.mark.parametrize("mode", ["full", "native", "off"])
def test_every_input_is_accounted_for_in_every_mode(runs: dict[str, Run], mode: str) -> None:
    run = runs[mode]
    check_accounting(run, _listed(runs))
    assert run.manifest["options"]["fidelity"] == mode


def test_canonical_rejects_and_inventory_do_not_depend_on_the_mode(runs: dict[str, Run]) -> None:
    full = _pick(runs["full"], SAME_IN_EVERY_MODE)
    assert full and _pick(runs["native"], SAME_IN_EVERY_MODE) == full
    assert _pick(runs["off"], SAME_IN_EVERY_MODE) == full
    for mode in ("native", "off"):
        counts = dict(runs[mode].manifest["counts"])
        want = dict(runs["full"].manifest["counts"])
        for c in (counts, want):
            c.pop("fidelity"), c.pop("stages"), c.pop("fidelityBasis")
        assert counts == want


def test_the_sample_option_parses_and_defaults_to_one_in_16() -> None:
    assert parse([*PINNED])[0].fidelity_sample == 16
    assert parse([*PINNED])[0].public()["fidelitySample"] == "1/16"
    assert parse([*PINNED, "--fidelity-sample", "1/1"])[0].fidelity_sample == 1
    assert parse([*PINNED, "--fidelity_sample=1/4"])[0].fidelity_sample == 4
    for bad in ("16", "1/0", "2/3", "a/b"):
        with pytest.raises(UsageError, match="--fidelity-sample"):
            parse([*PINNED, "--fidelity-sample", bad])


def _content(run: Run) -> list[dict[str, object]]:
    """A run's fidelity rows without how each was obtained, in a fixed order."""
    rows = [{k: v for k, v in r.items() if k != "basis"} for r in run.lines("fidelity")]
    return sorted(rows, key=lambda r: (r["uri"], r["entity"], r["check"], r["target"]))


def _bases(run: Run) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in run.lines("fidelity"):
        b = r["basis"]
        out[b["how"]] = out.get(b["how"], 0) + 1
        if b.get("disagreed"):
            out["disagreed"] = out.get("disagreed", 0) + 1
    return out


def test_rows_by_pattern_are_the_observed_rows_and_say_how_they_were_made(
    runs: dict[str, Run], shared: SharedRuns
) -> None:
    """``--fidelity-sample``: whatever the sample, every row is the row observing gives (only its
    ``basis`` differs); 1/1 observes every row and names no pattern; the manifest and the report
    count the rows by basis."""
    every = shared.run("--input", str(SAMPLES), "--fidelity-sample", "1/1")
    half = shared.run("--input", str(SAMPLES), "--fidelity-sample", "1/2")
    assert _content(half) == _content(every) == _content(runs["full"])
    assert all(r["basis"] == {"how": "observed"} for r in every.lines("fidelity"))
    cross = [r for r in half.lines("fidelity") if r["check"] == "cross"]
    assert all(len(r["basis"]["pattern"]) == 16 for r in cross)
    assert all(r["basis"] == {"how": "observed"} for r in half.lines("fidelity") if r["check"] != "cross")
    # samples/ holds about one file per pattern (each shows its format a different way): half of
    # them teach the other half a few rows only; the bench corpus, many files per pattern, most
    assert _bases(half).get("predicted", 0) > 0
    for run in (every, half, runs["full"]):
        tally = _bases(run)
        basis = run.manifest["counts"]["fidelityBasis"]
        assert {k: basis[k] for k in ("observed", "predicted", "disagreed")} == {
            "observed": tally.get("observed", 0),
            "predicted": tally.get("predicted", 0),
            "disagreed": tally.get("disagreed", 0),
        }
        report = orjson.loads(run.files()["fidelity/report.json"])
        assert report["basis"]["observed"] == basis["observed"]
        assert report["basis"]["predicted"] == basis["predicted"]
    assert "patterns" not in every.manifest["counts"]["fidelityBasis"]  # no sample, no book
    assert half.manifest["counts"]["fidelityBasis"]["patterns"]["sampled"] > 0
    assert half.manifest["options"]["fidelitySample"] == "1/2"


def test_full_writes_every_check(runs: dict[str, Run]) -> None:
    rows = runs["full"].lines("fidelity")
    assert {r["check"] for r in rows} == {"decode", "native", "stability", "cross"}
    assert sum(runs["full"].manifest["counts"]["fidelity"]["cross"].values()) > 0
    assert {"fidelity/report.json", "fidelity/report.html"} <= set(runs["full"].files())


def test_native_is_full_without_the_cross_format_rows(runs: dict[str, Run]) -> None:
    full, native = runs["full"], runs["native"]
    rows = native.lines("fidelity")
    assert {r["check"] for r in rows} == {"decode", "native", "stability"}
    key = lambda r: (r["uri"], r["entity"], r["check"], r["target"])  # noqa: E731
    assert sorted(rows, key=key) == sorted(
        (r for r in full.lines("fidelity") if r["check"] != "cross"), key=key
    )
    # rejected inputs keep their decode row
    rejected = {r["uri"] for r in rows if r["status"] == "rejected"}
    whole = {r["uri"] for r in native.lines("inventory") if r["rejected"]}
    assert rejected == whole and len(whole) == 6
    assert "cross" not in native.manifest["counts"]["fidelity"]
    assert native.manifest["outputs"]["fidelityReport"] == ["fidelity/report.json", "fidelity/report.html"]
    assert {"fidelity/report.json", "fidelity/report.html"} <= set(native.files())
    assert native.counters["fidelity_rows"] == len(rows)


def test_off_writes_no_fidelity_output(runs: dict[str, Run]) -> None:
    off = runs["off"]
    m = off.manifest
    assert not any(rel.startswith("fidelity/") for rel in off.files())
    assert "fidelity" not in m["outputs"]["shards"]
    assert m["outputs"]["fidelityReport"] == []
    assert m["counts"]["fidelity"] == {}
    assert m["counts"]["fidelityBasis"] == {}
    assert m["counts"]["stages"]["roundtrip"] == {"rejected": 0, "rows": 0}
    assert off.counters.get("fidelity_rows", 0) == 0


def test_off_into_a_full_runs_folder_removes_its_fidelity_files(shared: SharedRuns, tmp_path: Path) -> None:
    out = copy_output(shared.run(), tmp_path / "out")  # a full run's folder
    assert (out / "fidelity" / "report.json").exists()
    again = normalize("--input", str(shared.inputs), "--output", str(out), "--fidelity", "off")
    assert not (out / "fidelity").exists()
    assert again.manifest["outputs"]["pruned"] >= 3  # rows shard, report.json, report.html


@pytest.mark.parametrize(
    ("before", "now"), [("full", "native"), ("native", "full"), ("full", "off"), ("off", "native")]
)
def test_since_does_not_reuse_a_run_made_in_another_mode(
    shared: SharedRuns, tmp_path: Path, before: str, now: str
) -> None:
    first = Path(_plain(shared, before).output) / "manifest.json"
    again = normalize(
        "--input",
        str(shared.inputs),
        "--output",
        str(tmp_path / "again"),
        "--fidelity",
        now,
        "--since",
        str(first),
    )
    assert again.manifest["since"]["honoured"] is False
    assert again.manifest["since"]["reason"] == f"--fidelity {now} differs from that run's ({before})"
    assert again.counters.get("inputs_unchanged", 0) == 0
    fresh = _plain(shared, now)
    assert _pick(again, ("fidelity/",)) == _pick(fresh, ("fidelity/",))


@pytest.mark.parametrize("mode", ["native", "off"])
def test_since_in_the_same_mode_carries_that_modes_results(
    shared: SharedRuns, tmp_path: Path, mode: str
) -> None:
    a = _plain(shared, mode)
    b = normalize(
        "--input",
        str(shared.inputs),
        "--output",
        str(tmp_path / "b"),
        "--fidelity",
        mode,
        "--since",
        str(Path(a.output) / "manifest.json"),
    )
    assert b.manifest["since"]["honoured"] is True
    assert b.manifest["inputs"]["unchanged"] == b.manifest["inputs"]["listed"]
    prefixes = ("canonical/", "rejects/", "fidelity/")
    assert _pick(b, prefixes) == _pick(a, prefixes)
    assert b.manifest["counts"]["fidelity"] == a.manifest["counts"]["fidelity"]


def test_a_manifest_without_the_option_counts_as_full(shared: SharedRuns, tmp_path: Path) -> None:
    src = str(shared.inputs)
    first = copy_output(shared.run(), tmp_path / "first") / "manifest.json"
    m = orjson.loads(first.read_bytes())
    del m["options"]["fidelity"]  # written before --fidelity existed: those runs made every check
    first.write_bytes(orjson.dumps(m))
    full = normalize("--input", src, "--output", str(tmp_path / "b"), "--since", str(first))
    assert full.manifest["since"]["honoured"] is True
    native = normalize(
        "--input", src, "--output", str(tmp_path / "c"), "--fidelity", "native", "--since", str(first)
    )
    assert native.manifest["since"]["honoured"] is False
