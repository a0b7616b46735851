"""``rolecall-lorebook``: RoleCallExportV1 (docs/formats/rolecall.md#lorebook-rolecallexportv1)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bunzai_codecs import read
from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.entities import LorebookBody
from tests.formats.codec_helpers import decode, dumps, export, rt_compare, sample_tree, scores, winner
from tests.formats.helpers import edited, sample

RCL = "rolecall-lorebook"
HARBOR = "rolecall/harbor.rolecall-lorebook.json"


def book(data: bytes) -> LorebookBody:
    b = decode(data).primary.body
    assert isinstance(b, LorebookBody)
    return b


def test_detection_needs_a_1_0_0_schema_string_and_an_entries_array() -> None:
    tree = sample_tree(HARBOR)
    assert scores(sample(HARBOR)) == {RCL: 1.0}
    assert scores(dumps({**tree, "schemaVersion": "rc-1.0.0-beta"}))[RCL] == 1.0
    assert RCL not in scores(dumps({**tree, "schemaVersion": "2.0.0"}))
    assert RCL not in scores(dumps({**tree, "schemaVersion": 1}))
    assert RCL not in scores(dumps({**tree, "lorebook": {**tree["lorebook"], "entries": {}}}))
    assert RCL not in scores(sample("sillytavern/world-harbor-town.json"))


def test_book_settings_metadata_and_categories() -> None:
    b = book(sample(HARBOR))
    assert (b.name, b.description, b.lorebookType) == (
        "Harbor Town",
        "A fishing town where the fog keeps secrets.",
        "world",
    )
    assert (b.globalScanDepth, b.globalRecursion, b.tokenBudget, b.globalMatchWholeWords) == (
        3,
        False,
        1024,
        False,
    )
    assert b.tags == ["fog", "coast"] and b.entryBudget is None
    assert [(c.id, c.name, c.sortOrder, c.enabled) for c in b.categories] == [("places", "Places", 0, True)]


def test_entry_groups_flatten_onto_the_canonical_entry() -> None:
    tide, ferry = book(sample(HARBOR)).entries
    assert (tide.id, tide.title, tide.comment, tide.content[:14]) == (
        "tide",
        "The Tide Clock",
        None,
        "The tide clock",
    )
    assert [(t.text, t.isRegex, t.flags) for t in tide.triggers or []] == [
        ("tide clock", False, None),
        ("clock\\s+tower", True, "i"),
    ]
    assert tide.secondaryTriggers == [] and tide.selectiveLogic == "and_any"
    assert (tide.caseSensitive, tide.matchWholeWords, tide.scanDepth) == (None, True, None)
    assert (tide.position, tide.sortOrder, tide.priority) == ("world", 5, 60)
    assert (tide.categoryId, tide.group, tide.preventRecursion) == ("places", None, True)
    assert tide.scanSources == ["persona_description"] and tide.characterFilter is None

    assert ferry.comment == "keep Tam ambiguous"
    assert [(t.text, t.probability) for t in ferry.triggers or []] == [("ferry", 70)]
    assert ferry.selectiveLogic == "not_any"
    assert (ferry.position, ferry.depth, ferry.role) == (
        "append_bottom",
        2,
        "assistant",
    )  # RoleCall-only, verbatim
    assert (ferry.sticky, ferry.cooldown, ferry.delay) == (2, 1, 0)
    assert (ferry.group, ferry.groupWeight, ferry.probability) == ("people", 40, 90)
    assert (ferry.excludeRecursion, ferry.delayUntilRecursion, ferry.ignoreBudget) == (True, 2, True)
    assert (
        ferry.characterFilter is not None
        and ferry.characterFilter.isExclude
        and ferry.characterFilter.names == ["Tam"]
    )
    # two scan flags plus the ST-origin bag's matchCreatorNotes
    assert ferry.scanSources == ["character_description", "character_personality", "creator_notes"]
    assert (ferry.vectorized, ferry.outletName) == (False, "ferry-notes")
    assert ferry.extensions == {"customFlag": "kept"}


def test_round_trip_and_canonical_stability() -> None:
    data = sample(HARBOR)
    d = decode(data)
    out = export(d.primary, RCL)
    assert rt_compare(data, out) == []
    assert decode(out).primary.body == d.primary.body


def test_edit_one_entry_keeps_everything_else_of_the_twin() -> None:
    d = decode(sample(HARBOR))

    def change(b: dict[str, Any]) -> None:
        b["entries"][1]["content"] = "Old Tam rows the dawn ferry."
        b["entries"][1]["secondaryTriggers"] = None

    out = json.loads(export(edited(d.primary, change), RCL))
    src = sample_tree(HARBOR)
    assert out["exportDate"] == src["exportDate"]
    assert out["lorebook"]["entries"][0] == src["lorebook"]["entries"][0]
    ferry = out["lorebook"]["entries"][1]
    assert ferry["content"] == "Old Tam rows the dawn ferry."
    assert ferry["triggers"]["secondary"] == []
    assert ferry["advanced"]["useMemo"] is True  # escrow-only value survives
    assert ferry["unsupportedFields"]["customFlag"] == "kept"
    assert out["lorebook"]["metadata"] == src["lorebook"]["metadata"]


def test_delete_an_entry_removes_only_it() -> None:
    d = decode(sample(HARBOR))
    out = json.loads(export(edited(d.primary, lambda b: b["entries"].pop(0)), RCL))
    assert [e["id"] for e in out["lorebook"]["entries"]] == ["ferryman"]
    assert out["lorebook"]["entries"][0] == sample_tree(HARBOR)["lorebook"]["entries"][1]


def test_fresh_export_is_a_v1_envelope_with_a_deterministic_date() -> None:
    st = read(sample("sillytavern/world-harbor-town.json"), "world-harbor-town.json")
    out = export(st.primary, RCL)
    tree = json.loads(out)
    assert tree["schemaVersion"] == "1.0.0" and tree["exportDate"] == "1970-01-01T00:00:00.000Z"
    assert winner(out) == RCL
    assert export(st.primary, RCL) == out
    assert read(out, "x.json").primary.body.model_dump()["entries"][0]["content"]


def test_cross_format_to_sillytavern_world_info_and_back() -> None:
    d = decode(sample(HARBOR))
    world = export(d.primary, "sillytavern-lorebook")
    w = read(world, "Harbor Town.json", format="sillytavern-lorebook").primary.body
    rc = d.primary.body
    assert isinstance(w, LorebookBody) and isinstance(rc, LorebookBody)
    for a, b in zip(w.entries, rc.entries, strict=True):
        assert (a.title, a.content, a.constant, a.enabled) == (b.title, b.content, b.constant, b.enabled)
        assert [t.text for t in a.triggers or []] == [t.text for t in b.triggers or []]
        assert (a.sortOrder, a.probability, a.selectiveLogic) == (
            b.sortOrder,
            b.probability,
            b.selectiveLogic,
        )
    back = read(export(read(world, "Harbor Town.json").primary, RCL), "x.json").primary.body
    assert isinstance(back, LorebookBody)
    assert [e.content for e in back.entries] == [e.content for e in rc.entries]
    assert back.entries[0].scanSources == ["persona_description"]


def test_cross_format_from_sillytavern_world_info() -> None:
    st = read(sample("sillytavern/world-harbor-town.json"), "world-harbor-town.json").primary
    back = read(export(st, RCL), "x.json").primary.body
    src = st.body
    assert isinstance(back, LorebookBody) and isinstance(src, LorebookBody)
    assert [(e.id, e.title, e.content) for e in back.entries] == [
        (e.id, e.title, e.content) for e in src.entries
    ]
    assert [e.triggers for e in back.entries] == [e.triggers for e in src.entries]
    assert [e.position for e in back.entries] == [e.position for e in src.entries]


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda t: t["lorebook"].__setitem__("settings", []), "$.lorebook.settings"),
        (lambda t: t["lorebook"]["entries"].__setitem__(1, "x"), "$.lorebook.entries[1]"),
        (lambda t: t["lorebook"]["entries"][1].__setitem__("triggers", 3), "$.lorebook.entries[1].triggers"),
        (
            lambda t: t["lorebook"]["entries"][1]["triggers"].__setitem__("primary", [{"keyword": []}]),
            "$.lorebook.entries[1].triggers.primary[0].keyword",
        ),
        (
            lambda t: t["lorebook"]["entries"][0]["matching"].__setitem__("scanDepth", "deep"),
            "$.lorebook.entries[0].matching.scanDepth",
        ),
        (lambda t: t["lorebook"].__setitem__("categories", {}), "$.lorebook.categories"),
    ],
)
def test_bad_values_are_typed_errors_with_their_path(mutate: Any, path: str) -> None:
    tree = sample_tree(HARBOR)
    mutate(tree)
    with pytest.raises(Malformed) as err:
        read(dumps(tree), "bad.json", format=RCL)
    assert err.value.path == path and not getattr(err.value, "internal", False)
