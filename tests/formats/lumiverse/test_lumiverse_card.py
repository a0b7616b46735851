"""``lumiverse``: Tavern cards with Lumiverse's bare extension keys, and the zip with
``lumiverse_modules.json`` (docs/formats/lumiverse.md#character)."""

from __future__ import annotations

import json
import zipfile
from io import BytesIO
from typing import Any, ClassVar

import pytest

from bunzai_codecs import read, write
from bunzai_codecs.core import archive, registry
from bunzai_codecs.core.codec import Codec, EmitContext
from bunzai_codecs.core.entity import Decoded
from bunzai_codecs.core.errors import Malformed, NotRecognized
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import CharacterBody, RegexSetBody
from tests.formats.codec_helpers import decode, dumps, export, rt_compare, sample_tree, scores, winner
from tests.formats.helpers import edited, sample

LV = "lumiverse"
QUILL = "lumiverse/quill.lumiverse.json"
ZIP = "lumiverse/quill.lumiverse.zip"


def v3(ext: dict[str, Any]) -> bytes:
    return dumps({"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "N", "extensions": ext}})


def members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(BytesIO(data)) as z:
        return {n: z.read(n) for n in z.namelist()}


def rezip(replace: dict[str, bytes | None]) -> bytes:
    """The sample zip with members replaced (``None`` removes one)."""
    out = []
    for name, data in members(sample(ZIP)).items():
        if name in replace:
            new = replace[name]
            if new is None:
                continue
            data = new
        out.append((name, data))
    out += [(n, d) for n, d in replace.items() if d is not None and n not in dict(out)]
    return archive.write_zip(out)


# --- detection ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ext",
    [
        {"expressions": {}},
        {"expression_groups": {}},
        {"alternate_fields": {}},
        {"lumiverse_image_gen_lora": {}},
        {"alternate_avatars": []},
        {"world_book_ids": []},
        {"databank_ids": []},
        {"alternate_character_name": "A"},
        {"ttsVoice": None},
    ],
)
def test_each_fingerprint_key_scores_0_95_above_sillytavern(ext: dict[str, Any]) -> None:
    s = scores(v3(ext))
    assert s[LV] == 0.95 and s["sillytavern"] == 0.9


def test_wrong_typed_fingerprint_keys_and_plain_cards_are_not_claimed() -> None:
    assert LV not in scores(v3({"expressions": [], "alternate_avatars": {}, "alternate_character_name": 1}))
    assert LV not in scores(sample("sillytavern/starship-captain.v3.json"))
    assert winner(sample(QUILL)) == LV


def test_flat_and_png_cards_with_the_fingerprint() -> None:
    assert scores(dumps({"name": "N", "first_mes": "hi", "extensions": {"ttsVoice": "v"}}))[LV] == 0.95
    png_card = sample("rolecall/wren.rolecall-flat.png")  # a PNG card without Lumiverse keys
    assert LV not in scores(png_card, "w.png")


def test_the_zip_with_a_modules_file_is_certain_and_others_are_not_claimed() -> None:
    assert scores(sample(ZIP), "q.zip")[LV] == 1.0
    assert winner(sample(ZIP), "q.zip") == LV
    assert LV not in scores(rezip({"lumiverse_modules.json": None}), "q.charx")  # a plain charx
    assert LV not in scores(rezip({"module.risum": b"\0"}), "q.charx")  # cedes to RisuAI


class _RisuSeedStandIn(Codec):
    """RisuAI's charx reader as its seed describes it (1.0 for any zip with card.json), used when the
    real ``risu`` codec is not registered on this branch."""

    id = "risu"
    kind = "character"
    family = "risu"
    priority = 0
    suffixes: ClassVar[tuple[str, ...]] = (".charx",)

    def detect(self, s: Sniff) -> float:
        z = s.zip
        return 1.0 if z is not None and "card.json" in z else 0.0

    def decode(self, s: Sniff) -> Decoded:
        raise NotRecognized("a detection stand-in decodes nothing")


def test_quirk_the_lumiverse_zip_never_ties_with_risu() -> None:
    table = dict(registry.CODECS)
    table.setdefault("risu", _RisuSeedStandIn)
    with registry.using(table):
        lumiverse_zip = Sniff(sample(ZIP), "quill.charx")
        ranked = registry.detect_all(lumiverse_zip)
        assert [(c.id, c.score) for c in ranked.candidates][:2] == [("lumiverse", 1.0), ("risu", 1.0)]
        assert ranked.best is not None and ranked.best.id == LV
        best = registry.detect(lumiverse_zip)
        assert best is not None and best.id == LV
        assert registry.get(LV).priority > registry.get("risu").priority
        plain = Sniff(rezip({"lumiverse_modules.json": None}), "quill.charx")
        best = registry.detect(plain)
        assert best is not None and best.id == "risu"


# --- decode ---------------------------------------------------------------------------------------


def test_lumiverse_keys_stay_verbatim_in_extensions() -> None:
    b = decode(sample(QUILL)).primary.body
    assert isinstance(b, CharacterBody)
    src = sample_tree(QUILL)["data"]["extensions"]
    for k in ("alternate_character_name", "alternate_fields", "alternate_avatars", "expressions", "ttsVoice"):
        assert b.extensions[k] == src[k]
    assert b.identity.nickname is None  # the prompt-name override is not CCv3's nickname
    assert b.settings.talkativeness == 0.5 and "talkativeness" not in b.extensions


def test_zip_decodes_the_card_and_the_module_scripts_as_a_linked_set() -> None:
    d = decode(sample(ZIP), "q.zip")
    card, rx = d.entities
    assert isinstance(card.body, CharacterBody) and card.body.identity.name == "Quill"
    assert card.links == {"knowledgeRefs": [rx.id]}
    assert isinstance(rx.body, RegexSetBody)
    (rule,) = rx.body.rules
    assert (rule.label, rule.find, rule.flags, rule.targets, rule.phases) == (
        "Brass clicks",
        "\\*click\\*",
        "gi",
        ["display"],  # a module row's single-string target
        ["output"],
    )
    assert rx.original[LV].module is True and rx.original[LV].raw[0]["target"] == "display"
    assert card.original[LV].blobs["archive"] == sample(ZIP)


# --- round trip -----------------------------------------------------------------------------------


@pytest.mark.parametrize("rel", [QUILL, ZIP])
def test_round_trip_and_canonical_stability(rel: str) -> None:
    data = sample(rel)
    d = decode(data, rel)
    out = export(d.primary, LV, d.entities)
    assert rt_compare(data, out) == []
    if rel.endswith(".zip"):
        assert out == data
    again = decode(out, rel)
    assert [e.body for e in again.entities] == [e.body for e in d.entities]


def test_zip_edit_rewrites_card_json_only_and_keeps_every_other_member() -> None:
    data = sample(ZIP)
    d = decode(data, "q.zip")
    out = export(edited(d.primary, identity={"name": "Quill II"}), LV, d.entities)
    before, after = members(data), members(out)
    assert list(after) == list(before)  # member order
    for name in before:
        if name != "card.json":
            assert after[name] == before[name], name
    assert json.loads(after["card.json"])["data"]["name"] == "Quill II"
    assert json.loads(after["card.json"])["data"]["extensions"] == sample_tree(QUILL)["data"]["extensions"]
    with zipfile.ZipFile(BytesIO(out)) as zo, zipfile.ZipFile(BytesIO(data)) as zi:
        assert [i.compress_type for i in zo.infolist()] == [i.compress_type for i in zi.infolist()]


def test_zip_edit_of_the_module_scripts_keeps_the_string_target() -> None:
    data = sample(ZIP)
    d = decode(data, "q.zip")
    card, rx = d.entities

    def change(b: dict[str, Any]) -> None:
        b["rules"][0]["replace"] = "*tock*"

    out = export(card, LV, [card, edited(rx, change)])
    mods = json.loads(members(out)["lumiverse_modules.json"])
    row = mods["regex_scripts"][0]
    assert row["replace_string"] == "*tock*" and row["target"] == "display"
    assert row["metadata"] == {} and "id" not in row
    assert mods["expressions"]["mappings"]["calm"] == "assets/other/image/expr_calm.png"
    assert members(out)["card.json"] == members(data)["card.json"]


def test_zip_unlinking_the_module_scripts_empties_them() -> None:
    d = decode(sample(ZIP), "q.zip")
    card = d.primary
    bare = edited(card)
    bare.links = {"knowledgeRefs": []}
    out = export(bare, LV, [bare])
    assert json.loads(members(out)["lumiverse_modules.json"])["regex_scripts"] == []


def test_zip_exported_as_json_writes_the_module_scripts_beside() -> None:
    d = decode(sample(ZIP), "q.zip")
    codec = registry.get(LV)
    ctx = EmitContext.for_entities(d.entities, container="json")
    card_json = json.loads(codec.encode(d.primary, ctx))
    # the modules file's images (expressions, the alternate avatar) go with the card, inline
    assets = card_json["data"].pop("assets")
    assert assets[0] == {"type": "icon", "uri": "ccdefault:", "name": "main", "ext": "png"}
    assert [(a["type"], a["name"], a["uri"][:22]) for a in assets[1:]] == [
        ("emotion", "calm", "data:image/png;base64,"),
        ("emotion", "puzzled", "data:image/png;base64,"),
        ("x_other", "av-1", "data:image/png;base64,"),  # the CCv3 type of role other
    ]
    assert card_json == sample_tree(QUILL)
    assert ctx.embedded == set()  # nothing embedded: bundle.write puts the scripts beside
    ex = write(d.entities[1], "lumiverse-regex", linked=d.entities)
    assert json.loads(ex.data)["scripts"][0]["target"] == ["display"]


# --- cross-format ---------------------------------------------------------------------------------


def test_cross_format_to_sillytavern_keeps_the_lumiverse_keys() -> None:
    d = decode(sample(QUILL))
    out = export(d.primary, "sillytavern", d.entities)
    assert winner(out) == LV  # the keys ride along, so the file is still Lumiverse's
    st = read(out, "q.json", format="sillytavern").primary.body.dump()
    # a fresh CCv3 export writes the spec's group_only_greetings: [] (the only difference)
    assert st["greetings"].pop("groupOnlyGreetings") == []
    assert st == d.primary.body.dump()


def test_cross_format_zip_to_sillytavern_puts_module_scripts_in_the_card() -> None:
    d = decode(sample(ZIP), "q.zip")
    out = json.loads(export(d.primary, "sillytavern", d.entities))
    (script,) = out["data"]["extensions"]["regex_scripts"]
    assert script["scriptName"] == "Brass clicks" and script["findRegex"] == "/\\*click\\*/gi"
    assert script["markdownOnly"] is True  # target display


def test_cross_format_from_sillytavern() -> None:
    st = read(sample("sillytavern/starship-captain.v3.json"), "s.json")
    out = export(st.primary, LV, st.entities)
    back = read(out, "s.json", format=LV)
    assert [e.body for e in back.entities] == [e.body for e in st.entities]


# --- bad input ------------------------------------------------------------------------------------


def test_bad_zips_are_typed_errors() -> None:
    with pytest.raises(Malformed) as err:
        read(rezip({"card.json": None}), "q.zip", format=LV)
    assert err.value.path == "card.json"
    with pytest.raises(Malformed) as err:
        read(rezip({"card.json": b"{not json"}), "q.zip")
    assert "card.json" in str(err.value)
    with pytest.raises(Malformed) as err:
        read(rezip({"lumiverse_modules.json": b"[]"}), "q.zip")
    assert err.value.path == "lumiverse_modules.json:$"
    mods = json.loads(members(sample(ZIP))["lumiverse_modules.json"])
    mods["regex_scripts"][0]["placement"] = "ai_output"
    with pytest.raises(Malformed) as err:
        read(rezip({"lumiverse_modules.json": dumps(mods)}), "q.zip")
    assert err.value.path == "lumiverse_modules.json:$.regex_scripts[0].placement"
