"""Inputs inside an archive, through an fsspec chain (``zip://**::<archive URL>``)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from .conftest import EXPECTED, normalize, write_inputs

pytestmark = pytest.mark.slow  # runs the pipeline


def make_zip(folder: Path, target: Path) -> list[str]:
    names = []
    with zipfile.ZipFile(target, "w") as z:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                name = p.relative_to(folder).as_posix()
                z.write(p, name)
                names.append(name)
    return names


def test_zip_chain_input(tmp_path: Path) -> None:
    write_inputs(tmp_path / "in")
    dump = tmp_path / "dump.zip"
    members = make_zip(tmp_path / "in", dump)
    assert ".cache/ignored.json" in members  # hidden members are skipped like hidden files

    run = normalize(
        "--input", f"zip://**::{dump}", "--output", str(tmp_path / "out"), "--export", "vaud-json"
    )
    m = run.manifest
    assert m["balance"]["ok"] and m["inputs"]["listed"] == len(EXPECTED)
    rows = {r["uri"]: r for r in run.lines("inventory")}
    assert sorted(rows) == sorted(f"zip://{rel}::{dump}" for rel in EXPECTED)
    mira = rows[f"zip://cards/mira.vaud.json::{dump}"]
    assert len(mira["entities"]) == 2 and mira["etag"]  # the member's CRC is its checksum
    assert {e["source"]["uri"] for e in run.lines("canonical")} <= set(rows)

    only_cards = normalize("--input", f"zip://cards/**::{dump}", "--output", str(tmp_path / "cards"))
    assert sorted(r["uri"] for r in only_cards.lines("inventory")) == [
        f"zip://cards/copy-of-mira.vaud.json::{dump}",
        f"zip://cards/mira.vaud.json::{dump}",
        f"zip://cards/nested/rules.vaud.json::{dump}",
    ]


def test_zip_chain_since_skips_members_by_crc(tmp_path: Path) -> None:
    write_inputs(tmp_path / "in")
    dump = tmp_path / "dump.zip"
    make_zip(tmp_path / "in", dump)
    first = normalize("--input", f"zip://**::{dump}", "--output", str(tmp_path / "a"))
    second = normalize(
        "--input",
        f"zip://**::{dump}",
        "--output",
        str(tmp_path / "b"),
        "--since",
        str(tmp_path / "a" / "manifest.json"),
    )
    assert second.counters.get("inputs_read", 0) == 0  # same size and CRC: not even read
    assert second.manifest["inputs"]["unchanged"] == first.manifest["inputs"]["listed"]
    assert (
        second.files()["canonical/part-00000-of-00001.jsonl"]
        == first.files()["canonical/part-00000-of-00001.jsonl"]
    )
