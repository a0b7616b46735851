"""Media are canonical data: a card's picture and assets reach every format that can hold them.

The bytes of every image a file carries are in the decoded entity's media store, named by digest
from the body (``media.portrait.sha256``); each encoder writes what its format can hold.
"""

from __future__ import annotations

import io
import zipfile

import pytest

from bunzai_codecs import read, write
from bunzai_codecs.core import png, registry
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.media import digest, pixels_key, png_image, sniff_mime
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.fidelity import cross_format
from tests.conftest import ROOT, corpus_root
from tests.formats.helpers import sample


def _portrait_bytes(entity):  # type: ignore[no-untyped-def]
    p = entity.body.media.portrait
    assert p is not None and p.sha256 is not None, "the portrait has no bytes"
    return entity.media[p.sha256]


def test_a_charx_decodes_its_portrait_and_assets_by_digest() -> None:
    data = sample("risu/oswin_the_lamplighter.charx")
    card = read(data, "oswin.charx").primary
    z = zipfile.ZipFile(io.BytesIO(data))
    main = z.read("assets/icon/image/main.png")
    p = card.body.media.portrait
    assert p is not None and p.sha256 == digest(main) and p.size == len(main)
    assert card.media[p.sha256] == main
    for a in card.body.media.assets or []:
        member = a.ref.removeprefix("embeded://")
        assert a.sha256 == digest(z.read(member)), a.ref
        assert card.media[a.sha256] == z.read(member)


def test_charx_to_sillytavern_png_keeps_the_main_image() -> None:
    data = sample("risu/oswin_the_lamplighter.charx")
    decoded = read(data, "oswin.charx")
    out = write(decoded.primary, "sillytavern", linked=decoded.entities, container="png").data
    assert out[:8] == png.PNG_SIGNATURE
    z = zipfile.ZipFile(io.BytesIO(data))
    main = z.read("assets/icon/image/main.png")
    # the PNG card is the main image with the card's text chunks added
    assert png_image(out, ("chara", "ccv3")) == main
    back = read(out, "oswin.png").primary
    assert _portrait_bytes(back) == main
    # every other asset comes back with its bytes (inline in the card)
    want = sorted(
        digest(z.read(a.ref.removeprefix("embeded://"))) for a in decoded.primary.body.media.assets or []
    )
    got = sorted(a.sha256 or "" for a in back.body.media.assets or [])
    assert got == want


def test_a_webp_portrait_becomes_the_png_of_a_png_card_with_the_same_pixels() -> None:
    data = sample("risu/oswin_the_lamplighter.charx")
    decoded = read(data, "oswin.charx")
    card = decoded.primary
    webp = next(a for a in card.body.media.assets or [] if a.mime == "image/webp")
    body = card.body.model_copy(
        update={
            "media": card.body.media.model_copy(
                update={"portrait": webp.model_copy(update={"role": "portrait"}), "assets": None}
            )
        }
    )
    card.body = body
    out = write(card, "sillytavern", container="png").data
    back = read(out, "x.png").primary
    image = _portrait_bytes(back)
    assert sniff_mime(image) == "image/png"
    assert pixels_key(image) == pixels_key(card.media[webp.sha256])  # type: ignore[index]


# -- every card with a picture, to every character format and back --------------------------------


def _files() -> list[tuple[str, str, bytes]]:
    """``(key, name, bytes)`` of every input of the samples and the corpus."""
    from tests.formats.helpers import inputs_below

    out = [
        (f"samples/{p.relative_to(ROOT / 'samples').as_posix()}", name, data)
        for p, name, data in inputs_below(ROOT / "samples")
    ]
    root = corpus_root()
    if root is not None:
        out += [
            (f"corpus/{p.relative_to(root).as_posix()}", name, data) for p, name, data in inputs_below(root)
        ]
    return out


