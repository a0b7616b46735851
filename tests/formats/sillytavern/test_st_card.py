"""The `sillytavern` card codec: detection, JSON and PNG containers, bundles, bad input, and each card
quirk (docs/formats/sillytavern.md#quirks) pinned by name (test_quirk_NN_...)."""

from __future__ import annotations

import base64
import json
import zlib
from typing import Any

import pytest
from st_helpers import (
    b64json,
    build_png,
    card_payloads,
    non_text_chunks,
    rt_compare,
    text_chunk,
)

from bunzai_codecs import Malformed, NotRecognized, read, write
from bunzai_codecs.core import png, registry
from bunzai_codecs.core.codec import Codec, EmitContext
from bunzai_codecs.core.entity import KNOWLEDGE_REFS, CanonicalEntity
from bunzai_codecs.core.media import default_portrait_png
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import CharacterBody, LorebookBody, RegexSetBody
from tests.formats.helpers import edited, sample

ST = "sillytavern"


def v2(name: str = "Card", **data: Any) -> dict[str, Any]:
    return {"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": name, "first_mes": "hi", **data}}


def v3(name: str = "Card", **data: Any) -> dict[str, Any]:
    return {"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": name, "first_mes": "hi", **data}}


def score(data: bytes, name: str = "x") -> float:
    return registry.get(ST).detect(Sniff(data, name))


def jscore(tree: Any) -> float:
    return score(json.dumps(tree).encode(), "x.json")


def card(data: bytes, name: str = "card.png") -> CanonicalEntity:
    return read(data, name).primary


def name_of(e: CanonicalEntity) -> str:
    assert isinstance(e.body, CharacterBody)
    return e.body.identity.name


# --- detection ------------------------------------------------------------------------------------


def test_detection_scores_for_json_shapes() -> None:
    assert jscore(v2()) == 0.9
    assert jscore(v3()) == 0.9
    assert jscore({"spec": "chara_card_v2"}) == 0.9  # claimed, so the decoder reports the missing data
    assert jscore({"name": "V1", "first_mes": "hi"}) == 0.9
    assert jscore({"name": "V1", "description": "d"}) == 0.6  # weaker: personas look like this too
    # not claimed
    assert jscore({"name": "just a name"}) == 0.0
    assert jscore({"spec": "lorebook_v3", "data": {"entries": []}}) == 0.0
    assert jscore({"spec": "rolecall_persona", "data": {}}) == 0.0
    assert jscore({"entries": {"0": {"key": ["a"], "content": "x"}}}) == 0.0  # ST world info
    assert jscore({"name": "Book", "description": "d", "entries": []}) == 0.0  # a character_book / Chub book
    assert jscore({"char_name": "P", "char_persona": "x", "char_greeting": "hi"}) == 0.0  # Pygmalion
    assert jscore([{"scriptName": "s", "findRegex": "a"}]) == 0.0
    assert jscore({"schemaVersion": 1, "kind": "character", "id": "c", "body": {}}) == 0.0  # vaud-json
    assert jscore({"prompts": [], "prompt_order": [], "temperature": 1}) == 0.0  # a preset


def test_detection_scores_for_pngs() -> None:
    assert score(build_png(text_chunk("chara", v2()))) == 0.9
    assert score(build_png(text_chunk("CCV3", v3()))) == 0.9
    assert score(build_png(text_chunk("chara", v2(), "zTXt"))) == 0.9
    assert score(build_png()) == 0.0  # a plain image
    assert score(build_png(png.make_text_chunk("naidata", b64json({"lorebookVersion": 5})))) == 0.0
    assert score(build_png(png.make_text_chunk("persona", b64json({"name": "p"})))) == 0.0


def test_real_corpus_lookalikes_are_not_claimed(corpus: Any) -> None:
    """Backyard's eXIf PNGs and NovelAI's naidata PNG are other apps' cards."""
    for rel in [
        "backyard/legacy-png/character-export-v1.png",
        "novelai/synthetic.crystal-dragon.naidata.png",
        "sillytavern/st-1.18.0/Eldoria.json",
        "sillytavern/st-1.18.0/openai-Default.json",
        "sillytavern/st-1.18.0/settings.json",
        "sillytavern/rpg-companion/RPG_Companion_Regexes.json",
        "chub/lorebook.example-lorebook.chub.book.json",
        "pygmalion/character.classic.pygmalion.json",
    ]:
        p = corpus / rel
        if p.exists():
            assert score(p.read_bytes(), rel) == 0.0, rel


