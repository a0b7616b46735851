"""Open a sample file down to the JSON trees its container carries, and build it back around an edit.

A PNG card carries base64 JSON in a text chunk (``chara``, ``ccv3``, ``naidata``, ``persona``) or in
an EXIF UserComment (Backyard); a ``.charx`` or ``.byaf`` carries JSON members (and a ``.charx`` a
``module.risum`` with JSON inside); a ``.risum`` carries its main block; a ``.risup`` its decrypted
preset. ``payloads(path, data)`` lists each tree with a function that rebuilds the whole file around
a replacement tree, using the project's own writers (core/png, core/archive, risum, risup, exif), so
the hostile variants are valid containers holding wrong-shaped JSON: only the codec's own shape
checks stand between them and a crash.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from bunzai_codecs.core import archive, png
from bunzai_codecs.core.errors import BunzaiError
from bunzai_codecs.core.sniff import parse_json
from bunzai_codecs.formats.backyard import exif
from bunzai_codecs.formats.risu import jsformat, risum, risup


@dataclass(frozen=True)
class Payload:
    """One JSON tree inside a container and how to put a replacement back."""

    #: where the tree sits, for case names: ``tEXt chara``, ``zip card.json``, ``risum main``...
    where: str
    tree: Any
    rebuild: Callable[[Any], bytes]


def _b64_json(value: bytes) -> Any | None:
    try:
        return parse_json(base64.b64decode(value.strip(), validate=True))
    except (binascii.Error, ValueError, BunzaiError):
        return None


def png_payloads(data: bytes) -> Iterator[Payload]:
    pf = png.parse(data)
    chunks = list(pf.chunks)
    for t in png.text_chunks(pf.chunks):
        tree = _b64_json(t.text)
        if tree is None:
            continue

        def rebuild(new: Any, i: int = t.index, kw: str = t.keyword) -> bytes:
            out = list(chunks)
            out[i] = png.make_text_chunk(kw, base64.b64encode(orjson.dumps(new)))
            return png.build(out, pf.trailing)

        yield Payload(f"tEXt {t.keyword}", tree, rebuild)
    for i, c in enumerate(chunks):
        if c.type != b"eXIf":
            continue
        try:
            uc = exif.find_user_comment(c.data)
            text = exif.comment_text(uc) if uc is not None else b""
        except BunzaiError:
            continue
        b64 = not text.startswith(b"{")
        tree = _b64_json(text) if b64 else parse_json(text)
        if tree is None or uc is None:
            continue

        def rebuild_exif(new: Any, i: int = i, c: png.Chunk = c, b64: bool = b64) -> bytes:
            payload = orjson.dumps(new)
            found = exif.find_user_comment(c.data)
            assert found is not None
            value = exif.user_comment_value(base64.b64encode(payload) if b64 else payload)
            out = list(chunks)
            out[i] = png.Chunk(b"eXIf", exif.replace_user_comment(c.data, found, value))
            return png.build(out, pf.trailing)

        yield Payload("eXIf UserComment", tree, rebuild_exif)


def zip_payloads(data: bytes) -> Iterator[Payload]:
    z = archive.open_zip(data)
    members = [(m.name, b"" if m.is_dir else z.read(m.name), m.method) for m in z.members]
    prefix = z.prefix

    def rebuild_with(name: str, new_bytes: bytes) -> bytes:
        return archive.write_zip(
            [archive.ZipMemberSpec(n, new_bytes if n == name else b, meth) for n, b, meth in members],
            prefix=prefix,
        )

    for name, b, _ in members:
        if name.endswith(".json"):
            try:
                tree = parse_json(b)
            except BunzaiError:
                continue
            yield Payload(f"zip {name}", tree, lambda new, name=name: rebuild_with(name, orjson.dumps(new)))
        elif name.endswith(".risum"):
            for p in risum_payloads(b):
                yield Payload(
                    f"zip {name} {p.where}",
                    p.tree,
                    lambda new, name=name, p=p: rebuild_with(name, p.rebuild(new)),
                )


def risum_payloads(data: bytes) -> Iterator[Payload]:
    blocks = risum.read_blocks(data)
    tree = parse_json(blocks.main)
    yield Payload(
        "risum main",
        tree,
        lambda new: risum.write_blocks(orjson.dumps(new), blocks.assets) + blocks.trailing,
    )


def risup_payloads(data: bytes) -> Iterator[Payload]:
    rpacked = risup.sniff_container(data)
    if rpacked is None:
        return
    opened = risup.open_preset(data, rpacked=rpacked)

    def rebuild(new: Any) -> bytes:
        return risup.write_preset(new, rpacked=rpacked, outer=opened.outer, cipher_key=opened.cipher_key)

    yield Payload("risup preset", _plain(opened.preset), rebuild)


def _plain(tree: Any) -> Any:
    """A msgpack tree with Risu's ``undefined`` and bytes swapped for JSON values (for mutation)."""
    if isinstance(tree, dict):
        return {str(k): _plain(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_plain(v) for v in tree]
    if tree is jsformat.UNDEFINED or isinstance(tree, bytes):
        return None
    return tree


def payloads(name: str, data: bytes) -> list[Payload]:
    """Every JSON tree a binary sample's container carries (empty for plain JSON or unknown files)."""
    try:
        if data[:8] == png.PNG_SIGNATURE:
            return list(png_payloads(data))
        if data[:4] == b"PK\x03\x04" or data[:3] == b"\xff\xd8\xff":
            return list(zip_payloads(data))
        if name.endswith(".risum"):
            return list(risum_payloads(data))
        if name.endswith((".risup", ".risupreset")):
            return list(risup_payloads(data))
    except BunzaiError:
        return []
    return []
