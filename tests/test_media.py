"""Media are canonical data: a card's picture and assets reach every format that can hold them.

The bytes of every image a file carries are in the decoded entity's media store, named by digest
from the body (``media.portrait.sha256``); each encoder writes what its format can hold.
"""

from __future__ import annotations

import io
import zipfile

from bunzai_codecs import read, write
from bunzai_codecs.core import png
from bunzai_codecs.core.media import digest, pixels_key, png_image, sniff_mime
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
