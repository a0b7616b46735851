"""Batch ``bunzai convert PATH... --to FMT -o OUTDIR/`` (issue 18, part 6): every file under the
given folders and globs converted into OUTDIR, each named after its source file with the folder
structure mirrored, on several processes with the same result whatever ``-j``, with progress, a
failure line per bad input (exit 3, the others written), two inputs that would write one file
refused, and nothing overwritten without ``--force`` (the whole batch refused, nothing written)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from bunzai_codecs import read
from bunzai_codecs.cli import main
from bunzai_codecs.exitcodes import Exit
from tests.test_progress import run_in_pty

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"


def _copy(rel: str, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SAMPLES / rel, dest)
    return dest


def _tree(root: Path) -> Path:
    """A temp copy of a few character samples: nested folders, two ``card.png`` in different
    sub-folders, a ``card.png`` and a ``card.json`` side by side (one name for a JSON-only
    target), a card with assets (charx) and hidden files that are not inputs."""
    _copy("sillytavern/tidepool.png", root / "a" / "card.png")
    _copy("pygmalion/ines.pygmalion.png", root / "b" / "card.png")
    _copy("sillytavern/lighthouse-keeper.v2.json", root / "b" / "deep" / "keeper.v2.json")
    _copy("risu/oswin_the_lamplighter.charx", root / "oswin.charx")
    _copy("sillytavern/starship-captain.v3.json", root / "dup" / "card.json")
    _copy("agnai/Pip.card.png", root / "dup" / "card.png")
    _copy("vaud/aria.vaud.json", root / "aria.vaud.json")
    (root / ".hidden.json").write_bytes(b"not an input")
    _copy("sillytavern/starship-captain.v3.json", root / ".git" / "x.json")
    return root


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


_PROGRESS = re.compile(r"bunzai convert: \d+/\d+ files \(")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """The exit code and stderr, without the progress lines (not a terminal: one when it closes)."""
    rc = main(list(argv))
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err
    return rc, "".join(ln for ln in cap.err.splitlines(keepends=True) if not _PROGRESS.match(ln))


def _name(data: bytes, filename: str) -> str:
    return str(read(data, filename).primary.body.identity.name)  # type: ignore[attr-defined]


def test_a_batch_mirrors_the_folders_and_names_each_file_after_its_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _tree(tmp_path / "in")
    out = tmp_path / "out"
    rc, err = _run(capsys, "convert", str(src), "--to", "sillytavern", "-o", f"{out}/", "-j", "1")
    assert rc == 0, err
    got = _files(out)
    assert sorted(got) == [
        "a/card.png",
        "aria.json",
        "b/card.png",
        "b/deep/keeper.v2.json",
        "dup/card.json",
        "dup/card.png",
        "oswin.png",
    ]
    # each file holds its own source's card, in the target format
    for rel, source in [
        ("a/card.png", "a/card.png"),
        ("b/card.png", "b/card.png"),
        ("b/deep/keeper.v2.json", "b/deep/keeper.v2.json"),
        ("dup/card.json", "dup/card.json"),
        ("dup/card.png", "dup/card.png"),
        ("oswin.png", "oswin.charx"),
        ("aria.json", "aria.vaud.json"),
    ]:
        back = read(got[rel], rel)
        assert back.primary.source is not None and back.primary.source.format == "sillytavern", rel
        assert _name(got[rel], rel) == _name((src / source).read_bytes(), source), rel
    # a line per written file with what it lost, and the summary count
    assert f"{src / 'a' / 'card.png'} -> {out / 'a' / 'card.png'}: " in err
    assert "converted 7 of 7 inputs" in err


def test_two_inputs_that_would_write_one_file_get_distinct_names_listed_in_the_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _tree(tmp_path / "in")
    out = tmp_path / "out"
    # two roots, each with a card.png at its top: both would be OUT/card.png; the second (in input
    # order) gets its source's container after its stem
    rc, err = _run(
        capsys, "convert", str(src / "a"), str(src / "b"), "--to", "sillytavern", "-o", str(out), "-j", "1"
    )
    assert rc == 0, err
    assert sorted(_files(out)) == ["card-png.png", "card.png", "deep/keeper.v2.json"]
    assert _files(out)["card.png"] == _files(tmp_path / "in")["a/card.png"]  # a's, unchanged
    assert (
        f"renamed: {src / 'b' / 'card.png'} -> {out / 'card-png.png'} "
        f"({out / 'card.png'} is {src / 'a' / 'card.png'}'s)"
    ) in err.splitlines()
    assert "3 files written" in err and "(1 renamed: another input writes their name)" in err
    # agnai writes JSON only: dup/card.png and dup/card.json both ask for dup/card.json; the png's
    # files keep its container in their stem, whatever -j
    for j in ("1", "2"):
        o = tmp_path / f"agnai-{j}"
        rc, err = _run(capsys, "convert", str(src), "--to", "agnai", "-o", str(o), "-j", j)
        assert rc == 0, err
        assert {"dup/card.json", "dup/card-png.json"} <= set(_files(o))
        assert f"renamed: {src / 'dup' / 'card.png'} -> {o / 'dup' / 'card-png.json'}" in err
    assert _files(tmp_path / "agnai-1") == _files(tmp_path / "agnai-2")
    # the names are the batch's own: a file already in OUT is still refused without --force
    rc, err = _run(capsys, "convert", str(src / "a"), str(src / "b"), "--to", "sillytavern", "-o", str(out))
    assert rc == 2 and "exists" in err and "pass --force to overwrite" in err


def test_a_glob_is_mirrored_below_its_fixed_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _tree(tmp_path / "in")
    out = tmp_path / "out"
    rc, err = _run(capsys, "convert", f"{src}/**/*.png", "--to", "agnai", "-o", str(out), "-j", "1")
    assert rc == 0, err
    assert sorted(_files(out)) == ["a/card.json", "b/card.json", "dup/card.json"]
    rc, err = _run(capsys, "convert", f"{src}/**/*.nothing", "--to", "agnai", "-o", str(tmp_path / "o2"))
    assert rc == 3 and err.strip() == f"{src}/**/*.nothing: no input files match"
    assert not (tmp_path / "o2").exists()


def test_the_same_inputs_give_the_same_files_whatever_j(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _tree(tmp_path / "in")
    (src / "p").mkdir()
    (src / "p" / "personas.json").write_bytes(b'{"personas": {"a.png": "Mara"')  # fails: broken JSON
    runs = {}
    for j in ("1", "2"):
        out = tmp_path / f"out-{j}"
        rc, err = _run(capsys, "convert", str(src), "--to", "sillytavern", "-o", str(out), "-j", j)
        assert rc == 3, err
        runs[j] = (_files(out), [ln.replace(str(out), "OUT") for ln in err.splitlines()])
    assert runs["1"] == runs["2"]
    files, lines = runs["1"]
    assert sorted(files) == [
        "a/card.png",
        "aria.json",
        "b/card.png",
        "b/deep/keeper.v2.json",
        "dup/card.json",
        "dup/card.png",
        "oswin.png",
    ]
    assert any(ln.startswith(f"{src / 'p' / 'personas.json'}: Malformed: ") for ln in lines), lines
    assert "converted 7 of 8 inputs" in lines[-1] and "1 failed" in lines[-1]


@pytest.mark.parametrize("j", ["1", "2"])
def test_one_bad_file_among_good_ones_is_listed_and_the_others_are_written(
    j: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "in"
    _copy("sillytavern/tidepool.png", src / "good" / "tidepool.png")
    _copy("sillytavern/starship-captain.v3.json", src / "good" / "captain.json")
    bad = src / "bad.json"
    bad.write_bytes(b'{"spec": "chara_card_v3", "data": {"name": ')  # cut short
    out = tmp_path / "out"
    rc, err = _run(capsys, "convert", str(src), "--to", "sillytavern", "-o", str(out), "-j", j)
    assert rc == 3, err
    assert sorted(_files(out)) == ["good/captain.json", "good/tidepool.png"]
    failures = [ln for ln in err.splitlines() if str(bad) in ln]
    assert len(failures) == 1, err
    assert re.match(rf"{re.escape(str(bad))}: (NotRecognized|Malformed): \S", failures[0]), failures
    assert "converted 2 of 3 inputs" in err and "1 failed" in err
    # -q: the failures are still said, nothing else
    rc, err = _run(
        capsys, "convert", str(src), "--to", "sillytavern", "-o", str(tmp_path / "q"), "-j", j, "-q"
    )
    assert rc == 3 and err.splitlines() == failures


def test_nothing_is_overwritten_without_force_the_whole_batch_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _tree(tmp_path / "in")
    out = src / "converted"  # inside the input folder: never read as an input itself
    rc, err = _run(capsys, "convert", str(src), "--to", "sillytavern", "-o", str(out), "-j", "2")
    assert rc == 0, err
    first = _files(out)
    (out / "a" / "card.png").write_bytes(b"mine")
    (out / "oswin.png").unlink()
    for j in ("1", "2"):
        rc, err = _run(capsys, "convert", str(src), "--to", "sillytavern", "-o", str(out), "-j", j)
        assert rc == 2, err
        (line,) = err.splitlines()
        # the first in input order: a folder's own files before its sub-folders
        assert (
            line
            == f"bunzai convert: error: {out / 'aria.json'} exists (and 5 more): pass --force to overwrite"
        )
        # nothing written: the refused file is as it was, the missing one was not made again
        assert (out / "a" / "card.png").read_bytes() == b"mine"
        assert not (out / "oswin.png").exists()
        assert sorted(_files(out)) == sorted(set(first) - {"oswin.png"})  # no temporary left behind
    rc, err = _run(capsys, "convert", str(src), "--to", "sillytavern", "-o", str(out), "--force", "-j", "2")
    assert rc == 0, err
    assert _files(out) == first  # the same bytes as the first run, and no converted/converted/


def test_batch_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    (empty / ".hidden").mkdir(parents=True)
    (empty / ".hidden" / "x.json").write_bytes(b"{}")
    (empty / ".x.json").write_bytes(b"{}")
    out = tmp_path / "out"
    src = _tree(tmp_path / "in")
    cases = [
        ([str(empty)], 3, f"{empty}: no input files under this folder"),
        ([str(src), str(empty)], 3, f"{empty}: no input files under this folder"),
        ([str(src), str(tmp_path / "nope")], 3, f"{tmp_path / 'nope'}: no such file or directory"),
    ]
    for inputs, code, line in cases:
        rc, err = _run(capsys, "convert", *inputs, "--to", "sillytavern", "-o", str(out))
        assert (rc, err.strip()) == (code, line)
        assert not out.exists()  # nothing was converted, not even the folder made
    # an input folder inside the output folder (or the same): its files would all be skipped
    inside = _copy("sillytavern/tidepool.png", tmp_path / "o2" / "x" / "tidepool.png").parent
    for o in (inside.parent, inside):
        rc, err = _run(capsys, "convert", str(inside), "--to", "sillytavern", "-o", str(o))
        assert (rc, err.strip()) == (3, f"{inside}: is inside the output folder {o}: give another -o")
        assert _files(inside.parent) == {
            "x/tidepool.png": (SAMPLES / "sillytavern/tidepool.png").read_bytes()
        }
    a_file = tmp_path / "a-file"
    a_file.write_bytes(b"mine")
    rc, err = _run(capsys, "convert", str(src), "--to", "sillytavern", "-o", str(a_file))
    assert rc == 4 and err.strip() == f"bunzai convert: error: {a_file}: is a file, not a folder"
    assert a_file.read_bytes() == b"mine"
    # a sub-folder of the output that is a file: exit 4 before anything is written
    out.mkdir()
    (out / "b").write_bytes(b"mine")
    rc, err = _run(capsys, "convert", str(src), "--to", "sillytavern", "-o", str(out), "-j", "1")
    assert rc == 4 and err.strip() == f"bunzai convert: error: {out / 'b'}: is a file, not a folder"
    assert [p.name for p in out.iterdir()] == ["b"]
    # usage errors: no -o for a batch, --entity (one input's entity), a bad -j
    for argv, expect in [
        ([str(src), "--to", "sillytavern"], "-o OUTDIR is required"),
        ([str(src), "--to", "sillytavern", "-o", str(out), "--entity", "x"], "--entity"),
        ([str(src), "--to", "sillytavern", "-o", str(out), "-j", "0"], "-j"),
    ]:
        with pytest.raises(SystemExit) as e:
            main(["convert", *argv])
        assert e.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith("usage: bunzai convert") and expect in err


def test_strict_exits_1_when_a_file_lost_something_unexpectedly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bunzai_codecs.core import registry
    from bunzai_codecs.formats.agnai.codec import AgnaiCharacterCodec

    class Forgetful(AgnaiCharacterCodec):
        """Claims the scenario like Agnai, but does not write it: a bug the report must name."""

        def encode(self, entity, ctx):  # type: ignore[no-untyped-def]
            tree = orjson.loads(super().encode(entity, ctx))
            tree["scenario"] = ""
            return orjson.dumps(tree)

    src = tmp_path / "in"
    _copy("sillytavern/lighthouse-keeper.v2.json", src / "keeper.json")
    _copy("sillytavern/tidepool.png", src / "tidepool.png")
    with registry.using({**registry.CODECS, "agnai": Forgetful}):
        rc, err = _run(capsys, "convert", str(src), "--to", "agnai", "-o", str(tmp_path / "o1"), "-j", "1")
        assert rc == 0, err
        line = next(ln for ln in err.splitlines() if ln.startswith(f"{src / 'keeper.json'} -> "))
        assert re.search(r": 1 unexpected, \d+ expected lost or changed$", line), line
        rc, err = _run(
            capsys,
            "convert",
            str(src),
            "--to",
            "agnai",
            "-o",
            str(tmp_path / "o2"),
            "-j",
            "1",
            "--strict",
        )
        assert rc == Exit.LOSSY, err
    rc, err = _run(
        capsys, "convert", str(src), "--to", "agnai", "-o", str(tmp_path / "o4"), "-j", "1", "--strict"
    )
    assert rc == 0, err


def test_one_file_as_a_batch_when_it_is_a_glob_and_single_convert_is_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    card = _copy("sillytavern/tidepool.png", tmp_path / "in" / "tidepool.png")
    # one file and -o FILE: today's single convert (named as asked, the full report)
    rc, err = _run(capsys, "convert", str(card), "--to", "sillytavern", "-o", str(tmp_path / "x.json"))
    assert rc == 0 and (tmp_path / "x.json").is_file()
    assert err.startswith(f"wrote {tmp_path / 'x.json'} (sillytavern, character)")
    # one file and -o DIR/: named after the entity, as today
    rc, err = _run(capsys, "convert", str(card), "--to", "sillytavern", "-o", f"{tmp_path / 'd'}/")
    assert rc == 0 and [p.name for p in (tmp_path / "d").iterdir()] == ["Tidepool.png"]


def _env(**extra: str) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("TERM", "BUNZAI_PROGRESS_INTERVAL")} | extra


def test_batch_convert_shows_a_bar_on_a_terminal(tmp_path: Path) -> None:
    src = _tree(tmp_path / "in")
    argv = [sys.executable, "-m", "bunzai_codecs.cli", "convert", str(src), "--to", "sillytavern"]
    code, text = run_in_pty([*argv, "-o", str(tmp_path / "out"), "-j", "2"], _env(TERM="xterm"))
    assert code == 0, text
    assert re.search(r"bunzai convert: 100%\|[^|]*\| 7/7 \[", text), text
    assert "\r" in text  # redrawn in place
    code, text = run_in_pty([*argv, "-o", str(tmp_path / "q"), "-q"], _env(TERM="xterm"))
    assert code == 0 and text == "", text


def test_batch_convert_without_a_terminal_prints_plain_lines(tmp_path: Path) -> None:
    src = _tree(tmp_path / "in")
    (src / "bad.json").write_bytes(b"{")
    argv = [sys.executable, "-m", "bunzai_codecs.cli", "convert", str(src), "--to", "sillytavern"]
    proc = subprocess.run(
        [*argv, "-o", str(tmp_path / "out"), "-j", "2"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=_env(BUNZAI_PROGRESS_INTERVAL="0"),
    )
    assert proc.returncode == 3, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("bunzai convert: ")]
    assert lines[0].startswith("bunzai convert: 1/8 files")
    assert lines[-1].startswith("bunzai convert: 8/8 files (100%), failed 1")
    assert "\r" not in proc.stderr and "Traceback" not in proc.stderr


def test_a_glob_never_names_a_file_outside_the_output_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _tree(tmp_path / "in")
    out = tmp_path / "out"
    (src / "a" / "sub").mkdir()
    # the fixed folder is in/a; a/sub/../../b/*.png climbs out of it: refused, nothing converted
    rc, err = _run(capsys, "convert", f"{src}/a/*/../../b/*.png", "--to", "sillytavern", "-o", str(out))
    assert rc == 3 and err.strip().endswith("the folder before its first wildcard"), err
    assert not out.exists()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_sigterm_mid_batch_leaves_the_output_folder_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, jobs: str
) -> None:
    """A scheduler's timeout (SIGTERM) after the first file: exit 143, one line, no staging folder
    and no converted file left; what the output folder held before is untouched."""
    import signal

    from bunzai_codecs.progress import Progress

    src = _tree(tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    (out / "last-night.json").write_bytes(b"{}")
    real_advance = Progress.advance
    handler = signal.getsignal(signal.SIGTERM)

    def advance_then_term(self: Progress, *args: object, **kwargs: object) -> None:
        real_advance(self, *args, **kwargs)  # type: ignore[arg-type]
        signal.raise_signal(signal.SIGTERM)

    monkeypatch.setattr(Progress, "advance", advance_then_term)
    rc, err = _run(capsys, "convert", str(src), "--to", "sillytavern", "-o", f"{out}/", "-j", jobs)
    assert rc == 143, err
    assert err.strip().splitlines()[-1] == "bunzai convert: interrupted"
    assert [p.name for p in out.iterdir()] == ["last-night.json"]
    assert signal.getsignal(signal.SIGTERM) is handler  # put back
