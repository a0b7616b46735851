"""The normalize job on Dataflow, tested without Dataflow and without a network.

- The DataflowRunner translates the full graph (``--dry_run``: Beam builds the job it would submit
  and stops): the job holds the graph's named stages with their DoFns, runs in the bunzai image with
  nothing staged, and its options (shown on the job page) hold no storage option.
- Every DoFn and PTransform of the graph pickles and unpickles with each pickler Beam offers, alone
  and as Beam ships the graph (``to_runner_api`` / ``from_runner_api``).
- The options that keep local-only things off Dataflow; ``gcp-secret:`` references; gs:// -> gcsfs.

The translation tests need ``apache-beam[gcp]`` (the ``gcp`` extra; ``make test`` installs it) and
skip without it.
"""

from __future__ import annotations

import os
import pickle
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apache_beam as beam
import orjson
import pytest
from apache_beam.internal import pickler
from apache_beam.options.pipeline_options import PipelineOptions, SetupOptions
from apache_beam.portability import common_urns
from apache_beam.portability.api import beam_runner_api_pb2

import pipeline.runtime.secrets as secrets
from pipeline.runtime.errors import UsageError
from pipeline.runtime.options import export_formats, parse, submits_only
from pipeline.runtime.secrets import literal_secrets, resolve_secrets
from pipeline.runtime.storage import Storage, is_local_url

from .graphs import DRY_RUN, IMAGE, SECRET_REF, applied_transforms, build_graph, full_argv

try:  # the DataflowRunner's job building needs the gcp extra (google-cloud-dataflow-client, ...)
    from apache_beam.runners.dataflow.internal import apiclient
except ImportError:  # pragma: no cover - depends on the environment
    apiclient = None

needs_dataflow = pytest.mark.skipif(
    apiclient is None, reason="needs apache-beam[gcp]: pip install -e '.[gcp]' (make test installs it)"
)

ROOT = Path(__file__).resolve().parents[2]

#: the graph's steps (pipeline/normalize/graph.py) and their named stages, as the job must hold them; with
#: --since, also these
STAGES = [
    "ListInputs",
    "ListInputs/Inputs",
    "ListInputs/Files",
    "ListInputs/PairWithPrevious",
    "ListInputs/Pack",
    "ListInputs/Spread",
    "Normalize",
    "Normalize/ReadBytes",
    "Normalize/Detect",
    "Normalize/Decode",
    "Normalize/Validate",
    "Normalize/CanonicalLines",
    "Normalize/RoundTrip",
    "Normalize/Export",
    "Normalize/StoreBlobs",  # each big media file / escrow blob staged once (pipeline/dataset/blobs.py)
    "WriteOutputs",
    "WriteOutputs/WriteDatasets",  # every sharded dataset: one plan, one merge (pipeline/dataset/shards.py)
    "WriteOutputs/WriteDatasets/WriteCanonical",  # a shard per unit of inputs, written once
    "WriteOutputs/WriteDatasets/WriteFidelity",
    "WriteOutputs/WriteDatasets/WriteRejects",
    "WriteOutputs/WriteDatasets/WriteInventory",
    "WriteOutputs/WriteDatasets/WriteIndex",  # the entity index: sorted, then Parquet (pipeline/dataset/index/)
    "WriteOutputs/WriteDatasets/Merge",
    "WriteOutputs/CommitExports",
    "WriteOutputs/Blobs",
    "Finish",
    "Finish/Balance",
    "Finish/Count",
    "Finish/Count/Sum",
    "Finish/Commit",  # the verdict, then the moves into place, Prune and the manifest (pipeline/dataset/commit.py)
]
SINCE_STAGES = [
    "ListInputs/ReadPrevInventory",
    "CarryForward",
    "CarryForward/NotCarried",
    "CarryForward/CarriedExports",
    "CarryForward/CarryIndex",
]
#: the stages whose work runs in bunzai's own DoFns on the workers (which classes is the graph's
#: business: the tests check that each stage ships one of ours, and that all of them pickle)
WORKER_STAGES = [
    "ListInputs/Files",
    "Normalize/ReadBytes",
    "Normalize/Detect",
    "Normalize/Decode",
    "Normalize/Validate",
    "Normalize/RoundTrip",
    "Normalize/Export",
    "WriteOutputs/WriteDatasets/WriteCanonical",
    "WriteOutputs/WriteDatasets/WriteInventory",
    "WriteOutputs/WriteDatasets/WriteIndex",
    "WriteOutputs/WriteDatasets/Merge",
    "ListInputs/Spread/ByUnit",
    "WriteOutputs/CommitExports",
    "Normalize/StoreBlobs",
    "WriteOutputs/Blobs",
    "Finish/Commit",
    "CarryForward",
]


