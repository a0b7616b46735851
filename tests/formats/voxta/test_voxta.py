"""voxta: Voxta packages (``.voxpkg``): every character of a package, its memory books as linked
lorebooks, scenarios and package files in escrow, images through the media store (issue 23, part 3)."""

from __future__ import annotations

import copy
import io
import json
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest

from bunzai_codecs import Malformed, Unsupported, read, write
from bunzai_codecs.cli import main
from bunzai_codecs.core import archive, registry
from bunzai_codecs.core.entity import KNOWLEDGE_REFS, CanonicalEntity
from bunzai_codecs.core.media import bind
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import CharacterBody, LorebookBody
from bunzai_codecs.fidelity import check_file
from bunzai_codecs.formats.voxta.mapping import derived_uuid, from_voxta, read_date, write_date
from bunzai_codecs.formats.voxta.package import PackageTwin
from tests.formats.helpers import edited, sample, tiny_png
from tests.formats.voxta import make_voxta_samples as gen

CODEC = registry.get("voxta")
PACKAGE = "voxta/lantern-harbor.voxpkg"
SINGLE = "voxta/wren.voxpkg"
MIRA_DIR = f"Characters/{gen.MIRA}/"
TOBIN_DIR = f"Characters/{gen.TOBIN}/"
HARBOR = f"Books/{gen.HARBOR_BOOK}/book.json"
LOG = f"Books/{gen.LOG_BOOK}/book.json"
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {n: z.read(n) for n in z.namelist()}


def names(data: bytes) -> list[str]:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return z.namelist()


def rezip(files: list[tuple[str, bytes]] | dict[str, bytes]) -> bytes:
    items = files.items() if isinstance(files, dict) else files
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in items:
            z.writestr(n, d)
    return buf.getvalue()


def package_with(change: Any = None, **trees: Any) -> bytes:
    """The sample package, its JSON members changed: ``change(files)`` on the member dict, or a
    member's tree replaced (keyword = a key of ``TREES``)."""
    files = dict(gen.lantern_harbor())
    for key, tree in trees.items():
        files[TREES[key]] = json.dumps(tree).encode()
    if change is not None:
        change(files)
    return rezip(files)


TREES = {
    "package": "package.json",
    "mira": MIRA_DIR + "character.json",
    "tobin": TOBIN_DIR + "character.json",
    "harbor": HARBOR,
}


def by_name(entities: list[CanonicalEntity]) -> dict[str, CanonicalEntity]:
    out = {}
    for e in entities:
        b = e.body
        out[b.identity.name if isinstance(b, CharacterBody) else b.name] = e  # type: ignore[union-attr]
    return out


# -- detection --------------------------------------------------------------------------------------


def test_detection_by_the_character_folder_never_the_other_zip_formats() -> None:
    data = sample(PACKAGE)
    assert CODEC.detect(Sniff(data, "p.voxpkg")) == 1.0
    assert CODEC.detect(Sniff(data, "p.zip")) == 1.0  # by content, not by name
    assert CODEC.detect(Sniff(sample(SINGLE), "w.voxpkg")) == 1.0  # no package.json
    for other in (
        "risu/oswin_the_lamplighter.charx",
        "backyard/maelis.byaf",
        "lumiverse/quill.lumiverse.zip",
    ):
        assert CODEC.detect(Sniff(sample(other), other)) == 0.0, other
    # BYAF's folders are lower case; a zip with another format's root file is that format's
    assert CODEC.detect(Sniff(rezip({"characters/x/character.json": b"{}"}), "x.zip")) == 0.0
    assert CODEC.detect(Sniff(rezip({"card.json": b"{}", "Characters/x/character.json": b"{}"}), "x")) == 0.0
    assert (
        CODEC.detect(Sniff(rezip({"manifest.json": b"{}", "Characters/x/character.json": b"{}"}), "x")) == 0.0
    )
    books_only = rezip({"Books/b/book.json": b"{}"})
    assert CODEC.detect(Sniff(books_only, "b.voxpkg")) == 0.6
    assert CODEC.detect(Sniff(books_only, "b.zip")) == 0.0
    assert CODEC.detect(Sniff(b"PK\x03\x04 not a zip", "b.voxpkg")) == 0.5
    assert CODEC.detect(Sniff(b'{"Name": "x"}', "x.voxpkg")) == 0.0