def test_detect_never_crashes_on_odd_input() -> None:
    Codec.detect_errors.clear()
    for data in [
        b"",
        b"\x89PNG\r\n\x1a\n",
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR",
        b"{",
        b"[1,2]",
        b'{"spec": 5}',
        # regression (hostile suite): an unhashable spec made `spec in CARD_SPECS` raise
        b'{"spec": {"v": 3}, "data": {"name": "x"}}',
        b'{"spec": ["chara_card_v2"], "data": {"name": "x"}}',
        b'{"name": 5, "first_mes": []}',
        build_png(png.Chunk(b"tEXt", b"no separator")),
        build_png(png.Chunk(b"zTXt", b"chara\0\0not zlib")),
    ]:
        registry.detect_all(Sniff(data, "x"))
    assert Codec.detect_errors == []


# --- JSON ---------------------------------------------------------------------------------------


def test_v2_json_sample_decodes_into_card_book_and_regex_set() -> None:
    d = read(sample("sillytavern/lighthouse-keeper.v2.json"), "lighthouse-keeper.v2.json")
    c, book, rx = d.entities
    assert (c.kind, book.kind, rx.kind) == ("character", "lorebook", "regex")
    assert c.links == {KNOWLEDGE_REFS: [book.id, rx.id]}
    assert name_of(c) == "Maren"
    # the linked entities' twins sit under the card codec's id, by reference to the card's tree
    raw = c.original[ST].raw
    assert book.original[ST].raw is raw["data"]["character_book"]
    assert rx.original[ST].raw is raw["data"]["extensions"]["regex_scripts"]
    assert isinstance(book.body, LorebookBody) and len(book.body.entries) == 3
    assert isinstance(rx.body, RegexSetBody) and [r.label for r in rx.body.rules] == [
        "Hide stage directions",
        "Name the keeper",
    ]
    # ids are deterministic and distinct per part
    again = read(sample("sillytavern/lighthouse-keeper.v2.json"), "elsewhere.json")
    assert [e.id for e in again.entities] == [e.id for e in d.entities]
    assert len({c.id, book.id, rx.id}) == 3


def test_v3_json_sample_round_trips_exactly() -> None:
    raw = sample("sillytavern/starship-captain.v3.json")
    d = read(raw, "starship-captain.v3.json")
    assert len(d.entities) == 1
    assert rt_compare(raw, write(d.primary, ST).data) == []


def test_edit_overlays_the_twin_and_keeps_unknown_keys() -> None:
    raw = sample("sillytavern/lighthouse-keeper.v2.json")
    d = read(raw, "c.json")
    e = edited(d.primary, identity={"name": "Maren Holt"})
    out = json.loads(write(e, ST, linked=d.entities).data)
    src = json.loads(raw)
    assert out["data"]["name"] == out["name"] == "Maren Holt"  # ST's V1 mirror follows
    assert out["data"]["extensions"]["custom_tool/notes"] == {"reviewed": True}
    assert out["chat"] == src["chat"] and out["create_date"] == src["create_date"]
    assert out["data"]["extensions"]["talkativeness"] == "0.5"  # unchanged: still the string
    assert out["data"]["character_book"] == src["data"]["character_book"]
    assert out["data"]["extensions"]["regex_scripts"] == src["data"]["extensions"]["regex_scripts"]


def test_edited_lorebook_is_re_embedded_and_other_entries_keep_their_bytes() -> None:
    raw = sample("sillytavern/lighthouse-keeper.v2.json")
    d = read(raw, "c.json")
    c, book, rx = d.entities
    body = book.body.model_copy(deep=True)
    assert isinstance(body, LorebookBody)
    body.entries[1].content = "The Wren is a myth."
    book.body = body
    ctx = EmitContext.for_entities(d.entities)
    out = json.loads(registry.get(ST).encode(c, ctx))
    assert ctx.embedded == {book.id, rx.id}
    src = json.loads(raw)["data"]["character_book"]["entries"]
    got = out["data"]["character_book"]["entries"]
    assert got[0] == src[0] and got[2] == src[2]
    assert got[1] == {**src[1], "content": "The Wren is a myth."}


