"""The pipeline runs: ``bunzai normalize`` over the generated corpus on local disk, on Beam's
DirectRunner in memory and with ``multi_processing`` (2 workers), against single-process loops
timed in the same run; peak memory of the whole process tree; scaling from 10k to 100k files.

Two single-process yardsticks, both over the same files held in memory, both on the wall clock
(like the pipeline runs, so a busy neighbour costs both the same):

- the **codec loop**: ``read`` (detect + decode + validate) per file — what the issue's target
  names;
- the **same-work loop**: what ``normalize`` does per input without Beam and without disk — detect,
  decode, lint, the vaud-json line and its sort record per entity, and the fidelity rows
  (``bunzai_codecs.fidelity``: the decode row, native round trip, canonical stability and the
  cross-format rows) — so the ratio shows what Beam and the second worker
  add or cost on the same work.

Memory: a sampler reads ``/proc`` every 0.1 s and sums ``VmRSS`` over the normalize process and all
its descendants (Beam's workers); the peak of that sum is reported (shared pages are counted once
per process, so it is an upper bound).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from bench.loop import File


@dataclass
class PipelineRun:
    mode: str
    workers: int
    files: int
    #: ``--fidelity``: off, native or full
    fidelity: str
    wall_s: float
    cpu_s: float
    peak_rss: int
    exit_code: int
    #: the job's own peak RSS, and each worker process's (largest first)
    job_rss: int = 0
    worker_rss: list[int] = field(default_factory=list)
    counts: dict[str, Any] = field(default_factory=dict)
    log_tail: str = ""
    #: bytes the run left in its output folder, per top-level entry (``canonical``, ``fidelity``,
    #: ``blobs``, ``manifest.json``...): what a run writes, for sizing (bench/sizing.py)
    out_bytes: dict[str, int] = field(default_factory=dict)

    @property
    def files_per_s(self) -> float:
        return self.files / self.wall_s if self.wall_s else 0.0


# -- single-process yardsticks ------------------------------------------------------------------


def same_work(f: File, fidelity: str = "full") -> int:
    """``normalize --fidelity MODE``'s per-input library work, in memory
    (``pipeline/normalize/per_input.py``: Detect, Decode, Validate, the canonical records and, unless
    ``off``, RoundTrip — without the cross-format rows for ``native``): returns the bytes it would
    write."""
    from bunzai_codecs import lint as lint_rules
    from bunzai_codecs.bundle import read_sniff
    from bunzai_codecs.core import registry
    from bunzai_codecs.core.entity import CanonicalEntity, Source
    from bunzai_codecs.core.errors import BunzaiError
    from bunzai_codecs.core.sniff import Sniff
    from bunzai_codecs.fidelity import check_decoded, decode_row
    from bunzai_codecs.formats.vaud.codec import dumps
    from pipeline.dataset.shards import record

    s = Sniff(f.data, f.name, uri=f.path)
    try:
        cand = registry.require(s)
        decoded = read_sniff(s, format=cand.id, score=cand.score)
    except BunzaiError:
        return 0
    ents = decoded.entities
    bundle = decoded.by_id()
    src = Source(uri=f.path, format=cand.id, score=cand.score, sha256=s.sha256, bytes=s.size)
    out = 0
    keep = set()
    for e in ents:
        findings = lint_rules.lint(e, bundle)
        if lint_rules.errors(findings):
            continue
        notes = [str(w) for w in lint_rules.warnings(findings)]
        stamped = CanonicalEntity(
            kind=e.kind,
            id=e.id,
            body=e.body,
            links=e.links,
            original=e.original,
            source=src,
            warnings=[*e.warnings, *notes],
        )
        out += len(record(e.id, [e.id, f.path], dumps(stamped)))
        keep.add(e.id)
    if fidelity == "off":
        return out
    where = {"input": f.path, "sha256": s.sha256, "uri": f.path}
    rows = [
        decode_row(decoded, source=cand.id, **where),
        *check_decoded(
            s.data, decoded, source=cand.id, name=s.name, targets=None if fidelity == "full" else (), **where
        ),
    ]
    for row in rows:
        if row.entity in keep or row.check == "decode":
            natural = [row.entity, row.check, row.target, row.uri]
            out += len(record(row.entity, natural, orjson.dumps(row.to_json())))
    return out


def wall_loop(fn: Any, files: Sequence[File]) -> float:
    """Wall seconds of one pass of ``fn`` over ``files``."""
    return timed_loop(fn, files)[0]


def timed_loop(fn: Any, files: Sequence[File]) -> tuple[float, float]:
    """Wall and CPU seconds of one pass of ``fn`` over ``files`` (CPU time: what a busy neighbour
    on a shared machine does not add)."""
    import gc

    gc.collect()
    t0, c0 = time.perf_counter(), time.process_time()
    for f in files:
        with contextlib.suppress(Exception):
            fn(f)
    return time.perf_counter() - t0, time.process_time() - c0


def startup(png: str, *, passes: int = 5) -> dict[str, float]:
    """Best wall seconds of ``bunzai detect PNG`` and of ``python -c pass`` over ``passes``
    alternating runs of each (fresh interpreters, this venv), after one unmeasured run of each: the
    commands run as an installed CLI does, with its bytecode cached (``PYTHONDONTWRITEBYTECODE``,
    which some shells set, would make every run compile the package's sources again)."""
    bunzai = os.path.join(os.path.dirname(sys.executable), "bunzai")
    cmds = {"python": [sys.executable, "-c", "pass"], "detect": [bunzai, "detect", png]}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for cmd in cmds.values():
        subprocess.run(cmd, check=True, capture_output=True, env=env)
    best = dict.fromkeys(cmds, float("inf"))
    for _ in range(passes):
        for k, cmd in cmds.items():
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True, env=env)
            best[k] = min(best[k], time.perf_counter() - t0)
    return best


