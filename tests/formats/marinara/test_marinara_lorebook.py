"""marinara-lorebook: the marinara_lorebook envelope, folders, duplicate ids, both row forms."""

from __future__ import annotations

import pytest

from bunzai_codecs import Malformed, read, write
from bunzai_codecs.entities import LorebookBody, LoreEntry

from ._util import fresh, load, load_tree, mutated, out_tree, sample_tree, score

NAME = "lorebook.saltmarsh.marinara.json"


def test_scores_one_for_the_envelope_tag_only() -> None:
    assert score("marinara-lorebook", sample_tree(NAME)) == 1.0
    assert (
        score("marinara-lorebook", {"type": "marinara_lorebook", "version": 1, "data": {"entries": []}})
        == 1.0
    )
    assert score("marinara-lorebook", {"type": "marinara_lorebook", "data": {"lorebook": {}}}) == 0.0
    assert score("marinara-lorebook", {"type": "marinara_preset", "data": {"entries": []}}) == 0.0
    assert score("marinara-lorebook", {"entries": []}) == 0.0


def test_book_and_folders_decode() -> None:
    b = load(NAME).body
    assert isinstance(b, LorebookBody)
    assert (b.name, b.description, b.lorebookType, b.tags) == (
        "Saltmarsh",
        "A drowned fishing town and its neighbours.",
        "world",
        ["coastal", "horror"],
    )
    assert (b.globalScanDepth, b.tokenBudget, b.globalRecursion, b.maxRecursionDepth, b.entryBudget) == (
        6,
        1500,
        True,
        2,
        40,
    )
    assert b.enabled is True
    cats = [(c.id, c.name, c.sortOrder, c.enabled) for c in b.categories]
    assert cats == [("fld_People", "People", 2, True), ("fld_Places", "Places", 1, False)]


def _entries() -> list[LoreEntry]:
    return load(NAME).body.entries  # type: ignore[attr-defined,no-any-return]


def test_plain_entry_decodes_field_by_field() -> None:
    h = _entries()[0]
    assert (h.id, h.title, h.categoryId) == ("ent_Harbour", "The Harbour", "fld_Places")
    assert [t.text for t in h.triggers or []] == ["harbour", "harbor", "docks"]
    assert not any(t.isRegex for t in h.triggers or [])
    assert h.secondaryTriggers == [] and h.selectiveLogic == "and_any"
    assert (h.position, h.depth, h.role) == ("world", 4, "system")
    assert h.sortOrder == 10 and h.priority == 100  # order is placement, never eviction
    assert h.probability == 100  # null = always
    assert h.matchWholeWords is True and h.caseSensitive is False
    assert h.preventRecursion is True and h.excludeRecursion is False and h.delayUntilRecursion == 0
    assert h.scanSources == ["persona_description"]
    assert h.group is None and h.groupWeight is None and h.sticky is None


def test_regex_depth_entry_decodes_field_by_field() -> None:
    k = _entries()[1]
    # useRegex makes every key a regex, secondary keys too
    assert [(t.text, t.isRegex) for t in k.triggers or []] == [("keeper", True), ("\\bMab\\b", True)]
    assert [(t.text, t.isRegex) for t in k.secondaryTriggers or []] == [("light(house)?", True)]
    assert k.selective is True and k.selectiveLogic == "not_any"  # "not"
    assert (k.position, k.depth, k.role) == ("depth", 2, "assistant")  # position 2 = at depth
    assert k.probability == 40 and k.scanDepth == 3 and k.caseSensitive is True
    assert (k.sticky, k.cooldown, k.delay, k.group, k.groupWeight) == (3, 5, 1, "npcs", 70)
    assert k.excludeRecursion is True and k.preventRecursion is False and k.delayUntilRecursion == 1
    assert k.characterFilter is None and k.generationTriggers is None  # id-based filters: twin only


