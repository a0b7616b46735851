"""Inputs of several files in ``normalize``: a card folder and a character YAML with its picture are
one input each, in a folder and in a zip; ``--since`` skips them unread when none of their files
changed; a symbolic link in a card folder is a reject."""

from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path

import pytest

from bunzai_codecs import read

from .conftest import SAMPLES, normalize

pytestmark = pytest.mark.slow  # runs the pipeline


def _inputs(root: Path) -> Path:
    shutil.copytree(SAMPLES / "card-folder" / "marlow", root / "cards" / "marlow")
    chars = root / "chars"
    chars.mkdir()
    for name in ("Wren.yaml", "Wren.png", "Harbor Pilot.yml"):
        shutil.copy(SAMPLES / "textgen-webui" / "characters" / name, chars / name)
    (chars / "Lone.png").write_bytes((SAMPLES / "sillytavern" / "tidepool.png").read_bytes())
    return root


def test_a_card_folder_and_a_character_with_its_picture_are_one_input_each(tmp_path: Path) -> None:
    root = _inputs(tmp_path / "in")
    run = normalize(
        "--input", str(root), "--output", str(tmp_path / "out"), "--export", "card-folder,sillytavern"
    )
    m = run.manifest
    assert m["balance"]["ok"] and m["inputs"]["listed"] == 4
    rows = {r["uri"]: r for r in run.lines("inventory")}
    assert sorted(rows) == sorted(
        str(root / rel)
        for rel in ("cards/marlow", "chars/Wren.yaml", "chars/Harbor Pilot.yml", "chars/Lone.png")
    )
    assert rows[str(root / "cards/marlow")]["format"] == "card-folder"
    assert len(rows[str(root / "cards/marlow")]["entities"]) == 3  # the character, its book, its scripts
    assert rows[str(root / "chars/Wren.yaml")]["format"] == "textgen-webui"
    assert run.lines("rejects") == []
    lines = {e["source"]["uri"]: e for e in run.lines("canonical") if e["kind"] == "character"}
    assert lines[str(root / "chars/Wren.yaml")]["body"]["media"]["portrait"]["ref"] == "Wren.png"
    files = run.files()
    folders = [k for k in files if k.startswith("exports/card-folder/")]
    assert len(folders) == 4 and all(k.endswith(".zip") for k in folders)  # a folder export is its zip
    back = read(files[folders[0]], "x.zip")
    assert back.primary.kind == "character"

    again = normalize(
        "--input",
        str(root),
        "--output",
        str(tmp_path / "again"),
        "--since",
        str(tmp_path / "out" / "manifest.json"),
    )
    assert again.manifest["inputs"]["unchanged"] == 4  # no file of any input changed
    (root / "cards/marlow/personality.md").write_bytes(b"calm, and now a little tired\n")
    third = normalize(
        "--input",
        str(root),
        "--output",
        str(tmp_path / "third"),
        "--since",
        str(tmp_path / "out" / "manifest.json"),
    )
    assert (third.manifest["inputs"]["changed"], third.manifest["inputs"]["unchanged"]) == (1, 3)


def test_in_a_zip_the_same_inputs(tmp_path: Path) -> None:
    root = _inputs(tmp_path / "in")
    dump = tmp_path / "dump.zip"
    with zipfile.ZipFile(dump, "w") as z:
        for p in sorted(root.rglob("*")):
            if p.is_file():
                z.write(p, p.relative_to(root).as_posix())
    run = normalize("--input", str(dump), "--output", str(tmp_path / "out"))
    rows = {r["uri"]: r for r in run.lines("inventory")}
    assert sorted(rows) == sorted(
        f"zip://{rel}::{dump}"
        for rel in ("cards/marlow", "chars/Wren.yaml", "chars/Harbor Pilot.yml", "chars/Lone.png")
    )
    assert rows[f"zip://cards/marlow::{dump}"]["format"] == "card-folder"
    assert rows[f"zip://cards/marlow::{dump}"]["etag"]  # the members' CRCs, combined


def test_a_symbolic_link_in_a_card_folder_is_a_read_reject(tmp_path: Path) -> None:
    root = _inputs(tmp_path / "in")
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"not the card's\n")
    (root / "cards/marlow/personality.md").unlink()
    os.symlink(secret, root / "cards/marlow/personality.md")
    run = normalize("--input", str(root), "--output", str(tmp_path / "out"))
    (reject,) = run.lines("rejects")
    assert reject["uri"] == str(root / "cards/marlow") and reject["stage"] == "read"
    assert "symbolic link" in reject["message"]
    assert not any(b"not the card's" in data for data in run.files().values())
