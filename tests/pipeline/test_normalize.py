"""The whole normalize pipeline, end to end: accounting, every output, determinism."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import orjson
import pytest

from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import sniff_kind
from bunzai_codecs.formats.vaud.codec import from_tree
from jobs.normalize import run as run_job
from pipeline.export.files import export_formats_for
from pipeline.runtime.options import export_formats, parse, runner_name
from tests.conftest import corpus_root, expect_rows

from .conftest import EXPECTED, PINNED, SAMPLES, Run, SharedRuns, normalize, same_outputs

pytestmark = pytest.mark.slow  # runs the pipeline

REJECT_KEYS = ["uri", "stage", "error", "message", "path"]
#: after the hand-made inputs: the bundled samples too, exported to every format (a shared run)
SAMPLES_EXPORT_ALL = ("--input", str(SAMPLES), "--export", "all")


def _sample_files() -> list[str]:
    """The uris of the samples' inputs as the listing groups them (a card folder, a character YAML
    with its picture: one input each)."""
    from bunzai_codecs.inputs import walk

    return sorted(str(i.path) for i in walk(SAMPLES))


def _by_uri(run: Run, dataset: str) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for rec in run.lines(dataset):
        uri = rec["source"]["uri"] if dataset == "canonical" else rec["uri"]
        out.setdefault(uri, []).append(rec)
    return out


def check_accounting(run: Run, listed: set[str]) -> None:
    """Every listed input is an entity's source or a reject; one inventory row each; nothing else."""
    m = run.manifest
    assert m["balance"]["ok"], m["balance"]
    assert m["balance"]["listed"] == m["inputs"]["listed"] == len(listed)
    sources = {rec["source"]["uri"] for rec in run.lines("canonical")}
    rejected = {rec["uri"] for rec in run.lines("rejects") if rec["stage"] != "list"}
    assert sources | rejected == listed
    inventory = [row["uri"] for row in run.lines("inventory")]
    assert sorted(inventory) == sorted(listed)
    assert run.counters["inputs_listed"] == len(listed)


