"""Media as canonical data: images and other files a card carries, kept by digest.

A body never holds media bytes. Each ``MediaAsset`` a file carried the bytes of has a ``sha256``
and a ``size``; the bytes are in the entity's media store (``CanonicalEntity.media``: digest ->
bytes), which every encoder reads. An asset known only by reference (a web URL, an app path) has
a ``ref`` and no digest.

Decoders map their file as before (``ref`` is where the file keeps the bytes: ``ccdefault:``,
``embeded://assets/...``, an archive path, a ``data:`` URL) and hand ``Codec.entity`` a resolver
(asset -> bytes or None); :func:`bind` then digests the bytes into the store. An inline ``data:``
URL is bound by everyone: its ``ref`` keeps only the header (``data:image/png;base64,``) and the
payload goes to the store (a URL whose base64 is not canonical keeps its whole text, so it is
written back exactly).

Encoders call :func:`wire` first: the inverse of ``bind`` (a bare ``data:`` header gets its
payload back; digests and sizes are dropped), so a body read from a file compares equal to the
body its twin maps to (the same-format overlay keeps working) and mappers that write refs verbatim
are unchanged; ``inline`` names the assets whose bytes the target cannot point at, which become
``data:`` URLs (a zip format turns those into members, a data-URL format writes them as they are).

Images that must change container (a WebP portrait as the image of a PNG card) are re-encoded with
Pillow (:func:`as_png`); pixels, not bytes, are then what a fidelity check compares
(:func:`pixels_key`). Every decode is bounded: at most ``MAX_PIXELS`` pixels, checked from the
header before any pixel is decoded, and only the formats cards carry (``PILLOW_FORMATS``) are
opened at all.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import re
import struct
import zlib
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from functools import cache
from typing import TYPE_CHECKING, Any

from bunzai_codecs.core.seal import TrackedList

if TYPE_CHECKING:
    from bunzai_codecs.entities.base import Body
    from bunzai_codecs.entities.character import MediaAsset

#: the largest image (in pixels) bunzai decodes to re-encode or compare it: 8192 x 8192
MAX_PIXELS = 8192 * 8192
#: the image formats Pillow may open (what cards carry; not EPS, PSD, TIFF or other decoders)
PILLOW_FORMATS = ("PNG", "JPEG", "WEBP", "GIF", "BMP", "AVIF")

#: the ``ref`` of a PNG card's own image (CCv3's "default icon")
CARD_IMAGE_REF = "ccdefault:"

#: file suffix -> media type, for refs and archive members that name a type
EXT_MIME: dict[str, str] = {
    "png": "image/png",
    "apng": "image/apng",
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "jfif": "image/jpeg",
    "webp": "image/webp",
    "gif": "image/gif",
    "avif": "image/avif",
    "bmp": "image/bmp",
    "svg": "image/svg+xml",
    "mp3": "audio/mpeg",
    "ogg": "audio/ogg",
    "wav": "audio/wav",
    "flac": "audio/flac",
    "mp4": "video/mp4",
    "webm": "video/webm",
}

#: media type -> the suffix files of that type are written with
MIME_EXT: dict[str, str] = {
    "image/png": "png",
    "image/apng": "apng",
    "image/jpeg": "jpg",
    "image/webp": "webp",
    "image/gif": "gif",
    "image/avif": "avif",
    "image/bmp": "bmp",
    "image/svg+xml": "svg",
    "audio/mpeg": "mp3",
    "audio/ogg": "ogg",
    "audio/wav": "wav",
    "audio/flac": "flac",
    "video/mp4": "mp4",
    "video/webm": "webm",
    "font/ttf": "ttf",
    "font/otf": "otf",
    "font/woff": "woff",
    "font/woff2": "woff2",
}

#: the coverage paths of a format that holds the portrait's bytes / every other asset's bytes
PORTRAIT_BYTES = ("media.portrait.sha256", "media.portrait.size")
ASSET_BYTES = ("media.assets[].sha256", "media.assets[].size")

#: the body sections that hold media, per entity kind: (portrait?, assets?)
_SECTIONS = {"character": (True, True), "persona": (True, False), "lorebook": (True, False)}


def digest(data: bytes) -> str:
    """The store key of ``data``: lowercase hex SHA-256."""
    return hashlib.sha256(data).hexdigest()


#: what a file's first bytes say it is: (media type, pattern matched at the start), the first row
#: that matches winning (``.`` is any byte)
_SIGNATURES: tuple[tuple[str, re.Pattern[bytes]], ...] = tuple(
    (mime, re.compile(pattern, re.DOTALL))
    for mime, pattern in (
        ("image/png", rb"\x89PNG\r\n\x1a\n"),
        ("image/jpeg", rb"\xff\xd8\xff"),
        ("image/gif", rb"GIF8[79]a"),
        ("image/webp", rb"RIFF.{4}WEBP"),
        ("audio/wav", rb"RIFF.{4}WAVE"),
        ("image/avif", rb".{4}ftypavi[fs]"),
        ("video/mp4", rb".{4}ftyp"),
        ("image/bmp", rb"BM"),
        # an ID3 tag, or an MPEG audio frame's 11 sync bits
        ("audio/mpeg", rb"ID3|\xff[\xe0-\xff]"),
        ("audio/ogg", rb"OggS"),
        ("audio/flac", rb"fLaC"),
        ("video/webm", rb"\x1a\x45\xdf\xa3"),
        ("font/ttf", rb"\x00\x01\x00\x00|true"),
        ("font/otf", rb"OTTO"),
        ("font/woff", rb"wOFF"),
        ("font/woff2", rb"wOF2"),
    )
)


def sniff_mime(b: bytes) -> str | None:
    """The media type the bytes really are (never the file name)."""
    for mime, signature in _SIGNATURES:
        if signature.match(b):
            return mime
    return None


def extension(mime: str | None, data: bytes | None = None) -> str:
    """The file suffix (without the dot) for bytes of ``mime`` (sniffed from ``data`` first)."""
    true = sniff_mime(data) if data is not None else None
    return MIME_EXT.get(true or mime or "", "bin")


# -- data: URLs -----------------------------------------------------------------------------------


def parse_data_url(ref: str) -> tuple[str, bytes, bool] | None:
    """``(header, bytes, canonical)`` of a ``data:`` URL: ``header`` is the text up to and including
    the comma, ``canonical`` whether the payload is exactly the base64 of the bytes (so ``header +
    base64(bytes)`` spells the URL again). None when ``ref`` is not a readable data URL."""
    if not ref.startswith("data:"):
        return None
    comma = ref.find(",")
    if comma < 0:
        return None
    header, payload = ref[: comma + 1], ref[comma + 1 :]
    if header.lower().endswith(";base64,"):
        try:
            data = base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            try:
                data = base64.b64decode("".join(payload.split()) + "=" * (-len(payload.strip()) % 4))
            except (binascii.Error, ValueError):
                return None
        return header, data, base64.b64encode(data).decode("ascii") == payload
    from urllib.parse import unquote_to_bytes

    return header, unquote_to_bytes(payload), False


def data_url(mime: str | None, data: bytes) -> str:
    """``data:<mime>;base64,<payload>``; the type sniffed from the bytes wins over ``mime``."""
    kind = sniff_mime(data) or mime or "application/octet-stream"
    return f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}"


def is_data_header(ref: str) -> bool:
    """A ``ref`` that is only the header of an inline data URL (its payload is in the store)."""
    return ref.startswith("data:") and ref.endswith(",")


# -- the body's media items -----------------------------------------------------------------------


def items(body: Any) -> Iterator[tuple[str, MediaAsset]]:
    """``(path, asset)`` for every media item of a body: ``media.portrait``, ``media.assets[i]``."""
    media = getattr(body, "media", None)
    if media is None:
        return
    portrait = getattr(media, "portrait", None)
    if portrait is not None:
        yield "media.portrait", portrait
    for i, a in enumerate(getattr(media, "assets", None) or ()):
        yield f"media.assets[{i}]", a


def _replace(body: Body, fn: Callable[[str, MediaAsset], MediaAsset | None]) -> Body:
    """``body`` with ``fn(path, item)`` applied to each media item (None drops it); the body itself
    when nothing changed (no copy)."""
    media = getattr(body, "media", None)
    if media is None:
        return body
    update: dict[str, Any] = {}
    portrait = getattr(media, "portrait", None)
    if portrait is not None:
        new = fn("media.portrait", portrait)
        if new is not portrait:
            update["portrait"] = new
    assets = getattr(media, "assets", None)
    if assets:
        out = [fn(f"media.assets[{i}]", a) for i, a in enumerate(assets)]
        if any(n is not a for n, a in zip(out, assets, strict=True)):
            # a list whose in-place edits count, as validation builds them (``core.seal``)
            update["assets"] = TrackedList(a for a in out if a is not None) or None
    if not update:
        return body
    return body.model_copy(update={"media": media.model_copy(update=update)})


#: ``(path, item) -> bytes``: where a decoder finds an item's bytes (``media.portrait`` is the
#: portrait, ``media.assets[i]`` an asset); None when the file does not carry them
Resolver = Callable[[str, "MediaAsset"], bytes | None]


def bind(
    body: Body,
    store: MutableMapping[str, bytes],
    resolve: Resolver | None = None,
    *,
    hasher: Callable[[bytes], str] = digest,
) -> Body:
    """Give every media item whose bytes the file carried its digest and size, and put the bytes in
    ``store``: the bytes ``resolve`` finds for the item (a zip member, the PNG itself), else those of
    an inline ``data:`` URL, whose ``ref`` then keeps only its header (see the module docstring).
    A ``mime`` the source states is kept; a missing one is sniffed. ``hasher`` computes a digest
    (a decoder's ``Sniff.digest_of``: a PNG card's picture shares its hashing with the file's).
    Returns a new body (or ``body`` when it has no such item); nothing is mutated."""

    def one(path: str, a: MediaAsset) -> MediaAsset:
        if a.sha256 is not None:
            return a
        data = resolve(path, a) if resolve is not None else None
        ref = a.ref
        if data is None:
            parsed = parse_data_url(a.ref)
            if parsed is None:
                return a
            header, data, canonical = parsed
            if not data:
                return a  # an empty URL (or a bare header): nothing to keep
            if canonical:
                ref = header
        key = hasher(data)
        store[key] = data
        return a.model_copy(
            update={"ref": ref, "sha256": key, "size": len(data), "mime": a.mime or sniff_mime(data)}
        )

    return _replace(body, one)


def wire(
    body: Body, store: Mapping[str, bytes], inline: Callable[[str, MediaAsset], bool] | None = None
) -> Body:
    """The body as a mapper that writes refs sees it (the inverse of :func:`bind`): a bare ``data:``
    header gets its payload back, digests and sizes are dropped, and each item with bytes for which
    ``inline`` says the target cannot point at its ref becomes a ``data:`` URL of its bytes."""

    def one(path: str, a: MediaAsset) -> MediaAsset:
        if a.sha256 is None:
            return a
        data = store.get(a.sha256)
        update: dict[str, Any] = {"sha256": None, "size": None}
        if data is not None:
            if is_data_header(a.ref):
                update["ref"] = a.ref + base64.b64encode(data).decode("ascii")
            elif inline is not None and inline(path, a):
                update["ref"] = data_url(a.mime, data)
                update["mime"] = sniff_mime(data) or a.mime
        return a.model_copy(update=update)

    return _replace(body, one)


def unbound(body: Body) -> Body:
    """``body`` without digests and sizes: what the file's own mapping gives, for a twin check that
    only asks whether the text changed (the bytes are compared on their own)."""

    def one(path: str, a: MediaAsset) -> MediaAsset:
        return a if a.sha256 is None else a.model_copy(update={"sha256": None, "size": None})

    return _replace(body, one)


def bytes_of(store: Mapping[str, bytes], a: MediaAsset | None) -> bytes | None:
    """The bytes of a media item, if the store has them."""
    if a is None or a.sha256 is None:
        return None
    return store.get(a.sha256)


def store_for(body: Body, store: Mapping[str, bytes]) -> dict[str, bytes]:
    """The part of ``store`` the body's media items reference (what an entity must carry)."""
    out: dict[str, bytes] = {}
    for _, a in items(body):
        if a.sha256 is not None and a.sha256 in store:
            out[a.sha256] = store[a.sha256]
    return out


# -- PNG images -----------------------------------------------------------------------------------


def png_image(
    data: bytes, strip: tuple[str, ...] = (), strip_types: tuple[bytes, ...] = (), *, parsed: Any = None
) -> bytes:
    """The picture of a PNG card: the file without the text chunks named ``strip`` (a card's payload,
    matched case-insensitively, keyword prefixes ending in ``_`` match any suffix) and without
    chunks of ``strip_types`` (Backyard's ``eXIf``). Every other chunk keeps its bytes and place."""
    from bunzai_codecs.core import png

    # the pixels are kept as read, their CRC too (as ``Sniff.png`` reads them)
    pf = parsed if parsed is not None else png.parse(data, skip_crc=png.IMAGE_DATA)
    exact = {k.lower() for k in strip if not k.endswith("_")}
    prefixes = tuple(k.lower() for k in strip if k.endswith("_"))
    kept = []
    for c in pf.chunks:
        if c.type in strip_types:
            continue
        kw = png.keyword_of(c)
        if kw is not None and (kw in exact or (prefixes and kw.startswith(prefixes))):
            continue
        kept.append(c)
    if len(kept) == len(pf.chunks):
        return data
    return png.build(kept, pf.trailing)


def default_portrait_png() -> bytes:
    """A small valid portrait for a PNG card written without any image (SillyTavern gives such a
    card its default avatar): a 64x64 grey silhouette, byte-for-byte the same every time."""
    return _default_portrait()


@cache
def _default_portrait() -> bytes:
    from bunzai_codecs.core import png

    w = h = 64
    rows = bytearray()
    for y in range(h):
        rows.append(0)
        for x in range(w):
            dx, hy, by = x - 32, y - 22, y - 64
            head = dx * dx + hy * hy <= 12 * 12
            shoulders = dx * dx + by * by <= 28 * 28
            rows += b"\x9a\xa4\xb0" if head or shoulders else b"\xe4\xe8\xee"
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    idat = zlib.compress(bytes(rows), 9)
    return png.build([png.Chunk(b"IHDR", ihdr), png.Chunk(b"IDAT", idat), png.Chunk(b"IEND", b"")])


class ImageError(ValueError):
    """Bytes that are not an image Pillow reads within the bounds."""


def _open(data: bytes) -> Any:
    import warnings

    from PIL import Image

    Image.init()
    try:
        with warnings.catch_warnings():
            # Pillow's own bomb check warns above its default bound: an error here, before any pixel
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            im = Image.open(io.BytesIO(data), formats=[f for f in PILLOW_FORMATS if f in Image.OPEN])
    except Exception as exc:  # Pillow raises many types for unreadable input
        raise ImageError(f"not an image Pillow reads: {type(exc).__name__}") from None
    w, h = im.size
    if w <= 0 or h <= 0 or w * h > MAX_PIXELS:
        raise ImageError(f"image of {w}x{h} pixels is above the {MAX_PIXELS}-pixel bound")
    return im


class _Memo:
    """A few results keyed by the input's digest (never by the bytes: the cache must not hold them)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.kept: dict[str, Any] = {}

    def get(self, key: str, make: Callable[[], Any]) -> Any:
        if key in self.kept:
            value = self.kept.pop(key)
        else:
            value = make()
            while len(self.kept) >= self.size:
                self.kept.pop(next(iter(self.kept)))
        self.kept[key] = value
        return value


#: EXIF Orientation (tag 0x0112): how a viewer turns the stored pixels to show them (1: as stored)
_ORIENTATION = 0x0112


def _upright(im: Any) -> Any:
    """``im`` as a viewer shows it: turned by its EXIF Orientation (browsers, and so the apps, honour
    it), the tag dropped. A re-encoded picture has no EXIF block, so without this a phone photo
    stored sideways with an Orientation tag would be written, and shown, sideways."""
    try:
        turn = im.getexif().get(_ORIENTATION, 1)
    except Exception:  # an unreadable EXIF block: a viewer shows the pixels as stored
        return im
    if turn not in range(2, 9):
        return im
    from PIL import ImageOps

    return ImageOps.exif_transpose(im)


_PNG_MEMO = _Memo(4)
_PIXEL_MEMO = _Memo(256)


def _encode_png(data: bytes) -> bytes | ImageError:
    try:
        im = _open(data)
        im.load()
        im = _upright(im)
        if im.mode not in ("RGB", "RGBA", "L", "LA", "P", "1", "I", "I;16"):
            im = im.convert("RGBA")
        out = io.BytesIO()
        im.save(out, format="PNG", optimize=False, compress_level=6)
    except ImageError as exc:
        return exc
    except Exception as exc:
        return ImageError(f"image could not be re-encoded: {type(exc).__name__}")
    return out.getvalue()


def as_png(data: bytes) -> bytes:
    """``data`` as PNG bytes: itself when it already is a PNG, else re-encoded (first frame of an
    animation, turned upright by its EXIF Orientation) with Pillow. Raises ``ImageError`` for bytes
    that are no readable image."""
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return data
    out = _PNG_MEMO.get(digest(data), lambda: _encode_png(data))
    if isinstance(out, ImageError):
        raise out
    assert isinstance(out, bytes)
    return out


def as_jpeg(data: bytes) -> bytes:
    """``data`` rendered as a JPEG (quality 90, alpha flattened on white, turned upright by its EXIF
    Orientation), as RisuAI renders the picture of a JPEG+ZIP card. Raises ``ImageError`` for bytes
    that are no readable image."""
    try:
        im = _open(data)
        im.load()
        im = _upright(im)
        if im.mode in ("RGBA", "LA", "P"):
            rgba = im.convert("RGBA")
            from PIL import Image

            flat = Image.new("RGB", rgba.size, (255, 255, 255))
            flat.paste(rgba, mask=rgba.getchannel("A"))
            im = flat
        elif im.mode != "RGB":
            im = im.convert("RGB")
        out = io.BytesIO()
        im.save(out, format="JPEG", quality=90)
    except ImageError:
        raise
    except Exception as exc:
        raise ImageError(f"image could not be re-encoded: {type(exc).__name__}") from None
    return out.getvalue()


def _pixels(data: bytes) -> str | None:
    try:
        im = _open(data)
        im.load()
        rgba = _upright(im).convert("RGBA")
    except Exception:
        return None
    h = hashlib.sha256(f"{rgba.size[0]}x{rgba.size[1]}:".encode())
    h.update(rgba.tobytes())
    return h.hexdigest()


def pixels_key(data: bytes, key: str | None = None) -> str | None:
    """A digest of the image's pixels as a viewer shows them (first frame, upright by its EXIF
    Orientation, as RGBA) or None when the bytes are not an image Pillow reads within the bounds:
    two encodings of the same picture have the same key. ``key``
    is the bytes' digest when the caller has it."""
    result: str | None = _PIXEL_MEMO.get(key or digest(data), lambda: _pixels(data))
    return result


__all__ = [
    "ASSET_BYTES",
    "CARD_IMAGE_REF",
    "EXT_MIME",
    "MAX_PIXELS",
    "MIME_EXT",
    "PORTRAIT_BYTES",
    "ImageError",
    "Resolver",
    "as_jpeg",
    "as_png",
    "bind",
    "bytes_of",
    "data_url",
    "default_portrait_png",
    "digest",
    "extension",
    "is_data_header",
    "items",
    "parse_data_url",
    "pixels_key",
    "png_image",
    "sniff_mime",
    "store_for",
    "unbound",
    "wire",
]
