"""Bounded zip reading and deterministic writing: limits, hostile names, bombs, polyglots, round trips."""

from __future__ import annotations

import io
import random
import struct
import tracemalloc
import warnings
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from bunzai_codecs.core.archive import (
    ZIP_DEFLATED,
    ZIP_EPOCH,
    ZIP_STORED,
    ArchiveLimits,
    ZipMemberSpec,
    open_zip,
    safe_member_name,
    write_zip,
)
from bunzai_codecs.core.errors import BunzaiError, LimitExceeded, Malformed, Unsupported

CORPUS = (Path(__file__).parents[2] / ".." / "shared" / "corpus").resolve()
MIB = 1024 * 1024
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00" + bytes(64) + b"\xff\xd9"


# -- helpers: zips assembled by hand, so every field can lie ------------------------------------


@dataclass
class RawEntry:
    name: bytes
    payload: bytes  # the bytes stored in the archive (compressed or not)
    method: int
    crc: int
    size: int  # declared inflated size (central and local)
    flags: int = 0
    external_attr: int = 0o100644 << 16
    local_name: bytes | None = None


def stored(name: str | bytes, data: bytes, **kw: object) -> RawEntry:
    n = name.encode() if isinstance(name, str) else name
    return RawEntry(n, data, 0, zlib.crc32(data), len(data), **kw)  # type: ignore[arg-type]


def deflated(name: str, data: bytes) -> RawEntry:
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return RawEntry(name.encode(), c.compress(data) + c.flush(), 8, zlib.crc32(data), len(data))


def raw_zip(entries: list[RawEntry], *, absolute_from: int = 0, eocd_count: int | None = None) -> bytes:
    """Local headers + data, central directory, end record. Offsets count from ``absolute_from``."""
    body = bytearray()
    central = bytearray()
    for e in entries:
        offset = len(body) + absolute_from
        lname = e.name if e.local_name is None else e.local_name
        body += struct.pack(
            "<4sHHHHHIIIHH", b"PK\x03\x04", 20, e.flags, e.method, 0, 0x21, e.crc, len(e.payload), e.size,
            len(lname), 0,
        )  # fmt: skip
        body += lname + e.payload
        central += struct.pack(
            "<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", (3 << 8) | 20, 20, e.flags, e.method, 0, 0x21, e.crc,
            len(e.payload), e.size, len(e.name), 0, 0, 0, 0, e.external_attr, offset,
        )  # fmt: skip
        central += e.name
    count = len(entries) if eocd_count is None else eocd_count
    eocd = struct.pack(
        "<4sHHHHIIH", b"PK\x05\x06", 0, 0, count, count, len(central), len(body) + absolute_from, 0
    )
    return bytes(body + central + eocd)


