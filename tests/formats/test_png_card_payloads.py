"""A PNG card's ``chara`` payload is not parsed when it is the ``ccv3`` one relabelled (as SillyTavern
writes the pair), and the tree the detectors then see is exactly the one a parse gives; any other
``chara`` is parsed."""

from __future__ import annotations

import base64
import json
from collections import Counter
from typing import Any

import orjson
import pytest

from bunzai_codecs.core import png
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.formats.tavern import png as st_card
from tests.formats.helpers import tiny_png


def _tree(**extensions: Any) -> dict[str, Any]:
    return {
        "name": "Maren",  # the V1 mirror ST keeps in both chunks
        "spec": "chara_card_v3",
        "spec_version": "3.0",
        "data": {"name": "Maren", "description": "keeps the light \u2014 " * 50, "extensions": extensions},
    }


def _card(chara: bytes, ccv3: bytes) -> bytes:
    return png.replace_text(
        tiny_png(),
        remove=st_card.CARD_KEYWORDS,
        add=[png.make_text_chunk("chara", chara), png.make_text_chunk("ccv3", ccv3)],
    )


def _b64(tree: Any, *, dumps: Any = orjson.dumps) -> bytes:
    out = dumps(tree)
    return base64.b64encode(out if isinstance(out, bytes) else out.encode())


def _parsed(data: bytes) -> list[Any]:
    """Both payloads parsed the plain way (no Sniff, no short-cut)."""
    texts = png.text_chunks(png.parse(data).chunks, keywords=st_card.CARD_KEYWORDS)
    by = {t.keyword: st_card.payload_tree(t, 0) for t in texts}
    return [by["ccv3"], by["chara"]]


def test_a_relabelled_chara_is_not_parsed_and_is_the_tree_a_parse_gives(parses: Counter[str]) -> None:
    tree = _tree(rolecall={"type": "character"})
    data = st_card.write_png(tiny_png(), tree)  # as SillyTavern writes the pair
    expected = _parsed(data)
    parses.clear()
    trees = st_card.png_card_trees(Sniff(data, "card.png"))
    assert parses == {"ccv3": 1}
    assert trees == expected
    assert trees[1]["spec"] == "chara_card_v2" and trees[1]["spec_version"] == "2.0"
    assert [list(t) for t in trees] == [list(t) for t in expected]  # key order too


@pytest.mark.parametrize(
    "chara",
    [
        # another writer's spacing (Python's json: `", "` and `": "`)
        lambda t: _b64(st_card.relabel(t, "chara_card_v2", "2.0"), dumps=json.dumps),
        # ASCII-escaped text: the same tree, other bytes
        lambda t: _b64(
            st_card.relabel(t, "chara_card_v2", "2.0"), dumps=lambda x: json.dumps(x, separators=(",", ":"))
        ),
        # a different card in chara (an app that left a stale one)
        lambda t: _b64(
            {**st_card.relabel(t, "chara_card_v2", "2.0"), "data": {"name": "Other", "extensions": {"x": 1}}}
        ),
        # chara not relabelled: the V3 label in both
        lambda t: _b64(t),
        # base64 with line breaks (tolerated on read)
        lambda t: base64.encodebytes(orjson.dumps(st_card.relabel(t, "chara_card_v2", "2.0"))),
    ],
)
def test_any_other_chara_is_parsed(parses: Counter[str], chara: Any) -> None:
    tree = _tree(lumiverse_x=1)
    data = _card(chara(tree), _b64(tree))
    expected = _parsed(data)
    parses.clear()
    trees = st_card.png_card_trees(Sniff(data, "card.png"))
    assert parses == {"ccv3": 1, "chara": 1}
    assert trees == expected


def test_base64_with_whitespace_or_without_padding_still_decodes() -> None:
    tree = _tree()
    raw = orjson.dumps(tree)
    for value in (
        base64.encodebytes(raw),
        base64.b64encode(raw).rstrip(b"="),
        b" " + base64.b64encode(raw) + b"\n",
    ):
        t = png.TextChunk("ccv3", value, "tEXt", 0)
        assert st_card.payload_tree(t, 0) == tree


def test_an_edited_card_writes_a_compressed_itxt_ccv3_back_compressed() -> None:
    """Issue 37: a card whose ``ccv3`` sits in a compressed iTXt chunk (with a language tag and a
    translated keyword), edited and written back as the same format, keeps that chunk's type,
    compression, tags and place; the edit is in it, and the plain tEXt ``chara`` stays plain."""
    import dataclasses

    from bunzai_codecs import read, write

    tree = _tree()
    v2 = st_card.relabel(tree, st_card.SPEC_V2, "2.0")
    data = png.replace_text(
        tiny_png(),
        remove=st_card.CARD_KEYWORDS,
        add=[
            png.make_text_chunk("chara", _b64(v2)),
            png.make_text_chunk(
                "ccv3", _b64(tree), "iTXt", compress=True, language="en", translated_keyword="Karte"
            ),
        ],
    )
    before = [
        (t.keyword, t.chunk_type, t.compressed, t.index) for t in png.text_chunks(png.parse(data).chunks)
    ]
    e = read(data, "card.png").primary
    identity = e.body.identity.model_copy(update={"description": "edited"})  # type: ignore[attr-defined]
    edited = dataclasses.replace(e, body=e.body.model_copy(update={"identity": identity}))
    out = write(edited, e.source.format if e.source else "sillytavern").data  # type: ignore[union-attr]
    texts = png.text_chunks(png.parse(out).chunks, keywords=st_card.CARD_KEYWORDS)
    assert [(t.keyword, t.chunk_type, t.compressed, t.index) for t in texts] == before
    ccv3 = next(t for t in texts if t.keyword == "ccv3")
    assert (ccv3.language, ccv3.translated_keyword) == ("en", "Karte")
    assert all(st_card.payload_tree(t, 0)["data"]["description"] == "edited" for t in texts)
    # on disk: compression flag 1, method 0 (the parser's reading above is that flag)
    raw = png.parse(out).chunks[ccv3.index].data
    assert raw[len(b"ccv3\0") : len(b"ccv3\0") + 2] == b"\1\0"
