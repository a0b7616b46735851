"""``rolecall-persona``: the rcpersona spec (JSON, PNG ``rcpersona``) and RoleCall's persona card
(docs/formats/rolecall.md#persona)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from bunzai_codecs import read
from bunzai_codecs.core import png
from bunzai_codecs.core.codec import EmitContext
from bunzai_codecs.core.errors import Malformed, NotRecognized
from bunzai_codecs.core.registry import get
from bunzai_codecs.entities import PersonaBody
from tests.formats.codec_helpers import decode, dumps, export, rt_compare, sample_tree, scores, winner
from tests.formats.helpers import edited, sample

RCP = "rolecall-persona"
NATIVE = "rolecall/mira.rolecall-persona.json"
CARD = "rolecall/mira.persona-card.rolecall.json"
PNG = "rolecall/mira.rcpersona.png"


def persona(data: bytes, name: str = "p.json") -> PersonaBody:
    b = decode(data, name).primary.body
    assert isinstance(b, PersonaBody)
    return b


def png_with(keyword: str, tree: Any) -> bytes:
    base = png.parse(sample(PNG))
    chunks = [c for c in base.chunks if c.type not in (b"tEXt", b"zTXt", b"iTXt")]
    text = png.make_text_chunk(keyword, base64.b64encode(json.dumps(tree).encode()))
    return png.build([*chunks[:-1], text, chunks[-1]])


# --- detection ------------------------------------------------------------------------------------


def test_both_shapes_and_the_png_keyword_are_certain() -> None:
    assert scores(sample(NATIVE)) == {RCP: 1.0}
    s = scores(sample(CARD))
    assert s[RCP] == 1.0 and s.get("rolecall", 0) == 0 and s["sillytavern"] == 0.9
    assert scores(sample(PNG), "p.png") == {RCP: 1.0}
    assert winner(png_with("chara", sample_tree(CARD)), "p.png") == RCP


def test_library_export_and_persona_wrappers_are_peeled() -> None:
    native = sample_tree(NATIVE)
    wrapped = {"exportedAt": "2026-01-01T00:00:00Z", "version": 1, "data": {"persona": native}}
    assert winner(dumps(wrapped)) == RCP
    assert winner(dumps({"type": "persona", "data": sample_tree(CARD)})) == RCP
    assert persona(dumps(wrapped)).name == "Mira Quell"


def test_not_claimed() -> None:
    assert RCP not in scores(sample("rolecall/wren.rolecall.v3.json"))
    assert RCP not in scores(dumps({"spec": "rolecall_persona", "data": "x"}))
    assert RCP not in scores(sample("sillytavern/personas-backup.json"))
    assert RCP not in scores(dumps({"exportedAt": "x", "type": "preset", "data": {"name": "p"}}))


# --- decode ---------------------------------------------------------------------------------------


def test_rcpersona_brief_is_description_and_empty_content_is_compiled_from_sections() -> None:
    b = persona(sample(NATIVE))
    assert b.name == "Mira Quell"
    assert b.brief == "A courier who never opens the parcels."
    assert b.content == (
        "Appearance: Tall, rain-dark coat, a satchel patched with map scraps.\n\n"
        "Body: Long stride, callused hands.\n\n"
        "Personality: Dry humour, keeps promises to the letter.\n\n"
        "Quirks: Counts stairs out loud.\n\n"
        "History: Raised in the sorting halls of the old post office."
    )
    assert b.sections.appearance == "Tall, rain-dark coat, a satchel patched with map scraps."
    assert b.sections.history == "Raised in the sorting halls of the old post office."
    assert (b.attribution.creator, b.attribution.version, b.attribution.source) == (
        "harbor-sample",
        "1.2",
        "rolecall",
    )


def test_persona_card_description_is_content_and_creator_notes_the_brief() -> None:
    b = persona(sample(CARD))
    assert b.content.startswith("I carry what I'm given") and "Appearance: Tall" in b.content
    assert b.brief == "A courier who never opens the parcels."
    assert b.sections.personality == "Dry humour, keeps promises to the letter."
    assert b.sections.history == "Raised in the sorting halls of the old post office."  # scenario is history
    assert b.presentation.imageUrl == "https://example.invalid/mira.png"
    assert b.brief != b.content


# --- round trip -----------------------------------------------------------------------------------


@pytest.mark.parametrize("rel", [NATIVE, CARD, PNG])
def test_round_trip_and_canonical_stability(rel: str) -> None:
    data = sample(rel)
    d = decode(data, rel)
    out = export(d.primary, RCP)
    assert rt_compare(data, out) == []
    assert decode(out, rel).primary.body == d.primary.body


def test_png_unedited_is_the_same_file_and_an_edit_rewrites_the_rcpersona_chunk() -> None:
    data = sample(PNG)
    d = decode(data, "p.png")
    assert export(d.primary, RCP) == data
    out = export(edited(d.primary, brief="Courier, sealed lips."), RCP)
    texts = {t.keyword: t for t in png.text_chunks(png.parse(out).chunks)}
    assert set(texts) == {"rcpersona"}
    tree = json.loads(base64.b64decode(texts["rcpersona"].text))
    assert tree["data"]["description"] == "Courier, sealed lips." and tree["data"]["content"] == ""
    assert [c for c in png.parse(out).chunks if c.type == b"IDAT"] == [
        c for c in png.parse(data).chunks if c.type == b"IDAT"
    ]


def test_edit_inside_wrappers_keeps_the_wrappers() -> None:
    wrapped = {"exportedAt": "2026-01-01T00:00:00Z", "version": 1, "data": {"persona": sample_tree(CARD)}}
    d = decode(dumps(wrapped))
    out = json.loads(export(edited(d.primary, name="Mira Q."), RCP))
    assert out["exportedAt"] == "2026-01-01T00:00:00Z" and out["version"] == 1
    inner = out["data"]["persona"]
    assert inner["data"]["name"] == "Mira Q."
    assert inner["data"]["extensions"]["rolecall"]["height"] == "181 cm"


def test_fresh_exports_card_by_default_and_rcpersona_on_request() -> None:
    st = read(sample("sillytavern/personas-backup.json"), "personas-backup.json").primary
    card = json.loads(export(st, RCP))
    assert card["spec"] == "chara_card_v2"
    assert card["data"]["extensions"]["rolecall"]["type"] == "persona"
    assert winner(dumps(card)) == RCP
    codec = get(RCP)
    native = json.loads(codec.encode(st, EmitContext(options={"shape": "rcpersona"})))
    assert native["spec"] == "rolecall_persona" and winner(dumps(native)) == RCP


def test_fresh_card_folds_appearance_into_the_description_once() -> None:
    d = decode(sample(NATIVE))
    b = d.primary.body
    assert isinstance(b, PersonaBody)
    e = edited(d.primary, content="I carry what I'm given.")
    e.original = {}
    card = json.loads(get(RCP).encode(e, EmitContext(options={"shape": "card"})))
    assert card["data"]["description"] == (
        "I carry what I'm given.\n\nAppearance: Tall, rain-dark coat, a satchel patched with map scraps."
    )
    again = json.loads(export(decode(dumps(card)).primary, RCP))
    assert again["data"]["description"] == card["data"]["description"]


def test_fresh_export_of_an_appearance_or_a_version_is_an_rcpersona_that_keeps_them() -> None:
    """A persona card folds appearance into the description (content changes) and has no version:
    a persona with either is written as RoleCall's own rcpersona file, which holds both."""
    row = {
        "name": "Wren",
        "description": "{{user}} is Wren, a cartographer.",
        "personality": "Patient.",
        "appearance": "Salt-stiff coat.",
        "extensions": {"marinara": {}},
    }
    src = read(dumps(row), "wren.json").primary
    assert src.source is not None and src.source.format == "marinara-persona"
    out = json.loads(export(src, RCP))
    assert out["spec"] == "rolecall_persona"
    assert out["data"]["content"] == "{{user}} is Wren, a cartographer."
    assert out["data"]["sections"] == {"appearance": "Salt-stiff coat.", "personality": "Patient."}
    back = persona(dumps(out))
    assert (back.content, back.sections.appearance, back.sections.personality) == (
        "{{user}} is Wren, a cartographer.",
        "Salt-stiff coat.",
        "Patient.",
    )
    versioned = edited(src, sections={"appearance": None}, attribution={"version": "2"})
    versioned.original = {}
    out = json.loads(export(versioned, RCP))
    assert out["spec"] == "rolecall_persona" and out["data"]["metadata"] == {"version": "2"}
    assert persona(dumps(out)).attribution.version == "2"


