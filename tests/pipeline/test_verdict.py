"""A listing that failed refuses the commit; only an input that is not there at all is a missing
input (issue 37, behaviour 3), without running a pipeline: the commit's verdict, the listing step
and the walk below it. tests/pipeline/test_commit.py runs whole jobs over the same cases (slow).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from apache_beam.pvalue import TaggedOutput

from pipeline.dataset.commit import EMPTY, LISTING, UNBALANCED, verdict_of
from pipeline.normalize.listing import PATTERNS, _ListFiles
from pipeline.runtime.storage import FileRef, Storage, list_files

from .faulty_fs import FaultyFileSystem, faults

IN, OTHER = "gs://b/cards", "gs://b/books"


def _manifest(matched: dict[str, int], *, balanced: bool = True) -> dict[str, Any]:
    return {
        "inputs": {"patterns": [{"input": u, "matched": n} for u, n in matched.items()]},
        "balance": {
            "ok": balanced,
            "unaccounted": 0 if balanced else 2,
            "unlisted": 0,
            "inventoryRows": 5,
            "listed": 5,
        },
    }


def _rej(uri: str, error: str = "FileNotFoundError", message: str = "gone") -> dict[str, Any]:
    return {"uri": uri, "error": error, "message": message}


def test_a_complete_listing_is_committed() -> None:
    assert verdict_of(_manifest({IN: 3, OTHER: 2}), [], [IN, OTHER], False) == {"ok": True}


def test_an_input_that_is_not_there_is_missing_and_refused_unless_allowed() -> None:
    m = _manifest({IN: 3, OTHER: 0})
    v = verdict_of(m, [_rej(OTHER)], [IN, OTHER], False)
    assert v == {
        "ok": False,
        "reason": EMPTY,
        "message": f"{OTHER} does not exist (--allow-empty runs anyway)",
    }
    assert verdict_of(m, [_rej(OTHER)], [IN, OTHER], True) == {"ok": True}
    v = verdict_of(m, [], [IN, OTHER], False)
    assert v == {
        "ok": False,
        "reason": EMPTY,
        "message": f"{OTHER} matched no file (--allow-empty runs anyway)",
    }
    third = "gs://b/presets"
    v = verdict_of(_manifest({IN: 0, OTHER: 0, third: 0}), [_rej(OTHER)], [IN, OTHER, third], False)
    assert v["message"] == f"{IN} matched no file (and 2 more) (--allow-empty runs anyway)"
    v = verdict_of(_manifest({IN: 0, OTHER: 0}), [], [IN, OTHER], False)
    assert v["message"] == f"{IN} matched no file (and 1 more) (--allow-empty runs anyway)"


@pytest.mark.parametrize("allow_empty", [False, True])
def test_a_folder_below_an_input_that_vanished_refuses_the_commit(allow_empty: bool) -> None:
    """Behaviour 3: the listing's FileNotFoundError for a folder below an input is a listing that
    failed, whatever the input matched and whatever --allow-empty says."""
    sub = f"{IN}/nested"
    for matched in (3, 0):
        v = verdict_of(_manifest({IN: matched}), [_rej(sub)], [IN], allow_empty)
        assert v == {"ok": False, "reason": LISTING, "message": f"cannot list {sub}: FileNotFoundError: gone"}


@pytest.mark.parametrize("allow_empty", [False, True])
def test_an_input_that_vanished_after_listing_some_files_refuses_the_commit(allow_empty: bool) -> None:
    v = verdict_of(_manifest({IN: 3}), [_rej(IN)], [IN], allow_empty)
    assert v["reason"] == LISTING and v["message"] == f"cannot list {IN}: FileNotFoundError: gone"


def test_any_other_listing_error_refuses_the_commit_and_counts_the_rest() -> None:
    rejects = [
        _rej(OTHER, "PermissionError", "Access Denied"),
        _rej(f"{IN}/a"),
        _rej(f"{IN}/b", "OSError", ""),
    ]
    v = verdict_of(_manifest({IN: 3, OTHER: 0}), rejects, [IN, OTHER], True)
    assert v["reason"] == LISTING
    assert v["message"] == f"cannot list {OTHER}: PermissionError: Access Denied (and 2 more)"


def test_an_unbalanced_run_is_refused() -> None:
    v = verdict_of(_manifest({IN: 5}, balanced=False), [], [IN], False)
    assert v["ok"] is False and v["reason"] == UNBALANCED
    assert v["message"] == (
        "the manifest does not balance: 2 listed input(s) unaccounted for, 0 unlisted, 5 inventory rows "
        "for 5 listed (a bug: please report it)"
    )


def test_a_listing_error_without_a_message_is_one_clean_line() -> None:
    v = verdict_of(_manifest({IN: 3}), [_rej(f"{IN}/a", "OSError", "")], [IN], False)
    assert v["message"] == f"cannot list {IN}/a: OSError"
    v = verdict_of(_manifest({IN: 3}), [_rej(f"{IN}/a", "OSError", "no access to X")], [IN], False)
    assert v["message"] == f"cannot list {IN}/a: OSError: no access to X"  # only the empty tail goes
    rejects = [_rej(f"{IN}/a", "OSError", ""), _rej(f"{IN}/b", "PermissionError", "no")]
    assert (
        verdict_of(_manifest({IN: 3}), rejects, [IN], False)["message"]
        == f"cannot list {IN}/a: OSError (and 1 more)"
    )


def test_a_runs_staging_parent_is_its_folder() -> None:
    from pipeline.dataset.commit import STAGING, staging_parent

    assert staging_parent(f"{STAGING}/run-1") == STAGING
    assert staging_parent(f"out/{STAGING}/run-1") == f"out/{STAGING}"


# -- the walk and the listing step ----------------------------------------------------------------------


def _tree(root: Path) -> None:
    for rel in ("a.json", "sub/b.json", "sub/deeper/c.json", "other/d.json"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("{}")


def _vanish(folder: Path, *, named: bool) -> Any:
    def fault(op: str, path: str) -> BaseException | None:
        if op == "list" and path == str(folder):
            shutil.rmtree(folder, ignore_errors=True)
            return None if named else FileNotFoundError(f"{path} not found")  # no filename, as S3/GCS may
        return None

    return fault


@pytest.mark.parametrize("named", [True, False], ids=["local error", "error naming no file"])
def test_the_walk_names_the_folder_that_vanished(tmp_path: Path, named: bool) -> None:
    _tree(tmp_path)
    errors: list[OSError] = []
    with faults(_vanish(tmp_path / "sub", named=named)):
        found = [p for p, _ in list_files(FaultyFileSystem(), str(tmp_path), on_error=errors.append)]
    assert found == [str(tmp_path / "a.json"), str(tmp_path / "other" / "d.json")]
    assert len(errors) == 1 and isinstance(errors[0], FileNotFoundError)
    assert errors[0].filename == str(tmp_path / "sub")
    with faults(_vanish(tmp_path / "other", named=named)), pytest.raises(FileNotFoundError):
        list(list_files(FaultyFileSystem(), str(tmp_path)))  # without on_error: raised


def test_an_input_folder_that_is_not_there_raises(tmp_path: Path) -> None:
    for missing in (str(tmp_path / "nope"), str(tmp_path / "nope" / "*.json")):
        with pytest.raises(FileNotFoundError):
            list(list_files(FaultyFileSystem(), missing, on_error=lambda e: None))


def _listing(url: str) -> tuple[list[FileRef], list[dict[str, Any]], list[Any]]:
    dofn = _ListFiles((url,), Storage(), None)
    dofn.setup()
    files, rejects, patterns = [], [], []
    for x in dofn.process(0):
        if isinstance(x, TaggedOutput):
            (patterns if x.tag == PATTERNS else rejects).append(x.value)
        else:
            files.append(x)
    return files, rejects, patterns


@pytest.mark.parametrize("named", [True, False], ids=["local error", "error naming no file"])
def test_the_listing_rejects_the_vanished_folder_not_the_input(tmp_path: Path, named: bool) -> None:
    only = tmp_path / "in" / "all"
    _tree(only)
    url = f"faulty://{tmp_path / 'in'}"
    with faults(_vanish(only, named=named)):
        files, rejects, patterns = _listing(url)
    # the input's one folder vanished: no file listed, yet the input is there, and the reject
    # names the folder, so the verdict refuses the run instead of calling the input missing
    assert files == [] and patterns == [(0, 0)]
    assert [(r["uri"], r["error"], r["stage"]) for r in rejects] == [(str(only), "FileNotFoundError", "list")]
    assert verdict_of(_manifest({url: 0}), rejects, [url], True)["reason"] == LISTING


def test_the_listing_of_an_input_that_is_not_there_rejects_the_input(tmp_path: Path) -> None:
    for url in (f"faulty://{tmp_path / 'nope'}", f"faulty://{tmp_path / 'nope'}/*.json"):
        files, rejects, patterns = _listing(url)
        assert files == [] and patterns == [(0, 0)]
        assert [(r["uri"], r["error"]) for r in rejects] == [(url, "FileNotFoundError")]
        assert verdict_of(_manifest({url: 0}), rejects, [url], False)["reason"] == EMPTY
