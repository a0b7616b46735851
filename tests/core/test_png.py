"""PNG chunk reading/writing: sanity, hostile input (truncation, bad CRC, zTXt bombs), round trips."""

from __future__ import annotations

import itertools
import random
import struct
import tracemalloc
import zlib
from pathlib import Path

import pytest

from bunzai_codecs.core.errors import BunzaiError, LimitExceeded, Malformed
from bunzai_codecs.core.png import (
    IMAGE_DATA,
    PNG_SIGNATURE,
    Chunk,
    PngFile,
    TextChunk,
    TextChunkType,
    build,
    find_text,
    make_text_chunk,
    parse,
    read_chunks,
    replace_text,
    text_chunks,
)
from tests.formats.helpers import png_chunk

CORPUS = (Path(__file__).parents[2] / ".." / "shared" / "corpus").resolve()
MIB = 1024 * 1024


# -- helpers: PNG bytes built by hand, independent of the module under test ------------------------


def tiny_png(*middle: bytes, trailing: bytes = b"") -> bytes:
    """A valid 1x1 8-bit greyscale PNG, with ``middle`` raw chunks between IDAT and IEND."""
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    idat = zlib.compress(b"\x00\x00")  # filter byte + one grey pixel
    return (
        PNG_SIGNATURE
        + png_chunk(b"IHDR", ihdr)
        + png_chunk(b"IDAT", idat)
        + b"".join(middle)
        + png_chunk(b"IEND", b"")
        + trailing
    )


def text(keyword: str, value: bytes) -> bytes:
    return png_chunk(b"tEXt", keyword.encode("latin-1") + b"\0" + value)


def ztxt(keyword: str, compressed: bytes) -> bytes:
    return png_chunk(b"zTXt", keyword.encode("latin-1") + b"\0\0" + compressed)


def zeros_deflated(total: int, *, wbits: int = 15) -> bytes:
    """``total`` zero bytes compressed in 1 MiB steps, so the test never holds them all."""
    c = zlib.compressobj(9, zlib.DEFLATED, wbits)
    block = bytes(MIB)
    parts = []
    left = total
    while left:
        n = min(left, MIB)
        parts.append(c.compress(block[:n]))
        left -= n
    parts.append(c.flush())
    return b"".join(parts)


def chunk_offsets(data: bytes) -> list[int]:
    """Offset of every chunk's length field, plus the end of the file."""
    out, pos = [], 8
    while pos < len(data):
        out.append(pos)
        (n,) = struct.unpack_from(">I", data, pos)
        pos += 12 + n
    return [*out, pos]


def corpus_pngs() -> list[Path]:
    base = CORPUS / "sillytavern"
    if not base.is_dir():
        pytest.skip(f"corpus not present at {base}")
    found = sorted(base.rglob("*.png"))
    if not found:
        pytest.skip("no PNG in the corpus")
    return found


# -- reading ------------------------------------------------------------------------------------


def test_parse_lists_chunks_with_offsets() -> None:
    data = tiny_png(text("chara", b"abc"))
    png = parse(data)
    assert [c.type for c in png.chunks] == [b"IHDR", b"IDAT", b"tEXt", b"IEND"]
    assert [c.offset for c in png.chunks] == chunk_offsets(data)[:-1]
    assert png.chunks[2].data == b"chara\0abc"
    assert png.trailing == b""
    assert read_chunks(data) == list(png.chunks)


def test_bad_signature_is_malformed_at_zero() -> None:
    with pytest.raises(Malformed) as e:
        parse(b"GIF89a" + bytes(40))
    assert e.value.offset == 0


def test_bad_crc_names_chunk_and_offset() -> None:
    data = bytearray(tiny_png(text("chara", b"abc")))
    off = chunk_offsets(bytes(data))[2]  # the tEXt chunk
    data[off + 8] ^= 0xFF  # flip a data byte, CRC now wrong
    with pytest.raises(Malformed) as e:
        parse(bytes(data))
    assert e.value.offset == off
    assert "tEXt" in e.value.message and "CRC" in e.value.message
    # the CRC check can be turned off, and build() then writes a correct CRC
    png = parse(bytes(data), check_crc=False)
    assert parse(png.build()).chunks[2].data == png.chunks[2].data


