"""bench/sizing.py: deploy/README.md's sizing table is what the script computes from the recorded
bench-full figures, the computation is the one its docstring states (checked on figures worked by
hand), and the figures of a bench run's raw results are the runs it names."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.__main__ import _run, run_plan
from bench.pipe import PipelineRun, output_bytes
from bench.sizing import END, RECORDED, START, Figures, from_results, render, rewrite, sizing

ROOT = Path(__file__).resolve().parents[2]

HAND = Figures(
    source="by hand",
    cpu_s={
        "off": {1_000: 20.0, 10_000: 60.0, 100_000: 600.0},
        "native": {1_000: 24.0},
        "full": {1_000: 80.0},
    },
    out_bytes={"off": (1_000, 100_000_000), "native": (1_000, 101_000_000), "full": (1_000, 150_000_000)},
)


def test_the_computation_on_figures_worked_by_hand() -> None:
    rows = {r.fidelity: r for r in sizing(HAND)}
    # off: (600 - 60) s over the 90,000 files the 100k run had more: 6 ms a file
    assert rows["off"].cpu_ms_per_file == pytest.approx(6.0)
    # native and full: off's, plus their 1k run's CPU beyond the 1k off run's, per file
    assert rows["native"].cpu_ms_per_file == pytest.approx(6.0 + 4.0)
    assert rows["full"].cpu_ms_per_file == pytest.approx(6.0 + 60.0)
    assert rows["off"].vcpu_hours(100_000) == pytest.approx(600 / 3600)
    assert rows["full"].vcpu_hours(1_000_000) == pytest.approx(66_000 / 3600)
    assert rows["native"].bytes_for(1_000_000) == pytest.approx(101e9)
    table = render(sizing(HAND), HAND)
    assert "| `off` | 6.0 ms | 0.17 | 1.7 | 10.0 GB | 100.0 GB |" in table
    assert "| `full` | 66.0 ms | 1.83 | 18.3 | 15.0 GB | 150.0 GB |" in table


def test_deploy_readme_holds_the_table_of_the_recorded_figures() -> None:
    text = (ROOT / "deploy" / "README.md").read_text(encoding="utf-8")
    block = text.split(START, 1)[1].split(END, 1)[0]
    assert block == "\n" + render(sizing(RECORDED), RECORDED)
    assert "2026-12-02 05:49 UTC" in block  # the bench-full run the CPU figures are from


def test_rewrite_replaces_only_the_block(tmp_path: Path) -> None:
    doc = tmp_path / "README.md"
    doc.write_text(f"# head\n\n{START}\nold\n{END}\n\ntail\n")
    rewrite(str(doc), "new\n")
    assert doc.read_text() == f"# head\n\n{START}\nnew\n{END}\n\ntail\n"


def test_figures_of_a_bench_run(tmp_path: Path) -> None:
    """The multi_processing runs that finished, each mode's output bytes from its largest run;
    the output bytes are counted per top-level entry of the folder."""
    out = tmp_path / "out"
    (out / "canonical").mkdir(parents=True)
    (out / "canonical" / "part-00000-of-00001.jsonl").write_bytes(b"x" * 700)
    (out / "blobs" / "ab").mkdir(parents=True)
    (out / "blobs" / "ab" / "abcd").write_bytes(b"y" * 300)
    (out / "manifest.json").write_bytes(b"{}")
    sizes = output_bytes(str(out))
    assert sizes == {"blobs": 300, "canonical": 700, "manifest.json": 2}

    def run(
        mode: str, fidelity: str, files: int, cpu: float, written: int, code: int = 0
    ) -> dict[str, object]:
        return {
            "mode": mode,
            "fidelity": fidelity,
            "files": files,
            "cpu_s": cpu,
            "exit_code": code,
            "out_bytes": {"canonical": written},
        }

    results = {
        "mode": "full",
        "machine": {"date": "2027-01-01 00:00 UTC"},
        "pipeline": {
            "runs": [
                run("multi_processing", "off", 10_000, 60.0, 1_000_000),
                run("in_memory", "off", 10_000, 55.0, 1_000_000),
                run("multi_processing", "off", 1_000, 20.0, 100_000),
                run("multi_processing", "off", 100_000, 600.0, 10_000_000),
                run("multi_processing", "native", 1_000, 24.0, 101_000),
                run("multi_processing", "full", 1_000, 80.0, 150_000),
                run("multi_processing", "full", 2_000, 1.0, 1, code=1),  # failed: not a figure
            ]
        },
    }
    fig = from_results(results)
    assert fig.source == "`make bench-full`, 2027-01-01 00:00 UTC"
    assert fig.cpu_s == {
        "off": {10_000: 60.0, 1_000: 20.0, 100_000: 600.0},
        "native": {1_000: 24.0},
        "full": {1_000: 80.0},
    }
    assert fig.out_bytes == {
        "off": (100_000, 10_000_000),
        "native": (1_000, 101_000),
        "full": (1_000, 150_000),
    }
    assert [round(r.cpu_ms_per_file, 3) for r in sizing(fig)] == [6.0, 10.0, 66.0]


def test_figures_of_the_runs_bench_full_makes() -> None:
    """The runs ``python -m bench --full`` plans (``run_plan``: `native` and `full` on the 10k corpus
    since issue 31's rows of CPU per input), recorded as it records them (``_run``), give sizing
    every mode: `off` from its 100k and 10k runs, `native` and `full` beside `off`'s 10k run."""
    cpu = {("off", 1_000): 20.0, ("off", 10_000): 60.0, ("off", 100_000): 600.0}
    cpu |= {("native", 10_000): 100.0, ("full", 10_000): 500.0}
    runs = []
    for mode, workers, files, fidelity in run_plan(True, [1_000, 10_000, 100_000], 10_000, 10_000):
        r = PipelineRun(mode, workers, files, fidelity, wall_s=1.0, cpu_s=0.0, peak_rss=0, exit_code=0)
        if mode == "multi_processing":
            r.cpu_s = cpu.pop((fidelity, files))
        else:  # the speed-up's one-process run: not a sizing figure
            r.cpu_s = 1.0
        r.out_bytes = {"canonical": files * 100, "manifest.json": 10}
        runs.append(_run(r))
    assert not cpu  # every multi_processing run above is one the plan makes
    results = {"mode": "full", "machine": {"date": "2027-01-01 00:00 UTC"}, "pipeline": {"runs": runs}}
    fig = from_results(results)
    assert fig.out_bytes == {
        "off": (100_000, 10_000_010),
        "native": (10_000, 1_000_010),
        "full": (10_000, 1_000_010),
    }
    # off: (600 - 60) s / 90k files = 6 ms; native: 6 + (100 - 60) s / 10k = 10 ms; full: 6 + 44 ms
    assert [round(r.cpu_ms_per_file, 3) for r in sizing(fig)] == [6.0, 10.0, 50.0]
