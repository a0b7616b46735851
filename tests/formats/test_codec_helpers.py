"""The round-trip comparer's own rules when ../shared/tools is absent (what CI's clean clone uses)."""

from __future__ import annotations

import base64
import json

from bunzai_codecs.core import png
from tests.formats.codec_helpers import _compare_without_tools
from tests.formats.sillytavern.st_helpers import build_png


def _card(tree: object, *, extra: bytes = b"", indent: int | None = None) -> bytes:
    payload = base64.b64encode(json.dumps(tree, indent=indent).encode("utf-8"))
    text = [png.make_text_chunk("chara", payload, "tEXt")]
    if extra:
        text.append(png.make_text_chunk("Software", extra, "tEXt"))
    return build_png(*text)


def test_png_cards_compare_their_payloads_as_json_and_other_text_as_bytes() -> None:
    tree = {"spec": "chara_card_v2", "data": {"name": "A", "tags": ["x"]}}
    a = _card(tree, extra=b"app 1.0")
    assert _compare_without_tools(a, _card(tree, extra=b"app 1.0", indent=2)) == []
    assert _compare_without_tools(a, _card({**tree, "data": {"name": "B"}}, extra=b"app 1.0"))
    assert _compare_without_tools(a, _card(tree, extra=b"app 2.0"))


def test_json_compares_as_trees() -> None:
    assert _compare_without_tools(b'{"a": [1, 2]}', b'{"a":[1,2]}') == []
    assert _compare_without_tools(b'{"a": [1, 2]}', b'{"a":[2,1]}') == ["trees differ"]
