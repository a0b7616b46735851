"""Nightly runs: ``--since`` decodes only what changed and still writes the complete output."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from .conftest import Run, SharedRuns, normalize, vaud_bytes, write_inputs

pytestmark = pytest.mark.slow  # runs the pipeline

UNCHANGED_DATASETS = ("canonical/", "fidelity/", "rejects/", "index/", "exports/")


def _without_status(run: Run) -> list[dict]:
    return sorted(({**r, "status": None} for r in run.lines("inventory")), key=lambda r: r["uri"])


def same_results(nightly: Run, full: Run) -> None:
    """A --since run holds exactly what a full run over the same inputs holds (only the inventory's
    new/changed/unchanged statuses and the manifest's input counts differ)."""
    fa, fb = nightly.files(), full.files()
    pick = lambda fs: {k: v for k, v in fs.items() if k.startswith(UNCHANGED_DATASETS)}  # noqa: E731
    assert pick(fa) == pick(fb)
    assert _without_status(nightly) == _without_status(full)
    ca, cb = (dict(r.manifest["counts"]) for r in (nightly, full))
    ca.pop("stages"), cb.pop("stages")  # a carried input skips the stages
    assert ca == cb
    assert nightly.manifest["balance"]["ok"] and full.manifest["balance"]["ok"]


def test_change_one_add_one_delete_one(tmp_path: Path) -> None:
    src = tmp_path / "in"
    write_inputs(src)
    args = ("--input", str(src), "--export", "vaud-json")
    first = normalize(*args, "--output", str(tmp_path / "night1"))
    listed = first.manifest["inputs"]["listed"]

    quiet = src / "books" / "quiet.vaud.json"
    tree = orjson.loads(quiet.read_bytes())
    tree["body"]["entries"][0]["content"] = "Now it says something else."
    quiet.write_bytes(orjson.dumps(tree))  # changed
    (src / "cards" / "nested" / "rules.vaud.json").unlink()  # deleted
    (src / "cards" / "copy.vaud.json").write_bytes((src / "cards" / "mira.vaud.json").read_bytes())  # added

    night2 = normalize(
        *args, "--output", str(tmp_path / "night2"), "--since", str(tmp_path / "night1" / "manifest.json")
    )
    m = night2.manifest
    assert m["since"]["honoured"] is True
    assert (m["inputs"]["new"], m["inputs"]["changed"], m["inputs"]["deleted"]) == (1, 1, 1)
    assert m["inputs"]["unchanged"] == listed - 2
    # only the changed and the added file went past reading (a local disk gives no checksum, so
    # every same-size file is read once to compare its sha256 — but never decoded)
    assert night2.counters["inputs_detected"] == 2
    assert night2.counters["inputs_decoded"] == 2
    assert night2.counters["inputs_unchanged"] == listed - 2
    rows = {r["uri"]: r["status"] for r in night2.lines("inventory")}
    assert rows[str(quiet)] == "changed" and rows[str(src / "cards" / "copy.vaud.json")] == "new"
    assert str(src / "cards" / "nested" / "rules.vaud.json") not in rows

    full = normalize(*args, "--output", str(tmp_path / "full"))
    same_results(night2, full)
    canonical = night2.lines("canonical")
    assert any(
        e["body"].get("entries", [{}])[0].get("content") == "Now it says something else." for e in canonical
    )
    assert not any(e["kind"] == "regex" for e in canonical)  # the deleted file's entity is gone

    # in place: the next night writes into its own folder, reading its own manifest
    night3 = normalize(
        *args, "--output", str(tmp_path / "night2"), "--since", str(tmp_path / "night2" / "manifest.json")
    )
    assert night3.manifest["inputs"]["unchanged"] == night3.manifest["inputs"]["listed"]
    assert night3.counters.get("inputs_detected", 0) == 0
    same_results(night3, full)


def test_results_are_not_reused_when_this_run_asks_for_more(shared: SharedRuns, tmp_path: Path) -> None:
    first = Path(shared.run().output) / "manifest.json"  # exported nothing
    again = normalize(
        "--input",
        str(shared.inputs),
        "--output",
        str(tmp_path / "b"),
        "--export",
        "vaud-json",
        "--since",
        str(first),
    )
    assert again.manifest["since"] == {
        "manifest": str(first),
        "honoured": False,
        "reason": "this run exports formats that run did not",
    }
    assert again.counters.get("inputs_unchanged", 0) == 0
    assert again.manifest["inputs"]["new"] == again.manifest["inputs"]["listed"]
    assert again.counters["inputs_read"] == again.manifest["inputs"]["listed"]


def test_same_size_edit_is_caught_by_the_digest(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    from .conftest import _lorebook

    a = vaud_bytes(_lorebook("11" * 32, [{"id": "0", "content": "aaaa", "constant": True}]))
    (src / "a.vaud.json").write_bytes(a)
    normalize("--input", str(src), "--output", str(tmp_path / "n1"))
    (src / "a.vaud.json").write_bytes(a.replace(b"aaaa", b"bbbb"))
    n2 = normalize(
        "--input",
        str(src),
        "--output",
        str(tmp_path / "n2"),
        "--since",
        str(tmp_path / "n1" / "manifest.json"),
    )
    assert n2.manifest["inputs"]["changed"] == 1 and n2.counters["inputs_decoded"] == 1
    assert b"bbbb" in n2.files()["canonical/part-00000-of-00001.jsonl"]


def _reprocessed(run: Run, reason: str) -> None:
    """``run`` reused nothing of the run its ``--since`` names, and says why."""
    assert run.manifest["since"]["honoured"] is False
    assert run.manifest["since"]["reason"] == reason
    assert run.counters.get("inputs_unchanged", 0) == 0
    assert run.manifest["inputs"]["unchanged"] == 0
    assert run.manifest["inputs"]["new"] == run.manifest["inputs"]["listed"]
    assert run.counters["inputs_read"] == run.manifest["inputs"]["listed"]


def test_results_of_another_codec_library_are_not_reused(shared: SharedRuns, tmp_path: Path) -> None:
    """Issue 37, behaviour 1: a previous run made by other codec code (its manifest's fingerprint
    differs) is not carried forward, however unchanged the inputs are."""
    import shutil

    full = shared.run()
    prev = tmp_path / "prev"
    shutil.copytree(full.output, prev)
    m = orjson.loads((prev / "manifest.json").read_bytes())
    m["bunzai"]["codecFingerprint"] = "0" * 64
    (prev / "manifest.json").write_bytes(orjson.dumps(m))
    again = normalize(
        "--input", str(shared.inputs), "--output", str(tmp_path / "b"), "--since", str(prev / "manifest.json")
    )
    _reprocessed(again, "the codec library changed since that run")
    same_results(again, full)


def test_results_under_another_max_file_bytes_are_not_reused(tmp_path: Path) -> None:
    """Issue 37, behaviour 2: the previous run rejected the files above its --max-file-bytes; a run
    with a larger bound decodes them instead of carrying the rejects forward."""
    src = tmp_path / "in"
    write_inputs(src)
    sizes = sorted(p.stat().st_size for p in src.rglob("*") if p.is_file())
    bound = str(sizes[len(sizes) // 2])  # about half the inputs are too big for the first run
    first = normalize("--input", str(src), "--output", str(tmp_path / "n1"), "--max-file-bytes", bound)
    too_big = [r for r in first.lines("rejects") if "max-file-bytes" in orjson.dumps(r).decode()]
    assert too_big, first.lines("rejects")
    again = normalize(
        "--input",
        str(src),
        "--output",
        str(tmp_path / "n2"),
        "--since",
        str(tmp_path / "n1" / "manifest.json"),
    )
    _reprocessed(again, "--max-file-bytes differs from that run")
    same_results(again, normalize("--input", str(src), "--output", str(tmp_path / "full")))


def test_the_moved_id_note_only_for_an_id_the_user_typed_and_never_under_quiet(tmp_path: Path) -> None:
    """Issue 32, as a user runs it: ``--since`` of a run that exported everything, with ``--export
    all`` again, prints no risu-regex note (nobody named it); ``--export risu-regex`` does, and not
    under ``-q``."""
    import shutil
    import subprocess
    import sys

    from .conftest import PINNED, SAMPLES

    (tmp_path / "in").mkdir()
    shutil.copyfile(SAMPLES / "vaud" / "aria.vaud.json", tmp_path / "in" / "aria.vaud.json")
    bunzai = str(Path(sys.executable).with_name("bunzai"))

    def run(out: str, *args: str) -> str:
        argv = [bunzai, "normalize", *PINNED, "--input", "in", "--output", out, "--fidelity", "off", *args]
        r = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        return r.stderr

    run("a", "--export", "all", "-q")
    assert "risu-regex" not in run("b", "--export", "all", "--since", "a/manifest.json")
    assert "note: format risu-regex is RisuAI's regex export only" in run("c", "--export", "risu-regex")
    assert run("d", "--export", "risu-regex", "-q") == ""
