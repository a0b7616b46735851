"""Every hostile input ends as a decoded entity or a typed error — never a crash."""

from __future__ import annotations

import pytest

from .generate import Case, cases
from .harness import run

CASES = list(cases())


@pytest.mark.parametrize("case", CASES, ids=[f"{c.category}:{c.name}" for c in CASES])
def test_no_crash(case: Case) -> None:
    out = run(case)
    assert not out.crashes, "\n".join(out.crashes)


def test_the_generator_covers_every_category() -> None:
    cats = {c.category for c in CASES}
    assert {"zip", "png", "json", "random"} <= cats
    assert any(c.startswith("shape:") for c in cats)


def test_bombs_and_traversal_are_rejected_not_decoded() -> None:
    by_name = {c.name: c for c in CASES}
    for name in [
        "high-ratio bomb (200 MiB of zeros)",
        "zTXt bomb",
        "iTXt bomb",
        "dot-dot name",
        "symlink entry",
        "nesting 100k deep (arrays)",
        "chara: invalid base64",
    ]:
        out = run(by_name[name])
        assert out.status == "rejected", (name, out)
