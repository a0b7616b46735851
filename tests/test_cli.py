"""The CLI contract: output shapes and exit codes (0 ok, 2 usage, 3 input not recognised/rejected)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from bunzai_codecs.cli import main

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "vaud" / "aria.vaud.json"


def test_formats_lists_every_codec(capsys: pytest.CaptureFixture[str]) -> None:
    from bunzai_codecs.core import registry

    assert main(["formats"]) == 0
    out = capsys.readouterr().out
    for cid in registry.CODECS:
        assert cid in out


def test_detect_json_line_shape(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["detect", "--json", str(SAMPLE)]) == 0
    line = orjson.loads(capsys.readouterr().out.splitlines()[0])
    assert line["file"] == str(SAMPLE)
    assert line["format"] == "vaud-json" and line["kind"] == "character" and line["score"] == 1.0
    assert line["candidates"][0] == ["vaud-json", 1.0]


def test_detect_names_the_kind_a_vaud_file_holds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """vaud-json carries every kind: detect reports the one the file holds, not a default."""
    book = tmp_path / "book.vaud.json"
    assert (
        main(
            [
                "convert",
                str(ROOT / "samples/sillytavern/world-harbor-town.json"),
                "--to",
                "vaud-json",
                "-o",
                str(book),
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["detect", "--json", str(book)]) == 0
    line = orjson.loads(capsys.readouterr().out.splitlines()[0])
    assert (line["format"], line["kind"]) == ("vaud-json", "lorebook")
    assert main(["detect", str(book)]) == 0
    assert "lorebook" in capsys.readouterr().out


def test_detect_walks_directories_and_reports_unknown_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "noise.bin").write_bytes(b"\x00\x01 not a card")
    (tmp_path / "b.vaud.json").write_bytes(SAMPLE.read_bytes())
    assert main(["detect", str(tmp_path)]) == 3
    cap = capsys.readouterr()
    assert "b.vaud.json" in cap.out and "vaud-json" in cap.out
    assert "noise.bin: NotRecognized" in cap.err
    assert "Traceback" not in cap.err


def test_inspect_prints_each_entity_as_a_vaud_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(SAMPLE)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [orjson.loads(x)["kind"] for x in lines] == ["character", "lorebook"]


def test_convert_same_format_round_trip_is_identical(tmp_path: Path) -> None:
    out = tmp_path / "x.vaud.json"
    assert main(["convert", str(SAMPLE), "--to", "vaud-json", "-o", str(out)]) == 0
    assert out.read_bytes() == SAMPLE.read_bytes()


def test_the_old_module_id_still_reads_a_module_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """.risum modules were risu-regex in bunzai 0.1.0: --from risu-regex still reads one (as
    risu-module) for a release, and --to risu-regex writes Risu's regex export; both say so."""
    module = ROOT / "samples/risu/lantern_harbor.risum"
    out = tmp_path / "rules.json"
    assert main(["convert", str(module), "--from", "risu-regex", "--to", "risu-regex", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert err.count("note: format risu-regex is RisuAI's regex export only") == 1
    assert orjson.loads(out.read_bytes())["type"] == "regex"
    assert (tmp_path / "rules.lorebook.json").exists()  # the module's lorebook, beside it
    again = tmp_path / "again.risum"
    assert main(["convert", str(module), "--to", "risu-module", "-o", str(again)]) == 0
    assert again.read_bytes() == module.read_bytes()
    assert "note:" not in capsys.readouterr().err


def test_bad_input_exits_3_with_one_line_and_no_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "broken.json"
    bad.write_bytes(
        b'{"schemaVersion": 1, "kind": "character", "body": {"identity": {"name": 3}}, "id": "x"}'
    )
    r = subprocess.run(
        [sys.executable, "-m", "bunzai_codecs.cli", "inspect", str(bad)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 3
    assert "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0
    assert "ValidationFailed" in r.stderr and "$.body.identity.name" in r.stderr and str(bad) in r.stderr


def test_missing_file_and_unknown_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(tmp_path / "nope.json")]) == 3
    assert "cannot read" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:  # a usage error (tests/test_cli_errors.py)
        main(["convert", str(SAMPLE), "--to", "no-such", "-o", str(tmp_path / "o")])
    assert e.value.code == 2
    assert "unknown format 'no-such'" in capsys.readouterr().err


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["convert", str(SAMPLE)])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        main(["frobnicate"])
    assert e.value.code == 2
