"""marinara-story-bundle: a references-only envelope kept as a lorebook-kind entity."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from bunzai_codecs import Malformed, read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.sniff import Sniff

SAMPLE = (
    Path(__file__).resolve().parents[3] / "samples" / "marinara" / "story-bundle.lanternfall.marinara.json"
)


def test_detects_only_the_story_bundle_envelope() -> None:
    data = SAMPLE.read_bytes()
    assert registry.detect(Sniff(data, SAMPLE.name)) == registry.Candidate("marinara-story-bundle", 1.0)
    codec = registry.get("marinara-story-bundle")
    other = orjson.dumps({"type": "marinara_lorebook", "version": 1, "data": {}})
    assert codec.detect(Sniff(other, "x.json")) == 0.0


def test_name_and_description_are_canonical_and_the_id_lists_ride_escrow() -> None:
    d = read(SAMPLE.read_bytes(), SAMPLE.name)
    e = d.primary
    assert e.kind == "lorebook" and len(d.entities) == 1
    assert e.body.name == "Lanternfall Nights"  # type: ignore[union-attr]
    assert e.body.description == "<p>Rainy nights in a market lit by paper lanterns.</p>"  # type: ignore[union-attr]
    assert e.body.lorebookType == "story_bundle" and e.body.entries == []  # type: ignore[union-attr]
    assert e.original["marinara-story-bundle"].raw["data"]["lorebookIds"] == ["lanternfall-lore"]


def test_round_trip_and_an_edit_keeps_the_references() -> None:
    d = read(SAMPLE.read_bytes(), SAMPLE.name)
    assert orjson.loads(write(d.primary, "marinara-story-bundle").data) == orjson.loads(SAMPLE.read_bytes())
    d.primary.body = d.primary.body.model_copy(update={"name": "Renamed"})
    out = orjson.loads(write(d.primary, "marinara-story-bundle").data)
    assert out["data"]["name"] == "Renamed"
    assert out["data"]["characterIds"] == ["aria-01"] and out["exportedAt"] == "2026-11-30T00:00:00.000Z"


def test_the_corpus_fixture_round_trips(corpus: Path) -> None:
    f = corpus / "marinara" / "story-bundle.full.test-fixture.marinara.json"
    d = read(f.read_bytes(), f.name)
    assert d.primary.body.name == "Full Test Bundle"  # type: ignore[union-attr]
    assert orjson.loads(write(d.primary, "marinara-story-bundle").data) == orjson.loads(f.read_bytes())


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({"type": "marinara_story_bundle", "data": []}, "$.data"),
        ({"type": "marinara_story_bundle", "data": {"name": 3}}, "$.data.name"),
        ({"type": "marinara_story_bundle", "data": {"lorebookIds": [1]}}, "$.data.lorebookIds"),
    ],
)
def test_bad_input_is_a_typed_error_with_a_path(data: object, path: str) -> None:
    with pytest.raises(Malformed) as e:
        read(orjson.dumps(data), "bad.json", format="marinara-story-bundle")
    assert e.value.path == path
