"""The pipeline's cost in two (or more) source trees over one corpus, runs alternating.

    python -m bench.trees CORPUS N LABEL=TREE [LABEL=TREE ...] [--rounds R] [--out DIR]
        [--measure pipe|procs|same-work|loop] [--fidelity off[,native,full]] [--repeat K]

``TREE`` is a checkout of bunzai (``git worktree add /tmp/old COMMIT``); each run is a fresh
interpreter of this venv started in ``TREE`` with ``PYTHONPATH=TREE``, so it imports that tree's
``bunzai_codecs``, ``pipeline``, ``jobs`` and ``bench`` (the libraries are this venv's). Runs
alternate between the trees, ``--rounds`` times, so a busy neighbour costs each tree alike; the
load average is printed with each run. What is measured, by the tree's own code:

- ``pipe``: ``bench.pipe.normalize(CORPUS, ..., mode="multi_processing", workers=2, files=N,
  fidelity=...)``: wall, CPU of the process tree, peak RSS of the tree (job / workers);
- ``procs``: the same ``normalize`` command, with the CPU of each process of the tree (utime +
  stime from ``/proc/<pid>/stat``, polled every 0.05 s; the last value seen per process);
- ``same-work``: ``bench.pipe.same_work`` over the first ``N`` files of the corpus in memory, one
  process: CPU seconds per ``--fidelity`` mode (several: ``--fidelity off,native,full``, the modes
  taking turns, best of ``--repeat`` passes, the ratios to ``off`` printed) after a pass over 200
  files (imports, models). A tree with ``bench.pipe.same_work_loop`` runs ``full`` with its default
  options (the sample's pass, then the rest by pattern: ``--fidelity-sample``); an older tree, file
  by file;
- ``loop``: the codec loop's target rows over the first ``N`` files of the corpus, one process:
  JSON cards ``read`` / ``json.loads``, PNG cards ``read`` / tavern-card ``parse_png_card``, V2 JSON
  cards converted to CCv3 / ``json.loads``; each a ratio of CPU times in that process, subject and
  baseline alternating, best of ``--repeat`` passes (``bench.loop.race``).

docs/perf-notes/2026-12-02-pipeline-cpu-since-2026-11-30.md has a run of it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence

from bench.pipe import _tree

_PIPE = """
import sys
from bench.pipe import normalize
r = normalize(sys.argv[1], sys.argv[2], mode="multi_processing", workers=2, files=int(sys.argv[3]),
              fidelity=sys.argv[4])
mib = 1 << 20
print(f"wall={r.wall_s:.1f}s cpu={r.cpu_s:.1f}s rss={r.peak_rss // mib}MiB job={r.job_rss // mib}MiB "
      f"workers={[w // mib for w in r.worker_rss if w > 16 * mib]}MiB exit={r.exit_code}")
"""

# spelled out rather than bench.pipe.timed_loop: it runs in old trees, which may predate it
_SAME_WORK = """
import contextlib, gc, sys, time
import bench.pipe
from bench.loop import load
from bench.pipe import same_work
files = load(sys.argv[1], int(sys.argv[3]))
modes = sys.argv[4].split(",")
def cpu(fs, mode):
    loop = getattr(bench.pipe, "same_work_loop", None)
    if loop is not None:
        return loop(fs, mode)[1]
    gc.collect()
    c0 = time.process_time()
    for f in fs:
        with contextlib.suppress(Exception):
            same_work(f, mode)
    return time.process_time() - c0
for mode in modes:
    cpu(files[:200], mode)
best = {}
for _ in range(int(sys.argv[5])):
    for mode in modes:
        best[mode] = min(best.get(mode, float("inf")), cpu(files, mode))
said = " ".join(f"{m}={best[m]:.2f}s" for m in modes)
if "off" in best:
    said += "".join(f" {m}/off={best[m] / best['off']:.2f}x" for m in modes if m != "off")