# -- decode -----------------------------------------------------------------------------------------


def test_a_package_yields_every_character_with_its_books_linked() -> None:
    d = read(sample(PACKAGE), "lantern-harbor.voxpkg")
    assert [(e.kind, by_name([e]).popitem()[0]) for e in d.entities] == [
        ("character", "Mira Holt"),  # the first character (the entry resource is the scenario)
        ("lorebook", "Saltmarsh Harbor"),  # Mira's book
        ("lorebook", "Harbor Logbook"),  # no character names it: linked from the first
        ("character", "Tobin Reyes"),
    ]
    mira, harbor, log, tobin = d.entities
    assert mira.links == {KNOWLEDGE_REFS: [harbor.id, log.id]}
    assert tobin.links == {KNOWLEDGE_REFS: [harbor.id]}  # the shared book, listed once
    assert all(e.warnings == [] for e in d.entities)


def test_character_fields_map_and_placeholders_read_compact() -> None:
    mira = read(sample(PACKAGE), "p.voxpkg").primary
    b = mira.body
    assert isinstance(b, CharacterBody)
    assert (b.identity.name, b.identity.nickname, b.identity.characterVersion, b.identity.culture) == (
        "Mira Holt",
        "Mira",
        "1.2.0",
        "en-US",
    )
    assert b.identity.description is not None and b.identity.description.startswith(
        "{{char}} is the harbourmaster"
    )
    assert b.persona.appearance == gen.MIRA_JSON["Description"]
    assert b.persona.personality == "dry + patient + stubborn about tides"
    assert b.persona.scenario == "{{user}} arrives on the evening ferry while a fog bank rolls in."
    assert (
        b.greetings.firstMessage == "*Mira lowers the spyglass.* You picked a fine night to land, {{user}}."
    )
    assert [g.text for g in b.greetings.alternateGreetings or []] == [
        "Tide's turning. Grab a rope or get out of the way, {{user}}."
    ]
    assert (
        b.examples.exampleMessages is not None
        and "{{user}}: Is the lighthouse manned?" in b.examples.exampleMessages
    )
    assert b.prompts.systemPrompt is None  # "" is absent
    assert b.prompts.postHistoryInstructions == "Keep {{char}}'s replies short, like harbour radio."
    assert (b.attribution.creator, b.attribution.creatorNotes) == (
        "Sample Author",
        gen.MIRA_JSON["CreatorNotes"],
    )
    assert b.attribution.createdAt == 1728138031.412
    assert b.attribution.updatedAt == 1730543287.903  # 7-digit fraction read to the millisecond
    assert b.discovery.tags == ["harbour", "slice of life", "fog"]
    tobin = read(sample(PACKAGE), "p.voxpkg").entities[3].body
    assert tobin.attribution.createdAt is None  # type: ignore[attr-defined]  # 0001-01-01: unknown


def test_images_are_the_media_store_and_books_are_entries() -> None:
    d = read(sample(PACKAGE), "p.voxpkg")
    files = dict(gen.lantern_harbor())
    for e, folder, avatar in (
        (d.entities[0], MIRA_DIR, "Assets/Avatars/Default/Smile_Idle_01.png"),
        (d.entities[3], TOBIN_DIR, "Assets/Avatars/Default/Neutral_Talking_01.png"),
    ):
        m = e.body.media  # type: ignore[attr-defined]
        assert (m.portrait.role, m.portrait.ref, m.portrait.mime) == (
            "portrait",
            "thumbnail.png",
            "image/png",
        )
        assert e.media[m.portrait.sha256] == files[folder + "thumbnail.png"]
        [a] = m.assets
        assert (a.role, a.ref, a.name) == ("emotion", avatar, avatar.rsplit("/", 1)[1][:-4])
        assert e.media[a.sha256] == files[folder + avatar]
    book = d.entities[1].body
    assert isinstance(book, LorebookBody)
    assert (book.name, book.description) == ("Saltmarsh Harbor", "Places and people of the harbour.")
    assert [(x.id, [t.text for t in x.triggers or []], x.priority, x.enabled) for x in book.entries] == [
        ("1f4c7a20-3b9e-4d61-8c05-7e2a9d4b6f13", ["ferry", "evening ferry"], 10, True),
        ("6a2e9d41-0c7b-4f38-9e16-3d8b5a2c7e90", ["Crooked Pier"], 5, True),
        ("b7d3f8a2-9c41-4e5d-a0b6-1f9e3c7d5a24", ["smugglers"], 0, False),  # Deleted
    ]
    assert book.entries[0].content.endswith("the one {{user}} took.")


