"""The dataset's blob store: big media and escrow bytes stored once by digest, carried by --since,
pruned when no line names them, written only through the commit."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
from pathlib import Path

import orjson
import pytest

from bunzai_codecs.formats.vaud.codec import LINE_BOUND, STORED, dumps, from_tree
from tests.conftest import corpus_root

from .conftest import (
    SAMPLES,
    SAMPLES_AND_CORPUS_NATIVE,
    Run,
    SharedRuns,
    copy_output,
    normalize,
    same_outputs,
)

pytestmark = pytest.mark.slow  # runs the pipeline

#: inputs with bytes above the inline bound (a charx's zip member, a NovelAI PNG lorebook's
#: picture) and a PNG card whose small picture stays inline
WITH_BLOBS = ("risu/oswin_the_lamplighter.charx", "novelai/hollin.naidata.png", "sillytavern/tidepool.png")


def _refs(run: Run) -> dict[str, int]:
    """digest -> size of every blob the canonical lines name."""
    out: dict[str, int] = {}
    for tree in run.lines("canonical"):
        for item in tree.get(STORED, []):
            assert out.setdefault(item["sha256"], item["bytes"]) == item["bytes"]
    return out


def _blob_files(run: Run) -> dict[str, bytes]:
    return {rel.rsplit("/", 1)[1]: data for rel, data in run.files().items() if rel.startswith("blobs/")}


def check_blob_store(run: Run) -> dict[str, int]:
    """Every blob a line names is in ``blobs/<2 hex>/<sha256>`` with those bytes, every blob file is
    named by a line, and the manifest counts them."""
    refs = _refs(run)
    files = _blob_files(run)
    assert set(files) == set(refs)
    for key, data in files.items():
        assert hashlib.sha256(data).hexdigest() == key and len(data) == refs[key]
    assert all(rel.split("/")[1] == rel.split("/")[2][:2] for rel in run.files() if rel.startswith("blobs/"))
    counts = run.manifest["counts"]["blobs"]
    assert counts["count"] == len(refs) and counts["bytes"] == sum(refs.values())
    assert counts["new"] + counts["carried"] == counts["count"]
    assert counts["newBytes"] + counts["carriedBytes"] == counts["bytes"]
    assert run.manifest["outputs"]["blobs"] == "blobs/<first 2 hex of sha256>/<sha256>"
    return refs


def _inputs(tmp_path: Path, rels: tuple[str, ...] = WITH_BLOBS) -> Path:
    src = tmp_path / "in"
    for rel in rels:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SAMPLES / rel, src / rel)
    return src


def _shared_inputs(shared: SharedRuns, rels: tuple[str, ...] = WITH_BLOBS) -> Path:
    """``_inputs`` written once per session, read-only: for the tests that do not change them."""
    return shared.folder(f"blob-inputs-{len(rels)}", lambda folder: _inputs(folder, rels)) / "in"


def _stat(run: Run) -> dict[str, tuple[int, int]]:
    root = Path(run.output)
    return {
        p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in (root / "blobs").rglob("*") if p.is_file()
    }


def test_big_bytes_are_stored_once_and_lines_stay_small(tmp_path: Path) -> None:
    src = _inputs(tmp_path)
    # the same file twice: two lines (two sources), one blob
    shutil.copyfile(src / "novelai" / "hollin.naidata.png", src / "novelai" / "hollin-copy.naidata.png")
    run = normalize("--input", str(src), "--output", str(tmp_path / "out"), "--export", "vaud-json")
    refs = check_blob_store(run)
    assert len(refs) >= 2
    # vaud-json exports stay self-contained: read without the blob store, the same entities
    for rel, data in run.files().items():
        if rel.startswith("exports/vaud-json/"):
            for line in data.splitlines():
                tree = orjson.loads(line)
                assert STORED not in tree
                from_tree(tree)
    for tree in run.lines("canonical"):  # each line read with its blobs is the whole entity again
        full = dumps(from_tree(tree, fetch=run.blob))  # as bunzai inspect prints it
        assert STORED not in orjson.loads(full) and dumps(from_tree(orjson.loads(full))) == full
    counts = run.manifest["counts"]["blobs"]
    assert counts["new"] == counts["count"] and counts["carried"] == 0
    lines = run.lines("canonical")
    named = [
        t for t in lines if t["source"]["uri"].endswith(("hollin.naidata.png", "hollin-copy.naidata.png"))
    ]
    assert len(named) == 2 and named[0][STORED] == named[1][STORED]
    shards = b"".join(d for rel, d in run.files().items() if rel.startswith("canonical/"))
    for data in _blob_files(run).values():  # the bytes are in blobs/, not in the lines
        assert base64.b64encode(data) not in shards
    # built twice: byte-identical, blobs included
    same_outputs(
        run, normalize("--input", str(src), "--output", str(tmp_path / "again"), "--export", "vaud-json")
    )


def test_since_writes_no_blob_twice_and_prunes_blobs_no_line_names(tmp_path: Path) -> None:
    src = _inputs(tmp_path)
    out = str(tmp_path / "out")
    first = normalize("--input", str(src), "--output", out)
    refs = check_blob_store(first)
    before = _stat(first)
    # nothing changed: every blob is carried, none is written again (same inode, same mtime)
    second = normalize("--input", str(src), "--output", out, "--since", f"{out}/manifest.json")
    assert second.manifest["since"]["honoured"], second.manifest["since"]
    assert second.manifest["inputs"]["unchanged"] == len(WITH_BLOBS)
    check_blob_store(second)
    counts = second.manifest["counts"]["blobs"]
    assert counts["new"] == 0 and counts["carried"] == len(refs)
    assert _stat(second) == before
    # into another folder: the blobs of carried lines are copied over, the folder stands alone
    other = normalize(
        "--input", str(src), "--output", str(tmp_path / "other"), "--since", f"{out}/manifest.json"
    )
    check_blob_store(other)
    assert other.manifest["counts"]["blobs"]["carried"] == len(refs)
    # an input removed: the blobs only its lines named are pruned; the others are left alone
    gone = src / "risu" / "oswin_the_lamplighter.charx"
    gone_refs = set(_refs(first)) - {
        k
        for t in first.lines("canonical")
        if not t["source"]["uri"].endswith(".charx")
        for k in (i["sha256"] for i in t.get(STORED, []))
    }
    assert gone_refs
    gone.unlink()
    third = normalize("--input", str(src), "--output", out, "--since", f"{out}/manifest.json")
    left = check_blob_store(third)
    assert not gone_refs & set(left)
    assert third.manifest["outputs"]["pruned"] >= len(gone_refs)
    assert {k: v for k, v in _stat(third).items()} == {k: v for k, v in before.items() if k in left}
    fresh = normalize("--input", str(src), "--output", str(tmp_path / "fresh")).files()
    mine = third.files()
    for prefix in ("canonical/", "blobs/"):  # what a fresh run writes (the inventory says "unchanged")
        assert {r: d for r, d in mine.items() if r.startswith(prefix)} == {
            r: d for r, d in fresh.items() if r.startswith(prefix)
        }


def test_a_rerun_without_since_keeps_the_blobs_in_place(shared: SharedRuns, tmp_path: Path) -> None:
    src = _shared_inputs(shared)
    first = shared.run_argv("--input", str(src))
    out = str(copy_output(first, tmp_path / "out"))  # a folder holding that run, to run into again
    before = _stat(Run(first.manifest, first.counters, out))
    assert before
    again = normalize("--input", str(src), "--output", out)
    assert _stat(again) == before  # the same digest is the same file: not written again
    assert again.manifest["counts"]["blobs"]["carried"] == len(before)


@pytest.mark.parametrize("where", ["/blobs/", "/exports/"])
def test_a_failed_run_writes_no_blob(shared: SharedRuns, tmp_path: Path, where: str) -> None:
    """Blobs are staged like every other file: a run that fails (here: a blob or an export that
    cannot be written) leaves the previous run's folder byte for byte as it was."""
    from jobs.normalize import run as run_job

    from .faulty_fs import faults
    from .test_commit import digests

    # a copy of the inputs (the test adds one) and of the session's run over them
    previous = shared.run_argv(
        "--input", str(_shared_inputs(shared, WITH_BLOBS[1:])), "--export", "vaud-json"
    )
    src = shutil.copytree(_shared_inputs(shared, WITH_BLOBS[1:]), tmp_path / "in")
    out = copy_output(previous, tmp_path / "out")
    before = digests(out)
    assert any(rel.startswith("blobs/") for rel in before)
    shutil.copyfile(SAMPLES / WITH_BLOBS[0], src / "new.charx")  # a blob the folder does not have yet

    def fault(op: str, path: str) -> BaseException | None:
        return PermissionError(13, "Permission denied", path) if op == "write" and where in path else None

    args = [
        "--runner=FnApiRunner",
        "-q",
        "--input",
        str(src),
        "--output",
        f"faulty://{out}",
        "--export",
        "vaud-json",
    ]
    with faults(fault) as seen:
        assert run_job(args) == 4
    assert any(op == "write" and where in p for op, p in seen)
    assert digests(out) == before


@pytest.mark.skipif(corpus_root() is None, reason="shared corpus not present")
def test_no_canonical_line_is_above_the_bound(shared: SharedRuns) -> None:
    # canonical lines and blobs do not depend on the fidelity mode (test_fidelity_modes.py): the
    # samples + corpus run the index test reads too
    run = shared.run_argv(*SAMPLES_AND_CORPUS_NATIVE)
    check_blob_store(run)
    longest = max(
        len(line)
        for rel, data in run.files().items()
        if rel.startswith("canonical/")
        for line in data.splitlines()
    )
    assert 0 < longest <= LINE_BOUND
    assert os.path.isdir(Path(run.output) / "blobs")
