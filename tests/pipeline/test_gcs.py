"""The pipeline against a GCS API: gcp-storage-emulator on 127.0.0.1 (the ``gcs_emulator`` fixture,
tests/pipeline/conftest.py and gcs_emulator.py), gcsfs pointed at it with anonymous credentials.
Inputs come from one bucket (plain objects and a zip chain), every output goes to another.

What GCS does differently from S3 and a disk, and where it is met here: no rename (a move is a
rewrite then a delete), listings shaped by prefixes (``ls`` per folder, folder placeholders),
deletes that answer 404 when retried, 429/503 retried by gcsfs (tests/pipeline/test_faults.py).

The runs are few and shared (module-scoped): each test asserts on the runs it needs, made once.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest

from .conftest import EXPECTED, PINNED, Run, SharedRuns, normalize, same_outputs, write_inputs

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("gcs")]  # runs the pipeline; shares runs

IN, OUT = "bunzai-in", "bunzai-out"
ARGS = ("--export", "vaud-json", "--fidelity", "native")


def _options(endpoint: str) -> dict[str, Any]:
    from .gcs_emulator import options

    return options(endpoint)


def empty_store(emulator: Any, *buckets: str) -> Any:
    """``buckets`` (default: the two of this module) made anew, empty, on the session's emulator
    (other modules' buckets are left alone: their tests may share this worker), and a fresh gcsfs
    instance on it (no cached listing survives from an earlier test)."""
    import gcsfs.core

    gcsfs.core.GCSFileSystem.clear_instance_cache()
    fs = gcsfs.core.GCSFileSystem(**_options(emulator.url))
    for bucket in buckets or (IN, OUT):
        if fs.exists(bucket):
            fs.rm(bucket, recursive=True)
        fs.mkdir(bucket)
    fs.invalidate_cache()
    return fs


def upload(fs: Any, folder: Path, prefix: str) -> None:
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            fs.pipe_file(f"{prefix}/{p.relative_to(folder).as_posix()}", p.read_bytes())


def objects(fs: Any, prefix: str) -> dict[str, bytes]:
    """Every object under ``prefix`` (relative name -> bytes), read from the store as it is now."""
    fs.invalidate_cache()
    return {p[len(prefix) + 1 :]: fs.cat_file(p) for p in sorted(fs.find(prefix))}


@dataclass
class Night:
    """The module's store and runs: inputs uploaded once, each run made by the first test that
    needs it."""

    fs: Any
    endpoint: str
    local_inputs: Path
    tmp: Path
    runs: dict[str, Run] = field(default_factory=dict)

    @property
    def opts(self) -> dict[str, Any]:
        return _options(self.endpoint)

    def dataset(self, name: str) -> str:
        return f"gs://{OUT}/{name}"

    @property
    def opts_json(self) -> str:
        return orjson.dumps(self.opts).decode()

    @property
    def args(self) -> tuple[str, ...]:
        return ("--input", f"gs://{IN}/dump", "--input", f"zip://**::gs://{IN}/archive/dump.zip", *ARGS)

    def run(self, name: str, *extra: str, output: str | None = None) -> Run:
        if name not in self.runs:
            out = output or f"gs://{OUT}/{name}"
            self.runs[name] = normalize(*self.args, *extra, "--output", out, storage_options=self.opts)
        return self.runs[name]


@pytest.fixture(scope="module")
def night(gcs_emulator: Any, shared: SharedRuns, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Night]:
    from .gcs_emulator import core_gcsfs

    fs = empty_store(gcs_emulator)
    tmp = tmp_path_factory.mktemp("gcs")
    write_inputs(tmp / "in")
    upload(fs, tmp / "in", f"{IN}/dump")
    fs.pipe_file(f"{IN}/dump/cards/", b"")  # a folder placeholder, as the console's "create folder"
    fs.pipe_file(f"{IN}/archive/dump.zip", shared.zip.read_bytes())
    with core_gcsfs():
        yield Night(fs, gcs_emulator.url, tmp / "in", tmp)


def test_gcs_to_gcs(night: Night) -> None:
    inputs_before = objects(night.fs, IN)
    run = night.run("night1")
    m = run.manifest
    assert m["balance"]["ok"] and m["inputs"]["listed"] == 2 * len(EXPECTED)  # the folder, the zip

    uris = {r["uri"] for r in run.lines("inventory")}
    assert f"gs://{IN}/dump/cards/mira.vaud.json" in uris
    assert f"gs://{IN}/dump/cards" not in uris  # the placeholder is a folder, not an input
    assert any(u.startswith("zip://") and u.endswith(f"::gs://{IN}/archive/dump.zip") for u in uris)
    assert all(r["etag"] for r in run.lines("inventory"))  # GCS checksums and zip CRCs

    # inputs untouched; every output in the other bucket, under the output prefix, none staged
    assert objects(night.fs, IN) == inputs_before
    written = objects(night.fs, f"{OUT}/night1")
    assert "manifest.json" in written and not any(".bunzai-staging" in k for k in written)
    assert any(k.startswith("exports/vaud-json/") for k in written)
    assert any(k.startswith("fidelity/rows-") for k in written) and "fidelity/report.json" in written


def test_gcs_output_is_byte_identical_to_a_local_output(night: Night) -> None:
    """The same gs:// inputs written to a local folder: every file the same, byte for byte (the
    commit by copy + delete leaves what the commit by rename leaves)."""
    local = night.run("local", output=str(night.tmp / "local"))
    local.storage_options = {}
    same_outputs(night.run("night1"), local)


def test_gcs_inputs_give_the_outputs_of_local_inputs(night: Night) -> None:
    """The same inputs read from the disk instead: the exports and canonical lines are the same
    bytes once each input's ``source.uri`` (where the run read it) is mapped."""
    zpath = night.tmp / "dump.zip"
    zpath.write_bytes(night.fs.cat_file(f"{IN}/archive/dump.zip"))
    from_disk = normalize(
        "--input", str(night.local_inputs), "--input", f"zip://**::{zpath}", *ARGS,
        "--output", str(night.tmp / "from-disk"),
    )  # fmt: skip
    roots = {
        f"gs://{IN}/dump".encode(): str(night.local_inputs).encode(),
        f"gs://{IN}/archive/dump.zip".encode(): str(zpath).encode(),
    }

    def mapped(data: bytes) -> bytes:
        for a, b in roots.items():
            data = data.replace(a, b)
        return data

    gcs, disk = night.run("night1").files(), from_disk.files()
    for top in ("blobs/", "exports/"):
        mine = {k: mapped(v) for k, v in gcs.items() if k.startswith(top)}
        assert mine == {k: v for k, v in disk.items() if k.startswith(top)}, top
        assert mine or top == "blobs/"  # the hand-made inputs hold no picture

    def lines(files: dict[str, bytes]) -> list[bytes]:
        return sorted(
            ln for rel, data in files.items() if rel.startswith("canonical/") for ln in data.splitlines()
        )

    assert [mapped(ln) for ln in lines(gcs)] == lines(disk)


