"""The package the image installs: built offline (no index, no network) as an sdist and a wheel from
exactly what deploy/Dockerfile copies, complete, and enough for a worker: the pickled normalize
graph loads against the unpacked wheel in a fresh process that has no checkout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from apache_beam.internal import pickler

from pipeline.normalize.since import codec_fingerprint
from tests.pipeline.graphs import build_graph, full_argv

from .conftest import DEPLOY, ROOT, pyproject
from .lint import parse_dockerfile

# builds the package (~15 s) once for the module's tests: one xdist worker runs them all
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("package-build")]


def _offline(cmd: list[str]) -> list[str]:
    """``cmd`` in a network namespace with no interface up, where this machine allows one."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], capture_output=True).returncode == 0:
        return [unshare, "-n", *cmd]
    return cmd


def _image_sources() -> list[str]:
    """What the Dockerfile copies to build bunzai (COPY ... /src/bunzai...)."""
    out = []
    for x in parse_dockerfile((DEPLOY / "Dockerfile").read_text()):
        words = x.args.split()
        if x.cmd == "COPY" and not words[0].startswith("--") and words[-1].startswith("/src/bunzai"):
            out += words[:-1]
    return out


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    src = tmp_path_factory.mktemp("src")
    for rel in _image_sources():
        if (ROOT / rel).is_dir():
            shutil.copytree(ROOT / rel, src / rel, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(ROOT / rel, src / rel)
    out = tmp_path_factory.mktemp("dist")
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_CONFIG_FILE": os.devnull}
    # no flags: the sdist first, then the wheel built from the unpacked sdist (so it is complete)
    proc = subprocess.run(
        _offline([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(src)]),
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    (sdist,) = out.glob("bunzai-*.tar.gz")
    (wheel,) = out.glob("bunzai-*-py3-none-any.whl")
    yield sdist, wheel


def _sources(top: str) -> set[str]:
    return {
        p.relative_to(ROOT).as_posix() for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts
    }


def test_wheel_holds_the_packages_and_nothing_else(dists: tuple[Path, Path]) -> None:
    _, wheel = dists
    names = set(zipfile.ZipFile(wheel).namelist())
    tops = {n.split("/")[0] for n in names}
    version = pyproject()["project"]["version"]
    assert tops == {"bunzai_codecs", "pipeline", "jobs", f"bunzai-{version}.dist-info"}
    for top in ("bunzai_codecs", "pipeline", "jobs"):
        missing = _sources(top) - names
        assert not missing, f"{top}: not in the wheel: {sorted(missing)[:5]}"
    assert "bunzai_codecs/py.typed" in names
    info = zipfile.ZipFile(wheel)
    entry_points = info.read(f"bunzai-{version}.dist-info/entry_points.txt").decode()
    assert "bunzai = bunzai_codecs.cli:main" in entry_points
    metadata = info.read(f"bunzai-{version}.dist-info/METADATA").decode()
    assert "Provides-Extra: gcp" in metadata and 'gcsfs>=2025.3; extra == "gcp"' in metadata


def test_sdist_holds_what_rebuilds_it(dists: tuple[Path, Path]) -> None:
    sdist, _ = dists
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert {
        "pyproject.toml",
        "README.md",
        "PKG-INFO",
        "bunzai_codecs/__init__.py",
        "jobs/normalize.py",
    } <= names
    assert not any(n.startswith(("tests/", "samples/", "deploy/")) for n in names)


WORKER = textwrap.dedent(
    """
    import json, sys
    site, graphs = sys.argv[1], json.loads(sys.argv[2])
    sys.path.insert(0, site)
    import apache_beam as beam
    from apache_beam.internal import pickler
    from apache_beam.options.pipeline_options import PipelineOptions
    from apache_beam.portability.api import beam_runner_api_pb2
    from apache_beam.runners.portability.fn_api_runner import FnApiRunner
    import bunzai_codecs, jobs.normalize, pipeline.normalize.graph
    from pipeline.normalize.since import codec_fingerprint
    loaded = {}
    for lib, path in graphs.items():
        pickler.set_library(lib)
        proto = beam_runner_api_pb2.Pipeline.FromString(open(path, "rb").read())
        p = beam.Pipeline.from_runner_api(proto, FnApiRunner(), PipelineOptions([]))
        fns = set()
        for t in p.transforms_stack[0].parts:
            stack = [t]
            while stack:
                node = stack.pop()
                stack += node.parts
                fn = getattr(node.transform, "fn", None)
                if fn is not None:
                    fns.add(type(fn).__module__ + "." + type(fn).__qualname__)
        loaded[lib] = sorted(fns)
    print(json.dumps({
        "files": [m.__file__ for m in (bunzai_codecs, jobs.normalize, pipeline.normalize.graph)],
        "fingerprint": codec_fingerprint(),
        "loaded": loaded,
    }))
    """
)


def test_pickled_graph_loads_against_the_wheel_alone(dists: tuple[Path, Path], tmp_path: Path) -> None:
    """What a worker does: load the job's pickled transforms with bunzai installed from the wheel,
    in another process, from a folder with no checkout, with no network."""
    _, wheel = dists
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    p = build_graph(["--runner=FnApiRunner", *full_argv()])
    graphs = {}
    libs = ["cloudpickle"] + (["dill"] if pickler.dill_pickler is not None else [])
    for lib in libs:
        pickler.set_library(lib)
        try:
            (tmp_path / f"{lib}.pb").write_bytes(p.to_runner_api().SerializeToString())
        finally:
            pickler.set_library(pickler.DEFAULT_PICKLE_LIB)
        graphs[lib] = str(tmp_path / f"{lib}.pb")
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "BUNZAI_CORPUS")}
    proc = subprocess.run(
        _offline([sys.executable, "-I", "-c", WORKER, str(site), json.dumps(graphs)]),
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert all(f.startswith(str(site)) for f in report["files"]), report["files"]
    assert report["fingerprint"] == codec_fingerprint()  # the wheel ships every codec source as is
    for lib in libs:
        fns = report["loaded"][lib]
        for cls in (
            "_ListFiles",
            "_ReadBytes",
            "_Detect",
            "_Decode",
            "_Validate",
            "_Export",
            "_WriteManifest",
        ):
            assert any(f.endswith("." + cls) for f in fns), (lib, cls, fns)