def test_the_first_twin_holds_the_package_and_each_twin_its_own_json() -> None:
    d = read(sample(PACKAGE), "p.voxpkg")
    files = dict(gen.lantern_harbor())
    twin = d.primary.original["voxta"]
    assert isinstance(twin, PackageTwin) and twin.archive is not None and twin.blobs is not None
    assert [m[0] for m in twin.archive["members"]] == list(files)
    assert set(twin.blobs) == {
        MIRA_DIR + "character.json",
        "package.json",
        f"Scenarios/{gen.SCENARIO}/scenario.json",
        f"Scenarios/{gen.SCENARIO}/thumbnail.png",
    }
    assert twin.raw["TextToSpeech"][0]["Voice"]["label"] == "Kokoro: Bella"  # escrow only
    tobin = d.entities[3].original["voxta"]
    assert isinstance(tobin, PackageTwin) and tobin.blobs is not None
    assert set(tobin.blobs) == {TOBIN_DIR + "character.json"} and tobin.archive is None
    assert "archive" not in tobin.to_json()
    assert tobin.raw["Scripts"][0]["Name"] == "index"


def test_the_entry_resource_character_comes_first() -> None:
    pkg = {**gen.PACKAGE_JSON, "EntryResource": {"Kind": 1, "Id": gen.TOBIN}}
    d = read(package_with(package=pkg), "p.voxpkg")
    assert [by_name([e]).popitem()[0] for e in d.entities] == [
        "Tobin Reyes",
        "Saltmarsh Harbor",
        "Harbor Logbook",
        "Mira Holt",
    ]
    assert d.primary.links[KNOWLEDGE_REFS] == [d.entities[1].id, d.entities[2].id]
    assert (
        write(d.primary, "voxta", linked=d.entities).data == write(d.primary, "voxta", linked=d.entities).data
    )
    assert members(write(d.primary, "voxta", linked=d.entities).data) == members(package_with(package=pkg))


def test_a_single_character_export_without_package_json() -> None:
    d = read(sample(SINGLE), "wren.voxpkg")
    [wren] = d.entities
    b = wren.body
    assert isinstance(b, CharacterBody)
    assert (b.identity.name, b.identity.culture, b.greetings.firstMessage) == (
        "Wren",
        "en-GB",
        "Letter for {{user}}! Sign here. No, the other here.",
    )
    assert [a.name for a in b.media.assets or []] == ["Neutral_Idle_01", "Smile_Talking_01"]
    assert wren.links == {}


@pytest.mark.parametrize(("rel", "build"), [(PACKAGE, gen.lantern_harbor), (SINGLE, gen.wren)])
def test_the_samples_are_what_the_generator_writes(rel: str, build: Any, tmp_path: Path) -> None:
    out = tmp_path / "built.voxpkg"
    gen.write_zip(out, build())
    assert out.read_bytes() == sample(rel), f"samples/{rel} is stale: run make_voxta_samples.py"


# -- same-format round trips ---------------------------------------------------------------------------


