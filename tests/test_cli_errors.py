"""Every CLI failure is one line on stderr and a documented exit code (bunzai_codecs/cli.py):
2 usage (with the subcommand's own usage), 3 input, 4 output, 5 internal; ``--debug`` adds the
traceback; no temporary file is ever left behind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import bunzai_codecs
from bunzai_codecs import cli
from bunzai_codecs.cli import main

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "vaud" / "aria.vaud.json"


def bunzai(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bunzai_codecs.cli", *args], capture_output=True, text=True, cwd=cwd
    )


def one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def usage_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as e:
        main(list(argv))
    assert e.value.code == 2
    return capsys.readouterr().err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"bunzai {bunzai_codecs.__version__}"


@pytest.mark.parametrize(
    ("argv", "usage"),
    [
        (["detect", "--bogus", str(SAMPLE)], "usage: bunzai detect"),
        (["inspect", str(SAMPLE), "--bogus"], "usage: bunzai inspect"),
        (["fidelity", str(SAMPLE), "-o", "x", "--bogus"], "usage: bunzai fidelity"),
        (["schema", "--bogus"], "usage: bunzai schema"),
    ],
)
def test_a_subcommands_bad_flag_prints_that_subcommands_usage(
    capsys: pytest.CaptureFixture[str], argv: list[str], usage: str
) -> None:
    err = usage_error(capsys, *argv)
    assert err.startswith(usage) and "--bogus" in err and "{formats,detect" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["convert", str(SAMPLE), "--to", "foo", "-o", "x.json"],
        ["convert", str(SAMPLE), "--to", "vaud-json", "--from", "foo", "-o", "x.json"],
        ["inspect", "--format", "foo", str(SAMPLE)],
        ["fidelity", str(SAMPLE), "-o", "x", "--to", "foo"],
    ],
)
def test_an_unknown_format_id_is_a_usage_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    err = usage_error(capsys, *argv)
    assert f"usage: bunzai {argv[0]}" in err and "unknown format 'foo'" in err


def test_a_folder_with_no_input_files_is_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    (empty / ".hidden").mkdir(parents=True)
    (empty / ".hidden" / "x.json").write_bytes(b"{}")  # hidden: not an input
    assert main(["detect", str(empty)]) == 3
    cap = capsys.readouterr()
    assert one_line(cap.err) == f"{empty}: no input files under this folder" and cap.out == ""
    out = tmp_path / "report"
    assert main(["fidelity", str(empty), "-o", str(out)]) == 3
    assert one_line(capsys.readouterr().err) == f"{empty}: no input files under this folder"
    assert not out.exists()  # nothing was written


@pytest.mark.parametrize(
    ("argv", "expect"),
    [
        (["schema", "/proc/bunzai-x"], "/proc/bunzai-x: cannot create the folder"),
        (["fidelity", str(SAMPLE), "-o", "/proc/bunzai-x"], "/proc/bunzai-x: cannot create the folder"),
        (["convert", str(SAMPLE), "--to", "risu", "-o", "/proc/bunzai-x.charx"], "/proc/bunzai-x.charx"),
    ],
)
def test_an_output_that_cannot_be_written_is_exit_4(
    capsys: pytest.CaptureFixture[str], argv: list[str], expect: str
) -> None:
    assert main(argv) == 4
    line = one_line(capsys.readouterr().err)
    assert line.startswith(f"bunzai {argv[0]}: error: ") and expect in line


def test_a_folder_where_a_file_is_meant_and_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    (folder / "keep.txt").write_bytes(b"mine")
    # an existing folder given to -o is where the files go (as `-o DIR/`), named after the entity
    assert main(["convert", str(SAMPLE), "--to", "vaud-json", "-o", str(folder), "-q"]) == 0
    assert sorted(p.name for p in folder.iterdir()) == ["Aria.vaud.json", "keep.txt"]
    (folder / "Aria.vaud.json").unlink()
    # a folder where the file itself is meant: one line, exit 4, --force or not
    (folder / "Aria.vaud.json").mkdir()
    for force in ([], ["--force"]):
        assert main(["convert", str(SAMPLE), "--to", "vaud-json", "-o", str(folder), *force]) == 4
        assert "is a folder" in one_line(capsys.readouterr().err)
    (folder / "Aria.vaud.json").rmdir()
    a_file = tmp_path / "a-file"
    a_file.write_bytes(b"mine")
    assert main(["fidelity", str(SAMPLE), "-o", str(a_file)]) == 4
    assert "is a file, not a folder" in one_line(capsys.readouterr().err)
    assert main(["schema", str(a_file)]) == 4
    assert "is a file, not a folder" in one_line(capsys.readouterr().err)
    # nothing was left behind: no temporary, no change
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a-file", "a-folder", "keep.txt"]
    assert a_file.read_bytes() == b"mine"


def test_a_failed_write_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The disk fills up half-way through a write: the old file stays, no ``.tmp`` is left."""
    import bunzai_codecs.core.files as files

    target = tmp_path / "out.vaud.json"
    target.write_bytes(b"the previous file")

    def full(*_args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "replace", full)
    assert main(["convert", str(SAMPLE), "--to", "vaud-json", "-o", str(target), "--force"]) == 4
    assert "No space left on device" in one_line(capsys.readouterr().err)
    assert [p.name for p in tmp_path.iterdir()] == ["out.vaud.json"]
    assert target.read_bytes() == b"the previous file"


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    plain = bunzai("schema", "/proc/bunzai-x")
    assert plain.returncode == 4 and "Traceback" not in plain.stderr
    debug = bunzai("schema", "/proc/bunzai-x", "--debug")
    assert debug.returncode == 4 and "Traceback (most recent call last)" in debug.stderr
    assert "Traceback (most recent call last)" in bunzai("--debug", "schema", "/proc/bunzai-x").stderr


def test_a_bug_is_exit_5_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def boom(args: object) -> int:
        raise KeyError("a bug")

    monkeypatch.setattr(cli, "cmd_formats", boom)
    assert main(["formats"]) == 5
    line = one_line(capsys.readouterr().err)
    assert "internal error" in line and "KeyError" in line


def test_normalize_usage_errors_are_one_line_with_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, expect in [
        (["--inptu", "x"], "unknown option --inptu (did you mean --input?)"),
        (["--inputs", "cards/"], "unknown option --inputs (did you mean --input?)"),
        (["--exports", "all"], "unknown option --exports (did you mean --export?)"),
        (["cards/"], "unexpected argument 'cards/'"),
        (["--runner=NoSuchRunner"], "--runner: unknown runner 'NoSuchRunner'"),
        (["--fidelity", "most"], "invalid choice: 'most'"),
    ]:
        assert main(["normalize", *argv]) == 2, argv
        line = one_line(capsys.readouterr().err)
        assert line.startswith("bunzai normalize: error: ") and expect in line, (argv, line)
