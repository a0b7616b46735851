"""Helpers for the pipeline tests: hand-made inputs, a pinned runner, reading an output folder, and
runs shared by the tests that assert on the same output.

Every run pins ``--runner=FnApiRunner``: offline, the DirectRunner first tries to download the
Prism runner. The inputs are written here from the canonical model (vaud-json files, broken files,
random bytes); the real-world corpus is read in place, never copied into the project.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import random
import shutil
import zipfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
from apache_beam.metrics.metric import MetricsFilter

from bunzai_codecs import write
from bunzai_codecs.core.entity import CanonicalEntity, canonical_id
from bunzai_codecs.entities import CharacterBody, LorebookBody, RegexSetBody
from jobs.normalize import run_pipeline
from jobs.runner import written_manifest
from pipeline.runtime.counters import NAMESPACE
from pipeline.runtime.options import parse
from pipeline.runtime.storage import Storage
from tests.conftest import corpus_root

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
PINNED = ("--runner=FnApiRunner",)
_CORPUS = corpus_root()
#: samples/ and the corpus (when present), native fidelity: one shared run (``SharedRuns.run_argv``)
#: that the index test and the canonical-line bound of the blob store both read
SAMPLES_AND_CORPUS_NATIVE = (
    "--input",
    str(SAMPLES),
    *(("--input", str(_CORPUS)) if _CORPUS is not None else ()),
    "--fidelity",
    "native",
)


@dataclass
class Run:
    manifest: dict[str, Any]
    counters: dict[str, int]
    output: str
    storage_options: dict[str, Any] = field(default_factory=dict)

    def files(self) -> dict[str, bytes]:
        """Every file of the output folder (relative path -> bytes)."""
        fs, root = Storage(self.storage_options).fs(self.output)
        root = root.rstrip("/")
        if hasattr(fs, "invalidate_cache"):
            fs.invalidate_cache()
        return {p[len(root) + 1 :]: fs.cat_file(p) for p in sorted(fs.find(root))}

    def lines(self, dataset: str) -> list[dict[str, Any]]:
        """The records of a dataset's JSONL shards (fidelity/ also holds report.json and .html)."""
        return [
            orjson.loads(ln)
            for rel, data in self.files().items()
            if rel.startswith(dataset + "/") and rel.endswith(".jsonl")
            for ln in data.splitlines()
        ]

    def blob(self, key: str) -> bytes:
        """The bytes of a blob of the dataset's blob store (``fetch`` for ``from_tree``)."""
        fs, root = Storage(self.storage_options).fs(self.output)
        data: bytes = fs.cat_file(f"{root.rstrip('/')}/blobs/{key[:2]}/{key}")
        return data


def normalize(*args: str, storage_options: dict[str, Any] | None = None) -> Run:
    argv = [*PINNED, *args]
    if storage_options is not None:
        argv += ["--storage-options", orjson.dumps(storage_options).decode()]
    cfg, options = parse(argv)
    built, result = run_pipeline(cfg, options)
    counters: dict[str, int] = {}
    for r in result.metrics().query(MetricsFilter().with_namespace(NAMESPACE))["counters"]:
        counters[r.key.metric.name] = counters.get(r.key.metric.name, 0) + r.committed  # summed over steps
    return Run(written_manifest(built.output), counters, cfg.output, storage_options or {})


def same_outputs(a: Run, b: Run) -> None:
    """Two runs wrote the same files, byte for byte; manifests differ only in times, runner, output
    folder and what was pruned from it."""
    fa, fb = a.files(), b.files()
    assert sorted(fa) == sorted(fb)
    for rel in fa:
        if rel != "manifest.json":
            assert fa[rel] == fb[rel], rel
    ma, mb = (dict(m.manifest) for m in (a, b))
    for m in (ma, mb):
        m.pop("started"), m.pop("finished"), m.pop("runner")
        m["options"] = {k: v for k, v in m["options"].items() if k != "output"}
        m["outputs"] = {k: v for k, v in m["outputs"].items() if k != "pruned"}
    assert ma == mb