def test_empty_link_list_drops_the_stale_book_and_scripts() -> None:
    d = read(sample("sillytavern/lighthouse-keeper.v2.json"), "c.json")
    c = d.primary
    c.links = {KNOWLEDGE_REFS: []}
    out = json.loads(write(c, ST, linked=d.entities).data)
    assert "character_book" not in out["data"]
    assert "regex_scripts" not in out["data"]["extensions"]
    assert out["data"]["extensions"]["world"] == "Gull Rock"


def test_links_that_cannot_be_resolved_keep_the_twins_copy() -> None:
    raw = sample("sillytavern/lighthouse-keeper.v2.json")
    d = read(raw, "c.json")
    out = write(d.primary, ST).data  # no linked entities passed
    assert rt_compare(raw, out) == []


def test_a_linked_lorebook_from_elsewhere_is_embedded_in_a_fresh_card() -> None:
    book = CanonicalEntity(
        kind="lorebook",
        id="lorebook-x",
        body=LorebookBody.model_validate(
            {
                "name": "W",
                "entries": [{"id": "7", "title": "T", "content": "c", "position": "depth", "depth": 1}],
            }
        ),
    )
    rx = CanonicalEntity(
        kind="regex",
        id="regex-x",
        body=RegexSetBody.model_validate(
            {"rules": [{"id": "r1", "find": "a", "flags": "g", "phases": ["output"]}]}
        ),
    )
    c = CanonicalEntity(
        kind="character",
        id="character-x",
        body=CharacterBody.model_validate({"identity": {"name": "Fresh"}}),
        links={KNOWLEDGE_REFS: [book.id, rx.id]},
    )
    out = write(c, ST, linked=[book, rx])
    assert out.beside == []
    tree = json.loads(out.data)
    assert tree["spec"] == "chara_card_v3"
    entry = tree["data"]["character_book"]["entries"][0]
    assert (entry["id"], entry["comment"], entry["position"], entry["extensions"]["position"]) == (
        7,
        "T",
        "after_char",
        4,
    )
    assert tree["data"]["extensions"]["regex_scripts"][0]["findRegex"] == "/a/g"


# --- PNG ----------------------------------------------------------------------------------------


def test_png_sample_decodes_and_round_trips_byte_for_byte() -> None:
    raw = sample("sillytavern/tidepool.png")
    d = read(raw, "tidepool.png")
    c = d.primary
    assert name_of(c) == "Tidepool"
    assert c.original[ST].blobs["image"] == raw
    assert c.original[ST].png == {"payload": "ccv3"}
    assert isinstance(c.body, CharacterBody)
    p = c.body.media.portrait
    assert p is not None and (p.ref, p.mime) == ("ccdefault:", "image/png")  # the card image
    assert c.body.settings.talkativeness == 0.7
    assert write(c, ST).data == raw


def test_png_edit_rewrites_both_card_chunks_in_place_and_keeps_every_other_chunk() -> None:
    raw = sample("sillytavern/tidepool.png")
    out = write(edited(card(raw), identity={"name": "Tidepool II"}), ST).data
    before = [(c.type, c.data[:8]) for c in png.parse(raw).chunks]
    after = [(c.type, c.data[:8]) for c in png.parse(out).chunks]
    assert [t for t, _ in before] == [t for t, _ in after]  # same layout
    assert non_text_chunks(raw) == non_text_chunks(out)
    texts = {
        t.keyword: t.text
        for t in png.text_chunks(png.parse(out).chunks)
        if t.keyword in ("Software", "Comment")
    }
    assert texts == {"Software": b"bunzai sample generator", "Comment": b"generated, not drawn"}
    p = card_payloads(out)
    assert p["chara"]["data"]["name"] == p["ccv3"]["data"]["name"] == "Tidepool II"
    assert (p["chara"]["spec"], p["ccv3"]["spec"]) == ("chara_card_v2", "chara_card_v3")
    assert p["chara"]["name"] == "Tidepool II"  # the V1 mirror


