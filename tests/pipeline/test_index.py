"""The entity index (pipeline/dataset/index/): the row builder, the Parquet files, and the index of a whole
run queried with DuckDB as a hub would, against the canonical JSONL and the manifest."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import orjson
import pyarrow.parquet as pq
import pytest

from bunzai_codecs import read
from bunzai_codecs.core.entity import CanonicalEntity, Source, canonical_id
from bunzai_codecs.entities import CharacterBody, LorebookBody, PresetBody, RegexSetBody
from jobs.normalize import run as run_job
from pipeline.dataset.index.bigquery import bigquery_schema, check_bigquery_table
from pipeline.dataset.index.docs import json_schema
from pipeline.dataset.index.parquet import SCHEMA, read_rows, write_parquet
from pipeline.dataset.index.rows import COLUMNS, index_row, lint_codes
from pipeline.runtime.errors import UsageError
from pipeline.runtime.options import parse
from tests.conftest import corpus_root
from tests.formats.helpers import inputs_below

from .conftest import PINNED, SAMPLES, SAMPLES_AND_CORPUS_NATIVE, Run, SharedRuns, normalize

duckdb = pytest.importorskip("duckdb", reason="the test extra installs duckdb (make test)")

SRC = Source(uri="s3://cards/a.png", format="sillytavern", score=1.0, sha256="ab" * 32, bytes=1234)


def _stamped(kind: str, body: Any, **kw: Any) -> CanonicalEntity:
    return CanonicalEntity(kind=kind, id=canonical_id(kind, "cd" * 32), body=body, source=SRC, **kw)  # type: ignore[arg-type]


# -- the row -----------------------------------------------------------------------------------------


def test_row_of_a_character() -> None:
    body = CharacterBody.model_validate(
        {
            "identity": {"name": "Mira", "description": "A sailor."},
            "greetings": {
                "firstMessage": "Hi.",
                "alternateGreetings": [{"text": "Ahoy."}, {"text": "Yes?"}],
                "groupOnlyGreetings": [{"text": "All hands."}],
            },
            "attribution": {"creator": "anon"},
            "discovery": {"tags": ["sea", "oc"]},
            "media": {
                "portrait": {"role": "portrait", "ref": "embeded://a.png"},
                "assets": [{"role": "emotion", "ref": "embeded://b.png", "name": "joy"}],
            },
        }
    )
    e = _stamped(
        "character",
        body,
        links={"knowledgeRefs": ["lorebook-1"]},
        warnings=[
            "$.data.extensions: kept as is",
            "character.name-empty: the character has no name ($.body.identity.name)",
            "links.rejected: linked lorebook lorebook-1 failed validation",
        ],
    )
    row = index_row(e, native="lossless")
    assert row == {
        "id": e.id,
        "kind": "character",
        "name": "Mira",
        "creator": "anon",
        "tags": ["sea", "oc"],
        "links": ["lorebook-1"],
        "source_uri": "s3://cards/a.png",
        "source_format": "sillytavern",
        "source_sha256": "ab" * 32,
        "source_bytes": 1234,
        "greetings": 4,
        "lore_entries": None,
        "regex_rules": None,
        "prompts": None,
        "assets": 2,
        # Mira + A sailor. + Hi. + Ahoy. + Yes? + All hands. + anon + sea + oc + two refs + joy
        # + the roles portrait, emotion
        "text_chars": 4 + 9 + 3 + 5 + 4 + 10 + 4 + 3 + 2 + 15 + 15 + 3 + 8 + 7,
        "warnings": 3,
        "lint_warnings": 2,
        "lint_codes": ["character.name-empty", "links.rejected"],
        "native_roundtrip": "lossless",
    }
    assert list(row) == [c.name for c in COLUMNS]


def test_rows_of_the_other_kinds_count_their_own_parts() -> None:
    book = _stamped(
        "lorebook",
        LorebookBody.model_validate(
            {"name": "Harbor", "tags": ["place"], "entries": [{"id": "0", "content": "Fog."}, {"id": "1"}]}
        ),
    )
    rules = _stamped("regex", RegexSetBody.model_validate({"name": "tidy", "rules": [{"id": "r0"}]}))
    preset = _stamped(
        "preset",
        PresetBody.model_validate(
            {
                "name": "p",
                "attribution": {"creator": "me"},
                "prompts": [{"id": "a"}, {"id": "b"}, {"id": "c"}],
            }
        ),
    )
    b, r, p = (index_row(x, native=None) for x in (book, rules, preset))
    assert (b["lore_entries"], b["tags"], b["creator"], b["greetings"]) == (2, ["place"], None, None)
    assert (r["regex_rules"], r["lore_entries"], r["name"], r["tags"]) == (1, None, "tidy", [])
    assert (p["prompts"], p["creator"], p["assets"], p["native_roundtrip"]) == (3, "me", 0, None)


def test_row_of_every_sample_entity_fits_the_schema() -> None:
    rows = []
    for path, name, data in inputs_below(SAMPLES):
        for e in read(data, name).entities:
            e.source = Source(uri=str(path), format="x", score=1.0, sha256="0" * 64, bytes=1)
            rows.append(index_row(e, native="lossless"))
    assert len(rows) > 20
    f = io.BytesIO()
    write_parquet(rows, f)
    table = pq.read_table(io.BytesIO(f.getvalue()))
    assert table.schema.equals(SCHEMA, check_metadata=True)
    assert table.to_pylist() == rows
    assert {r["kind"] for r in rows} == {"character", "lorebook", "regex", "persona", "preset"}


def test_an_unstamped_entity_has_no_row() -> None:
    e = CanonicalEntity(kind="regex", id="regex-x", body=RegexSetBody())
    with pytest.raises(ValueError, match="no source"):
        index_row(e, native=None)


def test_text_chars_counts_every_string_inside_a_body_whatever_its_container() -> None:
    """The walk looks values up by exact type: subclasses (a str enum, a named tuple, an ordered
    dict), models inside dicts inside lists, and values that hold no text are treated as the
    general checks treat them."""
    import enum
    from collections import OrderedDict, namedtuple

    from pydantic import BaseModel

    from pipeline.dataset.index.rows import _text_chars

    class Mood(enum.StrEnum):
        CALM = "calm"  # 4

    Pair = namedtuple("Pair", "a b")

    class Inner(BaseModel):
        text: str = "inner"  # 5
        n: int = 3
        tags: tuple[str, ...] = ("ab", "c")  # 3

    class Outer(BaseModel):
        name: str = "ü名"  # 2 code points
        inner: Inner = Inner()
        items: list[Any] = []

    body = Outer(
        items=[
            {"k": "vvv", "m": Inner(text="xy"), "none": None, "f": 1.5, "b": True},  # 3 + (2 + 3)
            Pair("pq", [Mood.CALM, b"bytes are not text", 7]),  # 2 + 4
            OrderedDict(z="zzzz"),  # 4
            "",
        ]
    )
    assert _text_chars(body) == 2 + (5 + 3) + 3 + (2 + 3) + 2 + 4 + 4
    assert _text_chars("plain") == 5
    assert _text_chars(None) == 0 and _text_chars(12) == 0


def test_lint_codes_are_rule_ids_only() -> None:
    assert lint_codes(
        [
            "lorebook.entry-no-trigger: entry 0 has no trigger ($.body.entries[0])",
            "$.data.name: not a string",
            "made.up-rule: looks like one, is not",
            "card.json spec is 'x'; Risu only imports chara_card_v3",
        ]
    ) == ["lorebook.entry-no-trigger"]


# -- the file ----------------------------------------------------------------------------------------


def test_parquet_bytes_depend_on_the_rows_only(tmp_path: Path) -> None:
    rows = [
        index_row(_stamped("regex", RegexSetBody.model_validate({"name": f"r{i}"})), native=None)
        for i in range(3)
    ]
    a, b = io.BytesIO(), io.BytesIO()
    assert write_parquet(rows, a)[0] == 3
    write_parquet(rows, b)
    assert a.getvalue() == b.getvalue()
    meta = pq.ParquetFile(io.BytesIO(a.getvalue())).metadata
    assert meta.metadata[b"bunzai.index.version"] == b"1"
    empty = io.BytesIO()
    assert write_parquet([], empty)[0] == 0
    (tmp_path / "e.parquet").write_bytes(empty.getvalue())
    assert pq.read_table(tmp_path / "e.parquet").num_rows == 0
    import fsspec

    assert list(read_rows(fsspec.filesystem("file"), str(tmp_path / "e.parquet"))) == []


def test_published_schemas_follow_the_columns() -> None:
    names = [c.name for c in COLUMNS]
    assert SCHEMA.names == names
    assert [f["name"] for f in bigquery_schema()["fields"]] == names
    assert list(json_schema()["properties"]) == names
    modes = {f["name"]: f["mode"] for f in bigquery_schema()["fields"]}
    assert modes["tags"] == "REPEATED" and modes["creator"] == "NULLABLE" and modes["id"] == "REQUIRED"


# -- --bigquery-table --------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ["my-project:bunzai.entities", "example.com:my-project:ds_1.t-2"])
def test_bigquery_table_specs_accepted(spec: str) -> None:
    assert check_bigquery_table(spec) == spec


@pytest.mark.parametrize(
    "spec",
    ["bunzai.entities", "my-project.bunzai.entities", "my-project:bunzai", "P:d.t", "my-project:a.b.c"],
)
def test_malformed_bigquery_table_is_a_usage_error(spec: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UsageError, match=r"is not PROJECT:DATASET\.TABLE"):
        parse([*PINNED, "--bigquery-table", spec, "--temp_location=gs://bucket/tmp"])
    assert run_job([*PINNED, "--bigquery-table", spec, "--input", str(SAMPLES)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "PROJECT:DATASET.TABLE" in err[0], err


def test_bigquery_table_needs_a_gcs_temp_location_locally() -> None:
    with pytest.raises(UsageError, match="gs:// --temp_location"):
        parse([*PINNED, "--bigquery-table", "my-project:bunzai.entities"])
    cfg, _ = parse([*PINNED, "--bigquery_table=my-project:bunzai.entities", "--temp_location=gs://b/tmp"])
    assert cfg.bigquery_table == "my-project:bunzai.entities"
    assert cfg.public()["bigqueryTable"] == "my-project:bunzai.entities"


# -- a whole run, queried ----------------------------------------------------------------------------


def _index_files(run: Run) -> dict[str, bytes]:
    return {k: v for k, v in run.files().items() if k.startswith("index/")}


def _kind_counts(con: Any, sql: str) -> dict[str, int]:
    return {k: n for k, n in con.execute(sql).fetchall()}


def check_index(run: Run) -> None:
    """The index agrees with the manifest and the canonical lines, in SQL over the output folder."""
    m = run.manifest
    out = Path(run.output)
    listed = m["outputs"]["shards"]["index"]
    files = _index_files(run)
    assert sorted(files) == sorted(s["path"] for s in listed)
    assert all(p.endswith(".parquet") for p in files)
    import hashlib

    for s in listed:  # accounted in the manifest like every other shard
        data = files[s["path"]]
        assert (len(data), hashlib.sha256(data).hexdigest()) == (s["bytes"], s["sha256"])
    assert sum(s["records"] for s in listed) == m["counts"]["entities"]["total"]

    con = duckdb.connect()
    by_kind = m["counts"]["entities"]["byKind"]
    index = _kind_counts(
        con, f"SELECT kind, count(*) FROM read_parquet('{out}/index/*.parquet') GROUP BY kind"
    )
    lines = _kind_counts(
        con,
        f"SELECT kind, count(*) FROM read_json('{out}/canonical/*.jsonl', format='newline_delimited', "
        "columns={'kind': 'VARCHAR', 'id': 'VARCHAR'}) GROUP BY kind",  # lean lines: the default bound
    )
    assert index == lines == by_kind, (index, lines, by_kind)
    # one row per canonical line, the same ids and sources
    joined = con.execute(
        f"SELECT count(*) FROM read_parquet('{out}/index/*.parquet') i JOIN read_json('{out}/canonical/*.jsonl', "
        "format='newline_delimited', columns={'id': 'VARCHAR', 'source': 'STRUCT(uri VARCHAR)'}) c "
        "ON i.id = c.id AND i.source_uri = c.source.uri"
    ).fetchone()
    assert joined is not None and joined[0] == m["counts"]["entities"]["total"]
    by_format = _kind_counts(
        con, f"SELECT source_format, count(*) FROM read_parquet('{out}/index/*.parquet') GROUP BY 1"
    )
    assert by_format == m["counts"]["entities"]["byFormat"]


@pytest.mark.slow  # runs the pipeline (or builds the whole graph)
def test_index_of_samples_and_corpus_matches_the_manifest(shared: SharedRuns, tmp_path: Path) -> None:
    args = SAMPLES_AND_CORPUS_NATIVE
    root = corpus_root()
    run = shared.run_argv(*args)  # shared with test_blobs.py's bound on canonical lines
    check_index(run)
    index = f"{run.output}/index/*.parquet"
    con = duckdb.connect()
    statuses = dict(
        con.execute(f"SELECT native_roundtrip, count(*) FROM read_parquet('{index}') GROUP BY 1").fetchall()
    )
    assert None not in statuses and set(statuses) <= {"lossless", "expected", "unexpected", "error"}
    # the native rows the fidelity dataset holds say the same, input by input
    native = {r["uri"]: r["status"] for r in run.lines("fidelity") if r["check"] == "native"}
    rows = con.execute(f"SELECT source_uri, native_roundtrip FROM read_parquet('{index}')")
    for uri, status in rows.fetchall():
        if uri in native:  # an input whose primary entity failed validation has no native row
            assert native[uri] == status, uri
    if root is not None:  # the corpus part: its entities are in the index too
        n = con.execute(
            f"SELECT count(*) FROM read_parquet('{index}') WHERE starts_with(source_uri, ?)",
            [str(root) + os.sep],
        ).fetchone()
        assert n is not None and n[0] > 0
    # built twice: the same bytes
    again = normalize(*args, "--output", str(tmp_path / "b"))
    assert _index_files(again) == _index_files(run)


@pytest.mark.slow  # runs the pipeline (or builds the whole graph)
def test_index_without_fidelity_checks(tmp_path: Path) -> None:
    run = normalize("--input", str(SAMPLES), "--output", str(tmp_path / "o"), "--fidelity", "off")
    check_index(run)
    rows = [
        r
        for f in sorted(Path(tmp_path / "o" / "index").glob("*.parquet"))
        for r in pq.read_table(f).to_pylist()
    ]
    assert rows and all(r["native_roundtrip"] is None for r in rows)
    summary_rows = orjson.loads((tmp_path / "o" / "manifest.json").read_bytes())["outputs"]["shards"]["index"]
    assert summary_rows[0]["path"] == "index/part-00000-of-00001.parquet"


# -- BigQuery on Dataflow, translated (no network) -------------------------------------------------


@pytest.mark.slow  # runs the pipeline (or builds the whole graph)
def test_dataflow_dry_run_loads_the_committed_index_into_bigquery() -> None:
    pytest.importorskip("apache_beam.runners.dataflow.internal.apiclient", reason="needs apache-beam[gcp]")
    from apache_beam.internal import pickler
    from apache_beam.io.gcp.bigquery import BigQueryDisposition
    from apache_beam.portability import common_urns
    from apache_beam.portability.api import beam_runner_api_pb2

    from .graphs import DRY_RUN, build_graph, full_argv

    p = build_graph([*DRY_RUN, *full_argv(), "--bigquery-table", "bunzai-dry-run:bunzai.entities"])
    p.run()  # --dry_run: translated, not submitted
    proto = p.runner.proto_pipeline
    root = proto.components.transforms[proto.root_transform_ids[0]]
    top = {proto.components.transforms[t].unique_name: t for t in root.subtransforms}
    assert {"WriteOutputs", "Finish", "BigQuery"} <= set(top)
    fns: dict[str, Any] = {}
    for t in proto.components.transforms.values():
        if t.spec.urn == common_urns.primitives.PAR_DO.urn:
            payload = beam_runner_api_pb2.ParDoPayload.FromString(t.spec.payload)
            if payload.do_fn.urn == "beam:dofn:pickled_python_info:v1":
                fns[t.unique_name] = (pickler.loads(payload.do_fn.payload)[0], payload)
    # the rows are read from the committed files, after the commit (its manifest is a side input)
    after = [(n, f) for n, f in fns.items() if n.startswith("BigQuery/AfterCommit")]
    assert after and type(after[0][1][0]).__name__ == "_CommittedRows"
    assert len(after[0][1][1].side_inputs) == 1
    # Beam's BigQuery sink, file loads, into the table, with the index's schema, replacing the rows
    loads = [
        f for n, (f, _) in fns.items() if n.startswith("BigQuery/Load/") and n.endswith("(TriggerLoadJobs)")
    ]
    assert loads, sorted(n for n in fns if n.startswith("BigQuery"))
    for fn in loads:
        assert fn.schema == bigquery_schema()
    # the load into the table replaces its rows (the load into temporary tables, for a large index,
    # has no disposition: their copy job has it)
    copies = [
        f for n, (f, _) in fns.items() if n.startswith("BigQuery/Load/") and n.endswith("(TriggerCopyJobs)")
    ]
    dispositions = {f.write_disposition for f in [*loads, *copies]}
    assert dispositions == {None, BigQueryDisposition.WRITE_TRUNCATE}, dispositions
    assert any(n.startswith("BigQuery/Load/BigQueryBatchFileLoads") for n in fns)
    # without the option: no BigQuery step
    plain = build_graph([*DRY_RUN, *full_argv(since=False)])
    plain.run()
    names = {t.unique_name for t in plain.runner.proto_pipeline.components.transforms.values()}
    assert not any(n.startswith("BigQuery") for n in names)


def test_deploy_readme_gives_the_bigquery_schema() -> None:
    text = (Path(__file__).resolve().parents[2] / "deploy" / "README.md").read_text(encoding="utf-8")
    for f in bigquery_schema()["fields"]:
        assert f"| `{f['name']}` | {f['type']} | {f['mode']} | {f['description']} |" in text, f["name"]


def test_a_previous_run_without_an_index_is_not_reused() -> None:
    """Its rows cannot be carried: the run processes everything (and indexes it)."""
    import fsspec

    from pipeline.normalize.since import codec_fingerprint, load_previous

    from .graphs import previous_manifest

    url = previous_manifest()
    cfg, _ = parse([*PINNED, "--input", str(SAMPLES), "--since", url])
    prev = load_previous(cfg, codec_fingerprint())
    assert prev is not None and prev.honoured, prev
    fs = fsspec.filesystem("memory")
    m = orjson.loads(fs.cat_file(url))
    del m["outputs"]["shards"]["index"]
    fs.pipe_file(url, orjson.dumps(m))
    prev = load_previous(cfg, codec_fingerprint())
    assert prev is not None and not prev.honoured
    assert prev.reason == "that manifest lists no entity index"


class _FailingLoad:
    """Stands in for ``LoadBigQuery``: reads the committed rows as it does, counts them, then fails
    the way a refused load job would."""

    def __init__(self, table: str, output: Any, committed: Any) -> None:
        self.output, self.committed = output, committed

    def __rrshift__(self, label: str) -> Any:
        import apache_beam as beam

        from pipeline.dataset.index.bigquery import _CommittedRows

        def fail(n: int) -> None:
            raise RuntimeError(f"BigQuery refused the load of {n} rows")

        output, committed = self.output, self.committed

        class Fake(beam.PTransform):
            def expand(self, shards: Any) -> Any:
                return (
                    shards
                    | beam.Filter(lambda s: s.dataset == "index")
                    | beam.ParDo(_CommittedRows(output), beam.pvalue.AsSingleton(committed))
                    | beam.combiners.Count.Globally()
                    | beam.Map(fail)
                )

        return label >> Fake()


@pytest.mark.slow  # runs the pipeline (or builds the whole graph)
def test_a_failed_load_after_the_commit_says_the_run_is_committed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import pipeline.normalize.graph

    monkeypatch.setattr(pipeline.normalize.graph, "LoadBigQuery", _FailingLoad)
    out = tmp_path / "o"
    argv = [*PINNED, "-q", "--input", str(SAMPLES), "--output", str(out), "--fidelity", "off"]
    code = run_job([*argv, "--bigquery-table", "my-project:bunzai.entities", "--temp_location=gs://b/tmp"])
    err = capsys.readouterr().err.strip().splitlines()
    manifest = orjson.loads((out / "manifest.json").read_bytes())
    total = manifest["counts"]["entities"]["total"]
    assert code == 4
    assert len(err) == 1 and "the run is committed" in err[0], err
    assert f"BigQuery refused the load of {total} rows" in err[0]  # every committed row reached it
    assert manifest["options"]["bigqueryTable"] == "my-project:bunzai.entities"
    assert sorted(p.name for p in (out / "index").iterdir()) == ["part-00000-of-00001.parquet"]
