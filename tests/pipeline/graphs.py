"""The full normalize graph, built but not run: every stage, exports of every format, ``--since``
(a previous manifest written by hand to ``memory://``) and storage options that name a secret.

Used by the Dataflow translation and pickling tests (tests/pipeline/test_dataflow.py) and by the
package test that unpickles it against the built wheel (tests/deploy/test_package.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import apache_beam as beam
import fsspec
import orjson
from apache_beam.pipeline import AppliedPTransform, PipelineVisitor

from bunzai_codecs.core.sniff import MAX_INPUT_BYTES
from pipeline.dataset.manifest import MANIFEST_VERSION
from pipeline.normalize.graph import build
from pipeline.normalize.since import codec_fingerprint
from pipeline.runtime.options import export_formats, parse, runner_name

IMAGE = "us-central1-docker.pkg.dev/bunzai-dry-run/bunzai/bunzai:test"
#: the flags of the issue. Beam's own checks refuse its placeholders: ``--project=p`` is not a
#: project id, and ``gs://b/tmp`` names no valid bucket (3+ characters), which sends Beam off to
#: create a default bucket over the network; these are well-formed names of nothing.
DRY_RUN = (
    "--runner=DataflowRunner",
    "--dry_run=True",
    "--no_auth",
    "--project=bunzai-dry-run",
    "--region=us-central1",
    "--temp_location=gs://bunzai-dry-run/tmp",
    "--sdk_location=container",
    f"--sdk_container_image={IMAGE}",
)
SECRET_REF = "gcp-secret:projects/bunzai-dry-run/secrets/aws-key-id/versions/1"
STORAGE = {"s3": {"key": SECRET_REF, "client_kwargs": {"region_name": "eu-west-1"}}}
DATASETS = ("canonical", "fidelity", "rejects", "inventory")


def previous_manifest() -> str:
    """A manifest ``--since`` honours (same codecs, limits and export formats), in ``memory://``."""
    root = f"memory://bunzai-prev-{uuid.uuid4().hex}"
    manifest = {
        "manifestVersion": MANIFEST_VERSION,
        "bunzai": {"codecFingerprint": codec_fingerprint()},
        "options": {"maxFileBytes": MAX_INPUT_BYTES, "export": list(export_formats("all"))},
        "outputs": {
            "shards": {
                **{ds: [{"path": f"{ds}/part-00000-of-00001.jsonl"}] for ds in DATASETS},
                "index": [{"path": "index/part-00000-of-00001.parquet"}],
            }
        },
    }
    fs = fsspec.filesystem("memory")
    fs.pipe_file(f"{root}/manifest.json", orjson.dumps(manifest))
    return f"{root}/manifest.json"


def export_dataset() -> str:
    """A committed dataset ``bunzai export`` accepts (its manifest and one canonical shard named),
    in ``memory://``: the export graph is built from the manifest alone."""
    root = f"memory://bunzai-dataset-{uuid.uuid4().hex}"
    manifest = {
        "manifestVersion": MANIFEST_VERSION,
        "commit": {"ok": True},
        "outputs": {"shards": {"canonical": [{"path": "canonical/part-00000-of-00001.jsonl"}]}},
    }
    fsspec.filesystem("memory").pipe_file(f"{root}/manifest.json", orjson.dumps(manifest))
    return root


def full_argv(*, since: bool = True) -> list[str]:
    argv = [
        "--input",
        "gs://card-archive/uploads/**",
        "--input",
        "zip://**::s3://card-archive/dumps/2024-06.zip",
        "--output",
        "gs://bunzai-results/2024-06-02",
        "--export",
        "all",
        "--storage-options",
        orjson.dumps(STORAGE).decode(),
    ]
    if since:
        argv += ["--since", previous_manifest()]
    return argv


def build_graph(argv: Sequence[str]) -> beam.Pipeline:
    """The normalize graph for ``argv``, built (not run)."""
    cfg, options = parse(list(argv))
    p = beam.Pipeline(options=options)
    built = build(p, cfg, runner=runner_name(options), started="2024-06-02T00:00:00+00:00")
    assert built.previous is None or built.previous.honoured, built.previous
    return p


def applied_transforms(p: beam.Pipeline) -> list[AppliedPTransform]:
    """Every applied transform of the graph, composites and leaves (not the root)."""
    found: list[AppliedPTransform] = []

    class Collect(PipelineVisitor):
        def enter_composite_transform(self, node: AppliedPTransform) -> None:
            found.append(node)

        def visit_transform(self, node: AppliedPTransform) -> None:
            found.append(node)

    p.visit(Collect())
    return [n for n in found if n.transform is not None and n.full_label]


__all__ = [
    "DRY_RUN",
    "IMAGE",
    "SECRET_REF",
    "STORAGE",
    "applied_transforms",
    "build_graph",
    "export_dataset",
    "full_argv",
    "previous_manifest",
]