def test_samples_and_hand_made_inputs(shared: SharedRuns, tmp_path: Path) -> None:
    samples = _sample_files()
    inputs = shared.inputs
    run = normalize("--input", str(inputs), *SAMPLES_EXPORT_ALL, "--output", str(tmp_path / "out"))
    uri = lambda rel: f"{inputs}/{rel}"  # noqa: E731
    hand_made = {uri(rel) for rel in EXPECTED}
    check_accounting(run, hand_made | set(samples))

    # where each input stopped
    rows = {r["uri"]: r for r in run.lines("inventory")}
    assert len(rows[uri("cards/mira.vaud.json")]["entities"]) == 2
    assert rows[uri("cards/nested/rules.vaud.json")]["entities"][0].startswith("regex-")
    assert rows[uri("books/dupes.vaud.json")]["rejected"] == "validate"
    assert rows[uri("books/escape.vaud.json")]["rejected"] == "validate"
    assert rows[uri("broken/v2.vaud.json")]["rejected"] == "decode"
    for rel in ("broken/half.json", "broken/noise.bin", "broken/empty.json"):
        assert rows[uri(rel)]["rejected"] == "detect"
        assert rows[uri(rel)]["sha256"] and rows[uri(rel)]["format"] is None
    assert all(r["status"] == "new" for r in rows.values())

    # rejects: the five fields, typed errors with paths
    rejects = _by_uri(run, "rejects")
    assert all(list(r) == REJECT_KEYS for rs in rejects.values() for r in rs)
    dup = rejects[uri("books/dupes.vaud.json")][0]
    assert (dup["stage"], dup["error"], dup["path"]) == (
        "validate",
        "ValidationFailed",
        "$.body.entries[1].id",
    )
    assert "lorebook.entry-id-duplicate" in dup["message"]
    assert rejects[uri("books/escape.vaud.json")][0]["path"] == "$.id"
    v2 = rejects[uri("broken/v2.vaud.json")][0]
    assert (v2["stage"], v2["error"], v2["path"]) == ("decode", "Malformed", "$.schemaVersion")
    # clearly JSON but cut short: Malformed where it breaks (issue 32); random bytes: not recognised
    (half,) = rejects[uri("broken/half.json")]
    assert (half["stage"], half["error"], half["path"]) == ("detect", "Malformed", "@23")  # its end: byte 23
    assert [r["error"] for r in rejects[uri("broken/noise.bin")]] == ["NotRecognized"]
    for s in samples:  # the bundled samples are all good files
        assert s not in rejects, rejects[s]

    # canonical: vaud-json lines stamped with where this run read them, lint warnings riding along
    canonical = run.lines("canonical")
    for tree in canonical:
        e = from_tree(tree, fetch=run.blob)
        assert e.source is not None and e.source.uri in rows
        assert (
            e.source.sha256 == rows[e.source.uri]["sha256"]
            and e.source.format == rows[e.source.uri]["format"]
        )
    quiet = _by_uri(run, "canonical")[uri("books/quiet.vaud.json")][0]
    assert any(w.startswith("lorebook.entry-no-trigger:") for w in quiet["warnings"])

    # exports: one file per entity and requested format of its kind, named with the extension of
    # the container its bytes are (a PNG card .png, a .risum module .risum); nothing escapes
    files = run.files()
    exports = sorted(rel for rel in files if rel.startswith("exports/"))
    kinds = {t["id"]: t["kind"] for t in canonical}
    twins = {t["id"]: set(t.get("original") or ()) for t in canonical}
    expected = {  # a read-only format only for the entities read from it
        (f, eid)
        for eid, kind in kinds.items()
        for f in export_formats_for(kind, export_formats("all"))
        if not registry.get(f).read_only or f in twins[eid]
    }
    got = []
    for rel in exports:
        _, fmt, name = rel.split("/")
        eid, dot, _ = name.partition(".")
        codec = registry.get(fmt)
        container = codec.container_for_name(name)
        assert dot and container is not None, rel
        assert sniff_kind(files[rel]) == container.magic, rel
        got.append((fmt, eid))
    refused = [r for r in run.lines("rejects") if r["stage"] == "export"]
    assert set(got) <= expected and len(got) == len(set(got)) == len(expected) - len(refused)
    assert {f"exports/vaud-json/{eid}.vaud.json" for eid in kinds} <= set(exports)
    assert any(rel.endswith(".png") for rel in exports if rel.startswith("exports/sillytavern/"))
    assert not any("escaped" in rel for rel in files)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    # identical inputs give the same ids; their exports are the smallest uri's, never a race
    mira_id = rows[uri("cards/mira.vaud.json")]["entities"][0]
    assert rows[uri("cards/copy-of-mira.vaud.json")]["entities"][0] == mira_id
    winner = from_tree(orjson.loads(files[f"exports/vaud-json/{mira_id}.vaud.json"].splitlines()[0]))
    assert winner.source is not None and winner.source.uri == uri("cards/copy-of-mira.vaud.json")
    card = from_tree(
        orjson.loads(
            files[
                f"exports/vaud-json/{rows[uri('cards/mira.vaud.json')]['entities'][0]}.vaud.json"
            ].splitlines()[0]
        )
    )
    assert card.body.identity.name == "Mira"

    # fidelity: a decode row per input (decoded or rejected whole), a native row per input with
    # entities, a stability row per entity, a cross row per entity and other format of its kind
    fid = run.lines("fidelity")
    checks = Counter(r["check"] for r in fid)
    with_entities = {u for u, r in rows.items() if r["entities"]}
    assert checks["native"] == len(with_entities)
    assert checks["stability"] == len(canonical)
    decode = {r["uri"]: r for r in fid if r["check"] == "decode"}
    assert {u for u, r in decode.items() if r["status"] == "decoded"} == with_entities
    rejected_whole = {u for u, r in rows.items() if r["rejected"] in ("detect", "decode", "validate")}
    assert {u for u, r in decode.items() if r["status"] == "rejected"} == rejected_whole
    assert decode[uri("broken/noise.bin")]["error"]["type"] == "NotRecognized"
    assert len(decode[uri("broken/noise.bin")]["sha256"]) == 64
    same_format = [r for r in fid if r["source"] == "vaud-json" and r["check"] in ("native", "stability")]
    assert same_format and all(r["status"] == "lossless" for r in same_format)
    for kind in ("character", "lorebook"):
        # every other format of the kind but a read-only one (it writes no other format's entity)
        targets = {c.id for c in registry.for_kind(kind) if c.id != "vaud-json" and not c.read_only}  # type: ignore[arg-type]
        vaud = [r for r in fid if r["check"] == "cross" and r["kind"] == kind and r["source"] == "vaud-json"]
        assert vaud and {r["target"] for r in vaud} == targets
    assert not [r for r in fid if r["status"] == "error" and r["error"]["internal"]]
    assert not [r for r in run.lines("rejects") if r["stage"] == "roundtrip"]

    # the fidelity report, built from the same rows bunzai fidelity writes
    files = run.files()
    report = orjson.loads(files["fidelity/report.json"])
    assert report["inputs"]["files"] == len(decode) and report["inputs"]["rows"] == len(fid)
    assert report["inputs"]["rejected"] == len(rejected_whole)
    assert report["meta"]["roots"] == [str(inputs), str(SAMPLES)]
    assert report["kinds"]["character"]["entities"] == sum(1 for t in canonical if t["kind"] == "character")
    assert b'<table class="matrix" data-kind="character">' in files["fidelity/report.html"]
    assert run.manifest["outputs"]["fidelityReport"] == ["fidelity/report.json", "fidelity/report.html"]

    # the manifest's counts and the Beam counters say the same
    m = run.manifest
    assert m["counts"]["entities"]["total"] == len(canonical) == run.counters["entities_valid"]
    assert m["counts"]["rejects"]["total"] == len(run.lines("rejects")) == run.counters["rejects"]
    assert m["counts"]["rejects"]["byStage"] == dict(Counter(r["stage"] for r in run.lines("rejects")))
    assert m["counts"]["stages"]["validate"]["rejected"] == 2
    assert m["counts"]["exports"]["total"] == len(exports)
    assert m["options"]["storageOptions"] is None and m["runner"] == "FnApiRunner"
    assert not (tmp_path / "out" / ".bunzai-staging").exists()

    # same inputs, same outputs (the run other tests share, made in another folder)
    same_outputs(run, shared.run(*SAMPLES_EXPORT_ALL))


