"""The helpers every test shares: a bundled sample, an edited entity, PNG chunks built and read
independently of bunzai (struct and zlib only)."""

from __future__ import annotations

import base64
import copy
import dataclasses
import json
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bunzai_codecs.core.entity import CanonicalEntity

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def sample(rel: str) -> bytes:
    """The bytes of ``samples/<rel>`` (e.g. ``sample("sillytavern/tidepool.png")``); a card folder
    (``card-folder/marlow``) and a character YAML with its picture beside it read as the one input
    they are (``bunzai_codecs.inputs``)."""
    from bunzai_codecs.inputs import walk

    p = SAMPLES / rel
    if p.is_dir():
        (inp,) = walk(p)
        return inp.read()
    return next(i for i in walk(p.parent) if i.path == p).read()


def inputs_below(root: Path, skip: tuple[str, ...] = (".md", ".tsv")) -> list[tuple[Path, str, bytes]]:
    """``(path, name, bytes)`` of every input below ``root`` as bunzai reads a folder
    (``bunzai_codecs.inputs.walk``): a card folder, and a character YAML with its picture, are one
    input each. Files ending in ``skip`` (notes, the corpus's EXPECT.tsv) are left out."""
    from bunzai_codecs.inputs import walk

    return [(i.path, i.name, i.read()) for i in walk(root) if i.folder or i.path.suffix not in skip]


def edited(
    entity: CanonicalEntity, change: Callable[[dict[str, Any]], object] | None = None, /, **sections: Any
) -> CanonicalEntity:
    """A copy of ``entity`` as an editor leaves it: the body's JSON form goes through ``change`` (it
    mutates the dict in place: ``lambda b: b["entries"].pop(0)``), then ``sections`` (a dict value
    updates the section's dict, anything else replaces it: ``edited(e, identity={"name": "Ren"})``),
    and is validated back. The escrow twin and source are kept, so a codec writes an edit of the
    file it read; the links are copied."""
    tree = entity.body.dump()
    if change is not None:
        change(tree)
    for section, value in sections.items():
        if isinstance(value, dict) and isinstance(tree.get(section), dict):
            tree[section].update(value)
        else:
            tree[section] = value
    return dataclasses.replace(
        entity, body=type(entity.body).model_validate(tree), links=copy.deepcopy(entity.links)
    )


def chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """(type, data) of every PNG chunk, read with struct only."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    out, pos = [], 8
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        ctype, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + n]
        assert struct.unpack(">I", data[pos + 8 + n : pos + 12 + n])[0] == zlib.crc32(ctype + body)
        out.append((ctype, body))
        pos += 12 + n
        if ctype == b"IEND":
            break
    return out


def text_json(data: bytes, keyword: str) -> Any:
    """The base64 JSON of a tEXt chunk, read without bunzai."""
    for ctype, body in chunks(data):
        if ctype == b"tEXt":
            k, v = body.split(b"\0", 1)
            if k.decode("latin-1").lower() == keyword:
                return json.loads(base64.b64decode(v))
    raise AssertionError(f"no {keyword} chunk")


def png_chunk(ctype: bytes, data: bytes) -> bytes:
    """One PNG chunk: length, type, data, CRC."""
    return struct.pack(">I", len(data)) + ctype + data + struct.pack(">I", zlib.crc32(ctype + data))


def tiny_png(*extra: bytes, after_ihdr: bytes = b"") -> bytes:
    ihdr = png_chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0))
    idat = png_chunk(b"IDAT", zlib.compress(b"\0\0\0\0\0"))
    return b"\x89PNG\r\n\x1a\n" + ihdr + after_ihdr + idat + b"".join(extra) + png_chunk(b"IEND", b"")


def text_chunk(keyword: str, value: bytes) -> bytes:
    return png_chunk(b"tEXt", keyword.encode("latin-1") + b"\0" + value)


def covered_losses(before: Any, after: Any, codec_id: str) -> list[str]:
    """Differences between two bodies on the paths ``codec_id`` declares it carries (the fidelity
    rule: a loss the target's coverage does not predict is a bug). Given two entities, their media
    are compared by their bytes (``fidelity.body_losses``)."""
    from bunzai_codecs.core import registry
    from bunzai_codecs.core.diff import diff

    cov = registry.get(codec_id).coverage
    if isinstance(before, CanonicalEntity):
        from bunzai_codecs.fidelity import body_losses

        lost, changed, _added = body_losses(before, after, cov)
        return [
            f"{group}: {x.at}"
            for group, xs in (("lost", lost), ("changed", changed))
            for x in xs
            if x.cls == "unexpected"
        ]
    return [str(c) for c in diff(before.dump(), after.dump(), empty_is_absent=True) if cov.covers(c.path)]