def zeros_raw_deflate(total: int) -> tuple[bytes, int]:
    """(raw deflate of ``total`` zero bytes, their CRC), made 1 MiB at a time."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = bytes(MIB)
    parts, crc, left = [], 0, total
    while left:
        n = min(left, MIB)
        parts.append(c.compress(block[:n]))
        crc = zlib.crc32(block[:n], crc)
        left -= n
    parts.append(c.flush())
    return b"".join(parts), crc


def peak_while(fn: Callable[[], object]) -> tuple[BaseException | None, int]:
    tracemalloc.start()
    err: BaseException | None = None
    try:
        fn()
    except BunzaiError as e:
        err = e
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return err, peak


def zipfile_bytes(members: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return buf.getvalue()


SAMPLE = [
    ("card.json", b'{"spec":"chara_card_v3"}' * 20),
    ("assets/icon/image/main.png", bytes(range(256)) * 4),
]


# -- reading ------------------------------------------------------------------------------------


def test_open_and_read_plain_zip() -> None:
    z = open_zip(zipfile_bytes([*SAMPLE, ("empty/", b"")]))
    assert z.names == ("card.json", "assets/icon/image/main.png", "empty/")
    assert z.prefix_length == 0 and z.prefix == b""
    assert z.has("card.json") and "card.json" in z and not z.has("CARD.JSON")
    for name, data in SAMPLE:
        assert z.read(name) == data
        info = z.info(name)
        assert info.size == len(data) and info.method == ZIP_DEFLATED and not info.is_dir
    assert z.info("empty/").is_dir and z.read("empty/") == b""


def test_missing_member_is_malformed_naming_it() -> None:
    z = open_zip(zipfile_bytes(SAMPLE))
    with pytest.raises(Malformed) as e:
        z.read("module.risum")
    assert e.value.path == "module.risum"


def test_stored_and_deflated_members_report_their_method() -> None:
    z = open_zip(raw_zip([stored("a.txt", b"plain"), deflated("b.txt", b"packed" * 10)]))
    assert (z.info("a.txt").method, z.info("b.txt").method) == (ZIP_STORED, ZIP_DEFLATED)
    assert z.read("a.txt") == b"plain" and z.read("b.txt") == b"packed" * 10


def test_not_a_zip() -> None:
    for data in (b"", b"hello", b"PK\x05\x06", bytes(100)):
        with pytest.raises(Malformed):
            open_zip(data)


def test_truncated_zip_at_every_length_is_malformed() -> None:
    data = raw_zip([stored("a.txt", b"hello"), deflated("b/c.json", b"{}" * 50)])
    for n in range(len(data)):
        with pytest.raises(Malformed):
            z = open_zip(data[:n])
            for name in z.names:
                z.read(name)


def test_truncated_zipfile_written_zip() -> None:
    data = zipfile_bytes(SAMPLE)
    for n in (0, 4, 30, len(data) // 2, len(data) - 30, len(data) - 22, len(data) - 1):
        with pytest.raises(Malformed):
            open_zip(data[:n])


def test_corrupt_member_data_is_malformed() -> None:
    data = bytearray(raw_zip([deflated("card.json", b'{"a": 1}' * 100)]))
    data[40] ^= 0xFF  # inside the deflate stream
    z = open_zip(bytes(data))
    with pytest.raises(Malformed) as e:
        z.read("card.json")
    assert e.value.path == "card.json"


def test_crc_mismatch_is_malformed() -> None:
    e = stored("a.txt", b"hello")
    e.crc ^= 1
    with pytest.raises(Malformed, match="CRC"):
        open_zip(raw_zip([e])).read("a.txt")


def test_random_corruption_only_raises_typed_errors() -> None:
    rng = random.Random(7)
    base = raw_zip([stored("a.txt", b"hello"), deflated("b/c.json", b'{"k": "v"}' * 30)])
    for _ in range(3000):
        data = bytearray(base)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            z = open_zip(bytes(data))
            for name in z.names:
                z.read(name)
        except BunzaiError:
            pass


# -- limits -------------------------------------------------------------------------------------


def test_bomb_is_refused_from_the_directory_before_inflating() -> None:
    payload, crc = zeros_raw_deflate(200 * MIB)
    assert len(payload) < 300 * 1024
    data = raw_zip([RawEntry(b"card.json", payload, 8, crc, 200 * MIB)])
    err, peak = peak_while(lambda: open_zip(data))
    assert isinstance(err, LimitExceeded) and err.path == "card.json"
    assert peak < 2 * MIB, peak


def test_bomb_with_a_lying_small_size_is_caught_while_inflating() -> None:
    payload, crc = zeros_raw_deflate(200 * MIB)
    data = raw_zip([RawEntry(b"card.json", payload, 8, crc, 1000)])
    z = open_zip(data, limits=ArchiveLimits(max_ratio=1e9))
    err, peak = peak_while(lambda: z.read("card.json"))
    assert isinstance(err, LimitExceeded) and err.path == "card.json"
    assert "declared size" in err.message
    assert peak < 4 * MIB, peak


def test_lying_size_patched_in_central_directory() -> None:
    data = bytearray(zipfile_bytes([("card.json", b"x" * 10_000)]))
    cd = data.rfind(b"PK\x01\x02")
    struct.pack_into("<I", data, cd + 24, 100)  # uncompressed size
    z = open_zip(bytes(data))
    assert z.info("card.json").size == 100
    with pytest.raises(LimitExceeded, match="declared size"):
        z.read("card.json")


def test_declared_size_larger_than_data() -> None:
    e = deflated("card.json", b"abc" * 10)
    e.size = 1000
    with pytest.raises(Malformed, match="declared"):
        open_zip(raw_zip([e])).read("card.json")


def test_stored_member_sizes_must_agree() -> None:
    e = stored("a", b"hello")
    e.size = 3
    with pytest.raises(Malformed, match="stored"):
        open_zip(raw_zip([e]))


def test_ratio_bound() -> None:
    payload, crc = zeros_raw_deflate(2 * MIB)
    data = raw_zip([RawEntry(b"card.json", payload, 8, crc, 2 * MIB)])
    with pytest.raises(LimitExceeded, match="ratio"):
        open_zip(data)
    assert open_zip(data, limits=ArchiveLimits(max_ratio=2000)).read("card.json") == bytes(2 * MIB)
    # small members are exempt: a tiny JSON file compresses well and that is fine
    small = deflated("tiny.json", bytes(100_000))
    assert open_zip(raw_zip([small])).read("tiny.json") == bytes(100_000)


def test_total_bound() -> None:
    payload, crc = zeros_raw_deflate(40 * MIB)
    entries = [RawEntry(f"a{i}.bin".encode(), payload, 8, crc, 40 * MIB) for i in range(3)]
    limits = ArchiveLimits(max_ratio=1e9)
    data = raw_zip(entries)
    err, peak = peak_while(lambda: open_zip(data, limits=limits))
    assert isinstance(err, LimitExceeded) and err.path == "a2.bin" and "total" in err.message
    assert peak < 2 * MIB, peak
    assert len(open_zip(raw_zip(entries[:2]), limits=limits).names) == 2


def test_archive_size_bound() -> None:
    with pytest.raises(LimitExceeded):
        open_zip(zipfile_bytes(SAMPLE), limits=ArchiveLimits(max_archive=100))


def test_compressed_size_bound() -> None:
    data = raw_zip([stored("big.bin", bytes(2000))])
    with pytest.raises(LimitExceeded):
        open_zip(data, limits=ArchiveLimits(max_entry=1000))


def test_ten_thousand_entries() -> None:
    entries = [stored(f"e{i}", b"") for i in range(10_000)]
    with pytest.raises(LimitExceeded, match="512"):
        open_zip(raw_zip(entries))
    # the end record may lie about the count: the directory itself is counted
    lying = raw_zip(entries, eocd_count=1)
    err, peak = peak_while(lambda: open_zip(lying))
    assert isinstance(err, LimitExceeded)
    # zipfile never got to build its 10k ZipInfo objects
    assert peak < 256 * 1024, peak
    assert len(open_zip(raw_zip(entries[:512])).names) == 512


# -- names and entry kinds ------------------------------------------------------------------------


BAD_NAMES = [
    "../x",
    "a/../../x",
    "..",
    "/etc/x",
    "C:/x",
    "C:\\x",
    "c:x",
    "a\\b",
    "a\0b",
    "a/\x01b",
    "",
    "a//b",
    "./a",
]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_safe_member_name_refuses(name: str) -> None:
    with pytest.raises(Malformed):
        safe_member_name(name)


@pytest.mark.parametrize(
    "name", ["card.json", "assets/icon/image/main.png", "dir/", "x_meta/ü ñ.json", "a..b/c..", "..a"]
)
def test_safe_member_name_accepts(name: str) -> None:
    assert safe_member_name(name) == name


@pytest.mark.parametrize("name", [*BAD_NAMES[:-3], "a//b"])
def test_hostile_names_in_an_archive_are_refused(name: str) -> None:
    raw = name.encode("utf-8")
    data = raw_zip([stored("card.json", b"{}"), stored(raw, b"evil", flags=0x800)])
    with pytest.raises(Malformed) as e:
        open_zip(data)
    assert e.value.path is not None


def test_nul_name_is_refused_although_zipfile_truncates_it() -> None:
    with pytest.raises(Malformed, match="control"):
        open_zip(raw_zip([stored(b"card.json\0.png", b"{}")]))


def test_duplicate_names_are_refused() -> None:
    data = raw_zip([stored("card.json", b"{}"), stored("card.json", b'{"evil": 1}')])
    with pytest.raises(Malformed, match="duplicate") as e:
        open_zip(data)
    assert e.value.path == "card.json"


def test_symlink_member_is_refused() -> None:
    link = stored("assets/link", b"/etc/passwd", external_attr=0o120777 << 16)
    with pytest.raises(Malformed, match="symlink") as e:
        open_zip(raw_zip([stored("card.json", b"{}"), link]))
    assert e.value.path == "assets/link"


def test_encrypted_member_is_unsupported() -> None:
    with pytest.raises(Unsupported) as e:
        open_zip(raw_zip([stored("secret.json", b"xx", flags=0x1)]))
    assert e.value.path == "secret.json"


def test_unknown_compression_is_unsupported() -> None:
    e = stored("card.json", b"{}")
    e.method = 12  # bzip2
    with pytest.raises(Unsupported):
        open_zip(raw_zip([e]))


def test_local_header_naming_another_file_is_refused() -> None:
    e = stored("card.json", b"{}", local_name=b"evil.json")
    with pytest.raises(Malformed, match="local header") as err:
        open_zip(raw_zip([e]))
    assert err.value.path == "card.json"


def test_overlapping_members_are_refused() -> None:
    inner = raw_zip([stored("b", b"hidden")])
    inner_local = inner[: 30 + 1 + 6]  # local header + name + data of "b"
    outer = stored("a", inner_local)
    data = bytearray(raw_zip([outer]))
    # add a second central entry for "b" whose local header sits inside "a"'s data
    eocd = data.rfind(b"PK\x05\x06")
    cd = data.rfind(b"PK\x01\x02")
    b_entry = struct.pack(
        "<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", (3 << 8) | 20, 20, 0, 0, 0, 0x21, zlib.crc32(b"hidden"),
        6, 6, 1, 0, 0, 0, 0, 0o100644 << 16, 30 + 1,
    ) + b"b"  # fmt: skip
    central = bytes(data[cd:eocd]) + b_entry
    body = bytes(data[:cd])
    patched = (
        body + central + struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 2, 2, len(central), len(body), 0)
    )
    with pytest.raises(Malformed, match="overlaps"):
        open_zip(patched)


# -- prefixes and polyglots --------------------------------------------------------------------------


def test_jpeg_zip_polyglot_with_offsets_relative_to_the_zip() -> None:
    # what Risu's fflate writes: the zip's offsets count from the zip, not the file
    data = JPEG + zipfile_bytes(SAMPLE)
    z = open_zip(data)
    assert z.prefix_length == len(JPEG) and z.prefix == JPEG
    assert z.read("card.json") == SAMPLE[0][1]
    assert z.info("card.json").offset == len(JPEG)


def test_prefix_with_absolute_offsets() -> None:
    data = JPEG + raw_zip([stored("card.json", b"{}")], absolute_from=len(JPEG))
    z = open_zip(data)
    assert z.prefix_length == len(JPEG) and z.read("card.json") == b"{}"


def test_written_polyglot_opens_with_zipfile_and_open_zip() -> None:
    data = write_zip(SAMPLE, prefix=JPEG)
    assert data.startswith(JPEG)
    z = open_zip(data)
    assert z.prefix == JPEG
    assert [z.read(n) for n in z.names] == [d for _, d in SAMPLE]
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert zf.testzip() is None
        assert zf.read("card.json") == SAMPLE[0][1]


def test_corpus_archives_open_and_read() -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not present at {CORPUS}")
    paths = sorted([*CORPUS.rglob("*.charx"), *CORPUS.rglob("*.byaf")])
    if not paths:
        pytest.skip("no archives in the corpus")
    for path in paths:
        data = path.read_bytes()
        z = open_zip(data)
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for name in z.names:
                assert z.read(name) == zf.read(name), (path.name, name)


# -- writing ------------------------------------------------------------------------------------


def test_write_is_deterministic_with_fixed_metadata() -> None:
    a = write_zip(SAMPLE)
    b = write_zip(list(SAMPLE))
    assert a == b
    with zipfile.ZipFile(io.BytesIO(a)) as zf:
        infos = zf.infolist()
        assert [i.filename for i in infos] == [n for n, _ in SAMPLE]
        assert {i.date_time for i in infos} == {ZIP_EPOCH}
        assert {i.external_attr >> 16 for i in infos} == {0o100644}
        assert {i.create_system for i in infos} == {3}


def test_write_read_round_trip_keeps_methods_and_order() -> None:
    specs: list[ZipMemberSpec | tuple[str, bytes]] = [
        ZipMemberSpec("x_meta/main.json", b'{"type": "PNG"}', ZIP_DEFLATED),
        ZipMemberSpec("assets/icon/image/main.png", bytes(range(256)) * 8, ZIP_STORED),
        ZipMemberSpec("assets/", b""),
        ZipMemberSpec("module.risum", b"\x6f\x00" + bytes(50)),
        ("card.json", "ünïcode".encode()),
        ZipMemberSpec("ünï/名前.json", b"{}"),
    ]
    data = write_zip(specs, method=ZIP_STORED)
    z = open_zip(data)
    assert z.names == (
        "x_meta/main.json",
        "assets/icon/image/main.png",
        "assets/",
        "module.risum",
        "card.json",
        "ünï/名前.json",
    )
    assert [z.info(n).method for n in z.names] == [
        ZIP_DEFLATED,
        ZIP_STORED,
        ZIP_STORED,
        ZIP_STORED,
        ZIP_STORED,
        ZIP_STORED,
    ]
    assert z.read("card.json") == "ünïcode".encode()
    assert z.read("ünï/名前.json") == b"{}"
    assert z.info("assets/").is_dir
    # re-export with each member's original method gives the same bytes again
    again = write_zip([ZipMemberSpec(n, z.read(n), z.info(n).method) for n in z.names])
    assert again == data


def test_write_refuses_bad_and_duplicate_names() -> None:
    for name in ("../x", "/abs", "C:/x", "a\\b", "a\0b"):
        with pytest.raises(Malformed):
            write_zip([(name, b"")])
    with pytest.raises(Malformed, match="duplicate"):
        write_zip([("a", b"1"), ("a", b"2")])


def test_write_rejects_unknown_method() -> None:
    with pytest.raises(ValueError):
        write_zip([("a", b"")], method=12)
    with pytest.raises(ValueError):
        write_zip([ZipMemberSpec("a", b"", 14)])


def test_write_empty_archive() -> None:
    data = write_zip([])
    assert open_zip(data).names == ()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert open_zip(write_zip([], prefix=JPEG)).prefix_length == len(JPEG)


def test_every_member_error_names_its_member() -> None:
    """A broken member's typed error names the member (``path``), whatever broke: the pipeline's
    reject and the CLI's line say which file of the archive it was (mutation testing found only
    the corrupt-stream case pinned)."""
    whole = deflated("cards/a.json", b'{"a": 1}' * 100)
    cut = RawEntry(whole.name, whole.payload[: len(whole.payload) // 2], 8, whole.crc, whole.size)
    short = deflated("cards/b.json", b"abc" * 10)
    short.size = 1000
    bad_crc = stored("cards/c.txt", b"hello")
    bad_crc.crc ^= 1
    corrupt = bytearray(raw_zip([deflated("cards/d.json", b'{"a": 1}' * 100)]))
    corrupt[30 + len("cards/d.json") + 10] ^= 0xFF  # inside the deflate stream
    cases = [
        (raw_zip([cut]), "cards/a.json", "truncated"),
        (raw_zip([short]), "cards/b.json", "declared"),
        (raw_zip([bad_crc]), "cards/c.txt", "CRC"),
        (bytes(corrupt), "cards/d.json", "deflate"),
    ]
    for data, name, what in cases:
        with pytest.raises(Malformed) as e:
            open_zip(data).read(name)
        assert e.value.path == name and what in e.value.message, (name, e.value)
    with pytest.raises(Malformed) as e:
        open_zip(raw_zip([bad_crc])).read("cards/other.txt")
    assert e.value.path == "cards/other.txt"