def ours(cls: type) -> bool:
    """A class of bunzai's packages (not Beam's wrappers of a function)."""
    return cls.__module__.split(".")[0] in ("pipeline", "jobs", "bunzai_codecs")


def check_worker_stages(dofns: dict[str, set[type]]) -> None:
    for stage in WORKER_STAGES:
        assert any(ours(c) for c in dofns.get(stage, ())), (stage, dofns.get(stage))


def _refuse_network(monkeypatch: pytest.MonkeyPatch, attempts: list[Any]) -> None:
    """Any outgoing connection or name lookup fails and is recorded in ``attempts``."""

    def refuse(what: Any) -> Any:
        attempts.append(what)
        raise OSError(f"network disabled in this test: {what!r}")

    monkeypatch.setattr(socket.socket, "connect", lambda self, addr: refuse(addr))
    monkeypatch.setattr(socket.socket, "connect_ex", lambda self, addr: refuse(addr))
    monkeypatch.setattr(socket, "create_connection", lambda addr, *a, **k: refuse(addr))
    monkeypatch.setattr(socket, "getaddrinfo", lambda host, *a, **k: refuse(host))


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Any outgoing connection or name lookup fails and is recorded; the test fails if one was tried."""
    attempts: list[Any] = []
    _refuse_network(monkeypatch, attempts)
    yield attempts
    assert attempts == [], f"the test tried the network: {attempts}"


#: the storage options of the translated job: a secret reference and an endpoint, neither of which
#: may show anywhere in the job
JOB_STORAGE = {"s3": {"key": SECRET_REF, "client_kwargs": {"endpoint_url": "https://minio.example:9000"}}}


@pytest.fixture(scope="module")
def translated() -> Iterator[tuple[beam.Pipeline, Any]]:
    """The full graph (``--since`` included) translated by the DataflowRunner, with the network
    refused: once for the module's two tests that read the translation (they only read it)."""
    argv = full_argv()
    argv[argv.index("--storage-options") + 1] = orjson.dumps(JOB_STORAGE).decode()
    attempts: list[Any] = []
    with pytest.MonkeyPatch.context() as mp:
        _refuse_network(mp, attempts)
        yield _translate(argv)
    assert attempts == [], f"the translation tried the network: {attempts}"


def _translate(argv: list[str]) -> tuple[beam.Pipeline, Any]:
    p = build_graph([*DRY_RUN, *argv])
    result = p.run()  # --dry_run: translated, not submitted
    return p, result


def _dofn_classes(proto: beam_runner_api_pb2.Pipeline) -> dict[str, set[type]]:
    """Stage (every prefix of a ParDo's name) -> classes of the DoFns its ParDos run (their pickled
    payloads, loaded)."""
    out: dict[str, set[type]] = {}
    for t in proto.components.transforms.values():
        if t.spec.urn != common_urns.primitives.PAR_DO.urn:
            continue
        payload = beam_runner_api_pb2.ParDoPayload.FromString(t.spec.payload)
        if payload.do_fn.urn != "beam:dofn:pickled_python_info:v1":
            continue
        fn = pickler.loads(payload.do_fn.payload)[0]
        parts = t.unique_name.split("/")
        for i in range(1, len(parts) + 1):
            out.setdefault("/".join(parts[:i]), set()).add(type(fn))
    return out