def test_skip_crc_leaves_image_data_unchecked_and_keeps_its_crc() -> None:
    data = bytearray(tiny_png(text("chara", b"abc")))
    off = chunk_offsets(bytes(data))[1]  # the IDAT chunk
    data[off + 8] ^= 0xFF  # damage the pixel data: its stored CRC no longer matches
    with pytest.raises(Malformed) as e:
        parse(bytes(data))  # checked by default
    assert e.value.offset == off and "IDAT" in e.value.message
    png = parse(bytes(data), skip_crc=IMAGE_DATA)
    assert png.chunks[2].data == b"chara\0abc"
    # the unchecked chunk keeps the CRC it was read with: the file comes back byte for byte
    assert png.build() == bytes(data)
    assert replace_text(png, remove=["chara"]) == bytes(data[: chunk_offsets(bytes(data))[2]]) + png_chunk(
        b"IEND", b""
    )


def test_skip_crc_still_checks_every_other_chunk() -> None:
    for index, kind in ((0, "IHDR"), (2, "tEXt"), (3, "IEND")):
        data = bytearray(tiny_png(text("chara", b"abc")))
        off = chunk_offsets(bytes(data))[index]
        (length,) = struct.unpack_from(">I", data, off)
        data[off + 8 + length] ^= 0xFF  # the chunk's stored CRC
        with pytest.raises(Malformed) as e:
            parse(bytes(data), skip_crc=IMAGE_DATA)
        assert e.value.offset == off and kind in e.value.message and "CRC" in e.value.message


def test_truncated_at_every_length_is_malformed() -> None:
    data = tiny_png(text("chara", b"abc"), ztxt("z", zlib.compress(b"hello")))
    for n in range(len(data)):
        with pytest.raises(Malformed):
            parse(data[:n])
    assert parse(data).build() == data


