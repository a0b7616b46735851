"""marinara-persona: native envelope, compatible export and API row; the seed's section quirks."""

from __future__ import annotations

import pytest

from bunzai_codecs import Malformed, NotRecognized, read, write
from bunzai_codecs.entities import PersonaBody

from ._util import fresh, load, load_tree, out_tree, sample_tree, score

JSON_COLUMNS = (
    "personaStats",
    "avatarCrop",
    "trackerCardColors",
    "tags",
    "savedStatusOptions",
    "convoBehavior",
)


def test_scores() -> None:
    assert score("marinara-persona", sample_tree("persona.wren.marinara.json")) == 1.0
    assert score("marinara-persona", sample_tree("persona.api-row.json")) == 0.95
    assert score("marinara-persona", sample_tree("persona.wren.compatible.json")) == 0.95


@pytest.mark.parametrize(
    "tree",
    [
        # another platform's plain persona: no personality, no theming
        {"id": "p", "name": "n", "description": "d"},
        # personality but no theming or stat signal
        {"id": "p", "name": "n", "description": "d", "personality": ""},
        # Marinara's compatible lorebook export also carries extensions.marinara
        {"name": "n", "description": "", "personality": "", "extensions": {"marinara": {}}, "entries": {}},
        # a compatible character export is a Tavern card
        {
            "spec": "chara_card_v2",
            "name": "n",
            "description": "",
            "personality": "",
            "extensions": {"marinara": {}},
        },
        {"type": "marinara_persona", "data": "nope"},
        {"type": "marinara_lorebook", "data": {"entries": []}},
        [],
    ],
)
def test_not_claimed(tree: object) -> None:
    assert score("marinara-persona", tree) == 0.0


def test_native_envelope_decodes_field_by_field() -> None:
    e = load("persona.wren.marinara.json")
    b = e.body
    assert isinstance(b, PersonaBody)
    assert b.name == "Wren Halloway"
    assert b.content.startswith("{{user}} is Wren Halloway")  # description -> content
    assert b.brief == "cartographer, canon timeline"  # comment -> brief, never content
    assert b.sections.personality == "Patient, dry-humoured, stubborn about accuracy."
    assert b.sections.history.startswith("Grew up above a chandlery")  # type: ignore[union-attr]
    assert b.attribution.creator == "samples" and b.attribution.version == "1.2"
    assert b.attribution.creatorNotes == "Use with travel-heavy stories."
    assert b.attribution.source == "marinara"
    assert b.media.portrait is not None and b.media.portrait.role == "portrait"
    assert b.media.portrait.ref.startswith("data:image/png;base64,") and b.media.portrait.mime == "image/png"
    assert b.presentation.imageUrl is None  # the export strips avatarPath; none is made up


def test_whitespace_only_section_is_omitted_not_blank() -> None:
    e = load("persona.wren.marinara.json")
    assert sample_tree("persona.wren.marinara.json")["data"]["appearance"] == "   "
    assert e.body.sections.appearance is None  # type: ignore[attr-defined]


def test_api_row_maps_avatar_path_and_leaves_empty_sections_out() -> None:
    b = load("persona.api-row.json").body
    assert b.presentation.imageUrl == "/api/avatars/file/pers_8GkQ2vNw1xYz.png"  # type: ignore[attr-defined]
    assert b.sections.model_dump(exclude_none=True) == {}  # type: ignore[attr-defined]
    assert b.brief is None  # "" comment  # type: ignore[attr-defined]


def test_compatible_export_reads_like_the_row() -> None:
    b = load("persona.wren.compatible.json").body
    assert b.name == "Wren Halloway" and b.sections.appearance == "Salt-stiff coat, ink on every finger."  # type: ignore[attr-defined]
    assert b.attribution.version == "1.0"  # type: ignore[attr-defined]


def test_importer_aliases_are_read() -> None:
    row = {
        **sample_tree("persona.api-row.json"),
        "personaVersion": "",
        "persona_version": "2.0",
        "creator_notes": "hi",
    }
    b = load_tree(row).body
    assert b.attribution.version == "2.0" and b.attribution.creatorNotes == "hi"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "name", ["persona.wren.marinara.json", "persona.wren.compatible.json", "persona.api-row.json"]
)
def test_samples_round_trip_and_are_canonically_stable(name: str) -> None:
    e = load(name)
    data = write(e, "marinara-persona").data
    import orjson

    assert orjson.loads(data) == sample_tree(name)
    assert read(data, name).primary.body == e.body