print(f"files={len(files)} cpu {said}")
"""


# spelled out from bench.loop's own pieces, which old trees have too
_LOOP = """
import sys
from bench import loop
files = loop.load(sys.argv[1], int(sys.argv[3]))
repeat = int(sys.argv[5])
by = loop.groups(files)
cards, pngs = by.get("json-cards", []), by.get("png-cards", [])
v2 = [f for f in cards if b'"chara_card_v2"' in f.data]
out = []
for label, subject, base, fs in (
    ("json", loop.bunzai_read, loop.stdlib_json, cards),
    ("png", loop.bunzai_read, loop.tavern_card_png, pngs),
    ("convert", loop.convert_v3_json, loop.stdlib_json, v2),
):
    if fs:
        t = loop.race([("s", subject), ("b", base)], fs, repeat)
        out.append(f"{label}={t[1].seconds / t[0].seconds:.3f}x ({t[0].per_file_us:.0f}/{t[1].per_file_us:.0f} us)")
print(" ".join(out))
"""


def proc_cpu(stat: bytes, ticks: int) -> float:
    """utime + stime in seconds from the text of ``/proc/<pid>/stat`` (the command name may hold
    spaces and parentheses: the fields follow the last ``)``)."""
    fields = stat[stat.rindex(b")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / ticks


def _procs(tree: str, env: dict[str, str], corpus: str, out: str, fidelity: str) -> str:
    ticks = os.sysconf("SC_CLK_TCK")
    argv = [sys.executable, "-m", "jobs.normalize", "--input", corpus, "--output", out]
    argv += [f"--fidelity={fidelity}", "--direct_running_mode=multi_processing", "--direct_num_workers=2"]
    t0, c0 = time.perf_counter(), os.times()
    p = subprocess.Popen(argv, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen: dict[int, float] = {}
    while p.poll() is None:
        for pid in _tree(p.pid):
            try:
                with open(f"/proc/{pid}/stat", "rb") as fh:
                    seen[pid] = proc_cpu(fh.read(), ticks)
            except OSError:
                pass
        time.sleep(0.05)
    c1 = os.times()
    total = c1.children_user - c0.children_user + c1.children_system - c0.children_system
    others = sorted((c for pid, c in seen.items() if pid != p.pid), reverse=True)
    return (
        f"wall={time.perf_counter() - t0:.1f}s cpu={total:.1f}s job={seen.get(p.pid, 0.0):.1f}s "
        f"workers={[round(c, 1) for c in others if c >= 0.05]}s exit={p.returncode}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.trees", description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("n", type=int)
    ap.add_argument("trees", nargs="+", metavar="LABEL=TREE")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", default="/tmp/bench-trees-out")
    ap.add_argument("--measure", choices=("pipe", "procs", "same-work", "loop"), default="pipe")
    ap.add_argument(
        "--fidelity", default="off", help="the mode(s) measured; same-work: several, comma-separated"
    )
    ap.add_argument(
        "--repeat", type=int, default=3, help="--measure loop and same-work: passes per row (best kept)"
    )
    a = ap.parse_args(argv)
    # each run starts in its tree: a local corpus path is taken from here
    corpus = a.corpus if "://" in a.corpus else os.path.abspath(a.corpus)
    trees = [t.split("=", 1) for t in a.trees]
    if any(len(t) != 2 or not os.path.isdir(t[1]) for t in trees):
        ap.error("each tree is LABEL=FOLDER, the folder a checkout of bunzai")
    for r in range(a.rounds):
        for label, tree in trees:
            tree = os.path.abspath(tree)
            env = dict(os.environ, PYTHONPATH=tree)
            out = os.path.join(a.out, label)
            shutil.rmtree(out, ignore_errors=True)
            load = os.getloadavg()[0]
            if a.measure == "procs":
                said = _procs(tree, env, corpus, out, a.fidelity)
            else:
                code = {"pipe": _PIPE, "same-work": _SAME_WORK, "loop": _LOOP}[a.measure]
                cmd = [sys.executable, "-c", code, corpus, out, str(a.n), a.fidelity, str(a.repeat)]
                p = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
                said = p.stdout.strip() or f"failed: {p.stderr.strip()[-500:]}"
            print(f"{time.strftime('%H:%M:%S')} round {r} {label}: {said} (load {load:.2f})", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
