"""The pipeline runs: ``bunzai normalize`` over the generated corpus on local disk, on Beam's
DirectRunner in memory and with ``multi_processing`` (2 workers), against single-process loops
timed in the same run; peak memory of the whole process tree; scaling from 10k to 100k files.

Single-process yardsticks over the same files:

- the **codec loop**: ``read`` (detect + decode + validate) per file, in memory;
- the **same-work loop**: what ``normalize`` does per input without Beam and without disk — detect,
  decode, lint, the vaud-json line and its sort record per entity, and the fidelity rows
  (``bunzai_codecs.fidelity``: the decode row, native round trip, canonical stability and the
  cross-format rows), in memory, writing nothing (``same_work``);
- the **same-work loop with every output** (``OutputsLoop``, issue 31's yardstick: what a hub
  would pay without the pipeline): each file read from disk, then the same work as
  ``normalize --fidelity off``, and every output a run writes by default written once, in input
  order, to a folder on the same disk: the canonical lines, each blob of the lean lines once, the
  inventory and reject rows, the entity index as Parquet, a sha256 of each file (the manifest
  lists them). What it leaves out is what the pipeline adds: Beam, the job process, the workers,
  sorting the datasets and cutting them into shards.

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
    #: CPU seconds of the job process, and of each other process of the tree (the workers;
    #: largest first), as ``/proc`` last showed them
    job_cpu: float = 0.0
    worker_cpu: list[float] = field(default_factory=list)
    counts: dict[str, Any] = field(default_factory=dict)
    log_tail: str = ""
    #: bytes the run left in its output folder, per top-level entry (``canonical``, ``fidelity``,
    #: ``blobs``, ``manifest.json``...): what a run writes, for sizing (bench/sizing.py)
    out_bytes: dict[str, int] = field(default_factory=dict)

    @property
    def files_per_s(self) -> float:
        return self.files / self.wall_s if self.wall_s else 0.0


# -- single-process yardsticks ------------------------------------------------------------------


def same_work(f: File, fidelity: str = "full", patterns: Any = None) -> int:
    """``normalize --fidelity MODE``'s per-input library work, in memory
    (``pipeline/normalize/per_input.py``: Detect, Decode, Validate, the canonical records and, unless
    ``off``, RoundTrip — without the cross-format rows for ``native``; with ``patterns``
    (``fidelity.Patterns``, ``learn_sample``'s), the cross rows by pattern as normalize's default
    ``--fidelity-sample`` makes them): returns the bytes it would write."""
    from bunzai_codecs import lint as lint_rules
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
        # the codec's output as it is, as normalize's Decode hands it to RoundTrip (and as
        # learn_sample reads the sample): a cross row's pattern depends on what the entity carries
        decoded = registry.get(cand.id).decode(s)
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
            s.data,
            decoded,
            source=cand.id,
            name=s.name,
            targets=None if fidelity == "full" else (),
            patterns=patterns,
            **where,
        ),
    ]
    for row in rows:
        if row.entity in keep or row.check == "decode":
            natural = [row.entity, row.check, row.target, row.uri]
            out += len(record(row.entity, natural, orjson.dumps(row.to_json())))
    return out


def learn_sample(files: Sequence[File], sample: int) -> Any:
    """``normalize``'s first pass under ``--fidelity-sample 1/sample``
    (``pipeline/normalize/roundtrip.py::LearnPatterns``): every cross row of the inputs in the sample
    (by their key, as normalize samples by uri) observed and folded into a ``PatternBook``; returns
    the ``fidelity.Patterns`` the second pass (``same_work(..., patterns=...)``) predicts with."""
    from bunzai_codecs.core import registry
    from bunzai_codecs.fidelity import Patterns, learn_patterns

    plan = Patterns(sample)
    for f in files:
        if not plan.observes(f.path):
            continue
        with contextlib.suppress(Exception):  # a file the sample cannot read teaches nothing
            from bunzai_codecs.core.sniff import Sniff

            s = Sniff(f.data, f.name, uri=f.path)
            fmt = registry.require(s).id
            decoded = registry.get(fmt).decode(s)
            learn_patterns(f.data, decoded, plan.book, source=fmt, input=f.path, name=s.name)
    return plan


def same_work_loop(files: Sequence[File], fidelity: str, sample: int | None = None) -> tuple[float, float]:
    """Wall and CPU seconds of normalize's work over ``files`` with ``--fidelity MODE`` and its
    default options: for ``full``, the sample's pass (``learn_sample``, ``--fidelity-sample``,
    default ``fidelity.DEFAULT_SAMPLE``) and then every input with its cross rows by pattern; with a
    sample of 1, every cross row observed."""
    import gc

    from bunzai_codecs.fidelity import DEFAULT_SAMPLE

    k = DEFAULT_SAMPLE if sample is None else sample
    gc.collect()
    t0, c0 = time.perf_counter(), time.process_time()
    plan = learn_sample(files, k) if fidelity == "full" and k > 1 else None
    for f in files:
        with contextlib.suppress(Exception):
            same_work(f, fidelity, plan)
    return time.perf_counter() - t0, time.process_time() - c0


class OutputsLoop:
    """``normalize --fidelity off``'s per-input work and its outputs, in one process, no Beam:
    ``run(paths)`` reads each file from disk and writes everything under ``out``."""

    def __init__(self, out: str) -> None:
        import shutil

        shutil.rmtree(out, ignore_errors=True)
        self.out = out
        self.files: dict[str, Any] = {}
        self.digests: dict[str, Any] = {}
        self.blobs: set[str] = set()
        self.dirs: set[str] = set()
        self.index_rows: list[dict[str, Any]] = []

    def _write(self, name: str, data: bytes) -> None:
        import hashlib

        f = self.files.get(name)
        if f is None:
            path = os.path.join(self.out, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            f = self.files[name] = open(path, "wb")  # noqa: SIM115  # closed in close()
            self.digests[name] = hashlib.sha256()
        f.write(data)
        self.digests[name].update(data)

    def _blob(self, key: str, data: bytes) -> None:
        if key in self.blobs:
            return
        self.blobs.add(key)
        folder = os.path.join(self.out, "blobs", key[:2])
        if folder not in self.dirs:
            os.makedirs(folder, exist_ok=True)
            self.dirs.add(folder)
        with open(os.path.join(folder, key), "wb") as fh:
            fh.write(data)

    def one(self, path: str, uri: str) -> None:
        from bunzai_codecs import lint as lint_rules
        from bunzai_codecs.core import registry
        from bunzai_codecs.core.entity import CanonicalEntity, Source
        from bunzai_codecs.core.errors import BunzaiError, Malformed, NotRecognized, Unsupported
        from bunzai_codecs.core.sniff import Sniff
        from pipeline.dataset.blobs import lean_line
        from pipeline.dataset.index.rows import index_row
        from pipeline.normalize.elements import inventory_row, reject
        from pipeline.runtime.storage import FileRef

        with open(path, "rb") as fh:
            data = fh.read()
        ref = FileRef(uri, 0, path, len(data), None)
        try:
            s = Sniff(data, path.rsplit("/", 1)[-1], uri=uri)
        except BunzaiError as exc:
            self._rows(reject(uri, "read", exc), inventory_row(ref, "new", rejected="read"))
            return
        try:
            cand = registry.require(s)
        except (NotRecognized, Malformed, Unsupported) as exc:  # as normalize's Detect (decode.py)
            self._rows(
                reject(uri, "detect", exc), inventory_row(ref, "new", sha256=s.sha256, rejected="detect")
            )
            return
        try:
            decoded = registry.get(cand.id).decode(s)
        except Exception as exc:
            inv = inventory_row(ref, "new", sha256=s.sha256, format=cand.id, rejected="decode")
            self._rows(reject(uri, "decode", exc), inv)
            return
        bundle = decoded.by_id()
        src = Source(uri=uri, format=cand.id, score=cand.score, sha256=s.sha256, bytes=s.size)
        accepted = []
        for e in decoded.entities:
            findings = lint_rules.lint(e, bundle)
            errs = lint_rules.errors(findings)
            if errs:
                self._write(
                    "rejects.jsonl", orjson.dumps(reject(uri, "validate", errs[0].to_error(e, uri))) + b"\n"
                )
                continue
            stamped = CanonicalEntity(
                kind=e.kind,
                id=e.id,
                body=e.body,
                links=e.links,
                original=e.original,
                source=src,
                warnings=[*e.warnings, *(str(w) for w in lint_rules.warnings(findings))],
                media=e.media,
            )
            line, blobs = lean_line(stamped)
            self._write("canonical.jsonl", line + b"\n")
            for key, blob in blobs.items():
                self._blob(key, blob)
            self.index_rows.append(index_row(stamped, native=None))
            accepted.append(e.id)
        inv = inventory_row(
            ref,
            "new",
            sha256=s.sha256,
            format=cand.id,
            entities=accepted,
            decoded=len(decoded.entities),
            rejected=None if accepted else "validate",
        )
        self._write("inventory.jsonl", orjson.dumps(inv) + b"\n")

    def _rows(self, rej: dict[str, Any], inv: dict[str, Any]) -> None:
        self._write("rejects.jsonl", orjson.dumps(rej) + b"\n")
        self._write("inventory.jsonl", orjson.dumps(inv) + b"\n")

    def close(self) -> dict[str, str]:
        """Every file closed, the index written; ``{file: sha256}``."""
        from pipeline.dataset.index.parquet import write_parquet

        out = {}
        for name, f in self.files.items():
            f.close()
            out[name] = self.digests[name].hexdigest()
        with open(os.path.join(self.out, "index.parquet"), "wb") as fh:
            _, _, out["index.parquet"] = write_parquet(self.index_rows, fh)
        return out

    def run(self, paths: Sequence[tuple[str, str]]) -> tuple[float, float]:
        """Wall and CPU seconds of one pass over ``paths`` (``(path on disk, uri)``), outputs
        written and closed (the interpreter's collector as ``normalize``'s workers set it:
        ``pipeline.runtime.memory.tune_gc``)."""
        import gc

        from pipeline.runtime.memory import tune_gc

        saved = gc.get_threshold()
        tune_gc()
        gc.collect()
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            for path, uri in paths:
                self.one(path, uri)
            self.close()
        finally:
            gc.set_threshold(*saved)
        return time.perf_counter() - t0, time.process_time() - c0


def outputs_loop(corpus: str, files: Sequence[File], out: str) -> tuple[float, float]:
    """Wall and CPU seconds of ``OutputsLoop`` over ``files`` of ``corpus`` (read from disk),
    after an unmeasured pass over 200 of them (imports, the codec modules' first use)."""
    import shutil

    paths = [(os.path.join(corpus, f.path), f.path) for f in files]
    OutputsLoop(out).run(paths[:200])
    try:
        return OutputsLoop(out).run(paths)
    finally:
        shutil.rmtree(out, ignore_errors=True)


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


def _cpu(pid: int, ticks: int) -> float | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    fields = stat[stat.rindex(b")") + 2 :].split()  # utime, stime: fields 14 and 15 of stat
    return (int(fields[11]) + int(fields[12])) / ticks


class _Sampler(threading.Thread):
    def __init__(self, pid: int, every: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.pid, self.every, self.peak = pid, every, 0
        #: the largest RSS each process of the tree reached (the job is ``pid``, the rest workers)
        self.per_process: dict[int, int] = {}
        #: the CPU seconds each process of the tree had when last seen
        self.cpu: dict[int, float] = {}
        self.done = threading.Event()

    def run(self) -> None:
        ticks = os.sysconf("SC_CLK_TCK")
        while not self.done.is_set():
            total = 0
            for p in _tree(self.pid):
                r = _rss(p)
                total += r
                if r > self.per_process.get(p, 0):
                    self.per_process[p] = r
                c = _cpu(p, ticks)
                if c is not None:
                    self.cpu[p] = c
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
    # the workers are started through a shell (``/bin/sh -c python ...``): count processes that used
    # CPU, not the shells
    workers_cpu = sorted((c for p, c in sampler.cpu.items() if p != proc.pid and c >= 0.05), reverse=True)
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
        job_cpu=sampler.cpu.get(proc.pid, 0.0),
        worker_cpu=workers_cpu,
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


def profile(
    corpus: str, out: str, raw: str, *, mode: str = "multi_processing", workers: int = 2
) -> str | None:
    """``normalize --fidelity off`` over ``corpus`` under ``py-spy record --subprocesses`` (the
    ``bench`` extra), its raw samples written to ``raw``; None when py-spy is missing or may not
    trace (a container without ptrace). py-spy slows what it samples: the shares of its samples
    are what count (``bench.split``), scaled to the CPU of a run without it."""
    import shutil

    spy = os.path.join(os.path.dirname(sys.executable), "py-spy")
    if not os.path.exists(spy):
        spy = shutil.which("py-spy") or ""
    if not spy:
        return None
    shutil.rmtree(out, ignore_errors=True)
    argv = [spy, "record", "--subprocesses", "--format", "raw", "-r", "50", "-o", raw, "--"]
    argv += [sys.executable, "-m", "jobs.normalize", "--input", corpus, "--output", out, "--fidelity=off"]
    argv += [f"--direct_running_mode={mode}"]
    if mode == "multi_processing":
        argv.append(f"--direct_num_workers={workers}")
    proc = subprocess.run(argv, capture_output=True)
    shutil.rmtree(out, ignore_errors=True)
    return raw if proc.returncode == 0 and os.path.exists(raw) else None


__all__ = [
    "OutputsLoop",
    "PipelineRun",
    "learn_sample",
    "normalize",
    "output_bytes",
    "outputs_loop",
    "profile",
    "same_work",
    "same_work_loop",
    "startup",
    "timed_loop",
    "wall_loop",
]
