"""Inputs inside an archive, through an fsspec chain (``zip://**::<archive URL>``)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from .conftest import EXPECTED, SharedRuns, normalize

pytestmark = pytest.mark.slow  # runs the pipeline


def test_zip_chain_input(shared: SharedRuns) -> None:
    dump = shared.zip  # the hand-made inputs, zipped
    assert ".cache/ignored.json" in zipfile.ZipFile(dump).namelist()  # skipped like hidden files

    run = shared.run_argv("--input", f"zip://**::{dump}", "--export", "vaud-json")
    m = run.manifest
    assert m["balance"]["ok"] and m["inputs"]["listed"] == len(EXPECTED)
    rows = {r["uri"]: r for r in run.lines("inventory")}
    assert sorted(rows) == sorted(f"zip://{rel}::{dump}" for rel in EXPECTED)
    mira = rows[f"zip://cards/mira.vaud.json::{dump}"]
    assert len(mira["entities"]) == 2 and mira["etag"]  # the member's CRC is its checksum
    assert {e["source"]["uri"] for e in run.lines("canonical")} <= set(rows)

    only_cards = shared.run_argv("--input", f"zip://cards/**::{dump}")
    assert sorted(r["uri"] for r in only_cards.lines("inventory")) == [
        f"zip://cards/copy-of-mira.vaud.json::{dump}",
        f"zip://cards/mira.vaud.json::{dump}",
        f"zip://cards/nested/rules.vaud.json::{dump}",
    ]


def test_zip_chain_since_skips_members_by_crc(shared: SharedRuns, tmp_path: Path) -> None:
    dump = shared.zip
    first = shared.run_argv("--input", f"zip://**::{dump}")
    second = normalize(
        "--input",
        f"zip://**::{dump}",
        "--output",
        str(tmp_path / "b"),
        "--since",
        str(Path(first.output) / "manifest.json"),
    )
    assert second.counters.get("inputs_read", 0) == 0  # same size and CRC: not even read
    assert second.manifest["inputs"]["unchanged"] == first.manifest["inputs"]["listed"]
    assert (
        second.files()["canonical/part-00000-of-00001.jsonl"]
        == first.files()["canonical/part-00000-of-00001.jsonl"]
    )


# -- a plain archive given as an input: a folder of inputs (pipeline/normalize/archives.py) ---------------------


def test_a_plain_zip_input_is_read_as_a_folder_of_inputs(shared: SharedRuns, tmp_path: Path) -> None:
    import tarfile

    dump = shared.zip
    chained = shared.run_argv("--input", f"zip://**::{dump}")
    plain = normalize("--input", str(dump), "--output", str(tmp_path / "plain"))
    assert plain.manifest["balance"]["ok"] and plain.manifest["inputs"]["listed"] == len(EXPECTED)
    assert plain.manifest["inputs"]["patterns"] == [{"input": str(dump), "matched": len(EXPECTED)}]
    for ds in ("inventory", "canonical", "rejects", "fidelity"):  # members named by their chain URL
        assert plain.lines(ds) == chained.lines(ds), ds
    assert f"zip://cards/mira.vaud.json::{dump}" in {r["uri"] for r in plain.lines("inventory")}

    archives = []
    for name, mode in (("dump.tar", "w"), ("dump.tar.gz", "w:gz")):
        archive = tmp_path / name
        with tarfile.open(archive, mode) as t:
            for rel in sorted(EXPECTED):
                t.add(shared.inputs / rel, rel)
        archives += ["--input", str(archive)]
    run = normalize(*archives, "--output", str(tmp_path / "tars"))  # both in one run: each its own input
    rows = {r["uri"]: r for r in run.lines("inventory")}
    assert run.manifest["balance"]["ok"]
    for archive in archives[1::2]:
        assert sorted(u for u in rows if u.endswith(f"::{archive}")) == sorted(
            f"tar://{rel}::{archive}" for rel in EXPECTED
        ), archive
        assert len(rows[f"tar://cards/mira.vaud.json::{archive}"]["entities"]) == 2
    assert len(rows) == 2 * len(EXPECTED)


def test_card_containers_that_are_zips_stay_cards(tmp_path: Path) -> None:
    """``.lumiverse.zip`` is a card, and so is a ``.charx`` renamed ``.zip``: the registry's
    detection decides, not the name."""
    samples = Path(__file__).resolve().parents[2] / "samples"
    charx_as_zip = tmp_path / "oswin.zip"
    charx_as_zip.write_bytes((samples / "risu" / "oswin_the_lamplighter.charx").read_bytes())
    cards = {str(samples / "lumiverse" / "quill.lumiverse.zip"): "lumiverse", str(charx_as_zip): "risu"}
    # each card its own --input (one run for both): a file given as input, not a folder's member
    run = normalize(*(a for card in cards for a in ("--input", card)), "--output", str(tmp_path / "out"))
    rows = run.lines("inventory")
    assert sorted((r["uri"], r["format"]) for r in rows) == sorted(cards.items()), rows
    assert all(r["entities"] for r in rows)


def test_each_member_is_bounded_by_max_file_bytes(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "small.json").write_bytes(b"{}")
    (folder / "big.json").write_bytes(b"[" + b"0," * 5000 + b"0]")  # 10 KB, compresses to little
    dump = tmp_path / "dump.zip"
    with zipfile.ZipFile(dump, "w", zipfile.ZIP_DEFLATED) as z:
        for p in sorted(folder.iterdir()):
            z.write(p, p.name)
    assert dump.stat().st_size < 2000  # the archive itself is under the limit; the member is not
    run = normalize("--input", str(dump), "--output", str(tmp_path / "out"), "--max-file-bytes", "2000")
    rejects = {r["uri"]: r for r in run.lines("rejects")}
    big = rejects[f"zip://big.json::{dump}"]
    assert (big["stage"], big["error"]) == ("read", "LimitExceeded")
    assert f"zip://small.json::{dump}" in rejects  # read, and not recognised: {} is no card
    assert run.manifest["balance"]["ok"]
