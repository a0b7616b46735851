"""The commit on object stores, killed at every step (docs/architecture.md, "The commit on object
stores"), on S3 (moto) and GCS (the emulator).

An output folder holds a committed run. A new run over changed inputs commits into it, and its
process is killed at step k of the commit, for every k: before the removal of the previous
manifest, before each copy into place and each delete of the staged copy, before each delete the
prune makes, before the removal of the staging folders, before the manifest is written. The kill is
a fault-injecting filesystem: the store's own fsspec class, subclassed so that every write, copy
and delete first asks a hook, which raises at the chosen step (the step is not done, and nothing
after it: the run stops there, as a killed worker would, and nothing cleans up).

After each kill, a reader of the folder sees either the previous run whole (a kill before the
commit's first step) or no ``manifest.json`` at all (so ``--since`` and ``bunzai export`` refuse
the folder as incomplete), never a manifest beside a mix; every object it finds is whole: the
previous run's bytes or the new run's. Then a re-run into the folder leaves exactly what an
uninterrupted run leaves, and no staging folder.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest
from fsspec.asyn import sync

from pipeline.dataset.commit import STAGING
from pipeline.dataset.manifest import MANIFEST, read_manifest
from pipeline.export.job import DatasetProblem, ExportConfig, canonical_shards
from pipeline.runtime.storage import Storage

from .conftest import Run, normalize, same_outputs, write_inputs

pytestmark = pytest.mark.slow  # runs the pipeline (two runs per step of the commit)

BUCKET = "bunzai-commit"
#: the previous run exported, the new one does not: the commit moves every dataset's shard over the
#: previous one and the prune removes the previous export
PREVIOUS = ("--fidelity", "off", "--export", "vaud-json")
NEW = ("--fidelity", "off")


class Killed(Exception):
    """The process is gone (raised by the hook at the chosen step)."""


Hook = Callable[[str, str], None]


def _none(op: str, path: str) -> None:
    return None


class Killable:
    """Mixed into a store's fsspec class: every write, copy and delete asks ``hook(op, path)``
    first (``path``: the object written or removed). Sync methods, so fsspec does not replace them
    with its own wrappers of the async ones, which they call."""

    hook: ClassVar[Hook] = staticmethod(_none)

    def pipe_file(self, path: str, value: bytes, **kw: Any) -> Any:
        Killable.hook("write", path)
        return sync(self.loop, self._pipe_file, path, value, **kw)  # type: ignore[attr-defined]

    def put_file(self, lpath: str, rpath: str, **kw: Any) -> Any:
        Killable.hook("write", rpath)
        return sync(self.loop, self._put_file, lpath, rpath, **kw)  # type: ignore[attr-defined]

    def cp_file(self, path1: str, path2: str, **kw: Any) -> Any:
        Killable.hook("copy", path2)
        return sync(self.loop, self._cp_file, path1, path2, **kw)  # type: ignore[attr-defined]

    def rm_file(self, path: str, **kw: Any) -> Any:
        Killable.hook("delete", path)
        return sync(self.loop, self._rm_file, path, **kw)  # type: ignore[attr-defined]

    def rm(self, path: Any, recursive: bool = False, **kw: Any) -> Any:
        Killable.hook("delete-tree" if recursive else "delete", path)
        return sync(self.loop, self._rm, path, recursive=recursive, **kw)  # type: ignore[attr-defined]


@dataclass
class Store:
    """One object store for the test: its protocol, a client on it and the run's storage options."""

    name: str
    protocol: str
    options: dict[str, Any]
    fs: Any
    #: the store's protocols, each opened by the killable class while the test runs
    classes: dict[str, type]

    def url(self, folder: str) -> str:
        return f"{self.protocol}://{BUCKET}/{folder}"

    def objects(self, folder: str) -> dict[str, bytes]:
        self.fs.invalidate_cache()
        root = f"{BUCKET}/{folder}"
        return {p[len(root) + 1 :]: self.fs.cat_file(p) for p in sorted(self.fs.find(root))}

    def copy(self, src: str, dst: str) -> None:
        for rel, data in self.objects(src).items():
            self.fs.pipe_file(f"{BUCKET}/{dst}/{rel}", data)


