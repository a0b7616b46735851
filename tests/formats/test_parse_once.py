"""Every codec's detector sees every input, so what detectors look at is parsed once per input and
shared with the decoder (docs/perf-notes/2026-11-30-first-run-and-targets.md, "What was changed for the targets")."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from bunzai_codecs import read
from bunzai_codecs.core import registry
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.formats.tavern import png as st_card
from tests.formats.helpers import tiny_png


def _png_card(extensions: dict[str, Any] | None = None) -> bytes:
    tree = {
        "spec": "chara_card_v3",
        "spec_version": "3.0",
        "data": {"name": "Maren", "description": "keeps the light " * 200, "extensions": extensions or {}},
    }
    return st_card.write_png(tiny_png(), tree)  # `chara` and `ccv3`, as SillyTavern writes them


@pytest.mark.parametrize(
    ("extensions", "fmt"),
    [
        (None, "sillytavern"),
        ({"rolecall": {"type": "character"}}, "rolecall"),
        ({"alternate_character_name": "M"}, "lumiverse"),
    ],
)
def test_a_png_card_payload_is_parsed_once_for_all_detectors_and_the_decoder(
    parses: Counter[str], extensions: dict[str, Any] | None, fmt: str
) -> None:
    data = _png_card(extensions)
    s = Sniff(data, "card.png")
    assert registry.detect(s).id == fmt  # type: ignore[union-attr]
    decoded = registry.get(fmt).decode(s)
    assert max(parses.values()) == 1, parses
    # the decoder's escrow twin is the very tree detection parsed (shared, not copied)
    ccv3 = s.png_text("ccv3")
    assert ccv3 is not None
    assert decoded.primary.original[fmt].raw is st_card.sniff_payload_tree(s, ccv3)


def test_a_broken_ccv3_payload_is_still_reported_once_with_its_offset(parses: Counter[str]) -> None:
    from bunzai_codecs.core import png

    pf = png.parse(_png_card())
    chunks = [
        png.make_text_chunk("ccv3", b"!!not base64")
        if c.type == b"tEXt" and c.data.startswith(b"ccv3\0")
        else c
        for c in pf.chunks
    ]
    data = png.build(chunks)
    at = next(c.offset for c in png.parse(data).chunks if c.data.startswith(b"ccv3\0"))
    decoded = read(data, "card.png")
    assert decoded.primary.source.format == "sillytavern"  # type: ignore[union-attr]
    assert decoded.primary.warnings[0] == (
        f"ccv3 chunk unusable (tEXt 'ccv3' chunk is not valid base64 at byte {at}); the card was read from chara"
    )
    assert max(parses.values()) == 1, parses