@pytest.mark.parametrize("rel", [PACKAGE, SINGLE])
def test_an_unchanged_package_comes_back_member_for_member(rel: str) -> None:
    data = sample(rel)
    d = read(data, rel)
    out = write(d.primary, "voxta", linked=d.entities).data
    assert names(out) == names(data)
    assert members(out) == members(data)  # every member byte-identical, JSON included
    with zipfile.ZipFile(io.BytesIO(data)) as a, zipfile.ZipFile(io.BytesIO(out)) as b:
        assert [i.compress_type for i in a.infolist()] == [i.compress_type for i in b.infolist()]


def test_fidelity_rows_of_the_samples_are_clean() -> None:
    """Written before the stability check compared a package's further characters: Tobin's row was
    ``unexpected`` ("decoded but not linked from the primary")."""
    for rel in (PACKAGE, SINGLE):
        rows = check_file(sample(rel), rel.rsplit("/", 1)[1])
        bad = [(r.check, r.target, r.name, r.status) for r in rows if r.status in ("unexpected", "error")]
        assert bad == [], rel
        stability = [r for r in rows if r.check == "stability"]
        assert len(stability) == len(read(sample(rel), rel).entities)
        assert {r.status for r in stability} == {"lossless"}
        assert [r.status for r in rows if r.check == "native"] == ["lossless"]


def test_an_edit_changes_only_its_member_in_the_same_json_style() -> None:
    d = read(sample(PACKAGE), "p.voxpkg")
    d.entities[3] = tobin = edited(
        d.entities[3], lambda b: b["identity"].update(description="{{char}} retired to the coast.")
    )
    out = write(d.primary, "voxta", linked=d.entities).data
    before, after = members(sample(PACKAGE)), members(out)
    assert names(out) == names(sample(PACKAGE))
    assert {n for n in before if before[n] != after[n]} == {TOBIN_DIR + "character.json"}
    tree = json.loads(after[TOBIN_DIR + "character.json"])
    assert tree["Profile"] == "{{char}} retired to the coast."
    assert {k: v for k, v in tree.items() if k != "Profile"} == {
        k: v for k, v in gen.TOBIN_JSON.items() if k != "Profile"
    }  # every other key as it was, the unmapped ones included
    assert after[TOBIN_DIR + "character.json"].startswith(b'{\n  "$type"')  # indented, as it was
    assert by_name(read(out, "again.voxpkg").entities)["Tobin Reyes"].body == tobin.body


def test_a_book_edit_rewrites_its_item_and_keeps_the_others() -> None:
    d = read(sample(PACKAGE), "p.voxpkg")

    def change(b: dict[str, Any]) -> None:
        b["entries"][1]["content"] = "Rebuilt last spring."
        b["entries"].append(
            {"id": "new", "content": "The fish market opens at five.", "triggers": [{"text": "market"}]}
        )

    d.entities[1] = edited(d.entities[1], change)
    out = write(d.primary, "voxta", linked=d.entities).data
    before, after = members(sample(PACKAGE)), members(out)
    assert {n for n in before if before[n] != after[n]} == {HARBOR}
    items = json.loads(after[HARBOR])["Items"]
    assert items[:3] == [
        gen.HARBOR_JSON["Items"][0],
        {**gen.HARBOR_JSON["Items"][1], "Text": "Rebuilt last spring."},
        gen.HARBOR_JSON["Items"][2],
    ]  # type: ignore[index]
    assert items[3] == {
        "Id": derived_uuid(gen.HARBOR_BOOK, "item", "new"),
        "Keywords": ["market"],
        "Text": "The fish market opens at five.",
        "Weight": 100,
        "Deleted": False,
    }
    assert UUID.match(items[3]["Id"])


