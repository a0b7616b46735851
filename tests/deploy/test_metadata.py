"""deploy/metadata.json, the Flex Template's parameters: valid for Dataflow, exactly the options of
``NormalizeOptions`` (plus the documented Beam option the template needs), and each parameter
reaches the job as the option it names."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bunzai_codecs.core.sniff import MAX_INPUT_BYTES
from pipeline.runtime.options import DEFAULT_FIDELITY, DEFAULT_SHARD_BYTES, NormalizeOptions, parse

from .conftest import DEPLOY, check_parameter, check_refused
from .lint import lint_metadata

TEXT = (DEPLOY / "metadata.json").read_text(encoding="utf-8")
META: dict[str, Any] = json.loads(TEXT)
PARAMS = {p["name"]: p for p in META["parameters"]}

#: parameters that are not NormalizeOptions, and why they are there
DOCUMENTED_EXTRAS = {
    "sdk_container_image": "Beam's option naming the worker image; the job refuses to run without it",
}

IMAGE = "us-central1-docker.pkg.dev/my-project/bunzai/bunzai:2024-06-02"
#: a value each parameter accepts, and what the job's config then holds
SAMPLES: dict[str, tuple[str, str, Any]] = {
    "input": ("gs://card-archive/uploads/**", "inputs", ("gs://card-archive/uploads/**",)),
    "output": ("gs://bunzai-results/2024-06-02", "output", "gs://bunzai-results/2024-06-02"),
    "export": ("sillytavern,vaud-json", "export", ("sillytavern", "vaud-json")),
    "storage_options": ('{"s3": {"anon": true}}', "storage", {"s3": {"anon": True}}),
    "max_file_bytes": ("1048576", "max_file_bytes", 1048576),
    "since": (
        "gs://bunzai-results/2024-06-01/manifest.json",
        "since",
        "gs://bunzai-results/2024-06-01/manifest.json",
    ),
    "shard_bytes": ("67108864", "shard_bytes", 67108864),
    "fidelity": ("native", "fidelity", "native"),
    "allow_empty": ("true", "allow_empty", True),
    "bigquery_table": ("my-project:bunzai.entities", "bigquery_table", "my-project:bunzai.entities"),
    "sdk_container_image": (IMAGE, None, None),
}
#: values a parameter's regexes must refuse
REFUSED = {
    "input": ["samples", "/srv/cards", "gs://a b"],
    "output": ["out", "zip://x::gs://b/o.zip"],
    "export": ["all,", "Sillytavern", "a b"],
    "storage_options": ["s3=anon"],
    "max_file_bytes": ["0", "-1", "1e6", "96MiB"],
    "since": ["gs://b/run/other.json", "manifest.json"],
    "shard_bytes": ["0", "x"],
    "fidelity": ["", "Full", "cross", "off,native"],
    "allow_empty": ["", "yes", "True", "1"],
    "bigquery_table": ["bunzai.entities", "my-project.bunzai.entities", "my-project:bunzai", "P:d.t"],
    "sdk_container_image": [
        "bunzai",
        "us-central1-docker.pkg.dev/p/r/bunzai",
        "us-central1-docker.pkg.dev/p/r/bunzai:latest",
    ],
}


def option_names() -> list[str]:
    """NormalizeOptions' options as template parameters: the underscore spelling of each."""
    parser = argparse.ArgumentParser(add_help=False)
    NormalizeOptions._add_argparse_args(parser)
    names = []
    for action in parser._actions:
        longs = [s[2:] for s in action.option_strings if s.startswith("--")]
        underscore = [s for s in longs if "-" not in s]
        assert underscore, f"{action.option_strings}: no underscore spelling for a template parameter"
        names.append(underscore[0])
    return names


def test_metadata_passes_the_lint() -> None:
    assert lint_metadata(TEXT, option_names(), DOCUMENTED_EXTRAS) == []


def test_every_option_is_a_parameter_and_back() -> None:
    names = option_names()
    assert sorted(names) == sorted(set(PARAMS) - set(DOCUMENTED_EXTRAS))
    assert set(SAMPLES) == set(PARAMS) == set(REFUSED)


def test_required_parameters_are_what_dataflow_requires() -> None:
    required = {n for n, p in PARAMS.items() if not p.get("isOptional", False)}
    assert required == {"input", "output", "sdk_container_image"}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_parameter_reaches_the_job_as_its_option(name: str) -> None:
    """The launcher passes each parameter as --name=value: the job reads the value the regexes let
    through into the option of that name."""
    value, field, want = SAMPLES[name]
    base = {"sdk_container_image": IMAGE, "input": "gs://in/x", "output": "gs://out/y", name: value}
    argv = ["--runner=DataflowRunner", *(f"--{k}={v}" for k, v in base.items())]
    check_parameter(PARAMS[name], value, field, want, parse, argv)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_parameter_regexes_refuse_bad_values(name: str) -> None:
    check_refused(PARAMS[name], REFUSED[name])


