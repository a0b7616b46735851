"""The benchmark report: ``python -m bench --report BENCHMARKS.md`` (``make bench-full``) rewrites
the results block of the one-page BENCHMARKS.md, between its markers, in the layout of
``bench.__main__.render``; everything around the block (the reproduce command, why each unmet
target is unmet, the index of docs/perf-notes/) is left as it is."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from bench.__main__ import END, START, _rewrite, render, render_details, targets

ROOT = Path(__file__).resolve().parents[2]
MIB = 2**20


def _loop_row(
    group: str,
    subject: str,
    us: float,
    files: int,
    base: str | None,
    base_us: float | None,
    target: float | None,
) -> dict[str, Any]:
    return {
        "group": group,
        "subject": subject,
        "us_per_file": us,
        "files": files,
        "baseline": base,
        "baseline_us_per_file": base_us,
        "baseline_failed": 0,
        "ratio": base_us / us if base_us else None,
        "target": target,
    }


def _run(
    mode: str, workers: int, fidelity: str, files: int, wall: float, cpu: float, rss: float
) -> dict[str, Any]:
    return {
        "mode": mode,
        "workers": workers,
        "fidelity": fidelity,
        "files": files,
        "wall_s": wall,
        "cpu_s": cpu,
        "files_per_s": files / wall,
        "peak_rss": rss * MIB,
        "job_rss": 0,
        "worker_rss": [],
        "exit_code": 0,
        "balanced": True,
    }


#: the figures of the `make bench-full` run of 2026-12-02 05:49 UTC as BENCHMARKS.md published them
#: (rounded as printed there), read against issue 31's table (``targets()``, below: that run had no
#: same-work loop writing every output, so the rows of CPU per input say "not measured"), with a
#: breakdown of where the normalize CPU goes made up for the test (that run profiled nothing);
#: BENCHMARKS.md's results block is render() of these without the breakdown
PUBLISHED: dict[str, Any] = {
    "mode": "full",
    "seed": 7,
    "seconds": 1335,
    "machine": {
        "date": "2026-12-02 05:49 UTC",
        "cores": 2,
        "cpu": "AMD EPYC",
        "memory_gib": 23.5,
        "python": "3.11.7",
        "platform": "Linux-6.18.44-fc-v1045-x86_64-with-glibc2.36",
        "versions": {
            "bunzai": "0.1.0",
            "pydantic": "2.14.4",
            "pydantic-core": "2.50.5",
            "orjson": "3.13.0",
            "apache-beam": "2.77.0",
            "tavern-card": "0.1.1",
            "card-forge": "0.4.0",
            "pillow": "12.3.0",
        },
        "load_start": (1.98, 0.0, 0.0),
    },
    "load_end": (2.75, 0.0, 0.0),
    "loop": {
        "files": 10000,
        "corpus": 10000,
        "mismatches": [],
        "rows": [
            _loop_row("json-cards", "read", 1187, 4400, "json.loads", 304, 0.4),
            _loop_row("json-cards", "read", 1187, 4400, "tavern-card", 281, None),
            _loop_row("json-cards", "read", 1187, 4400, "card-forge", 1132, None),
            _loop_row("png-cards", "read", 2692, 1000, "tavern-card", 516, 0.6),
            _loop_row("png-cards", "read", 2692, 1000, "card-forge", 4074, None),
            _loop_row("convert v2->ccv3 json", "convert", 1628, 2900, "json.loads", 288, 0.3),
            _loop_row("convert v2->charx", "convert charx", 4095, 2900, "json.loads", 288, None),
            _loop_row("json-cards", "round trip", 1679, 4400, None, None, None),
        ],
    },
    "breakdown": {"png-cards": [{"label": "sha256 of the file", "us": 250}]},
    "pipeline": {
        "files": 10000,
        "fidelity": "off",
        "read_loop_s": {"1000": 1.5, "10000": 14.9},
        "same_work_loop_s": {"off/10000": 28.2, "off/1000": 1.9, "native/1000": 4.5, "full/1000": 50.3},
        "collector": {"files": 1000, "default_gen0": 700, "gen0": 5000, "default": 2.16, "tuned": 1.74},
        "startup_s": {"detect": 0.0992, "python": 0.034},
        "runs": [
            _run("multi_processing", 2, "off", 10000, 40.7, 67.5, 803),
            _run("in_memory", 1, "off", 10000, 58.3, 56.4, 346),
            _run("multi_processing", 2, "off", 1000, 13.9, 19.5, 702),
            _run("multi_processing", 2, "off", 100000, 385.2, 627.9, 881),
            _run("multi_processing", 2, "native", 1000, 17.2, 23.1, 756),
            _run("multi_processing", 2, "full", 1000, 45.6, 76.4, 859),
        ],
    },
}
PUBLISHED["targets"] = targets(PUBLISHED)
#: the same run with a profile of where its CPU went (invented figures: the layout under test)
PROFILED: dict[str, Any] = dict(
    PUBLISHED,
    pipeline=dict(
        PUBLISHED["pipeline"],
        outputs_loop={"10000": {"wall_s": 40.0, "cpu_s": 36.0}, "1000": {"wall_s": 4.2, "cpu_s": 3.9}},
        profile={
            "files": 10000,
            "cpu": {"job": 4.0, "workers": 50.0},
            "shares": {
                "workers": {"decode": 0.4, "validate: lint, stamp, canonical line": 0.3, "imports": 0.3},
                "job": {"imports": 0.75, "runner": 0.25},
            },
        },
    ),
)
PROFILED["targets"] = targets(PROFILED)


def _block(text: str) -> str:
    assert text.count(START) == 1 and text.count(END) == 1
    return text.split(START, 1)[1].split(END, 1)[0].strip("\n") + "\n"


def test_the_page_shows_what_a_user_asks_for() -> None:
    md = render(PUBLISHED)
    assert "`make bench-full`" in md and "2 cores (AMD EPYC), 23.5 GiB" in md  # the command, the machine
    assert "| 10,000 | 246 | 40.7 s | 67.5 s | 803 MiB |" in md  # files/s and memory at 10k ...
    assert "| 100,000 | 260 | 385.2 s | 627.9 s | 881 MiB |" in md  # ... and at 100k
    assert "| files | bunzai | json.loads | tavern-card 0.1.1 | card-forge 0.4.0 |" in md  # the peers
    assert "| JSON cards: `read` (4,400) | 1187 | 304 (0.26x) | 281 (0.24x) | 1132 (0.95x) |" in md
    assert "| PNG cards: `read` (1,000) | 2692 | - | 516 (0.19x) | 4074 (1.51x) |" in md
    # every target of issue 31's table with its status
    rows = md.split("### Targets", 1)[1]
    assert "| JSON cards `read` / `json.loads` | 0.26x | >= 0.4x | **not met** |" in rows
    assert "| PNG cards `read` / tavern-card `parse_png_card` | 0.19x | >= 0.6x | **not met** |" in rows
    assert "| convert V2 -> CCv3 JSON / `json.loads` | 0.18x | >= 0.3x | **not met** |" in rows
    assert "| `bunzai detect one-card.png` / `python -c pass` | 2.92x | <= 4x | met |" in rows
    assert "| time(100k) / time(10k), `--fidelity off` | 9.46x | <= 11x | met |" in rows
    assert "| peak RSS(100,000) / peak RSS(10,000), `--fidelity off` | 1.10x | <= 1.25x | met |" in rows
    assert "| peak RSS at 100,000 files | 0.86 GiB | < 1.5 GiB | met |" in rows
    # the speed-up of two workers over one, both runs in this run: 58.3 s / 40.7 s
    assert (
        "| `normalize` speed-up: in_memory x1 wall / multi_processing x2 wall, `--fidelity off` | 1.43x | >= 1.7x "
        "| **not met** | 10000 files, same run: 58.3 s / 40.7 s |" in rows
    )
    # that run had no same-work loop writing every output: its CPU rows were not measured
    for fm, goal in (("full` (default options)", 6), ("native`", 2), ("off`", 1.4)):
        assert any(
            line.startswith(f"| `normalize --fidelity {fm} CPU per input")
            and f"| - | <= {goal:g}x | not measured |" in line
            for line in rows.splitlines()
        ), fm
    assert "rows that compared" not in rows and "codec loop" not in rows  # the replaced rows are gone
    assert "**Where the normalize CPU goes:** not profiled in this run" in md
    assert len(md.splitlines()) < 45  # one screen, not a notebook


def test_the_cpu_rows_are_per_input_beside_the_loop_writing_every_output() -> None:
    md = render(PROFILED)
    rows = md.split("### Targets", 1)[1]
    # off, 10k: 67.5 s of the process tree / 36.0 s of the loop
    assert (
        "| `normalize --fidelity off` CPU per input, every output / same-work loop | 1.88x | <= 1.4x | **not met** "
        "| 10000 files, CPU of the process tree (multi_processing x2): 6.8 ms / 3.6 ms per input |" in rows
    )
    # where the CPU goes: seconds and shares per role, the largest first
    where = md.split("**Where the normalize CPU goes:**", 1)[1]
    assert (
        "**workers** 50.0 s: decode 20.0 s (40 %), validate: lint, stamp, canonical line 15.0 s (30 %)"
        in where
    )
    assert "**job** 4.0 s: imports 3.0 s (75 %), runner 1.0 s (25 %)" in where
    assert len(md.splitlines()) < 45


def test_a_quick_run_says_what_it_did_not_measure() -> None:
    quick = dict(PUBLISHED, mode="quick")
    quick["pipeline"] = dict(PUBLISHED["pipeline"], runs=PUBLISHED["pipeline"]["runs"][:3])
    quick["targets"] = targets(quick)
    md = render(quick)
    assert "`make bench`" in md
    assert (
        "| peak RSS(100,000) / peak RSS(10,000), `--fidelity off` | - | <= 1.25x | not measured "
        "| measured by `make bench-full` only |" in md
    )


def test_the_details_keep_every_table_for_the_log() -> None:
    md = render_details(PUBLISHED)
    assert "| convert v2->charx (2900) | convert charx | 4095 | json.loads | 288 | 0.07x |  |" in md
    assert "| json-cards (4400) | read | 1187 | json.loads | 304 | 0.26x | >= 0.4x **not met** |" in md
    assert "- png-cards: sha256 of the file 250" in md
    assert "| in_memory x1 | off | 10000 | 58.3 | 56.4 | one process | 172 |" in md
    detailed = render_details(PROFILED)
    assert "| multi_processing x2 | off | 10000 | 40.7 | 67.5 |" in detailed
    assert "| 1.88x | 803 MiB |" in detailed  # CPU beside the loop writing every output
    assert "| workers | decode | 20.0 | 40 % |" in detailed


def _layout(block: str) -> list[str]:
    """The block's headings and table headers, version numbers taken out."""
    lines = block.splitlines()
    keep = [
        line for i, line in enumerate(lines) if line.startswith("###") or lines[i + 1 : i + 2] == ["|---"]
    ]
    keep += [line for line in lines if line.startswith("|---")]
    return [re.sub(r" \d+(\.\d+)+", "", line) for line in keep]