# --- cross-format ---------------------------------------------------------------------------------


def test_cross_format_to_sillytavern_persona_keeps_content_and_brief_apart() -> None:
    d = decode(sample(CARD))
    out = export(d.primary, "sillytavern-persona")
    st = read(out, "personas.json").primary.body
    rc = d.primary.body
    assert isinstance(st, PersonaBody) and isinstance(rc, PersonaBody)
    assert (st.name, st.content, st.brief) == (rc.name, rc.content, rc.brief)


def test_cross_format_from_sillytavern_persona() -> None:
    st = read(sample("sillytavern/personas-backup.json"), "personas-backup.json").primary
    back = persona(export(st, RCP))
    src = st.body
    assert isinstance(src, PersonaBody)
    assert (back.name, back.content, back.brief) == (src.name, src.content, src.brief)


# --- bad input ------------------------------------------------------------------------------------


def test_bad_input_is_typed_with_a_path() -> None:
    tree = sample_tree(NATIVE)
    del tree["data"]["name"]
    with pytest.raises(Malformed) as err:
        read(dumps(tree), "p.json", format=RCP)
    assert err.value.path == "$.data.name"
    tree = sample_tree(NATIVE)
    tree["data"]["sections"]["history"] = ["x"]
    with pytest.raises(Malformed) as err:
        read(dumps(tree), "p.json", format=RCP)
    assert err.value.path == "$.data.sections.history"
    tree = sample_tree(CARD)
    tree["data"]["personality"] = {"x": 1}
    with pytest.raises(Malformed) as err:
        read(dumps({"exportedAt": "x", "data": tree}), "p.json", format=RCP)
    assert err.value.path == "$.data.data.personality"
    with pytest.raises(NotRecognized):
        read(sample("rolecall/wren.rolecall.v3.json"), "p.json", format=RCP)
    base = png.parse(sample(PNG))
    image = [c for c in base.chunks if c.type not in (b"tEXt", b"zTXt", b"iTXt")]
    broken = png.build([*image[:-1], png.make_text_chunk("rcpersona", b"%%not base64%%"), image[-1]])
    assert winner(broken, "p.png") == RCP  # the keyword is claimed so the decoder can say what is wrong
    with pytest.raises(Malformed) as err:
        read(broken, "p.png")
    assert "base64" in str(err.value) and err.value.offset is not None
