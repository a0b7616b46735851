"""risu: .charx and JPEG+ZIP cards — detection, the card map, module.risum, assets, Risu's reader rules."""

from __future__ import annotations

import base64
import io
import zipfile
from pathlib import Path
from typing import Any

import orjson
import pytest

from bunzai_codecs import LimitExceeded, Malformed, read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import EmitContext
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import CharacterBody, LorebookBody, RegexSetBody
from bunzai_codecs.formats.risu import charx, risum
from tests.formats.helpers import png_chunk
from tests.formats.risu.risu_reader_rules import fflate_zip, read_like_risu, stream_entries

SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "risu"
CHARX = SAMPLES / "oswin_the_lamplighter.charx"
HYBRID = SAMPLES / "oswin_the_lamplighter.jpeg"
WEBP = b"RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00/\x00\x00\x00\x00\x00"


def _members(data: bytes) -> dict[str, bytes]:
    z = zipfile.ZipFile(io.BytesIO(data))
    return {n: z.read(n) for n in z.namelist()}


def _same_archive(a: bytes, b: bytes) -> None:
    """What a same-format round trip must keep: member names, JSON trees, every other byte."""
    ma, mb = _members(a), _members(b)
    assert sorted(ma) == sorted(mb)
    for n in ma:
        if n.endswith(".json"):
            assert orjson.loads(ma[n]) == orjson.loads(mb[n]), n
        else:
            assert ma[n] == mb[n], n


def _character(d: Any) -> CharacterBody:
    body = d.primary.body
    assert isinstance(body, CharacterBody)
    return body


# -- detection ------------------------------------------------------------------------------------


def test_detection() -> None:
    det = registry.get("risu")
    assert det.detect(Sniff(CHARX.read_bytes(), CHARX.name)) == 1.0
    assert det.detect(Sniff(HYBRID.read_bytes(), HYBRID.name)) == 1.0
    assert det.detect(Sniff(HYBRID.read_bytes(), "renamed.bin")) == 1.0
    no_card = fflate_zip([("x_meta/main.json", b'{"type":"WEBP"}')])
    assert det.detect(Sniff(no_card, "x.charx")) == 0.0
    assert det.detect(Sniff(b'{"type":"WEBP"}', "main.json")) == 0.0


def test_samples_detect_as_risu() -> None:
    for p in (CHARX, HYBRID):
        best = registry.detect(Sniff(p.read_bytes(), p.name))
        assert best is not None and best.id == "risu"


# -- decode ---------------------------------------------------------------------------------------


def test_decode_sample_card_fields() -> None:
    body = _character(read(CHARX.read_bytes(), CHARX.name))
    assert body.identity.name == "Oswin the Lamplighter" and body.identity.nickname == "Oz"
    assert body.identity.characterVersion == "1.2"
    assert body.greetings.firstMessage and body.greetings.firstMessage.startswith("*Oswin lifts")
    assert [g.text for g in body.greetings.alternateGreetings or []] == [
        "*The foghorn sounds twice.* That means trouble, or a wedding."
    ]
    assert body.attribution.creator == "bunzai" and body.discovery.tags == ["harbor", "slice of life"]
    assert body.prompts.depthInjections is None  # an empty depth_prompt is no injection


def test_risuai_keys_are_first_class() -> None:
    body = _character(read(CHARX.read_bytes(), CHARX.name))
    assert [(b.phrase, b.weight) for b in body.bias or []] == [("fog", 5)]
    r = body.settings.risu
    assert (r.viewScreen, r.largePortrait, r.utilityBot, r.lorePlus, r.inlayViewScreen) == (
        "emotion",
        True,
        False,
        False,
        False,
    )
    assert [(x.label, x.value) for x in body.persona.imagePrompt.rows or []] == [
        ("always", "old man, lantern"),
        ("negative", ""),
    ]
    assert body.persona.voice is None  # vits {} is no voice
    beh = body.behavior
    assert beh.backgroundHTML == "<div class='fog'></div>"
    assert beh.defaultVariables == "fog=1\nferry_late=0"
    assert beh.privileged is False
    assert beh.prebuiltAsset.command == ""  # Risu writes "" here, not a boolean: kept as it is
    assert beh.prebuiltAsset.exclude == [] and beh.prebuiltAsset.style == ""
    assert body.extensions == {}  # risuai is claimed; depth_prompt is the shared mapper's


