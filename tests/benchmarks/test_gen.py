"""The benchmark corpus generator: seeded, realistic, and read by bunzai as the manifest says.

No test here measures time: the benchmark prints figures (``make bench``), tests only check that
the corpus it measures is what it claims to be.
"""

from __future__ import annotations

import struct
import zlib
from collections import Counter

import pytest

from bench import gen, loop
from bunzai_codecs.core import png

N = 60


@pytest.fixture(scope="module")
def corpus() -> list[loop.File]:
    gen.generate("memory://bench-test-a", N, seed=3)
    return loop.load("memory://bench-test-a")


def test_same_seed_same_bytes(corpus: list[loop.File]) -> None:
    rows = gen.generate("memory://bench-test-b", N, seed=3)
    assert rows == gen.read_manifest("memory://bench-test-a")
    again = loop.load("memory://bench-test-b")
    assert [f.data for f in again] == [f.data for f in corpus]


def test_another_seed_other_bytes(corpus: list[loop.File]) -> None:
    other = [b for _, _, b in gen.iter_files(N, 4, 0, 10)]
    assert other != [f.data for f in corpus[:10]]


def test_the_mix_follows_the_shares() -> None:
    counts = Counter(gen.plan(10_000, 7))
    assert sum(counts.values()) == 10_000
    assert counts["broken"] == 100  # 1 %
    assert counts["card-png"] == 1000
    assert counts["card-v2-json"] == 2900  # its share plus the extra share
    assert counts["lorebook-st"] == 1200
    assert set(counts) == set(gen.EXPECT)


def test_every_file_reads_as_the_manifest_says(corpus: list[loop.File]) -> None:
    assert {f.expect for f in corpus} >= {"sillytavern", "sillytavern-lorebook"}
    assert loop.check_formats(corpus) == []


def test_broken_files_are_typed_errors() -> None:
    from bunzai_codecs import bundle
    from bunzai_codecs.core.errors import BunzaiError

    for k in range(12):
        import random

        rng = random.Random(f"broken/{k}")
        text = gen.Text(rng, gen.pool(3), ja=False)
        suffix, data = gen.broken(rng, text, 3)
        with pytest.raises(BunzaiError) as info:
            bundle.read(data, f"x{suffix}")
        assert not getattr(info.value, "internal", False), info.value


def test_card_images_are_real_pngs() -> None:
    img = gen.image_pool(3)[0]
    pf = png.parse(img)  # signature, lengths and CRCs checked
    assert [c.type for c in pf.chunks] == [b"IHDR", b"IDAT", b"IEND"]
    width, height, depth, colour = struct.unpack(">IIBB", pf.chunks[0].data[:10])
    assert (depth, colour) == (8, 2)  # 8-bit RGB
    raw = zlib.decompress(pf.chunks[1].data)
    assert len(raw) == height * (1 + 3 * width)
    assert all(raw[y * (1 + 3 * width)] == 1 for y in range(height))  # every row Sub-filtered
    assert 200_000 < len(img) < 270_000


def test_png_cards_carry_both_chunks(corpus: list[loop.File]) -> None:
    pngs = [f for f in corpus if f.path.endswith("card-png.png")]
    assert pngs
    texts = png.text_chunks(png.parse(pngs[0].data).chunks)
    assert [t.keyword for t in texts] == ["chara", "ccv3"]
