"""Sizing a Dataflow run from ``make bench-full``'s figures (not measured on GCP): vCPU-hours and
bytes written per 100k and per 1M input files, for ``--fidelity off``, ``native`` and ``full``.

    python -m bench.sizing                                  # the table from the recorded figures
    python -m bench.sizing --results .bench/results-full.json --write deploy/README.md

``make bench-full`` writes its raw figures to ``.bench/results-full.json`` and then runs the
second line, so deploy/README.md's table ("Sizing a run") follows each bench-full.

How the figures become the table (``sizing``):

- **CPU per file, ``off``**: the CPU (the whole process tree: job and workers) the two largest
  ``--fidelity off`` pipeline runs took, one minus the other, over the files one had more than the
  other (100k - 10k): the cost of one more file, without the run's fixed cost (Beam's start,
  the graph, the commit);
- **CPU per file, ``native`` / ``full``**: ``off``'s, plus what the mode's run took beyond the
  ``off`` run over the same files (the largest corpus both ran: 10k in ``make bench-full``, whose
  ``native`` and ``full`` runs are issue 31's rows of CPU per input), per file (the fixed costs
  are the same and cancel);
- **bytes per file**: what the mode's run left in its output folder (every dataset, the blob
  store, the manifest; no ``--export``), over its files;
- per N files: CPU per file x N (in vCPU-hours) and bytes per file x N.

They are the benchmark machine's CPU seconds under Beam's local runner (bench/pipe.py: the
DirectRunner, multi_processing with 2 workers), over the generated archive's mix (bench/gen.py):
an estimate of the work, not of a Dataflow bill.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MODES = ("off", "native", "full")
SIZES = (100_000, 1_000_000)
START = "<!-- sizing:start -->"
END = "<!-- sizing:end -->"


@dataclass(frozen=True)
class Figures:
    """What ``sizing`` needs from a bench run."""

    #: which run the CPU figures are from (shown with the table)
    source: str
    #: ``--fidelity`` mode -> files -> CPU seconds of the pipeline run's process tree
    cpu_s: Mapping[str, Mapping[int, float]]
    #: ``--fidelity`` mode -> (files, bytes the run left in its output folder)
    out_bytes: Mapping[str, tuple[int, int]]
    #: where the bytes are from, when not from the same run
    bytes_source: str = ""


@dataclass(frozen=True)
class Row:
    fidelity: str
    cpu_ms_per_file: float
    bytes_per_file: float

    def vcpu_hours(self, files: int) -> float:
        return self.cpu_ms_per_file * files / 1000 / 3600

    def bytes_for(self, files: int) -> float:
        return self.bytes_per_file * files


#: the figures deploy/README.md's table is made from until the next ``make bench-full``: the CPU of
#: the pipeline runs of the bench-full in BENCHMARKS.md (2026-12-02 05:49 UTC; the table of
#: docs/perf-notes/2026-12-02-every-row-where-it-stands.md), which did not record output bytes
#: yet; the bytes, from normalize runs over that run's 1k corpus (the same files:
#: ``python -m bench.gen DEST --n 1000 --seed 7``), one per mode, on 2026-12-03 (outputs as main's
#: at 6269004 make them, the same bytes on any machine; counted by ``bench.pipe.output_bytes``)
RECORDED = Figures(
    source="`make bench-full`, 2026-12-02 05:49 UTC (BENCHMARKS.md)",
    cpu_s={
        "off": {1_000: 19.5, 10_000: 67.5, 100_000: 627.9},
        "native": {1_000: 23.1},
        "full": {1_000: 76.4},
    },
    out_bytes={
        "off": (1_000, 118_941_486),
        "native": (1_000, 120_324_371),
        "full": (1_000, 140_113_963),
    },
    bytes_source="`bunzai normalize` over that run's 1k corpus (`python -m bench.gen DEST --n 1000 "
    "--seed 7`), one run per mode, 2026-12-03 (`bench.pipe.output_bytes`)",
)


def sizing(fig: Figures) -> list[Row]:
    """One row per ``--fidelity`` mode (module docstring: how)."""
    off = fig.cpu_s["off"]
    small, large = sorted(off)[-2:]
    per_file_off = (off[large] - off[small]) / (large - small)
    rows = []
    for mode in MODES:
        if mode == "off":
            per_file = per_file_off
        else:
            runs = fig.cpu_s[mode]
            n = max(set(runs) & set(off))
            per_file = per_file_off + (runs[n] - off[n]) / n
        files, written = fig.out_bytes[mode]
        rows.append(Row(mode, per_file * 1000, written / files))
    return rows


def _gb(n: float) -> str:
    return f"{n / 1e9:,.1f} GB" if n < 1e12 else f"{n / 1e12:,.2f} TB"


def render(rows: Sequence[Row], fig: Figures) -> str:
    """The table and where it came from (markdown, between the markers it is rewritten within)."""
    head = ["| `--fidelity` | CPU per file | vCPU-hours per 100k | per 1M | written per 100k | per 1M |"]
    head.append("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        head.append(
            f"| `{r.fidelity}` | {r.cpu_ms_per_file:.1f} ms | {r.vcpu_hours(SIZES[0]):.2f} | "
            f"{r.vcpu_hours(SIZES[1]):.1f} | {_gb(r.bytes_for(SIZES[0]))} | {_gb(r.bytes_for(SIZES[1]))} |"
        )
    bytes_from = f"; bytes: {fig.bytes_source}" if fig.bytes_source else ""
    return (
        "\n".join(head)
        + "\n\nFrom "
        + fig.source
        + bytes_from
        + ". Made by `python -m bench.sizing` (bench/sizing.py says how), which `make bench-full` runs.\n"
    )


def from_results(results: Mapping[str, Any]) -> Figures:
    """The figures of a bench run's raw results (``python -m bench --full --json FILE``)."""
    cpu: dict[str, dict[int, float]] = {}
    written: dict[str, tuple[int, int]] = {}
    for run in results["pipeline"]["runs"]:
        if run["mode"] != "multi_processing" or run["exit_code"] != 0:
            continue
        cpu.setdefault(run["fidelity"], {})[run["files"]] = run["cpu_s"]
        if run.get("out_bytes"):
            best = written.get(run["fidelity"])
            if best is None or run["files"] > best[0]:
                written[run["fidelity"]] = (run["files"], sum(run["out_bytes"].values()))
    mode = "make bench-full" if results.get("mode") == "full" else "make bench"
    return Figures(f"`{mode}`, {results['machine']['date']}", cpu, written)


def rewrite(path: str, block: str) -> None:
    """Replace what stands between the markers in ``path`` with ``block``."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    if START not in text or END not in text:
        raise SystemExit(f"{path}: no {START} ... {END} block to rewrite")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"{head}{START}\n{block}{END}{tail}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.sizing", description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", help="raw figures of a bench run (python -m bench --full --json FILE)")
    ap.add_argument("--write", metavar="FILE", help=f"rewrite the {START} block of FILE (deploy/README.md)")
    a = ap.parse_args(argv)
    fig = RECORDED
    if a.results:
        import orjson

        with open(a.results, "rb") as fh:
            fig = from_results(orjson.loads(fh.read()))
    block = render(sizing(fig), fig)
    if a.write:
        rewrite(a.write, block)
    else:
        sys.stdout.write(block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