def test_ms_dates_are_normalised_per_field_and_restored_verbatim() -> None:
    data = CHARX.read_bytes()
    d = read(data, CHARX.name)
    att = _character(d).attribution
    assert att.createdAt == 1745411957.356  # milliseconds on the wire
    assert att.updatedAt == 1772896582  # seconds on the wire: left alone
    out = write(d.primary, "risu", linked=d.entities).data
    card = orjson.loads(_members(out)["card.json"])["data"]
    assert card["creation_date"] == 1745411957356 and card["modification_date"] == 1772896582


def test_module_wins_triggers_regex_and_lorebook() -> None:
    d = read(CHARX.read_bytes(), CHARX.name)
    ch, book, rx = d.entities
    body = _character(d)
    assert [t["comment"] for t in body.behavior.triggerScripts or []] == ["Ring the bell", "Lua greeter"]
    assert ch.links == {"knowledgeRefs": [book.id, rx.id]}
    assert isinstance(book.body, LorebookBody) and isinstance(rx.body, RegexSetBody)
    assert [c.name for c in book.body.categories] == ["Harbor District", "People"]
    assert len(book.body.entries) == 6
    # book settings come from character_book (the module rows have none)
    assert (book.body.globalScanDepth, book.body.tokenBudget, book.body.globalRecursion) == (4, 2000, False)
    assert [r.label for r in rx.body.rules] == ["Bell sound", "Drop OOC from prompt", "Harbor names bold"]


def test_webp_bytes_under_png_names_are_sniffed() -> None:
    body = _character(read(CHARX.read_bytes(), CHARX.name))
    by_ref = {m.ref: m for m in body.media.assets or []}
    assert by_ref["embeded://assets/other/image/harbor_map.png"].mime == "image/webp"
    assert by_ref["embeded://assets/emotion/image/smile.png"].mime == "image/webp"
    assert by_ref["embeded://assets/icon/image/lamp.png"].mime == "image/png"
    assert body.media.portrait is not None and body.media.portrait.mime == "image/png"


def test_duplicate_asset_names_stay_distinct() -> None:
    body = _character(read(CHARX.read_bytes(), CHARX.name))
    lamps = [m for m in body.media.assets or [] if m.name == "lamp"]
    assert [m.ref for m in lamps] == [
        "embeded://assets/icon/image/lamp.png",
        "embeded://assets/icon/image/lamp_1.png",
    ]


def test_escrow_keeps_members_module_and_safety_flags() -> None:
    data = CHARX.read_bytes()
    twin = read(data, CHARX.name).primary.original["risu"]
    members = _members(data)
    for name, b in members.items():
        if name != "card.json":
            assert twin.blobs["zip:" + name] == b
    assert twin.module["raw"]["module"]["name"] == "Oswin the Lamplighter Module"
    assert twin.module["style"] == "indent2"
    assert twin.has_executable_content is True  # triggers, a Lua trigger, background HTML
    assert twin.privileged is False


# -- round trip -----------------------------------------------------------------------------------


def test_same_format_round_trip_keeps_every_field_asset_and_module_byte() -> None:
    for path in (CHARX, HYBRID):
        data = path.read_bytes()
        d = read(data, path.name)
        out = write(d.primary, "risu", linked=d.entities)
        assert out.beside == []  # lorebook and regex went back into module.risum
        _same_archive(data, out.data)
        assert _members(out.data)["module.risum"] == _members(data)["module.risum"]
        again = read(out.data, path.name)
        assert again.primary.body == d.primary.body
        assert [e.body for e in again.entities] == [e.body for e in d.entities]


