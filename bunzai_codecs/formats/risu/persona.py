"""``risu-persona``: a RisuAI persona export — a PNG whose tEXt ``persona`` chunk is
base64(UTF-8 JSON ``{name, personaPrompt, note}``) (docs/formats/risu.md#persona-risu-persona).

Field map: ``name`` -> name, ``personaPrompt`` -> content, ``note`` -> brief; the image is the
persona portrait (its bytes stay in the twin's blobs; ``media.portrait`` says ``image/png``);
``attribution.source`` is stamped ``risu``. Risu's import needs ``name`` and ``personaPrompt``.

Encode: the source PNG with only the ``persona`` chunk replaced (every other chunk byte for byte);
without a twin, a 1x1 PNG carries the chunk (a portrait given as a ``data:image/png`` URI is used
instead when present).
"""

from __future__ import annotations

import base64
import binascii
import struct
import zlib
from typing import Any

import orjson

from bunzai_codecs.core import media, png
from bunzai_codecs.core.codec import PNG_FILE, Codec, Coverage, EmitContext
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.core.sniff import Sniff, parse_json
from bunzai_codecs.entities.persona import PersonaBody
from bunzai_codecs.formats._shared.carrier import PORTRAIT, choose, picture
from bunzai_codecs.formats._shared.wire import wrong
from bunzai_codecs.formats.risu.detect import KEYWORD

PORTRAIT_REF = "png:image"


def blank_png() -> bytes:
    """A valid 1x1 opaque white PNG (for a persona that has no image of its own)."""
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00\xff\xff\xff", 9)
    return png.build([png.Chunk(b"IHDR", ihdr), png.Chunk(b"IDAT", idat), png.Chunk(b"IEND", b"")])


def to_native(body: PersonaBody) -> dict[str, Any]:
    return {"name": body.name, "personaPrompt": body.content, "note": body.brief or ""}


def persona_body(tree: dict[str, Any]) -> dict[str, Any]:
    for key in ("name", "personaPrompt"):
        if not isinstance(tree.get(key), str):
            raise wrong(f"$.{key}", "a string", tree.get(key))
    note = tree.get("note")
    if note is not None and not isinstance(note, str):
        raise wrong("$.note", "a string", note)
    body: dict[str, Any] = {
        "name": tree["name"],
        "content": tree["personaPrompt"],
        "media": {"portrait": {"role": "portrait", "ref": PORTRAIT_REF, "mime": "image/png"}},
        "attribution": {"source": "risu"},
    }
    if note:
        body["brief"] = note
    return body


class RisuPersonaCodec(Codec):
    id = "risu-persona"
    containers = (PNG_FILE,)
    coverage = Coverage.of(
        "name",
        "content",
        "brief",
        *media.PORTRAIT_BYTES,
        notes=[
            "the persona image is the PNG itself (read back as the ref png:image): the portrait's bytes,"
            " re-encoded to PNG when they are not one (the pixels are kept), else a default portrait",
            "attribution.source is always read as risu (the file does not say where the persona came from)",
            "no placement, sections or lorebook link",
        ],
    )

    def decode(self, s: Sniff) -> Decoded:
        s.require_png()
        chunk = s.png_text(KEYWORD)
        if chunk is None:
            raise Malformed("PNG has no persona text chunk", path="persona")
        try:
            text = base64.b64decode(chunk.text.strip(), validate=False)
        except (binascii.Error, ValueError):
            raise Malformed("persona chunk is not base64", path="persona") from None
        tree = parse_json(text, what="persona JSON")
        if not isinstance(tree, dict):
            raise wrong("$", "an object", tree)
        body = persona_body(tree)
        image = picture(s.data, (KEYWORD,), parsed=s.png)
        return Decoded(
            [
                self.entity(
                    s,
                    body,
                    raw=tree,
                    media=lambda path, _a: image if path == PORTRAIT else None,
                    blobs={"png": s.data},
                )
            ]
        )

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        from bunzai_codecs.core.overlay import merge3

        body = entity.body
        assert isinstance(body, PersonaBody)
        twin = entity.twin(self.id)
        raw = twin.raw if twin else None
        image = twin.blob("png") if twin else None
        if isinstance(raw, dict):
            base = PersonaBody.model_validate(persona_body(raw))
            tree = merge3(raw, to_native(base), to_native(body))
        else:
            tree = to_native(body)
        carrier = choose(entity, ctx, twin_png=image if isinstance(image, bytes) else None, strip=(KEYWORD,))
        if carrier.source == "twin" and tree is raw:
            return carrier.image  # unedited: the file itself
        payload = base64.b64encode(orjson.dumps(tree))
        return png.replace_text(carrier.image, remove=[KEYWORD], add=[png.make_text_chunk(KEYWORD, payload)])