# -- hand-made inputs ----------------------------------------------------------------------------


def _lorebook(digest: str, entries: list[dict[str, Any]], part: tuple[str, ...] = ()) -> CanonicalEntity:
    return CanonicalEntity(
        kind="lorebook",
        id=canonical_id("lorebook", digest, *part),
        body=LorebookBody.model_validate({"name": f"book {digest[:4]}", "entries": entries}),
    )


def vaud_bytes(entity: CanonicalEntity, linked: Sequence[CanonicalEntity] = ()) -> bytes:
    return write(entity, "vaud-json", linked=list(linked)).data


#: file name -> (what the pipeline must do with it)
EXPECTED = {
    "cards/mira.vaud.json": "2 entities (character + linked lorebook)",
    "cards/copy-of-mira.vaud.json": "the same bytes: the same entity ids, exports compete",
    "cards/nested/rules.vaud.json": "1 regex entity",
    "books/quiet.vaud.json": "1 lorebook with a lint warning",
    "books/dupes.vaud.json": "validate reject: duplicate entry ids",
    "books/escape.vaud.json": "validate reject: an id that is not a file name",
    "broken/v2.vaud.json": "decode reject: unsupported schemaVersion",
    "broken/half.json": "detect reject: JSON cut short (Malformed, with the byte offset)",
    "broken/noise.bin": "detect reject: random bytes",
    "broken/empty.json": "detect reject: empty",
}


def write_inputs(folder: Path) -> dict[str, str]:
    """Hand-made inputs covering every stage's outcome; returns ``EXPECTED`` (and the files exist)."""
    d = "5a" * 32
    book = _lorebook(
        d, [{"id": "0", "title": "Harbor", "content": "Fog.", "triggers": [{"text": "harbor"}]}], ("book",)
    )
    mira = CanonicalEntity(
        kind="character",
        id=canonical_id("character", d),
        body=CharacterBody.model_validate(
            {"identity": {"name": "Mira"}, "greetings": {"firstMessage": "Hi."}}
        ),
        links={"knowledgeRefs": [book.id]},
    )
    rules = CanonicalEntity(
        kind="regex",
        id=canonical_id("regex", "6b" * 32),
        body=RegexSetBody.model_validate(
            {"name": "tidy", "rules": [{"id": "r0", "find": "\\s+$", "replace": "", "phases": ["output"]}]}
        ),
    )
    quiet = _lorebook("7c" * 32, [{"id": "0", "title": "No keys", "content": "Never fires."}])
    dupes = _lorebook(
        "8d" * 32,
        [{"id": "0", "content": "a", "constant": True}, {"id": "0", "content": "b", "constant": True}],
    )
    escape = CanonicalEntity(
        kind="lorebook",
        id="../../../escaped",
        body=LorebookBody.model_validate({"entries": [{"id": "0", "content": "x", "constant": True}]}),
    )
    v2 = orjson.loads(vaud_bytes(quiet))
    v2["schemaVersion"] = 2
    files = {
        "cards/mira.vaud.json": vaud_bytes(mira, [book]),
        "cards/copy-of-mira.vaud.json": vaud_bytes(mira, [book]),
        "cards/nested/rules.vaud.json": vaud_bytes(rules),
        "books/quiet.vaud.json": vaud_bytes(quiet),
        "books/dupes.vaud.json": vaud_bytes(dupes),
        "books/escape.vaud.json": vaud_bytes(escape),
        "broken/v2.vaud.json": orjson.dumps(v2),
        "broken/half.json": b'{"name": "Mira", "descr',
        "broken/noise.bin": random.Random(7).randbytes(512),
        "broken/empty.json": b"",
    }
    for rel, data in files.items():
        p = folder / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    (folder / ".cache").mkdir()
    (folder / ".cache" / "ignored.json").write_bytes(b"{}")  # hidden: never listed
    return dict(EXPECTED)


