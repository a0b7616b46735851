"""marinara-character: Marinara-Engine's native character export (docs/canonical-model.md#characterbody, docs/formats/marinara.md#character).

``{type: "marinara_character", version: 1, exportedAt, data: {spec: "chara_card_v2", spec_version:
"2.0", data, avatar?, sprites?, gallery?, metadata: {createdAt, updatedAt, comment}}}``. The seed
has no such codec (it read Marinara characters as plain Tavern cards); real Marinara writes this
envelope, so it gets its own codec, scoring 1.0 on the ``type`` tag (its row's ``CardDetector``
scores the file with ``marinara/detect.py::character``). That codec is a ``TavernCard``
(``formats/tavern/card.py``) declaring only its dialect and its envelope (:class:`MarinaraEnvelope`,
a ``CardEnvelope``): detection, the card mapping, the linked book and scripts and the overlay on
the twin are the lineage's.

``data.data`` is a Tavern CCv2 ``data`` object and maps through the shared Tavern mapper
(``tavern/fields.py``); Marinara's own keys live **flat** in ``data.extensions``. One of them has a
canonical home and is read through the mapper's dialect hook: ``appearance`` ->
``persona.appearance``. The rest (``backstory``, ``rpgStats``, ``nameColor``, ``dialogueColor``,
``boxColor``, ``avatarCrop``, ``trackerCardColors`` — a JSON string, unlike ``avatarCrop`` —,
``conversationStatus``, ``convoBehavior``, ``importMetadata``...) stay verbatim in
``body.extensions``, the canonical bag for unclaimed extension keys.

The envelope around the card: ``avatar`` (a data URL) is ``media.portrait``, ``sprites[]``
(``{filename, data}``) are ``media.assets`` (role ``emotion``), ``metadata.createdAt``/``updatedAt``
(ISO) are ``attribution.createdAt``/``updatedAt`` (unix seconds); ``gallery`` and
``metadata.comment`` ride the escrow twin. An embedded ``character_book`` and
``extensions.regex_scripts`` become linked lorebook and regex entities, as for any Tavern card.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from bunzai_codecs.core import media
from bunzai_codecs.core.codec import Container, Coverage, EmitContext
from bunzai_codecs.core.errors import NotRecognized
from bunzai_codecs.entities import CharacterBody, MediaAsset
from bunzai_codecs.formats._shared.wire import MapContext, iso_to_seconds, utc_from_us, wrong
from bunzai_codecs.formats.marinara._rows import EPOCH
from bunzai_codecs.formats.marinara.detect import CHARACTER_TYPE as TYPE
from bunzai_codecs.formats.tavern.card import CardEnvelope, CardWriter, TavernCard
from bunzai_codecs.formats.tavern.fields import (
    TAVERN_COVERAGE,
    TAVERN_EMBEDDED,
    V2_SHAPE,
    TavernDialect,
    default_portrait,
)


class MarinaraDialect(TavernDialect):
    """Marinara's flat ``data.extensions`` keys that have a canonical home: ``appearance``."""

    name = "marinara"
    claims = frozenset({"appearance"})

    def read(self, data: Mapping[str, Any], body: dict[str, Any], ctx: MapContext) -> None:
        ext = data.get("extensions")
        if not isinstance(ext, dict) or ext.get("appearance") is None:
            return
        v = ext["appearance"]
        if not isinstance(v, str):
            raise wrong(ctx.at("extensions", "appearance"), "a string", v)
        if v:
            body["persona"]["appearance"] = v

    def write(self, body: CharacterBody, data: dict[str, Any]) -> None:
        if body.persona.appearance:
            data.setdefault("extensions", {})["appearance"] = body.persona.appearance


# -- dates -------------------------------------------------------------------------------------


def seconds_to_iso(v: int | float) -> str | None:
    """Unix seconds as Marinara writes dates (``toISOString``: UTC, milliseconds, ``Z``); ``None``
    for a number no date holds (the date is left out: the fidelity report names it)."""
    us = round(v * 1_000_000)
    t = utc_from_us(us)
    if t is None:
        return None
    frac = f"{us % 1_000_000 // 1000:03d}" if us % 1000 == 0 else f"{us % 1_000_000:06d}"
    return t.strftime("%Y-%m-%dT%H:%M:%S") + f".{frac}Z"


# -- the envelope around the card --------------------------------------------------------------


def _data_url_mime(ref: str) -> str | None:
    if not ref.startswith("data:"):
        return None
    mime = ref[5:].split(";", 1)[0].split(",", 1)[0]
    return mime or None


def _asset(role: str, ref: str, name: str | None) -> dict[str, Any]:
    a: dict[str, Any] = {"role": role, "ref": ref}
    if name is not None:
        a["name"] = name
    mime = _data_url_mime(ref)
    if mime:
        a["mime"] = mime
    return a


def _card(t: Any) -> dict[str, Any]:
    if not isinstance(t, dict):
        raise wrong("$", "a character export object", t)
    if t.get("type") != TYPE:
        raise NotRecognized(f'not a Marinara character export: expected type "{TYPE}"')
    card = t.get("data")
    if not isinstance(card, dict):
        raise wrong("$.data", "the character card object", card)
    if not isinstance(card.get("data"), dict):
        raise wrong("$.data.data", "the card's data object", card.get("data"))
    return card


def _has_dates(inner: Mapping[str, Any]) -> bool:
    return "creation_date" in inner or "modification_date" in inner