def test_selective_logic_or_means_any_and_outlet_position() -> None:
    tide, bells = _entries()[2:]
    assert tide.selectiveLogic == "and_any" and tide.position == "character" and tide.constant is True
    assert bells.selectiveLogic == "and_all"
    assert bells.position == "outlet" and bells.outletName == "ambience"


def test_duplicate_ids_get_stable_unique_ids_and_empty_names_a_title() -> None:
    tide, bells = _entries()[2:]
    assert (tide.id, bells.id) == ("ent_Dup", "ent_Dup-2")
    assert bells.title == "Entry 4"
    assert [e.id for e in _entries()] == [e.id for e in _entries()]


def test_missing_prevent_recursion_defaults_true() -> None:
    t = mutated(sample_tree(NAME))
    del t["data"]["entries"][0]["preventRecursion"]
    t["data"]["entries"][1].pop("preventRecursion")
    e = load_tree(t)
    assert [x.preventRecursion for x in e.body.entries[:2]] == [True, True]  # type: ignore[attr-defined]


def test_position_strings_read_like_marinaras_importer() -> None:
    t = mutated(sample_tree(NAME))
    for i, p in enumerate(["after_char", "at_depth", "before_char", 5]):
        t["data"]["entries"][i]["position"] = p
    got = [x.position for x in load_tree(t).body.entries]  # type: ignore[attr-defined]
    assert got == ["character", "depth", "world", "5"]  # an unknown number is kept


def test_unknown_selective_logic_warns_and_reads_as_any() -> None:
    t = mutated(sample_tree(NAME))
    t["data"]["entries"][0]["selectiveLogic"] = "xor"
    e = load_tree(t)
    assert e.body.entries[0].selectiveLogic == "and_any"  # type: ignore[attr-defined]
    assert any("xor" in w for w in e.warnings)
    assert out_tree(e)["data"]["entries"][0]["selectiveLogic"] == "xor"  # the twin keeps it


def test_sample_round_trips_and_is_canonically_stable() -> None:
    e = load(NAME)
    data = write(e, "marinara-lorebook").data
    import orjson

    assert orjson.loads(data) == sample_tree(NAME)
    assert read(data, NAME).primary.body == e.body


def test_reordered_duplicates_keep_their_own_rows() -> None:
    e = load(NAME)
    es = e.body.entries  # type: ignore[attr-defined]
    es[2], es[3] = es[3], es[2]
    es[2].content = "Bells, louder."
    rows = out_tree(e)["data"]["entries"]
    raw = sample_tree(NAME)["data"]["entries"]
    assert rows[2]["content"] == "Bells, louder." and rows[2]["tag"] == "rumour"
    assert rows[2]["outletName"] == "ambience" and rows[2]["createdAt"] == raw[3]["createdAt"]
    assert rows[2]["id"] == "ent_Dup"  # the row's own id, not the canonical -2
    assert rows[3] == raw[2]


def test_edit_keeps_engine_only_columns_and_folder_nesting() -> None:
    e = load(NAME)
    e.body.entries[1].title = "Mab"  # type: ignore[attr-defined]
    e.body.categories[0].name = "Folk"  # type: ignore[attr-defined]
    e.body.globalScanDepth = 8  # type: ignore[attr-defined]
    d = out_tree(e)["data"]
    raw = sample_tree(NAME)["data"]
    k = d["entries"][1]
    assert k["name"] == "Mab"
    for col in (
        "schedule",
        "activationConditions",
        "dynamicState",
        "characterFilterIds",
        "locked",
        "ephemeral",
        "description",
    ):
        assert k[col] == raw["entries"][1][col], col
    assert d["folders"][0]["name"] == "Folk" and d["folders"][0]["parentFolderId"] == "fld_Places"
    assert d["lorebook"]["scanDepth"] == 8 and d["lorebook"]["scope"] == raw["lorebook"]["scope"]
    assert d["lorebook"]["vectorScoreThreshold"] == 0.3


def test_edited_triggers_set_use_regex_for_the_entry() -> None:
    e = load(NAME)
    h = e.body.entries[0]  # type: ignore[attr-defined]
    assert h.triggers is not None
    h.triggers[0].isRegex = True
    row = out_tree(e)["data"]["entries"][0]
    assert row["useRegex"] is True and row["keys"] == ["harbour", "harbor", "docks"]


