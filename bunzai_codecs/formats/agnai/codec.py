"""``agnai``: Agnai's native character JSON (the "Agnaistic" export: the stored document minus
``_id``, pretty-printed with two spaces).

Agnai is not Tavern-lineage: its persona is structured (``{kind, attributes}``), its ``description``
is creator notes, and it carries TTS voice, a sprite recipe, image-prompt affixes, a response schema
and one fixed-depth ``insert``. Its lore comes inline as ``characterBook``, an Agnai MemoryBook (not
a CCv2 ``character_book``), decoded into a linked lorebook through the same mapper as the standalone
``agnai-lorebook`` codec and re-embedded on export.

Same-format export overlays the body on the escrow twin (``core/overlay.merge3``), so ``_id``,
``userId``, ``favorite``, ``folder``, unmapped image sampler keys and anything Agnai adds later come
back untouched; ``imageSettings`` is reconciled per key so its sampler knobs survive even when the
twin had no affixes. Field map: docs/formats/agnai.md#field-map.
"""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import ValidationError

from bunzai_codecs.core import media
from bunzai_codecs.core.codec import Codec, Coverage, EmitContext
from bunzai_codecs.core.entity import KNOWLEDGE_REFS, CanonicalEntity, Decoded
from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.core.overlay import merge3
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.character import CharacterBody
from bunzai_codecs.entities.lorebook import LorebookBody
from bunzai_codecs.formats._shared.links import DROP, keep_or_drop
from bunzai_codecs.formats._shared.wire import MapContext, iso_to_seconds, num_at, str_at, strs_at
from bunzai_codecs.formats.agnai import memory
from bunzai_codecs.formats.agnai.detect import CHARACTER
from bunzai_codecs.formats.agnai.lorebook import CCV3_SHAPE, JSON_OPTIONS
from bunzai_codecs.formats.agnai.mapping import (
    IMAGE_AFFIXES,
    Path,
    bad,
    persona_from_agnai,
    persona_to_agnai,
    portrait_from_agnai,
    portrait_to_agnai,
    put,
    seconds_to_iso,
    sprite_from_agnai,
    sprite_to_agnai,
    voice_from_agnai,
    voice_to_agnai,
    wrong_at,
)

BOOK_KEY = "characterBook"
BOOK_PART = ("lorebook", BOOK_KEY)

CHARACTER_COVERAGE = Coverage.of(
    "identity.name",
    "identity.characterVersion",
    "identity.culture",
    "persona.structured",
    "persona.scenario",
    "persona.appearance",
    "persona.voice",
    "persona.imagePrompt.prefix",
    "persona.imagePrompt.suffix",
    "persona.imagePrompt.negative",
    "persona.imagePrompt.template",
    "prompts.systemPrompt",
    "prompts.postHistoryInstructions",
    "greetings.firstMessage",
    "greetings.alternateGreetings[].text",
    "examples.exampleMessages",
    "media.sprite",
    "media.visualKind",
    *media.PORTRAIT_BYTES,
    "attribution.creator",
    "attribution.creatorNotes",
    "attribution.createdAt",
    "attribution.updatedAt",
    "discovery.tags",
    "settings.responseSchema",
    "extensions",
    notes=[
        "description is creator notes; the main definition (identity.description) and the "
        "personality are written as one text persona, joined by a newline, and read back as the main "
        "definition (as Agnai's own Tavern export writes it): the definition is kept as it was when "
        "there is no separate personality",
        "a text persona keeps one text: a multi-element attributes.text is read as its first "
        "element (the twin keeps the rest until the persona is edited)",
        "insert is one fixed-depth slot: only depthInjections[0] is written, without role, so a list "
        "of several injections is not kept",
        "an Agnai character has no prefill: a prefill key is read when present and written only "
        "when the twin had one",
        "imageSettings carries the four prompt affixes; sampler and provider keys stay in the twin",
        "alternate greeting titles, extra media assets and Risu settings have no place",
        "the portrait is the avatar: a portrait with bytes is written as a data: URL (its bytes are"
        " kept), a URL or a path as it is; a container-internal ref without bytes (ccdefault:,"
        " embeded://, __asset:) is not written; name and primary are not held",
    ],
)