def test_multi_processing_runner_writes_the_same_files(shared: SharedRuns, tmp_path: Path) -> None:
    args = ("--input", str(shared.inputs), "--export", "vaud-json", "--shard-bytes", "2000")
    single = shared.run_argv(*args)
    cfg, options = parse(
        [
            "--direct_running_mode=multi_processing",
            "--direct_num_workers=2",
            *args,
            "--output",
            str(tmp_path / "multi"),
        ]
    )
    assert runner_name(options) == "DirectRunner"
    from jobs.normalize import run_pipeline
    from jobs.runner import written_manifest

    built, _ = run_pipeline(cfg, options)
    multi = Run(written_manifest(built.output), {}, cfg.output)
    assert len(multi.manifest["outputs"]["shards"]["canonical"]) > 1  # several shards, same bytes
    same_outputs(single, multi)


def test_rerun_into_the_same_folder_removes_what_it_did_not_write(inputs: Path, tmp_path: Path) -> None:
    out = str(tmp_path / "out")
    first = normalize("--input", str(inputs), "--output", out, "--export", "all", "--shard-bytes", "1000")
    assert len(first.manifest["outputs"]["shards"]["canonical"]) > 1
    (inputs / "cards" / "mira.vaud.json").unlink()
    second = normalize("--input", str(inputs), "--output", out)
    assert second.manifest["outputs"]["pruned"] > 0
    assert not any(rel.startswith("exports/") for rel in second.files())
    assert not (tmp_path / "out" / "exports").exists()  # nor their empty folders
    same_outputs(second, normalize("--input", str(inputs), "--output", str(tmp_path / "fresh")))