def test_added_and_removed_entries() -> None:
    e = load(NAME)
    es = e.body.entries  # type: ignore[attr-defined]
    new = LoreEntry(
        id="fresh-1", title="Causeway", content="A flooded road.", sortOrder=7, position="depth", depth=1
    )
    del es[0]
    es.append(new)
    rows = out_tree(e)["data"]["entries"]
    assert [r["id"] for r in rows] == ["ent_Keeper", "ent_Dup", "ent_Dup", "fresh-1"]
    assert rows[-1]["order"] == 7 and rows[-1]["position"] == 2 and rows[-1]["depth"] == 1
    assert rows[-1]["lorebookId"] == "lb_SaltMarsh000001" and rows[-1]["enabled"] is True


def test_database_row_form_reads_and_writes_strings() -> None:
    # the table store's own form: "true"/"false" strings and JSON-string lists
    t = mutated(sample_tree("lorebook.saltmarsh.marinara.json"))
    row = t["data"]["entries"][0]
    row.update(
        enabled="true", constant="false", useRegex="false", keys='["harbour","docks"]', secondaryKeys="[]"
    )
    t["data"]["lorebook"]["enabled"] = "true"
    e = load_tree(t)
    h = e.body.entries[0]  # type: ignore[attr-defined]
    assert [x.text for x in h.triggers] == ["harbour", "docks"] and h.enabled is True  # type: ignore[union-attr]
    h.enabled = False
    h.triggers.append(h.triggers[0].model_copy(update={"text": "quay"}))  # type: ignore[union-attr]
    out = out_tree(e)["data"]["entries"][0]
    assert out["enabled"] == "false" and out["keys"] == '["harbour","docks","quay"]'
    assert out["constant"] == "false" and out["secondaryKeys"] == "[]"


def test_fresh_export_reads_back() -> None:
    e = fresh(load(NAME))
    t = out_tree(e, "marinara-lorebook")
    assert t["type"] == "marinara_lorebook" and t["version"] == 1
    assert [f["id"] for f in t["data"]["folders"]] == ["fld_People", "fld_Places"]
    assert t["data"]["entries"][3]["id"] == "ent_Dup-2" and t["data"]["entries"][3]["position"] == 7
    assert "lorebookId" not in t["data"]["entries"][0]
    again = load_tree(t, "saltmarsh.marinara.json")
    assert again.body == e.body


@pytest.mark.parametrize(
    ("edit", "path"),
    [
        (lambda d: d.__setitem__("entries", {}), "$.data.entries"),
        (lambda d: d["entries"].__setitem__(1, "entry"), "$.data.entries[1]"),
        (lambda d: d["entries"][0].__setitem__("keys", [{"k": 1}]), "$.data.entries[0].keys[0]"),
        (lambda d: d["entries"][0].__setitem__("depth", "deep"), "$.data.entries[0].depth"),
        (lambda d: d["entries"][0].__setitem__("position", [2]), "$.data.entries[0].position"),
        (lambda d: d["entries"][0].__setitem__("enabled", 2), "$.data.entries[0].enabled"),
        (lambda d: d["folders"].__setitem__(0, None), "$.data.folders[0]"),
        (
            lambda d: d["entries"][1].__setitem__("selectiveLogic", ["not"]),
            "$.data.entries[1].selectiveLogic",
        ),
        (lambda d: d["lorebook"].__setitem__("tags", "[bad"), "$.data.lorebook.tags"),
    ],
)
def test_bad_input_is_a_typed_error_with_its_path(edit: object, path: str) -> None:
    t = mutated(sample_tree(NAME))
    edit(t["data"])  # type: ignore[operator]
    with pytest.raises(Malformed) as err:
        load_tree(t, fmt="marinara-lorebook")
    assert err.value.path == path and not getattr(err.value, "internal", False)