def test_links_decide_the_memory_books() -> None:
    d = read(sample(PACKAGE), "p.voxpkg")
    mira, harbor, _, tobin = d.entities
    # Tobin no longer uses the harbour book: dropped from his MemoryBooks; Mira still writes it
    tobin.links = {KNOWLEDGE_REFS: []}
    out = members(write(mira, "voxta", linked=d.entities).data)
    assert json.loads(out[TOBIN_DIR + "character.json"])["MemoryBooks"] == []
    assert out[HARBOR] == dict(gen.lantern_harbor())[HARBOR]
    # a book from elsewhere linked to Tobin: a new Books/<uuid>/book.json, named in his MemoryBooks
    other = CanonicalEntity(
        kind="lorebook",
        id="lorebook-0000000000000000000000aa",
        body=LorebookBody.model_validate(
            {"name": "Tides", "entries": [{"id": "0", "content": "Spring tide."}]}
        ),
    )
    tobin.links = {KNOWLEDGE_REFS: [harbor.id, other.id]}
    out = members(write(mira, "voxta", linked=[*d.entities, other]).data)
    bid = derived_uuid(other.id)
    assert json.loads(out[TOBIN_DIR + "character.json"])["MemoryBooks"] == [gen.HARBOR_BOOK, bid]
    book = json.loads(out[f"Books/{bid}/book.json"])
    assert (book["$type"], book["Id"], book["Name"], book["PackageId"]) == (
        "book",
        bid,
        "Tides",
        gen.PACKAGE_ID,
    )
    # the unnamed book stays out of Mira's MemoryBooks; unlinking it removes its file
    assert json.loads(out[MIRA_DIR + "character.json"])["MemoryBooks"] == [gen.HARBOR_BOOK]
    mira.links = {KNOWLEDGE_REFS: [harbor.id]}
    assert LOG not in members(write(mira, "voxta", linked=d.entities).data)


def test_a_character_or_book_not_passed_is_left_out() -> None:
    d = read(sample(PACKAGE), "p.voxpkg")
    mira, harbor, log, _ = d.entities
    out = members(write(mira, "voxta", linked=[mira, harbor, log]).data)
    assert not any(n.startswith(TOBIN_DIR) for n in out)
    assert f"Scenarios/{gen.SCENARIO}/scenario.json" in out and HARBOR in out
    # Mira's link to a book this call cannot resolve keeps its id (the copy is not known stale)
    out = members(write(mira, "voxta", linked=[mira]).data)
    assert HARBOR not in out and LOG not in out
    assert json.loads(out[MIRA_DIR + "character.json"])["MemoryBooks"] == [gen.HARBOR_BOOK]


def test_a_further_character_alone_is_a_package_of_its_own() -> None:
    d = read(sample(PACKAGE), "p.voxpkg")
    tobin = d.entities[3]
    out = members(write(tobin, "voxta", linked=d.entities).data)
    files = dict(gen.lantern_harbor())
    assert out == {
        n: files[n]
        for n in (
            TOBIN_DIR + "character.json",
            TOBIN_DIR + "thumbnail.png",
            TOBIN_DIR + "Assets/Avatars/Default/Neutral_Talking_01.png",
            HARBOR,
        )
    }


def test_convert_to_voxta_writes_the_package_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "again.voxpkg"
    assert main(["convert", str(Path("samples") / PACKAGE), "--to", "voxta", "-o", str(out)]) == 0, (
        capsys.readouterr().err
    )
    err = capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again.voxpkg"]
    assert members(out.read_bytes()) == members(sample(PACKAGE))
    assert "Mira Holt (character) -> voxta: nothing lost" in err


# -- from another format ----------------------------------------------------------------------------


def foreign() -> tuple[CanonicalEntity, CanonicalEntity]:
    portrait = "data:image/png;base64," + __import__("base64").b64encode(tiny_png()).decode()
    body = CharacterBody.model_validate(
        {
            "identity": {"name": "Vell", "description": "A courier for {{user}}."},
            "persona": {"appearance": "Grey coat."},
            "greetings": {"firstMessage": "Package!", "alternateGreetings": [{"text": "Late again."}]},
            "media": {
                "portrait": {"role": "portrait", "ref": portrait},
                "assets": [
                    {"role": "emotion", "ref": "embeded://assets/emotion/image/happy.png", "name": "happy"},
                    {"role": "other", "ref": "https://x.invalid/a.png"},
                ],
            },
            "attribution": {"creator": "Someone", "createdAt": 1700000000.5},
        }
    )
    e = CanonicalEntity(kind="character", id="character-0123456789abcdef01234567", body=body)
    emo = gen.image(2, 2, (1, 2, 3, 255))
    e.body = bind(e.body, e.media, lambda path, a: emo if a.name == "happy" else None)
    book = CanonicalEntity(
        kind="lorebook",
        id="lorebook-0123456789abcdef01234567",
        body=LorebookBody.model_validate(
            {"name": "", "entries": [{"id": "0", "content": "x", "enabled": False}]}
        ),
    )
    e.links = {KNOWLEDGE_REFS: [book.id]}
    return e, book