def _display_data(proto: beam_runner_api_pb2.Pipeline) -> dict[str, dict[str, str]]:
    """Transform name -> its display data (key -> value) as the job graph carries it."""
    out: dict[str, dict[str, str]] = {}
    for t in proto.components.transforms.values():
        for d in t.display_data:
            item = beam_runner_api_pb2.LabelledPayload.FromString(d.payload)
            out.setdefault(t.unique_name, {})[item.key] = item.string_value
    return out


@pytest.mark.slow  # builds the whole graph
@pytest.mark.xdist_group("dataflow-translation")  # shares translated
@needs_dataflow
def test_dataflow_dry_run_translates_the_full_graph(
    translated: tuple[beam.Pipeline, Any], no_network: list[Any]
) -> None:
    p, result = translated
    runner = p.runner
    proto = runner.proto_pipeline
    assert type(runner).__name__ == "DataflowRunner"
    assert result.job.proto.type_.name == "JOB_TYPE_BATCH"

    names = {t.unique_name for t in proto.components.transforms.values()}
    for stage in [*STAGES, *SINCE_STAGES]:
        assert stage in names, f"{stage} missing from the translated job: {sorted(names)}"

    check_worker_stages(_dofn_classes(proto))

    # one environment: the bunzai image, with nothing of the package staged (it is in the image)
    envs = list(proto.components.environments.values())
    assert len(envs) == 1
    assert envs[0].urn == common_urns.environments.DOCKER.urn
    assert beam_runner_api_pb2.DockerPayload.FromString(envs[0].payload).container_image == IMAGE
    staged = {
        beam_runner_api_pb2.ArtifactStagingToRolePayload.FromString(d.role_payload).staged_name
        for d in envs[0].dependencies
    }
    assert staged <= {"pickled_main_session", "submission_environment_dependencies.txt"}, staged
    assert p.options.view_as(SetupOptions).sdk_location == "container"


@pytest.mark.slow  # builds the whole graph
@pytest.mark.xdist_group("dataflow-translation")  # shares translated
@needs_dataflow
def test_dataflow_job_options_hold_no_storage_options(
    translated: tuple[beam.Pipeline, Any], no_network: list[Any]
) -> None:
    """What the job page shows (sdkPipelineOptions, display data): the public options, never the
    storage options, neither a reference nor a literal value."""
    _, result = translated
    job = result.job
    # the environment Beam attaches to the job before submitting it (after staging, which a dry
    # run skips), built here the same way
    env = apiclient.Environment(
        packages=[],
        options=job.options,
        environment_version="8",
        proto_pipeline_staged_url="gs://bunzai-dry-run/tmp/staging/pipeline.pb",
        proto_pipeline=job.proto_pipeline,
    ).proto
    as_dict = type(env).to_dict(env)
    options = as_dict["sdk_pipeline_options"]["options"]
    # the job's own options are not Beam's: the workers, which parse the job's options again
    # without bunzai's loaded, would log them as "Discarding unparseable args"
    assert not {"inputs", "output", "export", "fidelity", "max_file_bytes", "allow_empty"} & set(options)
    assert not any("storage" in k for k in options)
    # the job page shows where the run reads and writes as the display data of its steps
    shown = _display_data(job.proto_pipeline)
    listing = next(v for k, v in shown.items() if k.startswith("ListInputs/Files/") and "inputs" in v)
    assert listing["inputs"] == "gs://card-archive/uploads/** zip://**::s3://card-archive/dumps/2024-06.zip"
    commit = next(v for k, v in shown.items() if k.startswith("Finish/Commit/Manifest") and "output" in v)
    assert commit["output"] == "gs://bunzai-results/2024-06-02"
    assert commit["export"] == ",".join(export_formats("all"))
    dumped = orjson.dumps(as_dict, default=str).decode()
    assert "minio.example" not in dumped and "gcp-secret:" not in dumped
    assert as_dict["worker_pools"][0]["sdk_harness_container_images"][0]["container_image"] == IMAGE