def test_quirk_01_ccv3_is_read_before_chara_and_keywords_ignore_case() -> None:
    data = build_png(text_chunk("Chara", v2("From chara")), text_chunk("CcV3", v3("From ccv3")))
    c = card(data)
    assert name_of(c) == "From ccv3"
    assert c.original[ST].png == {"payload": "ccv3"}
    # order in the file does not matter
    data = build_png(text_chunk("ccv3", v3("From ccv3")), text_chunk("chara", v2("From chara")))
    assert name_of(card(data)) == "From ccv3"


def test_quirk_01_ztxt_and_itxt_cards_are_read_too() -> None:
    assert name_of(card(build_png(text_chunk("chara", v2("z"), "zTXt")))) == "z"
    assert name_of(card(build_png(text_chunk("ccv3", v3("i"), "iTXt", compress=True)))) == "i"
    assert name_of(card(build_png(text_chunk("chara", v2("i2"), "iTXt")))) == "i2"


def test_quirk_01_broken_ccv3_falls_back_to_chara_with_a_warning() -> None:
    for bad in [b"%%% not base64 %%%", base64.b64encode(b"{not json"), base64.b64encode(b"[1, 2]")]:
        data = build_png(png.make_text_chunk("ccv3", bad), text_chunk("chara", v2("Backup")))
        c = card(data)
        assert name_of(c) == "Backup"
        assert c.original[ST].png == {"payload": "chara"}
        assert len(c.warnings) == 1 and c.warnings[0].startswith("ccv3 chunk unusable")
        # an edit writes a good ccv3 where the broken one was
        out = write(edited(c, identity={"name": "Fixed"}), ST).data
        p = card_payloads(out)
        assert p["ccv3"]["data"]["name"] == p["chara"]["data"]["name"] == "Fixed"
        assert p["ccv3"]["spec"] == "chara_card_v3"


def test_quirk_01_broken_ccv3_with_a_valid_shape_error_also_falls_back() -> None:
    data = build_png(text_chunk("ccv3", {"spec": "chara_card_v3"}), text_chunk("chara", v2("Backup")))
    c = card(data)
    assert name_of(c) == "Backup" and "$.data" in c.warnings[0]


def test_quirk_01_v3_only_png_as_risu_writes_it_keeps_its_layout() -> None:
    """RisuAI's V3 PNG has only `ccv3` (+ asset chunks): no `chara` is added on export."""
    assets = [
        {"type": "icon", "uri": "ccdefault:", "name": "main", "ext": "png"},
        {"type": "emotion", "uri": "__asset:1", "name": "happy", "ext": "png"},
        {"type": "x-risu-asset", "uri": "__asset:2", "name": "map", "ext": "webp"},
    ]
    asset1 = png.make_text_chunk("chara-ext-asset_:1", base64.b64encode(b"\x89PNG fake happy"))
    asset2 = png.make_text_chunk("chara-ext-asset_:2", base64.b64encode(b"RIFF\0\0\0\0WEBPfake"))
    data = build_png(text_chunk("ccv3", v3("Risu", assets=assets)), asset1, asset2)
    c = card(data)
    assert isinstance(c.body, CharacterBody)
    assert [(a.role, a.ref, a.name) for a in c.body.media.assets or []] == [
        ("emotion", "__asset:1", "happy"),
        ("other", "__asset:2", "map"),
    ]
    out = write(edited(c, identity={"name": "Risu 2"}), ST).data
    assert set(card_payloads(out)) == {"ccv3"}
    kept = [c_.data for c_ in png.parse(out).chunks if c_.data.startswith(b"chara-ext-asset_")]
    assert kept == [asset1.data, asset2.data]


def test_quirk_02_ccv3_labelled_v2_and_chara_labelled_v3_decode_by_shape() -> None:
    st_pair = build_png(
        text_chunk("chara", v2("ST", nickname="n")),
        text_chunk("ccv3", {**v2("ST", nickname="n"), "spec": "chara_card_v3", "spec_version": "3.0"}),
    )
    c = card(st_pair)
    assert isinstance(c.body, CharacterBody) and c.body.identity.nickname == "n"
    # a ccv3 chunk whose JSON still says V2, and a chara chunk that says V3 (ST never resets spec)
    c2 = card(build_png(text_chunk("ccv3", v2("two"))))
    assert (
        name_of(c2) == "two"
        and rt_compare(build_png(text_chunk("ccv3", v2("two"))), write(c2, ST).data) == []
    )
    c3 = card(build_png(text_chunk("chara", v3("three", group_only_greetings=["g"]))))
    assert isinstance(c3.body, CharacterBody)
    assert [g.text for g in c3.body.greetings.groupOnlyGreetings or []] == ["g"]


