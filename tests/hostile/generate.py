"""Adversarial inputs for every container and codec: what a card hub's upload folder really holds.

``cases()`` yields ``Case(category, name, filename, data)`` deterministically (seeded), built in
memory: zip bombs and traversal names, broken and bomb PNGs, hostile JSON, and — for every sample
file in ``samples/`` — type-confused and truncated variants, so each codec's own shapes are attacked
with wrong-typed fields. New codecs and samples are covered without touching this file.
"""

from __future__ import annotations

import base64
import random
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
MIB = 1024 * 1024


@dataclass(frozen=True)
class Case:
    category: str
    name: str
    filename: str
    data: bytes

    def __repr__(self) -> str:
        return f"<Case {self.category}/{self.name} {len(self.data)} bytes>"


# -- building blocks --------------------------------------------------------------------------


def png_chunk(ctype: bytes, data: bytes) -> bytes:
    return (
        struct.pack(">I", len(data)) + ctype + data + struct.pack(">I", zlib.crc32(ctype + data) & 0xFFFFFFFF)
    )


def tiny_png(*extra: bytes) -> bytes:
    ihdr = png_chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
    idat = png_chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
    return b"\x89PNG\r\n\x1a\n" + ihdr + b"".join(extra) + idat + png_chunk(b"IEND", b"")


def text(keyword: str, value: bytes) -> bytes:
    return png_chunk(b"tEXt", keyword.encode("latin-1") + b"\0" + value)


def card_json(name: str = "Hostile") -> bytes:
    return orjson.dumps(
        {
            "spec": "chara_card_v2",
            "spec_version": "2.0",
            "data": {"name": name, "description": "d", "first_mes": "hi", "extensions": {}},
        }
    )


def zip_bytes(members: list[tuple[str, bytes]], *, method: int = zipfile.ZIP_DEFLATED) -> bytes:
    import io

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        for name, data in members:
            z.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), data)
    return buf.getvalue()


def _raw_zip(entries: list[tuple[bytes, bytes, int]]) -> bytes:
    """A zip written by hand, so names and attributes zipfile would refuse can be made:
    ``(raw name, stored data, external_attr)`` per entry."""
    local, central, off = b"", b"", 0
    for name, data, attr in entries:
        crc = zlib.crc32(data) & 0xFFFFFFFF
        hdr = struct.pack(
            "<4s5H3I2H", b"PK\x03\x04", 20, 0, 0, 0, 33, crc, len(data), len(data), len(name), 0
        )
        local += hdr + name + data
        central += (
            struct.pack(
                "<4s6H3I5H2I",
                b"PK\x01\x02",
                0x031E,
                20,
                0,
                0,
                0,
                33,
                crc,
                len(data),
                len(data),
                len(name),
                0,
                0,
                0,
                0,
                attr,
                off,
            )
            + name
        )
        off += len(hdr) + len(name) + len(data)
    eocd = struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, len(entries), len(entries), len(central), off, 0)
    return local + central + eocd


