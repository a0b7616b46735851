"""A PNG card's CRCs: the chunks a card is read from are checked, the pixel data's are not read.

``Sniff.png`` leaves the CRC of ``IDAT``/``fdAT`` unchecked (bunzai never decodes pixels, and
their CRC was most of a card's parse). That must not let a corrupt card chunk through: every text
chunk (``ccv3``, ``chara``, assets) and every other chunk is still checked, and a bad one is a
typed reject (``Malformed``: "not a readable PNG", issue 32: clearly a PNG, but broken) naming the
chunk and its offset. A card with
damaged pixel data is read, and what bunzai writes from it keeps those bytes as they were (the
stored CRC included): nothing is repaired silently. The same holds for every format that writes a
picture (Backyard, Pygmalion, RoleCall, Risu and RoleCall personas, NovelAI's naidata PNG), edited
or converted into.
"""

from __future__ import annotations

from typing import Any

import pytest

from bunzai_codecs import Malformed, read, write
from bunzai_codecs.core import png
from tests.formats.helpers import edited, sample

CARD = "sillytavern/tidepool.png"


def damaged(data: bytes, chunk: int, at: int = 12) -> bytes:
    """``data`` with one byte of chunk number ``chunk``'s data flipped (its stored CRC now wrong)."""
    c = png.parse(data).chunks[chunk]
    out = bytearray(data)
    out[c.offset + 8 + at] ^= 0x01
    return bytes(out)


def index_of(data: bytes, keyword: str) -> int:
    return next(i for i, c in enumerate(png.parse(data).chunks) if png.keyword_of(c) == keyword)


@pytest.mark.parametrize("keyword", ["ccv3", "chara"])
def test_a_corrupt_card_chunk_is_a_typed_reject_naming_it(keyword: str) -> None:
    raw = sample(CARD)
    i = index_of(raw, keyword)
    bad = damaged(raw, i)
    # Malformed (clearly a PNG, but broken), what the pipeline's detect stage turns into a reject,
    # naming the cause and where
    with pytest.raises(Malformed) as e:
        read(bad, "tidepool.png")
    assert e.value.message == "not a readable PNG: bad CRC in tEXt chunk"
    assert e.value.offset == png.parse(raw).chunks[i].offset
    assert e.value.uri == "tidepool.png"


def test_corrupt_pixel_data_is_read_and_written_back_as_it_was() -> None:
    raw = sample(CARD)
    i = next(i for i, c in enumerate(png.parse(raw).chunks) if c.type == b"IDAT")
    bad = damaged(raw, i)
    with pytest.raises(Malformed):
        png.parse(bad)  # the damage is real: a full check refuses the file
    c = read(bad, "tidepool.png").primary
    assert c.original["sillytavern"].blobs["image"] == bad
    assert write(c, "sillytavern").data == bad  # unchanged: the file itself
    # an edited card is written into the same image: the damaged chunk keeps its bytes and its CRC
    out = write(edited(c, identity={"name": "Tidepool II"}), "sillytavern").data
    idat = png.parse(raw).chunks[i]
    start = idat.offset
    end = start + 12 + len(idat.data)
    assert bad[start:end] in out and raw[start:end] not in out
    assert read(out, "out.png").primary.body.identity.name == "Tidepool II"  # type: ignore[union-attr]


#: one PNG file per format that writes PNGs, and where the edit a user makes before writing it lands
WRITERS = [
    ("sillytavern/tidepool.png", ("identity", "name")),
    ("agnai/Pip.card.png", ("identity", "name")),
    ("backyard/tidecaller.v2.backyard.png", ("identity", "name")),
    ("backyard/maelis.v4.backyard.png", ("identity", "name")),
    ("pygmalion/ines.pygmalion.png", ("identity", "name")),
    ("rolecall/wren.rolecall-flat.png", ("identity", "name")),
    ("risu/mira_holt_persona.png", ("name",)),
    ("rolecall/mira.rcpersona.png", ("name",)),
    ("novelai/hollin.naidata.png", ("entries", 0, "content")),
]


def idat_bytes(data: bytes) -> tuple[int, bytes]:
    """The index of the first IDAT chunk and its whole bytes (length, type, data, CRC)."""
    chunks = png.parse(data, skip_crc=png.IMAGE_DATA).chunks
    i, c = next((i, c) for i, c in enumerate(chunks) if c.type == b"IDAT")
    return i, data[c.offset : c.offset + 12 + len(c.data)]


def at(tree: Any, path: tuple[str | int, ...]) -> Any:
    for step in path[:-1]:
        tree = tree[step]
    return tree


@pytest.mark.parametrize(("name", "path"), WRITERS, ids=[n for n, _ in WRITERS])
def test_every_png_writer_keeps_damaged_pixels_as_they_were(name: str, path: tuple[str | int, ...]) -> None:
    # the same promise for every format that writes a picture: an edited file is written into the
    # image it was read from, pixel chunks (stored CRC included) as they were, not refused
    raw, file = sample(name), name.rsplit("/", 1)[1]
    bad = damaged(raw, idat_bytes(raw)[0])
    e = read(bad, file).primary
    (fmt,) = e.original
    out = write(edited(e, lambda b: at(b, path).__setitem__(path[-1], "Edited")), fmt).data
    assert idat_bytes(bad)[1] in out
    assert at(read(out, file).primary.body.dump(), path)[path[-1]] == "Edited"


@pytest.mark.parametrize("target", ["sillytavern", "backyard", "pygmalion", "rolecall"])
def test_a_card_with_damaged_pixels_converts_into_each_png_format(target: str) -> None:
    raw = sample(CARD)
    bad = damaged(raw, idat_bytes(raw)[0])
    c = read(bad, "tidepool.png").primary
    out = write(c, target, container="png").data
    assert idat_bytes(bad)[1] in out  # the picture travels as it was, not repaired, not dropped