def test_help_texts_state_the_code_defaults() -> None:
    assert str(MAX_INPUT_BYTES) in PARAMS["max_file_bytes"]["helpText"]
    assert str(DEFAULT_SHARD_BYTES) in PARAMS["shard_bytes"]["helpText"]
    assert f"{DEFAULT_FIDELITY} (default)" in PARAMS["fidelity"]["helpText"]
    assert "gcp-secret:" in PARAMS["storage_options"]["helpText"]


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda m: m["parameters"].pop(), "options without a parameter: ['shard_bytes']"),
        (lambda m: m["parameters"].append({**m["parameters"][0], "name": "inputs"}), "no option: ['inputs']"),
        (lambda m: m["parameters"][0].pop("helpText"), "helpText is missing"),
        (lambda m: m["parameters"][0].update(label=""), "label is missing or empty"),
        (lambda m: m["parameters"][0].update(help="x"), "unknown field 'help'"),
        (lambda m: m["parameters"][0].update(isOptional="false"), "isOptional is not a boolean"),
        (lambda m: m["parameters"][0].update(regexes=["("]), "does not compile"),
        (lambda m: m["parameters"][0].update(paramType="GCS_FOLDER"), "not one of Dataflow's"),
        (lambda m: m["parameters"][0].update(name="max-file-bytes"), "not lower_snake_case"),
        (lambda m: m.pop("name"), "name is missing"),
        (lambda m: m.update(params=[]), "unknown top-level field 'params'"),
    ],
)
def test_each_metadata_rule_catches_its_mistake(edit: Any, problem: str) -> None:
    meta = json.loads(TEXT)
    meta["parameters"] = [p for p in meta["parameters"] if p["name"] != "sdk_container_image"]
    edit(meta)
    problems = lint_metadata(json.dumps(meta), option_names(), DOCUMENTED_EXTRAS)
    assert any(problem in p for p in problems), problems


def test_invalid_json_is_reported() -> None:
    assert lint_metadata(TEXT[:-3], option_names())[0].startswith("not valid JSON")


def _gcloud_build(metadata: Path, config: Path) -> subprocess.CompletedProcess[str]:
    """``gcloud dataflow flex-template build --print-only``: gcloud's own reading of the metadata
    (it refuses what the service would), offline, nothing uploaded."""
    gcloud = shutil.which("gcloud")
    if gcloud is None:
        pytest.skip("gcloud is not installed")
    cmd = [
        gcloud,
        "dataflow",
        "flex-template",
        "build",
        "gs://bunzai-dry-run/templates/bunzai-normalize.json",
        "--image=us-central1-docker.pkg.dev/bunzai-dry-run/bunzai/bunzai:test",
        "--sdk-language=PYTHON",
        f"--metadata-file={metadata}",
        "--service-account-email=bunzai-dataflow@bunzai-dry-run.iam.gserviceaccount.com",
        "--staging-location=gs://bunzai-dry-run/staging",
        "--temp-location=gs://bunzai-dry-run/tmp",
        "--project=bunzai-dry-run",
        "--print-only",
    ]
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], capture_output=True).returncode == 0:
        cmd = [unshare, "-n", *cmd]
    env = {
        **os.environ,
        "CLOUDSDK_CONFIG": str(config),
        "CLOUDSDK_CORE_DISABLE_PROMPTS": "1",
        "CLOUDSDK_CORE_DISABLE_USAGE_REPORTING": "true",
    }
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)


def test_gcloud_reads_the_metadata(tmp_path: Path) -> None:
    proc = _gcloud_build(DEPLOY / "metadata.json", tmp_path / "gcloud")
    assert proc.returncode == 0, proc.stderr[-2000:]
    spec = json.loads(proc.stdout.split("\n", 1)[1])  # after the YAML block marker "|-"
    assert spec["sdkInfo"] == {"language": "PYTHON"}
    assert [p["name"] for p in spec["metadata"]["parameters"]] == [p["name"] for p in META["parameters"]]
    assert spec["defaultEnvironment"]["serviceAccountEmail"].startswith("bunzai-dataflow@")


def test_gcloud_refuses_a_parameter_without_label(tmp_path: Path) -> None:
    meta = json.loads(TEXT)
    del meta["parameters"][0]["label"]
    bad = tmp_path / "metadata.json"
    bad.write_text(json.dumps(meta))
    proc = _gcloud_build(bad, tmp_path / "gcloud")
    assert proc.returncode != 0
    assert "label field is empty" in proc.stderr
