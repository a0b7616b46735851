"""``python -m bench``: every benchmark figure as a ratio to a baseline measured in the same run.

    python -m bench --quick                       # make bench: the 1k corpus, under 3 minutes
    python -m bench --full --report BENCHMARKS.md # make bench-full: 1k/10k/100k, memory, scaling
    python -m bench --loop-only                   # the codec loop's target rows on the 1k corpus only

Corpora are generated once per seed and size under ``--data`` (default ``.bench/``, ignored by git)
and reused. ``--report`` rewrites the results block of that markdown file (between the
``bench:results`` markers) with the one-page summary of :func:`render`: the machine, files/s and
memory at each size, bunzai beside its peers, every target of issue 31's table with its status
(:func:`targets`), where the normalize CPU goes (py-spy, ``bench/split.py``), the command. The full
tables (every codec-loop row, where the time goes, every pipeline run with its CPU per process)
are printed to the log (:func:`render_details`) and ``--json`` writes the raw figures; a dated
experiment is written up by hand under docs/perf-notes/.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import shutil
import sys
import time
from importlib import metadata
from typing import Any

from bench import gen, loop, pipe, split
from pipeline.runtime.memory import CPYTHON_GEN0, GC_GEN0

START = "<!-- bench:results:start -->"
END = "<!-- bench:results:end -->"

#: issue 31 ("what a hub pays"): normalize's CPU per input / the same-work loop `off` that writes
#: every output (bench.pipe.OutputsLoop), at most: with `--fidelity full` (default options), with
#: `--fidelity native`, and with `--fidelity off` itself
FULL_COST_TARGET = 6.0
NATIVE_COST_TARGET = 2.0
PIPE_COST_TARGET = 1.4
#: issue 31: normalize in_memory x1 wall / multi_processing x2 wall, same run (at least)
SPEEDUP_TARGET = 1.7
#: kept from issue 21: `bunzai detect one-card.png` / `python -c pass`, wall (at most)
STARTUP_TARGET = 4.0
MEM_GROWTH_TARGET = 1.25
MEM_CAP = 1.5 * 2**30
SCALING_TARGET = 11.0
#: the corpus of the --fidelity native / full runs in --quick (--full: the 10k corpus)
QUICK_PIPE_N = 300
#: the fidelity mode of the pipeline rows (and of memory and scaling)
PIPE_FIDELITY = "off"
#: the modes of the same-work loop writing nothing, recorded in the details on the smaller corpus
RECORD_FIDELITY = ("off", "native", "full")
#: the modes of the normalize runs beside `off`: their CPU per input is a row each
COST_FIDELITY = (("full", FULL_COST_TARGET), ("native", NATIVE_COST_TARGET))


def machine() -> dict[str, Any]:
    mem = 0
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    mem = int(line.split()[1]) * 1024
    except OSError:
        pass
    versions = {}
    for dist in (
        "bunzai",
        "pydantic",
        "pydantic-core",
        "orjson",
        "apache-beam",
        "tavern-card",
        "card-forge",
        "pillow",
    ):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cores": os.cpu_count(),
        "cpu": cpu,
        "memory_gib": round(mem / 2**30, 1),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "versions": versions,
        "load_start": os.getloadavg(),
    }


def log(msg: str) -> None:
    print(msg, flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="the 1k corpus only (default)")
    mode.add_argument("--full", action="store_true", help="1k, 10k and 100k files: memory and scaling too")
    ap.add_argument("--data", default=".bench", help="where corpora and pipeline outputs go")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--max-n", type=int, default=100_000, help="largest corpus of --full (disk-bound)")
    ap.add_argument("--repeat", type=int, default=0, help="passes per codec-loop figure (best kept)")
    ap.add_argument("--report", help="markdown file whose results section to rewrite")
    ap.add_argument("--json", help="write the raw figures here")
    ap.add_argument(
        "--loop-only",
        action="store_true",
        help="only the codec loop on the 1k corpus (no breakdown, no pipeline): the rows of --groups",
    )
    ap.add_argument(
        "--groups",
        default=",".join(loop.TARGET_GROUPS),
        help="with --loop-only: the codec-loop groups to time, comma-separated "
        "(json-cards, png-cards, convert, a format id, broken, corpus; 'all' for every row)",
    )
    ap.add_argument(
        "--same-work-only",
        action="store_true",
        help="only the fidelity modes' rows: the same-work loop with --fidelity off, native and full "
        "(default options) on the 1k corpus, best of --repeat alternating passes, CPU",
    )
    a = ap.parse_args(argv)
    if a.loop_only:
        return loop_only(a)
    if a.same_work_only:
        return same_work_rows(a.data, a.seed, a.repeat or 3)
    full = bool(a.full)
    t_start = time.perf_counter()
    info = machine()
    log(
        f"bunzai bench ({'full' if full else 'quick'}) on {info['cores']} cores, {info['memory_gib']} GiB, "
        f"Python {info['python']}, load {info['load_start'][0]:.2f}"
    )

    # quick: the codec loop and the --fidelity off pipeline on 1k files, the fidelity modes on 300
    # (full converts every entity to every format of its kind: ~15 inputs/s here)
    sizes = [1000, 10_000, a.max_n] if full else [QUICK_PIPE_N, 1000]
    sizes = sorted({n for n in sizes if n > 0})
    corpora = {}
    os.makedirs(a.data, exist_ok=True)  # a fresh clone has no .bench/: the disk check below needs it
    for n in sizes:
        path = os.path.join(a.data, f"corpus-{n}-s{a.seed}")
        need = _bytes_for(n)
        free = shutil.disk_usage(os.path.dirname(os.path.abspath(path)) or ".").free
        if not os.path.exists(os.path.join(path, ".bench-corpus")) and need > free * 0.8:
            log(
                f"! {n} files need ~{need / 2**30:.1f} GiB with the pipeline's output; {free / 2**30:.1f} GiB free: skipped"
            )
            continue
        t0 = time.perf_counter()
        gen.ensure(path, n, a.seed, jobs=min(2, os.cpu_count() or 1), progress=lambda m: None)
        log(f"corpus {n}: {path} ({time.perf_counter() - t0:.0f}s)")
        corpora[n] = path

    results: dict[str, Any] = {"machine": info, "mode": "full" if full else "quick", "seed": a.seed}

    # -- the codec loop ---------------------------------------------------------------------------
    loop_n = 10_000 if full and 10_000 in corpora else 1000
    files = loop.load(corpora[loop_n])
    repeat = a.repeat or (3 if full else 2)
    log(f"\ncodec loop: {len(files)} files in memory, best of {repeat} (CPU time)")
    res = loop.run(files, repeat=repeat, log=lambda m: log(m))
    results["loop"] = {
        "files": len(files),
        "corpus": loop_n,
        "mismatches": res.mismatches,
        "rows": [_row(r) for r in res.rows],
    }
    by = loop.groups(files)
    log("\nwhere the time goes (CPU us per file, measured apart)")
    cards = by.get("json-cards", [])
    parts = {
        "json-cards": loop.breakdown_json_cards(cards, repeat),
        "json-cards without a book": loop.breakdown_json_cards(
            [f for f in cards if b'"character_book"' not in f.data], repeat
        ),
        "json-cards with a book": loop.breakdown_json_cards(
            [f for f in cards if b'"character_book"' in f.data], repeat
        ),
        "png-cards": loop.breakdown_png_cards(by.get("png-cards", []), repeat),
    }
    for k, ps in parts.items():
        log(f"  {k}: " + ", ".join(f"{p.label} {p.us:.0f}" for p in ps))
    results["breakdown"] = {k: [{"label": p.label, "us": p.us} for p in ps] for k, ps in parts.items()}
    del files, by, cards

    # -- the pipeline -------------------------------------------------------------------------------
    # issue 31's rows: normalize's CPU per input beside the same-work loop that writes every output
    # (bench.pipe.OutputsLoop, --fidelity off, files read from disk), on the big corpus for `off`
    # and, in --full, for `native` and `full` too (--quick: a small corpus for those). The same-work
    # loop writing nothing (bench.pipe.same_work, in memory) is recorded beside it, as before.
    pipe_n = 10_000 if full and 10_000 in corpora else 1000
    fid_n = pipe_n if full else QUICK_PIPE_N
    record_n = 1000 if full else QUICK_PIPE_N
    reads: dict[int, float] = {}
    same: dict[str, float] = {}
    same_cpu: dict[str, float] = {}
    outputs: dict[str, dict[str, float]] = {}
    png: str | None = None
    collector: dict[str, float] = {}
    out_root = os.path.join(a.data, "out")
    for n in sorted({pipe_n, fid_n, record_n}):
        pfiles = loop.load(corpora[n])
        log(f"\npipeline yardsticks on {n} files")
        reads[n] = pipe.wall_loop(loop.bunzai_read, pfiles)
        modes = (PIPE_FIDELITY, *(m for m in RECORD_FIDELITY if m != PIPE_FIDELITY)) if n == record_n else ()
        if n == pipe_n and PIPE_FIDELITY not in modes:
            modes = (PIPE_FIDELITY,)
        # best of ``repeat`` passes, the loops taking turns (as the codec loop keeps its best pass):
        # a mode's first pass pays its lazy imports, and one pass of the 1k `off` loop moved by
        # a third between passes of one process on this shared machine
        for _ in range(repeat):
            for fm in modes:
                w, c = pipe.same_work_loop(pfiles, fm)
                key = f"{fm}/{n}"
                same[key], same_cpu[key] = min(same.get(key, w), w), min(same_cpu.get(key, c), c)
            if n in (pipe_n, fid_n):
                w, c = pipe.outputs_loop(corpora[n], pfiles, os.path.join(out_root, "loop"))
                best = outputs.get(str(n))
                if best is None or c < best["cpu_s"]:
                    outputs[str(n)] = {"wall_s": w, "cpu_s": c}
        log(
            f"  codec loop (read): {reads[n]:.1f}s wall; same-work loop writing nothing (best of {repeat}, CPU): "
            + ", ".join(f"{fm} {same_cpu[f'{fm}/{n}']:.1f}s" for fm in modes)
            + (
                f"; same-work loop writing every output: {outputs[str(n)]['cpu_s']:.1f}s CPU"
                if str(n) in outputs
                else ""
            )
        )
        if n == record_n:
            collector = pipe.collector_ab(pfiles, fidelity=PIPE_FIDELITY)
            log(
                f"  same-work loop ({PIPE_FIDELITY}), collector threshold {CPYTHON_GEN0} -> {GC_GEN0}: "
                f"{collector['default']:.2f}s -> {collector['tuned']:.2f}s CPU"
            )
            card = next((f for f in pfiles if f.expect == "sillytavern" and f.name.endswith(".png")), None)
            png = os.path.join(corpora[n], card.path) if card else None
        del pfiles
    start = pipe.startup(png) if png else {}
    if start:
        log(
            f"  start-up: bunzai detect one-card.png {start['detect'] * 1000:.0f} ms, "
            f"python -c pass {start['python'] * 1000:.0f} ms (best of 5)"
        )
    runs: list[pipe.PipelineRun] = []
    for mode_, workers, n, fm in run_plan(full, sorted(corpora), pipe_n, fid_n):
        r = pipe.normalize(corpora[n], out_root, mode=mode_, workers=workers, files=n, fidelity=fm)
        runs.append(r)
        log(
            f"  normalize --fidelity {fm} {mode_} x{workers} on {n}: {r.wall_s:.1f}s wall, {r.cpu_s:.1f}s CPU "
            f"(job {r.job_cpu:.1f}s, workers {', '.join(f'{c:.1f}' for c in r.worker_cpu) or '-'}s), "
            f"{r.files_per_s:.0f} files/s, peak RSS {r.peak_rss / 2**20:.0f} MiB, exit {r.exit_code}"
            f"{'' if r.counts.get('balance') else ' (manifest does not balance!)'}"
        )
        if r.exit_code != 0:
            log(r.log_tail)
    # where the CPU of the `off` run goes: py-spy's samples of a run of its own, in categories
    # (bench.split), scaled to the CPU each role used in the run without the profiler
    profile: dict[str, Any] = {}
    if full:
        raw = pipe.profile(corpora[pipe_n], out_root, os.path.join(a.data, "normalize-profile.raw"))
        base = next(
            (
                r
                for r in runs
                if r.mode == "multi_processing" and r.files == pipe_n and r.fidelity == PIPE_FIDELITY
            ),
            None,
        )
        if raw and base is not None:
            with open(raw) as fh:
                parts_ = split.split(fh.readlines())
            profile = {
                "files": pipe_n,
                "cpu": {"job": base.job_cpu, "workers": sum(base.worker_cpu)},
                "shares": {
                    role: {k: v / max(1, sum(c.values())) for k, v in c.most_common()}
                    for role, c in parts_.items()
                },
            }
            log("  where the CPU goes: " + _breakdown_line(profile))
        else:
            log("  where the CPU goes: not profiled (py-spy missing or not allowed to trace)")
    shutil.rmtree(out_root, ignore_errors=True)
    results["pipeline"] = {
        "files": pipe_n,
        "fidelity": PIPE_FIDELITY,
        "fidelity_files": fid_n,
        "read_loop_s": {str(n): t for n, t in reads.items()},
        "same_work_loop_s": same,
        "same_work_loop_cpu_s": same_cpu,
        "outputs_loop": outputs,
        "startup_s": start,
        "collector": {"files": record_n, "default_gen0": CPYTHON_GEN0, "gen0": GC_GEN0, **collector},
        "runs": [_run(r) for r in runs],
        "profile": profile,
    }
    results["load_end"] = os.getloadavg()
    results["seconds"] = time.perf_counter() - t_start

    results["targets"] = targets(results)
    log("\n" + render_details(results))
    md = render(results)
    log("\n" + md)
    if a.report:
        _rewrite(a.report, md)
        log(f"results written to {a.report}")
    if a.json:
        import orjson

        with open(a.json, "wb") as fh:
            fh.write(orjson.dumps(results, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS))
    log(f"done in {results['seconds']:.0f}s")
    return 0 if not res.mismatches else 1


def run_plan(full: bool, sizes: list[int], pipe_n: int, fid_n: int) -> list[tuple[str, int, int, str]]:
    """The normalize runs of a bench, in order, as ``(mode, workers, files, fidelity)``: `off` on
    ``pipe_n`` files with two workers and with one (the speed-up), `off` on every other corpus
    with two (``--full``: scaling, memory, and bench/sizing.py's CPU per file), `native` and
    `full` on ``fid_n`` files with two (their CPU per input; sizing's too, beside `off`'s run on
    the same files)."""
    plan = [("multi_processing", 2, pipe_n, PIPE_FIDELITY), ("in_memory", 1, pipe_n, PIPE_FIDELITY)]
    if full:
        plan += [("multi_processing", 2, n, PIPE_FIDELITY) for n in sizes if n != pipe_n]
    plan += [("multi_processing", 2, fid_n, fm) for fm, _ in COST_FIDELITY]
    return list(dict.fromkeys(plan))


def loop_only(a: argparse.Namespace) -> int:
    """``--loop-only``: the codec loop over the 1k corpus, the groups of ``--groups``; exits 1 when
    a file is not detected as the manifest says."""
    path = os.path.join(a.data, f"corpus-1000-s{a.seed}")
    os.makedirs(a.data, exist_ok=True)
    gen.ensure(path, 1000, a.seed, jobs=min(2, os.cpu_count() or 1), progress=lambda m: None)
    files = loop.load(path)
    repeat = a.repeat or 3
    only = None if a.groups == "all" else {g.strip() for g in a.groups.split(",") if g.strip()}
    load = os.getloadavg()[0]
    log(f"codec loop: {len(files)} files of {path} in memory, best of {repeat} (CPU time), load {load:.2f}")
    res = loop.run(files, repeat=repeat, log=log, only=only)
    for m in res.mismatches:
        log(f"! {m}")
    if a.json:
        import orjson

        with open(a.json, "wb") as fh:
            fh.write(orjson.dumps({"rows": [_row(r) for r in res.rows], "mismatches": res.mismatches}))
    return 0 if not res.mismatches else 1


def same_work_rows(data: str, seed: int, repeat: int, n: int = 1000) -> int:
    """``--same-work-only``: the same-work loop's ``--fidelity full`` / ``off`` and ``native`` /
    ``off`` CPU ratios (the issue's targets) on the ``n``-file corpus, best of ``repeat``
    passes, the modes taking turns in this one process."""
    path = os.path.join(data, f"corpus-{n}-s{seed}")
    os.makedirs(data, exist_ok=True)
    gen.ensure(path, n, seed, jobs=min(2, os.cpu_count() or 1), progress=lambda m: None)
    files = loop.load(path)
    modes = ("off", "native", "full")
    log(f"same-work loop: {len(files)} files in memory, best of {repeat} alternating passes (CPU)")
    for fm in modes:  # lazy imports and models
        pipe.same_work_loop(files[:200], fm)
    best: dict[str, float] = {}
    for r in range(repeat):
        for fm in modes:
            c = pipe.same_work_loop(files, fm)[1]
            best[fm] = min(best.get(fm, c), c)
            log(f"  pass {r + 1}: --fidelity {fm}: {c:.2f}s CPU ({c / len(files) * 1e3:.2f} ms/file)")
    for fm, tgt in (("full", FULL_COST_TARGET), ("native", NATIVE_COST_TARGET)):
        ratio = best[fm] / best["off"]
        log(
            f"same-work loop --fidelity {fm} / off: {ratio:.2f}x (target <= {tgt}x: "
            f"{'met' if ratio <= tgt else 'not met'})"
        )
    return 0


def _bytes_for(n: int) -> int:
    # ~90 KB per input file, and the pipeline writes ~2.5x that (canonical lines carry base64 escrow)
    return int(n * 90_000 * 3.5)


def _row(r: loop.Row) -> dict[str, Any]:
    return {
        "group": r.group,
        "subject": r.subject.label,
        "us_per_file": r.subject.per_file_us,
        "files": r.subject.files,
        "baseline": r.baseline.label if r.baseline else None,
        "baseline_us_per_file": r.baseline.per_file_us if r.baseline else None,
        "baseline_failed": r.baseline.failed if r.baseline else 0,
        "ratio": r.ratio,
        "target": r.target,
    }


def _run(r: pipe.PipelineRun) -> dict[str, Any]:
    return {
        "mode": r.mode,
        "workers": r.workers,
        "fidelity": r.fidelity,
        "files": r.files,
        "wall_s": r.wall_s,
        "cpu_s": r.cpu_s,
        "files_per_s": r.files_per_s,
        "peak_rss": r.peak_rss,
        "job_rss": r.job_rss,
        "worker_rss": r.worker_rss,
        "exit_code": r.exit_code,
        "balanced": r.counts.get("balance"),
        "job_cpu": r.job_cpu,
        "worker_cpu": r.worker_cpu,
        "out_bytes": r.out_bytes,
    }


def targets(res: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue 31's table, every row from this run: ``figure``, ``value`` (None: not measured here),
    ``op`` and ``target``, ``met``, a ``note`` saying what was measured, and ``unit`` (``x`` for a
    ratio; the RSS cap is in GiB)."""
    pl = res["pipeline"]
    runs = pl["runs"]
    loop_rows = res["loop"]["rows"]
    outputs = pl.get("outputs_loop") or {}
    out: list[dict[str, Any]] = []

    def add(figure: str, value: float | None, op: str, target: float, note: str, unit: str = "x") -> None:
        if value is None:
            met = None
        elif op == "<=":
            met = value <= target
        elif op == "<":
            met = value < target
        else:
            met = value >= target
        out.append(
            {
                "figure": figure,
                "value": value,
                "op": op,
                "target": target,
                "met": met,
                "note": note,
                "unit": unit,
            }
        )

    def run_of(fidelity: str, n: int, mode: str = "multi_processing") -> dict[str, Any] | None:
        return next(
            (r for r in runs if r["mode"] == mode and r["fidelity"] == fidelity and r["files"] == n),
            None,
        )

    def per_input_ratio(fidelity: str, n: int) -> tuple[float | None, str]:
        """normalize CPU per input / the same-work loop's (writing every output, `off`)."""
        r, lp = run_of(fidelity, n), outputs.get(str(n))
        if not r or not lp or r["exit_code"] != 0:
            return None, "not in this run"
        ratio = (r["cpu_s"] / n) / (lp["cpu_s"] / n)
        note = (
            f"{n} files, CPU of the process tree (multi_processing x2): {r['cpu_s'] / n * 1000:.1f} ms / "
            f"{lp['cpu_s'] / n * 1000:.1f} ms per input"
        )
        return ratio, note

    fid_n = pl.get("fidelity_files") or pl["files"]
    for fm, tgt in COST_FIDELITY:
        v, note = per_input_ratio(fm, fid_n)
        opts = " (default options)" if fm == "full" else ""
        add(f"`normalize --fidelity {fm}`{opts} CPU per input / same-work loop `off`", v, "<=", tgt, note)
    big = pl["files"]
    v, note = per_input_ratio(PIPE_FIDELITY, big)
    add(
        f"`normalize --fidelity {PIPE_FIDELITY}` CPU per input, every output / same-work loop",
        v,
        "<=",
        PIPE_COST_TARGET,
        note,
    )
    x2, x1 = run_of(PIPE_FIDELITY, big), run_of(PIPE_FIDELITY, big, "in_memory")
    add(
        f"`normalize` speed-up: in_memory x1 wall / multi_processing x2 wall, `--fidelity {PIPE_FIDELITY}`",
        x1["wall_s"] / x2["wall_s"] if x1 and x2 else None,
        ">=",
        SPEEDUP_TARGET,
        f"{big} files, same run: {x1['wall_s']:.1f} s / {x2['wall_s']:.1f} s"
        if x1 and x2
        else "not in this run",
    )
    for group, base, label in (
        ("json-cards", "json.loads", "JSON cards `read` / `json.loads`"),
        ("png-cards", "tavern-card", "PNG cards `read` / tavern-card `parse_png_card`"),
        ("convert v2->ccv3 json", "json.loads", "convert V2 -> CCv3 JSON / `json.loads`"),
    ):
        row = next((r for r in loop_rows if r["group"] == group and r["baseline"] == base), None)
        tgt = loop.TARGETS[(group, base)]
        note = f"{row['files']} files, CPU time" if row else "baseline not installed"
        add(label, row["ratio"] if row else None, ">=", tgt, note)
    r10, r100 = run_of(PIPE_FIDELITY, 10_000), run_of(PIPE_FIDELITY, 100_000)
    add(
        f"time(100k) / time(10k), `--fidelity {PIPE_FIDELITY}`",
        r100["wall_s"] / r10["wall_s"] if r10 and r100 else None,
        "<=",
        SCALING_TARGET,
        "multi_processing x2, wall clock" if r10 and r100 else "measured by `make bench-full` only",
    )
    add(
        f"peak RSS(100,000) / peak RSS(10,000), `--fidelity {PIPE_FIDELITY}`",
        r100["peak_rss"] / r10["peak_rss"] if r10 and r100 else None,
        "<=",
        MEM_GROWTH_TARGET,
        "multi_processing x2, job + workers" if r10 and r100 else "measured by `make bench-full` only",
    )
    add(
        "peak RSS at 100,000 files",
        r100["peak_rss"] / 2**30 if r100 else None,
        "<",
        MEM_CAP / 2**30,
        "multi_processing x2, job + workers" if r100 else "measured by `make bench-full` only",
        unit=" GiB",
    )
    st = pl.get("startup_s") or {}
    add(
        "`bunzai detect one-card.png` / `python -c pass`",
        st["detect"] / st["python"] if st else None,
        "<=",
        STARTUP_TARGET,
        f"wall, best of 5: {st['detect'] * 1000:.0f} ms / {st['python'] * 1000:.0f} ms"
        if st
        else "not measured",
    )
    return out


def render_targets(rows: list[dict[str, Any]]) -> list[str]:
    out = ["| target | this run | goal | status | measured on |", "|---|---:|---:|---|---|"]
    for r in rows:
        unit = r.get("unit", "x")
        v = "-" if r["value"] is None else f"{r['value']:.2f}{unit}"
        met = "not measured" if r["met"] is None else ("met" if r["met"] else "**not met**")
        out.append(f"| {r['figure']} | {v} | {r['op']} {r['target']:g}{unit} | {met} | {r['note']} |")
    return out


def _breakdown_line(profile: dict[str, Any], top: int = 8) -> str:
    """Where the CPU of the profiled run goes, one role after the other: seconds and share per
    category (the largest ``top`` of the workers'; the job's three largest)."""
    parts = []
    for role, keep in (("workers", top), ("job", 3)):
        cpu = profile["cpu"][role]
        shares = list(profile["shares"][role].items())
        items = ", ".join(f"{k} {cpu * v:.1f} s ({100 * v:.0f} %)" for k, v in shares[:keep])
        rest = sum(v for _, v in shares[keep:])
        more = f", other {cpu * rest:.1f} s" if rest >= 0.005 else ""
        parts.append(f"**{role}** {cpu:.1f} s: {items}{more}")
    return "; ".join(parts)


def _fmt_ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}x"


def _mib(b: float) -> str:
    return f"{b / 2**20:.0f} MiB"


def _int(n: int | str) -> str:
    return f"{int(n):,}"


#: the peers of the page's side-by-side table: (loop group, what bunzai does, label)
PEER_ROWS = (
    ("json-cards", "JSON cards: `read`"),
    ("png-cards", "PNG cards: `read`"),
    ("convert v2->ccv3 json", "V2 JSON cards: convert to CCv3 JSON"),
)
PEERS = ("json.loads", "tavern-card", "card-forge")


def render(res: dict[str, Any]) -> str:
    """The results block of the one-page report: the run and the machine, files/s and memory at
    each size, bunzai beside its peers, every target with its status."""
    m = res["machine"]
    v = m["versions"]
    cmd = "make bench-full" if res["mode"] == "full" else "make bench"
    pl = res["pipeline"]
    fid = pl["fidelity"]
    out = [
        f"Measured by `{cmd}` (`python -m bench --{res['mode']}`, seed {res['seed']}) on {m['date']}, "
        f"in {res['seconds']:.0f} s.",
        "",
        f"**Machine:** {m['cores']} cores ({m['cpu']}), {m['memory_gib']} GiB, Python {m['python']}, "
        f"{m['platform']}; load average {m['load_start'][0]:.2f} at the start, {res['load_end'][0]:.2f} at "
        "the end (the machine is shared: other jobs may have run beside this one). "
        "Libraries: " + ", ".join(f"{k} {x}" for k, x in v.items()) + ".",
        "",
        "### Throughput and memory",
        "",
        f"`bunzai normalize` over the generated archive on local disk, `--fidelity {fid}`, the DirectRunner's "
        "multi_processing mode with 2 workers; peak RSS is the whole process tree (job + workers):",
        "",
        "| files | files/s | wall | CPU | peak RSS |",
        "|---:|---:|---:|---:|---:|",
    ]
    runs = pl["runs"]
    main = sorted(
        (r for r in runs if r["mode"] == "multi_processing" and r["fidelity"] == fid),
        key=lambda r: r["files"],
    )
    for r in main:
        out.append(
            f"| {_int(r['files'])} | {r['files_per_s']:.0f} | {r['wall_s']:.1f} s | {r['cpu_s']:.1f} s | "
            f"{_mib(r['peak_rss'])} |"
        )
    others = [r for r in runs if r not in main]
    reads = {int(n): t for n, t in pl["read_loop_s"].items()}
    notes = [
        f"{r['mode']} x{r['workers']}, `--fidelity {r['fidelity']}`, {_int(r['files'])} files: "
        f"{r['files_per_s']:.0f} files/s, {_mib(r['peak_rss'])}"
        for r in others
    ]
    if reads:
        n = max(reads)
        notes.append(
            f"one process decoding {_int(n)} of the files from memory (the codec loop): {n / reads[n]:.0f} files/s"
        )
    if notes:
        out += ["", "Beside them: " + "; ".join(notes) + "."]

    rows = {(r["group"], r["baseline"]): r for r in res["loop"]["rows"]}
    out += [
        "",
        "### Beside the peers",
        "",
        "CPU time per file (µs), the same files in memory, best pass of each; in brackets peer time / "
        "bunzai time (above 1x bunzai is faster). bunzai validates into the canonical model, hashes "
        "every file and checks every PNG chunk's CRC; the peers do less ([method](docs/perf-notes/method.md)).",
        "",
        "| files | bunzai | " + " | ".join(f"{p} {v.get(p, '')}".strip() for p in PEERS) + " |",
        "|---|---:|" + "---:|" * len(PEERS),
    ]
    for group, label in PEER_ROWS:
        mine = next((r for r in res["loop"]["rows"] if r["group"] == group and r["baseline"]), None)
        if mine is None:
            continue
        cells = []
        for p in PEERS:
            r = rows.get((group, p))
            cells.append(
                "-"
                if r is None or r["baseline_us_per_file"] is None
                else f"{r['baseline_us_per_file']:.0f} ({_fmt_ratio(r['ratio'])})"
            )
        out.append(
            f"| {label} ({_int(mine['files'])}) | {mine['us_per_file']:.0f} | " + " | ".join(cells) + " |"
        )

    out += ["", "### Targets", "", *render_targets(res.get("targets") or [])]
    prof = pl.get("profile") or {}
    if prof:
        where = (
            f"`--fidelity {fid}`, {_int(prof['files'])} files, multi_processing x2 (py-spy's samples of a run "
            "of its own in `bench/split.py`'s categories, scaled to the CPU of the unprofiled run): "
            + _breakdown_line(prof)
            + "."
        )
    else:
        where = (
            "not profiled in this run (`make bench-full` profiles the 10k `--fidelity off` run with py-spy)."
        )
    out += ["", "**Where the normalize CPU goes:** " + where]
    return "\n".join(out) + "\n"


def render_details(res: dict[str, Any]) -> str:
    """Every table of the run (the log's record; the report page carries :func:`render`)."""
    lp = res["loop"]
    out = [
        f"### Codec loop ({lp['files']} files of the {lp['corpus']} corpus in memory, CPU time, best of the passes)",
        "",
        "| files | bunzai | us/file | baseline | us/file | ratio | target |",
        "|---|---|---:|---|---:|---:|---|",
    ]
    for r in lp["rows"]:
        if r["baseline"] is None:
            continue
        tgt = (
            ""
            if r["target"] is None
            else f">= {r['target']:g}x " + ("met" if r["ratio"] >= r["target"] else "**not met**")
        )
        failed = f" ({r['baseline_failed']} failed)" if r["baseline_failed"] else ""
        out.append(
            f"| {r['group']} ({r['files']}) | {r['subject']} | {r['us_per_file']:.0f} | {r['baseline']}{failed} | "
            f"{r['baseline_us_per_file']:.0f} | {_fmt_ratio(r['ratio'])} | {tgt} |"
        )
    others = [r for r in lp["rows"] if r["baseline"] is None]
    if others:
        out += [
            "",
            "Without a baseline: "
            + "; ".join(f"{r['group']} {r['subject']} {r['us_per_file']:.0f} us/file" for r in others)
            + ".",
        ]
    if lp["mismatches"]:
        out += ["", f"**{len(lp['mismatches'])} files were not detected as the manifest says.**"]
    out += ["", "### Where the time goes (CPU us per file, each piece measured apart)", ""]
    for k, parts in res["breakdown"].items():
        out.append(f"- {k}: " + "; ".join(f"{p['label']} {p['us']:.0f}" for p in parts))
    pl = res["pipeline"]
    reads = {int(n): t for n, t in pl["read_loop_s"].items()}
    same_cpu = pl.get("same_work_loop_cpu_s") or {}
    outputs = pl.get("outputs_loop") or {}
    col = pl.get("collector")
    fid0 = pl["fidelity"]
    out += [
        "",
        "### Pipeline (`bunzai normalize`, local disk; the yardsticks in one process)",
        "",
        "Single-process yardsticks: codec loop (`read`, in memory, wall) "
        + "; ".join(f"{reads[n]:.1f} s over {n} files ({n / reads[n]:.0f} files/s)" for n in sorted(reads))
        + "; same-work loop writing nothing (normalize's per-input work for that --fidelity, in memory, CPU) "
        + "; ".join(f"{k.replace('/', ' over ')} files {t:.1f} s" for k, t in same_cpu.items())
        + (
            "; same-work loop `off` writing every output (files read from disk, CPU) "
            + "; ".join(f"over {n} files {v['cpu_s']:.1f} s" for n, v in outputs.items())
            if outputs
            else ""
        )
        + ".",
        "",
        "The workers raise the collector's young-generation threshold (`pipeline/runtime/memory.py`); "
        "the same-work loop writing nothing runs the library as a caller gets it. Same-work loop `--fidelity "
        f"{fid0}` over {col['files']} files in one process holding a worker's imports, CPU time, best "
        f"of 3 alternating passes: threshold {col['default_gen0']} (CPython's) {col['default']:.2f} s, {col['gen0']} "
        f"{col['tuned']:.2f} s ({col['default'] / col['tuned']:.2f}x)."
        if col
        else "",
        "",
        "| run | --fidelity | files | wall s | CPU s | job / workers CPU s | files/s | CPU per input / loop writing every output | peak RSS (sum) | job / workers RSS |",
        "|---|---|---:|---:|---:|---|---:|---:|---:|---|",
    ]
    for r in pl["runs"]:
        workers = [w for w in r.get("worker_rss", []) if w > 16 * 2**20]
        rss = (
            f"{r.get('job_rss', 0) / 2**20:.0f} / " + ", ".join(f"{w / 2**20:.0f}" for w in workers) + " MiB"
            if workers
            else "one process"
        )
        cpus = r.get("worker_cpu") or []
        cpu = f"{r.get('job_cpu', 0):.1f} / " + ", ".join(f"{c:.1f}" for c in cpus) if cpus else "one process"
        lp = outputs.get(str(r["files"]))
        vs = _fmt_ratio(r["cpu_s"] / lp["cpu_s"]) if lp else ""
        out.append(
            f"| {r['mode']} x{r['workers']} | {r['fidelity']} | {r['files']} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | "
            f"{cpu} | {r['files_per_s']:.0f} | {vs} | {r['peak_rss'] / 2**20:.0f} MiB | {rss} |"
        )
    fid = pl["fidelity"]
    mp = {r["files"]: r for r in pl["runs"] if r["mode"] == "multi_processing" and r["fidelity"] == fid}
    if 10_000 in mp and len(mp) > 1:
        big = max(mp)
        if big > 10_000:
            g = mp[big]["peak_rss"] / mp[10_000]["peak_rss"]
            sc = mp[big]["wall_s"] / mp[10_000]["wall_s"]
            out += [
                "",
                f"Memory (--fidelity {fid}): peak RSS at {big} files / at 10000 = {g:.2f}x (target <= {MEM_GROWTH_TARGET}x: "
                f"{'met' if g <= MEM_GROWTH_TARGET else '**not met**'}); {mp[big]['peak_rss'] / 2**30:.2f} GiB "
                f"(target < 1.5 GiB: {'met' if mp[big]['peak_rss'] < MEM_CAP else '**not met**'}).",
                "",
                f"Scaling (--fidelity {fid}): time({big}) / time(10000) = {sc:.2f} for {big / 10_000:.0f}x the files "
                f"(target <= {SCALING_TARGET:.0f}: {'met' if sc <= SCALING_TARGET else '**not met**'}).",
            ]
    prof = pl.get("profile") or {}
    if prof:
        out += [
            "",
            f"### Where the normalize CPU goes (`--fidelity {fid}`, {prof['files']} files, multi_processing x2)",
            "",
            "| role | category | CPU s | share |",
            "|---|---|---:|---:|",
        ]
        for role in ("job", "workers"):
            cpu = prof["cpu"][role]
            for k, v in prof["shares"][role].items():
                out.append(f"| {role} | {k} | {cpu * v:.1f} | {100 * v:.0f} % |")
    return "\n".join(out) + "\n"


def _rewrite(path: str, md: str) -> None:
    text = f"{START}\n{END}\n"
    if os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    if START not in text or END not in text:
        text += f"\n{START}\n{END}\n"
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"{head}{START}\n{md}{END}{tail}")


if __name__ == "__main__":
    sys.exit(main())
