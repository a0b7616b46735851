"""Storage, listing, atomic writes, the sorted shard sink and the options, without a full run."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import apache_beam as beam
import orjson
import pytest
from apache_beam.options.pipeline_options import PipelineOptions

from bunzai_codecs.core.entity import CanonicalEntity, Source
from bunzai_codecs.core.escrow import Twin
from bunzai_codecs.entities import LorebookBody
from bunzai_codecs.formats.vaud.codec import dumps
from pipeline.dataset.lines import line_meta
from pipeline.dataset.shards import GRID, ShardSpec, WriteShards, cell_offsets, line_of, plan, record
from pipeline.runtime.errors import UsageError
from pipeline.runtime.options import export_formats, parse
from pipeline.runtime.secrets import parse_storage_options, split_secrets
from pipeline.runtime.storage import InputSpec, Output, Storage, list_files, open_atomic, write_bytes


@pytest.mark.parametrize(
    ("url", "head", "tail"),
    [
        ("samples", "samples", ""),
        ("samples/**/*.json", "samples", ""),
        ("/data/cards/*.png", "/data/cards", ""),
        ("/*.png", "/", ""),
        ("*.png", "", ""),
        ("s3://bucket/dump/**", "s3://bucket/dump", ""),
        ("s3://bucket/*.json", "s3://bucket", ""),
        ("zip://**::s3://bucket/dump.zip", "zip://", "::s3://bucket/dump.zip"),
        ("zip://cards/*.png::/tmp/a.zip", "zip://cards", "::/tmp/a.zip"),
    ],
)
def test_input_spec_keeps_what_the_user_wrote(url: str, head: str, tail: str) -> None:
    spec = InputSpec.parse(url)
    assert (spec.head, spec.tail) == (head, tail)


def test_uris_join_the_head_and_the_path_below_it() -> None:
    spec = InputSpec.parse("zip://**::s3://b/d.zip")
    assert spec.uri_for("", "cards/a.png") == "zip://cards/a.png::s3://b/d.zip"
    spec = InputSpec.parse("s3://b/dump/**/*.json")
    assert spec.uri_for("b/dump", "b/dump/x/a.json") == "s3://b/dump/x/a.json"
    assert InputSpec.parse("s3://b/one.json").uri_for("b/one.json", "b/one.json") == "s3://b/one.json"


def test_storage_options_go_to_the_store_a_url_ends_on() -> None:
    flat = Storage({"endpoint_url": "http://x"})
    assert flat.kwargs_for("s3://b/k") == {"s3": {"endpoint_url": "http://x"}}
    assert flat.kwargs_for("zip://**::s3://b/d.zip") == {"s3": {"endpoint_url": "http://x"}}
    assert flat.kwargs_for("/local/path") == {} and flat.kwargs_for("out") == {}
    keyed = Storage({"s3": {"anon": True}, "gcs": {"token": "t"}})
    assert keyed.kwargs_for("gs://b/k") == {"gs": {"token": "t"}}  # gcsfs answers to gs and gcs
    assert keyed.kwargs_for("zip://**::s3://b/d.zip") == {"s3": {"anon": True}}
    assert "anon" not in repr(keyed) and "token" not in repr(keyed)


def test_listing_skips_hidden_names_and_honours_glob_depth(tmp_path: Path) -> None:
    for rel in ("a.json", "sub/b.json", "sub/deeper/c.json", ".hidden/d.json", "sub/.e.json", "f.png"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("{}")
    fs, _ = Storage().fs(str(tmp_path))

    def names(pattern: str, **kw: bool) -> list[str]:
        return sorted(os.path.relpath(p, tmp_path) for p, _ in list_files(fs, pattern, **kw))

    assert names(str(tmp_path)) == ["a.json", "f.png", "sub/b.json", "sub/deeper/c.json"]
    assert names(f"{tmp_path}/*.json") == ["a.json"]
    assert names(f"{tmp_path}/*/*.json") == ["sub/b.json"]
    assert names(f"{tmp_path}/**/*.json") == ["a.json", "sub/b.json", "sub/deeper/c.json"]
    assert names(f"{tmp_path}/f.png") == ["f.png"]
    assert ".hidden/d.json" in names(str(tmp_path), hidden=True)
    with pytest.raises(FileNotFoundError):
        list(list_files(fs, str(tmp_path / "missing")))


def test_writes_are_atomic(tmp_path: Path) -> None:
    fs, _ = Storage().fs(str(tmp_path))
    target = f"{tmp_path}/deep/x.txt"
    write_bytes(fs, target, b"one")
    with pytest.raises(RuntimeError), open_atomic(fs, target) as f:
        f.write(b"half of two")
        raise RuntimeError("interrupted")
    assert Path(target).read_bytes() == b"one"  # the old file, never half of the new one
    assert os.listdir(tmp_path / "deep") == ["x.txt"]  # no temporary left behind
    mem, _ = Storage().fs("memory://bunzai-test")
    with pytest.raises(RuntimeError), open_atomic(mem, "/bunzai-test/y.txt") as f:
        f.write(b"partial")
        raise RuntimeError("interrupted")
    assert not mem.exists("/bunzai-test/y.txt")


# -- shards --------------------------------------------------------------------------------------


def test_records_carry_their_line_and_sort_by_hash_then_key() -> None:
    rec = record("k", ["k", "u\tv"], b'{"a":"\\t"}')
    assert line_of(rec) == b'{"a":"\\t"}\n'
    recs = sorted(record(str(i), [str(i)], b"{}") for i in range(500))
    offsets = cell_offsets(recs)
    assert len(offsets) == GRID + 1 and offsets[0] == 0 and offsets[-1] == sum(map(len, recs))
    assert list(offsets) == sorted(offsets)
    for c in range(GRID):
        cell = b"".join(recs)[offsets[c] : offsets[c + 1]]
        assert all(int(r[:2], 16) == c for r in cell.splitlines())


def test_plan_sizes_shards_by_total_bytes() -> None:
    from pipeline.dataset.shards import RunInfo

    runs = [
        RunInfo("d", f"r{i}", 10, 1000, tuple(range(0, 1001, 1000 // GRID))[: GRID + 1]) for i in range(3)
    ]
    assert [t.count for t in plan(runs, ShardSpec("d"), 10_000)] == [1]
    tasks = plan(runs, ShardSpec("d"), 1000)
    assert [t.index for t in tasks] == [0, 1, 2] and {t.count for t in tasks} == {3}
    assert plan([], ShardSpec("d"), 1000)[0].ranges == ()  # an empty dataset still gets its file


@pytest.mark.parametrize("flush_bytes", [1, 300, 1 << 20])
def test_shards_do_not_depend_on_how_records_were_buffered(tmp_path: Path, flush_bytes: int) -> None:
    recs = [record(f"id{i}", [f"id{i}"], orjson.dumps({"i": i})) for i in range(200)]
    out = Output(str(tmp_path / str(flush_bytes)), Storage())
    with beam.Pipeline(options=PipelineOptions(["--runner=FnApiRunner"])) as p:
        _ = (
            p
            | beam.Create(recs)
            | WriteShards("d", ShardSpec("d"), out, "staging", target_bytes=3000, flush_bytes=flush_bytes)
        )
    files = sorted((tmp_path / str(flush_bytes) / "staging" / "out" / "d").iterdir())  # staged for the commit
    assert [f.name for f in files] == [f"part-{i:05d}-of-00003.jsonl" for i in range(3)]
    lines = [ln for f in files for ln in f.read_bytes().splitlines()]
    assert sorted(orjson.loads(ln)["i"] for ln in lines) == list(range(200))
    # one run or two hundred: the bytes are the records' global sort order, cut at hash cells
    assert b"".join(f.read_bytes() for f in files) == b"".join(line_of(r) for r in sorted(recs))
    assert not any((tmp_path / str(flush_bytes) / "staging" / "d").rglob("*.jsonl"))  # runs are not shards


def test_many_runs_merge_in_levels_to_the_same_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    from pipeline.dataset import shards

    # ~70 runs of three records, each run read by several shards: four levels of local merges
    monkeypatch.setattr(shards, "FAN_IN", 3)
    monkeypatch.setattr(shards, "FLUSH_RECORDS", 3)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    recs = [record(f"id{i}", [f"id{i}"], orjson.dumps({"i": i, "pad": "x" * (i % 7)})) for i in range(200)]
    recs.append(recs[5])  # an identical record twice: both kept
    out = Output(str(tmp_path / "out"), Storage())
    with beam.Pipeline(options=PipelineOptions(["--runner=FnApiRunner"])) as p:
        _ = p | beam.Create(recs) | WriteShards("d", ShardSpec("d"), out, "staging", target_bytes=3000)
    files = sorted((tmp_path / "out" / "staging" / "out" / "d").iterdir())
    assert len(files) >= 4
    assert b"".join(f.read_bytes() for f in files) == b"".join(line_of(r) for r in sorted(recs))
    assert list(scratch.iterdir()) == []  # the levels' files are gone


class _Units:
    """``shards.Units`` for a test: ``n`` units, a uri ``u<k>`` in unit ``k % n``."""

    def __init__(self, n: int) -> None:
        self.n = n

    def count(self, totals: Any) -> int:
        assert list(totals) == [(1, 1)]  # the side input arrives
        return self.n

    def of(self, uri: str, count: int) -> int:
        return int(uri[1:]) % count


def _canonical(n: int = 300) -> list[Any]:
    from pipeline.dataset.datasets import CanonicalLine

    # several lines per entity id and per uri, ids that share prefixes, lines of many sizes
    return [
        CanonicalLine(f"u{i % 37}", f"id{i % 150}", orjson.dumps({"i": i, "pad": "é" * (i % 11)}))
        for i in range(n)
    ]


def _write_by_unit(out: Path, producers: list[list[Any]], units: int, **kw: Any) -> dict[str, bytes]:
    """``producers`` (each in the order given: one bundle of the FnApiRunner each) written as the
    canonical dataset by unit; the staged files, by path under the staging folder."""
    from pipeline.dataset.datasets import DATASETS
    from pipeline.dataset.shards import WriteDatasets

    canonical = next(ds for ds in DATASETS if ds.name == "canonical")
    output = Output(str(out), Storage())
    with beam.Pipeline(options=PipelineOptions(["--runner=FnApiRunner"])) as p:
        totals = p | "Totals" >> beam.Create([(1, 1)])
        streams = {
            "canonical": {f"p{i}": p | f"P{i}" >> beam.Create(items) for i, items in enumerate(producers)}
        }
        _ = streams | WriteDatasets(
            (canonical,), output, "staging", target_bytes=10, units=_Units(units), totals=totals, **kw
        )
    return {
        f.relative_to(out / "staging").as_posix(): f.read_bytes()
        for f in sorted((out / "staging").rglob("*"))
        if f.is_file()
    }


def test_shards_by_unit_are_written_once_with_the_bytes_of_the_merge(tmp_path: Path) -> None:
    from pipeline.dataset.datasets import canonical_record

    items = _canonical()  # uris u0 ... u36
    by_unit = sorted(items, key=lambda c: int(c.uri[1:]) % 40)  # the spread hands a unit over whole
    once = _write_by_unit(tmp_path / "once", [by_unit], 40)
    # written once: every file is a final shard, one per unit (units 37-39 have no input: an
    # empty file each), nothing was staged as a run
    assert sorted(once) == [f"out/canonical/part-{i:05d}-of-00040.jsonl" for i in range(40)]
    for i in range(40):
        unit = [canonical_record(c.id, c.uri, c.line) for c in items if int(c.uri[1:]) % 40 == i]
        want = b"".join(line_of(rec) for rec in sorted(unit))
        assert once[f"out/canonical/part-{i:05d}-of-00040.jsonl"] == want
        assert bool(want) == (i < 37)
    # the same dataset from two producers (--since: fresh and carried lines) goes through sorted
    # runs and a merge per unit, in any order: the same files, byte for byte
    merged = _write_by_unit(tmp_path / "merged", [items[::2], items[1::2][::-1]], 40)
    assert {k: v for k, v in merged.items() if k.startswith("out/")} == once
    assert any(k.startswith("canonical/run-") for k in merged)


def test_a_unit_too_big_for_memory_is_sorted_in_pieces_to_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    items = sorted(_canonical(), key=lambda c: int(c.uri[1:]) % 3)
    whole = _write_by_unit(tmp_path / "whole", [items], 3)
    pieces = _write_by_unit(tmp_path / "pieces", [items], 3, spill_bytes=2000)
    assert pieces == whole and len(whole) == 3
    assert not any(scratch.rglob("*.bin"))  # the pieces are gone


def test_a_unit_that_comes_back_after_its_shard_is_written_fails(tmp_path: Path) -> None:
    items = _canonical(40)  # u0, u1, u2, ... u36, u0, ...: units interleaved, as no spread hands them
    with pytest.raises(Exception, match="came back after its shard was written"):
        _write_by_unit(tmp_path / "bad", [items], 4)


def test_records_sort_as_their_keys_then_lines() -> None:
    """A unit's lines are sorted in memory as ``(sort key, line)`` pairs: the order of the records
    (``record()``) that the runs and the merge sort as bytes."""
    import random

    from pipeline.dataset.shards import sort_key

    rng = random.Random(31)
    alphabet = ["a", "ab", "a]", 'a"', "a\t", "é", "\\", "[", ""]
    pairs = []
    for _ in range(3000):
        natural = [rng.choice(alphabet) + rng.choice(alphabet) for _ in range(rng.randint(1, 3))]
        key = sort_key(rng.choice(["k", "kk", natural[0]]), natural)
        line = orjson.dumps({"v": rng.choice(alphabet) * rng.randint(0, 3)})[: rng.randint(1, 12)]
        pairs.append((key, line))
    by_pair = [key + b"\t" + line + b"\n" for key, line in sorted(pairs)]
    assert by_pair == sorted(key + b"\t" + line + b"\n" for key, line in pairs)


# -- options -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["--storage-options", "{}", "--output", "o"],
        ["--storage-options={}", "--output", "o"],
        ["--storage_options", "{}", "--output", "o"],
    ],
)
def test_split_secrets_removes_every_spelling(argv: list[str]) -> None:
    rest, value = split_secrets(argv)
    assert rest == ["--output", "o"] and value == "{}"


def test_option_errors() -> None:
    with pytest.raises(UsageError, match="JSON object"):
        parse_storage_options("[1]")
    with pytest.raises(UsageError, match="not valid JSON"):
        parse_storage_options("{'single': 'quotes'}")
    with pytest.raises(UsageError, match="unknown format"):
        export_formats("vaud-json,nope")
    assert export_formats("vaud-json, vaud-json") == ("vaud-json",)
    with pytest.raises(UsageError, match="max-file-bytes"):
        parse(["--max-file-bytes", "0"])
    with pytest.raises(UsageError, match="not a chain"):
        parse(["--output", "zip://x::/tmp/a.zip"])


def test_line_meta_matches_a_full_parse() -> None:
    tricky = CanonicalEntity(
        kind="lorebook",
        id="lorebook-abc",
        body=LorebookBody.model_validate({"name": ',"id":"nope","source":{"uri":"fake"}', "entries": []}),
        original={"x": Twin.of({"source": {"uri": "inner"}, "id": "inner"})},
        source=Source(uri="s3://b/k.json", format="x", score=1.0, sha256="0" * 64, bytes=1),
        warnings=['a "source":{"uri":"w"} warning'],
    )
    line = dumps(tricky)
    meta = line_meta(line)
    assert (meta.id, meta.kind, meta.uri, meta.format) == ("lorebook-abc", "lorebook", "s3://b/k.json", "x")


def test_export_all_means_every_format_bunzai_can_write() -> None:
    from bunzai_codecs.core import registry
    from bunzai_codecs.core.codec import Codec
    from bunzai_codecs.core.entity import Decoded
    from bunzai_codecs.core.sniff import Sniff

    class ReadOnly(Codec):  # decodes, and does not override encode: bunzai cannot write it
        id = "read-only"
        kind = "character"

        def decode(self, s: Sniff) -> Decoded:
            return Decoded([])

    with registry.using({**registry.CODECS, "read-only": ReadOnly}):
        assert "read-only" not in export_formats("all") and "vaud-json" in export_formats("all")
        with pytest.raises(UsageError, match="cannot write"):
            export_formats("read-only")


def test_an_export_id_whose_meaning_moved_still_works_with_a_note(tmp_path: Path) -> None:
    """risu-regex wrote .risum modules in bunzai 0.1.0; modules are risu-module now. The old id is
    still a format (Risu's regex export), and naming it in --export prints the deprecation note for
    a release; nothing the user did not type does (issue 32): not --export all, not what a --since
    run exported, and nothing under --quiet."""
    import jobs.normalize
    from pipeline.dataset.manifest import MANIFEST_VERSION
    from pipeline.normalize.since import load_previous

    cfg, _ = parse(["--export", "risu-regex,vaud-json", "--output", str(tmp_path / "out")])
    assert cfg.export == ("risu-regex", "vaud-json")
    assert len(cfg.notes) == 1 and "risu-module" in cfg.notes[0]
    assert parse(["--export", "all", "--output", str(tmp_path / "out")])[0].notes == ()
    assert parse(["--export", "risu-module", "--output", str(tmp_path / "out")])[0].notes == ()

    manifest = tmp_path / "prev" / "manifest.json"
    manifest.parent.mkdir()
    manifest.write_bytes(
        orjson.dumps(
            {
                "manifestVersion": MANIFEST_VERSION,
                "bunzai": {"codecFingerprint": "f"},
                "options": {"export": ["risu-regex"], "maxFileBytes": cfg.max_file_bytes, "fidelity": "full"},
                "outputs": {
                    "shards": {
                        "inventory": [{"path": "inventory/part-00000-of-00001.jsonl"}],
                        "index": [{"path": "index/part-00000-of-00001.parquet"}],
                    }
                },
            }
        )
    )
    since, _ = parse(["--export", "risu-regex", "--since", str(manifest), "--output", str(tmp_path / "o")])
    prev = load_previous(since, "f")
    assert prev is not None and prev.honoured
    assert jobs.normalize.notes(since) == list(cfg.notes)
    for argv in (["--export", "all"], ["--export", "risu-regex", "-q"]):
        again, _ = parse([*argv, "--since", str(manifest), "--output", str(tmp_path / "o")])
        assert load_previous(again, "f") is not None and jobs.normalize.notes(again) == []


def test_read_lines_reads_ranges_and_never_mistakes_a_short_read_for_the_end(tmp_path: Path) -> None:
    """Regression (fault tests): staged runs and previous shards were read through ``fs.open``;
    after a transient S3 error (503, dropped connection) s3fs's file object returns ``b""``, which
    read as the end of the file. ``read_lines`` reads byte ranges with ``cat_file`` (which retries)
    and calls a short range an OSError."""
    import fsspec

    from pipeline.runtime.storage import read_lines

    fs = fsspec.filesystem("file")
    p = tmp_path / "run.bin"
    p.write_bytes(b"one\ntwo\nthree\nlast-without-newline")
    path = str(p)
    assert list(read_lines(fs, path, block=3)) == [b"one\n", b"two\n", b"three\n", b"last-without-newline"]
    assert list(read_lines(fs, path, 4, 14, block=5)) == [b"two\n", b"three\n"]

    class Flaky(type(fs)):  # type: ignore[misc]
        def cat_file(self, path: str, start: int | None = None, end: int | None = None, **kw: Any) -> bytes:
            return b"" if start else super().cat_file(path, start=start, end=end, **kw)

    with pytest.raises(OSError, match="expected"):
        list(read_lines(Flaky(), path, block=4))


def test_read_bounded_reads_past_a_stale_listed_size(tmp_path: Path) -> None:
    import fsspec

    from pipeline.runtime.storage import read_bounded

    fs = fsspec.filesystem("file")
    p = tmp_path / "f.json"
    p.write_bytes(b"x" * 100)
    path = str(p)
    assert read_bounded(fs, path, 1000, 100) == b"x" * 100
    assert read_bounded(fs, path, 1000, 40) == b"x" * 100  # grew since it was listed
    assert read_bounded(fs, path, 1000, 400) == b"x" * 100  # shrank
    assert read_bounded(fs, path, 1000, None) == b"x" * 100
    with pytest.raises(OverflowError):
        read_bounded(fs, path, 99, 40)  # grew past the limit
    with pytest.raises(OverflowError):
        read_bounded(fs, path, 99, 100)


def test_the_merge_read_ahead_is_bounded_whatever_the_number_of_runs() -> None:
    from pipeline.dataset.shards import MERGE_BUDGET, merge_block

    assert merge_block(1) == 1 << 20 and merge_block(0) == 1 << 20
    for runs in (32, 56, 170, 500):
        assert runs * merge_block(runs) <= MERGE_BUDGET
    assert merge_block(100_000) == 64 << 10  # a floor: reads stay a sensible size


@pytest.mark.parametrize("where", ["local", "memory"])
def test_moves_and_deletes_take_done_as_done(where: str, tmp_path: Path) -> None:
    """A move is a rename on a disk and a copy then a delete on any other store (``memory://``
    stands for one here); asked again once done (a retried bundle), it is done, not an error; a
    move of nothing to nowhere still fails. A delete of what is gone reports it, quietly."""
    import uuid

    import fsspec

    from pipeline.runtime.storage import move_file, remove_file, remove_tree

    if where == "local":
        fs, root = fsspec.filesystem("file"), str(tmp_path)
    else:
        fs, root = fsspec.filesystem("memory"), f"/bunzai-move-{uuid.uuid4().hex}"
    src, dst = f"{root}/.staging/run/out/a/b.jsonl", f"{root}/a/b.jsonl"
    write_bytes(fs, src, b"new")
    write_bytes(fs, dst, b"old")
    move_file(fs, src, dst)
    assert fs.cat_file(dst) == b"new" and not fs.exists(src)
    move_file(fs, src, dst)  # again: the source is gone, its destination there
    assert fs.cat_file(dst) == b"new"
    with pytest.raises(FileNotFoundError):
        move_file(fs, f"{root}/nothing", f"{root}/nowhere")
    assert remove_file(fs, dst) and not fs.exists(dst)
    assert remove_file(fs, dst) is False
    remove_tree(fs, f"{root}/.staging")
    remove_tree(fs, f"{root}/.staging")  # gone already: not an error
    assert not fs.exists(f"{root}/.staging/run/out")
