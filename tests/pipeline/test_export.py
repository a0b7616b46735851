"""``bunzai export``: entities written from a canonical dataset alone (lines + blobs, no inputs)
equal what ``convert`` of the original file writes, and round-trip wherever ``convert`` does."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from bunzai_codecs import read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.errors import BunzaiError
from bunzai_codecs.fidelity import compare_native
from bunzai_codecs.inputs import Input, walk
from jobs.export import run as export_job
from tests.conftest import corpus_root

from .conftest import PINNED, SAMPLES, normalize

pytestmark = pytest.mark.slow  # runs the pipeline

VAUD = "vaud-json"
#: a vaud-json line names where it was read and carries normalize's lint warnings: not the file's
_STAMPED = ("source", "warnings")


def _inputs(root: Path) -> Iterator[Input]:
    """The inputs below ``root`` as bunzai groups them (a card folder, a YAML with its picture)."""
    for inp in walk(root):
        if inp.folder or (inp.path.name != "EXPECT.tsv" and inp.path.suffix != ".md"):
            yield inp


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[Path, Input]]:
    """A dataset normalized from a copy of samples/ (+ the corpus), the copy removed afterwards;
    returns the dataset and each copied input's uri -> the original input."""
    tmp = tmp_path_factory.mktemp("export")
    src = tmp / "in"
    originals: dict[Path, Input] = {}
    roots = [("samples", SAMPLES)]
    corpus = corpus_root()
    if corpus is not None:
        roots.append(("corpus", corpus))
    for name, root in roots:
        for inp in _inputs(root):
            dest = src / name / inp.path.relative_to(root)
            dest.parent.mkdir(parents=True, exist_ok=True)
            if inp.folder:
                shutil.copytree(inp.path, dest)  # its own hidden files (.bunzai/, .gitattributes) too
            else:
                shutil.copyfile(inp.path, dest)
                if inp.picture is not None:
                    shutil.copyfile(inp.picture, dest.parent / inp.picture.name)
            originals[dest] = inp
    run = normalize("--input", str(src), "--output", str(tmp / "ds"), "--fidelity", "off")
    assert run.manifest["counts"]["entities"]["total"] > 0
    shutil.rmtree(src)  # the export has only the dataset
    return tmp / "ds", originals


def _meaning(fmt: str, data: bytes) -> bytes:
    if fmt != VAUD:
        return data
    lines = [orjson.loads(ln) for ln in data.splitlines() if ln.strip()]
    return b"\n".join(orjson.dumps({k: v for k, v in t.items() if k not in _STAMPED}) for t in lines)


@pytest.mark.xdist_group("export-dataset")  # shares the module's dataset run
def test_export_equals_convert_of_the_original_and_round_trips_where_convert_does(
    dataset: tuple[Path, dict[Path, Input]], tmp_path: Path
) -> None:
    ds, originals = dataset
    lines = [
        orjson.loads(ln)
        for part in sorted((ds / "canonical").glob("*.jsonl"))
        for ln in part.read_bytes().splitlines()
    ]
    formats = sorted({t["source"]["format"] for t in lines})
    out = tmp_path / "out"
    assert export_job([*PINNED, "-q", str(ds), "--to", ",".join(formats), "-o", str(out)]) == 0
    manifest = orjson.loads((out / "manifest.json").read_bytes())
    assert manifest["commit"] == {"ok": True}

    compared = same_format = round_trips = 0
    seen: set[str] = set()
    for t in lines:
        fmt, eid = t["source"]["format"], t["id"]
        codec = registry.get(fmt)
        if fmt != VAUD and codec.kind != t["kind"]:
            continue  # a lorebook a card carried: its file is the card's
        if eid in seen:
            continue  # identical files share the id; the export is the smallest uri's
        seen.add(eid)
        exported = list((out / fmt).glob(f"{eid}.*"))
        assert len(exported) == 1, (eid, fmt, exported)
        got = exported[0].read_bytes()
        original = originals[Path(t["source"]["uri"])]
        data = original.read()
        decoded = read(data, original.name, uri=str(original.path))
        entity = next(e for e in decoded.entities if e.id == eid)
        want = write(entity, fmt, linked=decoded.entities)
        assert exported[0].name == f"{eid}{want.extension}"
        assert compare_native(_meaning(fmt, want.data), _meaning(fmt, got)) == [], (original, fmt)
        compared += 1
        # where convert round-trips the file, export does too
        if entity is decoded.primary and decoded.primary.source is not None:
            same_format += 1
            try:
                convert_kept = compare_native(_meaning(fmt, data), _meaning(fmt, want.data)) == []
            except BunzaiError:
                convert_kept = False
            if convert_kept:
                round_trips += 1
                assert compare_native(_meaning(fmt, data), _meaning(fmt, got)) == [], original
    assert compared >= 60 and same_format > 0 and round_trips > same_format // 2, (
        compared,
        same_format,
        round_trips,
    )


