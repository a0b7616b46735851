"""Fixtures the format tests share."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from bunzai_codecs.formats.tavern import png as tavern_png


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many times each PNG card keyword's payload is parsed (``tavern.png.payload_tree``)."""
    counts: Counter[str] = Counter()
    real = tavern_png.payload_tree

    def counting(t: Any, offset: int) -> Any:
        counts[t.keyword] += 1
        return real(t, offset)

    monkeypatch.setattr(tavern_png, "payload_tree", counting)
    return counts
