"""Every real file EXPECT.tsv names for RoleCall detects as expected, round-trips, is canonically
stable and survives vaud-json; plus what the real files say about the mapping."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import corpus_root, expect_rows

from bunzai_codecs import read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import CharacterBody, LorebookBody, PresetBody
from tests.formats.codec_helpers import rt_compare

ROWS = expect_rows("rolecall")
IDS = [r[0] for r in ROWS]


def _path(rel: str) -> Path:
    root = corpus_root()
    if root is None:
        pytest.skip("shared corpus not present")
    return root / rel


def test_the_corpus_has_the_rows_this_suite_expects() -> None:
    if corpus_root() is None:
        pytest.skip("shared corpus not present")
    assert {f for _, f in ROWS} == {"rolecall", "rolecall-lorebook", "rolecall-preset"}


@pytest.mark.parametrize(("rel", "fmt"), ROWS, ids=IDS)
def test_corpus_file_detects_round_trips_and_is_stable(rel: str, fmt: str) -> None:
    data = _path(rel).read_bytes()
    d = registry.detect_all(Sniff(data, rel))
    assert d.best is not None and d.best.id == fmt, d.candidates
    decoded = read(data, rel)
    assert all(not e.warnings for e in decoded.entities), [e.warnings for e in decoded.entities]
    out = write(decoded.primary, fmt, linked=decoded.entities)
    assert rt_compare(data, out.data) == [] and out.beside == []
    again = read(out.data, rel)
    assert [e.body for e in again.entities] == [e.body for e in decoded.entities]
    vaud = write(decoded.primary, "vaud-json", linked=decoded.entities).data
    back = read(vaud, "x.vaud.json")
    assert rt_compare(data, write(back.primary, fmt, linked=back.entities).data) == []


def test_vera_casting_card_injections_come_before_the_depth_prompt() -> None:
    b = read(
        _path("rolecall/character.vera-casting-card.v3.rolecall.json").read_bytes(), "v.json"
    ).primary.body
    assert isinstance(b, CharacterBody)
    assert [(i.text, i.origin) for i in b.prompts.depthInjections or []] == [
        ("remember the map is never finished", "rolecall_details"),
        ("Vera never lies about distances", "rolecall_details"),
        ("stay in character as Vera", "depth_prompt"),
    ]
    assert [g.title for g in b.greetings.alternateGreetings or []] == ["Reunion", None]
    assert b.attribution.source == ["chi"]
    assert [m.role for m in b.media.assets or []] == ["emotion", "emotion", "outfit", "pose", "background"]
    bag = b.extensions["rolecall"]
    assert bag["linkedLorebooks"][0]["id"] == "lb1" and bag["details"]["age"] == "34"


def test_aetheria_unsupported_fields_map_onto_canonical_fields() -> None:
    b = read(_path("rolecall/lorebook.aetheria.v1.rolecall.json").read_bytes(), "a.json").primary.body
    assert isinstance(b, LorebookBody)
    e1 = b.entries[0]
    assert (e1.vectorized, e1.groupOverride, e1.useGroupScoring, e1.automationId) == (
        True,
        True,
        False,
        "auto-9",
    )
    assert e1.generationTriggers == [] and e1.outletName == ""
    assert e1.extensions is None  # every key of that bag has a canonical home
    assert [(t.text, t.probability) for t in e1.triggers or []] == [("skyport", 80)]


def test_spec_walk_preset_uses_the_rolecall_name_and_choice_groups() -> None:
    b = read(_path("rolecall/preset.spec-walk.rolecall.json").read_bytes(), "p.json").primary.body
    assert isinstance(b, PresetBody)
    assert b.name == "Spec Walk RC" and b.description and b.description.startswith("A spec-walk preset")
    lang, pace = b.choices
    assert (lang.type, lang.default, lang.extras) == (
        "input",
        "English",
        {
            "description": "Write ALL output in this language.",
            "placeholder": "Spanish",
            "suggestions": ["English", "Spanish"],
        },
    )
    assert [o.value for o in pace.options] == ["slow", "fast"]