def test_truncated_corpus_png_at_chunk_boundaries_and_inside() -> None:
    path = corpus_pngs()[0]
    data = path.read_bytes()
    offsets = chunk_offsets(data)
    cuts = set(offsets[:-1])
    for a, b in itertools.pairwise(offsets):
        cuts.update({a + 1, a + 4, a + 7, a + 8, (a + b) // 2, b - 4, b - 1})
    cuts.update(range(8))
    for n in sorted(c for c in cuts if c < len(data)):
        with pytest.raises(Malformed) as e:
            parse(data[:n])
        assert e.value.offset is not None, n


def test_length_past_end_reports_offset() -> None:
    data = bytearray(tiny_png(text("chara", b"abc")))
    off = chunk_offsets(bytes(data))[2]
    struct.pack_into(">I", data, off, 0x7FFF0000)
    with pytest.raises(Malformed) as e:
        parse(bytes(data))
    assert e.value.offset == off and "past the end" in e.value.message


def test_length_above_spec_maximum() -> None:
    data = bytearray(tiny_png())
    struct.pack_into(">I", data, 8, 0x80000000)
    with pytest.raises(Malformed, match="maximum"):
        parse(bytes(data))


def test_bad_chunk_type_is_malformed() -> None:
    data = tiny_png(png_chunk(b"t3Xt", b"x"))
    with pytest.raises(Malformed, match="chunk type"):
        parse(data)


def test_missing_iend_is_malformed() -> None:
    data = tiny_png()
    without_iend = data[: chunk_offsets(data)[-2]]
    with pytest.raises(Malformed, match="IEND"):
        parse(without_iend)


def test_trailing_bytes_are_kept() -> None:
    data = tiny_png(trailing=b"PK\x03\x04 appended zip")
    png = parse(data)
    assert png.trailing == b"PK\x03\x04 appended zip"
    assert png.build() == data


def test_chunk_count_bound() -> None:
    data = tiny_png(*[text(f"k{i}", b"v") for i in range(20)])
    with pytest.raises(LimitExceeded) as e:
        parse(data, max_chunks=10)
    assert e.value.offset is not None
    assert len(parse(data, max_chunks=23).chunks) == 23


# -- text chunks --------------------------------------------------------------------------------


def test_text_chunk_kinds() -> None:
    itxt_plain = png_chunk(b"iTXt", b"Comment\0\0\0en\0Kommentar\0caf\xc3\xa9")
    itxt_z = png_chunk(b"iTXt", b"chara\0\1\0\0\0" + zlib.compress(b"eyJhIjoxfQ=="))
    data = tiny_png(
        text("Title", b"hi"), ztxt("Description", zlib.compress(b"a long description")), itxt_plain, itxt_z
    )
    texts = text_chunks(parse(data).chunks)
    assert [(t.chunk_type, t.keyword, t.text, t.index, t.compressed) for t in texts] == [
        ("tEXt", "Title", b"hi", 2, False),
        ("zTXt", "Description", b"a long description", 3, True),
        ("iTXt", "Comment", "café".encode(), 4, False),
        ("iTXt", "chara", b"eyJhIjoxfQ==", 5, True),
    ]
    assert texts[2].language == "en" and texts[2].translated_keyword == "Kommentar"


def test_keyword_is_latin1_and_case_is_kept() -> None:
    data = tiny_png(text("Chära", b"x"))
    (t,) = text_chunks(parse(data).chunks)
    assert t.keyword == "Chära"


def test_find_text_is_case_insensitive_and_filters_types() -> None:
    data = tiny_png(ztxt("chara", zlib.compress(b"z")), text("CHARA", b"t"), text("ccv3", b"3"))
    texts = text_chunks(parse(data).chunks)
    found = find_text(texts, "Chara")
    assert found is not None and found.chunk_type == "zTXt"
    only_text: tuple[TextChunkType, ...] = ("tEXt",)
    found_t = find_text(texts, "chara", chunk_types=only_text)
    assert found_t is not None and found_t.text == b"t"
    assert find_text(texts, "naidata") is None


def test_keyword_filter_skips_broken_unrelated_chunks() -> None:
    data = tiny_png(
        png_chunk(b"tEXt", b"no separator here"),
        ztxt("junk", b"not zlib at all"),
        text("chara", b"payload"),
    )
    chunks = parse(data).chunks
    with pytest.raises(Malformed):
        text_chunks(chunks)
    (t,) = text_chunks(chunks, keywords={"CHARA"})
    assert t.text == b"payload" and t.index == 4


@pytest.mark.parametrize(
    "chunk",
    [
        png_chunk(b"tEXt", b"no separator"),
        png_chunk(b"zTXt", b"k\0"),  # no method byte
        png_chunk(b"zTXt", b"k\0\1" + zlib.compress(b"x")),  # unknown method
        ztxt("k", b"\x78\x9c garbage"),
        ztxt("k", zlib.compress(b"hello world" * 100)[:-10]),  # truncated stream
        png_chunk(b"iTXt", b"k\0\0"),
        png_chunk(b"iTXt", b"k\0\2\0\0\0x"),  # bad flag
        png_chunk(b"iTXt", b"k\0\1\0en"),  # no translated-keyword terminator
        png_chunk(b"iTXt", b"k\0\1\5\0\0" + zlib.compress(b"x")),  # unknown method
        png_chunk(b"iTXt", b"k\0\1\0\0\0garbage"),
    ],
)
def test_bad_text_chunks_are_malformed_with_offset(chunk: bytes) -> None:
    data = tiny_png(chunk)
    with pytest.raises(Malformed) as e:
        text_chunks(parse(data).chunks)
    assert e.value.offset == chunk_offsets(data)[2]


def test_ztxt_bomb_stops_at_the_bound_without_inflating_it_all() -> None:
    bomb = zeros_deflated(200 * MIB)
    assert len(bomb) < 300 * 1024
    chunks = parse(tiny_png(ztxt("chara", bomb))).chunks
    tracemalloc.start()
    try:
        with pytest.raises(LimitExceeded) as e:
            text_chunks(chunks, max_inflate=1 * MIB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert e.value.offset == chunks[2].offset
    assert "per-chunk" in e.value.message
    assert peak < 4 * MIB, peak


def test_ztxt_bomb_default_bound_holds_memory_near_the_bound() -> None:
    chunks = parse(tiny_png(ztxt("chara", zeros_deflated(200 * MIB)))).chunks
    tracemalloc.start()
    try:
        with pytest.raises(LimitExceeded):
            text_chunks(chunks)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # 64 MiB is the bound; inflating all 200 MiB would show here
    assert peak < 68 * MIB, peak


def test_a_recorded_bomb_error_does_not_keep_the_inflated_bytes_alive() -> None:
    """Regression (hostile suite): a zTXt bomb recorded in ``errors`` (as Sniff does) kept the
    64 MiB inflated so far alive through its traceback, until a cyclic GC pass; every codec's forced
    decode of one bomb PNG held another 64 MiB (396 MiB for 23 codecs)."""
    import gc

    chunks = parse(tiny_png(ztxt("chara", zeros_deflated(100 * MIB)))).chunks
    gc.disable()
    tracemalloc.start()
    try:
        errors: list[tuple[int, str | None, Malformed]] = []
        assert text_chunks(chunks, errors=errors) == []
        assert isinstance(errors[0][2], LimitExceeded)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        gc.enable()
    assert held < 4 * MIB, held


def test_compressed_itxt_bomb() -> None:
    chunks = parse(tiny_png(png_chunk(b"iTXt", b"k\0\1\0\0\0" + zeros_deflated(8 * MIB)))).chunks
    with pytest.raises(LimitExceeded):
        text_chunks(chunks, max_inflate=MIB)


def test_total_inflate_bound_across_chunks() -> None:
    one = zlib.compress(bytes(600 * 1024))
    chunks = parse(tiny_png(ztxt("a", one), ztxt("b", one))).chunks
    assert len(text_chunks(chunks, max_total=2 * MIB)) == 2
    with pytest.raises(LimitExceeded, match="total"):
        text_chunks(chunks, max_total=MIB)


def test_ten_thousand_text_chunks() -> None:
    n = 10_000
    data = tiny_png(*[text(f"chara-ext-asset_:{i}", b"QUJD") for i in range(n)], text("ccv3", b"e30="))
    png = parse(data)
    texts = text_chunks(png.chunks)
    assert len(texts) == n + 1
    assert texts[-1].keyword == "ccv3" and texts[-1].index == n + 2
    out = replace_text(png, remove=lambda t: t.keyword.startswith("chara-ext-asset_"), add=[])
    assert [c.type for c in parse(out).chunks] == [b"IHDR", b"IDAT", b"tEXt", b"IEND"]


# -- writing ------------------------------------------------------------------------------------


def test_make_text_chunk_kinds_decode_back() -> None:
    made = [
        make_text_chunk("chara", b"eyJ9"),
        make_text_chunk("Description", b"zipped " * 50, "zTXt"),
        make_text_chunk("plain", "ü".encode(), "iTXt", language="de", translated_keyword="schlicht"),
        make_text_chunk("packed", b"x" * 500, "iTXt", compress=True),
    ]
    chunks = parse(build([*parse(tiny_png()).chunks[:2], *made, Chunk(b"IEND", b"")])).chunks
    texts = text_chunks(chunks)
    assert [(t.keyword, t.text, t.chunk_type, t.compressed) for t in texts] == [
        ("chara", b"eyJ9", "tEXt", False),
        ("Description", b"zipped " * 50, "zTXt", True),
        ("plain", "ü".encode(), "iTXt", False),
        ("packed", b"x" * 500, "iTXt", True),
    ]
    assert texts[2].language == "de" and texts[2].translated_keyword == "schlicht"
    assert made[0] == Chunk(b"tEXt", b"chara\0eyJ9", -1)


@pytest.mark.parametrize(
    ("keyword", "value", "ctype"),
    [
        ("", b"x", "tEXt"),
        ("k" * 80, b"x", "tEXt"),
        ("a\0b", b"x", "tEXt"),
        ("日本", b"x", "tEXt"),
        ("chara", b"a\0b", "tEXt"),
        ("chara", b"x", "PLTE"),
    ],
)
def test_make_text_chunk_rejects_bad_arguments(keyword: str, value: bytes, ctype: str) -> None:
    with pytest.raises(ValueError):
        make_text_chunk(keyword, value, ctype)  # type: ignore[arg-type]


def test_build_is_deterministic_and_recomputes_lengths() -> None:
    chunks = [Chunk(b"IHDR", b"x" * 13), Chunk(b"tEXt", b"a\0b"), Chunk(b"IEND", b"")]
    out = build(chunks)
    assert out == build(chunks)
    assert out == PNG_SIGNATURE + png_chunk(b"IHDR", b"x" * 13) + png_chunk(b"tEXt", b"a\0b") + png_chunk(
        b"IEND", b""
    )
    with pytest.raises(ValueError):
        build([Chunk(b"TOOLONG", b"")])


def test_replace_text_keeps_other_chunks_and_adds_before_iend() -> None:
    # an APNG with text in odd places: before IDAT, between frames, in zTXt and iTXt
    actl = png_chunk(b"acTL", struct.pack(">II", 2, 0))
    fctl0 = png_chunk(b"fcTL", struct.pack(">IIIIIHHBB", 0, 1, 1, 0, 0, 1, 10, 0, 0))
    fctl1 = png_chunk(b"fcTL", struct.pack(">IIIIIHHBB", 1, 1, 1, 0, 0, 1, 10, 0, 0))
    fdat = png_chunk(b"fdAT", struct.pack(">I", 2) + zlib.compress(b"\x00\x7f"))
    ihdr = png_chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
    idat = png_chunk(b"IDAT", zlib.compress(b"\x00\x00"))
    source = (
        PNG_SIGNATURE
        + ihdr
        + text("chara", b"old-v2")
        + actl
        + fctl0
        + idat
        + text("Title", b"keep me")
        + fctl1
        + fdat
        + ztxt("CCV3", zlib.compress(b"old-v3"))
        + png_chunk(b"iTXt", b"chara\0\0\0\0\0old-itxt")
        + png_chunk(b"IEND", b"")
        + b"trailer"
    )
    new = [make_text_chunk("chara", b"new-v2"), make_text_chunk("ccv3", b"new-v3")]
    out = replace_text(source, remove={"chara", "ccv3"}, add=new)
    before = parse(source)
    after = parse(out)
    kept = [
        c for c in before.chunks if not (c.type in (b"tEXt", b"zTXt", b"iTXt") and c.data[:5] != b"Title")
    ]
    assert [(c.type, c.data) for c in after.chunks] == [
        *[(c.type, c.data) for c in kept[:-1]],
        (b"tEXt", b"chara\0new-v2"),
        (b"tEXt", b"ccv3\0new-v3"),
        (b"IEND", b""),
    ]
    assert after.trailing == b"trailer"
    # every kept chunk is byte-identical, raw bytes included (length + type + data + CRC)
    for c in kept:
        raw = source[c.offset : c.offset + 12 + len(c.data)]
        assert raw in out
    assert replace_text(source, remove={"chara", "ccv3"}, add=new) == out


def test_replace_text_predicate_sees_decoded_chunks() -> None:
    source = tiny_png(text("chara", b"v2"), ztxt("chara", zlib.compress(b"z")), text("other", b"o"))
    seen: list[TextChunk] = []

    def only_ztxt(t: TextChunk) -> bool:
        seen.append(t)
        return t.chunk_type == "zTXt"

    out = replace_text(parse(source), remove=only_ztxt)
    assert [t.text for t in seen] == [b"v2", b"z", b"o"]
    assert [t.keyword for t in text_chunks(parse(out).chunks)] == ["chara", "other"]


def test_replace_text_with_nothing_to_do_is_identity() -> None:
    source = tiny_png(text("chara", b"v2"), trailing=b"tail")
    assert replace_text(source, remove=set()) == source
    assert replace_text(list(parse(source).chunks), remove=set()) == source.removesuffix(b"tail")


def test_replace_text_by_keyword_keeps_chunks_without_a_keyword() -> None:
    broken = png_chunk(b"tEXt", b"no separator")
    source = tiny_png(broken, text("chara", b"old"))
    out = replace_text(source, remove={"chara"}, add=[make_text_chunk("chara", b"new")])
    assert broken in out and b"old" not in out
    with pytest.raises(Malformed):
        replace_text(source, remove=lambda t: t.keyword == "chara")


def test_replace_text_without_iend() -> None:
    chunks = parse(tiny_png()).chunks[:-1]
    with pytest.raises(Malformed, match="IEND"):
        replace_text(chunks, remove=set(), add=[make_text_chunk("chara", b"x")])


def test_replace_text_rejects_broken_png_bytes() -> None:
    with pytest.raises(Malformed):
        replace_text(tiny_png()[:-3], remove={"chara"})


# -- corpus and robustness -----------------------------------------------------------------------


def test_corpus_pngs_round_trip_byte_for_byte() -> None:
    for path in corpus_pngs():
        data = path.read_bytes()
        png = parse(data)
        assert build(png.chunks, png.trailing) == data, path.name
        assert png.build() == data
        text_chunks(png.chunks)  # decodes without error
        # replacing nothing and adding nothing changes nothing
        assert replace_text(png, remove=set()) == data


def test_corpus_replace_keeps_image_chunks() -> None:
    for path in corpus_pngs():
        data = path.read_bytes()
        out = replace_text(data, remove={"chara", "ccv3"}, add=[make_text_chunk("chara", b"e30=")])
        old = [(c.type, c.data) for c in parse(data).chunks if c.type not in (b"tEXt", b"zTXt", b"iTXt")]
        new = parse(out)
        assert [(c.type, c.data) for c in new.chunks if c.type not in (b"tEXt", b"zTXt", b"iTXt")] == old
        assert new.chunks[-2].data == b"chara\0e30="
        assert find_text(text_chunks(new.chunks), "ccv3") is None


def test_random_corruption_only_raises_typed_errors() -> None:
    rng = random.Random(20240901)
    base = tiny_png(
        text("chara", b"eyJ9"),
        ztxt("Description", zlib.compress(b"words " * 20)),
        png_chunk(b"iTXt", b"k\0\1\0en\0K\0" + zlib.compress(b"value")),
    )
    for _ in range(3000):
        data = bytearray(base)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            png = parse(bytes(data), check_crc=rng.random() < 0.5)
            text_chunks(png.chunks)
        except BunzaiError:
            pass


def test_pngfile_is_immutable() -> None:
    png = parse(tiny_png())
    assert isinstance(png, PngFile)
    with pytest.raises(AttributeError):
        png.trailing = b"x"  # type: ignore[misc]
