"""The bounded EXIF walk that finds Backyard's UserComment, and the patch that swaps it."""

from __future__ import annotations

import struct

import pytest

from bunzai_codecs.core.errors import Malformed, Unsupported
from bunzai_codecs.formats.backyard import exif
from tests.formats.make_samples import exif_block


@pytest.mark.parametrize("little", [False, True])
@pytest.mark.parametrize("last", [False, True])
def test_finds_the_comment_in_either_byte_order_and_layout(little: bool, last: bool) -> None:
    block = exif_block(b'{"a":1}', little=little, comment_last=last)
    uc = exif.find_user_comment(block)
    assert uc is not None
    assert uc.order == ("<" if little else ">")
    assert uc.value == b"ASCII\0\0\0" + b'{"a":1}'
    assert exif.comment_text(uc) == b'{"a":1}'


def _rational(block: bytes, order: str) -> tuple[int, int]:
    """XResolution's value, read by following IFD0's first entry."""
    at = struct.unpack_from(order + "I", block, 8 + 2 + 8)[0]
    return struct.unpack_from(order + "II", block, at)


@pytest.mark.parametrize("little", [False, True])
@pytest.mark.parametrize("last", [False, True])
def test_replace_keeps_every_other_tag_readable(little: bool, last: bool) -> None:
    block = exif_block(b"x" * 40, little=little, comment_last=last)
    uc = exif.find_user_comment(block)
    assert uc is not None
    new_value = exif.user_comment_value(b"y" * 301)
    out = exif.replace_user_comment(block, uc, new_value)
    again = exif.find_user_comment(out)
    assert again is not None and again.value == new_value
    assert _rational(out, uc.order) == (72, 1)
    assert len(out) % 2 == 0
    if last:
        # cut and rewritten in place: only the entry's count changed before the value
        count = slice(uc.entry_pos + 4, uc.entry_pos + 8)
        assert out[: count.start] + out[count.stop : uc.value_pos] == (
            block[: count.start] + block[count.stop : uc.value_pos]
        )
        assert len(out) == uc.value_pos + len(new_value) + (len(new_value) % 2)
    else:
        assert b"x" * 40 not in out  # the stale comment does not survive
        assert len(out) > len(block)


def test_build_exif_is_a_minimal_block_with_the_comment() -> None:
    value = exif.user_comment_value(b"eyJhIjoxfQ==")
    block = exif.build_exif(value)
    assert block[:4] == b"MM\0*"
    uc = exif.find_user_comment(block)
    assert uc is not None and uc.value == value


def test_no_exif_pointer_means_no_comment() -> None:
    block = b"MM\0*" + struct.pack(">I", 8) + struct.pack(">H", 0) + bytes(4)
    assert exif.find_user_comment(block) is None


@pytest.mark.parametrize(
    "block,what",
    [
        (b"MM\0", "shorter"),
        (b"GIF89a\0\0\0\0", "TIFF header"),
        (b"MM\0*" + struct.pack(">I", 4000), "outside"),
        (b"MM\0*" + struct.pack(">I", 8) + struct.pack(">H", 60000), "entries"),
        (b"MM\0*" + struct.pack(">I", 8) + struct.pack(">H", 3) + bytes(12), "past the end"),
    ],
)
def test_broken_blocks_are_malformed_with_an_offset(block: bytes, what: str) -> None:
    with pytest.raises(Malformed, match=what) as ei:
        exif.find_user_comment(block)
    assert ei.value.offset is not None


def test_a_comment_pointing_past_the_block_is_malformed() -> None:
    block = bytearray(exif_block(b"{}"))
    uc = exif.find_user_comment(bytes(block))
    assert uc is not None
    struct.pack_into(">I", block, uc.entry_pos + 8, 100_000)
    with pytest.raises(Malformed, match="runs past"):
        exif.find_user_comment(bytes(block))


def test_an_exif_pointer_of_the_wrong_type_is_malformed() -> None:
    block = bytearray(exif_block(b"{}"))
    # IFD0's second entry is the Exif pointer: make it a SHORT
    struct.pack_into(">H", block, 8 + 2 + 12 + 2, 3)
    with pytest.raises(Malformed, match="pointer"):
        exif.find_user_comment(bytes(block))


def test_charsets() -> None:
    uc = exif.UserComment(b"UNICODE\0" + "{}".encode("utf-16-be"), 0, 0, ">")
    assert exif.comment_text(uc) == b"{}"
    uc = exif.UserComment(b"\0" * 8 + b"{} \0\0", 0, 0, ">")
    assert exif.comment_text(uc) == b"{}"
    with pytest.raises(Unsupported):
        exif.comment_text(exif.UserComment(b"JIS\0\0\0\0\0abc", 0, 0, ">"))
    with pytest.raises(Malformed):
        exif.comment_text(exif.UserComment(b"ASC", 0, 0, ">"))