@pytest.fixture
def inputs(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "in"
    folder.mkdir()
    write_inputs(folder)
    yield folder


# -- runs shared between tests ---------------------------------------------------------------------


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` (created if missing), between the processes of a test session."""
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


@dataclass(frozen=True)
class SharedRuns:
    """Pipeline runs made once per test session and shared by every test that asserts on the same
    output, across pytest-xdist's workers too: the first test to need a run makes it under a file
    lock, the others wait for it and read it back.

    Everything under ``root`` is read-only for the tests: a test that changes an input or writes
    into an output folder copies it into its own ``tmp_path`` first (``copy_output``).
    """

    root: Path

    def _once(self, name: str, make: Callable[[Path], object]) -> Path:
        folder, done = self.root / name, self.root / f"{name}.done"
        with _locked(self.root / f"{name}.lock"):
            if not done.exists():
                shutil.rmtree(folder, ignore_errors=True)  # a worker that failed half-way
                make(folder)
                done.touch()
        return folder

    def folder(self, name: str, make: Callable[[Path], object]) -> Path:
        """A folder ``make`` fills, made once per session under ``name`` (read-only to the tests)."""
        return self._once(name, make)

    @property
    def inputs(self) -> Path:
        """The hand-made inputs (``write_inputs``), written once."""
        return self._once("inputs", write_inputs)

    @property
    def zip(self) -> Path:
        """The hand-made inputs in one zip archive (members in name order, hidden ones included),
        written once."""

        def make(folder: Path) -> None:
            folder.mkdir()
            with zipfile.ZipFile(folder / "dump.zip", "w") as z:
                for p in sorted(self.inputs.rglob("*")):
                    if p.is_file():
                        z.write(p, p.relative_to(self.inputs).as_posix())

        return self._once("zip", make) / "dump.zip"

    def run(self, *args: str) -> Run:
        """``normalize`` over the shared ``inputs`` (then any ``--input`` in ``args``) with ``args``,
        into a folder of its own; made once per session for each ``args``."""
        return self.run_argv("--input", str(self.inputs), *args)

    def run_argv(self, *argv: str) -> Run:
        """``normalize`` with ``argv`` (everything but ``--output``) into a folder of its own; made
        once per session for each ``argv``."""
        key = "run-" + hashlib.sha256("\0".join(argv).encode()).hexdigest()[:16]
        record = self.root / f"{key}.json"

        def make(folder: Path) -> None:
            run = normalize(*argv, "--output", str(folder / "out"))
            record.write_bytes(orjson.dumps({"argv": argv, "counters": run.counters}))

        out = self._once(key, make) / "out"
        manifest = orjson.loads((out / "manifest.json").read_bytes())
        return Run(manifest, orjson.loads(record.read_bytes())["counters"], str(out))


def copy_output(run: Run, to: Path) -> Path:
    """A copy of a local run's output folder at ``to`` (for a test that writes into it)."""
    shutil.copytree(run.output, to)
    return to


@pytest.fixture(scope="session")
def shared(tmp_path_factory: pytest.TempPathFactory) -> SharedRuns:
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the session's folder, common to its workers
    root = base / "shared-runs"
    root.mkdir(exist_ok=True)
    return SharedRuns(root)


@pytest.fixture(scope="session")
def endpoint() -> Iterator[str]:
    """A moto S3 server on 127.0.0.1, started once per test session (per xdist worker) for the S3
    tests; each test empties it (``test_s3.s3``)."""
    pytest.importorskip("moto.server")
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture(scope="session")
def gcs_emulator() -> Iterator[Any]:
    """A GCS emulator (gcp-storage-emulator, in memory) on 127.0.0.1, started once per test session
    (per xdist worker) for the GCS tests; each test makes its own buckets anew
    (``test_gcs.empty_store``) and opens ``gs://`` with gcsfs's core class while it runs
    (``gcs_emulator.core_gcsfs``, which says why)."""
    pytest.importorskip("gcsfs")
    pytest.importorskip("gcp_storage_emulator")
    from .gcs_emulator import Emulator

    emulator = Emulator().start()
    yield emulator
    emulator.stop()