def test_oversized_missing_and_unmatched_inputs(
    inputs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (inputs / "big.vaud.json").write_bytes((inputs / "cards" / "mira.vaud.json").read_bytes() + b" " * 4000)
    args = [
        *PINNED,
        "--input",
        str(inputs),
        "--input",
        str(tmp_path / "missing"),
        "--input",
        str(inputs / "*.png"),
        "--output",
        str(tmp_path / "out"),
        "--max-file-bytes",
        "3000",
        "--allow-empty",  # without it, an input that matches nothing fails the run (test_commit.py)
    ]
    assert run_job(args) == 0
    printed = capsys.readouterr().out
    assert f"warning: {inputs}/*.png matched no file" in printed
    assert "REJECTS" in printed and str(tmp_path / "out" / "manifest.json") in printed
    m = orjson.loads((tmp_path / "out" / "manifest.json").read_bytes())
    assert m["balance"]["ok"]
    rejects = {r["uri"]: r for r in Run(m, {}, str(tmp_path / "out")).lines("rejects")}
    big = rejects[f"{inputs}/big.vaud.json"]
    assert (big["stage"], big["error"]) == ("read", "LimitExceeded")
    missing = rejects[str(tmp_path / "missing")]
    assert (missing["stage"], missing["error"]) == ("list", "FileNotFoundError")
    assert [p["matched"] for p in m["inputs"]["patterns"]] == [len(EXPECTED) + 1, 0, 0]


def test_the_defaults_read_the_samples_into_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cfg, options = parse([])
    assert cfg.inputs == (str(SAMPLES),) and cfg.output == "out" and cfg.export == ()
    assert runner_name(options) == "DirectRunner"
    run = normalize()
    assert run.output == "out" and (tmp_path / "out" / "manifest.json").is_file()
    check_accounting(run, set(_sample_files()))


def test_cli_subcommand_and_usage_errors(
    shared: SharedRuns, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bunzai_codecs.cli import main

    # the hand-made inputs: the subcommand's claim needs a run, not the samples' size
    assert main(["normalize", *PINNED, "--input", str(shared.inputs), "--output", str(tmp_path / "o")]) == 0
    assert "canonical entities (vaud-json lines)" in capsys.readouterr().out
    assert main(["normalize", "--help"]) == 0
    assert "--storage-options" in capsys.readouterr().out
    assert main(["normalize", "--export", "no-such-format"]) == 2
    assert "unknown format 'no-such-format'" in capsys.readouterr().err
    assert main(["normalize", "--storage-options", "{not json: sekrit"]) == 2
    assert "sekrit" not in capsys.readouterr().err


def test_storage_options_never_reach_beam_or_the_outputs(tmp_path: Path) -> None:
    secret = "sekrit-4c1d"
    argv = [
        *PINNED,
        "--input",
        str(SAMPLES),
        "--output",
        str(tmp_path / "o"),
        "--storage_options",
        f'{{"s3": {{"secret": "{secret}"}}}}',
    ]
    cfg, options = parse(argv)
    assert cfg.storage.options == {"s3": {"secret": secret}}
    assert secret not in repr(options.get_all_options()) and secret not in repr(cfg)
    run = normalize(
        "--input", str(SAMPLES), "--output", str(tmp_path / "o"), storage_options={"s3": {"secret": secret}}
    )
    assert run.manifest["options"]["storageOptions"] == "given (not recorded)"
    assert not any(secret.encode() in data for data in run.files().values())


@pytest.mark.skipif(corpus_root() is None, reason="shared corpus not present")
def test_corpus(tmp_path: Path) -> None:
    root = corpus_root()
    assert root is not None
    run = normalize("--input", str(root), "--output", str(tmp_path / "a"), "--export", "all")
    from bunzai_codecs.inputs import walk

    listed = {str(i.path) for i in walk(root)}  # the corpus's ooba Example.yaml takes Example.png
    check_accounting(run, listed)
    rows = {r["uri"]: r for r in run.lines("inventory")}
    for rel, want in expect_rows():
        row = rows[str(root / rel)]
        if want == "REJECT":
            assert row["entities"] == [], rel
        elif want in registry.CODECS:  # codecs still to land are accounted for, not checked
            assert row["format"] == want, (rel, row)
            assert row["entities"], (rel, row)
    same_outputs(run, normalize("--input", str(root), "--output", str(tmp_path / "b"), "--export", "all"))


def test_the_output_folder_is_never_read_back_as_input(tmp_path: Path) -> None:
    (tmp_path / "cards").mkdir()
    (tmp_path / "cards" / "aria.vaud.json").write_bytes((SAMPLES / "vaud" / "aria.vaud.json").read_bytes())
    first = normalize("--input", str(tmp_path), "--output", str(tmp_path / "out"))
    second = normalize("--input", str(tmp_path), "--output", str(tmp_path / "out"))
    assert first.manifest["inputs"]["listed"] == second.manifest["inputs"]["listed"] == 1