def test_hybrid_keeps_its_jpeg_and_risu_reads_it() -> None:
    data = HYBRID.read_bytes()
    d = read(data, HYBRID.name)
    out = write(d.primary, "risu", linked=d.entities).data
    jpeg = d.primary.original["risu"].blobs["prefix"]
    assert jpeg[:3] == b"\xff\xd8\xff" and out.startswith(jpeg)
    read_like_risu(out)


def test_output_is_deterministic() -> None:
    d = read(CHARX.read_bytes(), CHARX.name)
    a = write(d.primary, "risu", linked=d.entities).data
    b = write(d.primary, "risu", linked=d.entities).data
    assert a == b


def test_our_output_passes_risus_reader_rules() -> None:
    d = read(CHARX.read_bytes(), CHARX.name)
    got = read_like_risu(write(d.primary, "risu", linked=d.entities).data)
    assert got["card"]["data"]["name"] == "Oswin the Lamplighter"
    assert len(got["module"]["lorebook"]) == 8
    assert set(got["assets"]) == {a["uri"][len("embeded://") :] for a in got["card"]["data"]["assets"]}


def test_an_edited_lore_entry_rewrites_module_and_character_book_only_there() -> None:
    data = CHARX.read_bytes()
    d = read(data, CHARX.name)
    _, book, _ = d.entities
    assert isinstance(book.body, LorebookBody)
    book.body.entries[0].content = "The lamp burns blue tonight."
    out = write(d.primary, "risu", linked=d.entities).data
    got = read_like_risu(out)  # the gate is open: the module was re-encoded, and Risu reads it
    rows = got["module"]["lorebook"]
    before = risum.open_module(_members(data)["module.risum"]).module["lorebook"]
    assert rows[1]["content"] == "The lamp burns blue tonight."
    assert rows[:1] == before[:1] and rows[2:] == before[2:]
    cb = got["card"]["data"]["character_book"]["entries"]
    old_cb = orjson.loads(_members(data)["card.json"])["data"]["character_book"]["entries"]
    assert cb[1]["content"] == "The lamp burns blue tonight."
    assert cb[:1] == old_cb[:1] and cb[2:] == old_cb[2:]
    again = read(out, CHARX.name).entities[1]
    assert again.body == book.body  # the edit reads back as made
    # the module keeps its layout and everything else
    opened = risum.open_module(_members(out)["module.risum"])
    assert (
        opened.style == "indent2"
        and opened.module["trigger"] == risum.open_module(_members(data)["module.risum"]).module["trigger"]
    )
    for n, b in _members(data).items():
        if n not in ("module.risum", "card.json"):
            assert _members(out)[n] == b


def test_an_edited_trigger_goes_into_the_module() -> None:
    d = read(CHARX.read_bytes(), CHARX.name)
    body = _character(d)
    assert body.behavior.triggerScripts
    body.behavior.triggerScripts[0] = {**body.behavior.triggerScripts[0], "comment": "Ring twice"}
    got = read_like_risu(write(d.primary, "risu", linked=d.entities).data)
    assert got["module"]["trigger"][0]["comment"] == "Ring twice"
    assert "triggerscript" not in got["card"]["data"]["extensions"]["risuai"]


def test_the_gate_blocks_an_edited_module_while_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    from bunzai_codecs import EditedExportBlocked

    d = read(CHARX.read_bytes(), CHARX.name)
    _, _, rx = d.entities
    assert isinstance(rx.body, RegexSetBody)
    rx.body.rules[0].replace = "BELL"
    monkeypatch.setattr(risum, "MODULE_REENCODE_VERIFIED", False)
    with pytest.raises(EditedExportBlocked):
        write(d.primary, "risu", linked=d.entities)
    # an unedited card still exports: its module bytes are not re-encoded
    d2 = read(CHARX.read_bytes(), CHARX.name)
    write(d2.primary, "risu", linked=d2.entities)


def test_a_card_field_edit_leaves_module_and_assets_alone() -> None:
    data = CHARX.read_bytes()
    d = read(data, CHARX.name)
    _character(d).persona.scenario = "Dawn, the fog lifting."
    out = write(d.primary, "risu", linked=d.entities).data
    m_in, m_out = _members(data), _members(out)
    assert orjson.loads(m_out["card.json"])["data"]["scenario"] == "Dawn, the fog lifting."
    for n in m_in:
        if n != "card.json":
            assert m_in[n] == m_out[n]


