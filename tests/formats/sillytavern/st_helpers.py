"""Shared helpers for the SillyTavern codec tests: PNG building from facts, tree comparison."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from typing import Any

from bunzai_codecs.core import png
from tests.formats.codec_helpers import rt_compare as rt_compare  # the corpus comparer, re-exported


def tiny_image() -> list[png.Chunk]:
    """IHDR + IDAT of a 2x2 RGB image (no text chunks), built from the PNG spec."""
    rows = b"".join(b"\0" + bytes([200, 10, 10] * 2) for _ in range(2))
    return [
        png.Chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)),
        png.Chunk(b"IDAT", zlib.compress(rows)),
    ]


def b64json(tree: Any) -> bytes:
    return base64.b64encode(json.dumps(tree, ensure_ascii=False).encode("utf-8"))


def build_png(*text: png.Chunk, before_idat: tuple[png.Chunk, ...] = (), tail: bytes = b"") -> bytes:
    """A PNG: IHDR, ``before_idat`` chunks, IDAT, ``text`` chunks, IEND (ST puts cards before IEND)."""
    ihdr, idat = tiny_image()
    return png.build([ihdr, *before_idat, idat, *text, png.Chunk(b"IEND", b"")], tail)


def text_chunk(
    keyword: str, tree: Any, ctype: png.TextChunkType = "tEXt", *, compress: bool = False
) -> png.Chunk:
    return png.make_text_chunk(keyword, b64json(tree), ctype, compress=compress)


def card_payloads(data: bytes) -> dict[str, Any]:
    """keyword (lower) -> decoded JSON of every chara/ccv3 text chunk of a PNG (the first of each)."""
    pf = png.parse(data)
    out: dict[str, Any] = {}
    for t in png.text_chunks(pf.chunks):
        kw = t.keyword.lower()
        if kw in ("chara", "ccv3") and kw not in out:
            out[kw] = json.loads(base64.b64decode(t.text))
    return out


def non_text_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    return [(c.type, c.data) for c in png.parse(data).chunks if c.type not in (b"tEXt", b"zTXt", b"iTXt")]
