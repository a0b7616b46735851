"""Marinara <-> SillyTavern: the regex detection firewall and conversions in both directions.

A conversion keeps every value both formats hold (paths both coverages declare); what only one side
holds is the expected loss. Values the target writes that the source left unset (``added``) are the
target's own defaults, not losses. The few conversions that do change a value both sides hold are
listed by name with the reason.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from bunzai_codecs import read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.diff import diff
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.sniff import Sniff
from tests.formats.helpers import sample

from ._util import SAMPLES, sample_tree

ST_SAMPLES = SAMPLES.parent / "sillytavern"


def _hop(decoded: Decoded, dst: str, name: str) -> Decoded:
    out = write(decoded.primary, dst, linked=decoded.entities)
    return read(out.data, name, format=dst)


def _losses(a: CanonicalEntity, b: CanonicalEntity, src: str, dst: str) -> list[str]:
    sc, tc = registry.get(src).coverage, registry.get(dst).coverage
    return [
        str(c)
        for c in diff(a.body.dump(), b.body.dump(), empty_is_absent=True)
        if c.kind != "added" and sc.covers(c.path) and tc.covers(c.path)
    ]


def _scores(data: bytes, name: str) -> dict[str, float]:
    s = Sniff(data, name)
    return {c.id: sc for c in registry.all_codecs() if (sc := c.detect(s)) > 0}


# -- the firewall ------------------------------------------------------------------------------


def test_marinara_rows_outbid_sillytavern() -> None:
    scores = _scores(sample("marinara/regex.api-rows.json"), "rows.json")
    assert scores == {"marinara-regex": 0.95, "sillytavern-regex": 0.9}
    assert registry.detect(Sniff(sample("marinara/regex.api-rows.json"), "rows.json")).id == "marinara-regex"  # type: ignore[union-attr]


def test_corpus_rows_outbid_sillytavern(corpus: Path) -> None:
    data = (corpus / "marinara" / "regex.freaky-frankenstein-ff5-suite.rows.json").read_bytes()
    assert _scores(data, "rows.json") == {"marinara-regex": 0.95, "sillytavern-regex": 0.9}


@pytest.mark.parametrize("name", ["regex-Censor.json", "regex-scripts.json"])
def test_sillytavern_files_stay_sillytavern(name: str) -> None:
    data = (ST_SAMPLES / name).read_bytes()
    scores = _scores(data, name)
    assert "marinara-regex" not in scores and registry.detect(Sniff(data, name)).id == "sillytavern-regex"  # type: ignore[union-attr]


def test_a_scriptName_row_hands_the_file_to_sillytavern() -> None:
    rows = sample_tree("regex.api-rows.json")
    rows[0]["scriptName"] = rows[0]["name"]
    data = orjson.dumps(rows)
    assert registry.get("marinara-regex").detect(Sniff(data, "x.json")) == 0.0


# -- regex ------------------------------------------------------------------------------------


def test_regex_to_sillytavern_keeps_the_rules() -> None:
    src = read(sample("marinara/regex.api-rows.json"), "regex.api-rows.json")
    st = _hop(src, "sillytavern-regex", "regex.api-rows.json")
    assert _losses(src.primary, st.primary, "marinara-regex", "sillytavern-regex") == []
    a, b, c = st.primary.body.rules  # type: ignore[attr-defined]
    assert (a.label, a.find, a.flags, a.phases, a.targets, a.maxDepth) == (
        "Strip OOC asides",
        "\\(\\(OOC:[\\s\\S]*?\\)\\)",
        "gi",
        ["output", "input"],
        ["prompt"],
        4,
    )
    assert b.enabled is False and b.targets == ["display"] and b.trimStrings == ["~"]
    assert c.targets == ["display", "prompt"]  # applyMode both = both ST flags
    # back to Marinara: only what ST has no home for is gone (character scope, timestamps)
    back = _hop(st, "marinara-regex", "regex.api-rows.json")
    assert _losses(src.primary, back.primary, "marinara-regex", "marinara-regex") == [
        "rules[1].characterIds: removed"
    ]


def test_sillytavern_regex_to_marinara() -> None:
    src = read((ST_SAMPLES / "regex-scripts.json").read_bytes(), "regex-scripts.json")
    mar = _hop(src, "marinara-regex", "regex-scripts.json")
    losses = _losses(src.primary, mar.primary, "sillytavern-regex", "marinara-regex")
    # phases Marinara has no placement for (slash commands, reasoning, world info...) are dropped
    assert all(x.startswith("rules[") and ".phases[" in x for x in losses), losses
    for a, b in zip(src.primary.body.rules, mar.primary.body.rules, strict=True):  # type: ignore[attr-defined]
        assert (a.label, a.find, a.flags, a.replace, a.enabled) == (
            b.label,
            b.find,
            b.flags,
            b.replace,
            b.enabled,
        )
        # ST's "neither flag" edits the stored text: Marinara's importer calls that applyMode both
        assert b.targets == (a.targets if a.targets is not None else ["display", "prompt"])


# -- lorebook ----------------------------------------------------------------------------------


def test_lorebook_to_world_info_keeps_every_entry_field_world_info_holds() -> None:
    src = read(sample("marinara/lorebook.saltmarsh.marinara.json"), "saltmarsh.marinara.json")
    st = _hop(src, "sillytavern-lorebook", "Saltmarsh.json")
    losses = _losses(src.primary, st.primary, "marinara-lorebook", "sillytavern-lorebook")
    assert losses == []
    # world info ids are integer uids (so sillytavern-lorebook does not claim entry ids): renumbered
    assert [e.id for e in st.primary.body.entries] == ["0", "1", "2", "3"]  # type: ignore[attr-defined]
    k = st.primary.body.entries[1]  # type: ignore[attr-defined]
    assert (k.position, k.depth, k.role, k.selectiveLogic, k.probability, k.sortOrder) == (
        "depth",
        2,
        "assistant",
        "not_any",
        40,
        50,
    )
    assert [t.isRegex for t in k.triggers] == [True, True]
    bells = st.primary.body.entries[3]  # type: ignore[attr-defined]
    assert (bells.position, bells.outletName) == ("outlet", "ambience")


def test_world_info_to_marinara() -> None:
    src = read((ST_SAMPLES / "world-harbor-town.json").read_bytes(), "world-harbor-town.json")
    mar = _hop(src, "marinara-lorebook", "world-harbor-town.marinara.json")
    losses = _losses(src.primary, mar.primary, "sillytavern-lorebook", "marinara-lorebook")
    src_entries = src.primary.body.entries  # type: ignore[attr-defined]
    for loss in losses:
        i = int(loss.split("[", 2)[1].split("]")[0])
        e = src_entries[i]
        if ".position:" in loss:
            # Marinara has no author's-note or example slots: after the character definition
            assert e.position in ("author_note_top", "author_note_bottom", "before_example", "after_example")
            assert loss.endswith("-> 'character'")
        else:
            # useRegex is per entry: one regex key makes the entry's plain keys regexes too
            assert ".isRegex: False -> True" in loss and any(t.isRegex for t in e.triggers or [])
    out = mar.primary.body.entries  # type: ignore[attr-defined]
    assert [e.content for e in out] == [e.content for e in src_entries]
    assert [e.sortOrder for e in out] == [e.sortOrder for e in src_entries]


# -- preset ------------------------------------------------------------------------------------


def test_preset_to_sillytavern() -> None:
    src = read(sample("marinara/preset.tidewater.marinara.json"), "tidewater.marinara.json")
    st = _hop(src, "sillytavern-preset", "Tidewater Narrator.json")
    assert _losses(src.primary, st.primary, "marinara-preset", "sillytavern-preset") == []
    # SillyTavern identifies a marker by its slot (so sillytavern-preset claims neither prompt ids
    # nor marker slots): the chat history marker is `chatHistory`, and it has no generic world-info
    # slot, so the `lorebook` marker keeps its identifier as its slot
    b = st.primary.body
    assert (b.prompts[2].markerSlot, b.prompts[3].id) == ("lorebook", "chatHistory")  # type: ignore[attr-defined]
    assert (b.samplers.temperature, b.samplers.topK, b.apiOptions.reasoningEffort) == (0.9, 40, "medium")  # type: ignore[attr-defined]
    nudge = b.prompts[4]  # type: ignore[attr-defined]
    assert (nudge.placement, nudge.injectionDepth, nudge.enabled) == ("in_chat", 2, False)
    # and back: the lorebook marker is Marinara's lorebook again
    back = _hop(st, "marinara-preset", "tidewater.marinara.json")
    assert back.primary.body.prompts[2].markerSlot == "worldInfo"  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", ["preset-noir-detective.json", "preset-prompts-export.json"])
def test_sillytavern_preset_to_marinara(name: str) -> None:
    src = read((ST_SAMPLES / name).read_bytes(), name)
    mar = _hop(src, "marinara-preset", "x.marinara.json")
    assert _losses(src.primary, mar.primary, "sillytavern-preset", "marinara-preset") == []
    t = orjson.loads(write(src.primary, "marinara-preset").data)
    assert t["data"]["sections"] and all(s["enabled"] in ("true", "false") for s in t["data"]["sections"])


# -- persona -----------------------------------------------------------------------------------


def test_persona_to_sillytavern_and_back() -> None:
    src = read(sample("marinara/persona.wren.marinara.json"), "wren.marinara.json")
    st = _hop(src, "sillytavern-persona", "personas.json")
    assert _losses(src.primary, st.primary, "marinara-persona", "sillytavern-persona") == []
    assert (st.primary.body.name, st.primary.body.content, st.primary.body.brief) == (  # type: ignore[attr-defined]
        src.primary.body.name,  # type: ignore[attr-defined]
        src.primary.body.content,  # type: ignore[attr-defined]
        src.primary.body.brief,  # type: ignore[attr-defined]
    )


@pytest.mark.parametrize("name", ["personas-backup.json", "settings-with-personas.json"])
def test_sillytavern_persona_to_marinara(name: str) -> None:
    src = read((ST_SAMPLES / name).read_bytes(), name)
    mar = _hop(src, "marinara-persona", "x.marinara.json")
    assert _losses(src.primary, mar.primary, "sillytavern-persona", "marinara-persona") == []
    assert mar.primary.body.attribution.source == "marinara"  # type: ignore[attr-defined]


# -- character ---------------------------------------------------------------------------------


def test_character_to_sillytavern_card_and_back() -> None:
    src = read(sample("marinara/character.vesna.marinara.json"), "vesna.marinara.json")
    st = _hop(src, "sillytavern", "vesna.json")
    assert _losses(src.primary, st.primary, "marinara-character", "sillytavern") == []
    assert st.primary.body.extensions["rpgStats"] == src.primary.body.extensions["rpgStats"]  # type: ignore[attr-defined]
    assert [e.kind for e in st.entities] == ["character", "lorebook", "regex"]
    back = _hop(st, "marinara-character", "vesna.marinara.json")
    # ST has no home for appearance (nor for the envelope's data-URL images)
    assert _losses(src.primary, back.primary, "marinara-character", "marinara-character") == [
        "persona.appearance: removed"
    ]
    assert [e.body for e in back.entities[1:]] == [e.body for e in src.entities[1:]]


@pytest.mark.parametrize("name", ["lighthouse-keeper.v2.json", "starship-captain.v3.json"])
def test_sillytavern_card_to_marinara(name: str) -> None:
    src = read((ST_SAMPLES / name).read_bytes(), name)
    mar = _hop(src, "marinara-character", "x.marinara.json")
    losses = _losses(src.primary, mar.primary, "sillytavern", "marinara-character")
    # a portrait or asset that is not a data URL (ccdefault:, embeded://, https) has no envelope home
    assert all(x.startswith("media.") for x in losses), losses
    assert [e.kind for e in mar.entities] == [e.kind for e in src.entities]
    for a, b in zip(src.entities[1:], mar.entities[1:], strict=True):
        assert a.body == b.body


# -- regex <-> RisuAI ----------------------------------------------------------------------------

RISU_SAMPLES = SAMPLES.parent / "risu"


def test_regex_to_risu_keeps_what_a_risu_script_holds() -> None:
    src = read(sample("marinara/regex.api-rows.json"), "regex.api-rows.json")
    risu = _hop(src, "risu-regex", "regex.api-rows.json")
    losses = _losses(src.primary, risu.primary, "marinara-regex", "risu-regex")
    assert losses == []
    # Risu scripts have no id (the index is the id) and one `type`: a second phase, or the phase of
    # a disabled script (Risu's type "disabled"), has no home (risu-regex claims neither)
    rules = risu.primary.body.rules  # type: ignore[attr-defined]
    assert [r.id for r in rules] == ["0", "1", "2"]
    before = src.primary.body.rules  # type: ignore[attr-defined]
    assert [len(a.phases) - len(b.phases) for a, b in zip(before, rules, strict=True)] == [1, 1, 0]
    for a, b in zip(src.primary.body.rules, risu.primary.body.rules, strict=True):  # type: ignore[attr-defined]
        assert (a.label, a.find, a.replace, a.enabled) == (b.label, b.find, b.replace, b.enabled)


@pytest.mark.parametrize("name", ["harbor_regexscript_export.json", "lantern_harbor.risum"])
def test_risu_regex_to_marinara(name: str) -> None:
    from bunzai_codecs.formats.marinara.regex import NO_PLACEMENT

    src = read((RISU_SAMPLES / name).read_bytes(), name)
    rx = next(e for e in src.entities if e.kind == "regex")
    assert rx.source is not None
    mar = read(write(rx, "marinara-regex").data, "x.json", format="marinara-regex").primary
    losses = _losses(rx, mar, rx.source.format, "marinara-regex")
    src_rules = rx.body.rules  # type: ignore[attr-defined]
    for loss in [x for x in losses if not x.startswith("name:")]:  # the set name is the file name
        i = int(loss.split("[", 2)[1].split("]")[0])
        # only phases Marinara has no placement for (display, request...) are dropped
        assert ".phases[" in loss and any(p in NO_PLACEMENT for p in src_rules[i].phases), loss
    for a, b in zip(src_rules, mar.body.rules, strict=True):  # type: ignore[attr-defined]
        assert (a.label, a.find, a.flags, a.replace, a.enabled) == (
            b.label,
            b.find,
            b.flags,
            b.replace,
            b.enabled,
        )


def test_risu_card_to_marinara_judges_the_embedded_book_and_scripts_by_what_a_card_holds() -> None:
    """The card embeds the Risu book as a character_book and the Risu scripts as ST regex_scripts:
    their losses are classed by what those hold (embedded_coverage), not by marinara-lorebook or
    marinara-regex, and the Risu rules keep their patterns (flag directives are not written into
    the /pattern/flags literal)."""
    from bunzai_codecs.fidelity import cross_format

    data = (RISU_SAMPLES / "oswin_the_lamplighter.charx").read_bytes()
    src = read(data, "oswin_the_lamplighter.charx")
    row = cross_format(
        src.primary, registry.get("marinara-character"), pool=src.entities, input="oswin", source="risu"
    )
    lost = {x.path: x.cls for x in row.lost}
    changed = {x.path: x.cls for x in row.changed}
    assert row.status == "expected", [x for x in (*row.lost, *row.changed) if x.cls == "unexpected"]
    # Marinara's folders would hold Risu's categories; a card's character_book cannot
    assert lost["lorebook[].categories[].name"] == "expected"
    assert lost["regex[].name"] == "expected"  # an embedded script array has no set name
    assert changed["regex[].rules[].flags"] == "expected"  # "gi<order 5>" -> "gi"
    assert "regex[].rules[].find" not in changed
    back = read(write(src.primary, "marinara-character", linked=src.entities).data, "o.marinara.json")
    rules = [(r.find, r.flags) for r in back.entities[2].body.rules]  # type: ignore[attr-defined]
    src_rules = [(r.find, r.flags) for r in src.entities[2].body.rules]  # type: ignore[attr-defined]
    assert [f for f, _ in rules] == [f for f, _ in src_rules]
    assert ("\\*ding\\*", "gi") in rules