# -- a .charx built from the real card.json + module.risum ----------------------------------------


def _corpus_charx(corpus: Path) -> tuple[bytes, dict[str, Any]]:
    """The corpus card.json and module.risum with generated assets, laid out as Risu's writer does
    (x_meta + file per asset, then module.risum, card.json last; fflate-style entries)."""
    card_bytes = (corpus / "risu/card/veil-of-night/card.json").read_bytes()
    card = orjson.loads(card_bytes)
    entries: list[tuple[str, bytes]] = []
    for i, a in enumerate(card["data"]["assets"]):
        path = a["uri"][len("embeded://") :]
        # Risu's image compression writes WebP under .png names; give one real PNG too
        data = (
            b"\x89PNG\r\n\x1a\n" + i.to_bytes(4, "big")
            if a["name"] == "main"
            else WEBP + i.to_bytes(4, "big")
        )
        entries.append((f"x_meta/{path.rsplit('/', 1)[1].rsplit('.', 1)[0]}.json", b'{"type":"WEBP"}'))
        entries.append((path, data))
    entries.append(("module.risum", (corpus / "risu/card/veil-of-night/module.risum").read_bytes()))
    entries.append(("card.json", card_bytes))
    return fflate_zip(entries), card


def test_corpus_built_charx_meets_risus_reader_rules_and_round_trips(corpus: Path) -> None:
    data, card = _corpus_charx(corpus)
    read_like_risu(data)  # the fixture itself is a valid Risu charx
    d = read(data, "veil.charx")
    assert d.primary.source is not None and d.primary.source.format == "risu"
    body = _character(d)
    assert body.attribution.createdAt == 1745411957.356 and body.attribution.updatedAt == 1772896582
    assert body.behavior.prebuiltAsset.command == ""
    assert len(body.behavior.triggerScripts or []) == 11
    assert len(body.media.assets or []) == 27 and body.media.portrait is not None
    assert body.media.portrait.name == "main"
    assert {m.mime for m in body.media.assets or []} == {"image/webp"}
    iconx = [m.ref for m in body.media.assets or [] if m.name == "iconx"]
    assert iconx == ["embeded://assets/icon/image/iconx.png", "embeded://assets/icon/image/iconx_1.png"]
    _, book, rx = d.entities
    assert isinstance(book.body, LorebookBody) and isinstance(rx.body, RegexSetBody)
    assert len(book.body.categories) + len(book.body.entries) == 83
    assert all(c.id.startswith("\uf000folder:") for c in book.body.categories)
    assert (book.body.globalScanDepth, book.body.tokenBudget) == (5, 50000)
    assert len(rx.body.rules) == 3
    out = write(d.primary, "risu", linked=d.entities).data
    got = read_like_risu(out)
    _same_archive(data, out)
    assert _members(out)["module.risum"] == _members(data)["module.risum"]
    assert got["card"] == card
    assert read(out, "veil.charx").primary.body == d.primary.body


def test_corpus_built_jpeg_hybrid(corpus: Path) -> None:
    data, _ = _corpus_charx(corpus)
    sample = HYBRID.read_bytes()
    jpeg = sample[: sample.find(b"PK\x03\x04")]
    hybrid = jpeg + data
    assert registry.detect(Sniff(hybrid, "veil.jpeg")).id == "risu"  # type: ignore[union-attr]
    d = read(hybrid, "veil.jpeg")
    out = write(d.primary, "risu", linked=d.entities).data
    assert out.startswith(jpeg)
    read_like_risu(out)
    _same_archive(hybrid, out)


# -- a fresh .charx from a canonical card ----------------------------------------------------------


