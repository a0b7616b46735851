"""card-folder: a character card as a folder of files (formats/folder/, docs/formats/card-folder.md)."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bunzai_codecs import read, write
from bunzai_codecs.cli import main
from bunzai_codecs.core import fileset, registry
from bunzai_codecs.core.errors import BunzaiError, LimitExceeded, Malformed, ValidationFailed
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.fidelity import compare_native, cross_format
from bunzai_codecs.inputs import Input, Member, zip_members
from tests.formats.folder import make_folder_samples as gen
from tests.formats.helpers import SAMPLES, edited, inputs_below, sample

CODEC = registry.get("card-folder")
MARLOW = "card-folder/marlow"


def files_of(data: bytes) -> dict[str, bytes]:
    return fileset.files_of(fileset.require(Sniff(data, "x")))


def folder_of(data: bytes) -> bytes:
    """A file set as the command line makes it from the folder ``layout`` writes."""
    return fileset.pack(files_of(data))


def test_the_sample_is_what_the_generator_writes() -> None:
    for rel, data in gen.files().items():
        assert (SAMPLES / "card-folder" / rel).read_bytes() == data, f"{rel} is stale: run the generator"


# -- reading the sample -----------------------------------------------------------------------------


def test_the_sample_folder_reads_as_a_character_with_its_book_and_scripts() -> None:
    d = read(sample(MARLOW), "marlow")
    char, book, regex = d.entities
    body = char.body
    assert body.identity.name == "Marlow" and body.identity.characterVersion == "2.1"  # type: ignore[attr-defined]
    assert body.identity.description.startswith("{{char}} rows the night ferry")  # type: ignore[attr-defined]
    assert not body.identity.description.endswith("\n")  # type: ignore[attr-defined]  # the file's last newline
    greetings = body.greetings.alternateGreetings  # type: ignore[attr-defined]
    assert [(g.title, g.text[:12]) for g in greetings] == [
        (None, "*The lantern"),
        ("Storm night", "*Rain hammer"),
    ]
    assert body.discovery.tags == ["ferry", "harbour", "slow burn"]  # type: ignore[attr-defined]
    portrait = body.media.portrait  # type: ignore[attr-defined]
    assert char.media[portrait.sha256] == (SAMPLES / MARLOW / "assets/portrait.png").read_bytes()
    assert char.knowledge_refs == [book.id, regex.id]
    assert [e.id for e in book.body.entries] == ["ferry", "horn", "custom"]  # type: ignore[attr-defined]
    horn = book.body.entries[1]  # type: ignore[attr-defined]
    assert (horn.selective, horn.sortOrder, horn.secondaryTriggers[0].text) == (True, 90, "fog")
    assert book.body.entries[2].constant and book.body.entries[2].position == "character"  # type: ignore[attr-defined]
    assert [r.find for r in regex.body.rules] == ['"([^"]*)"', "\\.\\.\\."]  # type: ignore[attr-defined]
    assert char.warnings == []


def test_the_sample_folder_comes_back_file_for_file() -> None:
    data = sample(MARLOW)
    d = read(data, "marlow")
    out = write(d.primary, "card-folder", linked=d.entities)
    assert out.data == data  # the same files, the same bytes (and no escrow: the folder had none)
    assert out.embedded == {e.id for e in d.entities[1:]}


# -- a Tavern card to a folder and back ----------------------------------------------------------------


def test_a_png_card_comes_back_byte_for_byte_from_its_folder() -> None:
    png = sample("sillytavern/tidepool.png")
    d = read(png, "tidepool.png")
    folder = write(d.primary, "card-folder", linked=d.entities)
    files = files_of(folder.data)
    assert {
        "card.yaml",
        "description.md",
        "first_message.md",
        "assets/portrait.png",
        ".bunzai/escrow.json",
    } <= set(files)
    back = read(folder_of(folder.data), "tidepool")
    assert write(back.primary, "sillytavern", linked=back.entities).data == png


def test_a_json_card_with_a_book_and_scripts_comes_back_from_its_folder() -> None:
    data = sample("sillytavern/lighthouse-keeper.v2.json")
    d = read(data, "lighthouse-keeper.v2.json")
    folder = write(d.primary, "card-folder", linked=d.entities)
    names = set(files_of(folder.data))
    assert "lorebook/book.yaml" in names and "regex/set.yaml" in names
    assert any(n.startswith("lorebook/001-") for n in names) and any(n.startswith("regex/01-") for n in names)
    back = read(folder_of(folder.data), "lighthouse-keeper")
    assert [e.kind for e in back.entities] == ["character", "lorebook", "regex"]
    again = write(back.primary, "sillytavern", linked=back.entities)
    assert again.data == write(d.primary, "sillytavern", linked=d.entities).data


def test_an_edited_markdown_file_changes_exactly_that_field() -> None:
    png = sample("sillytavern/tidepool.png")
    d = read(png, "tidepool.png")
    files = files_of(write(d.primary, "card-folder", linked=d.entities).data)
    files["scenario.md"] = b"Spring tide, a storm coming, {{user}} on the rocks.\n"
    back = read(fileset.pack(files), "tidepool")
    out = write(back.primary, "sillytavern", linked=back.entities).data
    changes = compare_native(png, out)
    assert changes and {c.path.rsplit(".", 1)[-1] for c in changes} == {"scenario"}
    assert all(c.after == "Spring tide, a storm coming, {{user}} on the rocks." for c in changes)


def test_an_edited_lore_entry_changes_that_entry_only() -> None:
    data = sample("sillytavern/lighthouse-keeper.v2.json")
    d = read(data, "lighthouse-keeper.v2.json")
    files = files_of(write(d.primary, "card-folder", linked=d.entities).data)
    first = sorted(n for n in files if n.startswith("lorebook/0"))[0]
    meta, _content = files[first].split(b"\n---\n", 1)
    files[first] = meta + b"\n---\nA new lore text.\n"
    back = read(fileset.pack(files), "lighthouse-keeper")
    changes = compare_native(data, write(back.primary, "sillytavern", linked=back.entities).data)
    assert [c.path for c in changes] == ["data.character_book.entries[0].content"]


def test_a_replaced_picture_changes_the_portrait_and_nothing_else() -> None:
    png = sample("sillytavern/tidepool.png")
    d = read(png, "tidepool.png")
    files = files_of(write(d.primary, "card-folder", linked=d.entities).data)
    files["assets/portrait.png"] = gen.image(16, 16, (200, 10, 10, 255))
    back = read(fileset.pack(files), "tidepool")
    assert back.primary.media[back.primary.body.media.portrait.sha256] == files["assets/portrait.png"]  # type: ignore[attr-defined]
    out = write(back.primary, "sillytavern", linked=back.entities).data
    changes = compare_native(png, out)
    assert any(c.path.startswith("png.chunks") for c in changes)  # another picture
    assert not [c for c in changes if c.path.startswith(("png.chara", "png.ccv3"))]  # the same card


def test_a_folder_without_its_escrow_still_reads_as_the_same_card() -> None:
    png = sample("sillytavern/tidepool.png")
    d = read(png, "tidepool.png")
    files = {
        n: v
        for n, v in files_of(write(d.primary, "card-folder").data).items()
        if not n.startswith(".bunzai/")
    }
    back = read(fileset.pack(files), "tidepool")
    assert back.primary.body == d.primary.body
    assert set(back.primary.original) == {"card-folder"}


def test_every_sample_character_goes_to_a_folder_and_back_unchanged() -> None:
    seen = 0
    for path, name, data in inputs_below(SAMPLES):
        d = read(data, name)
        for e in d.entities:
            if e.kind != "character":
                continue
            row = cross_format(e, CODEC, pool=d.entities, input=str(path))
            assert row.status == "lossless", (str(path), row.to_json())
            seen += 1
    assert seen >= 20


def test_an_edit_keeps_the_bytes_of_every_file_it_did_not_touch() -> None:
    data = sample(MARLOW)
    d = read(data, "marlow")
    before = files_of(data)
    e = edited(d.primary, persona={"personality": "calm"})
    after = files_of(write(e, "card-folder", linked=d.entities).data)
    assert {n for n in before if before[n] != after.get(n)} == {"personality.md"}
    assert after["personality.md"] == b"calm\n" and set(after) == set(before)


def test_a_removed_entry_removes_its_file_and_a_readme_stays() -> None:
    files = files_of(sample(MARLOW))
    files["README.md"] = b"my notes\n"
    d = read(fileset.pack(files), "marlow")
    assert d.primary.warnings == ["README.md: not a card field (kept in the folder, not read)"]
    book = d.entities[1]
    book = edited(book, lambda b: b["entries"].pop(2))
    out = files_of(write(d.primary, "card-folder", linked=[d.primary, book, d.entities[2]]).data)
    assert "lorebook/003-harbour-custom.md" not in out and out["README.md"] == b"my notes\n"


# -- names are made by bunzai, never taken from the card -------------------------------------------------


def test_no_text_of_the_card_becomes_a_path(tmp_path: Path) -> None:
    d = read(sample(MARLOW), "marlow")
    book = edited(d.entities[1], lambda b: b["entries"][0].update(title="../../../etc/passwd"))
    evil = edited(d.primary, identity={"name": "../../x"})
    asset = {"role": "../../evil", "ref": "x", "name": "/etc/x", "sha256": evil.body.media.portrait.sha256}  # type: ignore[attr-defined]
    evil = edited(evil, media={"portrait": evil.body.media.portrait.dump(), "assets": [asset]})  # type: ignore[attr-defined]
    out = write(evil, "card-folder", linked=[evil, book, d.entities[2]])
    names = set(files_of(out.data))
    assert "lorebook/001-etc-passwd.md" in names and "assets/01-etc-x.png" in names
    for n, _ in CODEC.layout(out.data, tmp_path / "card"):
        assert Path(n).resolve().is_relative_to((tmp_path / "card").resolve())


def test_a_file_named_by_card_yaml_is_looked_up_in_the_folder_only() -> None:
    files = files_of(sample(MARLOW))
    files["card.yaml"] = files["card.yaml"].replace(
        b"file: assets/portrait.png", b"file: ../../../etc/passwd"
    )
    with pytest.raises(Malformed, match="which the folder does not hold"):
        read(fileset.pack(files), "marlow")


# -- malformed and hostile folders ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "data", "error", "says"),
    [
        ("card.yaml", b"identity: [1, 2\n", Malformed, "card.yaml"),
        ("card.yaml", b"- a list\n", Malformed, "mapping"),
        ("card.yaml", b"identity:\n  name: 7\n  bogus: x\n", ValidationFailed, "card.yaml"),
        (
            "lorebook/001-x.md",
            b"---\nid: x\nconstant: maybe\n---\ntext\n",
            ValidationFailed,
            "lorebook/001-x.md",
        ),
        ("lorebook/001-x.md", b"---\nid: x\nno closing fence\n", Malformed, "no closing"),
        ("description.md", b"\xff\xfe not utf-8", Malformed, "description.md"),
        (
            ".bunzai/escrow.json",
            b'{"entities": [{"folder": "", "original": {"sillytavern": {"raw": {}, "blobs": {"png": "sha256:00"}}}}]}',
            Malformed,
            "blob",
        ),
    ],
)
def test_a_broken_file_is_a_typed_reject_naming_it(
    name: str, data: bytes, error: type[BunzaiError], says: str
) -> None:
    files = files_of(sample(MARLOW))
    files[name] = data
    with pytest.raises(error) as exc:
        CODEC.decode(Sniff(fileset.pack(files), "marlow", uri="cards/marlow"))
    assert says in str(exc.value) and "cards/marlow" in str(exc.value) and not exc.value.internal


def test_an_alias_bomb_in_card_yaml_is_refused() -> None:
    from tests.formats.textgen.test_textgen import billion_laughs

    files = files_of(sample(MARLOW))
    files["card.yaml"] = b"card_folder: 1\n" + billion_laughs().replace(
        b"name: Lol\ncontext:", b"extensions:\n  x:"
    )
    with pytest.raises(LimitExceeded, match="aliases expanded"):
        read(fileset.pack(files), "marlow")


def test_card_yaml_alone_says_to_read_its_folder() -> None:
    data = (SAMPLES / MARLOW / "card.yaml").read_bytes()
    assert registry.detect(Sniff(data, "card.yaml")).id == "card-folder"  # type: ignore[union-attr]
    with pytest.raises(Malformed, match="read the folder it is in"):
        read(data, "card.yaml")


def test_a_zip_of_the_folder_reads_as_the_folder() -> None:
    import io

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for rel, data in sorted(gen.files().items()):
            z.writestr(rel, data)  # marlow/card.yaml...: the folder itself, zipped
    d = read(buf.getvalue(), "marlow.zip")
    assert [e.body.dump() for e in d.entities] == [
        e.body.dump() for e in read(sample(MARLOW), "marlow").entities
    ]


def test_a_symbolic_link_in_a_card_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "card"
    for rel, data in gen.files().items():
        p = tmp_path / "card" / rel.split("/", 1)[1]
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"not the card's\n")
    (folder / "personality.md").unlink()
    os.symlink(secret, folder / "personality.md")
    with pytest.raises(Malformed, match="symbolic link"):
        Input(folder, folder=True).read()
    os.unlink(folder / "personality.md")
    os.symlink(tmp_path, folder / "assets" / "more")
    with pytest.raises(Malformed, match="symbolic link"):
        Input(folder, folder=True).read()


def test_a_huge_card_folder_is_refused_by_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import bunzai_codecs.inputs as inputs_mod

    folder = tmp_path / "card"
    folder.mkdir()
    (folder / "card.yaml").write_bytes(b"card_folder: 1\n")
    (folder / "description.md").write_bytes(b"x" * 2000)
    monkeypatch.setattr(inputs_mod, "MAX_INPUT_BYTES", 1000)
    with pytest.raises(LimitExceeded, match="limit is 1000"):
        Input(folder, folder=True).read()


# -- the command line ------------------------------------------------------------------------------------


def test_convert_writes_the_tree_and_rebuilds_the_card(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    png = SAMPLES / "sillytavern/tidepool.png"
    mine = tmp_path / "mycard"
    assert main(["convert", str(png), "--to", "card-folder", "-o", f"{mine}/"]) == 0
    assert (mine / "card.yaml").is_file() and (mine / "description.md").is_file()
    assert f"wrote {mine}{os.sep} (" in capsys.readouterr().err
    card = tmp_path / "card.png"
    assert main(["convert", str(mine), "--to", "sillytavern", "-o", str(card)]) == 0
    assert card.read_bytes() == png.read_bytes()
    assert main(["detect", str(mine)]) == 0
    assert "card-folder" in capsys.readouterr().out
    # again: the folder is there; --force replaces its card files, and keeps the author's own
    assert main(["convert", str(png), "--to", "card-folder", "-o", str(mine)]) == 2
    (mine / "greetings").mkdir()
    (mine / "greetings" / "07.md").write_bytes(b"stale\n")
    (mine / "NOTES.txt").write_bytes(b"mine\n")
    assert main(["convert", str(png), "--to", "card-folder", "-o", str(mine), "--force"]) == 0
    assert not (mine / "greetings" / "07.md").exists() and (mine / "NOTES.txt").read_bytes() == b"mine\n"


def test_convert_to_a_zip_and_a_batch_of_folders(tmp_path: Path) -> None:
    out = tmp_path / "tide.zip"
    assert (
        main(["convert", str(SAMPLES / "sillytavern/tidepool.png"), "--to", "card-folder", "-o", str(out)])
        == 0
    )
    assert read(out.read_bytes(), "tide.zip").primary.body.identity.name == "Tidepool"  # type: ignore[attr-defined]
    batch = tmp_path / "batch"
    args = [
        "convert",
        str(SAMPLES / "pygmalion"),
        str(SAMPLES / "card-folder"),
        "--to",
        "card-folder",
        "-o",
        str(batch),
        "-j",
        "1",
    ]
    assert main(args) == 0
    made = sorted(p.relative_to(batch).as_posix() for p in batch.rglob("card.yaml"))
    assert made == ["ines.pygmalion/card.yaml", "marlow/card.yaml", "oskar.pygmalion/card.yaml"]


def test_normalize_lists_a_card_folder_as_one_input() -> None:
    import fsspec

    from pipeline.runtime.storage import list_files

    fs = fsspec.filesystem("file")
    listed = dict(list_files(fs, str(SAMPLES / "card-folder"), groups=True))
    ((path, info),) = listed.items()
    assert path.endswith("card-folder/marlow") and info["base"] == path
    assert "card.yaml" in info["parts"] and ".gitattributes" in info["parts"]
    assert info["size"] == sum(len(v) for v in gen.files().values())
    assert "lorebook/001-the-night-ferry.md" in info["parts"]


# -- any text comes back as it was ------------------------------------------------------------------

_TEXT = st.one_of(
    st.text(),
    st.sampled_from(
        ["", "\n", "---", "---\n", "---\nx\n---\ny", "x\r\n", "\r", " lead", "trail ", "\ufeffbom"]
    ),
    st.builds(lambda a, b: a + "\n---\n" + b, st.text(), st.text()),
)


@settings(max_examples=150, deadline=None)
@given(description=_TEXT, greeting=_TEXT, content=_TEXT, title=st.one_of(st.none(), _TEXT))
def test_any_text_comes_back_as_it_was(
    description: str, greeting: str, content: str, title: str | None
) -> None:
    d = read(sample(MARLOW), "marlow")
    g = {"text": greeting} if title is None else {"text": greeting, "title": title}
    e = edited(d.primary, identity={"description": description}, greetings={"alternateGreetings": [g]})
    book = edited(d.entities[1], lambda b: b["entries"][0].update(content=content))
    out = write(e, "card-folder", linked=[e, book, d.entities[2]])
    back = read(folder_of(out.data), "marlow")
    assert back.primary.body == e.body
    assert back.entities[1].body == book.body


def test_a_zip_of_files_reads_a_card_folder_and_a_character_with_its_picture_as_one_input_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A backup zip no format claims is read member by member (issue 32), grouped as a folder's
    files are: the card folder inside it one input (its own hidden .gitattributes kept, the zip's
    .DS_Store left out), Wren.yaml with Wren.png one, every other file alone."""
    import orjson

    marlow = SAMPLES / MARLOW
    chars = SAMPLES / "textgen-webui/characters"
    backup = tmp_path / "backup.zip"
    with zipfile.ZipFile(backup, "w") as z:
        z.write(SAMPLES / "sillytavern/tidepool.png", "tidepool.png")
        for p in sorted(marlow.rglob("*")):
            if p.is_file():
                z.write(p, f"marlow/{p.relative_to(marlow).as_posix()}")
        for p in sorted(chars.iterdir()):
            z.write(p, f"chars/{p.name}")
        z.writestr(".DS_Store", b"\x00")
    assert main(["detect", "--json", str(backup)]) == 0
    got = {x["file"]: x["format"] for x in map(orjson.loads, capsys.readouterr().out.splitlines())}
    assert got == {
        f"zip://tidepool.png::{backup}": "sillytavern",
        f"zip://marlow::{backup}": "card-folder",
        f"zip://chars/Harbor Pilot.yml::{backup}": "textgen-webui",
        f"zip://chars/Wren.yaml::{backup}": "textgen-webui",
    }
    assert main(["inspect", str(backup)]) == 0
    lines = [orjson.loads(x) for x in capsys.readouterr().out.splitlines()]
    names = sorted(x["body"]["identity"]["name"] for x in lines if x["kind"] == "character")
    assert names == ["Harbor Pilot", "Marlow", "Tidepool", "Wren"]
    # the zip's card folder reads as the sample folder does, byte for byte the same file set
    (member,) = [m for m in members_of_zip(backup) if m.name == "marlow"]
    assert member.data == sample(MARLOW)
    wren = next(m for m in members_of_zip(backup) if m.name == "chars/Wren.yaml")
    assert sorted(files_of(wren.data or b"")) == ["Wren.png", "Wren.yaml"]
    # a batch with the sample folder: both write marlow/, the later one is renamed, folder and all
    out = tmp_path / "out"
    assert (
        main(["convert", str(SAMPLES / "card-folder"), str(backup), "--to", "card-folder", "-o", str(out)])
        == 0
    )
    err = capsys.readouterr().err
    assert (out / "marlow" / "card.yaml").is_file() and (out / "marlow-2" / "card.yaml").is_file()
    assert f"renamed: zip://marlow::{backup} -> {out / 'marlow-2'} ({out / 'marlow'} is " in err
    assert (out / "marlow-2" / ".gitattributes").read_bytes() == (marlow / ".gitattributes").read_bytes()
    assert f"zip://marlow::{backup} -> {out / 'marlow-2'}:" in err


def members_of_zip(path: Path) -> list[Member]:
    found = zip_members(path.read_bytes(), str(path))
    assert found is not None
    return found
