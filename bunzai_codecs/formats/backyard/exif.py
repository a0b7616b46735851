"""EXIF (TIFF) reading and patching for Backyard's legacy PNG cards: the UserComment tag only.

Backyard (formerly Faraday) hid its character export in a PNG ``eXIf`` chunk: a TIFF block whose
Exif IFD carries ``UserComment`` (tag 0x9286, type UNDEFINED) = an 8-byte charset prefix
(``ASCII\\0\\0\\0``) + the JSON, raw or base64. This module walks that block with every offset
checked against its length (a hostile block cannot make it read outside the chunk or loop), finds
the comment, and writes it back: either patched into the original block (every other tag and byte
kept) or as a minimal block of its own. No pixel or other EXIF tag is interpreted.

Every failure is a ``Malformed`` with the byte offset inside the EXIF block.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from bunzai_codecs.core.errors import Malformed, Unsupported

TAG_EXIF_IFD = 0x8769
TAG_USER_COMMENT = 0x9286
TAG_EXIF_VERSION = 0x9000
#: TIFF field type -> bytes per value (1 BYTE ... 13 IFD)
_TYPE_SIZES = {1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8, 13: 4}
_TYPE_LONG, _TYPE_UNDEFINED, _TYPE_IFD = 4, 7, 13
#: no real camera or exporter writes anywhere near this many tags in one IFD
MAX_IFD_ENTRIES = 1024

CHARSET_ASCII = b"ASCII\0\0\0"
_CHARSET_UNICODE = b"UNICODE\0"
_CHARSET_UNDEFINED = b"\0" * 8


@dataclass(frozen=True, slots=True)
class UserComment:
    """Where the UserComment sits in an EXIF block and what it holds."""

    #: the whole tag value: 8-byte charset prefix + the comment
    value: bytes
    #: byte position of the tag's 12-byte IFD entry
    entry_pos: int
    #: byte position of the value (inside the entry when it is 4 bytes or fewer)
    value_pos: int
    #: ``>`` for a big-endian (``MM``) block, ``<`` for little-endian (``II``)
    order: str


def _u16(data: bytes, pos: int, order: str) -> int:
    return int(struct.unpack_from(order + "H", data, pos)[0])


def _u32(data: bytes, pos: int, order: str) -> int:
    return int(struct.unpack_from(order + "I", data, pos)[0])


def byte_order(data: bytes) -> str:
    """The block's byte order; ``Malformed`` when it does not start with a TIFF header."""
    if len(data) < 8:
        raise Malformed("EXIF block is shorter than a TIFF header", offset=0)
    if data[:4] == b"MM\0*":
        return ">"
    if data[:4] == b"II*\0":
        return "<"
    raise Malformed("EXIF block does not start with a TIFF header (MM/II)", offset=0)


def _entries(data: bytes, ifd: int, order: str) -> list[tuple[int, int, int, int]]:
    """``(tag, type, count, entry position)`` of the IFD at ``ifd``, bounds-checked."""
    if ifd < 8 or ifd + 2 > len(data):
        raise Malformed("EXIF IFD offset points outside the block", offset=ifd)
    n = _u16(data, ifd, order)
    if n > MAX_IFD_ENTRIES:
        raise Malformed(f"EXIF IFD declares {n} entries", offset=ifd)
    if ifd + 2 + 12 * n > len(data):
        raise Malformed("EXIF IFD runs past the end of the block", offset=ifd)
    out = []
    for i in range(n):
        pos = ifd + 2 + 12 * i
        tag, typ = _u16(data, pos, order), _u16(data, pos + 2, order)
        out.append((tag, typ, _u32(data, pos + 4, order), pos))
    return out