def test_quirk_02_fresh_png_gets_chara_v2_and_ccv3_v3_before_iend() -> None:
    image = build_png(png.make_text_chunk("chara", b"stale"), png.make_text_chunk("Title", b"t"))
    c = CanonicalEntity(
        kind="character", id="character-f", body=CharacterBody.model_validate({"identity": {"name": "New"}})
    )
    out = registry.get(ST).encode(c, EmitContext(options={"image": image}))
    chunks = png.parse(out).chunks
    kws = [t.keyword for t in png.text_chunks(chunks)]
    assert kws == ["Title", "chara", "ccv3"]  # the stale chara removed, the new pair just before IEND
    assert (
        chunks[-1].type == b"IEND"
        and chunks[-3].data.startswith(b"chara\0")
        and chunks[-2].data.startswith(b"ccv3\0")
    )
    p = card_payloads(out)
    assert (p["chara"]["spec"], p["chara"]["spec_version"]) == ("chara_card_v2", "2.0")
    assert (p["ccv3"]["spec"], p["ccv3"]["spec_version"]) == ("chara_card_v3", "3.0")
    assert p["chara"]["data"] == p["ccv3"]["data"]
    assert non_text_chunks(out) == non_text_chunks(image)


def test_quirk_03_the_image_is_never_re_encoded_apng_frames_and_trailing_bytes_survive() -> None:
    actl = png.Chunk(b"acTL", b"\0\0\0\x02\0\0\0\0")
    fctl = png.Chunk(b"fcTL", bytes(26))
    fdat = png.Chunk(b"fdAT", b"\0\0\0\x01" + zlib.compress(b"\0" * 14))
    exif = png.Chunk(b"eXIf", b"MM\0*\0\0\0\x08\0\0")
    data = build_png(text_chunk("chara", v2("Anim")), fctl, fdat, before_idat=(actl, exif), tail=b"TRAILER")
    out = write(edited(card(data), identity={"name": "Anim 2"}), ST).data
    assert non_text_chunks(out) == non_text_chunks(data)
    assert png.parse(out).trailing == b"TRAILER"
    assert card_payloads(out)["chara"]["data"]["name"] == "Anim 2"


def test_legacy_risu_png_reads_chara_and_keeps_the_risuai_chunk() -> None:
    risuai = png.make_text_chunk("risuai", base64.b64encode(b"\x82\xa4type\xa4risu"))
    v1 = {
        "name": "Legacy",
        "description": "d",
        "personality": "",
        "scenario": "",
        "first_mes": "yo",
        "mes_example": "",
    }
    data = build_png(text_chunk("chara", v1), risuai)
    c = card(data)
    assert name_of(c) == "Legacy"
    out = write(edited(c, identity={"name": "Legacy 2"}), ST).data
    assert risuai.data in [ch.data for ch in png.parse(out).chunks]
    p = card_payloads(out)
    assert set(p) == {"chara"} and "spec" not in p["chara"] and p["chara"]["name"] == "Legacy 2"


def test_png_with_text_chunks_before_idat_keeps_their_position() -> None:
    data = build_png(before_idat=(text_chunk("chara", v2("Early")),))
    out = write(edited(card(data), identity={"name": "Early 2"}), ST).data
    types = [c.type for c in png.parse(out).chunks]
    assert types == [b"IHDR", b"tEXt", b"IDAT", b"IEND"]