def _pictures(e: CanonicalEntity) -> dict[str, list[str]]:
    """``portrait`` / ``assets`` -> the digests of the pictures the entity has bytes of."""
    from bunzai_codecs.core.media import items

    out: dict[str, list[str]] = {"portrait": [], "assets": []}
    for path, a in items(e.body):
        if a.sha256 is not None and a.sha256 in e.media:
            out["portrait" if path == "media.portrait" else "assets"].append(a.sha256)
    return out


def _cards_with_pictures() -> list[tuple[str, tuple[str, bytes]]]:
    found = []
    for key, name, data in _files():
        try:
            d = read(data, name)
        except Exception:
            continue
        if any(e.kind == "character" and any(_pictures(e).values()) for e in d.entities):
            found.append((key, (name, data)))
    return found


CARDS = _cards_with_pictures()
TARGETS = [c.id for c in registry.for_kind("character")]


def _kept(want: bytes, back: CanonicalEntity) -> bool:
    """The picture is somewhere in ``back``: the same bytes, or the same pixels (a stated re-encode)."""
    if digest(want) in back.media:
        return True
    key = pixels_key(want)
    return key is not None and any(pixels_key(b) == key for b in back.media.values())


def test_the_sample_set_has_cards_with_pictures_of_every_kind() -> None:
    names = {k for k, _ in CARDS}
    for must in (
        "samples/sillytavern/tidepool.png",
        "samples/risu/oswin_the_lamplighter.charx",
        "samples/risu/oswin_the_lamplighter.jpeg",
        "samples/backyard/maelis.byaf",
        "samples/backyard/maelis.v4.backyard.png",
        "samples/agnai/Pip.json",
        "samples/marinara/character.vesna.marinara.json",
        "samples/lumiverse/quill.lumiverse.zip",
        "samples/pygmalion/ines.pygmalion.png",
        "samples/rolecall/wren.rolecall-flat.png",
        "samples/textgen-webui/characters/Wren.yaml",
        "samples/card-folder/marlow",
    ):
        assert must in names, must


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("key", "path"), CARDS, ids=[k for k, _ in CARDS])
def test_every_card_with_a_picture_to_every_character_format_and_back(
    key: str, path: tuple[str, bytes], target: str
) -> None:
    """Every format that can hold the picture keeps it (the same bytes, or the same pixels where a
    PNG card re-encodes a JPEG/WebP portrait); a format that cannot reports the loss as expected."""
    name, data = path
    d = read(data, name)
    source = d.primary.source.format  # type: ignore[union-attr]
    codec = registry.get(target)
    for e in [x for x in d.entities if x.kind == "character"]:
        pics = _pictures(e)
        if not any(pics.values()):
            continue
        ex = write(e, target, linked=d.entities)
        there = codec.decode(Sniff(ex.data, f"x{ex.extension}")).primary
        back_ex = write(there, source, linked=[there])
        back = registry.get(source).decode(Sniff(back_ex.data, f"y{back_ex.extension}")).primary
        holds_back = registry.get(source).coverage
        for part, item in (("portrait", "media.portrait"), ("assets", "media.assets[]")):
            for sha in pics[part]:
                want = e.media[sha]
                if codec.coverage.covers(f"{item}.sha256"):
                    assert _kept(want, there), f"{key} -> {target}: {part} {sha[:12]} lost"
                    if holds_back.covers(f"{item}.sha256") or _kept(want, back):
                        assert _kept(want, back), f"{key} -> {target} -> {source}: {part} {sha[:12]} lost"
        row = cross_format(e, codec, pool=d.entities, input=key, source=source, name=name)
        assert row.status != "error", row.error
        media_losses = [x for _, x in row.losses() if x.path.startswith("media.") and x.cls != "info"]
        assert [x for x in media_losses if x.cls == "unexpected"] == [], (key, target)
        for part, item in (("portrait", "media.portrait"), ("assets", "media.assets[]")):
            if pics[part] and not codec.coverage.covers(f"{item}.sha256"):
                # no place for it: the loss is in the report, as expected
                lost = [x for x in media_losses if x.path == item]
                assert lost or all(_kept(e.media[s], there) for s in pics[part]), (key, target, part)
                assert all(x.cls == "expected" for x in lost)