def test_a_fresh_package_is_what_voxta_imports() -> None:
    e, book = foreign()
    out = write(e, "voxta", linked=[e, book]).data
    assert out == write(e, "voxta", linked=[e, book]).data  # deterministic
    cid, bid, pid = derived_uuid(e.id), derived_uuid(book.id), derived_uuid(e.id, "package")
    assert all(UUID.match(x) for x in (cid, bid, pid))
    assert names(out) == [
        "package.json",
        f"Characters/{cid}/character.json",
        f"Characters/{cid}/thumbnail.png",
        f"Characters/{cid}/Assets/Avatars/Default/happy.png",
        f"Books/{bid}/book.json",
    ]  # the URL asset cannot be packed
    files = members(out)
    pkg = json.loads(files["package.json"])
    assert (pkg["$type"], pkg["Id"], pkg["Name"], pkg["EntryResource"]) == (
        "package",
        pid,
        "Vell",
        {"Kind": 1, "Id": cid},
    )
    ch = json.loads(files[f"Characters/{cid}/character.json"])
    assert (ch["$type"], ch["Id"], ch["PackageId"], ch["MemoryBooks"]) == ("character", cid, pid, [bid])
    assert (ch["Profile"], ch["Description"], ch["AlternativeFirstMessages"]) == (
        "A courier for {{user}}.",
        "Grey coat.",
        ["Late again."],
    )
    assert ch["Thumbnail"]["ContentType"] == "image/png"
    assert (
        ch["DateCreated"] == "2023-11-14T22:13:20.500+00:00"
        and ch["DateModified"] == "0001-01-01T00:00:00+00:00"
    )
    bk = json.loads(files[f"Books/{bid}/book.json"])
    assert (bk["$type"], bk["Id"], bk["Name"]) == ("book", bid, "Vell memory book")
    assert bk["Items"][0]["Deleted"] is True and UUID.match(bk["Items"][0]["Id"])
    assert files[f"Characters/{cid}/thumbnail.png"] == tiny_png()
    # read back: detected, the body kept on every path the format holds
    assert registry.detect(Sniff(out, "v.voxpkg")).id == "voxta"  # type: ignore[union-attr]
    back = read(out, "v.voxpkg")
    b = back.primary.body
    assert (b.identity, b.greetings, b.persona.appearance) == (
        e.body.identity,
        e.body.greetings,
        "Grey coat.",
    )  # type: ignore[attr-defined]
    assert back.primary.media == e.media
    assert back.entities[1].body.entries[0].enabled is False  # type: ignore[attr-defined]


def test_two_books_claiming_one_folder_are_both_written() -> None:
    d = read(sample(PACKAGE), "p.voxpkg")
    mira, harbor, _, tobin = d.entities
    copy_ = copy.deepcopy(harbor)
    copy_.id = "lorebook-00000000000000000000beef"
    copy_ = edited(copy_, lambda b: b.update(name="Saltmarsh Harbor (copy)"))
    tobin.links = {KNOWLEDGE_REFS: [copy_.id]}
    out = members(write(mira, "voxta", linked=[*d.entities, copy_]).data)
    assert out[HARBOR] == dict(gen.lantern_harbor())[HARBOR]
    new = f"Books/{derived_uuid(copy_.id)}/book.json"
    assert json.loads(out[new])["Name"] == "Saltmarsh Harbor (copy)"
    assert json.loads(out[TOBIN_DIR + "character.json"])["MemoryBooks"] == [derived_uuid(copy_.id)]


# -- to .charx and back (the "done when") ----------------------------------------------------