def test_fresh_charx_writes_assets_the_risu_way() -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
    uri = "data:image/png;base64," + base64.b64encode(png).decode()
    webp_uri = "data:image/png;base64," + base64.b64encode(WEBP).decode()
    body = CharacterBody.model_validate(
        {
            "identity": {"name": "Ren"},
            "media": {
                "portrait": {
                    "role": "portrait",
                    "ref": uri,
                    "name": "main",
                    "primary": True,
                    "mime": "image/png",
                },
                "assets": [
                    {"role": "emotion", "ref": webp_uri, "name": "calm", "mime": "image/png"},
                    {"role": "emotion", "ref": webp_uri, "name": "calm", "mime": "image/png"},
                ],
            },
            "behavior": {
                "triggerScripts": [{"comment": "t", "type": "start", "conditions": [], "effect": []}]
            },
        }
    )
    e = CanonicalEntity(kind="character", id="character-x", body=body)
    data = registry.get("risu").encode(e, EmitContext())
    got = read_like_risu(data)
    uris = [a["uri"] for a in got["card"]["data"]["assets"]]
    assert uris == [
        "embeded://assets/icon/image/main.png",
        "embeded://assets/emotion/image/calm.png",
        "embeded://assets/emotion/image/calm_1.png",
    ]
    assert got["assets"]["assets/emotion/image/calm_1.png"] == WEBP
    assert got["module"]["trigger"] == [{"comment": "t", "type": "start", "conditions": [], "effect": []}]
    names = [n for n, _ in stream_entries(data)]
    assert names[-1] == "card.json" and "module.risum" in names
    assert _members(data)["x_meta/calm.json"] == b'{"type":"WEBP"}'
    assert read(data, "ren.charx").primary.body.identity.name == "Ren"  # type: ignore[attr-defined]


def test_asset_paths_follow_risus_rules() -> None:
    taken: set[str] = set()
    assert charx.asset_path("icon", "main", "png", taken, 0) == "assets/icon/image/main.png"
    assert charx.asset_path("x-risu-asset", "bgm", "mp3", taken, 1) == "assets/other/audio/bgm.mp3"
    assert charx.asset_path("emotion", "", "unknown", taken, 2) == "assets/emotion/image/asset_2.png"
    assert charx.asset_path("icon", "main", "png", taken, 3) == "assets/icon/image/main_1.png"
    assert (
        charx.asset_path("background", 'a<b>:c"d', "webp", taken, 4)
        == "assets/background/image/a_b__c_d.webp"
    )
    assert charx.asset_path("user_icon", "con", "png", taken, 5) == "assets/user_icon/image/_con.png"


@pytest.mark.parametrize(
    ("name", "ext"),
    [("../../../tmp/x", "png"), ("..", "png"), ("ok", "png/../../x"), ("/etc/passwd", "webp")],
)
def test_an_asset_name_from_the_card_stays_one_path_segment(name: str, ext: str) -> None:
    """Regression (security tests): a CCv3 card whose data: asset is named ``../../x`` exported to
    .charx raised Malformed from the zip writer (the name kept its slashes). Names and extensions
    from the card are one segment now, so the export succeeds and every member stays under assets/."""
    path = charx.asset_path("emotion", name, ext, set(), 0)
    assert path.startswith("assets/emotion/") and path.count("/") == 3 and "/../" not in path
    png_uri = "data:image/png;base64," + base64.b64encode(charx_png()).decode()
    card = {
        "spec": "chara_card_v3",
        "spec_version": "3.0",
        "data": {
            "name": "x",
            "assets": [{"type": "emotion", "uri": png_uri, "name": name, "ext": ext}],
        },
    }
    d = read(orjson.dumps(card), "c.json")
    data = write(d.primary, "risu", linked=d.entities).data
    names = set(_members(data))
    uri = orjson.loads(_members(data)["card.json"])["data"]["assets"][-1]["uri"]
    assert uri.removeprefix("embeded://") in names
    assert all(n.startswith(("assets/", "x_meta/")) or n in ("card.json", "module.risum") for n in names)


def charx_png() -> bytes:
    import struct
    import zlib

    ihdr = png_chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
    return (
        b"\x89PNG\r\n\x1a\n" + ihdr + png_chunk(b"IDAT", zlib.compress(b"\0\0\0\0")) + png_chunk(b"IEND", b"")
    )


