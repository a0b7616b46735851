"""The pipeline against a real S3 API: moto's server on 127.0.0.1, started once per session by the
``endpoint`` fixture (the way s3fs tests itself), buckets created through ``endpoint_url``. Inputs
come from one bucket (plain objects and a zip chain), every output goes to another."""

from __future__ import annotations

import io
import logging
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bunzai_codecs.inputs import walk

from .conftest import EXPECTED, SAMPLES, Run, normalize, same_outputs, write_inputs

pytestmark = pytest.mark.slow  # runs the pipeline

boto3 = pytest.importorskip("boto3")
pytest.importorskip("moto.server")

SECRET = "bunzai-test-secret-5f0e"
IN, OUT = "bunzai-in", "bunzai-out"


@pytest.fixture
def s3(endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The session's moto server (``endpoint``, tests/pipeline/conftest.py), emptied, with the two
    buckets."""
    import requests
    import s3fs

    for k, v in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",
    }.items():
        monkeypatch.setenv(k, v)
    requests.post(f"{endpoint}/moto-api/reset", timeout=10)
    s3fs.S3FileSystem.clear_instance_cache()
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    for bucket in (IN, OUT):
        client.create_bucket(Bucket=bucket)
    yield client
    s3fs.S3FileSystem.clear_instance_cache()


def _options(endpoint: str) -> dict[str, Any]:
    return {"key": "testing", "secret": SECRET, "client_kwargs": {"endpoint_url": endpoint}}


def _upload(client: Any, folder: Path, prefix: str) -> None:
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            client.put_object(
                Bucket=IN, Key=f"{prefix}/{p.relative_to(folder).as_posix()}", Body=p.read_bytes()
            )


def _keys(client: Any, bucket: str) -> list[str]:
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket)
    return sorted(o["Key"] for page in pages for o in page.get("Contents", []))


def test_s3_to_s3(s3: Any, endpoint: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    write_inputs(tmp_path / "in")
    _upload(s3, tmp_path / "in", "dump")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for p in sorted(SAMPLES.rglob("*")):
            if p.is_file() and not p.name.startswith("."):
                z.write(p, p.relative_to(SAMPLES).as_posix())
    s3.put_object(Bucket=IN, Key="archive/samples.zip", Body=buf.getvalue())
    inputs_before = _keys(s3, IN)
    opts = _options(endpoint)
    args = (
        "--input",
        f"s3://{IN}/dump",
        "--input",
        f"zip://**::s3://{IN}/archive/samples.zip",
        "--export",
        "vaud-json",
    )

    run = normalize(*args, "--output", f"s3://{OUT}/night1", storage_options=opts)
    m = run.manifest
    n_samples = len(list(walk(SAMPLES)))  # a card folder, a YAML and its picture: one input each
    assert m["balance"]["ok"] and m["inputs"]["listed"] == len(EXPECTED) + n_samples
    uris = {r["uri"] for r in run.lines("inventory")}
    assert f"s3://{IN}/dump/cards/mira.vaud.json" in uris
    assert any(u.startswith("zip://") and u.endswith(f"::s3://{IN}/archive/samples.zip") for u in uris)
    assert all(r["etag"] for r in run.lines("inventory"))  # S3 ETags and zip CRCs

    # inputs untouched; every output in the other bucket, under the output prefix
    assert _keys(s3, IN) == inputs_before
    written = _keys(s3, OUT)
    assert written and all(k.startswith("night1/") for k in written)
    assert "night1/manifest.json" in written and not any(".bunzai-staging" in k for k in written)
    assert any(k.startswith("night1/exports/vaud-json/") for k in written)
    for k in written:  # the storage options' secret reaches no output
        assert SECRET.encode() not in s3.get_object(Bucket=OUT, Key=k)["Body"].read(), k
    assert m["options"]["storageOptions"] == "given (not recorded)"
    assert SECRET not in caplog.text  # nor any log line, at any level
    # the runs below assert nothing on the logs: botocore's DEBUG lines (~140k a run, formatted for
    # the capture) were a quarter of this test's CPU
    caplog.set_level(logging.WARNING)

    # same inputs, same outputs
    same_outputs(run, normalize(*args, "--output", f"s3://{OUT}/again", storage_options=opts))

    # the next night: one object changed, one added; ETags spare every other read
    s3.put_object(
        Bucket=IN, Key="dump/books/quiet.vaud.json", Body=(tmp_path / "in/cards/mira.vaud.json").read_bytes()
    )
    s3.put_object(Bucket=IN, Key="dump/new/noise.txt", Body=b"not a card")
    night2 = normalize(
        *args,
        "--output",
        f"s3://{OUT}/night2",
        "--since",
        f"s3://{OUT}/night1/manifest.json",
        storage_options=opts,
    )
    assert night2.manifest["since"]["honoured"]
    assert night2.counters["inputs_read"] == 2
    assert (night2.manifest["inputs"]["new"], night2.manifest["inputs"]["changed"]) == (1, 1)
    assert night2.manifest["balance"]["ok"]
    exports = [k for k in _keys(s3, OUT) if k.startswith("night2/exports/")]
    assert len(exports) == night2.manifest["counts"]["exports"]["total"] > 0
    assert isinstance(night2, Run)