def deflate_zeros(n: int) -> bytes:
    """Raw deflate of ``n`` zero bytes, built in pieces (never holds ``n`` bytes)."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    piece = bytes(MIB)
    out = []
    for _ in range(n // MIB):
        out.append(c.compress(piece))
    out.append(c.compress(bytes(n % MIB)))
    out.append(c.flush())
    return b"".join(out)


def zip_bomb(n: int, name: str = "card.json") -> bytes:
    """One deflated member of ``n`` zeros whose headers tell the truth (high ratio)."""
    comp = deflate_zeros(n)
    crc = 0
    piece = bytes(MIB)
    for _ in range(n // MIB):
        crc = zlib.crc32(piece, crc)
    crc = zlib.crc32(bytes(n % MIB), crc) & 0xFFFFFFFF
    nb = name.encode()
    hdr = struct.pack("<4s5H3I2H", b"PK\x03\x04", 20, 0, 8, 0, 33, crc, len(comp), n, len(nb), 0)
    cen = (
        struct.pack(
            "<4s6H3I5H2I",
            b"PK\x01\x02",
            0x031E,
            20,
            0,
            8,
            0,
            33,
            crc,
            len(comp),
            n,
            len(nb),
            0,
            0,
            0,
            0,
            0o100644 << 16,
            0,
        )
        + nb
    )
    eocd = struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, 1, 1, len(cen), len(hdr) + len(nb) + len(comp), 0)
    return hdr + nb + comp + cen + eocd


# -- categories --------------------------------------------------------------------------------


def zip_cases() -> Iterator[Case]:
    yield Case("zip", "high-ratio bomb (200 MiB of zeros)", "bomb.charx", zip_bomb(200 * MIB))
    inner = zip_bomb(60 * MIB)
    yield Case(
        "zip",
        "nested bomb (charx holding a bomb module)",
        "nested.charx",
        zip_bytes([("card.json", card_json()), ("module.risum", inner), ("inner.zip", inner)]),
    )
    yield Case(
        "zip",
        "10k entries",
        "many.charx",
        zip_bytes(
            [("card.json", card_json())] + [(f"assets/{i}.png", b"x") for i in range(10_000)],
            method=zipfile.ZIP_STORED,
        ),
    )
    for label, raw in [
        ("dot-dot name", b"../../etc/passwd"),
        ("absolute name", b"/etc/passwd"),
        ("backslash name", b"assets\\..\\..\\x.png"),
        ("drive letter", b"C:/Windows/x.png"),
        ("NUL in name", b"card.json\x00.png"),
    ]:
        yield Case(
            "zip",
            label,
            "evil.charx",
            _raw_zip([(b"card.json", card_json(), 0o100644 << 16), (raw, b"x", 0o100644 << 16)]),
        )
    yield Case(
        "zip",
        "duplicate card.json",
        "dup.charx",
        _raw_zip(
            [(b"card.json", card_json("A"), 0o100644 << 16), (b"card.json", card_json("B"), 0o100644 << 16)]
        ),
    )
    yield Case(
        "zip",
        "symlink entry",
        "link.charx",
        _raw_zip(
            [(b"card.json", card_json(), 0o100644 << 16), (b"assets/x.png", b"/etc/passwd", 0o120777 << 16)]
        ),
    )
    good = zip_bytes([("card.json", card_json()), ("assets/icon/images/main.png", tiny_png())])
    for cut in (10, 30, len(good) // 2, len(good) - 22, len(good) - 1):
        yield Case("zip", f"truncated at {cut}", "cut.charx", good[:cut])
    yield Case(
        "zip",
        "JPEG prefix then garbage 'zip'",
        "hybrid.jpeg",
        b"\xff\xd8\xff\xe0" + bytes(64) + b"PK\x05\x06" + bytes(10),
    )
    yield Case("zip", "card.json missing", "nocard.charx", zip_bytes([("assets/x.png", tiny_png())]))


def png_cases() -> Iterator[Case]:
    good = tiny_png(text("chara", base64.b64encode(card_json())))
    bad_crc = bytearray(good)
    bad_crc[8 + 8 + 13] ^= 0xFF  # the IHDR CRC
    yield Case("png", "bad CRC", "crc.png", bytes(bad_crc))
    # truncated at every chunk boundary and inside each chunk
    pos, bounds = 8, []
    while pos < len(good):
        (n,) = struct.unpack(">I", good[pos : pos + 4])
        bounds += [pos, pos + 4, pos + 8 + n // 2]
        pos += 12 + n
    for cut in sorted(set(bounds)):
        yield Case("png", f"truncated at {cut}", "cut.png", good[:cut])
    bomb = zlib.compress(bytes(200 * MIB), 9)
    yield Case("png", "zTXt bomb", "ztxt.png", tiny_png(png_chunk(b"zTXt", b"chara\0\0" + bomb)))
    yield Case("png", "iTXt bomb", "itxt.png", tiny_png(png_chunk(b"iTXt", b"ccv3\0\x01\x00\0\0" + bomb)))
    yield Case("png", "10k text chunks", "many.png", tiny_png(*(text(f"k{i}", b"v") for i in range(10_000))))
    yield Case("png", "chara: invalid base64", "b64.png", tiny_png(text("chara", b"!!!not base64***")))
    yield Case(
        "png", "chara: invalid JSON", "json.png", tiny_png(text("chara", base64.b64encode(b"{name: oops")))
    )
    yield Case(
        "png",
        "chara: invalid UTF-8",
        "utf8.png",
        tiny_png(text("chara", base64.b64encode(b'{"name": "\xff\xfe"}'))),
    )
    yield Case("png", "chara: JSON array", "arr.png", tiny_png(text("chara", base64.b64encode(b"[1,2,3]"))))
    yield Case(
        "png",
        "ccv3 broken, chara fine",
        "fallback.png",
        tiny_png(text("ccv3", b"%%%"), text("chara", base64.b64encode(card_json()))),
    )
    yield Case(
        "png", "huge chunk length", "len.png", good[:33] + struct.pack(">I", 0x7FFFFFF0) + b"tEXt" + b"x" * 20
    )
    yield Case("png", "no IEND", "noiend.png", good[: good.rfind(b"IEND") - 4])


def json_cases() -> Iterator[Case]:
    yield Case("json", "nesting 100k deep (arrays)", "deep.json", b"[" * 100_000 + b"]" * 100_000)
    yield Case(
        "json", "nesting 100k deep (objects)", "deep2.json", b'{"a":' * 100_000 + b"1" + b"}" * 100_000
    )
    yield Case("json", "NaN", "nan.json", b'{"spec":"chara_card_v2","data":{"name":"x","talkativeness":NaN}}')
    yield Case("json", "Infinity", "inf.json", b'{"name":"x","description":Infinity}')
    yield Case(
        "json",
        "duplicate keys",
        "dup.json",
        b'{"spec":"chara_card_v2","spec":"chara_card_v3","data":{"name":"a","name":"b"}}',
    )
    yield Case("json", "BOM", "bom.json", b"\xef\xbb\xbf" + card_json())
    yield Case("json", "UTF-16 with BOM", "u16.json", card_json().decode().encode("utf-16"))
    yield Case("json", "UTF-16 without BOM", "u16nobom.json", card_json().decode().encode("utf-16-le"))
    yield Case(
        "json",
        "a huge string (24 MiB)",
        "huge.json",
        b'{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"' + b"a" * (24 * MIB) + b'"}}',
    )
    yield Case("json", "huge integer", "bigint.json", b'{"entries":{"0":{"uid":' + b"9" * 400 + b"}}}")
    for label, top in [
        ("top-level array", b"[]"),
        ("top-level number", b"3"),
        ("top-level string", b'"card"'),
        ("top-level null", b"null"),
        ("empty object", b"{}"),
        ("empty file", b""),
        ("whitespace only", b"   \n"),
        ("truncated object", card_json()[:-7]),
    ]:
        yield Case("json", label, "top.json", top)
    yield Case("json", "invalid UTF-8 in a string", "badutf8.json", b'{"name":"\xc3\x28"}')
    yield Case(
        "json",
        "lone surrogate escape",
        "surrogate.json",
        b'{"spec":"chara_card_v2","data":{"name":"\\ud800"}}',
    )


def random_cases(n: int = 60, seed: int = 1234) -> Iterator[Case]:
    rnd = random.Random(seed)
    prefixes = [
        b"",
        b"\x89PNG\r\n\x1a\n",
        b"PK\x03\x04",
        b"\xff\xd8\xff",
        b"{",
        b"[",
        b"\x1f\x8b",
        b"\x00\x01",
    ]
    names = ["x.json", "x.png", "x.charx", "x.risum", "x.risup", "x.byaf", "x.lorebook", "x"]
    for i in range(n):
        body = rnd.randbytes(rnd.choice([0, 1, 7, 64, 512, 4096]))
        yield Case("random", f"random #{i}", rnd.choice(names), rnd.choice(prefixes) + body)


# -- type confusion over every sample's own shape ----------------------------------------------------

_WRONG: list[Callable[[Any], Any]] = [
    lambda v: 12345 if isinstance(v, str) else "a string",
    lambda v: None,
    lambda v: [] if not isinstance(v, list) else {},
    lambda v: {"nested": True} if not isinstance(v, dict) else [1, 2],
    lambda v: True,
    lambda v: -1e308,
]


def _paths(tree: Any, path: tuple[Any, ...] = (), depth: int = 0) -> Iterator[tuple[Any, ...]]:
    if depth > 6:
        return
    if isinstance(tree, dict):
        for k, v in list(tree.items())[:40]:
            yield (*path, k)
            yield from _paths(v, (*path, k), depth + 1)
    elif isinstance(tree, list):
        for i, v in enumerate(tree[:3]):
            yield (*path, i)
            yield from _paths(v, (*path, i), depth + 1)


def _set(tree: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(tree, dict):
        return {**tree, head: _set(tree[head], rest, value)}
    out = list(tree)
    out[head] = _set(tree[head], rest, value)
    return out


def _get(tree: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        tree = tree[p]
    return tree


def sample_files() -> list[Path]:
    if not SAMPLES.is_dir():
        return []
    return sorted(p for p in SAMPLES.rglob("*") if p.is_file() and not p.name.startswith("."))


def shape_cases(per_file: int = 40, seed: int = 99) -> Iterator[Case]:
    """Each JSON sample with fields replaced by values of the wrong type; every binary sample
    truncated and bit-flipped."""
    rnd = random.Random(seed)
    for f in sample_files():
        data = f.read_bytes()
        rel = f.relative_to(SAMPLES).as_posix()
        try:
            tree = orjson.loads(data.removeprefix(b"\xef\xbb\xbf"))
        except orjson.JSONDecodeError:
            tree = None
        if tree is not None:
            paths = list(_paths(tree))
            rnd.shuffle(paths)
            for path in paths[:per_file]:
                fn = rnd.choice(_WRONG)
                try:
                    mutated = _set(tree, path, fn(_get(tree, path)))
                except (KeyError, IndexError, TypeError):
                    continue
                yield Case(
                    f"shape:{rel.split('/')[0]}",
                    f"{rel} {'/'.join(map(str, path))} wrong type",
                    f.name,
                    orjson.dumps(mutated),
                )
        else:
            for cut in sorted({len(data) // 4, len(data) // 2, len(data) - 1, 100}):
                if 0 < cut < len(data):
                    yield Case(f"shape:{rel.split('/')[0]}", f"{rel} truncated at {cut}", f.name, data[:cut])
            for _ in range(4):
                b = bytearray(data)
                for _ in range(8):
                    i = rnd.randrange(len(b))
                    b[i] ^= 1 << rnd.randrange(8)
                yield Case(f"shape:{rel.split('/')[0]}", f"{rel} bit flips", f.name, bytes(b))


def cases() -> Iterator[Case]:
    yield from zip_cases()
    yield from png_cases()
    yield from json_cases()
    yield from random_cases()
    yield from shape_cases()