def test_benchmarks_md_carries_the_block_render_writes() -> None:
    page = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert _layout(_block(page)) == _layout(render(PUBLISHED))
    if PUBLISHED["machine"]["date"] in _block(page):  # until the next `make bench-full` rewrites it
        assert _block(page) == render(PUBLISHED), "the block is render() of the run it names"


def test_the_report_rewrites_the_block_and_nothing_else(tmp_path: Path) -> None:
    page = tmp_path / "BENCHMARKS.md"
    page.write_text(
        f"# Benchmarks\n\nintro\n\n{START}\nold figures\n{END}\n\n## Why\n\nkept\n", encoding="utf-8"
    )
    _rewrite(str(page), "new figures\n")
    assert page.read_text(encoding="utf-8") == (
        f"# Benchmarks\n\nintro\n\n{START}\nnew figures\n{END}\n\n## Why\n\nkept\n"
    )
    _rewrite(str(page), "newer figures\n")
    assert page.read_text(encoding="utf-8").count("figures") == 1
    bare = tmp_path / "bare.md"
    bare.write_text("# Notes\n", encoding="utf-8")
    _rewrite(str(bare), "figures\n")
    assert bare.read_text(encoding="utf-8") == f"# Notes\n\n{START}\nfigures\n{END}\n"