class MarinaraEnvelope(CardEnvelope):
    """``{type: "marinara_character", version, exportedAt, data: <V2 card + avatar, sprites,
    gallery, metadata>}``: the card is ``data``; its images and dates live beside it in ``data``
    unless the card itself holds CCv3 ``assets`` / Tavern dates (see the module docstring)."""

    at = ("data",)
    shape = V2_SHAPE

    def card(self, tree: Any) -> dict[str, Any]:
        return _card(tree)

    def read(self, tree: dict[str, Any], body: dict[str, Any], ctx: MapContext) -> None:
        card = tree["data"]
        inner = card["data"]
        if "assets" not in inner:
            # a Marinara card keeps its images in the envelope, not in CCv3 `assets`: no assets is
            # not CCv3's default icon here
            media: dict[str, Any] = {}
            avatar = card.get("avatar")
            if avatar is not None:
                if not isinstance(avatar, str):
                    raise wrong(ctx.at("data", "avatar"), "a data URL string", avatar)
                if avatar:
                    media["portrait"] = _asset("portrait", avatar, None)
            sprites = card.get("sprites")
            if sprites is not None:
                if not isinstance(sprites, list):
                    raise wrong(ctx.at("data", "sprites"), "an array of sprites", sprites)
                assets = []
                for i, sp in enumerate(sprites):
                    if not isinstance(sp, dict):
                        raise wrong(ctx.at("data", "sprites", i), "a sprite object", sp)
                    ref, name = sp.get("data"), sp.get("filename")
                    if not isinstance(ref, str):
                        raise wrong(ctx.at("data", "sprites", i, "data"), "a data URL string", ref)
                    if name is not None and not isinstance(name, str):
                        raise wrong(ctx.at("data", "sprites", i, "filename"), "a string", name)
                    assets.append(_asset("emotion", ref, name))
                media["assets"] = assets
            body["media"] = media
        if not _has_dates(inner):
            meta = card.get("metadata")
            if meta is not None and not isinstance(meta, dict):
                raise wrong(ctx.at("data", "metadata"), "an object", meta)
            for key in ("createdAt", "updatedAt"):
                raw = meta.get(key) if meta else None
                secs = iso_to_seconds(raw)
                if secs is not None:
                    body["attribution"][key] = secs
                elif raw is not None:
                    ctx.warn(f"data.metadata.{key} {raw!r} is not an ISO date: kept in the twin only")

    def write(
        self, body: CharacterBody, card_of: CardWriter, twin: dict[str, Any] | None, ctx: EmitContext | None
    ) -> dict[str, Any]:
        inner = _card(twin)["data"] if twin is not None else None
        card_has_assets = inner is not None and "assets" in inner
        card_has_dates = inner is not None and _has_dates(inner)
        update: dict[str, Any] = {}
        if not card_has_assets:
            update["media"] = body.media.model_copy(
                update={"portrait": MediaAsset.model_validate(default_portrait()), "assets": None}
            )
        if not card_has_dates:
            update["attribution"] = body.attribution.model_copy(update={"createdAt": None, "updatedAt": None})
        card = card_of(body.model_copy(update=update) if update else body)
        if not card_has_assets:
            portrait = body.media.portrait
            if portrait is not None and portrait.ref.startswith("data:"):
                card["avatar"] = portrait.ref
            sprites = [
                {"filename": a.name if a.name is not None else f"sprite-{i}", "data": a.ref}
                for i, a in enumerate(body.media.assets or [])
                if a.ref.startswith("data:")
            ]
            if sprites:
                card["sprites"] = sprites
        if not card_has_dates:
            meta = {}
            att = body.attribution
            for key in ("createdAt", "updatedAt"):
                seconds = getattr(att, key)
                iso = None if seconds is None else seconds_to_iso(seconds)
                if iso is not None:
                    meta[key] = iso
            if meta:
                card["metadata"] = meta
        exported = ctx.options.get("exportedAt", EPOCH) if ctx is not None else EPOCH
        return {"type": TYPE, "version": 1, "exportedAt": exported, "data": card}


class MarinaraCharacterCodec(TavernCard):
    """Marinara's character export: a Tavern V2 card in the :class:`MarinaraEnvelope`, read and
    written by :class:`TavernCard` with Marinara's dialect alone (its pictures live in the envelope,
    so the Chub media lens does not apply; it writes no Agnai keys)."""

    id = "marinara-character"
    #: one JSON container (the default one the extension names)
    containers: ClassVar[tuple[Container, ...]] = ()
    dialect = MarinaraDialect()
    dialects: ClassVar[tuple[TavernDialect, ...]] = (dialect,)
    envelope = MarinaraEnvelope()
    # the card inside holds what a Tavern card holds, but its pictures live in the envelope (below)
    coverage = Coverage(
        frozenset(p for p in TAVERN_COVERAGE.paths if not p.startswith("media.")),
        tuple(n for n in TAVERN_COVERAGE.notes if not n.startswith("media asset")),
    ) | Coverage.of(
        "persona.appearance",
        *media.PORTRAIT_BYTES,
        *media.ASSET_BYTES,
        notes=[
            "Marinara's flat data.extensions keys other than appearance (backstory, rpgStats, "
            "colours, avatarCrop, trackerCardColors, conversationStatus...) are kept verbatim in extensions",
            "images are data URLs: the envelope's avatar is the portrait (its bytes are kept; read back"
            " with role portrait, without name or primary) and sprites are the other images (bytes kept;"
            " read back with role emotion, named by file name); an image known only by a web URL or a"
            " path (no bytes) is not written",
            "gallery and metadata.comment ride the escrow twin",
            "a linked lorebook is embedded as the card's character_book and linked regex sets as its "
            "extensions.regex_scripts (one array), holding what those hold, not what a Marinara "
            "lorebook or regex file holds",
        ],
    )
    embedded_coverage = TAVERN_EMBEDDED
