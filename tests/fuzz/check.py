"""The one check every fuzz harness and the corpus replay make: only typed errors escape.

``check(target, data)`` feeds ``data`` to the container code of ``target`` (its low-level reader)
and then, as a file of that container, through ``read()`` + export and every codec's forced
``decode`` (tests/hostile/harness.py). It returns quietly when each call either succeeds or raises
a ``BunzaiError`` that is not marked ``internal``; anything else raises ``Crash``. Some targets also
wrap the input into a valid outer layer first (a ``.risup`` chain around fuzzed msgpack, a PNG
around a fuzzed EXIF block, a ``.charx`` around a fuzzed card.json, a ``.voxpkg`` around a fuzzed
character.json), so the fuzzer reaches the inner parsers instead of dying at the outer checksum:
the first input byte picks raw or wrapped.

No atheris import here: pytest replays the saved corpus (tests/fuzz/test_replay.py) without it.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import struct
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

from bunzai_codecs.core import archive, basecache, png
from bunzai_codecs.core.errors import BunzaiError
from bunzai_codecs.core.sniff import parse_json
from bunzai_codecs.formats.backyard import exif
from bunzai_codecs.formats.risu import jsformat, risum, risup, rpack

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
ROOT = HERE.parents[1]
if str(ROOT) not in sys.path:  # tests.hostile is imported by its path from the project root
    sys.path.insert(0, str(ROOT))


#: every fuzzed input runs with the rules checked (``basecache.CHECK``: the test suite's setting): a
#: broken escrow rule, a body mark or an indexed detection the full check contradicts is a crash
basecache.CHECK = True


class Crash(AssertionError):
    """An input made bunzai raise something other than a typed error."""


def _typed(fn: Callable[[], object], where: str) -> None:
    try:
        fn()
    except BunzaiError as exc:
        if getattr(exc, "internal", False):
            raise Crash(f"{where}: internal {type(exc).__name__}: {exc}") from exc
    except Exception as exc:
        raise Crash(f"{where}: {type(exc).__name__}: {exc}") from exc


def _whole(data: bytes, name: str) -> None:
    """The input as a file: read() + export and every codec's forced decode."""
    from tests.hostile.generate import Case
    from tests.hostile.harness import run

    out = run(Case("fuzz", "fuzz", name, data))
    if out.crashes:
        raise Crash("; ".join(out.crashes))


# -- wrappers: a valid outer layer around fuzzed inner bytes -------------------------------------


def _png_around(chunks: list[png.Chunk]) -> bytes:
    ihdr = png.Chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
    idat = png.Chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
    return png.build([ihdr, *chunks, idat, png.Chunk(b"IEND", b"")])


def _risup_around(inner: bytes) -> bytes:
    wrapper = jsformat.pack({"presetVersion": 2, "type": "preset", "preset": risup.encrypt(inner)})
    return rpack.encode(gzip.compress(wrapper, mtime=0))


def _charx_around(card: bytes) -> bytes:
    return archive.write_zip([("card.json", card), ("assets/icon/image/main.png", _png_around([]))])


#: the folder of the character a wrapped Voxta input's character.json is put in
VOXTA_CHARACTER = "Characters/0b6f3c2e-8d41-4a7e-9c15-2f8e6d4a1b93/"
VOXTA_BOOK = "Books/5a9e1d37-c2b8-4f60-8e43-7d1c9b2a6f05/book.json"


def _voxpkg_around(character: bytes) -> bytes:
    book = b'{"$type":"book","Id":"5a9e1d37-c2b8-4f60-8e43-7d1c9b2a6f05","Name":"B","Items":[{"Keywords":["k"],"Text":"t"}]}'
    return archive.write_zip(
        [
            (VOXTA_CHARACTER + "character.json", character),
            (VOXTA_CHARACTER + "thumbnail.png", _png_around([])),
            (VOXTA_BOOK, book),
        ]
    )


# -- targets -----------------------------------------------------------------------------------


def check_png(data: bytes) -> None:
    def low() -> None:
        pf = png.parse(data)
        png.text_chunks(pf.chunks, errors=[])

    if data[:1] == b"\x01":  # wrapped: the rest is a card chunk's value, base64'd into chara
        body = data[1:]
        data = _png_around([png.Chunk(b"tEXt", b"chara\0" + base64.b64encode(body))])
    _typed(low, "png.parse/text_chunks")
    _whole(data, "x.png")


def check_zip(data: bytes) -> None:
    if data[:1] == b"\x01":  # wrapped: the rest is card.json inside a valid charx
        data = _charx_around(data[1:])
    elif data[:1] == b"\x02":  # wrapped: the rest is a character.json inside a valid .voxpkg
        data = _voxpkg_around(data[1:])

    def low() -> None:
        z = archive.open_zip(data)
        for m in z.members:
            if not m.is_dir:
                z.read(m.name)

    _typed(low, "archive.open_zip/read")
    _whole(data, "x.charx")


def check_rpack(data: bytes) -> None:
    if data[:1] == b"\x01":  # wrapped: the rest is the main block's JSON, then one asset
        data = risum.write_blocks(data[1:], [b"asset"])

    def low() -> None:
        rpack.decode(rpack.encode(data))
        risum.open_module(data)

    _typed(low, "risum.open_module")
    _whole(data, "x.risum")


def check_risup(data: bytes) -> None:
    if data[:1] == b"\x01":  # wrapped: the rest is the decrypted preset's msgpack
        data = _risup_around(data[1:])

    def low() -> None:
        for rpacked in (True, False):
            with contextlib.suppress(BunzaiError):
                risup.open_preset(data, rpacked=rpacked)

    _typed(low, "risup.open_preset")
    _whole(data, "x.risup")


def check_exif(data: bytes) -> None:
    def low() -> None:
        uc = exif.find_user_comment(data)
        if uc is not None:
            exif.comment_text(uc)
            exif.replace_user_comment(data, uc, exif.user_comment_value(b"{}"))

    _typed(low, "exif.find_user_comment")
    _whole(_png_around([png.Chunk(b"eXIf", data)]), "x.png")


def check_json(data: bytes) -> None:
    _typed(lambda: parse_json(data), "parse_json")
    _whole(data, "x.json")


TARGETS: dict[str, Callable[[bytes], None]] = {
    "png": check_png,
    "zip": check_zip,
    "rpack": check_rpack,
    "risup": check_risup,
    "exif": check_exif,
    "json": check_json,
}


def check(target: str, data: bytes) -> None:
    TARGETS[target](data)