def test_sniff_mime() -> None:
    assert charx.sniff_mime(WEBP) == "image/webp"
    assert charx.sniff_mime(b"\x89PNG\r\n\x1a\nxx") == "image/png"
    assert charx.sniff_mime(b"\xff\xd8\xff\xe0") == "image/jpeg"
    assert charx.sniff_mime(b"\x00\x00\x00\x1cftypavif") == "image/avif"
    assert charx.sniff_mime(b"OggS\x00") == "audio/ogg"
    assert charx.sniff_mime(b"????") is None


# -- bad input ------------------------------------------------------------------------------------


def test_card_json_missing_is_malformed() -> None:
    data = fflate_zip([("x_meta/main.json", b"{}"), ("assets/icon/image/main.png", b"\x89PNG\r\n\x1a\n")])
    with pytest.raises(Malformed, match=r"card\.json") as e:
        read(data, "x.charx", format="risu")
    assert e.value.path == "card.json"


def test_zip_bomb_is_limit_exceeded() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("card.json", b"{}")
        z.writestr("assets/other/other/bomb.bin", b"\0" * (8 * 1024 * 1024))
    with pytest.raises(LimitExceeded):
        read(buf.getvalue(), "bomb.charx", format="risu")


def test_broken_module_inside_a_charx_is_malformed() -> None:
    card = orjson.dumps({"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "x"}})
    data = fflate_zip([("module.risum", b"\x6f\x00\xff\xff\x00\x00{"), ("card.json", card)])
    with pytest.raises(Malformed, match=r"module\.risum"):
        read(data, "x.charx")


def test_card_without_data_is_malformed() -> None:
    data = fflate_zip([("card.json", b'{"spec":"chara_card_v3"}')])
    with pytest.raises(Malformed):
        read(data, "x.charx")


def test_tavern_kit_charx_files_round_trip(corpus: Path) -> None:
    for path in sorted((corpus / "sillytavern/tavern_kit").glob("*.charx")):
        data = path.read_bytes()
        assert registry.detect(Sniff(data, path.name)).id == "risu"  # type: ignore[union-attr]
        d = read(data, path.name)
        out = write(d.primary, "risu", linked=d.entities).data
        _same_archive(data, out)
        assert read(out, path.name).primary.body == d.primary.body


def _with_card(card: dict[str, Any], module: bytes | None = None) -> bytes:
    entries = [
        (n, b) for n, b in _members(CHARX.read_bytes()).items() if n not in ("card.json", "module.risum")
    ]
    if module is not None:
        entries.append(("module.risum", module))
    return fflate_zip([*entries, ("card.json", orjson.dumps(card))])


@pytest.mark.parametrize("bad", [None, 5, "x", [], {}, True, [1], [{}]])
def test_type_confused_cards_give_typed_errors_only(bad: object) -> None:
    from bunzai_codecs.core.errors import BunzaiError

    card = orjson.loads(_members(CHARX.read_bytes())["card.json"])
    module = _members(CHARX.read_bytes())["module.risum"]
    tree = risum.open_module(module).tree
    targets: list[tuple[str, ...]] = [("data", k) for k in card["data"]]
    targets += [("data", "extensions", "risuai", k) for k in card["data"]["extensions"]["risuai"]]
    cases = []
    for path in targets:
        c = orjson.loads(orjson.dumps(card))
        node = c
        for p in path[:-1]:
            node = node[p]
        node[path[-1]] = bad
        cases.append(_with_card(c, module))
    for key in ("trigger", "regex", "lorebook"):
        t = orjson.loads(orjson.dumps(tree))
        t["module"][key] = bad
        cases.append(_with_card(card, risum.write_blocks(orjson.dumps(t))))
    for data in cases:
        try:
            d = read(data, "x.charx")
            write(d.primary, "risu", linked=d.entities)
        except BunzaiError as exc:
            assert not getattr(exc, "internal", False), str(exc)


def test_a_removed_asset_leaves_the_archive() -> None:
    d = read(CHARX.read_bytes(), CHARX.name)
    body = _character(d)
    assert body.media.assets
    body.media.assets = [m for m in body.media.assets if m.name != "harbor_map"]
    out = write(d.primary, "risu", linked=d.entities).data
    got = read_like_risu(out)
    assert "assets/other/image/harbor_map.png" not in got["assets"]
    assert "assets/emotion/image/smile.png" in got["assets"]


def test_an_embedded_uri_without_bytes_is_not_written() -> None:
    body = CharacterBody.model_validate(
        {
            "identity": {"name": "Cap"},
            "media": {
                "assets": [
                    {"role": "background", "ref": "embeded://assets/background/image/b.webp", "name": "b"}
                ]
            },
        }
    )
    data = registry.get("risu").encode(CanonicalEntity(kind="character", id="c", body=body), EmitContext())
    got = read_like_risu(data)  # would fail on a dangling embeded:// uri
    assert got["card"]["data"]["assets"] == []


def _risu_png_card(risuai: dict[str, Any]) -> bytes:
    """A Risu v3 card as JSON (what a Risu PNG card carries): bunzai reads it as a SillyTavern card,
    which keeps ``extensions.risuai`` as an opaque bag."""
    card = {
        "spec": "chara_card_v3",
        "spec_version": "3.0",
        "data": {
            "name": "Veil",
            "description": "a masked courier",
            "first_mes": "Hello.",
            "extensions": {"risuai": risuai, "depth_prompt": {"prompt": "stay masked", "depth": 4}},
        },
    }
    return orjson.dumps(card)


def test_a_risu_bag_another_codec_kept_opaque_is_not_replaced_by_defaults() -> None:
    """Regression: a Risu card read as a SillyTavern card keeps ``extensions.risuai`` verbatim; the
    charx writer built ``risuai`` from the body's (empty) Risu fields and the bag's background HTML,
    default variables, sdData and view settings were replaced by defaults."""
    bag = {
        "viewScreen": "emotion",
        "utilityBot": False,
        "sdData": [["always", "solo, 1girl"]],
        "backgroundHTML": "<style>.x{}</style>",
        "defaultVariables": "lang=0",
        "lowLevelAccess": False,
        "private": True,  # no canonical field: kept in the card as it was
        "customScripts": [{"comment": "ding", "in": "x", "out": "y", "type": "editoutput"}],
    }
    src = read(_risu_png_card(bag), "veil.json")
    assert src.primary.source is not None and src.primary.source.format == "sillytavern"
    assert _character(src).extensions == {"risuai": bag}
    out = write(src.primary, "risu", linked=src.entities)
    card = orjson.loads(_members(out.data)["card.json"])
    r = card["data"]["extensions"]["risuai"]
    assert (r["viewScreen"], r["backgroundHTML"], r["defaultVariables"]) == (
        "emotion",
        "<style>.x{}</style>",
        "lang=0",
    )
    assert r["sdData"] == [["always", "solo, 1girl"]] and r["private"] is True
    assert "customScripts" not in r  # a charx keeps its scripts in module.risum
    back = read(out.data, "veil.charx")
    body = _character(back)
    assert body.settings.risu.viewScreen == "emotion"
    assert (
        body.behavior.backgroundHTML == "<style>.x{}</style>" and body.behavior.defaultVariables == "lang=0"
    )
    assert [(row.label, row.value) for row in body.persona.imagePrompt.rows or []] == [
        ("always", "solo, 1girl")
    ]
    rx = next(e for e in back.entities if e.kind == "regex")
    assert isinstance(rx.body, RegexSetBody) and [r.label for r in rx.body.rules] == ["ding"]
    # the body's own values win over the bag's
    _character(src).behavior.defaultVariables = "lang=1"
    again = _character(read(write(src.primary, "risu", linked=src.entities).data, "veil.charx"))
    assert (
        again.behavior.defaultVariables == "lang=1" and again.behavior.backgroundHTML == "<style>.x{}</style>"
    )


def test_a_risu_bag_with_wrong_types_is_left_to_the_writer() -> None:
    src = read(_risu_png_card({"viewScreen": [3]}), "veil.json")  # not a string: not lifted, not fatal
    card = orjson.loads(_members(write(src.primary, "risu", linked=src.entities).data)["card.json"])
    assert card["data"]["extensions"]["risuai"]["viewScreen"] == "none"


def test_a_png_cards_picture_becomes_the_charx_main_icon() -> None:
    """A SillyTavern PNG card's picture is the file itself (portrait ``ccdefault:``); a charx has no
    such image, so a fresh export used to carry no picture at all. It is now the ``main`` icon file,
    the card's PNG without its ``chara``/``ccv3`` payload chunks."""
    from bunzai_codecs.core import png

    src_bytes = (SAMPLES.parent / "sillytavern" / "tidepool.png").read_bytes()
    src = read(src_bytes, "tidepool.png")
    assert _character(src).media.portrait is not None and _character(src).media.portrait.ref == "ccdefault:"  # type: ignore[union-attr]
    out = write(src.primary, "risu", linked=src.entities).data
    got = read_like_risu(out)
    assert got["card"]["data"]["assets"] == [
        {"type": "icon", "uri": "embeded://assets/icon/image/main.png", "name": "main", "ext": "png"}
    ]
    image = got["assets"]["assets/icon/image/main.png"]
    assert image == png.replace_text(src_bytes, remove=["chara", "ccv3"])
    assert not {t.keyword for t in png.text_chunks(png.parse(image).chunks)} & {"chara", "ccv3"}
    portrait = _character(read(out, "tidepool.charx")).media.portrait
    assert portrait is not None and (portrait.ref, portrait.primary) == (
        "embeded://assets/icon/image/main.png",
        True,
    )


def test_a_charx_whose_card_lists_no_assets_reads_its_files_by_folder() -> None:
    """Issue 37: a .charx whose card.json has no ``assets`` list still holds its pictures; the
    folder under ``assets/`` names each one's role (``background``/``backgrounds``, ``emotion``/
    ``emotions``/``expression(s)``, any case), anything else is ``other``, and a file that is no
    image is not a media asset. Read as ``other``, a background or an emotion would lose its place
    in every format that has one."""
    card = {
        "spec": "chara_card_v3",
        "spec_version": "3.0",
        "data": {"name": "Unlisted", "description": "d", "first_mes": "hi", "extensions": {}},
    }
    members = [
        ("card.json", orjson.dumps(card)),
        ("assets/background/image/sky.png", _png_of((10, 20, 30))),
        ("assets/Backgrounds/dusk.webp", WEBP),
        ("assets/emotion/image/happy.png", _png_of((40, 50, 60))),
        ("assets/emotions/sad.png", _png_of((70, 80, 90))),
        ("assets/Expressions/calm.png", _png_of((100, 110, 120))),
        ("assets/other/image/prop.png", _png_of((130, 140, 150))),
        ("assets/loose.png", _png_of((1, 2, 3))),
        ("assets/notes/readme.txt", b"not a picture"),
    ]
    d = read(fflate_zip(members), "unlisted.charx")
    assets = _character(d).media.assets or []
    assert {a.ref: (a.role, a.name) for a in assets} == {
        "embeded://assets/background/image/sky.png": ("background", "sky"),
        "embeded://assets/Backgrounds/dusk.webp": ("background", "dusk"),
        "embeded://assets/emotion/image/happy.png": ("emotion", "happy"),
        "embeded://assets/emotions/sad.png": ("emotion", "sad"),
        "embeded://assets/Expressions/calm.png": ("emotion", "calm"),
        "embeded://assets/other/image/prop.png": ("other", "prop"),
        "embeded://assets/loose.png": ("other", "loose"),
    }
    # each asset's bytes are its member's
    for a in assets:
        assert d.primary.media[a.sha256 or ""] == dict(members)[a.ref.removeprefix("embeded://")], a.ref


def _png_of(rgb: tuple[int, int, int]) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (2, 2), rgb).save(out, format="PNG")
    return out.getvalue()
