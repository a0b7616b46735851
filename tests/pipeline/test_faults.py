"""Faults: a flaky store, an interrupted run, and the hostile-input set, through the whole pipeline.

- S3 through a loopback proxy in front of moto (tests/pipeline/faulty_proxy.py) that answers some
  requests with 503 SlowDown, drops some connections before answering and some after the store did
  the work: the run completes, balances, and writes exactly what a run without faults writes; the
  storage options' secret reaches no output and no log line.
- A run interrupted part-way (a write fails; the process is gone) followed by a re-run into the same
  folder gives the outputs of an uninterrupted run, byte for byte.
- Every hostile input of tests/hostile ends as an entity or a reject, and the manifest balances.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import pytest

from tests.hostile.generate import cases

from . import test_s3
from .conftest import Run, SharedRuns, normalize, same_outputs, write_inputs
from .faulty_proxy import FaultyProxy, every
from .test_normalize import SAMPLES_EXPORT_ALL, check_accounting
from .test_s3 import IN, OUT, SECRET, _keys, _options, _upload

s3 = test_s3.s3  # the S3 test's fixture: the session's moto server (``endpoint``), emptied

pytestmark = pytest.mark.slow  # runs the pipeline


# -- a flaky store ------------------------------------------------------------------------------------


def test_s3_with_transient_faults_loses_nothing(
    s3: Any, endpoint: str, tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    import botocore.retryhandler

    # botocore waits rand() * 2**(attempt - 1) seconds before each retry: a hundredth of that here.
    # Every retry still happens (the claim is that they lose nothing, not how long they wait); the
    # delays are recorded so the test sees that botocore's retries, not only s3fs's, were taken.
    delays: list[float] = []
    real_delay = botocore.retryhandler.delay_exponential

    def short_delay(**kwargs: Any) -> float:
        delays.append(real_delay(**kwargs) / 100)
        return delays[-1]

    monkeypatch.setattr(botocore.retryhandler, "delay_exponential", short_delay)
    caplog.set_level(logging.DEBUG)
    write_inputs(tmp_path / "in")
    _upload(s3, tmp_path / "in", "dump")
    args = ("--input", f"s3://{IN}/dump", "--export", "vaud-json,sillytavern")
    clean = normalize(*args, "--output", f"s3://{OUT}/clean", storage_options=_options(endpoint))

    # every 5th request a 503, every 7th connection dropped unanswered, every 11th dropped after the
    # store did the work (a PUT that happened but whose answer never came)
    proxy = FaultyProxy(endpoint, every((5, 1, "503"), (7, 3, "drop"), (11, 5, "drop-after"))).start()
    try:
        faulty = normalize(*args, "--output", f"s3://{OUT}/faulty", storage_options=_options(proxy.url))
    finally:
        proxy.stop()
    seen = proxy.actions()
    assert seen.get("503", 0) >= 3 and seen.get("drop", 0) >= 2 and seen.get("drop-after", 0) >= 1, seen
    assert delays, "no retry went through botocore's back-off"

    faulty.storage_options = _options(endpoint)  # read the results back without the proxy
    assert faulty.manifest["balance"]["ok"], faulty.manifest["balance"]
    same_outputs(clean, faulty)
    assert not any(".bunzai-staging" in k for k in _keys(s3, OUT))

    # the secret: in no output of either run, in no log line (retries and errors included)
    for k in _keys(s3, OUT):
        assert SECRET.encode() not in s3.get_object(Bucket=OUT, Key=k)["Body"].read(), k
    assert SECRET not in caplog.text


# -- an interrupted run ------------------------------------------------------------------------------


class Interrupted(Exception):
    pass


@pytest.mark.parametrize("after", [3, 12])
def test_an_interrupted_run_then_a_rerun_equals_an_uninterrupted_run(
    shared: SharedRuns, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, after: int
) -> None:
    """The first run dies at its ``after``-th output write (as a killed worker would: what was
    written stays, staging included); the re-run into the same folder must leave exactly what a
    run that was never interrupted leaves."""
    import pipeline.dataset.shards
    import pipeline.export.files
    import pipeline.normalize.fidelity_report
    import pipeline.runtime.storage

    args = ("--input", str(shared.inputs), *SAMPLES_EXPORT_ALL)
    reference = shared.run(*SAMPLES_EXPORT_ALL)  # the same inputs, never interrupted

    calls = {"n": 0}
    real_write = pipeline.runtime.storage.write_bytes

    def dying_write(fs: Any, path: str, data: bytes) -> None:
        calls["n"] += 1
        if calls["n"] == after:
            raise Interrupted(f"worker lost at write {after}: {path}")
        real_write(fs, path, data)

    for mod in (
        pipeline.runtime.storage,
        pipeline.export.files,
        pipeline.dataset.shards,
        pipeline.normalize.fidelity_report,
    ):
        if hasattr(mod, "write_bytes"):
            monkeypatch.setattr(mod, "write_bytes", dying_write)
    out = tmp_path / "interrupted"
    with pytest.raises(Exception, match="worker lost"):
        normalize(*args, "--output", str(out))
    assert calls["n"] >= after
    assert out.exists() and any(out.rglob("*")), "the interruption left nothing to recover from"
    monkeypatch.undo()

    rerun = normalize(*args, "--output", str(out))
    assert rerun.manifest["balance"]["ok"]
    same_outputs(reference, rerun)


@pytest.mark.parametrize("after", [2, 9])
def test_sigterm_during_a_run_removes_it_and_keeps_the_last_good_result(
    shared: SharedRuns,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    after: int,
) -> None:
    """A nightly run stopped by its scheduler (SIGTERM) at its ``after``-th output write: exit 143,
    one line saying nothing was committed, no ``.bunzai-staging`` left, and last night's output
    byte for byte as it was."""
    import signal

    import pipeline.dataset.shards
    import pipeline.export.files
    import pipeline.normalize.fidelity_report
    import pipeline.runtime.storage
    from jobs.normalize import run

    from .conftest import PINNED, copy_output

    out = copy_output(shared.run(), tmp_path / "out")
    before = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    calls = {"n": 0}
    real_write = pipeline.runtime.storage.write_bytes

    def write_then_term(fs: Any, path: str, data: bytes) -> None:
        calls["n"] += 1
        if calls["n"] == after:
            signal.raise_signal(signal.SIGTERM)
        real_write(fs, path, data)

    for mod in (
        pipeline.runtime.storage,
        pipeline.export.files,
        pipeline.dataset.shards,
        pipeline.normalize.fidelity_report,
    ):
        if hasattr(mod, "write_bytes"):
            monkeypatch.setattr(mod, "write_bytes", write_then_term)
    rc = run([*PINNED, "--input", str(shared.inputs), "--output", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert calls["n"] >= after
    assert rc == 143, err
    assert err.strip().splitlines()[-1] == (
        f"bunzai normalize: error: interrupted; nothing was committed: {out} is as it was"
    )
    after_run = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    assert after_run == before
    assert not any(p.name.startswith(".bunzai") for p in out.iterdir())


# -- the hostile set ---------------------------------------------------------------------------------


def _hostile_folder(folder: Path) -> dict[str, str]:
    """One file per hostile case that the pipeline can take in reasonable time: every container
    case and a slice of each shape category. Returns path -> case name."""
    picked: dict[str, str] = {}
    per_shape: dict[str, int] = {}
    for i, c in enumerate(cases()):
        if c.category.startswith("shape:"):
            per_shape[c.category] = per_shape.get(c.category, 0) + 1
            if per_shape[c.category] > 12:
                continue
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", f"{i:04d}-{c.category}-{c.filename}")
        p = folder / c.category.replace(":", "_") / safe
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(c.data)
        picked[str(p)] = f"{c.category}/{c.name}"
    return picked


def test_the_hostile_set_through_the_pipeline(tmp_path: Path) -> None:
    picked = _hostile_folder(tmp_path / "hostile")
    run: Run = normalize(
        "--input", str(tmp_path / "hostile"), "--output", str(tmp_path / "out"), "--export", "vaud-json"
    )
    check_accounting(run, set(picked))
    rejected = {r["uri"]: r for r in run.lines("rejects") if r["stage"] != "list"}
    assert all(r["error"] != "InternalError" for r in rejected.values()), [
        (picked[u], r["message"]) for u, r in rejected.items() if r["error"] == "InternalError"
    ]
    by_name = {v: k for k, v in picked.items()}
    for name in [
        "zip/high-ratio bomb (200 MiB of zeros)",
        "png/zTXt bomb",
        "risup/gzip bomb (120 MiB of zeros)",
        "risum/asset-count mismatch: table 2, blocks 1",
        "byaf/manifest names a missing character file",
    ]:
        assert by_name[name] in rejected, name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hostile", "out"]  # nothing written elsewhere


# -- a flaky GCS ----------------------------------------------------------------------------------------


def test_gcs_with_transient_faults_loses_nothing(
    gcs_emulator: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same through the GCS emulator, with GCS's own answers: 503 and 429 (which gcsfs
    retries), slow answers, connections dropped before and after the store did the work (a delete
    retried after its answer was lost is answered 404: the file is gone all the same)."""
    import asyncio

    import gcsfs.retry

    from .faulty_proxy import GCS_BUSY
    from .gcs_emulator import core_gcsfs, options
    from .test_gcs import empty_store, objects, upload

    # gcsfs waits rand() + 2**(attempt - 1) seconds before each retry: a hundredth of that here,
    # recorded so the test sees its retries were taken
    delays: list[float] = []

    class Clock:
        @staticmethod
        async def sleep(seconds: float) -> None:
            delays.append(seconds / 100)
            await asyncio.sleep(seconds / 100)

    monkeypatch.setattr(gcsfs.retry, "asyncio", Clock)
    gin, gout = "bunzai-faults-in", "bunzai-faults-out"
    fs = empty_store(gcs_emulator, gin, gout)
    write_inputs(tmp_path / "in")
    upload(fs, tmp_path / "in", f"{gin}/dump")
    args = ("--input", f"gs://{gin}/dump", "--export", "vaud-json,sillytavern")
    plan = every((5, 1, "503"), (7, 3, "drop"), (11, 5, "drop-after"), (13, 2, "429"), (17, 4, "slow"))
    with core_gcsfs():
        clean = normalize(*args, "--output", f"gs://{gout}/clean", storage_options=options(gcs_emulator.url))
        proxy = FaultyProxy(gcs_emulator.url, plan, busy=GCS_BUSY, delay=0.2).start()
        try:
            faulty = normalize(*args, "--output", f"gs://{gout}/faulty", storage_options=options(proxy.url))
        finally:
            proxy.stop()
        seen = proxy.actions()
        for action, least in {"503": 3, "429": 2, "drop": 2, "drop-after": 1, "slow": 1}.items():
            assert seen.get(action, 0) >= least, seen
        late = [d for d in proxy.log if d.action == "drop-after" and d.method == "DELETE"]
        assert late, "no delete answered late"
        assert delays, "no retry went through gcsfs's back-off"

        faulty.storage_options = options(gcs_emulator.url)  # read the results back without the proxy
        assert faulty.manifest["balance"]["ok"], faulty.manifest["balance"]
        same_outputs(clean, faulty)
        assert not any(".bunzai-staging" in k for k in objects(fs, gout))