# -- Pillow is bounded ---------------------------------------------------------------------------


def test_images_are_decoded_only_within_bounds_and_only_in_card_formats() -> None:
    import struct
    import zlib

    from PIL import Image

    from bunzai_codecs.core import media

    # a header claiming 100000 x 100000 pixels: refused before any pixel is decoded
    ihdr = struct.pack(">IIBBBBB", 100_000, 100_000, 8, 2, 0, 0, 0)
    bomb = png.build(
        [png.Chunk(b"IHDR", ihdr), png.Chunk(b"IDAT", zlib.compress(b"")), png.Chunk(b"IEND", b"")]
    )
    assert media.pixels_key(bomb) is None
    big = io.BytesIO()
    Image.new("L", (9000, 9000)).save(big, "JPEG")
    with pytest.raises(media.ImageError):
        media.as_png(big.getvalue())
    # a format no card carries is not opened at all
    tiff = io.BytesIO()
    Image.new("RGB", (2, 2)).save(tiff, "TIFF")
    with pytest.raises(media.ImageError):
        media.as_png(tiff.getvalue())
    webp = io.BytesIO()
    Image.new("RGB", (2, 2), (10, 20, 30)).save(webp, "WEBP", lossless=True)
    out = media.as_png(webp.getvalue())
    assert sniff_mime(out) == "image/png" and pixels_key(out) == pixels_key(webp.getvalue())


def test_a_png_card_whose_portrait_cannot_be_read_gets_the_default_portrait_and_says_so() -> None:
    """A portrait that is no readable image (truncated bytes) cannot become a PNG card's picture:
    the default portrait is written, and the conversion reports the portrait as changed."""
    from bunzai_codecs.core.media import default_portrait_png

    d = read(sample("marinara/character.vesna.marinara.json"), "v.marinara.json")
    e = d.primary
    p = e.body.media.portrait  # type: ignore[attr-defined]
    broken = b"\xff\xd8\xff\xe0" + b"\0" * 32  # a JPEG that stops after its marker
    e.body = e.body.model_copy(
        update={
            "media": e.body.media.model_copy(
                update={
                    "portrait": p.model_copy(update={"sha256": digest(broken), "mime": "image/jpeg"}),
                    "assets": None,
                }
            )
        }  # type: ignore[attr-defined]
    )
    e.media = {digest(broken): broken}
    e.source = None  # not from a JSON file: sillytavern writes a PNG card for a portrait
    out = write(e, "sillytavern").data
    assert png_image(out, ("chara", "ccv3")) == default_portrait_png()
    row = cross_format(e, registry.get("sillytavern"), pool=[e], input="v")
    assert [(x.path, x.cls) for x in row.changed if x.path == "media.portrait"] == [
        ("media.portrait", "unexpected")
    ]


def _sideways_jpeg() -> bytes:
    """A 32x16 JPEG, left half red and right half blue, stored with EXIF Orientation 6 (a phone held
    upright: a viewer turns it 90 degrees clockwise and shows 16x32, red on top)."""
    from PIL import Image

    im = Image.new("RGB", (32, 16), (0, 0, 255))
    im.paste((255, 0, 0), (0, 0, 16, 16))
    exif = Image.Exif()
    exif[0x0112] = 6
    out = io.BytesIO()
    im.save(out, format="JPEG", quality=95, exif=exif.tobytes())
    return out.getvalue()


