"""Tavern cards in PNG files: the ``ccv3``/``chara`` text chunks, their payloads, and the cheap
looks into a card that detectors of apps writing Tavern cards take.

- :func:`payload_tree` reads a card chunk's JSON (base64 as Tavern apps write it, or bare JSON text);
  :func:`sniff_payload_tree` parses it once per input for every detector and the decoder;
- :func:`write_png` puts a fresh card into an image as SillyTavern does (``chara`` with the V2
  label, then ``ccv3`` with the V3 label); :func:`rewrite_png` writes an edited card back into the
  PNG it came from, every other chunk and the chunk layout kept;
- :func:`card_extensions` and :func:`png_card_trees` are detection helpers that never raise.

It imports no canonical model: detectors (``formats/<app>/detect.py``) use it.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import orjson

from bunzai_codecs.core import png
from bunzai_codecs.core.errors import BunzaiError, Malformed
from bunzai_codecs.core.sniff import BIG_JSON, Sniff, parse_json

if TYPE_CHECKING:
    pass

#: the ``spec`` labels of a V2 and a V3 card
SPEC_V2 = "chara_card_v2"
SPEC_V3 = "chara_card_v3"
CARD_SPECS = frozenset({SPEC_V2, SPEC_V3})

CCV3 = "ccv3"
CHARA = "chara"
#: PNG keywords of a Tavern card, in the order SillyTavern reads them
CARD_KEYWORDS = (CCV3, CHARA)
#: CCv3 asset chunks (``chara-ext-asset_:N``, also without the colon) and the refs naming them
ASSET_CHUNK = "chara-ext-asset_"
ASSET_REF = "__asset:"


def payload_tree(t: png.TextChunk, offset: int) -> Any:
    """A card text chunk's JSON: base64 as Tavern apps write it (whitespace and missing padding
    tolerated), or bare JSON text (``{``...) as some tools do. Typed errors name the chunk."""
    raw = t.text.strip()
    kw = t.keyword
    if raw[:1] == b"{":
        data = raw
    else:
        decoded = _b64decode(raw)
        if decoded is None:
            raise Malformed(f"{t.chunk_type} {kw!r} chunk is not valid base64", offset=offset)
        data = decoded
    try:
        return parse_json(data, what=f"{kw} chunk JSON")
    except Malformed as exc:
        exc.offset = offset
        raise


def _b64decode(raw: bytes) -> bytes | None:
    """Base64 as card chunks hold it; ``None`` when it is not base64. Whitespace and missing
    padding are tolerated: the value is decoded as it is first (what apps write), and only when that
    fails is it stripped of whitespace and padded (splitting a 300 KB value costs more than decoding
    it); both ways give the same bytes for any value the first accepts."""
    if len(raw) % 4 == 0:
        try:
            return base64.b64decode(raw, validate=True)
        except (binascii.Error, ValueError):
            pass
    b64 = b"".join(raw.split())
    if len(b64) % 4:
        b64 += b"=" * (-len(b64) % 4)
    try:
        return base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError):
        return None


def sniff_payload_tree(s: Sniff, t: png.TextChunk) -> Any:
    """``payload_tree`` of text chunk ``t`` of ``s``'s PNG (offset: the chunk's own), parsed once
    per input: every detector that looks into a PNG card (RoleCall, Lumiverse...) and the decoder
    share the one parse. The tree is shared, never copied (it becomes the escrow twin)."""
    pf = s.png
    offset = pf.chunks[t.index].offset if pf is not None and t.index < len(pf.chunks) else 0
    return s.memo(("png-card-payload", t.index), lambda: payload_tree(t, offset))


def png_card_trees(s: Sniff) -> list[Any]:
    """The decodable ``ccv3`` then ``chara`` payloads of a PNG (a detection helper: a payload that
    does not decode is skipped, nothing raises). Each payload is parsed once per input, for every
    detector that asks and for the card decoder (``Sniff.memo``); the list is shared too (do not
    change it)."""
    return s.memo(("png-card-trees",), lambda: _png_card_trees(s))


def _png_card_trees(s: Sniff) -> list[Any]:
    out: list[Any] = []
    ccv3 = s.png_text(CCV3)
    for kw in CARD_KEYWORDS:
        t = s.png_text(kw)
        if t is None:
            continue
        if kw == CHARA and out and ccv3 is not None and len(ccv3.text) <= BIG_JSON:
            # (a ccv3 payload of that size was parsed by orjson: no value its writer cannot repeat)
            same = _relabelled_twin(s, t, out[0])
            if same is not None:
                out.append(same)
                continue
        try:
            out.append(sniff_payload_tree(s, t))
        except BunzaiError:
            continue
    return out


def _relabelled_twin(s: Sniff, chara: png.TextChunk, ccv3_tree: Any) -> Any:
    """The ``chara`` payload's tree without parsing it, when it is exactly the ``ccv3`` tree with
    SillyTavern's V2 label (ST writes ``ccv3`` as ``chara`` with only ``spec``/``spec_version``
    changed): ``chara`` then holds, byte for byte, the base64 of that relabelled tree's compact JSON,
    which parses back to that very tree. ``None`` when it does not (another writer's spacing or
    escapes, a different card): the caller parses it. Either way the tree is the one parsing would
    give; it is remembered for the decoder as a parse would be (``Sniff.memo``)."""
    if not isinstance(ccv3_tree, dict):
        return None
    relabelled = relabel(ccv3_tree, SPEC_V2, "2.0")
    try:
        expected = base64.b64encode(orjson.dumps(relabelled))
    except (orjson.JSONEncodeError, TypeError):
        return None
    if chara.text.strip() != expected:
        return None
    return s.memo(("png-card-payload", chara.index), lambda: relabelled)


def card_extensions(tree: Any) -> Mapping[str, Any] | None:
    """The extensions object of a Tavern card tree: ``data.extensions`` of a V2/V3 card, or
    ``extensions`` of a flat object with a string ``name`` (a CCv1 card, or RoleCall's bare ``data``
    PNG payload); else ``None``. Never raises."""
    if not isinstance(tree, dict):
        return None
    if "spec" in tree:
        data = tree.get("data")
        spec = tree.get("spec")
        if not isinstance(spec, str) or spec not in CARD_SPECS or not isinstance(data, dict):
            return None
    elif "data" in tree or not isinstance(tree.get("name"), str):
        return None
    else:
        data = tree
    ext = data.get("extensions")
    return ext if isinstance(ext, dict) else None


def encode_payload(tree: Any, *, base64_form: bool = True) -> bytes:
    """A card tree as a text-chunk value: base64 of compact UTF-8 JSON (SillyTavern's form)."""
    data = orjson.dumps(tree)
    return base64.b64encode(data) if base64_form else data


def relabel(tree: dict[str, Any], spec: str, version: str) -> dict[str, Any]:
    """``tree`` with only ``spec``/``spec_version`` changed (SillyTavern's ``chara``/``ccv3`` pair)."""
    out = dict(tree)
    if "spec" in out or "data" in out:
        out["spec"] = spec
        out["spec_version"] = version
    return out


def card_keyword(c: png.Chunk) -> str | None:
    """The card keyword (``ccv3``/``chara``, lower case) of a text chunk, else ``None``; nothing is
    inflated."""
    if c.type not in (b"tEXt", b"zTXt", b"iTXt"):
        return None
    sep = c.data.find(b"\0")
    if sep < 0:
        return None
    kw = c.data[:sep].decode("latin-1").lower()
    return kw if kw in CARD_KEYWORDS else None


def write_png(image: bytes, tree: dict[str, Any]) -> bytes:
    """``image`` with a fresh card in it, as SillyTavern writes one: every existing ``chara``/``ccv3``
    chunk removed, then ``chara`` (V2 label) and ``ccv3`` (V3 label) inserted before ``IEND``."""
    chara = relabel(tree, SPEC_V2, "2.0")
    ccv3 = relabel(tree, SPEC_V3, "3.0")
    return png.replace_text(
        image,
        remove=CARD_KEYWORDS,
        add=[
            png.make_text_chunk(CHARA, encode_payload(chara)),
            png.make_text_chunk(CCV3, encode_payload(ccv3)),
        ],
    )


def rewrite_png(
    blob: bytes,
    primary: str,
    tree: dict[str, Any],
    backfill: Callable[[Any], dict[str, Any]],
) -> bytes:
    """The PNG ``blob`` a card was read from (from its ``primary`` chunk) with ``tree`` in that
    chunk; the other card chunk gets ``backfill(its own tree, or None when it does not decode)``.
    Every other chunk, the chunk types, compression and order are kept; a stale duplicate card chunk
    is dropped (SillyTavern keeps one per keyword)."""
    pf = png.parse(blob, skip_crc=png.IMAGE_DATA)  # as it was read: the pixels' CRC kept as is
    errors: list[Any] = []
    texts = png.text_chunks(pf.chunks, keywords=CARD_KEYWORDS, errors=errors)
    by_index = {t.index: t for t in texts}
    seen: set[str] = set()
    chunks: list[png.Chunk] = []
    for i, c in enumerate(pf.chunks):
        kw = card_keyword(c)
        if kw is None:
            chunks.append(c)
            continue
        if kw in seen:
            continue
        seen.add(kw)
        t = by_index.get(i)
        if kw == primary:
            payload = tree
        else:
            own = None
            if t is not None:
                try:
                    own = payload_tree(t, c.offset)
                except Malformed:
                    own = None
            payload = backfill(own) if isinstance(own, dict) else _relabelled(tree, kw)
        chunks.append(_rewrite_chunk(c, t, payload))
    return png.build(chunks, pf.trailing)


def _relabelled(tree: dict[str, Any], kw: str) -> dict[str, Any]:
    """The primary tree relabelled as SillyTavern writes the other chunk."""
    if kw == CHARA:
        return relabel(tree, SPEC_V2, "2.0")
    return relabel(tree, SPEC_V3, "3.0")


def _rewrite_chunk(c: png.Chunk, t: png.TextChunk | None, tree: dict[str, Any]) -> png.Chunk:
    sep = c.data.find(b"\0")
    keyword = c.data[:sep].decode("latin-1")
    bare = t is not None and t.text.lstrip()[:1] == b"{"
    value = encode_payload(tree, base64_form=not bare)
    if t is None:
        return png.make_text_chunk(keyword, value)
    return png.make_text_chunk(
        keyword,
        value,
        t.chunk_type,
        compress=t.compressed,
        language=t.language,
        translated_keyword=t.translated_keyword,
    )


__all__ = [
    "ASSET_CHUNK",
    "ASSET_REF",
    "CARD_KEYWORDS",
    "CCV3",
    "CHARA",
    "card_extensions",
    "card_keyword",
    "encode_payload",
    "payload_tree",
    "png_card_trees",
    "relabel",
    "rewrite_png",
    "sniff_payload_tree",
    "write_png",
]