# --- decode -------------------------------------------------------------------------------------


def card_to_body(t: Any, ctx: MapContext, path: Path = ()) -> dict[str, Any]:
    """A native Agnai character (at ``path`` below ``ctx``) -> canonical character body dict; notes
    go to ``ctx``. The embedded ``characterBook`` is not read here (it becomes a linked lorebook)."""
    if not isinstance(t, dict):
        raise wrong_at(path, "an object", t)
    if "persona" not in t:
        raise bad("an Agnai character needs a persona", (*path, "persona"))
    structured, text = persona_from_agnai(t["persona"], (*path, "persona"))

    identity: dict[str, Any] = {"name": str_at(t.get("name"), ctx, *path, "name") or ""}
    # a text persona is the character's definition: Agnai's own Tavern export writes it as the card's
    # description (and an empty personality), so a Tavern card comes home with its description
    put(identity, "description", text)
    put(identity, "characterVersion", str_at(t.get("characterVersion"), ctx, *path, "characterVersion"))
    put(identity, "culture", str_at(t.get("culture"), ctx, *path, "culture"))

    persona: dict[str, Any] = {"structured": structured}
    put(persona, "scenario", str_at(t.get("scenario"), ctx, *path, "scenario"))
    put(persona, "appearance", str_at(t.get("appearance"), ctx, *path, "appearance"))
    put(persona, "voice", voice_from_agnai(t.get("voice"), t.get("voiceDisabled"), (*path, "voice")))
    image = ctx.opaque(t.get("imageSettings"), (*path, "imageSettings"))
    if image is not None:
        persona["imagePrompt"] = {
            k: v
            for k in IMAGE_AFFIXES
            if (v := str_at(image.get(k), ctx, *path, "imageSettings", k)) is not None
        }

    prompts: dict[str, Any] = {}
    put(prompts, "systemPrompt", str_at(t.get("systemPrompt"), ctx, *path, "systemPrompt"))
    put(
        prompts,
        "postHistoryInstructions",
        str_at(t.get("postHistoryInstructions"), ctx, *path, "postHistoryInstructions"),
    )
    put(prompts, "prefill", str_at(t.get("prefill"), ctx, *path, "prefill"))
    insert = ctx.opaque(t.get("insert"), (*path, "insert"))
    if insert is not None:
        text = str_at(insert.get("prompt"), ctx, *path, "insert", "prompt")
        if text:  # an empty prompt (the editor's default {prompt: "", depth: 3}) is no injection
            depth = num_at(insert.get("depth"), ctx, *path, "insert", "depth")
            if depth is None:
                raise wrong_at((*path, "insert", "depth"), "a number", depth)
            prompts["depthInjections"] = [{"text": text, "depth": depth}]

    greetings: dict[str, Any] = {}
    put(greetings, "firstMessage", str_at(t.get("greeting"), ctx, *path, "greeting"))
    alternates = strs_at(t.get("alternateGreetings"), ctx, *path, "alternateGreetings")
    if alternates is not None:
        greetings["alternateGreetings"] = [{"text": g} for g in alternates]

    media: dict[str, Any] = {}
    put(media, "portrait", portrait_from_agnai(str_at(t.get("avatar"), ctx, *path, "avatar")))
    put(media, "sprite", sprite_from_agnai(t.get("sprite"), (*path, "sprite")))
    put(media, "visualKind", str_at(t.get("visualType"), ctx, *path, "visualType"))

    attribution: dict[str, Any] = {}
    put(attribution, "creator", str_at(t.get("creator"), ctx, *path, "creator"))
    put(attribution, "creatorNotes", str_at(t.get("description"), ctx, *path, "description"))
    for key in ("createdAt", "updatedAt"):
        when = str_at(t.get(key), ctx, *path, key)
        if when is not None:
            seconds = iso_to_seconds(when)
            if seconds is None:
                ctx.warn(f"{key} {when!r} is not an ISO date; kept in the twin only")
            put(attribution, key, seconds)

    body: dict[str, Any] = {
        "identity": identity,
        "persona": persona,
        "prompts": prompts,
        "greetings": greetings,
        "examples": {
            k: v
            for k, v in (("exampleMessages", str_at(t.get("sampleChat"), ctx, *path, "sampleChat")),)
            if v is not None
        },
        "media": media,
        "attribution": attribution,
        "discovery": {
            k: v for k, v in (("tags", strs_at(t.get("tags"), ctx, *path, "tags")),) if v is not None
        },
    }
    schema = ctx.opaque(t.get("json"), (*path, "json"))
    if schema is not None:
        body["settings"] = {"responseSchema": schema}
    put(body, "extensions", ctx.opaque(t.get("extensions"), (*path, "extensions")))
    return body