def test_gcs_since_and_audit_against(night: Night, capsys: pytest.CaptureFixture[str]) -> None:
    """The next night through the job's own entry: ``--since`` and ``--audit-against`` both read
    the previous run from gs://; one object changed, one added, every other one not read again."""
    from jobs.normalize import run as run_job

    night.run("night1")
    quiet = f"{IN}/dump/books/quiet.vaud.json"
    was = night.fs.cat_file(quiet)
    night.fs.pipe_file(quiet, (night.local_inputs / "cards/mira.vaud.json").read_bytes())
    night.fs.pipe_file(f"{IN}/dump/new/noise.txt", b"not a card")
    argv = [*PINNED, *night.args, "--output", f"gs://{OUT}/night2", "--storage-options", night.opts_json]
    try:
        rc = run_job(
            [*argv, "--since", f"gs://{OUT}/night1/manifest.json", "--audit-against", f"gs://{OUT}/night1"]
        )
    finally:  # the inputs as the other tests' runs read them
        night.fs.pipe_file(quiet, was)
        night.fs.rm_file(f"{IN}/dump/new/noise.txt")
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "audit" in out.lower() and f"gs://{OUT}/night1" in out
    m = orjson.loads(night.fs.cat_file(f"{OUT}/night2/manifest.json"))
    assert m["since"]["honoured"] and m["balance"]["ok"]
    assert (m["inputs"]["new"], m["inputs"]["changed"]) == (1, 1)
    assert m["inputs"]["unchanged"] == m["inputs"]["listed"] - 2
    exports = [k for k in objects(night.fs, f"{OUT}/night2") if k.startswith("exports/")]
    assert len(exports) == m["counts"]["exports"]["total"] > 0


class Killed(Exception):
    pass


def _failing_writes(monkeypatch: pytest.MonkeyPatch, after: int, exc: type[BaseException]) -> dict[str, int]:
    """Every output write of the pipeline counted; the ``after``-th raises ``exc``."""
    import pipeline.dataset.shards
    import pipeline.export.files
    import pipeline.normalize.fidelity_report
    import pipeline.runtime.storage

    calls = {"n": 0}
    real = pipeline.runtime.storage.write_bytes

    def write(fs: Any, path: str, data: bytes) -> None:
        calls["n"] += 1
        if calls["n"] == after:
            raise exc(f"lost at write {after}: {path}")
        real(fs, path, data)

    for mod in (
        pipeline.runtime.storage,
        pipeline.export.files,
        pipeline.dataset.shards,
        pipeline.normalize.fidelity_report,
    ):
        if hasattr(mod, "write_bytes"):
            monkeypatch.setattr(mod, "write_bytes", write)
    return calls


