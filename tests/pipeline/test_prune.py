"""Prune removes exactly the files of the managed folders this run did not write, and nothing when
the run is not committed: its steps on a folder, without running a pipeline (the whole-run cases
are in test_commit.py and test_since.py, slow)."""

from __future__ import annotations

from pathlib import Path

from pipeline.dataset.prune import MANAGED, _ListManaged, _Remove, _stale
from pipeline.runtime.storage import Output, Storage

FILES = (
    "manifest.json",
    "notes/keep.txt",
    "canonical/part-00000-of-00001.jsonl",
    "exports/sillytavern/a.png",
    "exports/sillytavern/deep/er/b.json",
    "blobs/ab/abcd",
    "index/.hidden-leftover",
    "rejects/part-00000-of-00002.jsonl",
)


def _folder(tmp_path: Path) -> Output:
    for rel in FILES:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(rel)
    return Output(str(tmp_path), Storage())


def test_the_managed_folders_are_every_dataset_of_the_output() -> None:
    assert set(MANAGED) == {"canonical", "fidelity", "rejects", "inventory", "index", "exports", "blobs"}


def test_the_listing_finds_every_file_of_the_managed_folders_hidden_ones_too(tmp_path: Path) -> None:
    out = _folder(tmp_path)
    found = sorted(_ListManaged(out).process(None, 3))
    assert found == sorted((rel, "found") for rel in FILES if rel.split("/")[0] in MANAGED)
    assert sorted(_ListManaged(out).process(None, 3, {"ok": True})) == found


def test_a_run_that_is_not_committed_lists_nothing_to_remove(tmp_path: Path) -> None:
    out = _folder(tmp_path)
    assert list(_ListManaged(out).process(None, 3, {"ok": False, "reason": "listing"})) == []


def test_only_what_was_found_and_not_written_is_stale() -> None:
    assert list(_stale(("exports/x", {"found": ["found"], "written": []}))) == ["exports/x"]
    assert list(_stale(("exports/x", {"found": ["found"], "written": ["written"]}))) == []
    assert list(_stale(("exports/x", {"found": [], "written": ["written"]}))) == []


def test_removing_a_file_takes_its_emptied_folders_not_the_output_nor_a_folder_in_use(tmp_path: Path) -> None:
    out = _folder(tmp_path)
    rm = _Remove(out)
    rm.setup()
    assert list(rm.process("exports/sillytavern/deep/er/b.json")) == ["exports/sillytavern/deep/er/b.json"]
    assert not (tmp_path / "exports" / "sillytavern" / "deep").exists()  # emptied: gone
    assert (tmp_path / "exports" / "sillytavern" / "a.png").is_file()  # a folder in use stays
    list(rm.process("exports/sillytavern/a.png"))
    assert not (tmp_path / "exports").exists()
    list(rm.process("canonical/part-00000-of-00001.jsonl"))
    assert tmp_path.is_dir() and (tmp_path / "manifest.json").is_file()
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()) == sorted(
        [
            "manifest.json",
            "notes/keep.txt",
            "blobs/ab/abcd",
            "index/.hidden-leftover",
            "rejects/part-00000-of-00002.jsonl",
        ]
    )


def test_removing_the_last_file_never_removes_the_output_folder(tmp_path: Path) -> None:
    (tmp_path / "exports" / "x").mkdir(parents=True)
    (tmp_path / "exports" / "x" / "a.json").write_text("{}")
    rm = _Remove(Output(str(tmp_path), Storage()))
    rm.setup()
    assert list(rm.process("exports/x/a.json")) == ["exports/x/a.json"]
    assert tmp_path.is_dir() and list(tmp_path.iterdir()) == []


def test_a_folder_another_worker_removed_first_is_no_error(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Prune removes files in parallel: two workers may both find a folder empty; the second's
    rmdir then fails, and that is not an error."""
    import os

    out = _folder(tmp_path)
    rm = _Remove(out)
    rm.setup()

    def gone(path: str) -> None:
        raise FileNotFoundError(2, "No such file or directory", path)

    monkeypatch.setattr(os, "rmdir", gone)
    assert list(rm.process("blobs/ab/abcd")) == ["blobs/ab/abcd"]
    assert not (tmp_path / "blobs" / "ab" / "abcd").exists()