def body_of(t: Any) -> CharacterBody:
    return CharacterBody.model_validate(card_to_body(t, MapContext()))


# --- encode -------------------------------------------------------------------------------------


def body_to_card(body: CharacterBody, *, prefill: bool = False) -> dict[str, Any]:
    """A canonical character -> a fresh native Agnai character (no ``characterBook``: the caller
    embeds the linked book). ``prefill`` is written only when asked (the twin had one)."""
    p = body.persona
    out: dict[str, Any] = {"kind": CHARACTER, "name": body.identity.name}
    put(out, "description", body.attribution.creatorNotes)
    put(out, "appearance", p.appearance)
    put(out, "avatar", portrait_to_agnai(body.media.portrait.ref if body.media.portrait else None))
    structured = p.structured.model_dump(exclude_none=True) if p.structured is not None else None
    out["persona"] = persona_to_agnai(structured, body.identity.description, p.personality)
    out["greeting"] = body.greetings.firstMessage or ""
    out["scenario"] = p.scenario or ""
    out["sampleChat"] = body.examples.exampleMessages or ""
    put(out, "culture", body.identity.culture)
    put(out, "tags", body.discovery.tags)
    put(out, "visualType", body.media.visualKind)
    sprite = body.media.sprite.model_dump(exclude_none=True) if body.media.sprite is not None else None
    put(out, "sprite", sprite_to_agnai(sprite))
    for key in ("createdAt", "updatedAt"):
        seconds = getattr(body.attribution, key)
        if seconds is not None:
            put(out, key, seconds_to_iso(seconds))
    voice, disabled = voice_to_agnai(p.voice.model_dump(exclude_none=True) if p.voice is not None else None)
    put(out, "voice", voice)
    put(out, "voiceDisabled", disabled)
    put(out, "json", body.settings.responseSchema)
    if body.greetings.alternateGreetings is not None:
        out["alternateGreetings"] = [g.text for g in body.greetings.alternateGreetings]
    if body.extensions:
        out["extensions"] = body.extensions
    put(out, "systemPrompt", body.prompts.systemPrompt)
    put(out, "postHistoryInstructions", body.prompts.postHistoryInstructions)
    if prefill:
        put(out, "prefill", body.prompts.prefill)
    if body.prompts.depthInjections:
        first = body.prompts.depthInjections[0]
        out["insert"] = {"prompt": first.text, "depth": first.depth}
    put(out, "creator", body.attribution.creator)
    put(out, "characterVersion", body.identity.characterVersion)
    image = {k: v for k in IMAGE_AFFIXES if (v := getattr(p.imagePrompt, k)) is not None}
    if image:
        out["imageSettings"] = image
    return out


