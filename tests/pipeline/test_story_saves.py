"""``normalize`` over KoboldAI saves and NovelAI stories, in a folder and in a zip: the pipeline only
calls the registry, so the new formats need no pipeline code; this checks they go through every
stage (detect, decode, round trips, exports) with nothing rejected or lost."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from .conftest import SAMPLES, normalize

pytestmark = pytest.mark.slow  # runs the pipeline

FILES = {
    "kobold/harbor-watch.lite.json": "kobold-save",
    "kobold/night-ferry.lite.json": "kobold-save",
    "kobold/saltmarsh.client.json": "kobold-save",
    "kobold/world_info.json": "kobold-save",
    "novelai/lantern-road.story": "novelai-story",
}


def test_story_saves_in_a_folder_and_a_zip(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    for rel in FILES:
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SAMPLES / rel, folder / rel)
    dump = tmp_path / "saves.zip"
    with zipfile.ZipFile(dump, "w", zipfile.ZIP_DEFLATED) as z:
        for rel in FILES:
            z.write(SAMPLES / rel, rel)
    run = normalize(
        "--input", str(folder), "--input", str(dump), "--output", str(tmp_path / "out"), "--export", "all"
    )
    assert run.manifest["balance"]["ok"]
    assert run.lines("rejects") == []
    inventory = {r["uri"]: r["format"] for r in run.lines("inventory")}
    want = {str(folder / rel): fmt for rel, fmt in FILES.items()}
    want |= {f"zip://{rel}::{dump}": fmt for rel, fmt in FILES.items()}
    assert inventory == want

    rows = run.lines("fidelity")
    same = [r for r in rows if r["check"] in ("native", "stability")]
    assert len([r for r in same if r["check"] == "native"]) == len(want)
    assert {r["status"] for r in same} == {"lossless"}, [r for r in same if r["status"] != "lossless"]
    cross = [r for r in rows if r["check"] == "cross"]
    assert cross and all(r["status"] != "unexpected" and r["status"] != "error" for r in cross), [
        (r["source"], r["target"], r["status"]) for r in cross if r["status"] in ("unexpected", "error")
    ]
    assert not [r for r in cross if r["target"] == "novelai-story"]  # read-only: nobody's target

    files = run.files()
    exported = {rel.split("/")[1] for rel in files if rel.startswith("exports/")}
    assert "kobold-save" in exported and "sillytavern-lorebook" in exported
    saves = [rel for rel in files if rel.startswith("exports/kobold-save/")]
    assert len(saves) == len({e["id"] for e in run.lines("canonical")})  # the story's book too
    # read-only: the story is written back as a story (its own bytes), no other book is made one
    (story,) = [rel for rel in files if rel.startswith("exports/novelai-story/")]
    assert story.endswith(".story") and files[story] == (SAMPLES / "novelai/lantern-road.story").read_bytes()
