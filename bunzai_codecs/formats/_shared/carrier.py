"""The image a PNG card is: read as the portrait, written from the portrait.

Formats that live in a PNG (a Tavern ``chara``/``ccv3`` card, a Pygmalion PNG, Backyard's EXIF
card, a Risu persona, a RoleCall persona PNG, a NovelAI ``naidata`` book) carry the picture as the
file itself. Decoding such a file gives the portrait the bytes of the file *without the card's own
payload chunks* (``core.media.png_image``): the picture, not the card, so the same picture read from
two apps' cards has one digest. A card whose body names no portrait of its own gets the card-image
portrait ``{ref: "ccdefault:", name: "main", primary: true, mime: "image/png"}`` (CCv3's "the card's
own image").

Writing a PNG card, :func:`choose` picks the image, in order:

1. ``EmitContext.options["image"]``: bytes the caller supplies (``bunzai convert --image``);
2. the portrait's bytes from the media store: the file the entity was read from when its picture is
   that portrait (so every other chunk keeps its bytes and place), else the portrait itself,
   re-encoded to PNG with Pillow when it is not one (a JPEG or WebP portrait: the pixels are kept);
3. a small default portrait (SillyTavern gives a card without an image its default avatar); a
   fidelity check sees the portrait the card then has as added.

Card payload chunks of every app (``chara``, ``ccv3``, Risu's asset chunks) are removed from a
borrowed image, so the export is never also a stale card of another format.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from bunzai_codecs.core import media
from bunzai_codecs.core.codec import EmitContext
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.errors import BunzaiError
from bunzai_codecs.entities.base import Body
from bunzai_codecs.entities.character import MediaAsset

CARD_IMAGE_REF = media.CARD_IMAGE_REF
#: text chunks that hold a card (of any app): never part of the picture
CARD_PAYLOAD_KEYWORDS = ("chara", "ccv3", "chara-ext-asset_")
PORTRAIT = "media.portrait"
#: refs that point into a container a PNG card does not have (a charx member, a Risu asset chunk):
#: a PNG card's portrait with such a ref is the card image itself
_CONTAINER_REFS = ("ccdefault:", "embeded://", "embedded://", "__asset:")


def card_image_portrait() -> dict[str, Any]:
    """The portrait of a character whose picture is the PNG file it was read from."""
    return {"role": "portrait", "ref": CARD_IMAGE_REF, "name": "main", "primary": True, "mime": "image/png"}


def is_card_image_ref(ref: str) -> bool:
    """A portrait ref that, in a PNG card, can only mean the card's own image."""
    return ref[:12].lower().startswith(_CONTAINER_REFS)


def portrait_resolver(image: bytes) -> media.Resolver:
    """Decode side: the portrait of a PNG card whose ref means the card image gets ``image``."""

    def resolve(path: str, a: MediaAsset) -> bytes | None:
        return image if path == PORTRAIT and is_card_image_ref(a.ref) else None

    return resolve


def picture(
    data: bytes, strip: tuple[str, ...] = (), strip_types: tuple[bytes, ...] = (), *, parsed: Any = None
) -> bytes:
    """The picture of a PNG card: ``data`` without every app's card chunks, ``strip`` and
    ``strip_types`` (a format's own payload)."""
    return media.png_image(data, CARD_PAYLOAD_KEYWORDS + strip, strip_types, parsed=parsed)


Source = Literal["option", "twin", "portrait", "default"]


@dataclass(frozen=True)
class Carrier:
    """The PNG a card is written into and where it came from (see the module docstring)."""

    image: bytes
    source: Source


def choose(
    entity: CanonicalEntity,
    ctx: EmitContext,
    *,
    twin_png: bytes | None = None,
    strip: tuple[str, ...] = (),
    strip_types: tuple[bytes, ...] = (),
) -> Carrier:
    """The image to write a PNG card of ``entity`` into. ``twin_png`` is the file the entity was
    read from in this format (used as is when its picture is still the portrait); ``strip`` and
    ``strip_types`` name this format's payload chunks (removed from any other image)."""
    given = ctx.options.get("image")
    if isinstance(given, bytes | bytearray):
        png = _as_png(bytes(given))
        if png is not None:
            return Carrier(picture(png, strip, strip_types), "option")
    portrait = getattr(getattr(entity.body, "media", None), "portrait", None)
    data = media.bytes_of(entity.media, portrait)
    if twin_png is not None and (data is None or _picture_of(twin_png, strip, strip_types) == data):
        return Carrier(twin_png, "twin")
    if data is not None:
        png = _as_png(data)
        if png is not None:
            return Carrier(picture(png, strip, strip_types), "portrait")
    return Carrier(media.default_portrait_png(), "default")


def _as_png(data: bytes) -> bytes | None:
    try:
        png = media.as_png(data)
        from bunzai_codecs.core import png as pngmod

        pngmod.parse(png, skip_crc=pngmod.IMAGE_DATA)  # a carrier's pixels are kept as read
    except (media.ImageError, BunzaiError):
        return None
    return png


def _picture_of(data: bytes, strip: tuple[str, ...], strip_types: tuple[bytes, ...]) -> bytes | None:
    """The picture of PNG ``data`` (compared with the portrait's bytes, not hashed), or None."""
    try:
        return picture(data, strip, strip_types)
    except BunzaiError:
        return None


def card_body(entity: CanonicalEntity, carrier: Carrier, *, inline_assets: bool = True) -> Body:
    """The body a PNG card's payload is written from (``core.media.wire``): a portrait that is
    the carrier image gets the card-image ref (a twin's own ref is kept); every other asset with
    bytes becomes a ``data:`` URL (``inline_assets``) so the card still holds it."""
    body = entity.body
    portrait = getattr(getattr(body, "media", None), "portrait", None)
    if carrier.source != "twin":
        fields = {"ref": CARD_IMAGE_REF, "mime": "image/png", "sha256": None, "size": None}
        if portrait is not None and (portrait.sha256 is not None or carrier.source == "option"):
            portrait = portrait.model_copy(update=fields)
        elif portrait is None and carrier.source == "option":
            portrait = MediaAsset.model_validate(card_image_portrait())
        if portrait is not getattr(body.media, "portrait", None):  # type: ignore[attr-defined]
            m = body.media.model_copy(update={"portrait": portrait})  # type: ignore[attr-defined]
            body = body.model_copy(update={"media": m})
    return media.wire(body, entity.media, inline=lambda path, _a: inline_assets and path != PORTRAIT)


__all__ = [
    "CARD_IMAGE_REF",
    "CARD_PAYLOAD_KEYWORDS",
    "Carrier",
    "card_body",
    "card_image_portrait",
    "choose",
    "is_card_image_ref",
    "picture",
    "portrait_resolver",
]
