"""backyard: the legacy Backyard.ai / Faraday character PNG (before BYAF).

The character rides in the PNG's ``eXIf`` chunk, not a text chunk: EXIF ``UserComment`` =
``ASCII\\0\\0\\0`` + JSON ``{"character": {...}, "version": 1..4}``, raw in versions 1-2 and base64
in version 4 (Backyard's exporter runs exiftool with a base64 comment). ``basePrompt`` is the system
prompt, ``customDialogue`` the example chat with ``#{user}:`` / ``#{character}:`` turns, and the
placeholders are single-brace. Samplers, ``model``, ``grammar``, ``promptTemplate``, ``isNSFW``,
ids and the ``Chat`` history ride in the escrow twin; ``loreItems`` become a linked lorebook.

Same-format export returns the input bytes when nothing changed, else rewrites only the
UserComment inside the eXIf chunk (same raw/base64 encoding) and keeps every other chunk and EXIF
byte. The PNG is the character's picture: the body gets the card-image portrait (``ccdefault:``,
as ``sillytavern`` does for its PNG cards). A fresh export writes a version-4 character into a
minimal EXIF block on the image ``_shared/carrier.py`` picks (the caller's ``options["image"]``, an
inline PNG portrait, the PNG of the card the entity was read from, or a 1x1 placeholder).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any, cast

import orjson

from bunzai_codecs.core import media, png
from bunzai_codecs.core.codec import PNG_FILE, Codec, Coverage, EmitContext
from bunzai_codecs.core.entity import KNOWLEDGE_REFS, CanonicalEntity, Decoded
from bunzai_codecs.core.errors import BunzaiError, Malformed
from bunzai_codecs.core.escrow import Twin, facet
from bunzai_codecs.core.overlay import merge3
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.character import CharacterBody
from bunzai_codecs.entities.lorebook import LorebookBody
from bunzai_codecs.formats._shared.carrier import card_image_portrait, choose, picture, portrait_resolver
from bunzai_codecs.formats._shared.wire import MapContext
from bunzai_codecs.formats.backyard import common, exif
from bunzai_codecs.formats.backyard.detect import (
    EXIF_CHUNK,
    exif_chunk,
    parse_payload,
    read_comment,
)

#: what a fresh export writes for the keys no canonical field maps (Backyard's own defaults)
_FRESH_CHARACTER: dict[str, Any] = {
    "model": "",
    "temperature": 0.8,
    "topK": 30,
    "topP": 0.9,
    "minP": 0.1,
    "minPEnabled": True,
    "repeatPenalty": 1.05,
    "repeatLastN": 256,
    "promptTemplate": None,
    "canDeleteCustomDialogue": False,
    "grammar": None,
    "isNSFW": False,
    "loreItems": [],
    "Chat": [],
}
FRESH_VERSION = 4


# -- the payload -----------------------------------------------------------------------------


# -- native <-> canonical ----------------------------------------------------------------------


def body_from_native(tree: dict[str, Any], r: MapContext) -> dict[str, Any]:
    """The canonical character of a ``{character, version}`` export (``r``: the context of its
    ``character`` object)."""
    c = tree["character"]

    def text(key: str) -> str:
        return r.text(c.get(key), (key,), "")

    display = text("aiDisplayName")
    short = r.text(c.get("aiName"), ("aiName",))
    name = display or short or ""
    return {
        "identity": {
            "name": name,
            "nickname": short if short is not None and short != name else None,
            "description": common.opt_text(common.from_backyard(text("aiPersona"))),
        },
        "persona": {"scenario": common.opt_text(common.from_backyard(text("scenario")))},
        "prompts": {"systemPrompt": common.opt_text(common.from_backyard(text("basePrompt")))},
        "greetings": {"firstMessage": common.opt_text(common.from_backyard(text("firstMessage")))},
        "examples": {
            "exampleMessages": common.opt_text(common.dialogue_from_backyard(text("customDialogue")))
        },
        "attribution": {
            "createdAt": common.card_date(c.get("createdAt")),
            "updatedAt": common.card_date(c.get("updatedAt")),
        },
        # the PNG the export lives in is the character's picture
        "media": {"portrait": card_image_portrait()},
    }


def mapped_native(body: CharacterBody) -> dict[str, Any]:
    """The keys of a ``{character}`` export the canonical body decides (and nothing else)."""
    ident = body.identity
    first = body.greetings.firstMessage
    return {
        "character": {
            "aiDisplayName": ident.name,
            "aiName": ident.nickname if ident.nickname is not None else ident.name,
            "aiPersona": common.to_backyard(ident.description or ""),
            "basePrompt": common.to_backyard(body.prompts.systemPrompt or ""),
            "scenario": common.to_backyard(body.persona.scenario or ""),
            "firstMessage": None if first is None else common.to_backyard(first),
            "customDialogue": common.dialogue_to_backyard(body.examples.exampleMessages or ""),
            "createdAt": common.unix_to_iso(body.attribution.createdAt),
            "updatedAt": common.unix_to_iso(body.attribution.updatedAt),
        }
    }


def fresh_native(entity: CanonicalEntity) -> dict[str, Any]:
    """A complete version-4 export for a body that did not come from this format."""
    mapped = mapped_native(cast(CharacterBody, entity.body))["character"]
    char_id = "c" + entity.id.rsplit("-", 1)[-1][:24]
    return {"character": {"id": char_id, **mapped, **_FRESH_CHARACTER}, "version": FRESH_VERSION}


# -- the carrier image -----------------------------------------------------------------------


def with_exif(carrier: bytes, block: bytes) -> bytes:
    """``carrier`` with its eXIf chunks replaced by one holding ``block``, right after IHDR."""
    pf = png.parse(carrier, skip_crc=png.IMAGE_DATA)
    chunks = [c for c in pf.chunks if c.type != EXIF_CHUNK]
    chunks.insert(1, png.Chunk(EXIF_CHUNK, block))
    return png.build(chunks, pf.trailing)


# -- the codec -------------------------------------------------------------------------------


@dataclass(eq=False)
class ExifTwin(Twin):
    """A Backyard PNG's escrow: the file (``blobs.png``) and how its EXIF ``UserComment`` held the
    JSON (``encoding``: ``raw`` or ``base64``)."""

    encoding: str | None = facet(str)


class BackyardCodec(Codec):
    id = "backyard"
    twin_type = ExifTwin
    containers = (PNG_FILE,)
    coverage = Coverage.of(
        *common.CHARACTER_PATHS,
        *media.PORTRAIT_BYTES,
        notes=[
            "`aiName` is `identity.nickname` when it differs from `aiDisplayName`",
            "placeholders `{character}`/`{char}`/`{user}` become `{{char}}`/`{{user}}` and back",
            "example dialogue `#{user}:` turn markers become `{{user}}:` lines and back",
            "dates are written with millisecond precision",
            "samplers, `model`, `grammar`, `promptTemplate`, `isNSFW`, ids and the `Chat` history: escrow only",
            "`loreItems` are a linked lorebook (keywords, text); other entry settings are not kept",
            "the PNG (without its eXIf chunk) is the portrait (`ccdefault:`); a fresh export is written into"
            " the caller's image, else the portrait (re-encoded to PNG when it is not one: the pixels are"
            " kept), else a default portrait; other images have no place",
        ],
    )

    def decode(self, s: Sniff) -> Decoded:
        pf = s.require_png()
        chunk = exif_chunk(pf)
        if chunk is None:
            raise Malformed("PNG has no eXIf chunk: not a Backyard character", offset=8)
        found = read_comment(chunk)
        if found is None:
            raise Malformed("the eXIf chunk has no EXIF UserComment", offset=chunk.offset)
        try:
            tree, encoding = parse_payload(found[1])
        except BunzaiError as exc:
            if exc.offset is None:
                exc.offset = chunk.offset
            raise
        if not isinstance(tree, dict):
            raise Malformed("the EXIF UserComment JSON is not an object", path="$")
        if not isinstance(tree.get("character"), dict):
            raise Malformed("the export has no character object", path="$.character")
        r = MapContext("$.character")
        lore = common.opt_array(r, tree["character"], "loreItems")
        image = picture(s.data, strip_types=(EXIF_CHUNK,), parsed=pf)
        primary = self.entity(
            s,
            body_from_native(tree, r),
            raw=tree,
            media=portrait_resolver(image),
            warnings=r.warnings,
            encoding=encoding,
            blobs={"png": s.data},
        )
        entities = [primary]
        if lore:
            book = common.lore_book(self, s, lore, "$.character.loreItems")
            primary.links = {KNOWLEDGE_REFS: [book.id]}
            entities.append(book)
        return Decoded(entities)

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        body = cast(CharacterBody, entity.body)
        twin = entity.twin(self.id)
        raw = twin.raw if twin else None
        if not (isinstance(raw, dict) and isinstance(raw.get("character"), dict)):
            tree = fresh_native(entity)
            tree["character"]["loreItems"] = self._lore(entity, ctx, [])
            value = exif.user_comment_value(base64.b64encode(orjson.dumps(tree)))
            carrier = choose(entity, ctx, strip_types=(EXIF_CHUNK,))
            return with_exif(carrier.image, exif.build_exif(value))

        base = mapped_native(CharacterBody.model_validate(body_from_native(raw, MapContext())))
        merged = merge3(raw, base, mapped_native(body))
        char = merged["character"]
        lore = self._lore(entity, ctx, raw["character"].get("loreItems", []))
        if "loreItems" in char or lore:
            merged = {**merged, "character": {**char, "loreItems": lore}}
        source = twin.blob("png") if twin else None
        carrier = choose(entity, ctx, twin_png=source, strip_types=(EXIF_CHUNK,))
        if merged == raw and carrier.source == "twin":
            return carrier.image
        payload = orjson.dumps(merged)
        if isinstance(twin, ExifTwin) and twin.encoding == "base64":
            payload = base64.b64encode(payload)
        value = exif.user_comment_value(payload)
        if carrier.source != "twin" or source is None:
            return with_exif(carrier.image, exif.build_exif(value))
        pf = png.parse(source, skip_crc=png.IMAGE_DATA)
        chunks = list(pf.chunks)
        for i, c in enumerate(chunks):
            if c.type == EXIF_CHUNK:
                uc = exif.find_user_comment(c.data)
                block = exif.build_exif(value) if uc is None else exif.replace_user_comment(c.data, uc, value)
                chunks[i] = png.Chunk(EXIF_CHUNK, block)
                break
        return png.build(chunks, pf.trailing)

    def _lore(self, entity: CanonicalEntity, ctx: EmitContext, kept: Any) -> list[Any]:
        """The ``loreItems`` to write: the linked lorebook re-embedded, else the twin's copy."""
        return common.lore_to_write(self.id, entity, ctx, kept, _items_with_ids, list_key=common.item_id)


def _items_with_ids(book: LorebookBody) -> list[dict[str, Any]]:
    return common.book_to_lore_items(book, with_ids=True)


__all__ = ["BackyardCodec"]