def _placed(out: dict[str, Any], raw: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """``out`` with ``key`` set to ``value`` (or removed for ``None``) at the position ``raw`` had
    it; a new dict, since ``out`` may be the twin itself."""
    res: dict[str, Any] = {}
    for k in raw:
        if k == key:
            if value is not None:
                res[k] = value
        elif k in out:
            res[k] = out[k]
    for k, v in out.items():
        if k not in res and k != key:
            res[k] = v
    if value is not None and key not in res:
        res[key] = value
    return res


def reconcile_image_settings(out: dict[str, Any], raw: dict[str, Any], body: CharacterBody) -> dict[str, Any]:
    """The twin's ``imageSettings`` with only the four affixes taken from the body (written or
    cleared); every sampler/provider key stays, even when the twin had no affix at all."""
    src = raw.get("imageSettings")
    if not isinstance(src, dict):
        return out
    ip = body.persona.imagePrompt
    res: dict[str, Any] = {}
    for k, v in src.items():
        if k in IMAGE_AFFIXES:
            want = getattr(ip, k)
            if want == (v if isinstance(v, str) else None):
                res[k] = v  # unchanged (a null affix included): the twin's value
            elif want is not None:
                res[k] = want
        else:
            res[k] = v
    for k in IMAGE_AFFIXES:
        want = getattr(ip, k)
        if want is not None and k not in src:
            res[k] = want
    if res == src and out.get("imageSettings") is src:
        return out
    return _placed(out, raw, "imageSettings", src if res == src else res)


class AgnaiCharacterCodec(Codec):
    id = "agnai"
    coverage = CHARACTER_COVERAGE

    def decode(self, s: Sniff) -> Decoded:
        tree = s.require_json()
        mctx = MapContext()
        body = card_to_body(tree, mctx)
        card = self.entity(s, body, raw=tree)
        card.warnings.extend(mctx.warnings)
        entities = [card]
        book_tree = tree.get(BOOK_KEY)
        if book_tree is not None:
            bctx = MapContext()
            book_body = memory.book_to_canonical(book_tree, bctx, (BOOK_KEY,))
            book = self.entity(s, book_body, raw=book_tree, part=BOOK_PART, kind="lorebook")
            book.warnings.extend(bctx.warnings)
            card.links = {KNOWLEDGE_REFS: [book.id]}
            entities.append(book)
        return Decoded(entities)

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        assert isinstance(entity.body, CharacterBody)
        # the avatar is a data: URL when the portrait has bytes (other assets have no place)
        body = media.wire(entity.body, entity.media, inline=lambda path, _a: path == "media.portrait")
        assert isinstance(body, CharacterBody)
        twin = self._twin(entity)
        if twin is None:
            raw: dict[str, Any] = {}
            out = body_to_card(body)
        else:
            raw, base = twin
            prefill = "prefill" in raw
            out = merge3(raw, body_to_card(base, prefill=prefill), body_to_card(body, prefill=prefill))
            out = reconcile_image_settings(out, raw, body)
        out = self._with_book(entity, ctx, out, raw)
        return orjson.dumps(out, option=JSON_OPTIONS)

    def _twin(self, entity: CanonicalEntity) -> tuple[dict[str, Any], CharacterBody] | None:
        """The twin tree and the body it decodes to; ``None`` without a usable twin (write fresh)."""
        twin = entity.twin(self.id)
        raw = twin.raw if twin is not None else None
        if not isinstance(raw, dict):
            return None
        try:
            return raw, body_of(raw)
        except (Malformed, ValidationError):
            return None

    def _with_book(
        self, entity: CanonicalEntity, ctx: EmitContext, out: dict[str, Any], raw: dict[str, Any]
    ) -> dict[str, Any]:
        """Embed the linked lorebook as ``characterBook`` (through its own twin); an explicitly
        empty link list drops a stale copy; unresolvable links keep the twin's copy."""
        books = ctx.refs(entity, "lorebook")
        if books:
            book = books[0]  # an Agnai character holds one book; bundle.write puts the rest beside
            assert isinstance(book.body, LorebookBody)
            tree = memory.write_book(book.body, _book_twin(book))
            ctx.embed(book)
            return _placed(out, raw, BOOK_KEY, tree)
        if keep_or_drop(entity, ctx, "lorebook", out.get(BOOK_KEY)) is DROP:
            return _placed(out, raw, BOOK_KEY, None)  # the book was unlinked: no stale copy
        return out


def _book_twin(book: CanonicalEntity) -> dict[str, Any] | None:
    """The MemoryBook a linked book came from: its ``characterBook`` twin, else a standalone book's."""
    for fmt in ("agnai", "agnai-lorebook"):
        twin = book.twin(fmt)
        if twin is not None and twin.shape != CCV3_SHAPE:
            raw = memory.check_twin(twin.raw)
            if raw is not None:
                return raw
    return None
