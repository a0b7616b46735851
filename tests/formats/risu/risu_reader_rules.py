"""A model of how RisuAI reads a .charx (docs/formats/risu.md#character-risu), for tests: written from the
facts, independent of bunzai's codec, so a .charx bunzai writes can be checked against Risu's rules.

Risu's reader (CharXReader / CharXImporter) streams the archive with fflate's ``Unzip``: it walks
local headers from the first ``PK\\x03\\x04`` (so a JPEG before the zip is skipped), ignoring the
central directory; entries written with a data descriptor carry zero sizes in the local header.
Then: ``card.json`` is the card (``spec`` must be ``chara_card_v3``); ``module.risum`` is the module;
any other ``.json`` is ignored; every other entry is an asset keyed by its full path; entries over
50 MB are skipped; every ``embeded://P`` asset uri must name an existing path exactly (case counts).
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import orjson

from bunzai_codecs.formats.risu import rpack

MAX_ENTRY = 50 * 1024 * 1024
_LOCAL = b"PK\x03\x04"
_DESCRIPTOR = b"PK\x07\x08"


def stream_entries(data: bytes) -> list[tuple[str, bytes]]:
    """Entries in local-header order, the way a streaming unzip sees them."""
    pos = data.find(_LOCAL)
    if pos < 0:
        raise AssertionError("no local file header")
    out = []
    while data[pos : pos + 4] == _LOCAL:
        _, _ver, flags, method, _t, _d, crc, csize, usize, nlen, xlen = struct.unpack_from(
            "<4sHHHHHIIIHH", data, pos
        )
        name = data[pos + 30 : pos + 30 + nlen].decode("utf-8" if flags & 0x800 else "cp437")
        start = pos + 30 + nlen + xlen
        if flags & 0x08:  # sizes follow the data
            if method != 8:
                raise AssertionError(f"{name}: a data descriptor needs deflate to find the end")
            d = zlib.decompressobj(-15)
            body = d.decompress(data[start:])
            if not d.eof:
                raise AssertionError(f"{name}: deflate stream does not end")
            end = len(data) - len(d.unused_data)
            if data[end : end + 4] == _DESCRIPTOR:
                end += 4
            crc, csize, usize = struct.unpack_from("<III", data, end)
            end += 12
        else:
            raw = data[start : start + csize]
            body = raw if method == 0 else zlib.decompressobj(-15).decompress(raw)
            end = start + csize
        if method not in (0, 8):
            raise AssertionError(f"{name}: compression method {method}")
        if len(body) != usize or zlib.crc32(body) != crc:
            raise AssertionError(f"{name}: size or CRC mismatch")
        out.append((name, body))
        pos = end
    return out


def read_like_risu(data: bytes) -> dict[str, Any]:
    """What Risu would import: ``{"card", "module" (tree or None), "module_assets", "assets"}``.

    Raises ``AssertionError`` naming the rule a file breaks.
    """
    entries = stream_entries(data)
    names = [n for n, _ in entries]
    if len(set(names)) != len(names):
        raise AssertionError("duplicate entry names")
    card = None
    module = None
    module_assets: list[bytes] = []
    assets: dict[str, bytes] = {}
    for name, body in entries:
        if len(body) > MAX_ENTRY:
            continue
        if name == "card.json":
            card = orjson.loads(body)
        elif name == "module.risum":
            module, module_assets = _read_module(body)
        elif name.endswith(".json"):
            continue
        else:
            assets[name] = body
    if card is None:
        raise AssertionError("card.json missing")
    if card.get("spec") != "chara_card_v3":
        raise AssertionError(f"card.spec is {card.get('spec')!r}, not chara_card_v3")
    for i, a in enumerate(card["data"].get("assets") or []):
        uri = a.get("uri", "")
        if uri.startswith("embeded://"):
            path = uri[len("embeded://") :]
            if path not in assets:
                raise AssertionError(f"assets[{i}] {uri} names no entry")
    return {"card": card, "module": module, "module_assets": module_assets, "assets": assets}


def _read_module(b: bytes) -> tuple[dict[str, Any], list[bytes]]:
    if b[:2] != b"\x6f\x00":
        raise AssertionError("module.risum: bad magic or version")
    (n,) = struct.unpack_from("<I", b, 2)
    tree = orjson.loads(rpack.decode(b[6 : 6 + n]))
    if tree.get("type") != "risuModule":
        raise AssertionError("module.risum: type is not risuModule")
    pos = 6 + n
    blocks = []
    while True:
        marker = b[pos]
        pos += 1
        if marker == 0:
            break
        if marker != 1:
            raise AssertionError("module.risum: bad marker")
        (n,) = struct.unpack_from("<I", b, pos)
        blocks.append(rpack.decode(b[pos + 4 : pos + 4 + n]))
        pos += 4 + n
    if len(blocks) != len(tree["module"].get("assets") or []):
        raise AssertionError("module.risum: asset blocks and module.assets disagree")
    return tree["module"], blocks


def fflate_zip(entries: list[tuple[str, bytes]], *, level: int = 0) -> bytes:
    """A zip laid out the way Risu's fflate ``Zip`` streams it (docs/formats/risu.md#character-risu): deflate for
    every entry (level 0 = stored blocks inside deflate), flag bit 3 with zero CRC and sizes in the
    local header, a ``PK\\x07\\x08`` data descriptor after each entry, then a complete central
    directory. Offsets count from the zip's own start (a JPEG may be put in front of it)."""
    out = bytearray()
    central = bytearray()
    for name, data in entries:
        raw_name = name.encode("utf-8")
        comp = zlib.compressobj(level, zlib.DEFLATED, -15)
        body = comp.compress(data) + comp.flush()
        crc = zlib.crc32(data)
        flags = 0x0008 | 0x0800 | (0x0004 if level == 0 else 0)
        offset = len(out)
        out += struct.pack("<4sHHHHHIIIHH", _LOCAL, 20, flags, 8, 0, 0x21, 0, 0, 0, len(raw_name), 0)
        out += raw_name + body
        out += _DESCRIPTOR + struct.pack("<III", crc, len(body), len(data))
        central += struct.pack(
            "<4sHHHHHHIIIHHHHHII",
            b"PK\x01\x02",
            20,
            20,
            flags,
            8,
            0,
            0x21,
            crc,
            len(body),
            len(data),
            len(raw_name),
            0,
            0,
            0,
            0,
            0,
            offset,
        )
        central += raw_name
    cd_offset = len(out)
    out += central
    out += struct.pack(
        "<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(entries), len(entries), len(central), cd_offset, 0
    )
    return bytes(out)
