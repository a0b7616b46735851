"""The image a PNG card is written into when the entity did not come from that PNG format.

Character formats that live in a PNG (a Tavern ``chara`` card, a Pygmalion PNG, Backyard's EXIF
card) carry the picture as the file itself. A card decoded from such a PNG has the card-image
portrait ``{ref: "ccdefault:", name: "main", primary: true, mime: "image/png"}`` (CCv3's "the
card's own image", the convention the ``sillytavern`` codec set) and keeps the file's bytes in its
escrow twin. When another PNG format exports that entity it looks, in order, for:

1. ``EmitContext.options["image"]``: PNG bytes the caller supplies;
2. a portrait that is an inline ``data:image/png;base64,...`` image;
3. a card-image portrait (``ccdefault:``) and a PNG file in any of the entity's escrow twins: the
   picture of the card it was read from;
4. a 1x1 transparent placeholder.

Card payload chunks of other apps (``chara``, ``ccv3``) are removed from a borrowed image, so the
export is not also a stale card of another format.
"""

from __future__ import annotations

import base64
import binascii
import zlib
from collections.abc import Collection
from typing import Any

from bunzai_codecs.core import png
from bunzai_codecs.core.codec import EmitContext
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.errors import BunzaiError
from bunzai_codecs.entities.character import CharacterBody

CARD_IMAGE_REF = "ccdefault:"
CARD_PAYLOAD_KEYWORDS = ("chara", "ccv3")
_DATA_PNG = "data:image/png;base64,"


def card_image_portrait() -> dict[str, Any]:
    """The portrait of a character whose picture is the PNG file it was read from."""
    return {"role": "portrait", "ref": CARD_IMAGE_REF, "name": "main", "primary": True, "mime": "image/png"}


def placeholder_png() -> bytes:
    """A 1x1 transparent RGBA PNG, byte-for-byte the same every time."""
    ihdr = b"\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0"
    idat = zlib.compress(b"\0\0\0\0\0", 9)
    return png.build([png.Chunk(b"IHDR", ihdr), png.Chunk(b"IDAT", idat), png.Chunk(b"IEND", b"")])


def _png(data: Any) -> bytes | None:
    if not isinstance(data, bytes | bytearray) or bytes(data[:8]) != png.PNG_SIGNATURE:
        return None
    try:
        png.parse(bytes(data))
    except BunzaiError:
        return None
    return bytes(data)


def carrier_png(
    entity: CanonicalEntity, ctx: EmitContext, *, strip: Collection[str] = CARD_PAYLOAD_KEYWORDS
) -> bytes:
    """The image a fresh PNG export of ``entity`` is written into (see the module docstring)."""
    found = _png(ctx.options.get("image"))
    body = entity.body
    portrait = body.media.portrait if isinstance(body, CharacterBody) else None
    if found is None and portrait is not None and portrait.ref.startswith(_DATA_PNG):
        try:
            found = _png(base64.b64decode(portrait.ref[len(_DATA_PNG) :], validate=True))
        except (binascii.Error, ValueError):
            found = None
    if found is None and portrait is not None and portrait.ref == CARD_IMAGE_REF:
        found = _escrowed_png(entity)
    if found is None:
        return placeholder_png()
    return png.replace_text(found, remove=strip) if strip else found


def _escrowed_png(entity: CanonicalEntity) -> bytes | None:
    for env in entity.original.values():
        blobs = env.get("blobs") if isinstance(env, dict) else None
        for data in (blobs or {}).values():
            found = _png(data)
            if found is not None:
                return found
    return None


def card_image(entity: CanonicalEntity) -> bytes | None:
    """The picture of the PNG card ``entity`` was read from (step 3 above), without the card
    payload chunks of any app; None when its portrait is not the card image or no PNG is in escrow."""
    body = entity.body
    portrait = body.media.portrait if isinstance(body, CharacterBody) else None
    if portrait is None or portrait.ref != CARD_IMAGE_REF:
        return None
    found = _escrowed_png(entity)
    return png.replace_text(found, remove=CARD_PAYLOAD_KEYWORDS) if found is not None else None
