"""Pillow's habit: every bundled sample truncated at every length, for every codec of the registry,
and the EXIF block fuzzed under a valid CRC, ends in an entity or a typed error — never a crash or
an internal error."""

from __future__ import annotations

import functools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bunzai_codecs import BunzaiError
from bunzai_codecs.core import registry
from bunzai_codecs.core.sniff import Sniff
from tests.formats.helpers import SAMPLES, chunks, inputs_below, png_chunk, sample


@functools.cache
def samples_by_codec() -> dict[str, list[str]]:
    """codec id -> the bundled samples (paths under samples/) that detection gives to it."""
    out: dict[str, list[str]] = {}
    for p, name, data in inputs_below(SAMPLES, skip=()):
        best = registry.detect(Sniff(data, name))
        if best is not None:
            out.setdefault(best.id, []).append(p.relative_to(SAMPLES).as_posix())
    return out


def _decode_or_typed_error(codec_id: str, data: bytes, name: str) -> None:
    codec = registry.get(codec_id)
    Codec = type(codec)
    Codec.detect_errors.clear()
    codec.detect(Sniff(data, name))
    assert Codec.detect_errors == []
    try:
        codec.decode(Sniff(data, name))
    except BunzaiError as exc:
        assert not getattr(exc, "internal", False), str(exc)


@pytest.mark.parametrize("codec_id", sorted(c.id for c in registry.all_codecs()))
def test_truncated_at_every_length(codec_id: str) -> None:
    rels = samples_by_codec().get(codec_id)
    assert rels, f"no file of samples/ is detected as {codec_id}: add one (this test truncates it)"
    for rel in rels:
        data = sample(rel)
        step = max(1, len(data) // 700)
        for cut in range(0, len(data), step):
            _decode_or_typed_error(codec_id, data[:cut], rel)


def _rebuild(parts: list[tuple[bytes, bytes]]) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + b"".join(png_chunk(t, d) for t, d in parts)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.one_of(st.integers(0, 160), st.integers(0, 10_000)), st.integers(0, 255)),
        min_size=1,
        max_size=6,
    )
)
def test_exif_block_fuzzed_under_a_valid_crc(edits: list[tuple[int, int]]) -> None:
    for rel in ("backyard/maelis.v4.backyard.png", "backyard/tidecaller.v2.backyard.png"):
        parts = chunks(sample(rel))
        i = next(k for k, (t, _) in enumerate(parts) if t == b"eXIf")
        block = bytearray(parts[i][1])
        for pos, value in edits:
            block[pos % len(block)] = value
        parts[i] = (b"eXIf", bytes(block))
        _decode_or_typed_error("backyard", _rebuild(parts), rel)
