"""deploy/export-metadata.json, the ``bunzai export`` Flex Template: its parameters are exactly the
export job's options (plus the worker image), each reaches the job as the option it names through
deploy/launch.py (the entry point both templates share: a launch naming a ``dataset`` is an
export), and gcloud reads the file as it reads normalize's."""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.export.job import own_parser, parse

from .conftest import DEPLOY, check_parameter, check_refused
from .lint import lint_metadata
from .test_metadata import IMAGE, _gcloud_build

TEXT = (DEPLOY / "export-metadata.json").read_text(encoding="utf-8")
META: dict[str, Any] = json.loads(TEXT)
PARAMS = {p["name"]: p for p in META["parameters"]}
DOCUMENTED_EXTRAS = {
    "sdk_container_image": "Beam's option naming the worker image; the job refuses to run without it",
}
#: a value each parameter accepts, and what the job's config then holds
SAMPLES: dict[str, tuple[str, str | None, Any]] = {
    "dataset": ("gs://bunzai-results/2024-06-02", "dataset", "gs://bunzai-results/2024-06-02"),
    "to": ("sillytavern,risu", "to", ("sillytavern", "risu")),
    "output": ("gs://bunzai-exports/2024-06-02", "output", "gs://bunzai-exports/2024-06-02"),
    "kind": ("character", "kinds", ("character",)),
    "from": ("risu", "source_formats", ("risu",)),
    "id": ("character-0e53aae2eabd575555371f86", "ids", ("character-0e53aae2eabd575555371f86",)),
    "storage_options": ('{"s3": {"anon": true}}', "storage", {"s3": {"anon": True}}),
    "sdk_container_image": (IMAGE, None, None),
}
REFUSED = {
    "dataset": ["out", "/srv/results", "gs://a b"],
    "to": ["", "all,", "Sillytavern", "a b"],
    "output": ["out", "zip://x::gs://b/o.zip"],
    "kind": ["", "characters", "character,lorebook"],
    "from": ["", "Risu", "risu,sillytavern"],
    "id": ["", "0e53aae2", "character-../x"],
    "storage_options": ["s3=anon"],
    "sdk_container_image": ["bunzai", "us-central1-docker.pkg.dev/p/r/bunzai:latest"],
}


def _launch() -> Any:
    spec = importlib.util.spec_from_file_location("bunzai_launch", DEPLOY / "launch.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def option_names() -> list[str]:
    """The export job's own options as template parameters (the underscore spelling of each; the
    positional DATASET_URL is ``dataset``); not ``--quiet``/``--debug``, which are the terminal's,
    nor ``--format``, ``--from``'s deprecated old name."""
    names = []
    for action in own_parser()._actions:
        if isinstance(action, argparse._HelpAction) or action.dest in ("quiet", "debug", "old_formats"):
            continue
        if not action.option_strings:
            names.append(action.dest)
            continue
        longs = [s[2:] for s in action.option_strings if s.startswith("--")]
        underscore = [s for s in longs if "-" not in s]
        assert underscore, f"{action.option_strings}: no underscore spelling for a template parameter"
        names.append(underscore[0])
    return names


def test_export_metadata_passes_the_lint() -> None:
    assert lint_metadata(TEXT, option_names(), DOCUMENTED_EXTRAS) == []
    assert sorted(option_names()) == sorted(set(PARAMS) - set(DOCUMENTED_EXTRAS))
    assert set(SAMPLES) == set(PARAMS) == set(REFUSED)


def test_required_parameters_are_what_the_export_requires() -> None:
    required = {n for n, p in PARAMS.items() if not p.get("isOptional", False)}
    assert required == {"dataset", "to", "output", "sdk_container_image"}


def test_the_two_templates_share_what_they_share() -> None:
    """The same storage options and worker image, word for word: a launch of either takes them alike."""
    normalize = {p["name"]: p for p in json.loads((DEPLOY / "metadata.json").read_text())["parameters"]}
    for name in ("storage_options", "sdk_container_image"):
        assert PARAMS[name] == normalize[name]


def test_launch_picks_the_job_by_its_parameters() -> None:
    launch = _launch()
    assert launch.job_argv(["--runner=DataflowRunner", "--input=gs://a/b", "--output=gs://c/d"]) == (
        "normalize",
        ["--runner=DataflowRunner", "--input=gs://a/b", "--output=gs://c/d"],
    )
    assert launch.job_argv(
        ["--runner=DataflowRunner", "--to=risu", "--dataset=gs://a/b", "--output=gs://c"]
    ) == (
        "export",
        ["gs://a/b", "--runner=DataflowRunner", "--to=risu", "--output=gs://c"],
    )


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_parameter_reaches_the_export_as_its_option(name: str) -> None:
    """The launcher passes each parameter as --name=value; launch.py hands them to the export job,
    which reads the value the regexes let through into the option of that name."""
    value, field, want = SAMPLES[name]
    base = {"sdk_container_image": IMAGE, "dataset": "gs://in/run", "to": "vaud-json", "output": "gs://out/y"}
    job, argv = _launch().job_argv(
        ["--runner=DataflowRunner", *(f"--{k}={v}" for k, v in {**base, name: value}.items())]
    )
    assert job == "export"
    check_parameter(PARAMS[name], value, field, want, parse, argv)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_export_parameter_regexes_refuse_bad_values(name: str) -> None:
    check_refused(PARAMS[name], REFUSED[name])


def test_gcloud_reads_the_export_metadata(tmp_path: Path) -> None:
    proc = _gcloud_build(DEPLOY / "export-metadata.json", tmp_path / "gcloud")
    assert proc.returncode == 0, proc.stderr[-2000:]
    spec = json.loads(proc.stdout.split("\n", 1)[1])
    assert spec["sdkInfo"] == {"language": "PYTHON"}
    assert [p["name"] for p in spec["metadata"]["parameters"]] == [p["name"] for p in META["parameters"]]
