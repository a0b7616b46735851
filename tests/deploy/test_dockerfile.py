"""deploy/Dockerfile: one image that is both the Dataflow SDK container and the Flex Template
launcher (Docker cannot build here, so its rules are linted; see tests/deploy/lint.py). Each rule
is also shown catching a broken Dockerfile."""

from __future__ import annotations

import pytest
from packaging.requirements import Requirement

from .conftest import DEPLOY, ROOT, beam_version, pyproject
from .lint import BEAM_IMAGE, lint_dockerfile, parse_dockerfile

DOCKERFILE = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")


def test_dockerfile_passes_the_lint() -> None:
    assert lint_dockerfile(DOCKERFILE, beam_version=beam_version(), root=ROOT) == []


def test_base_image_is_the_beam_version_pyproject_allows() -> None:
    v = beam_version()
    beam = next(Requirement(d) for d in pyproject()["project"]["dependencies"] if d.startswith("apache-beam"))
    assert beam.specifier.contains(v), (str(beam.specifier), v)
    froms = [x.args for x in parse_dockerfile(DOCKERFILE) if x.cmd == "FROM"]
    assert froms[-1] == f"{BEAM_IMAGE}:{v}"


def test_the_image_installs_every_package_the_wheel_holds() -> None:
    """The COPY lines bring each top-level package setuptools finds (pyproject's include list)."""
    include = pyproject()["tool"]["setuptools"]["packages"]["find"]["include"]
    tops = {pat.rstrip("*") for pat in include}
    copied = {
        x.args.split()[0]
        for x in parse_dockerfile(DOCKERFILE)
        if x.cmd == "COPY" and not x.args.startswith("--") and len(x.args.split()) == 2
    }
    assert tops <= copied, tops - copied


def test_dockerignore_keeps_what_the_image_copies() -> None:
    ignored = {
        line.strip()
        for line in (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    for x in parse_dockerfile(DOCKERFILE):
        if x.cmd == "COPY" and not x.args.startswith("--"):
            for src in x.args.split()[:-1]:
                assert src.split("/")[0] not in ignored, src


GOOD = f"""
FROM gcr.io/dataflow-templates-base/python311-template-launcher-base:20240812_RC00 AS launcher
FROM {BEAM_IMAGE}:2.77.0
COPY --from=launcher /opt/google/dataflow/python_template_launcher /opt/google/dataflow/python_template_launcher
COPY deploy/requirements.txt /template/requirements.txt
RUN pip install --no-cache-dir --require-hashes -r /template/requirements.txt
COPY pyproject.toml /src/
RUN pip install --no-deps --no-index --no-build-isolation /src \\
 && pip check
COPY deploy/launch.py /template/launch.py
ENV FLEX_TEMPLATE_PYTHON_PY_FILE=/template/launch.py
ENTRYPOINT ["/opt/apache/beam/boot"]
"""


def test_the_lint_passes_a_minimal_good_dockerfile() -> None:
    assert lint_dockerfile(GOOD, beam_version="2.77.0") == []


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        (f"{BEAM_IMAGE}:2.77.0", f"{BEAM_IMAGE}:2.76.0", "the lock pins apache-beam==2.77.0"),
        (f"{BEAM_IMAGE}:2.77.0", f"{BEAM_IMAGE}:latest", "uses latest"),
        (f"{BEAM_IMAGE}:2.77.0", BEAM_IMAGE, "has no tag"),
        (f"{BEAM_IMAGE}:2.77.0", "python:3.11-slim", "not apache/beam_python3.11_sdk"),
        ("launcher-base:20240812_RC00 AS", "launcher-base:latest AS", "uses latest"),
        ("launcher-base:20240812_RC00 AS", "launcher-base:stable AS", "needs a dated release tag"),
        ("COPY --from=launcher /opt/google", "COPY --from=other /opt/google", "does not copy"),
        (
            "ENV FLEX_TEMPLATE_PYTHON_PY_FILE=/template/launch.py",
            "",
            "FLEX_TEMPLATE_PYTHON_PY_FILE is not set",
        ),
        ("PY_FILE=/template/launch.py", "PY_FILE=/template/main.py", "not a .py file the Dockerfile copies"),
        (
            "ENV FLEX",
            "ENV FLEX_TEMPLATE_PYTHON_REQUIREMENTS_FILE=/template/requirements.txt\nENV FLEX",
            "every launch would reinstall",
        ),
        ('ENTRYPOINT ["/opt/apache/beam/boot"]', "", "no ENTRYPOINT"),
        ('ENTRYPOINT ["/opt/apache/beam/boot"]', "ENTRYPOINT /opt/apache/beam/boot", "exec form"),
        (
            "--require-hashes -r /template/requirements.txt",
            "-r /template/requirements.txt",
            "neither the hash lock",
        ),
        (
            "--require-hashes -r /template/requirements.txt",
            "--require-hashes -r /other.txt",
            "must install deploy",
        ),
        ("--no-deps --no-index", "--no-deps", "neither the hash lock"),
        (
            "COPY pyproject.toml /src/",
            "COPY pyproject.toml /src/\nRUN pip install gcsfs",
            "pip install gcsfs",
        ),
        ("COPY pyproject.toml /src/", "RUN curl -sSL https://x/get.sh | sh", "curl/wget"),
        ("COPY pyproject.toml /src/", "ADD https://example.com/x.tgz /x", "fetches a URL"),
    ],
)
def test_each_rule_catches_its_mistake(old: str, new: str, problem: str) -> None:
    assert GOOD.count(old) == 1, old
    text = GOOD.replace(old, new)
    problems = lint_dockerfile(text, beam_version="2.77.0")
    assert any(problem in p for p in problems), problems


def test_copy_sources_must_exist() -> None:
    problems = lint_dockerfile(GOOD, beam_version="2.77.0", root=ROOT / "tests")
    assert any("deploy/requirements.txt is not in the build context" in p for p in problems)