def test_gcs_failed_and_interrupted_runs_keep_the_previous_dataset(
    night: Night, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder holding a committed run (night1, copied server-side): a run that fails half-way
    (exit 4) leaves it byte for byte, staging removed; a run whose process is gone half-way
    (nothing cleans up) leaves it too, but for its staging folder; the re-run into the folder
    then leaves exactly night1's files."""
    from jobs.normalize import run as run_job

    first = night.run("night1")
    folder = f"{OUT}/failing"
    night.fs.copy(f"{OUT}/night1", folder, recursive=True)
    before = objects(night.fs, folder)
    assert before == objects(night.fs, f"{OUT}/night1")

    argv = [*PINNED, "-q", *night.args, "--output", f"gs://{folder}", "--storage-options", night.opts_json]
    with monkeypatch.context() as mp:
        calls = _failing_writes(mp, 5, OSError)
        assert run_job(argv) == 4
    assert calls["n"] >= 5
    assert "nothing was committed" in capsys.readouterr().err
    assert objects(night.fs, folder) == before  # nothing staged is left either

    with monkeypatch.context() as mp:
        calls = _failing_writes(mp, 12, Killed)
        with pytest.raises(Exception, match="lost at write 12"):
            normalize(*night.args, "--output", f"gs://{folder}", storage_options=night.opts)
    after = objects(night.fs, folder)
    assert any(k.startswith(".bunzai-staging/") for k in after), "the interruption left nothing to repair"
    assert {k: v for k, v in after.items() if not k.startswith(".bunzai-staging/")} == before

    rerun = normalize(*night.args, "--output", f"gs://{folder}", storage_options=night.opts)
    assert not any(k.startswith(".bunzai-staging/") for k in objects(night.fs, folder))
    same_outputs(first, rerun)


def test_gcs_export(night: Night) -> None:
    """``bunzai export`` from a gs:// dataset to a gs:// folder: the files of an export of the same
    dataset to the disk, byte for byte; exporting again into the folder leaves the same files."""
    from jobs.export import run as export_job

    night.run("night1")
    args = [night.dataset("night1"), "--to", "sillytavern,vaud-json", "--storage-options", night.opts_json]
    local = night.tmp / "export"
    assert export_job([*PINNED, "-q", *args, "-o", str(local)]) == 0
    on_disk = {
        p.relative_to(local).as_posix(): p.read_bytes() for p in sorted(local.rglob("*")) if p.is_file()
    }
    for again in (False, True):
        assert export_job([*PINNED, "-q", *args, "-o", f"gs://{OUT}/export"]) == 0
        on_gcs = objects(night.fs, f"{OUT}/export")
        assert sorted(on_gcs) == sorted(on_disk), again
        assert {"manifest.json", "sillytavern", "vaud-json"} <= {k.split("/")[0] for k in on_gcs}
        for rel in on_gcs:
            if rel != "manifest.json":
                assert on_gcs[rel] == on_disk[rel], rel
        manifests = [orjson.loads(m) for m in (on_gcs["manifest.json"], on_disk["manifest.json"])]
        for m in manifests:
            m["options"].pop("output")
        assert manifests[0] == manifests[1]


def test_gcs_audit(
    night: Night, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``bunzai audit`` over gs:// runs and baselines, pointed at the store as a user would (fsspec's
    per-protocol defaults: ``FSSPEC_GS_*`` variables or its config file): a run against itself
    passes, a baseline that kept more fails with exit 1, a baseline that is not there is exit 3."""
    import fsspec.config

    from bunzai_codecs.cli import main as bunzai

    night.run("night1")
    monkeypatch.setitem(fsspec.config.conf, "gs", night.opts)
    run = f"gs://{OUT}/night1"
    tsv = tmp_path / "baseline.tsv"
    assert bunzai(["audit", "--report", run, "--baseline", str(tsv), "--write-baseline"]) == 0
    text = tsv.read_text()
    night.fs.pipe_file(f"{OUT}/baselines/night1.tsv", text.encode())
    # the baseline says the input that no format recognises decoded: the run now "rejects" it
    line = next(ln for ln in text.splitlines() if ln.startswith("input\t") and "/broken/half.json\t" in ln)
    key, sha = line.split("\t")[1:3]
    doctored = text.replace(
        line, f"input\t{key}\t{sha}\tdecoded\tvaud-json\tnative=lossless\tstability=lossless"
    )
    night.fs.pipe_file(f"{OUT}/baselines/doctored.tsv", doctored.encode())
    capsys.readouterr()

    def audit(report: str, baseline: str) -> int:
        return bunzai(["audit", "--report", report, "--baseline", baseline])

    assert audit(run, run) == 0
    assert audit(f"{run}/fidelity/report.json", f"gs://{OUT}/baselines/night1.tsv") == 0
    assert f"no regressions against gs://{OUT}/baselines/night1.tsv" in capsys.readouterr().out
    assert audit(run, f"gs://{OUT}/baselines/doctored.tsv") == 1
    said = capsys.readouterr()
    assert key in said.out + said.err
    assert audit(run, f"gs://{OUT}/nothing-here") == 3
