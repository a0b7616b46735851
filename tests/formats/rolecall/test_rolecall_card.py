"""``rolecall``: Tavern cards with ``data.extensions.rolecall`` (docs/formats/rolecall.md#character-dataextensionsrolecall-rolecalldialect-on-top-of-the-tavern-map)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from bunzai_codecs import read
from bunzai_codecs.core import png
from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.entities import CharacterBody
from tests.formats.codec_helpers import decode, dumps, export, rt_compare, sample_tree, scores, winner
from tests.formats.helpers import edited, sample

RC = "rolecall"
WREN = "rolecall/wren.rolecall.v3.json"
FLAT = "rolecall/wren.rolecall-flat.png"


def card(data: bytes, name: str = "c.json") -> Any:
    return decode(data, name).primary


def body(data: bytes, name: str = "c.json") -> CharacterBody:
    b = card(data, name).body
    assert isinstance(b, CharacterBody)
    return b


def v3(ext: dict[str, Any], **data: Any) -> dict[str, Any]:
    return {"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "N", "extensions": ext, **data}}


def chara_payload(png_bytes: bytes, keyword: str = "chara") -> Any:
    t = next(t for t in png.text_chunks(png.parse(png_bytes).chunks) if t.keyword == keyword)
    return json.loads(base64.b64decode(t.text))


# --- detection ------------------------------------------------------------------------------------


def test_detects_a_card_with_a_rolecall_bag_at_certainty_above_sillytavern() -> None:
    s = scores(sample(WREN))
    assert s["rolecall"] == 1.0 and s["sillytavern"] == 0.9
    assert winner(dumps(v3({"rolecall": {}}))) == RC
    assert winner(dumps({**v3({"rolecall": {}}), "spec": "chara_card_v2"})) == RC


def test_rolecall_own_png_with_the_bare_v2_data_object_is_claimed() -> None:
    data = sample(FLAT)
    payload = chara_payload(data)
    assert "spec" not in payload and "data" not in payload and payload["name"] == "Wren Hollis"
    assert scores(data, "w.png")["rolecall"] == 1.0
    assert winner(data, "w.png") == RC


def test_not_claimed_persona_cards_plain_cards_and_odd_bags() -> None:
    assert scores(dumps(v3({"rolecall": {"type": "persona"}}))).get("rolecall", 0) == 0
    assert scores(dumps(v3({"chub": {}}))).get("rolecall", 0) == 0
    assert scores(dumps(v3({"rolecall": "yes"}))).get("rolecall", 0) == 0
    assert scores(dumps({"spec": "chara_card_v3", "data": "x"})).get("rolecall", 0) == 0
    assert scores(dumps({"spec": {"x": 1}, "data": {"extensions": {"rolecall": {}}}})).get("rolecall", 0) == 0
    assert scores(sample("sillytavern/starship-captain.v3.json")).get("rolecall", 0) == 0


# --- decode -----------------------------------------------------------------------------------------


def test_decode_maps_titles_injections_sources_and_expression_assets() -> None:
    b = body(sample(WREN))
    alts = b.greetings.alternateGreetings or []
    assert [(g.text, g.title) for g in alts] == [
        ("Log entry forty-one. Someone is knocking.", "The Knock"),
        ("You again. Kettle's on.", None),
    ]
    inj = b.prompts.depthInjections or []
    assert [(i.text, i.depth, i.role, i.origin, i.enabled) for i in inj] == [
        ("The static sometimes says her name.", 2, "system", "rolecall_details", True),
        ("She never reads log entry thirteen aloud.", 4, None, "rolecall_details", False),
        ("Wren speaks in short radio phrases.", 4, "system", "depth_prompt", None),
    ]
    assert b.attribution.source == ["harbor-sample"]
    assert b.media.portrait is not None and b.media.portrait.ref == "https://example.invalid/wren/main.png"
    assert [(m.role, m.name) for m in b.media.assets or []] == [("emotion", "wary"), ("outfit", "oilskin")]
    assert b.settings.talkativeness == 0.4
    assert b.identity.name == "Wren Hollis" and b.identity.characterVersion == "2"


def test_the_rest_of_the_bag_stays_in_extensions_without_the_mapped_keys() -> None:
    bag = body(sample(WREN)).extensions["rolecall"]
    assert bag["tagline"] == "every ship answers eventually"
    assert bag["content_rating"] == "all_hours"
    assert bag["creators_note"] == "Written on a stormy night. Enjoy."
    assert bag["creator_notes"].startswith("for other creators")
    assert "alternate_greeting_titles" not in bag
    assert bag["details"]["full_name"] == "Wren Abigail Hollis"
    assert "prompt_depth_injections" not in bag["details"]


def test_the_source_warning_of_the_shared_mapper_is_dropped_for_name_objects() -> None:
    e = card(sample(WREN))
    assert e.warnings == []
    st = read(sample(WREN), "w.json", format="sillytavern").primary
    assert any("source" in w for w in st.warnings)  # the generic reader cannot use [{name}]


def test_embedded_book_is_a_linked_lorebook_with_its_twin_under_rolecall() -> None:
    d = decode(sample(WREN))
    card_e, book = d.entities
    assert book.kind == "lorebook" and card_e.links == {"knowledgeRefs": [book.id]}
    assert "rolecall" in book.original and book.original["rolecall"].raw["name"] == "Gull Point"


# --- round trip ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("rel", [WREN, FLAT])
def test_same_format_round_trip_and_canonical_stability(rel: str) -> None:
    data = sample(rel)
    d = decode(data, rel)
    out = export(d.primary, RC, d.entities)
    assert rt_compare(data, out) == []
    if rel.endswith(".png"):
        assert out == data  # unedited PNG: the file as read
    again = decode(out, rel)
    assert [e.body for e in again.entities] == [e.body for e in d.entities]


def test_edit_a_title_and_an_injection_goes_back_to_their_own_homes() -> None:
    d = decode(sample(WREN))

    def change(b: dict[str, Any]) -> None:
        assert b["greetings"]["alternateGreetings"] and b["prompts"]["depthInjections"]
        b["greetings"]["alternateGreetings"][1]["title"] = "Kettle"
        b["prompts"]["depthInjections"][0]["text"] = "The static hums her name."

    out = json.loads(export(edited(d.primary, change), RC, d.entities))
    rc = out["data"]["extensions"]["rolecall"]
    assert rc["alternate_greeting_titles"] == ["The Knock", "Kettle"]
    rows = rc["details"]["prompt_depth_injections"]
    assert rows[0] == {
        "id": "inj-1",
        "content": "The static hums her name.",
        "depth": 2,
        "role": "system",
        "enabled": True,
    }
    assert rows[1]["id"] == "inj-2" and "depth" not in rows[1]  # untouched row: the twin's bytes
    assert (
        out["data"]["extensions"]["depth_prompt"] == sample_tree(WREN)["data"]["extensions"]["depth_prompt"]
    )
    assert rc["tagline"] == "every ship answers eventually"


def test_edited_assets_keep_rolecall_type_expression() -> None:
    d = decode(sample(WREN))

    def change(b: dict[str, Any]) -> None:
        assert b["media"]["assets"]
        b["media"]["assets"][0]["ref"] = "https://example.invalid/wren/wary-2.png"

    out = json.loads(export(edited(d.primary, change), RC, d.entities))
    assert [a["type"] for a in out["data"]["assets"]] == ["icon", "expression", "outfit"]
    assert out["data"]["assets"][1]["uri"] == "https://example.invalid/wren/wary-2.png"
    assert out["data"]["source"] == [{"name": "harbor-sample"}]


def test_quirk_flat_png_stays_flat_after_an_edit() -> None:
    d = decode(sample(FLAT), "w.png")

    out = export(edited(d.primary, identity={"name": "Wren H."}), RC, d.entities)
    payload = chara_payload(out)
    assert "spec" not in payload and "data" not in payload
    assert payload["name"] == "Wren H." and payload["extensions"]["rolecall"]["tagline"]
    assert body(out, "w.png").identity.name == "Wren H."


def test_quirk_casting_card_injections_alone_do_not_invent_a_depth_prompt() -> None:
    tree = v3(
        {"rolecall": {"details": {"prompt_depth_injections": [{"content": "x", "depth": 1}]}}},
        description="d",
    )
    d = decode(dumps(tree))
    out = json.loads(export(edited(d.primary, identity={"description": "e"}), RC))
    assert "depth_prompt" not in out["data"]["extensions"]
    assert out["data"]["extensions"]["rolecall"]["details"]["prompt_depth_injections"] == [
        {"content": "x", "depth": 1}
    ]


def test_quirk_more_titles_than_greetings_stay_in_the_bag_with_a_warning() -> None:
    tree = v3({"rolecall": {"alternate_greeting_titles": ["a", "b"]}}, alternate_greetings=["only one"])
    e = card(dumps(tree))
    assert isinstance(e.body, CharacterBody)
    assert e.body.extensions["rolecall"]["alternate_greeting_titles"] == ["a", "b"]
    assert (e.body.greetings.alternateGreetings or [])[0].title is None
    assert any("more titles" in w for w in e.warnings)


# --- cross-format -------------------------------------------------------------------------------------


def test_rolecall_to_sillytavern_keeps_the_card_and_the_unmapped_bag() -> None:
    d = decode(sample(WREN))
    out = export(d.primary, "sillytavern", d.entities)
    st = read(out, "w.json")
    assert st.primary.source is not None and st.primary.source.format == "rolecall"  # the bag is still there
    tree = json.loads(out)["data"]
    assert tree["extensions"]["rolecall"]["tagline"] == "every ship answers eventually"
    assert tree["extensions"]["depth_prompt"]["prompt"] == "Wren speaks in short radio phrases."
    assert tree["character_book"]["name"] == "Gull Point"
    assert tree["source"] == ["harbor-sample"]  # ST's own shape
    forced = read(out, "w.json", format="sillytavern").primary.body
    rc = d.primary.body
    assert isinstance(forced, CharacterBody) and isinstance(rc, CharacterBody)
    assert forced.identity == rc.identity and forced.persona == rc.persona
    assert forced.greetings.firstMessage == rc.greetings.firstMessage
    assert [g.text for g in forced.greetings.alternateGreetings or []] == [
        g.text for g in rc.greetings.alternateGreetings or []
    ]


def test_sillytavern_to_rolecall_gets_a_rolecall_bag_and_keeps_the_card() -> None:
    src = sample("sillytavern/starship-captain.v3.json")
    d = read(src, "s.json")
    out = export(d.primary, RC, d.entities)
    assert winner(out) == RC
    assert json.loads(out)["data"]["extensions"]["rolecall"] == {}
    back = decode(out)
    st_body, rc_body = d.primary.body, back.primary.body
    assert isinstance(st_body, CharacterBody) and isinstance(rc_body, CharacterBody)
    assert rc_body.identity == st_body.identity
    assert rc_body.greetings == st_body.greetings and rc_body.examples == st_body.examples
    assert rc_body.prompts == st_body.prompts
    assert {k: v for k, v in rc_body.extensions.items() if k != "rolecall"} == st_body.extensions


# --- bad input ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ext", "path"),
    [
        ({"rolecall": ["not", "an", "object"]}, "$.data.extensions.rolecall"),
        (
            {"rolecall": {"alternate_greeting_titles": "t"}},
            "$.data.extensions.rolecall.alternate_greeting_titles",
        ),
        (
            {"rolecall": {"alternate_greeting_titles": [3]}},
            "$.data.extensions.rolecall.alternate_greeting_titles[0]",
        ),
        ({"rolecall": {"details": 7}}, "$.data.extensions.rolecall.details"),
        (
            {"rolecall": {"details": {"prompt_depth_injections": {}}}},
            "$.data.extensions.rolecall.details.prompt_depth_injections",
        ),
        (
            {"rolecall": {"details": {"prompt_depth_injections": [{"content": 5, "depth": "deep"}]}}},
            "$.data.extensions.rolecall.details.prompt_depth_injections[0].depth",
        ),
    ],
)
def test_bad_bag_values_are_typed_errors_with_their_path(ext: dict[str, Any], path: str) -> None:
    with pytest.raises(Malformed) as err:
        read(dumps(v3(ext)), "bad.json", format=RC)
    assert err.value.path == path
    assert not getattr(err.value, "internal", False)


def test_tavern_shaped_detectors_never_crash_on_an_unhashable_spec() -> None:
    from bunzai_codecs.core import registry
    from bunzai_codecs.core.codec import Codec
    from bunzai_codecs.core.sniff import Sniff

    Codec.detect_errors.clear()
    for spec in ({"a": 1}, [1], None, 3):
        for tree in (
            {"spec": spec, "data": {"name": "n", "extensions": {"rolecall": {}, "ttsVoice": "v"}}},
            {"spec": spec, "name": "n", "first_mes": "x"},
        ):
            registry.detect_all(Sniff(dumps(tree), "x.json"))
    assert Codec.detect_errors == []


def test_coverage_holds_titles_and_several_injections_without_the_tavern_caveats() -> None:
    from bunzai_codecs.core.registry import get

    cov = get(RC).coverage
    assert cov.covers("greetings.alternateGreetings[1].title")
    assert cov.covers("prompts.depthInjections[2].enabled")
    assert not any(n.startswith(("one depth injection", "greeting titles are not held")) for n in cov.notes)
    assert any("rolecall_details" in n for n in cov.notes)
    assert cov.covers("identity.name") and cov.covers("extensions")
