"""Adversarial inputs for every container and codec: what a card hub's upload folder really holds.

``cases()`` yields ``Case(category, name, filename, data)`` deterministically (seeded), built in
memory: zip bombs and traversal names, broken and bomb PNGs, hostile JSON, and — for every sample
file in ``samples/`` — type-confused and truncated variants, so each codec's own shapes are attacked
with wrong-typed fields. New codecs and samples are covered without touching this file.
"""

from __future__ import annotations

import base64
import functools
import json
import random
import re
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from tests.formats.helpers import png_chunk

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
    # a digit to str.isdigit, not to int(): guards written `int(s) if s.isdigit()` crash on it
    lambda v: "²",
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


def _yaml_tree(suffix: str, data: bytes) -> Any:
    """A YAML sample's tree (the wrong-typed variants of a YAML file are YAML too), else None."""
    from bunzai_codecs.core import yamlio

    if suffix not in (".yaml", ".yml"):
        return None
    try:
        return yamlio.load(data)
    except Exception:
        return None


def _yaml_dump(tree: Any) -> bytes:
    from bunzai_codecs.core import yamlio

    return yamlio.dump(tree)


def shape_cases(per_file: int = 40, seed: int = 99) -> Iterator[Case]:
    """Each JSON sample with fields replaced by values of the wrong type; every binary sample
    truncated and bit-flipped."""
    rnd = random.Random(seed)
    for f in sample_files():
        data = f.read_bytes()
        rel = f.relative_to(SAMPLES).as_posix()
        try:
            tree = orjson.loads(data.removeprefix(b"\xef\xbb\xbf"))
            dump = orjson.dumps
        except orjson.JSONDecodeError:
            tree, dump = _yaml_tree(f.suffix, data), _yaml_dump
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
                    dump(mutated),
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


# -- numbers beyond 64 bits in every id and order field -------------------------------------------

#: a 39-digit id, as a public NovelAI lorebook generator writes entry ids: more than any integer an
#: app (or orjson, 64 bits) holds. Each field replaced gets its own value (BIG, BIG + 1...), so ids
#: stay unique.
BIG = 123456789012345678901234567890123456789
#: the fields an app numbers or orders rows by, in every format's spelling (``uid``, ``id``,
#: ``insertion_order``, ``sortOrder``, ``budgetPriority``, ``displayIndex``, ``placement``...)
_NUMBERED = re.compile(r"(?i)(id|order|index|priority|position|placement|depth)$")


def _numbered(tree: Any, value: Callable[[int], Any], counter: Iterator[int]) -> Any:
    """``tree`` with every scalar under a numbered key (and each scalar of a list under one)
    replaced by ``value(next(counter))``, and an object keyed by row numbers (SillyTavern's world
    info ``entries``) re-keyed with the counter's numbers."""

    def scalar(v: Any) -> bool:
        return isinstance(v, str | int | float) and not isinstance(v, bool)

    if isinstance(tree, list):
        return [_numbered(x, value, counter) for x in tree]
    if not isinstance(tree, dict):
        return tree
    by_number = bool(tree) and all(k.isascii() and k.isdigit() for k in tree)
    out: dict[str, Any] = {}
    for k, v in tree.items():
        key = str(next(counter)) if by_number else k
        if _NUMBERED.search(k) and scalar(v):
            out[key] = value(next(counter))
        elif _NUMBERED.search(k) and isinstance(v, list) and v and all(scalar(x) for x in v):
            out[key] = [value(next(counter)) for _ in v]
        else:
            out[key] = _numbered(v, value, counter)
    return out