def _kept(a: CanonicalEntity, b: CanonicalEntity) -> None:
    ba, bb = a.body, b.body
    assert isinstance(ba, CharacterBody) and isinstance(bb, CharacterBody)
    for section, fields in (
        ("identity", ("name", "nickname", "description", "characterVersion")),
        ("persona", ("personality", "scenario")),
        ("greetings", ("firstMessage", "alternateGreetings")),
        ("examples", ("exampleMessages",)),
        ("prompts", ("systemPrompt", "postHistoryInstructions")),
        ("attribution", ("creator", "creatorNotes", "createdAt", "updatedAt")),
        ("discovery", ("tags",)),
    ):
        for f in fields:
            assert getattr(getattr(bb, section), f) == getattr(getattr(ba, section), f), f"{section}.{f}"
    pics = lambda e: sorted(e.media.values())  # noqa: E731
    assert pics(b) == pics(a)  # the thumbnail and the avatar, byte for byte
    assert len(pics(a)) == 2


def _books(e: CanonicalEntity, pool: list[CanonicalEntity]) -> list[list[tuple[str, list[str]]]]:
    ids = e.knowledge_refs
    return [
        [(x.content, [t.text for t in x.triggers or []]) for x in b.body.entries]  # type: ignore[attr-defined]
        for b in pool
        if b.id in ids and b.kind == "lorebook"
    ]


def test_two_characters_and_a_book_to_charx_and_back_with_the_library() -> None:
    d = read(sample(PACKAGE), "lantern-harbor.voxpkg")
    for original in (d.entities[0], d.entities[3]):
        charx = write(original, "risu", linked=d.entities)
        assert charx.extension == ".charx"
        back_charx = read(charx.data, "x.charx")
        voxpkg = write(back_charx.primary, "voxta", linked=back_charx.entities)
        again = read(voxpkg.data, "x.voxpkg")
        _kept(original, again.primary)
        # its own book (the harbour book) comes back linked, entries and keywords intact
        assert _books(again.primary, again.entities)[0] == _books(original, d.entities)[0]


def test_two_characters_and_a_book_to_charx_and_back_with_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = Path("samples") / PACKAGE
    rc = main(["convert", str(src), "--to", "risu", "-o", str(tmp_path / "charx") + "/"])
    err = capsys.readouterr().err
    assert rc == 0, err
    written = sorted(p.name for p in (tmp_path / "charx").iterdir())
    # each character is a .charx with its book; the second book Mira links is written beside
    assert written == ["Mira Holt.charx", "Mira Holt.lorebook.json", "Tobin Reyes.charx"]
    assert "0 unexpected" in err and err.count("0 unexpected") == 2
    d = read(src.read_bytes(), src.name)
    originals = by_name([e for e in d.entities if e.kind == "character"])
    for name in ("Mira Holt", "Tobin Reyes"):
        rc = main(
            [
                "convert",
                str(tmp_path / "charx" / f"{name}.charx"),
                "--to",
                "voxta",
                "--strict",
                "-o",
                str(tmp_path / "back") + "/",
            ]
        )
        err = capsys.readouterr().err
        assert rc == 0, err
        data = (tmp_path / "back" / f"{name}.voxpkg").read_bytes()
        again = read(data, f"{name}.voxpkg")
        _kept(originals[name], again.primary)
        assert _books(again.primary, again.entities)[0] == _books(originals[name], d.entities)[0]


# -- bad input --------------------------------------------------------------------------------------


def test_no_character_is_unsupported() -> None:
    with pytest.raises(Unsupported, match="no character"):
        read(rezip({"Books/b/book.json": b"{}"}), "b.voxpkg")


