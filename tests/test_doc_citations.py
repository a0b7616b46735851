"""Every document the code and docs cite is in this repository: docs/ stands alone.

The design notes the project started from (its field inventory, architecture notes, seeds and
per-app wire notes) live outside the repository, so a citation of them is a dead end for a reader
of a clone. Code and docs cite the published model (docs/canonical-model.md, generated from the
models) and the format pages (docs/formats/<app>.md) instead, with an ``#anchor`` that exists.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from bunzai_codecs.modeldoc import anchor

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SKIP_DIRS = {".git", ".venv", "out", "build", "dist", ".bench", "node_modules", "__pycache__"}
TEXT_SUFFIXES = {".py", ".md", ".toml", ".txt", ".cfg", ".ini", ".yaml", ".yml", ".html", ".js", ".css"}
TEXT_NAMES = {"Makefile", "Dockerfile"}

#: citations of documents outside the repository, each with what to cite instead. ``CANONICAL``
#: as a Python name (``CANONICAL,``, ``shards[CANONICAL]``, ``"CANONICAL"`` in ``__all__``) is a dataset
#: name, not a citation.
FOREIGN = [
    (
        re.compile(r"\bCANONICAL\b(?![_,)\]:\"'])"),
        "the design's field inventory: cite docs/canonical-model.md#...",
    ),
    (re.compile(r"\bARCHITECTURE\b"), "the design's architecture notes: cite docs/architecture.md"),
    (re.compile(r"\bseeds/"), "the design's seeds: cite docs/formats/<app>.md#..."),
    (re.compile(r"\.\./shared/(?!corpus\b|tools\b)"), "../shared (only its corpus and tools may be named)"),
    (re.compile(r"formats/[\w-]+\.md`?\s*§"), "a section number of the design's wire notes: cite an #anchor"),
]
FORMAT_DOC = re.compile(r"(?<![\w.-])(?:\.\./shared/)?(?:docs/|\.\./)?formats/([\w-]+)\.md")
ANCHORED = re.compile(r"([\w./-]*?)([\w-]+\.md)#([\w-]+)")


def _skipped(folder: tuple[str, ...]) -> bool:
    name = folder[-1]
    return (
        name in SKIP_DIRS
        or name.endswith(".egg-info")
        or (name.startswith(".") and name not in (".ci", ".github"))  # tool caches
        or folder == ("tests", "fuzz", "corpus")
        # the pipeline's golden outputs: data (1.7 MB of it), not prose that cites anything
        or folder == ("tests", "pipeline", "goldens")
    )


def repo_files() -> Iterator[Path]:
    found = []
    for top, dirs, files in os.walk(ROOT):  # skipped folders are never entered (.venv is large)
        folders = Path(top).relative_to(ROOT).parts
        dirs[:] = [d for d in dirs if not _skipped((*folders, d))]
        for name in files:
            p = Path(top) / name
            if p.is_file() and (p.suffix in TEXT_SUFFIXES or p.name in TEXT_NAMES or folders == (".ci",)):
                found.append(p)
    yield from sorted(found)


@functools.cache  # one parse per document, however often it is cited
def anchors(doc: Path) -> set[str]:
    """The anchors of a Markdown file's headings, repeated headings numbered as GitHub does."""
    seen: dict[str, int] = {}
    for line in doc.read_text(encoding="utf-8").splitlines():
        m = re.match(r"#{1,6} (.+)", line)
        if m:
            a = anchor(m.group(1))
            seen[a] = seen.get(a, -1) + 1
    out = set()
    for a, n in seen.items():
        out.add(a)
        out.update(f"{a}-{i}" for i in range(1, n + 1))
    return out


def resolve(cited_from: Path, folder: str, name: str) -> Path | None:
    """The repository file a ``folder/name.md`` citation names (from the root, the citing file's
    folder, or docs/), or None."""
    rel = folder + name
    candidates = [ROOT / rel, cited_from.parent / rel, DOCS / rel]
    if rel.startswith("docs/"):
        candidates.insert(0, ROOT / rel)
    return next((c.resolve() for c in candidates if c.is_file()), None)


def problems(path: Path, text: str) -> list[str]:
    rel = path.relative_to(ROOT)
    out = []
    for no, line in enumerate(text.splitlines(), 1):
        for rx, why in FOREIGN:
            if rx.search(line):
                out.append(f"{rel}:{no}: cites {why}: {line.strip()[:120]}")
        # (each pattern only on a line that can hold it: ANCHORED's lazy prefix backtracks on every
        # position of a long word, and a line of base64 took minutes)
        for m in FORMAT_DOC.finditer(line) if "formats/" in line else ():
            if not (DOCS / "formats" / f"{m.group(1)}.md").is_file():
                out.append(f"{rel}:{no}: cites formats/{m.group(1)}.md, which docs/formats/ lacks")
        for m in ANCHORED.finditer(line) if ".md#" in line else ():
            doc = resolve(path, m.group(1), m.group(2))
            if doc is None:
                out.append(f"{rel}:{no}: cites {m.group(0)}, whose document is not in the repository")
            elif m.group(3) not in anchors(doc):
                out.append(f"{rel}:{no}: cites {m.group(0)}, but {doc.name} has no heading #{m.group(3)}")
    return out


def test_every_cited_document_is_in_the_repository() -> None:
    found = [
        p
        for path in repo_files()
        if path != Path(__file__).resolve()
        for p in problems(path, path.read_text(encoding="utf-8", errors="replace"))
    ]
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    "line",
    [
        "(CANONICAL.md §2.3)",
        "as CANONICAL says",
        '(ARCHITECTURE "Bundles")',
        "the ../shared/seeds/marinara-format.txt gates",
        "Facts: ../shared/formats/agnai-marinara.md A1",
        "(formats/sillytavern.md §5)",
        "(formats/others.md)",
        "docs/canonical-model.md#no-such-heading",
        "docs/formats/risu.md#no-such-heading",
        "see docs/missing.md#x",
    ],
)
def test_a_foreign_citation_is_caught(line: str) -> None:
    assert problems(ROOT / "bunzai_codecs" / "x.py", line)


@pytest.mark.parametrize(
    "line",
    [
        "CANONICAL, FIDELITY = 'canonical', 'fidelity'",
        "shards[CANONICAL]",
        '__all__ = ["CANONICAL", "DATASETS"]',
        "CANONICAL_PATHS = {}",
        "real files in ../shared/corpus/risu/",
        "(docs/canonical-model.md#loreentry)",
        "(docs/formats/sillytavern.md#world-info-entry---loreentry)",
        "(docs/formats/novelai.md#quirks-1)",
        "[risu](../formats/risu.md#the-module-gate)",
    ],
)
def test_a_repository_citation_passes(line: str) -> None:
    assert problems(ROOT / "docs" / "entities" / "README.md", line) == []