@pytest.mark.slow  # builds the whole graph
@needs_dataflow
def test_cli_dry_run_without_any_network(tmp_path: Path) -> None:
    """``bunzai normalize`` with the Dataflow flags, in a network namespace with no interface up,
    from a folder without samples/: it translates the job and hands over (exit 0)."""
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-n", "true"], capture_output=True).returncode != 0:
        pytest.skip("cannot make a network namespace here (unshare -n)")
    bunzai = Path(sys.executable).parent / "bunzai"
    env = {k: v for k, v in os.environ.items() if k != "FLEX_TEMPLATE_PYTHON_PY_FILE"}
    proc = subprocess.run(
        [unshare, "-n", str(bunzai), "normalize", *DRY_RUN, *full_argv(since=False)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "translated the job (not submitted here)" in proc.stdout
    assert "gs://bunzai-results/2024-06-02" in proc.stdout


#: the export graph's named stages (pipeline/export/job.py::build_export), as the job must hold them
EXPORT_STAGES = [
    "ReadCanonical",
    "Select",
    "BySource",
    "Write",
    "CommitExports",
    "WriteRejects",
    "Commit",
]


@pytest.mark.slow  # builds the export graph
@needs_dataflow
def test_export_template_launch_translates_the_export_job(
    no_network: list[Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The export Flex Template as its launcher runs it: deploy/launch.py with the template's
    parameters (``--dataset=...`` makes it the export) and the DataflowRunner's dry run. The job is
    translated, not submitted; it holds the export's stages and runs in the bunzai image with
    nothing staged; its options hold no storage option."""
    import importlib.util

    from apache_beam.runners.dataflow.dataflow_runner import DataflowRunner

    from .graphs import export_dataset

    spec = importlib.util.spec_from_file_location("bunzai_launch", ROOT / "deploy" / "launch.py")
    assert spec is not None and spec.loader is not None
    launch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(launch)
    seen: list[Any] = []
    real_run = DataflowRunner.run_pipeline

    def keep(self: Any, pipeline: Any, options: Any) -> Any:
        result = real_run(self, pipeline, options)
        seen.append((self, result))
        return result

    monkeypatch.setattr(DataflowRunner, "run_pipeline", keep)
    argv = [
        *DRY_RUN,
        f"--dataset={export_dataset()}",
        "--to=sillytavern,vaud-json",
        "--output=gs://bunzai-exports/2024-06-02",
        f"--storage_options={orjson.dumps(JOB_STORAGE).decode()}",
    ]
    with pytest.raises(SystemExit) as done:
        launch.main(argv)
    out = capsys.readouterr().out
    assert done.value.code == 0, out
    assert "bunzai export: translated the job (not submitted here)" in out
    assert "gs://bunzai-exports/2024-06-02" in out

    runner, result = seen[0]
    proto = runner.proto_pipeline
    names = {t.unique_name for t in proto.components.transforms.values()}
    for stage in EXPORT_STAGES:
        assert stage in names, f"{stage} missing from the translated export job: {sorted(names)}"
    dofns = _dofn_classes(proto)
    for stage in ("Write", "CommitExports", "Commit"):
        assert any(ours(c) for c in dofns.get(stage, ())), (stage, dofns.get(stage))
    envs = list(proto.components.environments.values())
    assert len(envs) == 1 and envs[0].urn == common_urns.environments.DOCKER.urn
    assert beam_runner_api_pb2.DockerPayload.FromString(envs[0].payload).container_image == IMAGE
    staged = {
        beam_runner_api_pb2.ArtifactStagingToRolePayload.FromString(d.role_payload).staged_name
        for d in envs[0].dependencies
    }
    assert staged <= {"pickled_main_session", "submission_environment_dependencies.txt"}, staged
    dumped = orjson.dumps(result.job.options.get_all_options(), default=str).decode()
    assert "minio.example" not in dumped and "gcp-secret:" not in dumped


# -- pickling: what a remote worker needs first ----------------------------------------------------

PICKLERS = ["cloudpickle", "dill"]


@pytest.fixture(params=PICKLERS)
def pickle_library(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "dill":
        pytest.importorskip("dill", reason="Beam's dill pickler needs apache-beam[dill] (the test extra)")
    pickler.set_library(request.param)
    try:
        yield request.param
    finally:
        pickler.set_library(pickler.DEFAULT_PICKLE_LIB)


@pytest.fixture(scope="module")
def local_graphs() -> dict[str, beam.Pipeline]:
    """pickler library -> the full graph on the local runner, built (under that library: a ParDo
    copies its DoFn through the pickler) by the first test that needs it; the tests only read it."""
    return {}


def _local_full_graph(graphs: dict[str, beam.Pipeline], library: str) -> beam.Pipeline:
    if library not in graphs:
        graphs[library] = build_graph(["--runner=FnApiRunner", *full_argv()])
    return graphs[library]


@pytest.mark.slow  # builds the whole graph
@pytest.mark.xdist_group("full-graph-pickling")  # shares local_graphs
def test_every_transform_and_dofn_pickles(
    pickle_library: str, local_graphs: dict[str, beam.Pipeline]
) -> None:
    p = _local_full_graph(local_graphs, pickle_library)
    nodes = applied_transforms(p)
    assert len(nodes) > 150  # the whole graph, composites and leaves
    pickled: dict[str, set[type]] = {}  # stage (every prefix of a label) -> classes pickled and back
    for node in nodes:
        parts = [("transform", node.transform)]
        for attr in ("fn", "dofn"):  # ParDo/Combine's function, our composites' DoFn
            if getattr(node.transform, attr, None) is not None:
                parts.append((attr, getattr(node.transform, attr)))
        for what, obj in parts:
            try:
                back = pickler.loads(pickler.dumps(obj))
            except Exception as exc:
                pytest.fail(f"{pickle_library}: {node.full_label} ({what} {type(obj).__name__}): {exc!r}")
            assert type(back) is type(obj), (node.full_label, what)
            labels = node.full_label.split("/")
            for i in range(1, len(labels) + 1):
                pickled.setdefault("/".join(labels[:i]), set()).add(type(obj))
    check_worker_stages(pickled)


@pytest.mark.slow  # builds the whole graph
@pytest.mark.xdist_group("full-graph-pickling")  # shares local_graphs
def test_graph_survives_runner_api_round_trip(
    pickle_library: str, local_graphs: dict[str, beam.Pipeline]
) -> None:
    """As Beam ships it: every payload pickled into the portable graph, then loaded back."""
    p = _local_full_graph(local_graphs, pickle_library)
    proto = p.to_runner_api()
    back = beam.Pipeline.from_runner_api(proto, p.runner, p.options)
    labels = {n.full_label for n in applied_transforms(back)}
    assert {
        "ListInputs/Files",
        "Normalize/ReadBytes",
        "Normalize/Export",
        "CarryForward",
        "Finish/Commit/Manifest",
    } <= labels
    check_worker_stages(_dofn_classes(proto))


def test_storage_pickles_with_the_reference_not_the_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(secrets, "_SECRETS", {})
    monkeypatch.setattr(secrets, "_access_secret", lambda name: "AKIA-RESOLVED-VALUE\n")
    storage = Storage({"memory": {"key": SECRET_REF}})
    fs, _ = storage.fs("memory://bunzai-secret-test/x")
    assert fs.storage_options["key"] == "AKIA-RESOLVED-VALUE"  # the worker's filesystem got the value
    for lib in PICKLERS:
        if lib == "dill" and pickler.dill_pickler is None:
            continue
        pickler.set_library(lib)
        try:
            blob = pickler.dumps(storage)
        finally:
            pickler.set_library(pickler.DEFAULT_PICKLE_LIB)
        plain = blob + pickle.dumps(pickler.loads(blob).options)
        assert b"AKIA-RESOLVED-VALUE" not in plain


# -- secret references ----------------------------------------------------------------------------


def test_secret_references_resolve_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def access(name: str) -> str:
        calls.append(name)
        return {"projects/p/secrets/k/versions/1": "key-id\r\n", "projects/p/secrets/s/versions/2": "sec\n"}[
            name
        ]

    monkeypatch.setattr(secrets, "_SECRETS", {})
    monkeypatch.setattr(secrets, "_access_secret", access)
    opts = {
        "s3": {
            "key": "gcp-secret:projects/p/secrets/k/versions/1",
            "secret": "gcp-secret:projects/p/secrets/s/versions/2",
            "client_kwargs": {"region_name": "eu-west-1"},
            "anon": False,
        }
    }
    want = {
        "s3": {"key": "key-id", "secret": "sec", "client_kwargs": {"region_name": "eu-west-1"}, "anon": False}
    }
    assert resolve_secrets(opts) == want
    assert resolve_secrets(opts) == want
    assert sorted(calls) == ["projects/p/secrets/k/versions/1", "projects/p/secrets/s/versions/2"]
    # not a reference: left alone
    assert resolve_secrets({"key": "gcp-secret:projects/p/secrets/k"}) == {
        "key": "gcp-secret:projects/p/secrets/k"
    }


def test_unreadable_secret_names_the_secret_not_a_value(monkeypatch: pytest.MonkeyPatch) -> None:
    from apache_beam.utils import secret

    def denied(self: Any) -> bytes:
        raise RuntimeError(f"Failed to retrieve secret bytes for secret {self._version_name}: 403")

    monkeypatch.setattr(secrets, "_SECRETS", {})
    monkeypatch.setattr(secret.GcpSecret, "get_secret_bytes", denied)
    with pytest.raises(PermissionError, match=r"cannot read secret projects/p/secrets/k/versions/latest"):
        Storage({"s3": {"key": "gcp-secret:projects/p/secrets/k/versions/latest"}}).fs("s3://b/k")


# -- options that keep local-only things off Dataflow --------------------------------------------

REMOTE = ["--runner=DataflowRunner", f"--sdk_container_image={IMAGE}"]
GOOD = ["--input", "gs://in/cards", "--output", "gs://out/run"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--output", "gs://out/run"], "--input is required on Dataflow"),
        (["--input", "gs://in/cards"], "--output is required on Dataflow"),
        (["--input", "samples", "--output", "gs://o/r"], "--input samples is on this machine's disk"),
        (["--input", "file:///srv/cards", "--output", "gs://o/r"], "file:///srv/cards is on this machine"),
        (["--input", "zip://**::/tmp/dump.zip", "--output", "gs://o/r"], "zip://\\*\\*::/tmp/dump.zip is on"),
        (["--input", "gs://in/c", "--output", "/tmp/out"], "--output /tmp/out is on this machine's disk"),
        ([*GOOD, "--since", "out/manifest.json"], "--since out/manifest.json is on this machine's disk"),
        (
            [*GOOD, "--storage-options", '{"s3": {"key": "AKIA", "secret": "s"}}'],
            "s3.key, s3.secret on Dataflow must be a gcp-secret:",
        ),
        ([*GOOD, "--storage_options", '{"gcs": {"token": "/home/me/key.json"}}'], "gcs.token on Dataflow"),
    ],
)
def test_dataflow_refuses_what_workers_cannot_use(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse([*REMOTE, *argv])


def test_dataflow_needs_the_bunzai_image() -> None:
    with pytest.raises(UsageError, match="--sdk_container_image is required on Dataflow"):
        parse(["--runner=DataflowRunner", *GOOD])


def test_dataflow_defaults_to_the_container_sdk_and_accepts_references() -> None:
    storage = '{"s3": {"key": "' + SECRET_REF + '", "client_kwargs": {"region_name": "eu-west-1"}}}'
    cfg, options = parse(
        [*REMOTE, *GOOD, "--storage-options", storage, "--since", "gs://out/prev/manifest.json"]
    )
    assert options.view_as(SetupOptions).sdk_location == "container"
    assert cfg.inputs == ("gs://in/cards",) and cfg.output == "gs://out/run"
    # a token naming a method is not a credential
    parse([*REMOTE, *GOOD, "--storage-options", '{"gcs": {"token": "google_default"}}'])
    # locally nothing changes: samples/ by default, literal keys allowed (the AWS chain is preferred)
    cfg, options = parse(["--storage-options", '{"s3": {"key": "AKIA", "secret": "s"}}'])
    assert options.view_as(SetupOptions).sdk_location == "default" and cfg.output == "out"


def test_literal_secrets_finds_credentials_at_any_depth() -> None:
    opts = {
        "s3": {"key": "AKIA", "client_kwargs": {"aws_secret_access_key": "x", "region_name": "r"}},
        "gcs": {"token": "cloud", "project": "p"},
        "endpoint_url": "https://x",
        "password": SECRET_REF,
    }
    assert literal_secrets(opts) == ["s3.key", "s3.client_kwargs.aws_secret_access_key"]


def test_underscore_spellings_are_the_same_options() -> None:
    """Flex Template parameters reach the job as --name=value with the names of metadata.json."""
    cfg, _ = parse(
        [
            "--input=gs://a/b",
            "--max_file_bytes=1000",
            "--shard_bytes=2048",
            '--storage_options={"anon": true}',
        ]
    )
    assert (cfg.max_file_bytes, cfg.shard_bytes, dict(cfg.storage.options)) == (1000, 2048, {"anon": True})
    cfg, _ = parse(["--input=gs://a/b", "--max-file-bytes=1000", "--shard-bytes=2048"])
    assert (cfg.max_file_bytes, cfg.shard_bytes) == (1000, 2048)


@pytest.mark.parametrize(
    "runner",
    ["DataflowRunner", "dataflow", "Dataflow", "apache_beam.runners.dataflow.dataflow_runner.DataflowRunner"],
)
def test_every_spelling_of_dataflow_is_remote(runner: str) -> None:
    with pytest.raises(UsageError, match="--input is required on Dataflow"):
        parse([f"--runner={runner}", f"--sdk_container_image={IMAGE}"])


def test_only_dataflow_hands_over(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FLEX_TEMPLATE_PYTHON_PY_FILE", raising=False)
    assert not submits_only(parse(["--runner=FnApiRunner"])[1])
    assert not submits_only(parse([*REMOTE, *GOOD])[1])  # a direct run waits and prints the summary
    assert submits_only(parse([*REMOTE, *GOOD, "--dry_run=True"])[1])
    assert submits_only(parse([*REMOTE, *GOOD, "--template_location=gs://t/x.json"])[1])
    monkeypatch.setenv("FLEX_TEMPLATE_PYTHON_PY_FILE", "/template/launch.py")  # inside the launcher
    assert submits_only(parse([*REMOTE, *GOOD])[1])
    assert not submits_only(parse(["--runner=FnApiRunner"])[1])


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("samples", True),
        ("/abs/path", True),
        ("file:///x", True),
        ("local://x", True),
        ("zip://**::/tmp/d.zip", True),
        ("gs://b/k", False),
        ("s3://b/k", False),
        ("zip://**::s3://b/d.zip", False),
        ("memory://x", False),
    ],
)
def test_is_local_url(url: str, local: bool) -> None:
    assert is_local_url(url) is local


# -- gs:// through gcsfs --------------------------------------------------------------------------


def test_gs_urls_resolve_to_gcsfs(no_network: list[Any]) -> None:
    gcsfs = pytest.importorskip("gcsfs", reason="gcsfs comes with the gcp extra: pip install -e '.[gcp]'")
    for url, opts in [
        ("gs://card-archive/uploads/a.png", {"gcs": {"token": "anon"}}),
        ("gcs://card-archive/uploads/a.png", {"gs": {"token": "anon"}}),
    ]:
        fs, path = Storage(opts).fs(url)
        assert isinstance(fs, gcsfs.core.GCSFileSystem)  # gcsfs's default class is a subclass of it
        assert path == "card-archive/uploads/a.png"


def test_beam_options_keep_their_meaning() -> None:
    """The Dataflow flags are Beam's: parse passes them through untouched (but sdk_location)."""
    _, options = parse([*DRY_RUN, *GOOD])
    all_opts = options.get_all_options()
    assert all_opts["project"] == "bunzai-dry-run" and all_opts["region"] == "us-central1"
    assert str(all_opts["dry_run"]) == "True" and all_opts["no_auth"] is True
    assert all_opts["sdk_container_image"] == IMAGE
    assert PipelineOptions(list(DRY_RUN)).view_as(SetupOptions).sdk_location == "container"
