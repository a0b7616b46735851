"""A run replaces or prunes a previous run's files only once it is complete and balanced.

Each way a run can stop — an input that does not exist or matches nothing, a listing that fails
(the whole input, or a folder part-way), an export that cannot be written, a full disk, a run that
does not balance, a process killed mid-run — is tried against an output folder that holds a
complete earlier run, and every file of that folder is compared, by sha256, before and after.
Failures are one line on stderr with the documented exit code (jobs/normalize.py, README.md).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

import jobs.normalize
import pipeline.normalize.per_input
from bunzai_codecs.exitcodes import Exit
from jobs.normalize import run as run_job
from pipeline.dataset.commit import STAGING

from .conftest import PINNED, ROOT, SharedRuns, copy_output, normalize, same_outputs
from .faulty_fs import disk_full, faults

pytestmark = pytest.mark.slow  # runs the pipeline

#: a quick but complete run: shards of every dataset, exports, the fidelity report
ARGS = ("--export", "vaud-json,sillytavern", "--fidelity", "native")


def digests(folder: Path) -> dict[str, str]:
    """Every file below ``folder`` (hidden ones too) -> its sha256."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def previous(shared: SharedRuns, tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """Inputs, and an output folder holding a complete run (with its digests): copies of the
    session's shared inputs and of its run over them, for the test to change."""
    src = tmp_path / "in"
    shutil.copytree(shared.inputs, src)
    first = shared.run(*ARGS)
    assert first.manifest["balance"]["ok"] and first.manifest["counts"]["exports"]["total"] > 0
    out = copy_output(first, tmp_path / "out")
    before = digests(out)
    assert "manifest.json" in before and not any(k.startswith(STAGING) for k in before)
    return src, out, before


def job(*args: str) -> int:
    return run_job([*PINNED, "--quiet", *args])


