"""Shared fixtures. The real-world corpus lives outside the project (../shared/corpus, or
$BUNZAI_CORPUS); tests that read it skip cleanly when it is absent. Its files are never copied in."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from bunzai_codecs.core import basecache
from pipeline.runtime import fixed_cost

ROOT = Path(__file__).resolve().parents[1]

#: every test checks the rules the fast paths trust, and a broken one raises basecache.RuleBroken:
#: core.basecache's (an escrow tree, and the dict mapped from it, is never mutated after decode) and
#: core.seal's (a body marked unedited since decode is its twin's fully validated mapping: compared
#: field by field and by its JSON dump on every write that trusts the mark)
basecache.CHECK = True

#: Beam's fixed cost per run (pipeline/runtime/fixed_cost.py), as a job installs it when it starts: every
#: pipeline the tests build gets the memos
fixed_cost.install()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        help="rewrite the golden text of tests/pipeline/goldens/ from this run (then review `git diff`)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist, the tests marked slow first: workers take tests one at a time in this
    order, so the long pipeline runs start early and the many short tests even out the end. And
    ``--dist loadgroup`` keeps the tests of one ``xdist_group`` on one worker (``_xdist_groups``)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: file order kept
        _xdist_groups(config, items)


def _xdist_groups(config: pytest.Config, items: list[pytest.Item]) -> None:
    """What pytest-xdist 3.8 means to do under ``--dist loadgroup`` and no longer does with pytest
    9.2: end the id of each test marked ``xdist_group(name)`` with ``@name``, the suffix by which
    the scheduler sends a group's tests to one worker. xdist sets ``item._nodeid``, which pytest 9.2
    no longer reads (the id is ``item._id``), so the groups were ignored and a group's module-scoped
    fixture (a Dataflow translation, a package build, a pipeline run) was made on every worker."""
    if not getattr(config.option, "loadgroup", False):  # set on the workers by xdist
        return
    for item in items:
        names = sorted(
            {
                str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                for m in item.iter_markers("xdist_group")
            }
        )
        suffix = "@" + "_".join(names)
        if not names or item.nodeid.endswith(suffix):  # none, or xdist did it (an older pytest)
            continue
        if hasattr(item, "_id"):  # pytest >= 9.2
            from _pytest.nodeid import NodeId

            setattr(item, "_id", NodeId.parse(item.nodeid + suffix))  # noqa: B010
        else:
            setattr(item, "_nodeid", item.nodeid + suffix)  # noqa: B010


def corpus_root() -> Path | None:
    env = os.environ.get("BUNZAI_CORPUS")
    p = Path(env) if env else ROOT.parent / "shared" / "corpus"
    return p if (p / "EXPECT.tsv").is_file() else None


def expect_rows(prefix: str = "") -> list[tuple[str, str]]:
    """(path under the corpus, expected format) rows of EXPECT.tsv, optionally for formats starting
    with ``prefix``; empty when the corpus is absent. A ``.risum`` the file lists as ``risu-regex``
    (written before modules had their own id) is expected as ``risu-module``."""
    root = corpus_root()
    if root is None:
        return []
    rows = []
    for line in (root / "EXPECT.tsv").read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        rel, fmt = line.split("\t")[:2]
        if fmt == "risu-regex" and rel.endswith(".risum"):
            fmt = "risu-module"  # EXPECT.tsv predates modules' own format id (it says risu-regex)
        if fmt.startswith(prefix):
            rows.append((rel, fmt))
    return rows


@pytest.fixture
def corpus() -> Iterator[Path]:
    root = corpus_root()
    if root is None:
        pytest.skip("shared corpus not present (../shared/corpus or $BUNZAI_CORPUS)")
    yield root