@pytest.mark.parametrize(
    ("key", "tree", "message", "path"),
    [
        ("mira", {**gen.MIRA_JSON, "Name": ["x"]}, "character.json", "$.Name"),
        ("mira", {**gen.MIRA_JSON, "MemoryBooks": "x"}, "character.json", "$.MemoryBooks"),
        ("tobin", {**gen.TOBIN_JSON, "DateModified": 5}, "character.json", "$.DateModified"),
        ("harbor", {**gen.HARBOR_JSON, "Items": {"a": 1}}, "book.json", "$.Items"),
        (
            "harbor",
            {**gen.HARBOR_JSON, "Items": [{"Keywords": [{"k": 1}]}]},
            "book.json",
            "$.Items[0].Keywords[0]",
        ),
        ("harbor", {**gen.HARBOR_JSON, "Items": [{"Deleted": "yes"}]}, "book.json", "$.Items[0].Deleted"),
        ("package", ["not", "an", "object"], "package.json", "$"),
        ("mira", "nope", "character.json", "$"),
    ],
)
def test_wrong_types_are_malformed_naming_the_member_and_path(
    key: str, tree: Any, message: str, path: str
) -> None:
    with pytest.raises(Malformed, match=re.escape(message)) as ei:
        read(package_with(**{key: tree}), "p.voxpkg")
    assert ei.value.path == path
    assert not getattr(ei.value, "internal", False)


def test_broken_json_and_unsafe_names() -> None:
    with pytest.raises(Malformed, match=r"book\.json"):
        read(package_with(lambda f: f.update({HARBOR: b"{nope"})), "p.voxpkg")
    with pytest.raises(Malformed):
        read(rezip({"Characters/a/character.json": b"{}", "Characters/a/../../evil.png": b"x"}), "p.voxpkg")


def test_odd_but_readable_packages_warn() -> None:
    mira = {**gen.MIRA_JSON, "$type": "scenario", "Id": "someone-else"}
    d = read(package_with(mira=mira), "p.voxpkg")
    assert d.primary.warnings == [
        f"{MIRA_DIR}character.json: character Id 'someone-else' differs from its folder '{gen.MIRA}'",
        f"{MIRA_DIR}character.json: \"$type\" is 'scenario', not 'character'",
    ]


def test_archive_limits_apply() -> None:
    files = {f"Characters/c/Assets/Misc/{i}.png": b"x" for i in range(archive.DEFAULT_LIMITS.max_entries)}
    files["Characters/c/character.json"] = b"{}"
    with pytest.raises(Malformed):  # LimitExceeded is a Malformed
        read(rezip(files), "big.voxpkg")


# -- wire conventions ------------------------------------------------------------------------------


def test_placeholders_and_dates() -> None:
    assert (
        from_voxta("{{ user }} and {{ char }}, {{User }}, {{ CHAR}}")
        == "{{user}} and {{char}}, {{User}}, {{CHAR}}"
    )
    assert from_voxta("{{ scenario_chars.main }} {{user}} {{ has_flag 'x' }}") == (
        "{{ scenario_chars.main }} {{user}} {{ has_flag 'x' }}"
    )
    assert read_date("0001-01-01T00:00:00+00:00") is None
    assert read_date("2024-01-01T00:00:00.0000000Z") == 1704067200
    assert read_date("garbage") is None
    assert write_date(1704067200) == "2024-01-01T00:00:00+00:00"
    assert write_date(1704067200.25) == "2024-01-01T00:00:00.250+00:00"
    assert write_date(None) == write_date(1e18) == "0001-01-01T00:00:00+00:00"
    assert derived_uuid("a") == derived_uuid("a") != derived_uuid("b")
    assert UUID.match(derived_uuid("a"))


def test_a_character_without_package_id_gives_a_new_book_a_uuid_package_id() -> None:
    """A character.json without ``PackageId`` (Voxta's library export of one character may have
    none): a book newly linked to it must still get a UUID ``PackageId``, never an empty one."""
    name = f"Characters/{gen.WREN}/character.json"
    assert "PackageId" not in gen.WREN_JSON  # the single-character sample has none
    d = read(sample(SINGLE), "wren.voxpkg")
    _, book = foreign()
    d.primary.links = {KNOWLEDGE_REFS: [book.id]}
    out = members(write(d.primary, "voxta", linked=[*d.entities, book]).data)
    new = json.loads(out[f"Books/{derived_uuid(book.id)}/book.json"])
    assert UUID.match(new["PackageId"]), new["PackageId"]
    assert "PackageId" not in json.loads(out[name])  # the character's own JSON is kept as it was
