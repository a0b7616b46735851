"""sillytavern-persona: persona backups and settings.json as persona bundles (docs/formats/sillytavern.md#persona---personabody,
docs/canonical-model.md#persona)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from bunzai_codecs import Malformed, read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import Codec
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import PersonaBody
from tests.conftest import ROOT, expect_rows

FMT = "sillytavern-persona"
SAMPLES = ROOT / "samples" / "sillytavern"
BACKUP = SAMPLES / "personas-backup.json"
SETTINGS = SAMPLES / "settings-with-personas.json"
QUILL, MARA, TOMAS = "1718000000001-Quill.png", "1718000000000-Mara.png", "Tomas (Persona).png"


def _read(path: Path) -> Any:
    return read(path.read_bytes(), path.name)


def _score(tree: Any) -> float:
    return registry.get(FMT).detect(Sniff(orjson.dumps(tree), "x.json"))


def _backup(desc: dict[str, Any]) -> bytes:
    return orjson.dumps(
        {"personas": {"a.png": "A"}, "persona_descriptions": {"a.png": desc}, "default_persona": None}
    )


# -- detection ----------------------------------------------------------------------------------------


def test_backups_and_settings_detect_at_the_native_score() -> None:
    for p in (BACKUP, SETTINGS):
        assert registry.detect(Sniff(p.read_bytes(), p.name)) == registry.Candidate(FMT, 0.9)


@pytest.mark.parametrize(
    "tree",
    [
        {"personas": []},
        {"personas": {"a.png": "A"}},  # restore needs both maps
        {"power_user": {"theme": "x"}},
        {"entries": {}},
        {"temperature": 1, "openai_max_context": 2, "wi_format": "{0}"},
        {"id": "p1", "name": "Nia", "description": "d", "personality": "p", "nameColor": "#fff"},
    ],
)
def test_what_the_persona_codec_does_not_claim(tree: Any) -> None:
    Codec.detect_errors.clear()
    assert _score(tree) < 0.5
    assert Codec.detect_errors == []


# -- decode: the bundle -------------------------------------------------------------------------------


def test_the_default_persona_is_primary_and_the_others_are_linked_in_file_order() -> None:
    d = _read(BACKUP)
    quill, mara, tomas = d.entities
    assert d.primary is quill and quill.body.presentation.imageUrl == QUILL
    assert quill.links == {"knowledgeRefs": [mara.id, tomas.id]}
    assert [e.body.name for e in d.entities] == ["Quill", "Mara", "Tomas"]
    assert len({e.id for e in d.entities}) == 3

    assert quill.body.content == "{{user}} is Quill, a courier who never reads the letters."
    assert quill.body.brief is None  # title "" is no title
    inj = quill.body.chatInjection
    assert inj is not None and inj.model_dump(exclude_none=True) == {
        "position": "depth",
        "depth": 3,
        "role": "user",
    }
    assert quill.body.worldName == "Saltmere"
    assert quill.body.attribution.source == "sillytavern"
    # connections have no canonical home: escrow
    assert quill.original[FMT].raw["persona_descriptions"][QUILL]["connections"][0]["id"] == "Brenna.png"

    assert mara.body.brief == "Cartographer" and mara.body.worldName is None
    assert mara.body.chatInjection is not None and mara.body.chatInjection.position == "prompt"
    assert tomas.body.chatInjection is not None and tomas.body.chatInjection.position == "none"
    assert tomas.body.presentation.imageUrl == TOMAS


def test_without_a_default_the_first_persona_is_primary() -> None:
    d = _read(SETTINGS)
    assert [e.body.name for e in d.entities if e.kind == "persona"] == ["Mara", "Wren"]
    assert d.primary.body.presentation.imageUrl == MARA
    wren = d.entities[1]
    assert wren.body.brief == "Botanist" and wren.body.chatInjection is not None
    assert wren.body.chatInjection.position == "author_note_top"


def test_a_settings_file_without_personas_has_the_active_user_as_primary() -> None:
    tree = {
        "username": "User",
        "user_avatar": "user-default.png",
        "power_user": {
            "personas": {},
            "default_persona": None,
            "persona_descriptions": {},
            "persona_description": "A traveller.",
            "persona_description_position": 4,
            "persona_description_depth": 1,
            "persona_description_role": 2,
        },
    }
    d = read(orjson.dumps(tree), "settings.json")
    assert len(d.entities) == 1 and d.primary.links == {"knowledgeRefs": []}
    b = d.primary.body
    assert (b.name, b.content, b.presentation.imageUrl) == ("User", "A traveller.", "user-default.png")
    assert b.chatInjection is not None
    assert b.chatInjection.model_dump() == {"position": "depth", "depth": 1, "role": "assistant"}
    b.name, b.content = "Ada", "An engineer."
    out = orjson.loads(write(d.primary, FMT).data)
    assert out["username"] == "Ada" and out["power_user"]["persona_description"] == "An engineer."
    assert out["power_user"]["personas"] == {}  # still no persona in the maps


@pytest.mark.parametrize(
    ("number", "name"),
    {
        0: "prompt",
        1: "after_char",
        2: "author_note_top",
        3: "author_note_bottom",
        4: "depth",
        9: "none",
        7: "7",
    }.items(),
)
def test_every_description_position_maps_to_its_name_and_back(number: int, name: str) -> None:
    d = read(_backup({"description": "d", "position": number, "depth": 2, "role": 0}), "p.json")
    assert d.primary.body.chatInjection is not None and d.primary.body.chatInjection.position == name
    fresh = CanonicalEntity(kind="persona", id="x", body=d.primary.body)
    assert orjson.loads(write(fresh, FMT).data)["persona_descriptions"]["a.png"]["position"] == number


@pytest.mark.parametrize(("number", "name"), {0: "system", 1: "user", 2: "assistant"}.items())
def test_every_role_maps_to_its_name_and_back(number: int, name: str) -> None:
    d = read(_backup({"description": "d", "position": 4, "depth": 2, "role": number}), "p.json")
    assert d.primary.body.chatInjection is not None and d.primary.body.chatInjection.role == name
    fresh = CanonicalEntity(kind="persona", id="x", body=d.primary.body)
    assert orjson.loads(write(fresh, FMT).data)["persona_descriptions"]["a.png"]["role"] == number


# -- round trips --------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [BACKUP, SETTINGS], ids=lambda p: p.name)
def test_samples_round_trip_and_are_canonically_stable(path: Path) -> None:
    data = path.read_bytes()
    d = read(data, path.name)
    out = write(d.primary, FMT, linked=d.entities).data
    assert orjson.loads(out) == orjson.loads(data)
    again = read(out, path.name)
    assert [e.body for e in again.entities] == [e.body for e in d.entities]
    # the primary alone (links unresolved) keeps the twin's copies of the others
    assert orjson.loads(write(d.primary, FMT).data) == orjson.loads(data)


@pytest.mark.parametrize(("rel", "fmt"), [r for r in expect_rows(FMT) if r[1] == FMT] or [("-", FMT)])
def test_corpus_personas_detect_and_round_trip(corpus: Path, rel: str, fmt: str) -> None:
    src = corpus / rel
    data = src.read_bytes()
    assert registry.detect(Sniff(data, src.name)) == registry.Candidate(fmt, 0.9)
    d = read(data, src.name)
    out = write(d.primary, FMT, linked=d.entities).data
    assert orjson.loads(out) == orjson.loads(data)
    assert [e.body for e in read(out, src.name).entities] == [e.body for e in d.entities]
    assert d.primary.warnings == []


def test_editing_removing_and_adding_personas_through_the_bundle() -> None:
    data = BACKUP.read_bytes()
    src = orjson.loads(data)
    d = _read(BACKUP)
    quill, mara, _tomas = d.entities
    mara.body.content = "{{user}} is Mara, now a harbor pilot."
    nia = CanonicalEntity(
        kind="persona", id="persona-nia", body=PersonaBody(name="Nia Vale", content="A diver.")
    )
    quill.links["knowledgeRefs"] = [mara.id, nia.id]  # Tomas removed, Nia added
    out = orjson.loads(write(quill, FMT, linked=[*d.entities, nia]).data)
    assert out["personas"] == {MARA: "Mara", QUILL: "Quill", "NiaVale.png": "Nia Vale"}
    assert out["persona_descriptions"][MARA] == {
        **src["persona_descriptions"][MARA],
        "description": "{{user}} is Mara, now a harbor pilot.",
    }
    assert out["persona_descriptions"][QUILL] == src["persona_descriptions"][QUILL]  # connections kept
    assert out["persona_descriptions"]["NiaVale.png"]["description"] == "A diver."
    assert out["default_persona"] == QUILL


def test_an_empty_link_list_leaves_only_the_primary() -> None:
    d = _read(BACKUP)
    d.primary.links["knowledgeRefs"] = []
    out = orjson.loads(write(d.primary, FMT, linked=d.entities).data)
    assert list(out["personas"]) == [QUILL] and list(out["persona_descriptions"]) == [QUILL]


def test_a_linked_persona_written_alone_is_a_backup_of_one() -> None:
    d = _read(BACKUP)
    tomas = d.entities[2]
    out = orjson.loads(write(tomas, FMT).data)
    src = orjson.loads(BACKUP.read_bytes())
    assert out == {
        "personas": {TOMAS: "Tomas"},
        "persona_descriptions": {TOMAS: src["persona_descriptions"][TOMAS]},
        "default_persona": None,
    }
    assert read(orjson.dumps(out), "one.json").primary.body == tomas.body


def test_a_persona_from_elsewhere_becomes_a_backup_and_reads_back_the_same() -> None:
    body = PersonaBody.model_validate(
        {
            "name": "Ren",
            "content": "{{user}} is Ren.",
            "brief": "Scout",
            "presentation": {"imageUrl": "/avatars/ren-2.png"},
            "chatInjection": {"position": "depth", "depth": 5, "role": "user"},
            "worldName": "Wilds",
            "attribution": {"source": "sillytavern"},
        }
    )
    out = write(CanonicalEntity(kind="persona", id="p", body=body), FMT).data
    tree = orjson.loads(out)
    assert tree["personas"] == {"ren-2.png": "Ren"}
    assert tree["persona_descriptions"]["ren-2.png"] == {
        "description": "{{user}} is Ren.",
        "position": 4,
        "depth": 5,
        "role": 1,
        "lorebook": "Wilds",
        "title": "Scout",
    }
    back = read(out, "ren.json").primary.body
    assert back.model_copy(update={"presentation": body.presentation}) == body
    assert back.presentation.imageUrl == "ren-2.png"  # the avatar id is the file name


# -- bad input ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tree", "path"),
    [
        ([], "$"),
        (
            {"personas": {"a.png": "A"}, "persona_descriptions": {"a.png": "A text"}},
            "$.persona_descriptions['a.png']",
        ),
        (
            {"power_user": {"personas": [], "persona_descriptions": {}}},
            "$.power_user.personas",
        ),
        (
            {"power_user": {"persona_descriptions": {}}, "extension_settings": {"regex": {}}},
            "$.extension_settings.regex",
        ),
        ({"unrelated": True}, "$.personas"),
    ],
)
def test_bad_structure_is_a_typed_error_with_its_path(tree: Any, path: str) -> None:
    with pytest.raises(Malformed) as err:
        read(orjson.dumps(tree), "bad.json", format=FMT)
    assert err.value.path == path
    assert not getattr(err.value, "internal", False)


def test_a_wrong_scalar_is_a_warning_and_the_twin_keeps_it() -> None:
    data = _backup({"description": 5, "position": 4, "depth": "deep", "role": 7, "lorebook": "", "title": ""})
    e = read(data, "p.json").primary
    assert e.body.content == "5" and e.body.chatInjection is not None
    assert e.body.chatInjection.depth is None and e.body.chatInjection.role is None
    at = "$.persona_descriptions['a.png']"
    assert e.warnings == [  # the coercible number is read and noted like the others
        f"{at}.description: expected a string, found the number 5; read as '5'",
        f"{at}.depth: expected a number, found the string 'deep'; read as None",
        f"{at}.role: role 7 is not 0, 1 or 2; left out (kept in the twin)",
    ]
    assert orjson.loads(write(e, FMT).data) == orjson.loads(data)


# -- settings.json: the global regex scripts ----------------------------------------------------------


def test_settings_global_regex_scripts_are_a_linked_regex_set() -> None:
    data = SETTINGS.read_bytes()
    src = orjson.loads(data)
    d = read(data, SETTINGS.name)
    mara, wren, scripts = d.entities
    assert scripts.kind == "regex" and d.primary.links == {"knowledgeRefs": [wren.id, scripts.id]}
    assert [(r.label, r.find, r.flags, r.replace) for r in scripts.body.rules] == [
        ("Curly quotes", "[“”]", "g", '"')
    ]
    scripts.body.rules[0].runOnEdit = False
    tree = orjson.loads(write(mara, FMT, linked=d.entities).data)
    assert tree["extension_settings"]["regex"] == [
        {**src["extension_settings"]["regex"][0], "runOnEdit": False}
    ]
    mara.links["knowledgeRefs"] = [wren.id]  # scripts removed: the global list empties, the slot stays
    tree = orjson.loads(write(mara, FMT, linked=d.entities).data)
    assert tree["extension_settings"] == {**src["extension_settings"], "regex": []}
    assert tree["power_user"] == src["power_user"]