def test_png_card_exports_as_json_when_asked_with_its_picture_as_a_data_url() -> None:
    raw = sample("sillytavern/tidepool.png")
    c = card(raw)
    out = registry.get(ST).encode(c, EmitContext(options={"container": "json"}))
    got = json.loads(out)
    want = card_payloads(raw)["ccv3"]
    # the card's own picture (the PNG without its card chunks) is the main icon, inline
    picture = png.replace_text(raw, remove=("chara", "ccv3"))
    icon = {
        "type": "icon",
        "uri": "data:image/png;base64," + base64.b64encode(picture).decode(),
        "name": "main",
        "ext": "png",
    }
    assert got["data"].pop("assets") == [icon]
    assert got == want


def test_a_json_card_as_png_gets_the_default_portrait_or_the_callers_image() -> None:
    c = card(sample("sillytavern/starship-captain.v3.json"), "s.json")
    out = registry.get(ST).encode(c, EmitContext(options={"container": "png"}))
    assert png.replace_text(out, remove=("chara", "ccv3")) == default_portrait_png()
    assert card_payloads(out)["ccv3"]["data"]["nickname"] == "Cap"
    image = build_png()
    out = registry.get(ST).encode(c, EmitContext(options={"container": "png", "image": image}))
    assert png.replace_text(out, remove=("chara", "ccv3")) == image
    assert card_payloads(out)["ccv3"]["data"]["nickname"] == "Cap"


# --- bad input ------------------------------------------------------------------------------------


def _error(data: bytes, name: str = "x.json") -> Malformed:
    with pytest.raises(Malformed) as err:
        read(data, name, format=ST)
    assert not getattr(err.value, "internal", False)
    return err.value


def test_bad_input_invalid_base64() -> None:
    data = build_png(png.make_text_chunk("chara", b"!!!not-base64!!!"))
    e = _error(data, "x.png")
    assert "base64" in e.message
    assert e.offset == png.parse(data).chunks[2].offset


def test_bad_input_payload_that_is_not_json_or_not_an_object() -> None:
    assert (
        "JSON" in _error(build_png(png.make_text_chunk("chara", base64.b64encode(b"{oops"))), "x.png").message
    )
    e = _error(build_png(text_chunk("chara", ["a", "list"])), "x.png")
    assert e.path == "$"
    assert _error(b"[1, 2, 3]").path == "$"


def test_bad_input_data_missing_or_not_an_object() -> None:
    assert _error(json.dumps({"spec": "chara_card_v2", "spec_version": "2.0"}).encode()).path == "$.data"
    assert _error(json.dumps({"spec": "chara_card_v3", "data": []}).encode()).path == "$.data"


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({"character_book": "book"}, "$.data.character_book"),
        ({"character_book": {"entries": {"0": {}}}}, "$.data.character_book.entries"),
        ({"character_book": {"entries": [{}, 3]}}, "$.data.character_book.entries[1]"),
        ({"character_book": {"entries": [{"keys": [1, {}]}]}}, "$.data.character_book.entries[0].keys[1]"),
        ({"extensions": {"regex_scripts": {"a": 1}}}, "$.data.extensions.regex_scripts"),
        (
            {"extensions": {"regex_scripts": [{"findRegex": 1.5, "placement": "x"}]}},
            "$.data.extensions.regex_scripts[0].placement",
        ),
        ({"name": {"first": "x"}}, "$.data.name"),
    ],
)
def test_bad_input_wrong_types_name_their_json_path(data: dict[str, Any], path: str) -> None:
    assert _error(json.dumps(v2(**data)).encode()).path == path


def test_bad_input_png_without_a_card_is_not_recognized() -> None:
    with pytest.raises(NotRecognized):
        read(build_png(), "x.png", format=ST)


def test_bad_input_both_card_chunks_broken_reports_the_ccv3_error() -> None:
    data = build_png(png.make_text_chunk("ccv3", b"@@@"), png.make_text_chunk("chara", b"###"))
    e = _error(data, "x.png")
    assert "'ccv3'" in e.message and e.offset == png.parse(data).chunks[2].offset


# --- the remaining card quirks of §0 -----------------------------------------------------------------


def test_quirk_09_10_st_book_conventions_round_trip() -> None:
    """ST writes use_regex:true on plain keys and collapses positions 1-7 to "after_char" while the
    int survives in extensions.position: both decode to the real meaning and come back unchanged."""
    d = read(sample("sillytavern/lighthouse-keeper.v2.json"), "c.json")
    book = d.entities[1].body
    assert isinstance(book, LorebookBody)
    assert [e.position for e in book.entries] == ["world", "depth", "outlet"]
    assert book.entries[0].triggers is not None and not book.entries[0].triggers[0].isRegex


