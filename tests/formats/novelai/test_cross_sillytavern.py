"""Cross-format: NovelAI lorebooks to and from SillyTavern world info (``sillytavern-lorebook``)."""

from __future__ import annotations

import json

import pytest

from bunzai_codecs import read, write
from bunzai_codecs.entities import LorebookBody
from tests.formats.helpers import covered_losses, sample

ST_WORLD = "sillytavern/world-harbor-town.json"


def _shared(body: LorebookBody) -> list[tuple[object, ...]]:
    """What both apps hold for an entry: title, text, switch, constant, keys, insertion order."""
    return [
        (
            e.title,
            e.content,
            e.enabled,
            e.constant,
            [(t.text, t.isRegex, t.flags) for t in e.triggers or []],
            e.sortOrder,
        )
        for e in body.entries
    ]


@pytest.mark.parametrize(
    "rel", ["novelai/hollin.lorebook", "novelai/hollin.naidata.png", "novelai/night-in-hollin.scenario"]
)
def test_novelai_to_world_info_and_back(rel: str) -> None:
    d = read(sample(rel), rel)
    world = write(d.primary, "sillytavern-lorebook")
    st = read(world.data, "hollin.json")
    assert st.primary.source.format == "sillytavern-lorebook"  # type: ignore[union-attr]
    assert _shared(st.primary.body) == _shared(d.primary.body)  # type: ignore[arg-type]
    back = read(write(st.primary, "novelai-lorebook").data, "again.lorebook")
    assert _shared(back.primary.body) == _shared(d.primary.body)  # type: ignore[arg-type]


def test_world_info_to_novelai_keeps_what_novelai_carries() -> None:
    d = read(sample(ST_WORLD), "world-harbor-town.json")
    assert d.primary.source.format == "sillytavern-lorebook"  # type: ignore[union-attr]
    out = write(d.primary, "novelai-lorebook").data
    book = json.loads(out)
    assert book["lorebookVersion"] == 6
    back = read(out, "harbor.lorebook")
    assert back.primary.source.format == "novelai-lorebook"  # type: ignore[union-attr]
    assert covered_losses(d.primary.body, back.primary.body, "novelai-lorebook") == []
    assert _shared(back.primary.body) == _shared(d.primary.body)  # type: ignore[arg-type]
