"""Detection of Backyard.ai's files (a legacy PNG with an EXIF UserComment card, a .byaf archive);
imports no canonical model."""

from __future__ import annotations

import base64
import binascii
import re
from typing import TYPE_CHECKING, Any

from bunzai_codecs.core import png
from bunzai_codecs.core.errors import BunzaiError, Malformed
from bunzai_codecs.core.format import package_detector
from bunzai_codecs.core.sniff import Sniff, parse_json

if TYPE_CHECKING:
    from bunzai_codecs.core.archive import ZipReader
    from bunzai_codecs.formats.backyard import exif

EXIF_CHUNK = b"eXIf"

_BASE64 = re.compile(rb"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")


def exif_chunk(pf: png.PngFile) -> png.Chunk | None:
    return next((c for c in pf.chunks if c.type == EXIF_CHUNK), None)


def read_comment(chunk: png.Chunk) -> tuple[exif.UserComment, bytes] | None:
    """The UserComment of the chunk and its text; offsets in errors are file offsets."""
    from bunzai_codecs.formats.backyard import exif  # only a PNG with an eXIf chunk gets here

    try:
        uc = exif.find_user_comment(chunk.data)
        return None if uc is None else (uc, exif.comment_text(uc))
    except BunzaiError as exc:
        if exc.offset is not None and chunk.offset >= 0:
            exc.offset += chunk.offset + 8
        raise


def parse_payload(text: bytes) -> tuple[Any, str]:
    """The JSON tree of a UserComment and how it was stored (``raw`` or ``base64``)."""
    if text.startswith(b"{"):
        return parse_json(text, what="EXIF UserComment JSON"), "raw"
    if text and _BASE64.fullmatch(text):
        try:
            decoded = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise Malformed("EXIF UserComment is not valid base64") from None
        return parse_json(decoded, what="base64 JSON in the EXIF UserComment"), "base64"
    raise Malformed("EXIF UserComment is neither JSON nor base64 JSON")


def _starts_like_json(text: bytes) -> bool:
    if text.startswith(b"{"):
        return True
    try:
        return base64.b64decode(text[:4], validate=True).startswith(b"{")
    except (binascii.Error, ValueError):
        return False


MANIFEST = "manifest.json"

_CHARACTER_PATH = re.compile(r"^characters/([^/]+)/character\.json$")


def legacy(s: Sniff) -> float:
    if not s.is_png or s.png is None:
        return 0.0
    chunk = exif_chunk(s.png)
    if chunk is None:
        return 0.0
    try:
        found = read_comment(chunk)
    except BunzaiError:
        return 0.0
    if found is None:
        return 0.0
    text = found[1]
    try:
        tree, _ = parse_payload(text)
    except BunzaiError:
        # a comment that starts like JSON is ours to reject with a precise error
        return 0.55 if _starts_like_json(text) else 0.0
    if isinstance(tree, dict) and isinstance(tree.get("character"), dict):
        return 1.0
    return 0.0


def _has_manifest(z: ZipReader) -> bool:
    return MANIFEST in z


byaf = package_detector(".byaf", _CHARACTER_PATH, _has_manifest)
