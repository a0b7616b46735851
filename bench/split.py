"""Where a ``normalize`` run's CPU goes: the job process against Beam's workers, and per stage.

    python -m bench.split PROFILE JOB_CPU WORKERS_CPU

``PROFILE`` is py-spy's raw (collapsed) output of a run and its worker processes::

    py-spy record --subprocesses --format raw -r 50 -o PROFILE -- \\
        python -m jobs.normalize --input CORPUS --output OUT --fidelity=off \\
        --direct_running_mode=multi_processing --direct_num_workers=2

Samples of threads that wait (a condition, gRPC's completion queue, a child process) are dropped;
each remaining sample is put in one category by the frames on its stack (a stage by the
``pipeline/`` function it runs in; imports by the import machinery, whoever asked), and each
process role's samples are scaled to the CPU seconds that role used in a run without the profiler
(``JOB_CPU``, ``WORKERS_CPU``: py-spy slows what it samples). docs/perf-notes/2026-12-01-second-worker.md ("Where the second
worker's time goes") has a run of it.
"""

from __future__ import annotations

import sys
from collections import Counter

#: leaf frames of a thread that waits: not CPU
IDLE = (
    "Condition.wait",
    "_serve (grpc",
    "channel_spin",
    "_wait_for_tstate_lock",
    "Thread.run (threading",
    "Popen._try_wait",
    "sleep (",
)

#: (a frame's text, the category) for a worker's sample: the first that matches wins
WORKER = (
    ("index/rows.py", "index rows (text_chars, the row)"),
    ("index.py", "index rows (text_chars, the row)"),
    ("_Detect.process", "detect"),
    ("_Decode.process", "decode"),
    ("lean_line", "validate: lint, stamp, canonical line"),
    ("_Validate.process", "validate: lint, stamp, canonical line"),
    ("_RoundTrip.process", "fidelity rows (round trips)"),
    ("read_bounded", "read bytes (fsspec)"),
    ("_ReadBytes", "read bytes (fsspec)"),
    ("blobs.py", "blobs"),
    ("parquet.py", "shards: sort, write, merge"),
    ("shards.py", "shards: sort, write, merge"),
    ("datasets.py", "shards: sort, write, merge"),
    ("pipeline/runtime/storage.py", "shards: sort, write, merge"),
    ("progress.py", "progress tallies, counters"),
    ("counters.py", "progress tallies, counters"),
    ("commit.py", "commit, prune, manifest"),
    ("prune.py", "commit, prune, manifest"),
    ("balance.py", "counts, balance"),
    ("counts.py", "counts, balance"),
    ("bundles.py", "counts, balance"),
    ("listing.py", "listing, pack, spread"),
    ("pairing.py", "listing, pack, spread"),
    ("packed.py", "listing, pack, spread"),
)


def category(frames: list[str], worker: bool) -> str:
    """The category of one sample (its frames, outermost first, without the process frames)."""
    s = ";".join(frames)
    if "importlib._bootstrap" in s:
        if "registry.py" in s:
            return "codec modules imported (first Detect)"
        return "imports (Beam, the pipeline)"
    has_python = any("(" in f for f in frames)
    if not worker:
        if "prepare (jobs/normalize.py" in s:
            return "graph construction (build)"
        if "Pipeline.run (apache_beam" in s:
            return "runner: translation, stage scheduling, bundles"
        if "progress.py" in s:
            return "progress display"
        return (
            "runner: gRPC control and data plane, other" if has_python else "no Python frame (native threads)"
        )
    for key, label in WORKER:
        if key in s:
            return label
    if "pipeline/" in s:
        return "other pipeline/"
    return "Beam runtime (bundles, coders, data plane)" if has_python else "no Python frame (native threads)"


def split(lines: list[str]) -> dict[str, Counter[str]]:
    """Samples per role (``job``, ``workers``) and category."""
    out: dict[str, Counter[str]] = {"job": Counter(), "workers": Counter()}
    for line in lines:
        stack, _, n = line.rstrip("\n").rpartition(" ")
        if not stack:
            continue
        frames = stack.split(";")
        if any(w in frames[-1] for w in IDLE):
            continue
        procs = [f for f in frames if f.startswith("process ")]
        worker = any("sdk_worker_main" in p for p in procs)
        rest = [f for f in frames if not f.startswith("process ")]
        out["workers" if worker else "job"][category(rest, worker)] += int(n)
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    with open(args[0]) as fh:
        parts = split(fh.readlines())
    cpu = {"job": float(args[1]), "workers": float(args[2])}
    for role, counts in parts.items():
        total = sum(counts.values()) or 1
        print(f"{role}: {cpu[role]:.1f} s CPU")
        for label, n in counts.most_common():
            print(f"  {n / total * cpu[role]:5.1f} s {100 * n / total:4.0f}%  {label}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
