"""core.inflate.bounded: the one bounded loop behind zip members, PNG text chunks and .risup."""

from __future__ import annotations

import gzip
import os
import zlib

import pytest

from bunzai_codecs.core import inflate

PLAIN = os.urandom(300_000) + b"a" * 3_000_000  # spans several FEED slices and STEP outputs


def raw_deflate(data: bytes) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


@pytest.mark.parametrize(
    ("packed", "wbits"),
    [
        (zlib.compress(PLAIN), inflate.ZLIB),
        (raw_deflate(PLAIN), inflate.RAW_DEFLATE),
        (gzip.compress(PLAIN, mtime=0), inflate.GZIP),
    ],
)
def test_each_container_inflates_to_the_original(packed: bytes, wbits: int) -> None:
    assert inflate.bounded(packed, len(PLAIN), wbits=wbits) == PLAIN
    assert inflate.bounded(memoryview(packed), len(PLAIN) + 10, wbits=wbits) == PLAIN


def test_one_byte_past_the_bound_is_too_large() -> None:
    with pytest.raises(inflate.TooLarge):
        inflate.bounded(zlib.compress(PLAIN), len(PLAIN) - 1)


def test_a_bomb_is_stopped_at_the_bound() -> None:
    bomb = zlib.compress(b"\0" * (200 * 1024 * 1024), 9)  # 200 MiB from ~200 KB
    with pytest.raises(inflate.TooLarge, match="inflates past 1048576 bytes"):
        inflate.bounded(bomb, 1024 * 1024)


def test_a_cut_stream_is_truncated() -> None:
    packed = zlib.compress(PLAIN)
    with pytest.raises(inflate.Truncated):
        inflate.bounded(packed[: len(packed) // 2], len(PLAIN))
    with pytest.raises(inflate.Truncated):
        inflate.bounded(b"", 10)


def test_bad_data_is_corrupt_with_zlibs_reason() -> None:
    with pytest.raises(inflate.Corrupt, match="header"):
        inflate.bounded(b"\x00\x01garbage", 100)


def test_bytes_after_the_end_marker_are_ignored() -> None:
    assert inflate.bounded(zlib.compress(b"card") + b"trailing junk", 4) == b"card"


def test_outcomes_share_one_base() -> None:
    assert all(
        issubclass(t, inflate.InflateError) for t in (inflate.Truncated, inflate.TooLarge, inflate.Corrupt)
    )


def test_zlib_is_never_asked_for_more_than_the_bound_plus_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """The module's promise (a bomb costs at most its bound): every call asks zlib for at most what
    is left of ``limit + 1``, so the output held never passes it by more than one byte, whatever
    the compressed input holds (mutation testing found nothing pinned the exact amount)."""
    asked: list[tuple[int, int]] = []
    real = zlib.decompressobj

    class Spy:
        def __init__(self, wbits: int) -> None:
            self.d = real(wbits)
            self.produced = 0

        def __getattr__(self, name: str) -> object:
            return getattr(self.d, name)

        def decompress(self, data: bytes, max_length: int = 0) -> bytes:
            asked.append((self.produced, max_length))
            out = self.d.decompress(data, max_length)
            self.produced += len(out)
            return out

    monkeypatch.setattr(inflate.zlib, "decompressobj", Spy)
    for limit in (0, 1, 1000, inflate.STEP + 5, 3 * inflate.STEP):
        asked.clear()
        with pytest.raises(inflate.TooLarge):
            inflate.bounded(zlib.compress(bytes(4 * inflate.STEP)), limit)
        assert asked and all(0 < n <= limit + 1 - before for before, n in asked), (limit, asked)
        assert all(n <= inflate.STEP for _, n in asked)
        assert sum(n for _, n in asked) >= limit + 1  # and it did ask for all of it, no less
    asked.clear()
    assert inflate.bounded(zlib.compress(b"x" * 10), 10) == b"x" * 10
    assert asked and all(0 < n <= 11 - before for before, n in asked)