@pytest.mark.xdist_group("export-dataset")  # shares the module's dataset run
def test_filters_pick_entities_and_an_empty_selection_writes_nothing(
    dataset: tuple[Path, dict[Path, Input]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ds, _ = dataset
    lines = [
        orjson.loads(ln)
        for part in (ds / "canonical").glob("*.jsonl")
        for ln in part.read_bytes().splitlines()
    ]
    books = sorted(
        {t["id"] for t in lines if t["kind"] == "lorebook" and t["source"]["format"] == "sillytavern"}
    )
    assert books  # cards' embedded lorebooks
    out = tmp_path / "books"
    args = [*PINNED, "-q", str(ds), "--to", "sillytavern-lorebook,sillytavern", "-o", str(out)]
    assert export_job([*args, "--kind", "lorebook", "--from", "sillytavern"]) == 0
    written = sorted(p.name.split(".")[0] for p in (out / "sillytavern-lorebook").iterdir())
    assert written == books and not (out / "sillytavern").exists()
    # one id
    one = tmp_path / "one"
    assert export_job([*PINNED, "-q", str(ds), "--to", "vaud-json", "-o", str(one), "--id", books[0]]) == 0
    assert [p.name for p in (one / VAUD).iterdir()] == [f"{books[0]}.vaud.json"]
    # a re-run into the same folder with another filter leaves only that run's files
    assert export_job([*args, "--kind", "character", "--from", "sillytavern"]) == 0
    assert not (out / "sillytavern-lorebook").exists() and any((out / "sillytavern").iterdir())
    # nothing matches: exit 3, nothing written
    capsys.readouterr()
    empty = tmp_path / "empty"
    assert (
        export_job(
            [*PINNED, "-q", str(ds), "--to", "sillytavern-lorebook", "-o", str(empty), "--kind", "persona"]
        )
        == 3
    )
    assert "no entity of the dataset matches" in capsys.readouterr().err
    assert not empty.exists()


def _bunzai(*args: str | Path, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("bunzai")
    r = subprocess.run(
        [str(exe), "export", *PINNED, *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **env},
    )
    assert "Traceback" not in r.stderr, r.stderr
    return r


@pytest.mark.xdist_group("export-dataset")  # shares the module's dataset run
def test_an_app_name_exports_every_kind_and_a_later_export_prunes_the_earlier_one(
    dataset: tuple[Path, dict[Path, Path]], tmp_path: Path
) -> None:
    """Issue 32, as a user runs it: ``--to risu`` writes each entity in Risu's format for its kind;
    an export into that folder with other formats removes the earlier files and says so; no line of
    zeros while the pipeline starts; ``--format`` is ``--from``'s old name, with a note."""
    ds, _ = dataset
    r = _bunzai(ds, "--to", "risu", "-o", "out", cwd=tmp_path, BUNZAI_PROGRESS_INTERVAL="0")
    assert r.returncode == 0, r.stderr
    assert not any(" 0 lines" in ln for ln in r.stderr.splitlines()), r.stderr
    folders = sorted(p.name for p in (tmp_path / "out").iterdir() if p.is_dir())
    assert {"risu", "risu-lorebook", "risu-persona", "risu-preset"} <= set(folders), folders
    assert all(f == "rejects" or registry.get(f).family == "risu" for f in folders)
    risu_files = sum(1 for f in folders if f != "rejects" for _ in (tmp_path / "out" / f).iterdir())
    r = _bunzai(ds, "--to", "sillytavern", "--format", "sillytavern", "-o", "out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "bunzai export: note: --format is deprecated (it goes in the next release): use --from" in r.stderr
    assert f"  pruned: {risu_files} files an earlier export wrote in out and this one did not" in r.stdout
    left = sorted(p.name for p in (tmp_path / "out").iterdir() if p.is_dir())
    assert left and all(f == "rejects" or f.startswith("sillytavern") for f in left), left
    manifest = orjson.loads((tmp_path / "out" / "manifest.json").read_bytes())
    assert manifest["outputs"]["pruned"] == risu_files and manifest["options"]["format"] == ["sillytavern"]
    r = _bunzai(ds, "--to", "sillytavern", "--format", "sillytavern", "-q", "-o", "out", cwd=tmp_path)
    assert r.returncode == 0 and r.stderr == ""


@pytest.mark.xdist_group("export-dataset")  # shares the module's dataset run
def test_sigterm_during_an_export_leaves_the_last_export_as_it_was(
    dataset: tuple[Path, dict[Path, Input]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An export stopped by SIGTERM at its second write: exit 143, one line, no staging left, and
    the previous export into that folder byte for byte as it was."""
    import signal

    import pipeline.export.job

    ds, _ = dataset
    out = tmp_path / "out"
    args = [*PINNED, "-q", str(ds), "-o", str(out)]
    assert export_job([*args, "--to", "sillytavern", "--kind", "character"]) == 0
    before = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    calls = {"n": 0}
    real_write = pipeline.export.job.write_bytes

    def write_then_term(fs: object, path: str, data: bytes) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            signal.raise_signal(signal.SIGTERM)
        real_write(fs, path, data)

    monkeypatch.setattr(pipeline.export.job, "write_bytes", write_then_term)
    capsys.readouterr()
    assert export_job([*args, "--to", "vaud-json"]) == 143
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"bunzai export: error: interrupted; nothing was committed: {out} is as it was"
    )
    after = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    assert calls["n"] >= 2 and after == before


def test_usage_errors_and_a_missing_dataset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert export_job([str(tmp_path), "--to", "sillytavern", "-o", str(tmp_path / "o"), "--kid", "x"]) == 2
    assert "did you mean --kind?" in capsys.readouterr().err
    assert export_job([str(tmp_path), "extra/", "--to", "sillytavern", "-o", str(tmp_path / "o")]) == 2
    assert "unexpected argument 'extra/': one DATASET_URL only" in capsys.readouterr().err
    assert export_job([str(tmp_path), "--to", "nope", "-o", str(tmp_path / "o")]) == 2
    assert (
        export_job([str(tmp_path), "--to", "sillytavern", "-o", str(tmp_path / "o"), "--format", "nope"]) == 2
    )
    assert (
        export_job([*PINNED, str(tmp_path / "none"), "--to", "sillytavern", "-o", str(tmp_path / "o")]) == 3
    )
    assert "not a complete dataset" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_the_export_translates_for_dataflow(tmp_path: Path) -> None:
    """``--runner=DataflowRunner --dry_run``: Beam builds the job it would submit (no network)."""
    pytest.importorskip("apache_beam.runners.dataflow.internal.apiclient")
    import apache_beam as beam

    from pipeline.export.job import build_export, parse

    from .graphs import DRY_RUN

    argv = [
        *DRY_RUN,
        "gs://bunzai-results/2024-06-02",
        "--to",
        "all",
        "-o",
        "gs://bunzai-exports/x",
        "--kind",
        "character",
    ]
    cfg, options = parse(argv)
    assert cfg.kinds == ("character",) and cfg.root == "gs://bunzai-results/2024-06-02"
    p = beam.Pipeline(options=options)
    build_export(p, cfg, ["gs://bunzai-results/2024-06-02/canonical/part-00000-of-00001.jsonl"])
    p.run()  # translated, not submitted
    proto = p.runner.proto_pipeline  # type: ignore[attr-defined]
    top = {t.unique_name.split("/")[0] for t in proto.components.transforms.values()}
    assert {"ReadCanonical", "Select", "BySource", "Write", "CommitExports", "Commit"} <= top
    with pytest.raises(Exception, match="this machine's disk"):
        parse([*DRY_RUN, str(tmp_path), "--to", "all", "-o", "gs://bunzai-exports/x"])