def find_user_comment(data: bytes) -> UserComment | None:
    """The UserComment of an EXIF block, or ``None`` when the block has no Exif IFD or no comment."""
    order = byte_order(data)
    ifd0 = _u32(data, 4, order)
    exif_ifd = None
    for tag, typ, count, pos in _entries(data, ifd0, order):
        if tag == TAG_EXIF_IFD:
            if typ not in (_TYPE_LONG, _TYPE_IFD) or count != 1:
                raise Malformed("EXIF IFD pointer has a wrong type or count", offset=pos)
            exif_ifd = _u32(data, pos + 8, order)
            break
    if exif_ifd is None:
        return None
    for tag, typ, count, pos in _entries(data, exif_ifd, order):
        if tag != TAG_USER_COMMENT:
            continue
        size = _TYPE_SIZES.get(typ)
        if size is None:
            raise Malformed(f"EXIF UserComment has unknown field type {typ}", offset=pos)
        length = size * count
        start = pos + 8 if length <= 4 else _u32(data, pos + 8, order)
        if start + length > len(data):
            raise Malformed("EXIF UserComment runs past the end of the block", offset=pos)
        return UserComment(data[start : start + length], pos, start, order)
    return None


def comment_text(uc: UserComment) -> bytes:
    """The comment without its charset prefix and trailing NUL padding, as UTF-8 bytes."""
    if len(uc.value) < 8:
        raise Malformed("EXIF UserComment is shorter than its charset prefix", offset=uc.entry_pos)
    prefix, body = uc.value[:8], uc.value[8:]
    if prefix == _CHARSET_UNICODE:
        codec = "utf-16-be" if uc.order == ">" else "utf-16-le"
        try:
            body = body.decode(codec).encode("utf-8")
        except UnicodeDecodeError:
            raise Malformed("EXIF UserComment is not valid UTF-16", offset=uc.value_pos) from None
    elif prefix != CHARSET_ASCII and prefix != _CHARSET_UNDEFINED:
        raise Unsupported(f"EXIF UserComment charset {prefix!r}", offset=uc.value_pos)
    return body.rstrip(b"\0").strip()


def user_comment_value(text: bytes) -> bytes:
    """A UserComment value for ``text``: the ASCII charset prefix + the text (as Backyard writes)."""
    return CHARSET_ASCII + text


def replace_user_comment(data: bytes, uc: UserComment, value: bytes) -> bytes:
    """``data`` with the UserComment value swapped for ``value`` and every other byte kept.

    When the old value ends the block (as every Backyard export has it) the block is cut there and
    the new value written in its place; otherwise the new value is appended (word-aligned), the old
    bytes are zeroed so no stale copy survives, and only the entry's count and offset change.
    """
    if len(value) <= 4:
        raise ValueError("a UserComment value carries an 8-byte charset prefix")
    order = uc.order
    old_end = uc.value_pos + len(uc.value)
    inline = len(uc.value) <= 4
    if not inline and not data[old_end:].strip(b"\0") and len(data) - old_end <= 1:
        out = bytearray(data[: uc.value_pos])
        start = uc.value_pos
    else:
        out = bytearray(data)
        if not inline:
            out[uc.value_pos : old_end] = bytes(len(uc.value))
        if len(out) % 2:
            out.append(0)
        start = len(out)
    out += value
    if len(out) % 2:
        out.append(0)
    struct.pack_into(order + "I", out, uc.entry_pos + 4, len(value))
    struct.pack_into(order + "I", out, uc.entry_pos + 8, start)
    return bytes(out)


def build_exif(value: bytes) -> bytes:
    """A minimal big-endian EXIF block: IFD0 -> Exif IFD with ExifVersion 0232 and the UserComment."""
    ifd0, exif_ifd = 8, 8 + 2 + 12 + 4
    value_pos = exif_ifd + 2 + 2 * 12 + 4
    out = bytearray(b"MM\0*" + struct.pack(">I", ifd0))
    out += struct.pack(">H", 1) + struct.pack(">HHII", TAG_EXIF_IFD, _TYPE_LONG, 1, exif_ifd) + bytes(4)
    out += struct.pack(">H", 2)
    out += struct.pack(">HHI", TAG_EXIF_VERSION, _TYPE_UNDEFINED, 4) + b"0232"
    out += struct.pack(">HHII", TAG_USER_COMMENT, _TYPE_UNDEFINED, len(value), value_pos) + bytes(4)
    out += value
    if len(out) % 2:
        out.append(0)
    return bytes(out)
