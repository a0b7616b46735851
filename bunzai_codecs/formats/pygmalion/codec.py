"""pygmalion: the classic flat character JSON of Pygmalion and oobabooga (2022-2023).

Five keys, no ``spec``/``data`` wrapper: ``char_name``, ``char_persona``, ``char_greeting``,
``world_scenario``, ``example_dialogue`` (some tools add ``name`` and a ``metadata`` stamp). The
same JSON also rides base64 in a PNG ``tEXt`` chunk with keyword ``chara``, like a Tavern card;
the PNG is then the character's picture (the card-image portrait ``ccdefault:``, as for Tavern PNGs).
Export writes the container the source had; ``EmitContext.options["container"]`` (``json``/``png``)
or ``options["image"]`` (PNG bytes) pick a PNG for an entity from elsewhere (see ``_shared/carrier.py``).

``char_persona`` is the character's main definition: SillyTavern imports it as ``description`` and
oobabooga's Tavern import fills it from ``description``, so it maps to ``identity.description``
(the original design also mirrored it into ``persona.personality``, which would send it twice
through any Tavern export). Macros are kept verbatim (``{{char}}``, ``<BOT>``...).

Detection (the original design's rule, score 1.0): not when the object has ``spec`` or ``data``
(a Tavern card), ``kind: "character"`` (Agnai)
or a string ``aiName``/``aiPersona`` (Backyard); then at least two of ``char_persona``,
``char_greeting``, ``world_scenario``, or ``char_name`` with ``char_persona``.
"""

from __future__ import annotations

from typing import Any

import orjson

from bunzai_codecs.core import media, png
from bunzai_codecs.core.codec import JSON_FILE, PNG_FILE, Codec, Coverage, EmitContext, body_as
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.errors import Malformed, Unsupported
from bunzai_codecs.core.overlay import merge3
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.character import CharacterBody
from bunzai_codecs.formats._shared.carrier import card_image_portrait, choose, picture, portrait_resolver
from bunzai_codecs.formats._shared.wire import MapContext
from bunzai_codecs.formats.pygmalion.detect import (
    PNG_KEYWORD,
    png_payload,
)
from bunzai_codecs.formats.tavern.png import encode_payload

_TEXT_KEYS = ("char_name", "name", "char_persona", "char_greeting", "world_scenario", "example_dialogue")


def body_from_native(tree: dict[str, Any], r: MapContext) -> dict[str, Any]:
    """The canonical character of a classic character object, its text keys read by ``r`` (the
    context of the object)."""
    t = {k: r.text(tree.get(k), (k,)) for k in _TEXT_KEYS}
    name = t["char_name"] if t["char_name"] is not None else t["name"] or ""
    return {
        "identity": {"name": name, "description": t["char_persona"] or None},
        "persona": {"scenario": t["world_scenario"] or None},
        "greetings": {"firstMessage": t["char_greeting"] or None},
        "examples": {"exampleMessages": t["example_dialogue"] or None},
    }


def mapped_native(body: CharacterBody, *, with_name: bool = False) -> dict[str, Any]:
    """The five keys (and ``name`` when the source had it) for a canonical body."""
    out = {
        "char_name": body.identity.name,
        "char_persona": body.identity.description or "",
        "char_greeting": body.greetings.firstMessage or "",
        "world_scenario": body.persona.scenario or "",
        "example_dialogue": body.examples.exampleMessages or "",
    }
    if with_name:
        out["name"] = body.identity.name
    return out


class PygmalionCodec(Codec):
    id = "pygmalion"
    containers = (JSON_FILE, PNG_FILE)
    coverage = Coverage.of(
        "identity.name",
        "identity.description",
        "persona.scenario",
        "greetings.firstMessage",
        "examples.exampleMessages",
        *media.PORTRAIT_BYTES,
        notes=[
            "`char_persona` is `identity.description` (as SillyTavern and oobabooga read it);"
            " `persona.personality` has no slot",
            "`name` is written only when the source had it; `metadata` rides in escrow",
            "the PNG container's picture is the portrait (`ccdefault:`): a character with a portrait image"
            " is written as a PNG (`chara` chunk; a portrait that is not a PNG is re-encoded, keeping the"
            " pixels), one without as JSON; other images have no place",
        ],
    )

    def decode(self, s: Sniff) -> Decoded:
        container = "json"
        if s.is_png:
            pf = s.require_png()
            chunk = s.png_text(PNG_KEYWORD)
            if chunk is None:
                raise Malformed("PNG has no chara text chunk", offset=8)
            tree = png_payload(chunk.text, pf.chunks[chunk.index].offset)
            container = "png"
        else:
            tree = s.require_json()
        if not isinstance(tree, dict):
            raise Malformed("a Pygmalion character is a JSON object", path="$")
        escrow: dict[str, Any] = {"container": container}
        r = MapContext()
        body = body_from_native(tree, r)
        resolve = None
        if container == "png":
            escrow["blobs"] = {"png": s.data}
            body["media"] = {"portrait": card_image_portrait()}  # the PNG is the picture
            resolve = portrait_resolver(picture(s.data, (PNG_KEYWORD,), parsed=s.png))
        return Decoded([self.entity(s, body, raw=tree, media=resolve, warnings=r.warnings, **escrow)])

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        body = body_as(entity, CharacterBody)
        twin = entity.twin(self.id)
        raw = twin.raw if twin else None
        if isinstance(raw, dict):
            with_name = "name" in raw
            base = mapped_native(
                CharacterBody.model_validate(body_from_native(raw, MapContext())), with_name=with_name
            )
            tree = merge3(raw, base, mapped_native(body, with_name=with_name))
        else:
            twin, tree = None, mapped_native(body)
        want = ctx.options.get("container") or (twin.container if twin else None)
        if want is None:
            has_image = media.bytes_of(entity.media, body.media.portrait) is not None
            want = "png" if has_image or ctx.options.get("image") is not None else "json"
        if want not in ("json", "png"):
            raise Unsupported(f"pygmalion writes json or png containers, not {want!r}")
        if want == "json":
            return orjson.dumps(tree, option=orjson.OPT_INDENT_2)
        carrier = choose(entity, ctx, twin_png=twin.blob("png") if twin else None, strip=(PNG_KEYWORD,))
        if carrier.source == "twin" and tree is raw:
            return carrier.image
        chunk = png.make_text_chunk(PNG_KEYWORD, encode_payload(tree))
        return png.replace_text(carrier.image, remove={PNG_KEYWORD}, add=[chunk])