def collector_ab(files: Sequence[File], *, fidelity: str = "off", passes: int = 3) -> dict[str, float]:
    """CPU seconds of the same-work loop over ``files`` with CPython's default collector threshold
    (``CPYTHON_GEN0``) and with the one normalize's workers set (``pipeline.runtime.memory.tune_gc``), passes
    alternating, best of ``passes`` each. Beam and the pipeline are imported first, so this process
    holds a worker's long-lived objects, which the collector's older-generation passes walk."""
    import gc

    import apache_beam  # noqa: F401  # a worker's imports

    import pipeline.normalize.graph  # noqa: F401
    from pipeline.runtime.memory import CPYTHON_GEN0, GC_GEN0

    saved = gc.get_threshold()
    best = {"default": float("inf"), "tuned": float("inf")}
    try:
        for _ in range(passes):
            for label, gen0 in (("default", CPYTHON_GEN0), ("tuned", GC_GEN0)):
                gc.collect()
                gc.set_threshold(gen0, saved[1], saved[2])
                t0 = time.process_time()
                for f in files:
                    with contextlib.suppress(Exception):
                        same_work(f, fidelity)
                best[label] = min(best[label], time.process_time() - t0)
    finally:
        gc.set_threshold(*saved)
    return best


# -- the normalize job in a subprocess ------------------------------------------------------------


def _tree(root: int) -> list[int]:
    """``root`` and every live descendant."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # the command may hold spaces and parentheses: the ppid follows the last ")"
        ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class _Sampler(threading.Thread):
    def __init__(self, pid: int, every: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.pid, self.every, self.peak = pid, every, 0
        #: the largest RSS each process of the tree reached (the job is ``pid``, the rest workers)
        self.per_process: dict[int, int] = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            total = 0
            for p in _tree(self.pid):
                r = _rss(p)
                total += r
                if r > self.per_process.get(p, 0):
                    self.per_process[p] = r
            self.peak = max(self.peak, total)
            self.done.wait(self.every)


def normalize(
    corpus: str | Sequence[str],
    out: str,
    *,
    mode: str,
    workers: int = 1,
    files: int = 0,
    fidelity: str = "full",
) -> PipelineRun:
    """``bunzai normalize --input corpus --output out --fidelity MODE`` on the DirectRunner in
    ``mode`` (``in_memory`` or ``multi_processing``): wall time, CPU time of the tree, peak RSS of
    the tree."""
    import shutil

    shutil.rmtree(out, ignore_errors=True)
    inputs = [corpus] if isinstance(corpus, str) else list(corpus)
    argv = [
        sys.executable,
        "-m",
        "jobs.normalize",
        "--output",
        out,
        f"--fidelity={fidelity}",
        f"--direct_running_mode={mode}",
    ]
    for i in inputs:
        argv += ["--input", i]
    if mode == "multi_processing":
        argv.append(f"--direct_num_workers={workers}")
    before = os.times()
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    sampler = _Sampler(proc.pid)
    sampler.start()
    output, _ = proc.communicate()
    wall = time.perf_counter() - t0
    sampler.done.set()
    sampler.join()
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    counts: dict[str, Any] = {}
    try:
        with open(os.path.join(out, "manifest.json"), "rb") as fh:
            manifest = orjson.loads(fh.read())
        counts = {"counts": manifest.get("counts"), "balance": manifest.get("balance", {}).get("ok")}
    except OSError:
        pass
    tail = output.decode("utf-8", "replace")[-3000:]
    out_bytes = output_bytes(out)
    job = sampler.per_process.get(proc.pid, 0)
    workers_rss = sorted((r for p, r in sampler.per_process.items() if p != proc.pid), reverse=True)
    return PipelineRun(
        mode=mode,
        workers=workers,
        files=files,
        fidelity=fidelity,
        wall_s=wall,
        cpu_s=cpu,
        peak_rss=sampler.peak,
        exit_code=proc.returncode,
        counts=counts,
        log_tail=tail,
        job_rss=job,
        worker_rss=workers_rss,
        out_bytes=out_bytes,
    )


def output_bytes(out: str) -> dict[str, int]:
    """Bytes below each top-level entry of an output folder (a file counts as itself)."""
    sizes: dict[str, int] = {}
    if not os.path.isdir(out):
        return sizes
    for top in sorted(os.listdir(out)):
        path = os.path.join(out, top)
        if os.path.isfile(path):
            sizes[top] = os.path.getsize(path)
            continue
        sizes[top] = sum(
            os.path.getsize(os.path.join(d, f)) for d, _dirs, files in os.walk(path) for f in files
        )
    return sizes


__all__ = ["PipelineRun", "normalize", "output_bytes", "same_work", "startup", "timed_loop", "wall_loop"]