def _shown(data: bytes) -> tuple[tuple[int, int], tuple[int, ...], tuple[int, ...]]:
    """Size, top-centre and bottom-centre pixel of the picture as stored (no EXIF applied)."""
    from PIL import Image

    im = Image.open(io.BytesIO(data)).convert("RGB")
    w, h = im.size
    return im.size, im.getpixel((w // 2, 2)), im.getpixel((w // 2, h - 3))


def test_a_sideways_jpeg_is_written_upright_where_it_is_re_encoded() -> None:
    from bunzai_codecs.core.media import as_jpeg, as_png

    jpeg = _sideways_jpeg()
    for out in (as_png(jpeg), as_jpeg(jpeg)):
        size, top, bottom = _shown(out)
        assert size == (16, 32)
        assert top[0] > 200 and top[2] < 60, top  # red on top, as a viewer showed the source
        assert bottom[2] > 200 and bottom[0] < 60, bottom
    # to the fidelity check the PNG is the same picture: the keys compare what a viewer shows
    assert pixels_key(as_png(jpeg)) == pixels_key(jpeg)


def test_a_card_with_a_sideways_jpeg_portrait_becomes_a_png_card_shown_the_same_way() -> None:
    decoded = read(sample("risu/oswin_the_lamplighter.charx"), "oswin.charx")
    card = decoded.primary
    webp = next(a for a in card.body.media.assets or [] if a.mime == "image/webp")
    jpeg = _sideways_jpeg()
    portrait = webp.model_copy(update={"role": "portrait", "sha256": digest(jpeg), "mime": "image/jpeg"})
    card.body = card.body.model_copy(
        update={"media": card.body.media.model_copy(update={"portrait": portrait, "assets": None})}
    )
    card.media[digest(jpeg)] = jpeg  # type: ignore[index]
    out = write(card, "sillytavern", container="png").data
    size, top, _ = _shown(_portrait_bytes(read(out, "x.png").primary))
    assert size == (16, 32) and top[0] > 200 and top[2] < 60


def _picture(size: tuple[int, int], fmt: str = "PNG", *, dot: tuple[int, int] | None = None, **save) -> bytes:  # type: ignore[no-untyped-def]
    """A gradient picture of ``size``; ``dot``: one pixel there painted another colour."""
    from PIL import Image

    im = Image.new("RGBA", size)
    im.putdata([(x * 7 % 256, y * 11 % 256, 90, 255) for y in range(size[1]) for x in range(size[0])])
    if dot is not None:
        im.putpixel(dot, (255, 0, 255, 255))
    out = io.BytesIO()
    im.save(out, format=fmt, **save)
    return out.getvalue()


def test_the_picture_key_covers_every_pixel_not_only_the_size() -> None:
    """Issue 37: a changed picture of the same size must not pass for a harmless re-encode (the
    fidelity check calls two images with one key "re-encoded (same pixels)")."""
    a = _picture((24, 16))
    for dot in [(0, 0), (23, 15), (11, 7)]:
        b = _picture((24, 16), dot=dot)
        assert len(a) != len(b) or a != b
        assert pixels_key(b) != pixels_key(a), dot
    # the same pixels in other encodings have the same key: that is what the key is for
    for other in (_picture((24, 16), compress_level=0), _picture((24, 16), "WEBP", lossless=True)):
        assert other != a and pixels_key(other) == pixels_key(a)
    # and the size is part of it: the same bytes of pixels in another shape is another picture
    assert pixels_key(_picture((16, 24))) != pixels_key(a)


def test_the_picture_key_covers_the_shape_not_only_the_pixels() -> None:
    """A 2x3 and a 3x2 picture of one colour have the same pixel bytes:
    the key must still tell them apart (a picture written back on its side is a changed picture)."""
    import io

    from PIL import Image

    from bunzai_codecs.core import media

    def png(size: tuple[int, int]) -> bytes:
        buf = io.BytesIO()
        Image.new("RGBA", size, (9, 99, 199, 255)).save(buf, format="PNG")
        return buf.getvalue()

    tall, wide = png((2, 3)), png((3, 2))
    assert media.pixels_key(tall) is not None
    assert media.pixels_key(tall) != media.pixels_key(wide)
