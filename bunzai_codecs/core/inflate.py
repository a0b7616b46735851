"""Bounded inflation: the one loop every zlib stream bunzai reads goes through (zip members, PNG
zTXt/iTXt values, RisuAI preset containers).

zlib is never asked for more than ``limit + 1`` bytes in total, so a decompression bomb costs at
most the bound, and the compressed input is fed in slices so the bound is checked often. The
callers turn the three outcomes into their own typed errors (with the member name or byte offset
they know): ``Truncated`` (the stream ends before its end marker), ``TooLarge`` (past ``limit``)
and ``Corrupt`` (zlib rejects the data).
"""

from __future__ import annotations

import zlib

#: compressed input is fed to zlib in slices of this size so output checks happen often
FEED = 64 * 1024
#: output asked of zlib per call: zlib builds each call's result in blocks and then copies them
#: into one bytes object, so a single large call would briefly hold twice its output
STEP = 1024 * 1024

#: ``wbits`` for each container zlib knows
ZLIB, RAW_DEFLATE, GZIP = 15, -15, 31


class InflateError(Exception):
    """Base of the outcomes below; callers translate them into ``core.errors`` types."""


class Truncated(InflateError):
    """The compressed stream ended before its end marker."""


class TooLarge(InflateError):
    """The stream inflates past the bound."""


class Corrupt(InflateError):
    """zlib rejected the data (the message is zlib's)."""


def bounded(data: bytes | memoryview, limit: int, *, wbits: int = ZLIB) -> bytes:
    """Inflate ``data`` (one stream in the ``wbits`` container) to at most ``limit`` bytes.

    Bytes after the stream's end marker are ignored, as zlib does.
    """
    view = memoryview(data)
    d = zlib.decompressobj(wbits)
    out: list[bytes] = []
    produced = 0
    pos = 0
    try:
        while not d.eof:
            if d.unconsumed_tail:
                feed: bytes | memoryview = d.unconsumed_tail
            elif pos < len(view):
                feed = view[pos : pos + FEED]
                pos += len(feed)
            else:
                raise Truncated("compressed stream is truncated")
            piece = d.decompress(feed, min(STEP, limit + 1 - produced))
            produced += len(piece)
            if produced > limit:
                # drop what was inflated before raising: callers keep the error (Sniff records it)
                # and its traceback would otherwise hold up to ``limit`` bytes alive until a
                # cyclic GC pass
                out.clear()
                del piece
                raise TooLarge(f"inflates past {limit} bytes")
            out.append(piece)
    except zlib.error as e:
        raise Corrupt(str(e)) from None
    return b"".join(out)


__all__ = [
    "FEED",
    "GZIP",
    "RAW_DEFLATE",
    "STEP",
    "ZLIB",
    "Corrupt",
    "InflateError",
    "TooLarge",
    "Truncated",
    "bounded",
]
