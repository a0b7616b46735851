"""Helpers shared by the codec tests: detection scores, exports and the corpus round-trip comparer
(the SillyTavern tests take ``rt_compare`` from here too). ``sample`` and ``edited`` are in
tests/formats/helpers.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bunzai_codecs import read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.base import Body
from tests.formats.helpers import sample

ROOT = Path(__file__).resolve().parents[2]


def sample_tree(rel: str) -> Any:
    return json.loads(sample(rel))


def scores(data: bytes, name: str = "x.json") -> dict[str, float]:
    """Every non-zero detection score of ``data``."""
    return {c.id: c.score for c in registry.detect_all(Sniff(data, name)).candidates}


def winner(data: bytes, name: str = "x.json") -> str | None:
    best = registry.detect(Sniff(data, name))
    return best.id if best else None


def dumps(tree: Any) -> bytes:
    return json.dumps(tree, ensure_ascii=False).encode("utf-8")


def decode(data: bytes, name: str = "x.json", fmt: str | None = None) -> Decoded:
    return read(data, name, format=fmt)


def export(e: CanonicalEntity, fmt: str, linked: list[CanonicalEntity] | None = None) -> bytes:
    return write(e, fmt, linked=linked if linked is not None else [e]).data


def rt_compare(a: bytes, b: bytes) -> list[str]:
    """The shared corpus comparer (../shared/tools/rt_check.py) when present, else JSON equality."""
    from conftest import corpus_root

    root = corpus_root()
    tools = root.parent / "tools" if root is not None else ROOT.parent / "shared" / "tools"
    if (tools / "rt_check.py").is_file():
        if str(tools) not in sys.path:
            sys.path.insert(0, str(tools))
        from rt_check import compare

        return list(compare(a, b))
    return _compare_without_tools(a, b)


def _compare_without_tools(a: bytes, b: bytes) -> list[str]:
    """rt_check.py's rules, for a checkout without ../shared/tools: PNG text payloads equal as JSON
    and other chunks identical; zip members equal (JSON members as trees); else JSON trees equal."""
    if a == b:
        return []
    if a[:8] == b"\x89PNG\r\n\x1a\n":
        return [] if _png_view(a) == _png_view(b) else ["PNG chunks or text payloads differ"]
    if a[:2] == b"PK":
        return [] if _zip_view(a) == _zip_view(b) else ["zip members differ"]
    return [] if json.loads(a) == json.loads(b) else ["trees differ"]


def _png_view(data: bytes) -> tuple[Any, Any]:
    import base64

    from bunzai_codecs.core import png

    chunks = png.parse(data).chunks
    other = [(c.type, c.data) for c in chunks if c.type not in (b"tEXt", b"zTXt", b"iTXt")]
    texts: dict[str, Any] = {}
    for t in png.text_chunks(chunks):
        kw = t.keyword.lower()
        if kw in ("chara", "ccv3"):  # card payloads compare as JSON (the first of each keyword)
            texts.setdefault(kw, json.loads(base64.b64decode(t.text)))
        else:
            texts.setdefault(kw, t.text)
    return other, texts


def _zip_view(data: bytes) -> dict[str, Any]:
    import io
    import zipfile

    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {n: json.loads(z.read(n)) if n.endswith(".json") else z.read(n) for n in z.namelist()}


def bodies(d: Decoded) -> list[Body]:
    return [e.body for e in d.entities]