def _killable(cls: type) -> type:
    """``cls`` with the hook before every write, copy and delete."""
    return type(f"Killable{cls.__name__}", (Killable, cls), {})


@pytest.fixture(params=["s3", "gcs"])
def store(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    if request.param == "s3":
        pytest.importorskip("moto.server")
        import requests
        import s3fs

        from .test_s3 import _options

        endpoint = request.getfixturevalue("endpoint")
        for k, v in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}.items():
            monkeypatch.setenv(k, v)
        requests.post(f"{endpoint}/moto-api/reset", timeout=10)
        s3fs.S3FileSystem.clear_instance_cache()
        options = _options(endpoint)
        fs = s3fs.S3FileSystem(**options, skip_instance_cache=True)
        killable = _killable(s3fs.S3FileSystem)
        made = Store("s3", "s3", options, fs, {"s3": killable, "s3a": killable})
    else:
        emulator = request.getfixturevalue("gcs_emulator")
        import gcsfs.core

        from .gcs_emulator import options as gcs_options
        from .test_gcs import empty_store

        empty_store(emulator, BUCKET)
        options = gcs_options(emulator.url)
        fs = gcsfs.core.GCSFileSystem(**options, skip_instance_cache=True)
        killable = _killable(gcsfs.core.GCSFileSystem)  # not gcsfs's default: gcs_emulator.py says why
        made = Store("gcs", "gs", options, fs, {"gs": killable, "gcs": killable})
    if not made.fs.exists(BUCKET):
        made.fs.mkdir(BUCKET)
    from .gcs_emulator import registered

    try:
        with registered(made.classes):
            yield made
    finally:
        Killable.hook = staticmethod(_none)  # type: ignore[assignment]
        for cls in set(made.classes.values()):
            cls.clear_instance_cache()  # type: ignore[attr-defined]


@dataclass
class Steps:
    """The hook: counts the commit's steps (from the removal of the previous manifest on: before
    it, a run writes only into its staging folder) and kills the process at step ``kill``."""

    root: str
    kill: int | None = None
    seen: list[tuple[str, str]] = field(default_factory=list)

    def __call__(self, op: str, path: Any) -> None:
        path = str(path)
        if not self.seen and not (op == "delete" and path.endswith(f"{self.root}/{MANIFEST}")):
            assert STAGING in path, f"a write outside the staging folder before the commit: {op} {path}"
            return
        self.seen.append((op, path))
        if self.kill is not None and len(self.seen) == self.kill:
            raise Killed(f"killed at step {self.kill}: {op} {path}")


def _inputs(folder: Path, changed: bool) -> Path:
    """One lorebook (the fewer the files, the fewer the commit's steps, each a run here), as the
    previous night had it or edited."""
    write_inputs(folder.with_name(folder.name + "-all"))
    data = (folder.with_name(folder.name + "-all") / "books" / "quiet.vaud.json").read_bytes()
    if changed:
        data = data.replace(b"Never fires.", b"Fires now and then.")
    folder.mkdir()
    (folder / "quiet.vaud.json").write_bytes(data)
    return folder


@dataclass
class Nights:
    """The folder before the commit (a committed previous run) and what the new run's commit does
    to it: its steps, and the files an uninterrupted run leaves."""

    previous: dict[str, bytes]
    final: Run
    final_files: dict[str, bytes]
    steps: list[tuple[str, str]]
    new_inputs: Path