def _as_floats(tree: Any) -> Any:
    """``tree`` with each integer beyond 64 bits as the float a JSON reader makes of it (orjson,
    which the container writers use, writes no bigger integer)."""
    if isinstance(tree, dict):
        return {k: _as_floats(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_as_floats(v) for v in tree]
    if isinstance(tree, int) and not isinstance(tree, bool) and not -(2**63) <= tree < 2**64:
        return float(tree)
    return tree


#: how the big number is written: as text (what the generator wrote), negative text, a JSON number
_BIG_FORMS: list[tuple[str, Callable[[int], Any]]] = [
    ("text", str),
    ("negative text", lambda n: f"-{n}"),
    ("number", int),
]


def bignum_cases() -> Iterator[Case]:
    """Every sample (and every JSON tree a binary sample carries) with each id and order field a
    39-digit number, in each of :data:`_BIG_FORMS`. The harness writes what decodes to every
    format of its kind (``harness.CROSS``): a number that does not fit is data, kept as text where
    the target needs an integer it cannot hold, never an internal error."""
    import itertools

    from .containers import payloads

    for f in sample_files():
        data = f.read_bytes()
        rel = f.relative_to(SAMPLES).as_posix()
        try:
            trees = [("", orjson.loads(data.removeprefix(b"\xef\xbb\xbf")), None)]
        except orjson.JSONDecodeError:
            trees = [(f" [{p.where}]", p.tree, p.rebuild) for p in payloads(f.name, data)]
        for where, tree, rebuild in trees:
            for form, value in _BIG_FORMS:
                counter = itertools.count(BIG)
                mutated = _numbered(tree, value, counter)
                if next(counter) == BIG:
                    break  # no id or order field in this tree
                # the stdlib writes an integer of any size: a JSON file holds all 39 digits
                built = json.dumps(mutated).encode() if rebuild is None else rebuild(_as_floats(mutated))
                yield Case("bignum", f"{rel}{where} ids and orders as 39-digit {form}", f.name, built)


# -- containers built with the codecs' own writers, then broken ------------------------------------


def _module_tree(n_assets: int = 1) -> dict[str, Any]:
    return {
        "module": {
            "name": "Hostile module",
            "description": "d",
            "id": "00000000-0000-4000-8000-000000000000",
            "lorebook": [
                {
                    "key": "harbor",
                    "comment": "Harbor",
                    "content": "c",
                    "mode": "normal",
                    "insertorder": 100,
                    "alwaysActive": False,
                    "secondkey": "",
                    "selective": False,
                }
            ],
            "regex": [{"comment": "r", "in": "a+", "out": "b", "type": "editoutput", "ableFlag": False}],
            "trigger": [],
            "assets": [[f"icon{i}", "", "png"] for i in range(n_assets)],
        },
        "type": "risuModule",
    }


def _risum(tree: Any = None, assets: list[bytes] | None = None) -> bytes:
    from bunzai_codecs.formats.risu import risum

    tree = _module_tree() if tree is None else tree
    assets = [tiny_png()] if assets is None else assets
    return risum.write_blocks(orjson.dumps(tree), assets)


def _patch(data: bytes, at: int, new: bytes) -> bytes:
    return data[:at] + new + data[at + len(new) :]


def risum_cases() -> Iterator[Case]:
    """``.risum``: the container (magic, lengths, markers), the asset table, the main JSON."""
    from bunzai_codecs.formats.risu import rpack

    good = _risum()
    main_len = struct.unpack_from("<I", good, 2)[0]
    after_main = 6 + main_len
    yield Case("risum", "valid module (control)", "m.risum", good)
    yield Case(
        "risum", "main length past the end", "m.risum", _patch(good, 2, struct.pack("<I", main_len + 99))
    )
    yield Case("risum", "main length 0xFFFFFFFF", "m.risum", _patch(good, 2, b"\xff\xff\xff\xff"))
    yield Case(
        "risum",
        "asset length past the end",
        "m.risum",
        _patch(good, after_main + 1, struct.pack("<I", 1 << 30)),
    )
    yield Case("risum", "bad block marker 0x02", "m.risum", _patch(good, after_main, b"\x02"))
    yield Case("risum", "bad block marker 0xFF", "m.risum", _patch(good, after_main, b"\xff"))
    yield Case("risum", "bad magic", "m.risum", _patch(good, 0, b"\x6e"))
    yield Case("risum", "version 0x01", "m.risum", _patch(good, 1, b"\x01"))
    yield Case("risum", "no final 0x00 marker", "m.risum", good[:-1])
    for cut in sorted({1, 2, 5, 6, 6 + main_len // 2, after_main, after_main + 3, len(good) - 5}):
        yield Case("risum", f"truncated at {cut}", "m.risum", good[:cut])
    yield Case("risum", "asset-count mismatch: table 2, blocks 1", "m.risum", _risum(_module_tree(2)))
    yield Case("risum", "asset-count mismatch: table 0, blocks 1", "m.risum", _risum(_module_tree(0)))
    yield Case(
        "risum", "asset-count mismatch: table 1, blocks 3", "m.risum", _risum(assets=[b"a", b"b", b"c"])
    )
    for label, assets_table in [
        ("asset row too short", [["icon"]]),
        ("asset row of numbers", [[1, 2, 3]]),
        ("asset table an object", {"0": ["icon", "", "png"]}),
    ]:
        t = _module_tree()
        t["module"]["assets"] = assets_table
        yield Case("risum", label, "m.risum", _risum(t))
    for label, main in [
        ("main block not JSON", b"{module: oops"),
        ("main block invalid UTF-8", b'{"module":{"name":"\xff"},"type":"risuModule"}'),
        ("main block a JSON array", b"[]"),
        ("main block nests 100k deep", b'{"module":' * 100_000 + b"{}" + b"}" * 100_000),
        ("main block NaN", b'{"module":{"name":NaN},"type":"risuModule"}'),
        ("main block empty", b""),
    ]:
        yield Case("risum", label, "m.risum", risum_raw(main, [tiny_png()]))
    for label, change in [
        ("type is not risuModule", lambda t: t.update(type="risuPreset")),
        ("module is a string", lambda t: t.update(module="m")),
        ("lorebook is an object", lambda t: t["module"].update(lorebook={"0": {}})),
        ("regex rows are strings", lambda t: t["module"].update(regex=["a", "b"])),
        ("trigger rows are numbers", lambda t: t["module"].update(trigger=[1, 2])),
        ("regex find is a number", lambda t: t["module"]["regex"][0].update({"in": 5})),
        ("lore key is a list", lambda t: t["module"]["lorebook"][0].update(key=["a"])),
        ("name is an object", lambda t: t["module"].update(name={"x": 1})),
    ]:
        t = _module_tree()
        change(t)
        yield Case("risum", label, "m.risum", _risum(t))
    yield Case("risum", "trailing bytes after the end marker", "m.risum", good + b"garbage")
    yield Case(
        "risum",
        "1000 asset blocks",
        "m.risum",
        _risum(_module_tree(1000), [b"x"] * 1000),
    )
    yield Case("risum", "RPack of random bytes", "m.risum", rpack.encode(random.Random(7).randbytes(300)))


def risum_raw(main: bytes, assets: list[bytes]) -> bytes:
    from bunzai_codecs.formats.risu import risum

    return risum.write_blocks(main, assets)


def _risup_preset() -> dict[str, Any]:
    return {
        "name": "Hostile preset",
        "mainPrompt": "m",
        "jailbreak": "",
        "temperature": 80,
        "maxContext": 4000,
        "maxResponse": 300,
        "frequencyPenalty": 70,
        "PresensePenalty": 70,
        "promptTemplate": [{"type": "plain", "text": "t", "role": "system", "type2": "normal"}],
        "regex": [],
    }


def _risup_chain(wrapper: Any, *, rpacked: bool = True, gz: Callable[[bytes], bytes] | None = None) -> bytes:
    import gzip

    from bunzai_codecs.formats.risu import jsformat, rpack

    packed = jsformat.pack(wrapper) if not isinstance(wrapper, bytes) else wrapper
    z = gz(packed) if gz else gzip.compress(packed, mtime=0)
    return rpack.encode(z) if rpacked else z


def risup_cases() -> Iterator[Case]:
    """``.risup``: RPack -> gzip -> msgpack wrapper -> AES-GCM -> msgpack preset, broken at each step."""
    import gzip

    from bunzai_codecs.formats.risu import jsformat, risup, rpack

    preset = _risup_preset()
    pt = jsformat.pack(preset)
    ct = risup.encrypt(pt)
    good = risup.write_preset(preset)
    yield Case("risup", "valid preset (control)", "p.risup", good)
    yield Case(
        "risup", "valid .risupreset (no RPack)", "p.risupreset", risup.write_preset(preset, rpacked=False)
    )

    def wrap(c: Any, **extra: Any) -> dict[str, Any]:
        return {"presetVersion": 2, "type": "preset", "preset": c, **extra}

    flipped_tag = ct[:-1] + bytes([ct[-1] ^ 1])
    flipped_body = bytes([ct[0] ^ 0x80]) + ct[1:]
    yield Case("risup", "GCM tag mismatch (tag byte flipped)", "p.risup", _risup_chain(wrap(flipped_tag)))
    yield Case("risup", "GCM tag mismatch (ciphertext flipped)", "p.risup", _risup_chain(wrap(flipped_body)))
    yield Case(
        "risup", "GCM tag mismatch under 'pres'", "p.risup", _risup_chain({**wrap(None), "pres": flipped_tag})
    )
    yield Case("risup", "ciphertext shorter than the tag", "p.risup", _risup_chain(wrap(ct[:10])))
    yield Case("risup", "ciphertext empty", "p.risup", _risup_chain(wrap(b"")))
    yield Case("risup", "ciphertext a string", "p.risup", _risup_chain(wrap("AAAA")))
    yield Case("risup", "no ciphertext", "p.risup", _risup_chain({"presetVersion": 2, "type": "preset"}))
    yield Case(
        "risup", "bad tag: wrapper type 'module'", "p.risup", _risup_chain(wrap(ct) | {"type": "module"})
    )
    yield Case("risup", "bad tag: presetVersion 9", "p.risup", _risup_chain(wrap(ct) | {"presetVersion": 9}))
    yield Case("risup", "wrapper a msgpack array", "p.risup", _risup_chain([1, 2, ct]))
    yield Case("risup", "wrapper not msgpack", "p.risup", _risup_chain(b"\xc1\xc1\xc1"))
    yield Case(
        "risup", "wrapper msgpack array header of 2^32-1", "p.risup", _risup_chain(b"\xdd\xff\xff\xff\xff")
    )
    yield Case("risup", "wrapper with a list as a map key", "p.risup", _risup_chain(b"\x81\x91\x01\x01"))
    yield Case("risup", "wrapper nested 100k deep", "p.risup", _risup_chain(b"\x91" * 100_000 + b"\xc0"))
    for label, inner in [
        ("decrypted preset not msgpack", b"\xc1"),
        ("decrypted preset an array", jsformat.pack([1, 2])),
        ("decrypted preset with integer keys", b"\x82\x01\x02\x03\x04"),
        ("decrypted preset with a map key", b"\x81\x81\x01\x01\x01"),
        ("decrypted preset nested 100k deep", b"\x81\xa1a" + b"\x91" * 100_000 + b"\xc0"),
        ("decrypted preset with binary strings", jsformat.pack({"name": b"\xff", "mainPrompt": b"x"})),
        ("decrypted preset with an ext type", b"\x81\xa4name\xd4\x05\x00"),
        ("decrypted preset with NaN", jsformat.pack({"name": "p", "temperature": float("nan")})),
    ]:
        yield Case("risup", label, "p.risup", _risup_chain(wrap(risup.encrypt(inner))))
    packed = jsformat.pack(wrap(ct))
    gz = gzip.compress(packed, mtime=0)
    for cut in sorted({2, 10, 18, len(gz) // 2, len(gz) - 8, len(gz) - 1}):
        yield Case("risup", f"truncated gzip at {cut}", "p.risup", rpack.encode(gz[:cut]))
    bad = bytearray(gz)
    bad[len(gz) // 2] ^= 0xFF
    yield Case("risup", "corrupt deflate data", "p.risup", rpack.encode(bytes(bad)))
    yield Case("risup", "gzip CRC wrong", "p.risup", rpack.encode(gz[:-8] + b"\0\0\0\0" + gz[-4:]))
    yield Case("risup", "zlib instead of gzip", "p.risup", _risup_chain(wrap(ct), gz=zlib.compress))
    yield Case(
        "risup",
        "raw deflate instead of gzip",
        "p.risup",
        _risup_chain(wrap(ct), gz=lambda b: zlib.compress(b)[2:-4]),
    )
    yield Case("risup", "gzip but no RPack, named .risup", "p.risup", gz)
    yield Case("risup", "gzip bomb (120 MiB of zeros)", "p.risup", rpack.encode(gzip_zeros(120 * MIB)))
    yield Case("risup", "RPack of a non-gzip", "p.risup", rpack.encode(b"\x1f\x8b\x08" + bytes(40)))


def gzip_zeros(n: int) -> bytes:
    """A gzip member of ``n`` zero bytes built in pieces (never holds ``n`` bytes)."""
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    piece = bytes(MIB)
    out = [c.compress(piece) for _ in range(n // MIB)]
    out.append(c.compress(bytes(n % MIB)))
    out.append(c.flush())
    return b"".join(out)


def _zip_raw_members(entries: list[tuple[str, bytes, int, int | None]], *, prefix: bytes = b"") -> bytes:
    """A zip written by hand: ``(name, data, method, declared inflated size or None)``; deflated data
    is compressed here. A declared size that lies makes a member that inflates past its header."""
    local, central, off = b"", b"", len(prefix)
    for name, data, method, declared in entries:
        nb = name.encode()
        comp = zlib.compress(data, 9)[2:-4] if method == 8 else data
        crc = zlib.crc32(data) & 0xFFFFFFFF
        size = len(data) if declared is None else declared
        hdr = struct.pack("<4s5H3I2H", b"PK\x03\x04", 20, 0, method, 0, 33, crc, len(comp), size, len(nb), 0)
        local += hdr + nb + comp
        central += (
            struct.pack(
                "<4s6H3I5H2I",
                b"PK\x01\x02",
                0x031E,
                20,
                0,
                method,
                0,
                33,
                crc,
                len(comp),
                size,
                len(nb),
                0,
                0,
                0,
                0,
                0o100644 << 16,
                off,
            )
            + nb
        )
        off += len(hdr) + len(nb) + len(comp)
    n = len(entries)
    eocd = struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, n, n, len(central), off, 0)
    return prefix + local + central + eocd


def _v3_card(**data: Any) -> bytes:
    base: dict[str, Any] = {
        "name": "Hostile",
        "description": "d",
        "first_mes": "hi",
        "extensions": {},
        "assets": [
            {"type": "icon", "uri": "embeded://assets/icon/image/main.png", "name": "main", "ext": "png"}
        ],
    }
    base.update(data)
    return orjson.dumps({"spec": "chara_card_v3", "spec_version": "3.0", "data": base})


def _charx(card: bytes | None = None, members: dict[str, bytes] | None = None) -> bytes:
    """A charx of ``card`` (default: a valid v3 card), an icon and a module, ``members`` replacing or adding files."""
    from bunzai_codecs.core.archive import write_zip

    files = {"card.json": card if card is not None else _v3_card(), "assets/icon/image/main.png": tiny_png()}
    files["module.risum"] = _risum()
    files.update(members or {})
    return write_zip(list(files.items()))


def charx_cases() -> Iterator[Case]:
    """``.charx`` (and the JPEG+ZIP hybrid) with hostile members: bombs, card.json that is not a card,
    a broken module, asset uris and names that try to leave the archive."""
    yield Case("charx", "valid charx (control)", "c.charx", _charx())
    for label, card in [
        ("card.json not JSON", b"{spec: chara_card_v3"),
        ("card.json empty", b""),
        ("card.json a JSON array", b"[]"),
        ("card.json data a number", b'{"spec":"chara_card_v3","data":5}'),
        ("card.json in UTF-16", _v3_card().decode().encode("utf-16")),
        ("card.json invalid UTF-8", b'{"spec":"chara_card_v3","data":{"name":"\xff"}}'),
        ("card.json nests 100k deep", b'{"a":' * 100_000 + b"1" + b"}" * 100_000),
        ("card.json assets an object", _v3_card(assets={"0": {}})),
        (
            "card.json asset uri a number",
            _v3_card(assets=[{"type": "icon", "uri": 5, "name": "main", "ext": "png"}]),
        ),
        (
            "asset uri escapes the archive",
            _v3_card(
                assets=[
                    {"type": "icon", "uri": "embeded://../../../etc/passwd", "name": "main", "ext": "png"}
                ]
            ),
        ),
        (
            "asset uri absolute",
            _v3_card(assets=[{"type": "icon", "uri": "embeded:///etc/passwd", "name": "main", "ext": "png"}]),
        ),
        (
            "asset uri names a missing member",
            _v3_card(
                assets=[{"type": "icon", "uri": "embeded://assets/none.png", "name": "main", "ext": "png"}]
            ),
        ),
        (
            "data: asset named to escape the archive",
            _v3_card(
                assets=[
                    {
                        "type": "emotion",
                        "uri": "data:image/png;base64," + base64.b64encode(tiny_png()).decode(),
                        "name": "../../../../tmp/pwned",
                        "ext": "png/../../x",
                    }
                ]
            ),
        ),
        ("character_book entries a string", _v3_card(character_book={"entries": "x"})),
        ("extensions.risuai a list", _v3_card(extensions={"risuai": [1]})),
    ]:
        yield Case("charx", label, "c.charx", _charx(card))
    for label, module in [
        ("module.risum length past the end", _patch(_risum(), 2, b"\xff\xff\xff\x7f")),
        ("module.risum bad marker", _patch(_risum(), 6 + struct.unpack_from("<I", _risum(), 2)[0], b"\x07")),
        ("module.risum asset-count mismatch", _risum(_module_tree(3))),
        ("module.risum not a module", b"PK\x03\x04 not a risum"),
        ("module.risum empty", b""),
    ]:
        yield Case("charx", label, "c.charx", _charx(members={"module.risum": module}))
    yield Case("charx", "x_meta not JSON", "c.charx", _charx(members={"x_meta/main.json": b"{oops"}))
    yield Case("charx", "card.json only under a folder", "c.charx", _only({"sub/card.json": _v3_card()}))
    # zip bombs inside an otherwise valid card
    yield Case(
        "charx",
        "asset member a 90 MiB bomb",
        "c.charx",
        _zip_raw_members(
            [("card.json", _v3_card(), 8, None), ("assets/icon/image/main.png", bytes(90 * MIB), 8, None)]
        ),
    )
    yield Case(
        "charx",
        "card.json declares 40 bytes, inflates to 8 MiB",
        "c.charx",
        _zip_raw_members([("card.json", _v3_card() + b" " * (8 * MIB), 8, 40)]),
    )
    yield Case(
        "charx",
        "module.risum a bomb",
        "c.charx",
        _zip_raw_members([("card.json", _v3_card(), 8, None), ("module.risum", bytes(60 * MIB), 8, None)]),
    )
    jpeg = b"\xff\xd8\xff\xe0" + bytes(100) + b"\xff\xd9"
    yield Case("charx", "JPEG hybrid (control)", "c.jpeg", jpeg + _charx())
    yield Case(
        "charx", "JPEG hybrid, zip cut in half", "c.jpeg", (jpeg + _charx())[: len(jpeg) + len(_charx()) // 2]
    )
    yield Case(
        "charx",
        "JPEG hybrid, card.json not JSON",
        "c.jpeg",
        _zip_raw_members([("card.json", b"{", 0, None)], prefix=jpeg),
    )


def _only(files: dict[str, bytes]) -> bytes:
    from bunzai_codecs.core.archive import write_zip

    return write_zip(list(files.items()))


def _byaf_members() -> dict[str, bytes]:
    character = {
        "schemaVersion": 1,
        "id": "c1",
        "name": "Hostile",
        "displayName": "Hostile",
        "isNSFW": False,
        "persona": "p",
        "createdAt": "2024-01-01T00:00:00.000Z",
        "updatedAt": "2024-01-01T00:00:00.000Z",
        "loreItems": [{"key": "harbor", "value": "v"}],
        "images": [{"path": "images/a.png", "label": "avatar"}],
    }
    scenario = {
        "schemaVersion": 1,
        "formattingInstructions": "f",
        "narrative": "n",
        "firstMessages": [{"characterID": "c1", "text": "hi"}],
        "exampleMessages": [],
        "messages": [],
    }
    manifest = {
        "schemaVersion": 1,
        "createdAt": "2024-01-01T00:00:00.000Z",
        "characters": ["characters/c1/character.json"],
        "scenarios": ["scenarios/s1.json"],
    }
    return {
        "manifest.json": orjson.dumps(manifest),
        "characters/c1/character.json": orjson.dumps(character),
        "characters/c1/images/a.png": tiny_png(),
        "scenarios/s1.json": orjson.dumps(scenario),
    }


def _byaf(
    manifest: Any = None,
    character: Any = None,
    scenario: Any = None,
    drop: tuple[str, ...] = (),
    **extra: bytes,
) -> bytes:
    from bunzai_codecs.core.archive import write_zip

    m = _byaf_members()
    base_manifest = orjson.loads(m["manifest.json"])
    base_char = orjson.loads(m["characters/c1/character.json"])
    base_scen = orjson.loads(m["scenarios/s1.json"])
    for key, base, change in [
        ("manifest.json", base_manifest, manifest),
        ("characters/c1/character.json", base_char, character),
        ("scenarios/s1.json", base_scen, scenario),
    ]:
        if isinstance(change, bytes):
            m[key] = change
        elif change is not None:
            m[key] = orjson.dumps({**base, **change})
    for k in drop:
        m.pop(k)
    return write_zip(list(m.items()))


def byaf_cases() -> Iterator[Case]:
    """``.byaf`` with hostile members: the manifest naming missing or escaping files, JSON that is not
    JSON, image paths that leave the character folder, bombs."""
    yield Case("byaf", "valid archive (control)", "b.byaf", _byaf())
    yield Case("byaf", "manifest missing", "b.byaf", _byaf(drop=("manifest.json",)))
    yield Case("byaf", "manifest not JSON", "b.byaf", _byaf(manifest=b"{oops"))
    yield Case("byaf", "manifest a JSON array", "b.byaf", _byaf(manifest=b"[]"))
    yield Case(
        "byaf",
        "manifest names a missing character file",
        "b.byaf",
        _byaf(drop=("characters/c1/character.json",)),
    )
    yield Case("byaf", "manifest names a missing scenario", "b.byaf", _byaf(drop=("scenarios/s1.json",)))
    for label, change in [
        ("two characters", {"characters": ["characters/c1/character.json", "characters/c1/character.json"]}),
        ("no characters", {"characters": []}),
        ("characters a string", {"characters": "characters/c1/character.json"}),
        ("character path escapes", {"characters": ["characters/../../etc/character.json"]}),
        ("character path absolute", {"characters": ["/characters/c1/character.json"]}),
        ("scenario path escapes", {"scenarios": ["scenarios/../../../etc/passwd.json"]}),
        ("scenario path a number", {"scenarios": [5]}),
        ("scenarios an object", {"scenarios": {"0": "scenarios/s1.json"}}),
        ("author a string", {"author": "me"}),
    ]:
        yield Case("byaf", f"manifest: {label}", "b.byaf", _byaf(manifest=change))
    yield Case("byaf", "character.json not JSON", "b.byaf", _byaf(character=b"\xff\xfe{"))
    yield Case("byaf", "character.json a JSON array", "b.byaf", _byaf(character=b"[1]"))
    for label, change in [
        ("image path escapes", {"images": [{"path": "../../../../etc/passwd", "label": "avatar"}]}),
        ("image path absolute", {"images": [{"path": "/etc/passwd", "label": "avatar"}]}),
        ("image path backslashes", {"images": [{"path": "..\\..\\x.png", "label": "avatar"}]}),
        ("image path names a missing file", {"images": [{"path": "images/none.png", "label": "avatar"}]}),
        ("image path a number", {"images": [{"path": 5}]}),
        ("images a string", {"images": "images/a.png"}),
        ("loreItems a string", {"loreItems": "x"}),
        ("loreItems of numbers", {"loreItems": [1, 2]}),
        ("loreItem key a list", {"loreItems": [{"key": ["a"], "value": "v"}]}),
        ("displayName an object", {"displayName": {"x": 1}}),
        ("createdAt not a date", {"createdAt": "yesterday"}),
    ]:
        yield Case("byaf", f"character: {label}", "b.byaf", _byaf(character=change))
    for label, change in [
        ("backgroundImage missing", {"backgroundImage": "scenarios/none.png"}),
        ("backgroundImage escapes", {"backgroundImage": "../../etc/passwd"}),
        ("backgroundImage a number", {"backgroundImage": 5}),
        ("firstMessages a string", {"firstMessages": "hi"}),
        ("exampleMessages of numbers", {"exampleMessages": [1]}),
    ]:
        yield Case("byaf", f"scenario: {label}", "b.byaf", _byaf(scenario=change))
    m = _byaf_members()
    yield Case(
        "byaf",
        "character.json a bomb",
        "b.byaf",
        _zip_raw_members(
            [
                ("manifest.json", m["manifest.json"], 8, None),
                ("characters/c1/character.json", b"{" + b" " * (90 * MIB) + b"}", 8, None),
            ]
        ),
    )
    yield Case(
        "byaf",
        "image declares 10 bytes, inflates to 4 MiB",
        "b.byaf",
        _zip_raw_members(
            [
                *((k, v, 8, None) for k, v in m.items() if k != "characters/c1/images/a.png"),
                ("characters/c1/images/a.png", bytes(4 * MIB), 8, 10),
            ]
        ),
    )


_VOX_CHAR = "Characters/11111111-2222-4333-8444-555555555555/"
_VOX_BOOK = "Books/66666666-7777-4888-9999-aaaaaaaaaaaa/book.json"


def _voxta_members() -> dict[str, bytes]:
    character = {
        "$type": "character",
        "Id": "11111111-2222-4333-8444-555555555555",
        "Name": "Hostile",
        "Profile": "{{ char }} p",
        "FirstMessage": "hi",
        "MemoryBooks": ["66666666-7777-4888-9999-aaaaaaaaaaaa"],
        "Tags": ["t"],
        "DateCreated": "2024-01-01T00:00:00+00:00",
        "Thumbnail": {"ContentType": "image/png"},
    }
    book = {
        "$type": "book",
        "Id": "66666666-7777-4888-9999-aaaaaaaaaaaa",
        "Name": "Lore",
        "Items": [{"Id": "0", "Keywords": ["harbor"], "Text": "v", "Weight": 10, "Deleted": False}],
    }
    package = {
        "$type": "package",
        "Id": "00000000-1111-4222-8333-444444444444",
        "Name": "Hostile",
        "EntryResource": {"Kind": 1, "Id": "11111111-2222-4333-8444-555555555555"},
    }
    return {
        "package.json": orjson.dumps(package),
        _VOX_CHAR + "character.json": orjson.dumps(character),
        _VOX_CHAR + "thumbnail.png": tiny_png(),
        _VOX_CHAR + "Assets/Avatars/Default/Smile_Idle_01.png": tiny_png(),
        _VOX_BOOK: orjson.dumps(book),
        "Scenarios/s/scenario.json": b'{"$type": "scenario"}',
    }


def _voxta(
    package: Any = None, character: Any = None, book: Any = None, drop: tuple[str, ...] = (), **extra: bytes
) -> bytes:
    from bunzai_codecs.core.archive import write_zip

    m = _voxta_members()
    for key, change in [
        ("package.json", package),
        (_VOX_CHAR + "character.json", character),
        (_VOX_BOOK, book),
    ]:
        if isinstance(change, bytes):
            m[key] = change
        elif change is not None:
            m[key] = orjson.dumps({**orjson.loads(m[key]), **change})
    for k in drop:
        m.pop(k)
    m.update({k.replace("__", "/"): v for k, v in extra.items()})
    return write_zip(list(m.items()))


def voxta_cases() -> Iterator[Case]:
    """``.voxpkg`` with hostile members: JSON that is not JSON or of the wrong shape, memory books
    naming what is not there, folders that hold no character, names that escape, bombs."""
    yield Case("voxta", "valid package (control)", "v.voxpkg", _voxta())
    yield Case("voxta", "no package.json (control)", "v.voxpkg", _voxta(drop=("package.json",)))
    yield Case("voxta", "no character", "v.voxpkg", _voxta(drop=(_VOX_CHAR + "character.json",)))
    yield Case("voxta", "package.json not JSON", "v.voxpkg", _voxta(package=b"{oops"))
    yield Case("voxta", "package.json a JSON array", "v.voxpkg", _voxta(package=b"[]"))
    yield Case("voxta", "character.json not JSON", "v.voxpkg", _voxta(character=b"\xff\xfe{"))
    yield Case("voxta", "character.json a JSON array", "v.voxpkg", _voxta(character=b"[1]"))
    yield Case("voxta", "book.json a JSON string", "v.voxpkg", _voxta(book=b'"book"'))
    for label, change in [
        ("entry resource names nobody", {"EntryResource": {"Kind": 1, "Id": "nobody"}}),
        ("entry resource a string", {"EntryResource": "x"}),
        ("entry resource id an object", {"EntryResource": {"Kind": 1, "Id": {"a": 1}}}),
        ("$type a number", {"$type": 5}),
    ]:
        yield Case("voxta", f"package: {label}", "v.voxpkg", _voxta(package=change))
    for label, change in [
        ("Name an object", {"Name": {"x": 1}}),
        ("Profile a list", {"Profile": ["a"]}),
        ("MemoryBooks a string", {"MemoryBooks": "66666666-7777-4888-9999-aaaaaaaaaaaa"}),
        ("MemoryBooks of objects", {"MemoryBooks": [{"Id": 1}]}),
        ("MemoryBooks naming a missing book", {"MemoryBooks": ["00000000-0000-4000-8000-000000000000"]}),
        ("Tags a number", {"Tags": 5}),
        ("AlternativeFirstMessages of lists", {"AlternativeFirstMessages": [["a"]]}),
        ("DateCreated a number", {"DateCreated": 5}),
        ("DateCreated not a date", {"DateCreated": "yesterday"}),
        ("DateCreated year 1", {"DateCreated": "0001-01-01T00:00:00+00:00"}),
        ("Id differs from its folder", {"Id": "../../etc"}),
        ("$type a scenario", {"$type": "scenario"}),
    ]:
        yield Case("voxta", f"character: {label}", "v.voxpkg", _voxta(character=change))
    for label, change in [
        ("Items a string", {"Items": "x"}),
        ("Items of numbers", {"Items": [1, 2]}),
        ("Keywords a string", {"Items": [{"Keywords": "harbor", "Text": "v"}]}),
        ("Text an object", {"Items": [{"Keywords": ["a"], "Text": {"x": 1}}]}),
        ("Weight a word", {"Items": [{"Keywords": ["a"], "Text": "v", "Weight": "heavy"}]}),
        ("Deleted a string", {"Items": [{"Keywords": ["a"], "Text": "v", "Deleted": "yes"}]}),
        ("repeated item ids", {"Items": [{"Id": "a", "Text": "1"}, {"Id": "a", "Text": "2"}]}),
        ("Id a number", {"Id": 7}),
    ]:
        yield Case("voxta", f"book: {label}", "v.voxpkg", _voxta(book=change))
    yield Case(
        "voxta",
        "a character folder without character.json",
        "v.voxpkg",
        _voxta(**{"Characters__stray__thumbnail.png": tiny_png()}),
    )
    yield Case(
        "voxta",
        "a thumbnail that is not an image",
        "v.voxpkg",
        _voxta(**{_VOX_CHAR.replace("/", "__") + "thumbnail.png": b"not a picture"}),
    )
    yield Case(
        "voxta",
        "two characters sharing one book (control)",
        "v.voxpkg",
        _voxta(
            **{
                "Characters__b__character.json": orjson.dumps(
                    {
                        "$type": "character",
                        "Id": "b",
                        "Name": "B",
                        "MemoryBooks": ["66666666-7777-4888-9999-aaaaaaaaaaaa"],
                    }
                )
            }
        ),
    )
    yield Case(
        "voxta",
        "name escapes the character folder",
        "v.voxpkg",
        _zip_raw_members(
            [
                (_VOX_CHAR + "character.json", b'{"Name": "x"}', 8, None),
                (_VOX_CHAR + "../../../evil.png", tiny_png(), 8, None),
            ]
        ),
    )
    m = _voxta_members()
    yield Case(
        "voxta",
        "character.json a bomb",
        "v.voxpkg",
        _zip_raw_members(
            [
                ("package.json", m["package.json"], 8, None),
                (_VOX_CHAR + "character.json", b"{" + b" " * (90 * MIB) + b"}", 8, None),
            ]
        ),
    )
    yield Case(
        "voxta",
        "thumbnail declares 10 bytes, inflates to 4 MiB",
        "v.voxpkg",
        _zip_raw_members(
            [
                *((k, v, 8, None) for k, v in m.items() if k != _VOX_CHAR + "thumbnail.png"),
                (_VOX_CHAR + "thumbnail.png", bytes(4 * MIB), 8, 10),
            ]
        ),
    )


def _backyard_tree() -> dict[str, Any]:
    return {
        "character": {
            "id": "c1",
            "aiDisplayName": "Hostile",
            "aiName": "Hostile",
            "aiPersona": "p",
            "basePrompt": "",
            "scenario": "",
            "firstMessage": "hi",
            "customDialogue": "",
            "createdAt": "2024-01-01T00:00:00.000Z",
            "updatedAt": "2024-01-01T00:00:00.000Z",
            "loreItems": [],
        },
        "version": 4,
    }


def _exif_png(block: bytes) -> bytes:
    return tiny_png(png_chunk(b"eXIf", block))


def _ifd(order: str, entries: list[tuple[int, int, int, bytes]], next_ifd: int = 0) -> bytes:
    """An IFD: ``(tag, type, count, 4-byte value/offset field)`` rows."""
    out = struct.pack(order + "H", len(entries))
    for tag, typ, count, field in entries:
        out += struct.pack(order + "HHI", tag, typ, count) + field
    return out + struct.pack(order + "I", next_ifd)


def _exif_block(
    comment: bytes,
    *,
    order: str = ">",
    uc_type: int = 7,
    uc_count: int | None = None,
    uc_offset: int | None = None,
) -> bytes:
    """A TIFF block IFD0 -> Exif IFD -> UserComment = ``comment`` (charset prefix included)."""
    head = (b"MM\0*" if order == ">" else b"II*\0") + struct.pack(order + "I", 8)
    ifd0_len = 2 + 12 + 4
    exif_at = 8 + ifd0_len
    value_at = exif_at + 2 + 12 + 4
    ifd0 = _ifd(order, [(0x8769, 4, 1, struct.pack(order + "I", exif_at))])
    count = len(comment) if uc_count is None else uc_count
    off = value_at if uc_offset is None else uc_offset
    field = comment.ljust(4, b"\0") if count <= 4 and uc_offset is None else struct.pack(order + "I", off)
    exif_ifd = _ifd(order, [(0x9286, uc_type, count, field)])
    return head + ifd0 + exif_ifd + (comment if len(comment) > 4 else b"")


def exif_cases() -> Iterator[Case]:
    """Backyard's legacy PNG: the character in an EXIF UserComment, and every way the TIFF block lies."""
    from bunzai_codecs.formats.backyard import exif

    tree = _backyard_tree()
    b64 = exif.user_comment_value(base64.b64encode(orjson.dumps(tree)))
    yield Case("exif", "valid block (control)", "b.png", _exif_png(exif.build_exif(b64)))
    yield Case("exif", "hand-built block, big-endian (control)", "b.png", _exif_png(_exif_block(b64)))
    yield Case(
        "exif", "hand-built block, little-endian (control)", "b.png", _exif_png(_exif_block(b64, order="<"))
    )
    good = _exif_block(b64)
    yield Case("exif", "not a TIFF header", "b.png", _exif_png(b"XX*\0" + good[4:]))
    yield Case("exif", "shorter than a TIFF header", "b.png", _exif_png(good[:5]))
    yield Case("exif", "empty eXIf chunk", "b.png", _exif_png(b""))
    yield Case("exif", "IFD0 offset past the end", "b.png", _exif_png(_patch(good, 4, b"\x7f\xff\xff\xff")))
    yield Case("exif", "IFD0 offset inside the header", "b.png", _exif_png(_patch(good, 4, b"\0\0\0\x02")))
    yield Case("exif", "IFD0 declares 65535 entries", "b.png", _exif_png(_patch(good, 8, b"\xff\xff")))
    yield Case("exif", "IFD0 declares 1000 entries", "b.png", _exif_png(_patch(good, 8, b"\x03\xe8")))
    yield Case("exif", "Exif IFD pointer of type ASCII", "b.png", _exif_png(_patch(good, 12, b"\0\x02")))
    yield Case("exif", "Exif IFD pointer with count 2", "b.png", _exif_png(_patch(good, 14, b"\0\0\0\x02")))
    yield Case("exif", "Exif IFD pointer past the end", "b.png", _exif_png(_patch(good, 18, b"\x7f\0\0\0")))
    yield Case("exif", "Exif IFD pointer back at IFD0", "b.png", _exif_png(_patch(good, 18, b"\0\0\0\x08")))
    yield Case("exif", "UserComment of unknown type 99", "b.png", _exif_png(_exif_block(b64, uc_type=99)))
    yield Case("exif", "UserComment of type LONG", "b.png", _exif_png(_exif_block(b64, uc_type=4)))
    yield Case(
        "exif", "UserComment count 0xFFFFFFFF", "b.png", _exif_png(_exif_block(b64, uc_count=0xFFFFFFFF))
    )
    yield Case(
        "exif",
        "UserComment of type RATIONAL count 2^29",
        "b.png",
        _exif_png(_exif_block(b64, uc_type=5, uc_count=1 << 29)),
    )
    yield Case(
        "exif", "UserComment offset past the end", "b.png", _exif_png(_exif_block(b64, uc_offset=0xFFFFFFF0))
    )
    yield Case("exif", "UserComment offset 0", "b.png", _exif_png(_exif_block(b64, uc_offset=0)))
    yield Case("exif", "UserComment shorter than its charset", "b.png", _exif_png(_exif_block(b"ASC")))
    yield Case("exif", "UserComment empty", "b.png", _exif_png(_exif_block(b"", uc_count=0)))
    yield Case("exif", "UNICODE charset, odd byte count", "b.png", _exif_png(_exif_block(b"UNICODE\0{\0x")))
    yield Case(
        "exif", "UNICODE charset, lone surrogate", "b.png", _exif_png(_exif_block(b"UNICODE\0\xd8\x00\x00{"))
    )
    yield Case("exif", "JIS charset", "b.png", _exif_png(_exif_block(b"JIS\0\0\0\0\0" + orjson.dumps(tree))))
    for label, text in [
        ("neither JSON nor base64", b"<<hello>>"),
        ("invalid base64", b"eyJjaGFyYWN0ZXIi=====x"),
        ("base64 of non-JSON", base64.b64encode(b"not json at all")),
        ("base64 of invalid UTF-8", base64.b64encode(b'{"character":{"aiName":"\xff"}}')),
        ("raw JSON, broken", b'{"character": {'),
        ("raw JSON, an array", b"[1, 2]"),
        ("JSON without character", orjson.dumps({"version": 4})),
        ("character a string", orjson.dumps({"character": "x"})),
        ("character fields of the wrong type", orjson.dumps({"character": {"aiName": 5, "loreItems": "x"}})),
        (
            "loreItems rows of the wrong type",
            orjson.dumps({"character": {"aiName": "x", "loreItems": [5, {"key": 1}]}}),
        ),
        ("raw JSON nests 100k deep", b'{"character":' * 100_000 + b"{}" + b"}" * 100_000),
    ]:
        yield Case(
            "exif", f"comment: {label}", "b.png", _exif_png(exif.build_exif(exif.user_comment_value(text)))
        )
    yield Case(
        "exif",
        "two eXIf chunks, the first broken",
        "b.png",
        tiny_png(png_chunk(b"eXIf", b"MM\0*\xff\xff\xff\xff"), png_chunk(b"eXIf", exif.build_exif(b64))),
    )


def naidata_cases() -> Iterator[Case]:
    """NovelAI's PNG lorebook card: ``naidata`` = base64 of the lorebook JSON."""
    book = {
        "lorebookVersion": 5,
        "entries": [{"text": "t", "displayName": "d", "keys": ["k"], "enabled": True}],
        "settings": {"orderByKeyLocations": False},
        "categories": [],
    }
    good = base64.b64encode(orjson.dumps(book))
    yield Case("naidata", "valid naidata (control)", "l.png", tiny_png(text("naidata", good)))
    for label, value in [
        ("bad base64: punctuation", b"!!!not-base64!!!"),
        ("bad base64: cut mid-quantum", good[:-3]),
        ("bad base64: padding in the middle", good[:8] + b"==" + good[8:]),
        ("bad base64: URL-safe alphabet", base64.urlsafe_b64encode(orjson.dumps(book) + b"\xfb\xff")),
        ("base64 of non-JSON", base64.b64encode(b"lorebook")),
        ("base64 of invalid UTF-8", base64.b64encode(b'{"entries":["\xff"]}')),
        ("base64 of a JSON array", base64.b64encode(b"[]")),
        ("base64 of JSON nested 100k deep", base64.b64encode(b"[" * 100_000 + b"]" * 100_000)),
        ("empty", b""),
        ("entries a string", base64.b64encode(orjson.dumps({**book, "entries": "x"}))),
        (
            "entry keys a string",
            base64.b64encode(orjson.dumps({**book, "entries": [{"text": "t", "keys": "k"}]})),
        ),
        ("categories of numbers", base64.b64encode(orjson.dumps({**book, "categories": [1]}))),
    ]:
        yield Case("naidata", label, "l.png", tiny_png(text("naidata", value)))
    yield Case(
        "naidata",
        "naidata in a zTXt bomb",
        "l.png",
        tiny_png(png_chunk(b"zTXt", b"naidata\0\0" + zlib.compress(bytes(100 * MIB), 9))),
    )


def png_payload_cases() -> Iterator[Case]:
    """Card PNGs whose ``chara``/``ccv3``/``persona`` chunk is valid base64 of valid JSON of the wrong shape."""
    for label, tree in [
        ("a number", 5),
        ("a string", "card"),
        ("null", None),
        ("an empty object", {}),
        ("v2 without data", {"spec": "chara_card_v2"}),
        ("v2 data a list", {"spec": "chara_card_v2", "data": []}),
        ("v3 name an object", {"spec": "chara_card_v3", "data": {"name": {"a": 1}}}),
        (
            "v2 alternate_greetings of numbers",
            {"spec": "chara_card_v2", "data": {"name": "x", "alternate_greetings": [1, 2]}},
        ),
        ("v2 tags a string", {"spec": "chara_card_v2", "data": {"name": "x", "tags": "a,b"}}),
        ("v2 character_book a list", {"spec": "chara_card_v2", "data": {"name": "x", "character_book": []}}),
        (
            "v2 book entries an object of numbers",
            {"spec": "chara_card_v2", "data": {"name": "x", "character_book": {"entries": {"0": 5}}}},
        ),
        (
            "v2 book entry keys a string",
            {
                "spec": "chara_card_v2",
                "data": {"name": "x", "character_book": {"entries": [{"keys": "a", "content": 1}]}},
            },
        ),
        ("v2 extensions a list", {"spec": "chara_card_v2", "data": {"name": "x", "extensions": []}}),
        (
            "v2 depth_prompt a string",
            {"spec": "chara_card_v2", "data": {"name": "x", "extensions": {"depth_prompt": "x"}}},
        ),
        (
            "v2 regex_scripts an object",
            {"spec": "chara_card_v2", "data": {"name": "x", "extensions": {"regex_scripts": {"a": 1}}}},
        ),
        ("v2 risuai a number", {"spec": "chara_card_v2", "data": {"name": "x", "extensions": {"risuai": 5}}}),
        ("v3 assets a string", {"spec": "chara_card_v3", "data": {"name": "x", "assets": "x"}}),
        ("v3 asset rows of numbers", {"spec": "chara_card_v3", "data": {"name": "x", "assets": [1]}}),
        ("v1 name a number", {"name": 5, "description": "d", "first_mes": "hi"}),
        ("v1 fields all null", {"name": None, "description": None, "first_mes": None, "personality": None}),
        ("spec a number", {"spec": 2, "data": {"name": "x"}}),
        (
            "creation date a string",
            {"spec": "chara_card_v3", "data": {"name": "x", "creation_date": "today"}},
        ),
    ]:
        b = base64.b64encode(orjson.dumps(tree))
        yield Case("png", f"chara: {label}", "c.png", tiny_png(text("chara", b)))
        if isinstance(tree, dict) and tree.get("spec") == "chara_card_v3":
            yield Case(
                "png",
                f"ccv3: {label}",
                "c.png",
                tiny_png(text("ccv3", b), text("chara", base64.b64encode(card_json()))),
            )
    for label, tree in [
        ("a list", [1]),
        ("name a number", {"name": 5}),
        ("image a number", {"name": "p", "image": 5}),
    ]:
        b = base64.b64encode(orjson.dumps(tree))
        yield Case("png", f"persona: {label}", "p.png", tiny_png(text("persona", b)))


# -- text-completion presets, formatting templates, master exports ---------------------------------


def _preset_controls() -> tuple[bytes, bytes]:
    """A SillyTavern master export and a NovelAI preset, each written by the codec's own writer."""
    from bunzai_codecs import write
    from bunzai_codecs.core.entity import CanonicalEntity
    from bunzai_codecs.entities import PresetBody

    body = PresetBody.model_validate(
        {
            "name": "Hostile",
            "prompts": [{"id": "main", "content": "Stay in the harbor."}],
            "samplers": {
                "temperature": 0.9,
                "samplerOrder": ["temperature", "topP"],
                "drySequenceBreakers": ["\n"],
            },
            "instruct": {"inputSequence": "<u>", "outputSequence": "<a>", "namesBehavior": "force"},
            "context": {"storyString": "{{description}}", "storyStringRole": "system"},
            "reasoning": {"prefix": "<t>", "suffix": "</t>", "separator": "\n"},
            "systemPrompts": {"assistantPrefill": "Hm."},
        }
    )
    e = CanonicalEntity(kind="preset", id="preset-hostile", body=body)
    return write(e, "sillytavern-master").data, write(e, "novelai-preset").data


def preset_cases() -> Iterator[Case]:
    """SillyTavern's text-completion presets and templates, its master export and NovelAI's preset:
    the structures their readers walk (sections, sampler orders, the breakers' JSON text) broken."""
    import json  # orjson refuses integers past 64 bits, which these inputs need

    master_data, nai_data = _preset_controls()
    master, nai = orjson.loads(master_data), orjson.loads(nai_data)
    yield Case("preset", "master export (control)", "ST-formatting.json", master_data)
    yield Case("preset", "NovelAI preset (control)", "p.preset", nai_data)

    def with_section(key: str, value: Any) -> bytes:
        return json.dumps({**master, key: value}).encode()

    def with_preset(**changes: Any) -> bytes:
        return with_section("preset", {**master["preset"], **changes})

    deep = "[" * 100_000 + "]" * 100_000
    for label, data in [
        ("master: instruct a list", with_section("instruct", [master["instruct"]])),
        ("master: context a string", with_section("context", "story")),
        ("master: sysprompt null", with_section("sysprompt", None)),
        ("master: srw a list", with_section("srw", [1])),
        (
            "master: instruct sequences objects",
            with_section("instruct", {**master["instruct"], "input_sequence": {"a": 1}, "wrap": "yes"}),
        ),
        ("master: sysprompt content nested", with_section("sysprompt", {"name": "n", "content": [[["x"]]]})),
        ("master: preset sampler_order a string", with_preset(sampler_order="6,0,1")),
        ("master: preset sampler_order of nulls", with_preset(sampler_order=[None, True])),
        (
            "master: preset sampler_order odd ids",
            with_preset(sampler_order=[2**64 - 1, -(2**63), 1e308, "²", "7"]),
        ),
        ("master: breakers not JSON", with_preset(dry_sequence_breakers='["\\n", ')),
        ("master: breakers nested 100k deep", with_preset(dry_sequence_breakers=deep)),
        ("master: breakers a JSON list of numbers", with_preset(dry_sequence_breakers="[1, 2]")),
        ("master: context role 9", with_section("context", {**master["context"], "story_string_role": 9})),
    ]:
        yield Case("preset", label, "ST-formatting.json", data)

    params = nai["parameters"]
    for label, tree in [
        ("NovelAI: parameters a list", {**nai, "parameters": [params]}),
        (
            "NovelAI: order item id a number",
            {**nai, "parameters": {**params, "order": [{"id": 3, "enabled": True}]}},
        ),
        (
            "NovelAI: order items of every type",
            {**nai, "parameters": {**params, "order": [1, "top_p", None, {"id": "x"}]}},
        ),
        (
            "NovelAI: order numbers and odd ids",
            {**nai, "parameters": {**params, "order": [2**64 - 1, -3, 9, 1e308]}},
        ),
        ("NovelAI: order an object", {**nai, "parameters": {**params, "order": {"id": "top_p"}}}),
        ("NovelAI: every parameter a string", {**nai, "parameters": {k: "x" for k in params}}),
    ]:
        yield Case("preset", label, "p.preset", json.dumps(tree).encode())
    for label, tree in [
        (
            "kobold: sampler_order an object",
            {"temp": 1, "rep_pen": 1, "typical": 1, "sampler_order": {"0": 6}},
        ),
        (
            "novel: order of strings",
            {
                "temperature": 1,
                "repetition_penalty": 1,
                "tail_free_sampling": 1,
                "phrase_rep_pen": 3,
                "order": ["a", "²"],
            },
        ),
        (
            "instruct: legacy names a string",
            {
                "name": "n",
                "input_sequence": "a",
                "output_sequence": "b",
                "names": "yes",
                "separator_sequence": 5,
                "system_prompt": {},
            },
        ),
        ("reasoning: all numbers", {"name": 1, "prefix": 2, "suffix": 3, "separator": 4}),
    ]:
        yield Case("preset", label, "x.json", json.dumps(tree).encode())


# -- type confusion inside containers ------------------------------------------------------------


# -- story saves: KoboldAI saves and world info exports, NovelAI .story files -----------------------


def _kobold_control() -> dict[str, Any]:
    """A KoboldAI Lite save written by the codec's own writer (a fresh save of a small book)."""
    from bunzai_codecs import write
    from bunzai_codecs.core.entity import CanonicalEntity
    from bunzai_codecs.entities import LorebookBody

    body = LorebookBody.model_validate(
        {
            "categories": [{"id": "g", "name": "Places"}],
            "entries": [
                {"id": "memory", "title": "Memory", "content": "Hostile memory.", "constant": True},
                {
                    "id": "0",
                    "title": "Gate",
                    "content": "An iron gate.",
                    "triggers": [{"text": "gate"}, {"text": "door"}],
                    "secondaryTriggers": [{"text": "night"}],
                    "selective": True,
                    "probability": 50,
                    "categoryId": "g",
                },
            ],
        }
    )
    data = write(CanonicalEntity(kind="lorebook", id="lorebook-hostile", body=body), "kobold-save").data
    tree: dict[str, Any] = orjson.loads(data)
    tree["prompt"], tree["actions"] = "Once upon a time.", [" It rained."]
    return tree


def kobold_cases() -> Iterator[Case]:
    save = _kobold_control()
    wi = save["worldinfo"]

    def with_(**kw: Any) -> bytes:
        return orjson.dumps({**save, **kw})

    def entry(**kw: Any) -> bytes:
        return with_(worldinfo=[{**wi[0], **kw}])

    yield Case("kobold", "valid save (control)", "s.json", orjson.dumps(save))
    yield Case("kobold", "valid world info export (control)", "world_info.json", orjson.dumps(wi))
    data = orjson.dumps(save)
    for cut in (len(data) // 3, len(data) - 2):
        yield Case("kobold", f"save truncated at {cut}", "s.json", data[:cut])
    for label, case in [
        ("worldinfo a string", with_(worldinfo="gate")),
        ("worldinfo entry a number", with_(worldinfo=[7])),
        ("key a list", entry(key=["gate"])),
        ("key null, content a number", entry(key=None, content=12)),
        ("keysecondary an object", entry(keysecondary={"a": 1})),
        ("probability a boolean", entry(probability=True)),
        ("probability not a number", entry(probability="often")),
        ("probability huge", entry(probability=1e308)),
        ("selective a string", entry(selective="yes")),
        ("folder an object", entry(folder={"uid": 1})),
        ("wigroup a list", entry(wigroup=["x"])),
        ("wifolders_d a list", with_(wifolders_d=[1])),
        ("wifolders_d entry a string", with_(wifolders_d={"1": "name"})),
        ("wifolders_l of objects", with_(wifolders_l=[{"uid": 1}])),
        ("memory an object", with_(memory={"text": "m"})),
        ("gamestarted a string (not claimed)", with_(gamestarted="true")),
        ("KoboldAI United's file_version (not claimed)", with_(file_version=2)),
        (
            "savedsettings nested 100k deep",
            with_(savedsettings=None)[:-1] + b',"x":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        ),
    ]:
        yield Case("kobold", label, "s.json", case)
    yield Case(
        "kobold",
        "5k world info entries",
        "s.json",
        with_(worldinfo=[{**wi[0], "comment": f"e{i}"} for i in range(5_000)]),
    )
    yield Case("kobold", "memory a 24 MiB string", "s.json", with_(memory="m" * (24 * MIB)))
    yield Case(
        "kobold",
        "world info export with a keys list (AI Dungeon-like)",
        "w.json",
        orjson.dumps([{"keys": ["a"], "entry": "x"}]),
    )


def _story_control() -> dict[str, Any]:
    cc = {
        "prefix": "",
        "suffix": "\n",
        "tokenBudget": 2048,
        "reservedTokens": 0,
        "budgetPriority": 400,
        "trimDirection": "trimBottom",
        "insertionType": "newline",
        "maximumTrimType": "sentence",
        "insertionPosition": -1,
    }
    return {
        "storyContainerVersion": 1,
        "metadata": {
            "storyMetadataVersion": 1,
            "id": "x",
            "title": "Hostile",
            "description": "d",
            "tags": ["t"],
        },
        "content": {
            "storyContentVersion": 6,
            "settings": {"parameters": {"temperature": 1}},
            "document": base64.b64encode(b"\x81\xa4text\xa5hello").decode(),
            "context": [{"text": "memory", "contextConfig": cc}, {"text": "note", "contextConfig": cc}],
            "lorebook": {
                "lorebookVersion": 5,
                "entries": [
                    {"text": "t", "displayName": "d", "keys": ["k"], "enabled": True, "contextConfig": cc}
                ],
                "settings": {"orderByKeyLocations": False},
                "categories": [],
            },
            "ephemeralContext": [
                {
                    "text": "soon",
                    "contextConfig": cc,
                    "startingStep": 1,
                    "delay": 0,
                    "duration": 1,
                    "repeat": False,
                    "reverse": False,
                }
            ],
        },
    }


def story_cases() -> Iterator[Case]:
    story = _story_control()

    def content(**kw: Any) -> bytes:
        return orjson.dumps({**story, "content": {**story["content"], **kw}})

    yield Case("story", "valid story (control)", "s.story", orjson.dumps(story))
    data = orjson.dumps(story)
    for cut in (len(data) // 2, len(data) - 1):
        yield Case("story", f"story truncated at {cut}", "s.story", data[:cut])
    book = story["content"]["lorebook"]
    for label, case in [
        ("content a string (not claimed)", orjson.dumps({**story, "content": "x"})),
        (
            "storyContainerVersion huge",
            data.replace(b'"storyContainerVersion":1', b'"storyContainerVersion":' + b"9" * 400),
        ),
        ("metadata a list", orjson.dumps({**story, "metadata": []})),
        ("tags a string", orjson.dumps({**story, "metadata": {**story["metadata"], "tags": "t"}})),
        ("lorebook an array", content(lorebook=[])),
        ("lorebook without lorebookVersion", content(lorebook={"entries": []})),
        ("lorebook entries an object", content(lorebook={**book, "entries": {}})),
        ("lorebook entry keys a string", content(lorebook={**book, "entries": [{"text": "t", "keys": "k"}]})),
        ("context a string", content(context="memory")),
        ("context entry a number", content(context=[3])),
        ("ephemeral text a list", content(ephemeralContext=[{"text": ["a"]}])),
        ("document an object (carried as is)", content(document={"nested": [1, 2]})),
        ("document not base64 (never decoded)", content(document="!!! not base64 !!!")),
    ]:
        yield Case("story", label, "s.story", case)
    zeros = base64.b64encode(zlib.compress(bytes(100 * MIB), 9)).decode()
    yield Case(
        "story",
        "document holds 100 MiB of deflated zeros (carried, never inflated)",
        "s.story",
        content(document=zeros),
    )
    yield Case("story", "document a 24 MiB string", "s.story", content(document="A" * (24 * MIB)))


def payload_cases(per_payload: int = 25, seed: int = 7) -> Iterator[Case]:
    """For every binary sample (PNG, charx/byaf/JPEG hybrid, risum, risup): each JSON tree its
    container carries, with fields replaced by wrong-typed values, rebuilt into a valid container."""
    from .containers import payloads

    rnd = random.Random(seed)
    for f in sample_files():
        data = f.read_bytes()
        rel = f.relative_to(SAMPLES).as_posix()
        for p in payloads(f.name, data):
            paths = list(_paths(p.tree))
            rnd.shuffle(paths)
            for path in paths[:per_payload]:
                fn = rnd.choice(_WRONG)
                try:
                    mutated = _set(p.tree, path, fn(_get(p.tree, path)))
                    built = p.rebuild(mutated)
                except (KeyError, IndexError, TypeError, ValueError):
                    continue
                yield Case(
                    f"shape:{rel.split('/')[0]}",
                    f"{rel} [{p.where}] {'/'.join(map(str, path))} wrong type",
                    f.name,
                    built,
                )


# -- YAML, and inputs of several files -----------------------------------------------------------------


def billion_laughs(levels: int = 9, lead: str = "name: Lol\ncontext:") -> bytes:
    """Nine levels of nine aliases: ~1 KB of YAML that stands for 9**9 strings."""
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]")
    return ("\n".join(lines) + f"\n{lead} *a{levels}\n").encode()


def yaml_cases() -> Iterator[Case]:
    """Hostile YAML: bombs, object-building tags, bounds, encodings (text-generation-webui files)."""
    yield Case("yaml", "valid character (control)", "ok.yaml", b"name: Ok\ngreeting: hi\ncontext: fine\n")
    yield Case("yaml", "billion laughs", "lol.yaml", billion_laughs())
    yield Case(
        "yaml", "billion laughs in a preset", "lol.yaml", billion_laughs(lead="temperature: 1\ntop_p:")
    )
    yield Case("yaml", "recursive alias", "loop.yaml", b"name: A\ncontext: x\nloop: &l [*l]\n")
    yield Case("yaml", "merge-key bomb", "merge.yaml", billion_laughs(lead="name: M\ncontext: x\nm:\n  <<:"))
    yield Case(
        "yaml",
        "nesting 100k deep (flow)",
        "deep.yaml",
        b"name: A\ncontext: " + b"[" * 100_000 + b"]" * 100_000,
    )
    yield Case(
        "yaml",
        "nesting 5k deep (block)",
        "deep2.yaml",
        b"name: A\ncontext: x\nd:\n" + b"".join(b" " * (i + 1) + b"- \n" for i in range(5000)),
    )
    yield Case(
        "yaml",
        "python object tag",
        "obj.yaml",
        b"name: A\ncontext: !!python/object/apply:os.system ['echo pwned']\n",
    )
    yield Case("yaml", "binary tag", "bin.yaml", b"name: A\ncontext: !!binary aGk=\n")
    yield Case("yaml", "set tag", "set.yaml", b"name: A\ncontext: x\ns: !!set {a, b}\n")
    yield Case(
        "yaml",
        "300k keys",
        "keys.yaml",
        b"name: A\ncontext: x\n" + b"".join(b"k%d: 1\n" % i for i in range(300_000)),
    )
    yield Case("yaml", "17 MiB context", "huge.yaml", b"name: A\ncontext: |\n  " + b"x" * (17 * MIB) + b"\n")
    yield Case("yaml", "invalid UTF-8", "utf8.yaml", b"name: A\ncontext: \xff\xfe\n")
    yield Case("yaml", "NUL byte", "nul.yaml", b"name: A\ncontext: x\x00y\n")
    yield Case("yaml", "two documents", "two.yaml", b"name: A\ncontext: x\n---\nname: B\n")
    yield Case("yaml", "NaN and infinity", "nan.yaml", b"temperature: .nan\ntop_p: .inf\n")
    yield Case("yaml", "5000-digit integer", "int.yaml", b"temperature: " + b"9" * 5000 + b"\ntop_p: 1\n")
    yield Case("yaml", "lone surrogate escape", "sur.yaml", b'name: A\ncontext: "\\ud800"\n')
    yield Case("yaml", "integer keys", "ints.yaml", b"name: A\ncontext: x\n1: one\n")
    yield Case("yaml", "instruction template a list", "it.yaml", b"instruction_template:\n- a\n- b\n")
    yield Case("yaml", "UTF-16 with BOM", "u16.yaml", "name: A\ncontext: x\n".encode("utf-16"))


def _folder_set(change: Callable[[dict[str, bytes]], None] | None = None) -> bytes:
    from bunzai_codecs.core import fileset

    files = {
        "card.yaml": b"card_folder: 1\nidentity:\n  name: Hostile\nmedia:\n  portrait:\n    role: portrait\n"
        b"    ref: 'ccdefault:'\n    file: assets/portrait.png\n",
        "description.md": b"A hostile folder.\n",
        "assets/portrait.png": tiny_png(),
        "lorebook/book.yaml": b"name: Book\n",
        "lorebook/001-entry.md": b"---\nid: e1\ntriggers:\n- text: key\n---\nLore.\n",
        "regex/set.yaml": b"name: Set\n",
        "regex/01-rule.yaml": b"id: r1\nfind: a+\nreplace: b\n",
    }
    if change is not None:
        change(files)
    return fileset.pack(files)


def folder_cases() -> Iterator[Case]:
    """Card folders (as the file sets the command line and the pipeline make of them) and a
    character with its picture: escapes, links, bombs, bounds."""
    yield Case("folder", "card folder (control)", "card", _folder_set())
    yield Case("folder", "character and picture (control)", "A.yaml", _folder_set_pair())
    yield Case(
        "folder",
        "card.yaml names ../../etc/passwd",
        "card",
        _folder_set(
            lambda f: f.update(
                {"card.yaml": f["card.yaml"].replace(b"assets/portrait.png", b"../../etc/passwd")}
            )
        ),
    )
    yield Case(
        "folder",
        "card.yaml names an absolute path",
        "card",
        _folder_set(
            lambda f: f.update({"card.yaml": f["card.yaml"].replace(b"assets/portrait.png", b"/etc/passwd")})
        ),
    )
    yield Case(
        "folder",
        "member named ../escape.md",
        "card",
        _raw_zip(
            [(b"card.yaml", b"card_folder: 1\n", 0o100644 << 16), (b"../escape.md", b"x", 0o100644 << 16)]
        ),
    )
    yield Case(
        "folder",
        "symlink member",
        "card",
        _raw_zip(
            [
                (b"card.yaml", b"card_folder: 1\n", 0o100644 << 16),
                (b"description.md", b"/etc/passwd", 0o120777 << 16),
            ]
        ),
    )
    yield Case(
        "folder",
        "card.yaml a billion laughs",
        "card",
        _folder_set(
            lambda f: f.update({"card.yaml": b"card_folder: 1\n" + billion_laughs(lead="extensions:\n  x:")})
        ),
    )
    yield Case(
        "folder",
        "front matter a billion laughs",
        "card",
        _folder_set(
            lambda f: f.update(
                {
                    "lorebook/001-entry.md": b"---\n"
                    + billion_laughs(lead="id: x\nextensions:\n  x:")
                    + b"---\nx\n"
                }
            )
        ),
    )
    yield Case(
        "folder",
        "card.yaml nests 100k deep",
        "card",
        _folder_set(
            lambda f: f.update(
                {"card.yaml": b"card_folder: 1\nextensions: " + b"[" * 100_000 + b"]" * 100_000}
            )
        ),
    )
    yield Case(
        "folder",
        "17 MiB description",
        "card",
        _folder_set(lambda f: f.update({"description.md": b"x" * (17 * MIB)})),
    )
    yield Case(
        "folder",
        "20001 entries",
        "card",
        _folder_set(lambda f: f.update({f"lorebook/{i:05d}.md": b"x\n" for i in range(20_001)})),
    )
    yield Case(
        "folder",
        "front matter never closed",
        "card",
        _folder_set(lambda f: f.update({"lorebook/001-entry.md": b"---\nid: x\n"})),
    )
    yield Case(
        "folder",
        "front matter a list",
        "card",
        _folder_set(lambda f: f.update({"greetings/01.md": b"---\n- a\n---\nhi\n"})),
    )
    yield Case(
        "folder",
        "escrow not JSON",
        "card",
        _folder_set(lambda f: f.update({".bunzai/escrow.json": b"{nope"})),
    )
    yield Case(
        "folder",
        "escrow names a missing blob",
        "card",
        _folder_set(
            lambda f: f.update(
                {
                    ".bunzai/escrow.json": b'{"entities": [{"folder": "", "original": {"sillytavern": {"raw": {}, "blobs": {"png": "sha256:ab"}}}}]}'
                }
            )
        ),
    )
    yield Case(
        "folder",
        "escrow twin of an unknown format",
        "card",
        _folder_set(
            lambda f: f.update(
                {".bunzai/escrow.json": b'{"entities": [{"folder": "", "original": {"nope": {"raw": 1}}}]}'}
            )
        ),
    )
    yield Case(
        "folder",
        "entries key in book.yaml",
        "card",
        _folder_set(lambda f: f.update({"lorebook/book.yaml": b"entries: []\n"})),
    )
    yield Case("folder", "card.yaml missing", "card", _folder_set(lambda f: f.pop("card.yaml")))
    good = _folder_set()
    for cut in (10, len(good) // 2, len(good) - 22, len(good) - 1):
        yield Case("folder", f"truncated at {cut}", "card", good[:cut])


def _folder_set_pair() -> bytes:
    from bunzai_codecs.core import fileset

    return fileset.pack({"A.yaml": b"name: A\ngreeting: hi\ncontext: x\n", "A.png": tiny_png()})


def cases() -> Iterator[Case]:
    """Every case, built once per process (the bombs take seconds of compression): the hostile
    tests' collection and the pipeline's hostile-set test share them."""
    yield from _all_cases()


@functools.cache
def _all_cases() -> tuple[Case, ...]:
    return (
        *zip_cases(),
        *png_cases(),
        *png_payload_cases(),
        *json_cases(),
        *risum_cases(),
        *risup_cases(),
        *charx_cases(),
        *byaf_cases(),
        *voxta_cases(),
        *exif_cases(),
        *naidata_cases(),
        *preset_cases(),
        *kobold_cases(),
        *story_cases(),
        *yaml_cases(),
        *folder_cases(),
        *random_cases(),
        *shape_cases(),
        *payload_cases(),
        *bignum_cases(),
    )