def test_json_string_columns_stay_verbatim_after_an_edit() -> None:
    e = load("persona.wren.marinara.json")
    e.body.name = "Wren H."  # type: ignore[attr-defined]
    e.body.sections.personality = "Patient."  # type: ignore[attr-defined]
    data = out_tree(e)["data"]
    raw = sample_tree("persona.wren.marinara.json")["data"]
    assert data["name"] == "Wren H." and data["personality"] == "Patient."
    for col in (*JSON_COLUMNS, "scenario", "nameColor", "metadata", "avatar", "appearance"):
        assert data[col] == raw[col], col
    assert isinstance(data["personaStats"], str)


def test_a_cleared_section_is_written_as_empty_not_reverted() -> None:
    e = load("persona.wren.marinara.json")
    e.body.sections.history = ""  # type: ignore[attr-defined]
    assert out_tree(e)["data"]["backstory"] == ""
    e.body.sections.history = None  # type: ignore[attr-defined]
    assert out_tree(e)["data"]["backstory"] == ""  # the row column stays, empty


def test_avatar_path_is_never_fabricated() -> None:
    # a fresh export of a persona without an image
    e = fresh(load("persona.wren.compatible.json"))
    assert "avatarPath" not in out_tree(e, "marinara-persona")["data"]
    # unchanged absence stays absent through an edit of an imported envelope
    e = load("persona.wren.marinara.json")
    e.body.name = "x"  # type: ignore[attr-defined]
    assert "avatarPath" not in out_tree(e)["data"]


def test_clearing_the_image_removes_avatar_path() -> None:
    e = load("persona.api-row.json")
    e.body.presentation.imageUrl = None  # type: ignore[attr-defined]
    row = out_tree(e)
    assert "avatarPath" not in row and row["id"] == "pers_8GkQ2vNw1xYz" and row["isActive"] == "true"


def test_wire_id_comes_from_the_twin_not_the_name() -> None:
    e = load("persona.api-row.json")
    e.body.name = "Someone Else"  # type: ignore[attr-defined]
    assert out_tree(e)["id"] == "pers_8GkQ2vNw1xYz"


def test_fresh_export_is_a_native_envelope() -> None:
    e = fresh(load("persona.wren.marinara.json"))
    t = out_tree(e, "marinara-persona")
    assert t["type"] == "marinara_persona" and t["version"] == 1 and "id" not in t["data"]
    d = t["data"]
    assert d["description"] == e.body.content and d["comment"] == "cartographer, canon timeline"  # type: ignore[attr-defined]
    assert d["personality"] and d["backstory"] and "appearance" not in d
    assert d["avatar"].startswith("data:image/png")
    again = load_tree(t, "wren.marinara.json")
    assert again.source.format == "marinara-persona" and again.body == e.body  # type: ignore[union-attr]


def test_fresh_export_of_a_bare_persona_keeps_an_empty_personality() -> None:
    from bunzai_codecs.core.entity import CanonicalEntity

    e = CanonicalEntity(
        kind="persona", id="persona-x", body=PersonaBody(name="Solo", content="{{user}} is Solo.")
    )
    d = out_tree(e, "marinara-persona")["data"]
    assert d == {"name": "Solo", "comment": "", "description": "{{user}} is Solo.", "personality": ""}


@pytest.mark.parametrize(
    ("tree", "path"),
    [
        ({"type": "marinara_persona", "version": 1, "data": ["x"]}, "$.data"),
        ({"type": "marinara_persona", "version": 1, "data": {"name": True}}, "$.data.name"),
        (
            {"type": "marinara_persona", "version": 1, "data": {"name": "n", "backstory": []}},
            "$.data.backstory",
        ),
    ],
)
def test_bad_input_is_a_typed_error_with_its_path(tree: object, path: str) -> None:
    with pytest.raises(Malformed) as err:
        load_tree(tree, fmt="marinara-persona")
    assert err.value.path == path and not getattr(err.value, "internal", False)


def test_not_a_persona_is_not_recognized() -> None:
    with pytest.raises(NotRecognized):
        load_tree({"name": "n"}, fmt="marinara-persona")