def test_quirk_11_fav_and_talkativeness_strings_and_create_date_stay_in_the_twin() -> None:
    tree = {
        "name": "Q",
        "fav": "true",
        "talkativeness": "0.9",
        "create_date": "2023-5-12 @21h 32m 29s 228ms",
        **v2("Q", extensions={"talkativeness": "0.9", "fav": "true"}),
    }
    raw = json.dumps(tree).encode()
    c = card(raw, "q.json")
    assert isinstance(c.body, CharacterBody)
    assert c.body.settings.talkativeness == 0.9 and c.body.extensions == {}
    assert json.loads(write(c, ST).data) == tree


def test_quirk_12_book_without_extensions_or_use_regex_decodes() -> None:
    raw = json.dumps(
        v2(
            character_book={
                "name": "B",
                "entries": [
                    {
                        "id": 0,
                        "keys": ["k"],
                        "content": "c",
                        "enabled": True,
                        "insertion_order": 10,
                        "position": "before_char",
                        "extensions": {"position": 0, "probability": None, "useProbability": False},
                    }
                ],
            }
        )
    ).encode()
    d = read(raw, "b.json")
    e = d.entities[1].body.entries[0]  # type: ignore[attr-defined]
    assert (e.position, e.probability, e.sortOrder) == ("world", 100, 10)
    assert rt_compare(raw, write(d.primary, ST, linked=d.entities).data) == []


def test_quirk_14_asset_uri_prefixes_are_kept_verbatim() -> None:
    assets = [
        {"type": "icon", "uri": "embeded://assets/icon/main.png", "name": "main", "ext": "png"},
        {"type": "emotion", "uri": "embedded://assets/emotion/sad.png", "name": "sad", "ext": "png"},
        {"type": "background", "uri": "__asset:3", "name": "bg", "ext": "jpeg"},
    ]
    c = card(json.dumps(v3(assets=assets)).encode(), "a.json")
    assert isinstance(c.body, CharacterBody)
    refs = [c.body.media.portrait.ref] + [a.ref for a in c.body.media.assets or []]  # type: ignore[union-attr]
    assert refs == ["embeded://assets/icon/main.png", "embedded://assets/emotion/sad.png", "__asset:3"]


def test_quirk_15_depth_prompt_role_is_a_string_book_role_an_int() -> None:
    d = read(sample("sillytavern/lighthouse-keeper.v2.json"), "c.json")
    c, book = d.entities[0], d.entities[1]
    assert isinstance(c.body, CharacterBody) and isinstance(book.body, LorebookBody)
    assert (c.body.prompts.depthInjections or [])[0].role == "system"  # "system"
    assert book.body.entries[1].role == "assistant"  # 2


def test_quirk_16_v3_dates_are_seconds_and_st_create_date_is_not_a_date() -> None:
    c = card(
        json.dumps({**v3(creation_date=1700000000), "create_date": "2024-01-01T00:00:00Z"}).encode(), "d.json"
    )
    assert isinstance(c.body, CharacterBody)
    assert c.body.attribution.createdAt == 1700000000 and c.body.attribution.updatedAt is None


def test_cross_format_card_with_book_to_fresh_ccv3_json_keeps_every_entry_field() -> None:
    """card -> CCv3 JSON written with no escrow at all -> card: the book's entries come back whole."""
    d = read(sample("sillytavern/lighthouse-keeper.v2.json"), "c.json")
    fresh = [CanonicalEntity(kind=e.kind, id=e.id, body=e.body, links=dict(e.links)) for e in d.entities]
    out = write(fresh[0], ST, linked=fresh)
    assert out.beside == []
    back = read(out.data, "c.json")
    assert [e.kind for e in back.entities] == ["character", "lorebook", "regex"]
    assert back.entities[1].body == d.entities[1].body
    assert back.entities[2].body == d.entities[2].body
    tree = json.loads(out.data)
    assert tree["spec"] == "chara_card_v3" and "name" not in {k for k in tree if k != "data"}
