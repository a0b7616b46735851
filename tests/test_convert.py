"""``bunzai convert``: the picture survives, the output name picks the container, every entity is
written and nothing overwritten, and the command says what it lost (issue 19, parts 1-5).

Each case is one a new user tried (the issue's list); the corpus cases skip without the corpus.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import orjson
import pytest

from bunzai_codecs import read, write
from bunzai_codecs.cli import main
from bunzai_codecs.core import png
from bunzai_codecs.core.media import default_portrait_png, digest, pixels_key, sniff_mime
from bunzai_codecs.exitcodes import Exit
from bunzai_codecs.formats.risu import risum
from tests.conftest import corpus_root

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"


def _corpus(rel: str) -> Path:
    root = corpus_root()
    if root is None:
        pytest.skip("shared corpus not present")
    return root / rel


def _portrait(path: Path, fmt: str | None = None) -> bytes:
    e = read(path.read_bytes(), path.name, format=fmt).primary
    p = e.body.media.portrait  # type: ignore[attr-defined]
    assert p is not None and p.sha256 is not None, f"{path.name}: no portrait image"
    return e.media[p.sha256]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    rc = main(list(argv))
    return rc, capsys.readouterr().err


# -- the picture survives ---------------------------------------------------------------------------


def test_charx_to_sillytavern_png_keeps_the_main_image_and_the_emotion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _corpus("sillytavern/tavern_kit/test_character.charx")
    z = zipfile.ZipFile(src)
    out = tmp_path / "st.png"
    rc, err = _run(capsys, "convert", str(src), "--to", "sillytavern", "-o", str(out))
    assert rc == 0, err
    data = out.read_bytes()
    assert data[:8] == png.PNG_SIGNATURE
    assert png.replace_text(data, remove=("chara", "ccv3")) == z.read("assets/main.png")
    back = read(data, "st.png").primary
    assert _portrait(out) == z.read("assets/main.png")
    # the emotion the archive packs beside the card comes back too (inline in the card)
    happy = z.read("assets/emotions/happy.png")
    assert [back.media[a.sha256 or ""] for a in back.body.media.assets or []] == [happy]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "rel",
    [
        "samples/backyard/maelis.v4.backyard.png",
        "samples/agnai/Pip.json",
        "samples/marinara/character.vesna.marinara.json",
        "samples/risu/oswin_the_lamplighter.charx",
        "samples/risu/oswin_the_lamplighter.jpeg",
        "samples/backyard/maelis.byaf",
    ],
)
def test_a_card_with_a_picture_converted_to_a_png_card_keeps_it(
    rel: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = ROOT / rel
    before = _portrait(src)
    out = tmp_path / "card.png"
    rc, err = _run(capsys, "convert", str(src), "--to", "sillytavern", "-o", str(out))
    assert rc == 0, err
    after = _portrait(out)
    # the same bytes, or (a portrait that was not a PNG) the same pixels in a PNG
    assert after == before or (sniff_mime(before) != "image/png" and pixels_key(after) == pixels_key(before))


def test_a_png_card_to_byaf_packs_its_picture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = SAMPLES / "sillytavern" / "tidepool.png"
    out = tmp_path / "t.byaf"
    rc, err = _run(capsys, "convert", str(src), "--to", "byaf", "-o", str(out))
    assert rc == 0, err
    z = zipfile.ZipFile(out)
    character = next(n for n in z.namelist() if n.endswith("/character.json"))
    images = orjson.loads(z.read(character))["images"]
    assert len(images) == 1
    folder = character.rsplit("/", 1)[0]
    assert z.read(f"{folder}/{images[0]['path']}") == png.replace_text(
        src.read_bytes(), remove=("chara", "ccv3")
    )


def test_a_png_card_without_a_picture_gets_the_default_portrait_reported_as_added(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = SAMPLES / "sillytavern" / "lighthouse-keeper.v2.json"
    out = tmp_path / "card.png"
    rc, err = _run(capsys, "convert", str(src), "--to", "sillytavern", "-o", str(out))
    assert rc == 0, err
    assert png.replace_text(out.read_bytes(), remove=("chara", "ccv3")) == default_portrait_png()
    assert "added media.portrait" in err


def test_image_supplies_the_picture_of_a_png_card(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = SAMPLES / "sillytavern" / "lighthouse-keeper.v2.json"
    picture = png.replace_text(
        (SAMPLES / "sillytavern" / "tidepool.png").read_bytes(), remove=("chara", "ccv3")
    )
    img = tmp_path / "face.png"
    img.write_bytes(picture)
    out = tmp_path / "card.png"
    rc, err = _run(capsys, "convert", str(src), "--to", "sillytavern", "-o", str(out), "--image", str(img))
    assert rc == 0, err
    assert _portrait(out) == picture
    # without a suffix to say otherwise, --image asks for the format's PNG container
    rc, err = _run(
        capsys, "convert", str(src), "--to", "pygmalion", "-o", str(tmp_path) + "/", "--image", str(img)
    )
    assert rc == 0, err
    written = [
        p for p in tmp_path.iterdir() if p.name.endswith(".png") and p.name not in ("card.png", "face.png")
    ]
    assert len(written) == 1 and _portrait(written[0]) == picture
    bad = tmp_path / "notes.txt"
    bad.write_text("not an image")
    rc, err = _run(
        capsys, "convert", str(src), "--to", "sillytavern", "-o", str(tmp_path / "x.png"), "--image", str(bad)
    )
    assert rc == 2 and "not an image" in err


# -- the output name picks the container ------------------------------------------------------------


def test_the_suffix_picks_the_container_within_a_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    card = SAMPLES / "sillytavern" / "tidepool.png"
    rc, err = _run(capsys, "convert", str(card), "--to", "sillytavern", "-o", str(tmp_path / "card.json"))
    assert rc == 0, err
    tree = orjson.loads((tmp_path / "card.json").read_bytes())
    assert tree["data"]["name"] == "Tidepool"
    # the JSON card holds the picture as a data: URL
    icon = tree["data"]["assets"][0]
    assert icon["uri"].startswith("data:image/png;base64,")
    book = SAMPLES / "novelai" / "hollin.naidata.png"
    rc, err = _run(
        capsys, "convert", str(book), "--to", "novelai-lorebook", "-o", str(tmp_path / "x.lorebook")
    )
    assert rc == 0, err
    assert orjson.loads((tmp_path / "x.lorebook").read_bytes())["lorebookVersion"]
    rc, err = _run(capsys, "convert", str(book), "--to", "novelai-lorebook", "-o", str(tmp_path / "x.png"))
    assert rc == 0 and (tmp_path / "x.png").read_bytes()[:8] == png.PNG_SIGNATURE
    module = SAMPLES / "risu" / "lantern_harbor.risum"
    rc, err = _run(capsys, "convert", str(module), "--to", "risu-regex", "-o", str(tmp_path / "r.json"))
    assert rc == 0, err
    assert orjson.loads((tmp_path / "r.json").read_bytes())["type"] == "regex"
    # risu-module: a .risum, or RisuRealm's flat module JSON, which cannot hold a module's asset files
    rc, err = _run(capsys, "convert", str(module), "--to", "risu-module", "-o", str(tmp_path / "m.json"))
    # the output's choice, not the input's: a usage error (exit 2) naming the file
    assert rc == 2 and "only a .risum holds" in err and not (tmp_path / "m.json").exists()
    assert f"{tmp_path / 'm.json'}: risu-module:" in err
    module = SAMPLES / "sillytavern" / "regex-scripts.json"
    rc, err = _run(capsys, "convert", str(module), "--to", "risu-module", "-o", str(tmp_path / "m.json"))
    assert rc == 0, err
    assert orjson.loads((tmp_path / "m.json").read_bytes())["type"] == "risuModule"
    rc, err = _run(
        capsys, "convert", str(tmp_path / "m.json"), "--to", "risu-module", "-o", str(tmp_path / "m.risum")
    )
    assert rc == 0, err
    assert (tmp_path / "m.risum").read_bytes()[:1] == bytes([risum.MAGIC])
    assert read((tmp_path / "m.risum").read_bytes(), "m.risum").primary.source.format == "risu-module"  # type: ignore[union-attr]
    preset = SAMPLES / "risu" / "harbor_night_shift_preset.risup"
    rc, err = _run(capsys, "convert", str(preset), "--to", "risu-preset", "-o", str(tmp_path / "p.json"))
    assert rc == 0, err
    assert orjson.loads((tmp_path / "p.json").read_bytes())


def test_a_suffix_the_format_cannot_write_is_a_usage_error_naming_those_it_can(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    card = SAMPLES / "sillytavern" / "tidepool.png"
    rc, err = _run(capsys, "convert", str(card), "--to", "sillytavern", "-o", str(tmp_path / "card.txt"))
    assert rc == 2
    assert ".json, .png, .apng" in err and "Traceback" not in err
    rc, err = _run(capsys, "convert", str(card), "--to", "agnai", "-o", str(tmp_path / "card.png"))
    assert rc == 2 and "writes .json" in err
    assert list(tmp_path.iterdir()) == []


def test_without_o_or_into_a_folder_the_source_container_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    rc, err = _run(capsys, "convert", str(SAMPLES / "sillytavern" / "tidepool.png"), "--to", "rolecall")
    assert rc == 0, err
    assert (tmp_path / "Tidepool.png").read_bytes()[:8] == png.PNG_SIGNATURE
    out = tmp_path / "out"
    rc, err = _run(
        capsys,
        "convert",
        str(SAMPLES / "sillytavern" / "starship-captain.v3.json"),
        "--to",
        "rolecall",
        "-o",
        f"{out}/",
    )
    assert rc == 0, err
    (written,) = [p for p in out.iterdir()]
    assert written.suffix == ".json" and orjson.loads(written.read_bytes())


# -- every entity is written, nothing overwritten ---------------------------------------------------


def test_every_persona_of_a_backup_is_written_and_none_overwrites_another(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = SAMPLES / "sillytavern" / "personas-backup.json"
    want = sorted(e.body.name for e in read(src.read_bytes(), src.name).entities)  # type: ignore[attr-defined]
    rc, err = _run(capsys, "convert", str(src), "--to", "marinara-persona", "-o", str(tmp_path / "p.json"))
    assert rc == 0, err
    files = sorted(tmp_path.iterdir())
    assert len(files) == len(want) == 3
    got = sorted(read(f.read_bytes(), f.name).primary.body.name for f in files)  # type: ignore[attr-defined]
    assert got == want


def test_an_existing_file_is_not_overwritten_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "card.json"
    out.write_bytes(b"mine")
    src = SAMPLES / "sillytavern" / "starship-captain.v3.json"
    rc, err = _run(capsys, "convert", str(src), "--to", "sillytavern", "-o", str(out))
    assert rc == 2 and "--force" in err
    assert out.read_bytes() == b"mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["card.json"]  # nothing else written either
    rc, err = _run(capsys, "convert", str(src), "--to", "sillytavern", "-o", str(out), "--force")
    assert rc == 0 and orjson.loads(out.read_bytes())["data"]["nickname"] == "Cap"


def test_entity_or_kind_picks_an_entity_that_is_not_the_primary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = SAMPLES / "risu" / "lantern_harbor.risum"
    d = read(src.read_bytes(), src.name)
    book = next(e for e in d.entities if e.kind == "lorebook")
    rc, err = _run(
        capsys,
        "convert",
        str(src),
        "--kind",
        "lorebook",
        "--to",
        "sillytavern-lorebook",
        "-o",
        str(tmp_path / "b.json"),
    )
    assert rc == 0, err
    got = read((tmp_path / "b.json").read_bytes(), "b.json").primary
    assert [x.content for x in got.body.entries] == [x.content for x in book.body.entries]  # type: ignore[attr-defined]
    rc, err = _run(
        capsys,
        "convert",
        str(src),
        "--entity",
        book.id[:20],
        "--to",
        "risu-lorebook",
        "-o",
        str(tmp_path / "r.json"),
    )
    assert rc == 0, err
    rc, err = _run(
        capsys,
        "convert",
        str(src),
        "--entity",
        "nope",
        "--to",
        "risu-lorebook",
        "-o",
        str(tmp_path / "n.json"),
    )
    assert rc == 2 and book.id in err
    # without --kind the module's lorebook cannot go to a lorebook format: a usage error that says how
    rc, err = _run(
        capsys, "convert", str(src), "--to", "sillytavern-lorebook", "-o", str(tmp_path / "x.json")
    )
    assert rc == 2 and "--kind" in err


# -- convert says what it lost ----------------------------------------------------------------------


def test_convert_lists_what_it_lost_grouped_with_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = SAMPLES / "sillytavern" / "world-harbor-town.json"
    rc, err = _run(
        capsys, "convert", str(src), "--to", "marinara-story-bundle", "-o", str(tmp_path / "b.json")
    )
    assert rc == 0
    assert "0 unexpected" in err and "expected (the target has no place for these)" in err
    assert "lost entries[].content" in err
    rc, err = _run(
        capsys, "convert", str(src), "--to", "marinara-story-bundle", "-o", str(tmp_path / "c.json"), "-q"
    )
    assert rc == 0 and err == ""


def test_strict_exits_1_on_an_unexpected_loss(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bunzai_codecs.core import registry
    from bunzai_codecs.formats.agnai.codec import AgnaiCharacterCodec

    class Forgetful(AgnaiCharacterCodec):
        """Claims the scenario like Agnai, but does not write it: a bug the report must name."""

        def encode(self, entity, ctx):  # type: ignore[no-untyped-def]
            tree = orjson.loads(super().encode(entity, ctx))
            tree["scenario"] = ""
            return orjson.dumps(tree)

    src = SAMPLES / "sillytavern" / "lighthouse-keeper.v2.json"
    with registry.using({**registry.CODECS, "agnai": Forgetful}):
        rc, err = _run(capsys, "convert", str(src), "--to", "agnai", "-o", str(tmp_path / "a.json"))
        assert rc == 0 and "unexpected (the target holds these: a bug)" in err and "persona.scenario" in err
        rc, err = _run(
            capsys, "convert", str(src), "--to", "agnai", "-o", str(tmp_path / "b.json"), "--strict"
        )
        assert rc == Exit.LOSSY
    rc, err = _run(capsys, "convert", str(src), "--to", "agnai", "-o", str(tmp_path / "c.json"), "--strict")
    assert rc == 0, err


# -- exports are named after the bytes they hold ----------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "fmt", "ext"),
    [
        ("sillytavern/tidepool.png", "sillytavern", ".png"),
        ("sillytavern/starship-captain.v3.json", "sillytavern", ".json"),
        ("novelai/hollin.naidata.png", "novelai-lorebook", ".png"),
        ("novelai/hollin.lorebook", "novelai-lorebook", ".lorebook"),
        ("risu/lantern_harbor.risum", "risu-module", ".risum"),
        ("risu/lantern_harbor.risum", "risu-regex", ".json"),
        ("risu/harbor_regexscript_export.json", "risu-regex", ".json"),
        ("risu/oswin_the_lamplighter.jpeg", "risu", ".jpeg"),
        ("risu/harbor_night_shift_preset.json", "risu-preset", ".json"),
    ],
)
def test_an_export_is_named_with_the_extension_of_its_bytes(rel: str, fmt: str, ext: str) -> None:
    d = read((SAMPLES / rel).read_bytes(), rel)
    assert write(d.primary, fmt, linked=d.entities).extension == ext


def test_a_zip_member_of_another_charx_gets_its_true_extension() -> None:
    """Risu writes WebP bytes under .png names: a fresh charx names each file by what it is."""
    d = read((SAMPLES / "risu" / "oswin_the_lamplighter.charx").read_bytes(), "o.charx")
    st = write(d.primary, "sillytavern", linked=d.entities, container="json")
    back = read(st.data, "o.json")
    out = write(back.primary, "risu", linked=back.entities).data
    z = zipfile.ZipFile(io.BytesIO(out))
    for name in z.namelist():
        if name.startswith("assets/"):
            assert (
                name.rsplit(".", 1)[1]
                == {"image/png": "png", "image/webp": "webp"}[sniff_mime(z.read(name)) or ""]
            )
    got = sorted(digest(z.read(n)) for n in z.namelist() if n.startswith("assets/"))
    want = sorted(a.sha256 or "" for a in d.primary.body.media.assets or [] if a.ref.startswith("embeded://"))  # type: ignore[attr-defined]
    assert got == sorted([*want, d.primary.body.media.portrait.sha256])  # type: ignore[attr-defined,list-item]