def _nights(store: Store, tmp: Path) -> Nights:
    first = normalize(
        "--input",
        str(_inputs(tmp / "prev-in", changed=False)),
        *PREVIOUS,
        "--output",
        store.url("previous"),
        storage_options=store.options,
    )
    assert first.manifest["commit"]["ok"]
    previous = store.objects("previous")
    new_inputs = _inputs(tmp / "new-in", changed=True)
    store.copy("previous", "final")
    steps = Steps(f"{BUCKET}/final")
    Killable.hook = staticmethod(steps)  # type: ignore[assignment]
    try:
        final = normalize(
            "--input", str(new_inputs), *NEW, "--output", store.url("final"), storage_options=store.options
        )
    finally:
        Killable.hook = staticmethod(_none)  # type: ignore[assignment]
    final_files = store.objects("final")
    # the commit does each kind of step: the old manifest goes, files are copied into place and
    # their staged copies deleted, stale files pruned, the staging folders removed, the manifest
    # written, in that order
    ops = [op for op, _ in steps.seen]
    assert ops[0] == "delete" and steps.seen[0][1].endswith(MANIFEST)
    assert ops[-2:] == ["delete-tree", "write"] and steps.seen[-1][1].endswith(f"final/{MANIFEST}")
    moves = [p for op, p in steps.seen if op == "copy"]
    assert moves and all(STAGING not in p for p in moves)
    pruned = [p for op, p in steps.seen[1:-2] if op == "delete" and STAGING not in p]
    assert pruned and all("/exports/" in p for p in pruned)
    assert not any(STAGING in k for k in final_files) and MANIFEST in final_files
    return Nights(previous, final, final_files, steps.seen, new_inputs)


def _reader_sees(store: Store, folder: str, nights: Nights, step: int) -> None:
    """What a reader of the folder finds after a kill at ``step``."""
    now = store.objects(folder)
    placed = {k: v for k, v in now.items() if not k.startswith(STAGING + "/")}
    storage = Storage(store.options)
    if step == 1:  # nothing of the commit was done: the previous run, whole
        assert placed == nights.previous
        assert read_manifest(storage, store.url(f"{folder}/{MANIFEST}"), committed=True)
        return
    # from the first step on: no manifest, and the readers refuse the folder
    assert MANIFEST not in placed, f"a manifest beside a mix after a kill at step {step}"
    with pytest.raises(FileNotFoundError):
        read_manifest(storage, store.url(f"{folder}/{MANIFEST}"))
    cfg = ExportConfig(dataset=store.url(folder), output="unused", to=("vaud-json",), storage=storage)
    with pytest.raises(DatasetProblem, match="not a complete dataset"):
        canonical_shards(cfg)
    # every object in place is whole: the previous run's bytes or the new run's
    for rel, data in placed.items():
        assert data in (nights.previous.get(rel), nights.final_files.get(rel)), (step, rel)


def test_a_commit_killed_at_every_step_is_repaired_by_a_rerun(
    store: Store, tmp_path_factory: pytest.TempPathFactory
) -> None:
    nights = _nights(store, tmp_path_factory.mktemp(f"commit-{store.name}"))
    for step in range(1, len(nights.steps) + 1):
        folder = f"killed-{step:02d}"
        store.copy("previous", folder)
        hook = Steps(f"{BUCKET}/{folder}", kill=step)
        Killable.hook = staticmethod(hook)  # type: ignore[assignment]
        try:
            with pytest.raises(Exception, match=f"killed at step {step}"):
                normalize(
                    "--input", str(nights.new_inputs), *NEW, "--output", store.url(folder),
                    storage_options=store.options,
                )  # fmt: skip
        finally:
            Killable.hook = staticmethod(_none)  # type: ignore[assignment]
        # the same step, the same kind of step, in every run
        assert [op for op, _ in hook.seen] == [op for op, _ in nights.steps[:step]], step
        _reader_sees(store, folder, nights, step)

        rerun = normalize(
            "--input",
            str(nights.new_inputs),
            *NEW,
            "--output",
            store.url(folder),
            storage_options=store.options,
        )
        assert not any(k.startswith(STAGING) for k in store.objects(folder)), step
        same_outputs(nights.final, rerun)
