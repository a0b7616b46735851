"""Builds the binary RoleCall samples from the JSON samples beside them (run from the project root:
``python tests/formats/rolecall/make_rolecall_samples.py``). Deterministic: the same bytes every run.

- ``samples/rolecall/wren.rolecall-flat.png``: RoleCall's own PNG export — the card's bare V2
  ``data`` object (no ``{spec, data}`` wrapper), base64 in a ``chara`` tEXt chunk.
- ``samples/rolecall/mira.rcpersona.png``: a ``rolecall_persona`` file, base64 in an ``rcpersona``
  tEXt chunk.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path

from bunzai_codecs.core import png

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples" / "rolecall"


def tiny_png(*text: png.Chunk, rgb: tuple[int, int, int] = (36, 66, 94)) -> bytes:
    """A 2x2 RGB image with ``text`` chunks before IEND."""
    rows = b"".join(b"\0" + bytes(rgb * 2) for _ in range(2))
    chunks = [
        png.Chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)),
        png.Chunk(b"IDAT", zlib.compress(rows, 9)),
        *text,
        png.Chunk(b"IEND", b""),
    ]
    return png.build(chunks)


def b64(tree: object) -> bytes:
    return base64.b64encode(json.dumps(tree, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def flat_card() -> bytes:
    card = json.loads((SAMPLES / "wren.rolecall.v3.json").read_text(encoding="utf-8"))
    data = dict(card["data"])
    for v3_only in ("assets", "group_only_greetings", "creation_date", "modification_date", "source"):
        data.pop(v3_only)
    return tiny_png(png.make_text_chunk("chara", b64(data)))


def rcpersona_png() -> bytes:
    persona = json.loads((SAMPLES / "mira.rolecall-persona.json").read_text(encoding="utf-8"))
    return tiny_png(png.make_text_chunk("rcpersona", b64(persona)), rgb=(107, 79, 42))


if __name__ == "__main__":
    (SAMPLES / "wren.rolecall-flat.png").write_bytes(flat_card())
    (SAMPLES / "mira.rcpersona.png").write_bytes(rcpersona_png())