def one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# -- inputs that list nothing -------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["missing folder", "typo", "glob matching nothing", "empty folder"])
def test_an_input_that_lists_nothing_fails_and_changes_nothing(
    previous: tuple[Path, Path, dict[str, str]], case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    src, out, before = previous
    (src.parent / "empty").mkdir()
    bad = {
        "missing folder": str(src.parent / "cards-typo"),
        "typo": str(src) + "x/",
        "glob matching nothing": str(src / "*.png"),
        "empty folder": str(src.parent / "empty"),
    }[case]
    assert job("--input", bad, "--output", str(out), *ARGS) == 3
    line = one_line(capsys.readouterr().err)
    assert bad in line and ("does not exist" in line or "matched no file" in line), line
    assert digests(out) == before


def test_the_pipeline_refuses_an_empty_input_without_the_check_before_it(
    previous: tuple[Path, Path, dict[str, str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The job checks each input before it starts the pipeline; the pipeline's own verdict is what
    holds on Dataflow (and if an input vanishes in between): with the first check skipped, the run
    is still refused, and nothing is left of it."""
    src, out, before = previous
    monkeypatch.setattr(jobs.normalize, "check_inputs", lambda cfg: None)
    missing = str(tmp_path / "gone")
    assert job("--input", str(src), "--input", missing, "--output", str(out), *ARGS) == 3
    line = one_line(capsys.readouterr().err)
    assert f"{missing} does not exist" in line and "is as it was" in line
    assert digests(out) == before

    fresh = tmp_path / "fresh"  # an output folder the run created is removed with it
    assert job("--input", missing, "--output", str(fresh)) == 3
    capsys.readouterr()
    assert not fresh.exists()


def test_allow_empty_runs_with_what_there_is(
    previous: tuple[Path, Path, dict[str, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src, out, _ = previous
    missing = str(tmp_path / "not-yet")
    assert job("--input", str(src), "--input", missing, "--output", str(out), *ARGS, "--allow-empty") == 0
    assert f"warning: {missing} matched no file" in capsys.readouterr().out
    m = orjson.loads((out / "manifest.json").read_bytes())
    assert m["options"]["allowEmpty"] is True and m["commit"] == {"ok": True}
    (tmp_path / "empty").mkdir()
    assert job("--input", str(tmp_path / "empty"), "--output", str(out), "--allow-empty") == 0
    m = orjson.loads((out / "manifest.json").read_bytes())
    assert m["inputs"]["listed"] == 0 and m["balance"]["ok"]
    assert not (out / "exports").exists()  # an empty run, asked for: the previous results go


# -- listings that fail -------------------------------------------------------------------------------


def test_an_input_whose_listing_is_refused_fails_and_changes_nothing(
    previous: tuple[Path, Path, dict[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """A store that refuses to list (credentials, permissions): exit 3, named, nothing changed."""
    src, out, before = previous
    url = f"faulty://{src}"
    denied = lambda op, path: PermissionError("Access Denied") if op == "list" else None  # noqa: E731
    with faults(denied) as seen:
        assert job("--input", url, "--output", str(out), *ARGS) == 3
    assert seen
    line = one_line(capsys.readouterr().err)
    assert f"cannot list {url}: PermissionError: Access Denied" in line
    assert digests(out) == before


def test_a_listing_that_fails_part_way_fails_the_run(
    previous: tuple[Path, Path, dict[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """One folder of the tree cannot be listed: the first files are found (the check before the
    pipeline passes), the pipeline's listing fails there, and the run is refused: committing it
    would prune the results of every file it could not see."""
    src, out, before = previous
    nested = str(src / "cards" / "nested")
    fault = lambda op, path: PermissionError(13, "Permission denied", path) if path == nested else None  # noqa: E731
    with faults(fault) as seen:
        assert job("--input", f"faulty://{src}", "--output", str(out), *ARGS) == 3
    assert ("list", nested) in seen
    line = one_line(capsys.readouterr().err)
    assert f"cannot list {nested}: PermissionError" in line, line
    assert digests(out) == before


def _vanishing(folder: str, style: str) -> Any:
    """A fault that deletes ``folder`` as the listing reaches it: the disk then answers as a local
    disk does (``FileNotFoundError`` naming the folder), or as an object store may, with an error
    that names no file (``style``)."""

    def fault(op: str, path: str) -> BaseException | None:
        if op != "list" or path != folder:
            return None
        shutil.rmtree(folder, ignore_errors=True)
        return None if style == "local" else FileNotFoundError(f"{path} not found")

    return fault


@pytest.mark.parametrize("style", ["local", "no file named"])
def test_a_folder_that_vanishes_while_listed_fails_the_run(
    previous: tuple[Path, Path, dict[str, str]], capsys: pytest.CaptureFixture[str], style: str
) -> None:
    """Issue 37, behaviour 3: a sub-folder deleted while the inputs are listed is a listing that
    failed, not a missing input: the run does not know what it missed, so it must not commit (and
    prune the previous results of every file that folder held)."""
    src, out, before = previous
    nested = str(src / "cards" / "nested")
    with faults(_vanishing(nested, style)) as seen:
        assert job("--input", f"faulty://{src}", "--output", str(out), *ARGS) == 3
    assert ("list", nested) in seen and not Path(nested).exists()
    line = one_line(capsys.readouterr().err)
    assert f"cannot list {nested}: FileNotFoundError" in line, line
    assert digests(out) == before


@pytest.mark.parametrize("style", ["local", "no file named"])
def test_the_only_folder_of_an_input_vanishing_is_no_missing_input(
    previous: tuple[Path, Path, dict[str, str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    style: str,
) -> None:
    """The input's one sub-folder vanishes while the pipeline lists it, so the input lists no file:
    that is still a listing that failed (named), not an input that does not exist, which
    --allow-empty would run with and commit, pruning every previous result. (The job's check
    before the pipeline is skipped: the folder vanishes during the pipeline's own listing.)"""
    src, out, before = previous
    monkeypatch.setattr(jobs.normalize, "check_inputs", lambda cfg: None)
    only = tmp_path / "only-in"
    shutil.copytree(src, only / "all")
    with faults(_vanishing(str(only / "all"), style)):
        assert job("--input", f"faulty://{only}", "--output", str(out), *ARGS, "--allow-empty") == 3
    line = one_line(capsys.readouterr().err)
    assert f"cannot list {only / 'all'}: FileNotFoundError" in line, line
    assert "does not exist" not in line
    assert digests(out) == before


# -- outputs that cannot be written --------------------------------------------------------------------


def test_an_unwritable_export_fails_and_changes_nothing(
    previous: tuple[Path, Path, dict[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    src, out, before = previous
    fault = (  # noqa: E731
        lambda op, path: (
            PermissionError(13, "Permission denied", path) if op == "write" and "/exports/" in path else None
        )
    )
    with faults(fault) as seen:
        assert job("--input", str(src), "--output", f"faulty://{out}", *ARGS) == 4
    assert any(op == "write" and "/exports/" in p for op, p in seen)
    line = one_line(capsys.readouterr().err)
    assert "the run failed: PermissionError" in line and "is as it was" in line, line
    assert digests(out) == before


def test_a_full_disk_fails_and_changes_nothing(
    previous: tuple[Path, Path, dict[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    src, out, before = previous
    writes = len(before)  # a run over these inputs writes (at least) the files the previous one left
    assert writes > 10
    with faults(disk_full(writes // 2)):
        assert job("--input", str(src), "--output", f"faulty://{out}", *ARGS) == 4
    line = one_line(capsys.readouterr().err)
    assert "No space left on device" in line, line
    assert digests(out) == before


def test_the_output_folder_must_be_a_writable_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a_file = tmp_path / "file"
    a_file.write_bytes(b"x")
    assert job("--output", str(a_file)) == 4
    assert "is a file, not a folder" in one_line(capsys.readouterr().err)
    assert a_file.read_bytes() == b"x"
    assert job("--output", "/proc/bunzai-out") == 4
    assert "cannot write to --output /proc/bunzai-out" in one_line(capsys.readouterr().err)


def test_a_run_that_does_not_balance_is_not_committed(
    previous: tuple[Path, Path, dict[str, str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    src, out, before = previous
    real = pipeline.normalize.per_input._entity_sources

    def lose_one(v: Any) -> set[str]:  # a bug that loses an input's entities from the balance
        return set() if v.uri.endswith("rules.vaud.json") else real(v)

    monkeypatch.setattr(pipeline.normalize.per_input, "_entity_sources", lose_one)
    assert job("--input", str(src), "--output", str(out), *ARGS) == Exit.UNBALANCED
    cap = capsys.readouterr()
    line = one_line(cap.err)
    assert "does not balance" in line and "is as it was" in line
    assert "NOT BALANCED" in cap.out  # the summary of the refused run
    after = digests(out)
    assert {k: v for k, v in after.items() if not k.startswith(STAGING)} == before
    staged = [k for k in after if k.startswith(STAGING) and k.endswith("/manifest.json")]
    assert len(staged) == 1 and staged[0].split("/")[1] in line  # kept, to inspect
    m = orjson.loads((out / staged[0]).read_bytes())
    assert m["commit"]["reason"] == "unbalanced" and m["balance"]["unaccounted"] == 1


# -- a run that dies --------------------------------------------------------------------------------------

#: the job run in a subprocess, with one DoFn made to announce itself (a marker file) and hang
#: there once it has done its work ``after`` times
HANG = """
import sys, time, importlib
module, cls, after, marker = sys.argv[1:5]
target = getattr(importlib.import_module(module), cls)
real, calls = target.process, [0]
def hang(self, *args, **kwargs):
    calls[0] += 1
    if calls[0] > int(after):
        open(marker, "w").close()
        time.sleep(3600)
    yield from real(self, *args, **kwargs)
target.process = hang
from jobs.normalize import run
sys.exit(run(sys.argv[5:]))
"""


@pytest.mark.parametrize(
    ("module", "cls", "after"),
    [
        ("pipeline.normalize.validate", "_Validate", 2),  # mid-run: some inputs read, decoded and exported
        ("pipeline.dataset.shards", "_WriteUnits", 4),  # a unit's canonical shard staged, others not yet
        ("pipeline.dataset.shards", "_MergeShard", 1),  # a shard of the new run written, others not yet
        ("pipeline.dataset.commit", "_Decide", 0),  # everything staged, the commit about to start
    ],
)
def test_a_killed_run_leaves_the_previous_run_byte_identical(
    shared: SharedRuns,
    previous: tuple[Path, Path, dict[str, str]],
    tmp_path: Path,
    module: str,
    cls: str,
    after: int,
) -> None:
    _, out, before = previous

    def edited(folder: Path) -> None:  # the new run's files differ from the previous run's
        shutil.copytree(shared.inputs, folder)
        quiet = folder / "books" / "quiet.vaud.json"
        quiet.write_bytes(quiet.read_bytes().replace(b"Never fires.", b"Fires now and then."))

    src = shared.folder("inputs-quiet-edited", edited)  # read-only: every run here only reads it
    marker = tmp_path / "reached"
    argv = [*PINNED, "--quiet", "--input", str(src), "--output", str(out), *ARGS, "--shard-bytes", "2000"]
    proc = subprocess.Popen(
        [sys.executable, "-c", HANG, module, cls, str(after), str(marker), *argv],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 600  # a bound on a hung test, not a timing assertion
        while not marker.exists():
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "the run never reached the hook"
            time.sleep(0.1)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    after_kill = digests(out)
    assert {k: v for k, v in after_kill.items() if not k.startswith(STAGING + "/")} == before
    if cls == "_Decide":  # everything was staged: the new run's files were all there, unused
        assert any(k.startswith(STAGING + "/") and "/out/exports/" in k for k in after_kill)

    # a re-run into the folder completes, and leaves what an uninterrupted run leaves
    rerun = normalize("--input", str(src), "--output", str(out), *ARGS, "--shard-bytes", "2000")
    assert not (out / STAGING).exists()
    reference = shared.run_argv("--input", str(src), *ARGS, "--shard-bytes", "2000")  # made once for the 3
    same_outputs(reference, rerun)


def test_a_commit_cut_short_leaves_no_manifest_and_a_rerun_repairs_it(
    previous: tuple[Path, Path, dict[str, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The window that is left (docs): a run that stops while it moves its files into place. The
    previous manifest is gone first, so the folder never claims to be complete; a re-run rewrites
    it whole."""
    src, out, _ = previous
    (src / "books" / "quiet.vaud.json").unlink()  # so the new run differs from the previous one
    state = {"moves": 0}

    def cut(op: str, path: str) -> BaseException | None:
        # a move into place is a copy there (a write outside the staging folder), then a delete
        if op == "write" and STAGING not in path:
            state["moves"] += 1
            if state["moves"] > 2:
                return OSError(5, "Input/output error", path)
        return None

    with faults(cut):
        assert job("--input", str(src), "--output", f"faulty://{out}", *ARGS) == 4
    line = one_line(capsys.readouterr().err)
    assert "failed while committing" in line and "Input/output error" in line, line
    assert "has no manifest.json now" in line
    assert not (out / "manifest.json").exists()
    rerun = normalize("--input", str(src), "--output", str(out), *ARGS)
    assert not (out / STAGING).exists()
    same_outputs(normalize("--input", str(src), "--output", str(tmp_path / "reference"), *ARGS), rerun)
