"""``rolecall-persona``: RoleCall personas, in both shapes RoleCall reads (docs/formats/rolecall.md#persona).

1. **rcpersona** — ``{spec: "rolecall_persona", spec_version: "1.0", data: {name, description,
   content, sections?, metadata?, lorebook?}}``; as a PNG, base64 JSON in a text chunk with keyword
   ``rcpersona``. ``description`` is the short **brief**, ``content`` the injected text.
2. **persona card** — what RoleCall's Export button writes: a CCv2 card (JSON, or a PNG ``chara``
   chunk) whose ``data.extensions.rolecall.type`` is ``"persona"``. ``data.description`` is the
   injected text (RoleCall folds ``Appearance:``/``Body:`` paragraphs into it),
   ``data.creator_notes`` the brief, ``data.personality`` the personality, ``data.scenario`` the
   **history**; ``first_mes`` and the other character fields are empty.

Before matching, wrappers are peeled outer-first: a library export ``{exportedAt|type, version?,
data}`` -> ``data``, then ``{persona: {...}}`` -> ``persona``; the escrow twin keeps the whole file
and the path, and an export puts the inner object back in place.

Field map:

=================================  ===========================  ==========================
canonical                          rcpersona ``data``           persona card ``data``
=================================  ===========================  ==========================
``name``                           ``name``                     ``name``
``content``                        ``content`` (empty:          ``description``
                                   compiled from sections)
``brief``                          ``description``              ``creator_notes``
``sections.appearance``            ``sections.appearance``      (folded into description)
``sections.personality``           ``sections.personality``     ``personality``
``sections.history``               ``sections.history``         ``scenario``
``presentation.imageUrl``          —                            ``extensions.rolecall.image_url``
``attribution.creator``            ``metadata.creator``         ``creator``
``attribution.version``            ``metadata.version``         —
``attribution.source``             ``"rolecall"`` (stamped)     ``"rolecall"`` (stamped)
=================================  ===========================  ==========================

Compile rule (RoleCall's): an empty ``content`` is built from the sections in the fixed order
appearance, body, personality, quirks, history as ``"<Label>: <text>"`` blocks joined by a blank
line. Twin only: sections ``body``/``quirks``, ``metadata.tags``/``created_at``/
``content_rating``/``source``, ``lorebook``, card ``tags`` (traits) and the rest of the rolecall bag
(tagline, age, height, pronouns, colors, ``is_after_dark``...).

Detection: 1.0 for either shape (JSON, after peeling), for a PNG with an ``rcpersona`` chunk, and
for a PNG whose ``ccv3``/``chara`` payload is a persona card. RoleCall's own PNG reader prefers
``rcpersona`` > ``ccv3`` > ``chara``; so does the decoder.

Encode: a same-format export overlays the body's edits on the twin (and for a PNG rewrites only its
payload chunk, or returns the file unchanged). A fresh export is a persona card (what RoleCall's
Export writes) unless the body holds what a persona card cannot — an appearance section (the card
folds it into the injected text, changing ``content``) or a version —: then it is an rcpersona,
RoleCall's own persona file, which holds both but has no image url (:func:`fresh_shape`).
``EmitContext.options["shape"]`` (``"card"``/``"rcpersona"``) picks the shape explicitly; on a
persona card a ``sections.appearance`` not already in ``content`` is folded in as an
``Appearance:`` paragraph, as RoleCall does.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from bunzai_codecs.core import media as media_mod
from bunzai_codecs.core import png
from bunzai_codecs.core.codec import JSON_FILE, PNG_FILE, Codec, Coverage, EmitContext, body_as
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.errors import BunzaiError, Malformed, NotRecognized, Unsupported
from bunzai_codecs.core.escrow import Twin, facet
from bunzai_codecs.core.overlay import merge3
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.persona import SECTION_PATHS, PersonaBody
from bunzai_codecs.formats._shared.carrier import card_image_portrait, choose, picture, portrait_resolver
from bunzai_codecs.formats._shared.wire import MapContext, opt_obj, str_at
from bunzai_codecs.formats.rolecall.card import ROLECALL
from bunzai_codecs.formats.rolecall.detect import CARD_SHAPE, RCPERSONA, RCPERSONA_SHAPE, SPEC, peel, shape_of
from bunzai_codecs.formats.tavern.fields import SPEC_V2
from bunzai_codecs.formats.tavern.png import (
    CARD_KEYWORDS,
    sniff_payload_tree,
)

#: PNG keywords, in the order RoleCall's persona importer prefers them
PNG_KEYWORDS = (RCPERSONA, *CARD_KEYWORDS)
#: the compile order of sections, with their labels
SECTION_LABELS = (
    ("appearance", "Appearance"),
    ("body", "Body"),
    ("personality", "Personality"),
    ("quirks", "Quirks"),
    ("history", "History"),
)

Path = tuple[str, ...]


def _at(tree: Any, path: Path) -> Any:
    for k in path:
        tree = tree[k]
    return tree


def _put(tree: Any, path: Path, value: Any) -> Any:
    """``tree`` with the object at ``path`` replaced (dicts copied on the way; ``tree`` untouched)."""
    if not path:
        return value
    inner = tree[path[0]]
    new = _put(inner, path[1:], value)
    if new is inner:
        return tree
    out = dict(tree)
    out[path[0]] = new
    return out


# --- decode -------------------------------------------------------------------------------------


def compile_sections(sections: Mapping[str, Any]) -> str:
    """RoleCall's rule for an empty ``content``: labelled sections joined by blank lines."""
    parts = []
    for key, label in SECTION_LABELS:
        v = sections.get(key)
        if isinstance(v, str) and v.strip():
            parts.append(f"{label}: {v}")
    return "\n\n".join(parts)


def rcpersona_to_body(t: dict[str, Any], ctx: MapContext) -> dict[str, Any]:
    data = t["data"]
    dctx = ctx.child("data")
    name = str_at(data.get("name"), dctx, "name")
    if name is None:
        raise Malformed("a rolecall_persona has no name", path=dctx.at("name"))
    sections = opt_obj(data.get("sections"), dctx.at("sections")) or {}
    for key, _ in SECTION_LABELS:
        str_at(sections.get(key), dctx, "sections", key)
    meta = opt_obj(data.get("metadata"), dctx.at("metadata")) or {}
    content = str_at(data.get("content"), dctx, "content") or ""
    if not content:
        content = compile_sections(sections)
    return {
        "name": name,
        "content": content,
        "brief": str_at(data.get("description"), dctx, "description") or None,
        "sections": {
            "appearance": sections.get("appearance") or None,
            "personality": sections.get("personality") or None,
            "history": sections.get("history") or None,
        },
        "attribution": {
            "creator": str_at(meta.get("creator"), dctx, "metadata", "creator") or None,
            "version": str_at(meta.get("version"), dctx, "metadata", "version") or None,
            "source": "rolecall",
        },
    }


def card_to_body(t: dict[str, Any], ctx: MapContext) -> dict[str, Any]:
    wrapped = isinstance(t.get("data"), dict)
    data = t["data"] if wrapped else t
    dctx = ctx.child("data") if wrapped else ctx
    bag = data["extensions"][ROLECALL]
    for key in ("first_mes", "mes_example", "system_prompt", "post_history_instructions"):
        str_at(data.get(key), dctx, key)
    return {
        "name": str_at(data.get("name"), dctx, "name") or "",
        "content": str_at(data.get("description"), dctx, "description") or "",
        "brief": str_at(data.get("creator_notes"), dctx, "creator_notes") or None,
        "sections": {
            "personality": str_at(data.get("personality"), dctx, "personality") or None,
            "history": str_at(data.get("scenario"), dctx, "scenario") or None,
        },
        "presentation": {
            "imageUrl": str_at(bag.get("image_url"), dctx, "extensions", ROLECALL, "image_url") or None
        },
        "attribution": {
            "creator": str_at(data.get("creator"), dctx, "creator") or None,
            "source": "rolecall",
        },
    }


def to_body(t: dict[str, Any], shape: str, ctx: MapContext) -> dict[str, Any]:
    return rcpersona_to_body(t, ctx) if shape == RCPERSONA_SHAPE else card_to_body(t, ctx)


# --- encode -------------------------------------------------------------------------------------


def body_to_rcpersona(body: PersonaBody) -> dict[str, Any]:
    data: dict[str, Any] = {"name": body.name, "description": body.brief or "", "content": body.content}
    s = body.sections
    sections = {
        k: v
        for k, v in (("appearance", s.appearance), ("personality", s.personality), ("history", s.history))
        if v
    }
    if sections:
        data["sections"] = sections
    a = body.attribution
    meta = {k: v for k, v in (("creator", a.creator), ("version", a.version)) if v}
    if meta:
        data["metadata"] = meta
    return {"spec": SPEC, "spec_version": "1.0", "data": data}


def body_to_card_data(body: PersonaBody, *, fold: bool) -> dict[str, Any]:
    content = body.content
    appearance = body.sections.appearance
    if fold and appearance and appearance not in content:
        content = "\n\n".join(p for p in (content, f"Appearance: {appearance}") if p)
    bag: dict[str, Any] = {"type": "persona"}
    if body.presentation.imageUrl:
        bag["image_url"] = body.presentation.imageUrl
    bag["source"] = "rolecall"
    return {
        "name": body.name,
        "description": content,
        "personality": body.sections.personality or "",
        "scenario": body.sections.history or "",
        "first_mes": "",
        "mes_example": "",
        "creator_notes": body.brief or "",
        "system_prompt": "",
        "post_history_instructions": "",
        "alternate_greetings": [],
        "tags": [],
        "creator": body.attribution.creator or "",
        "character_version": "",
        "extensions": {ROLECALL: bag},
    }


def to_native(body: PersonaBody, shape: str, *, wrapped: bool = True, fold: bool = False) -> dict[str, Any]:
    if shape == RCPERSONA_SHAPE:
        return body_to_rcpersona(body)
    data = body_to_card_data(body, fold=fold)
    return {"spec": SPEC_V2, "spec_version": "2.0", "data": data} if wrapped else data


def fresh_shape(body: PersonaBody) -> str:
    """The shape of a fresh export of ``body`` (see the module docstring): the persona card, unless
    the body has an appearance section or a version, which only an rcpersona holds."""
    if body.sections.appearance or body.attribution.version:
        return RCPERSONA_SHAPE
    return CARD_SHAPE


@dataclass(eq=False)
class PersonaTwin(Twin):
    """A RoleCall persona's escrow: its ``shape`` (``card``/``rcpersona``), the ``path`` of the
    persona object inside the file (the peeled wrappers), and for a PNG the file (``blobs.image``)
    and the chunk it was read from (``png.payload``)."""

    path: list[Any] | None = facet(list)
    png: dict[str, Any] | None = facet(dict)


class RoleCallPersona(Codec):
    """RoleCall personas: ``rolecall_persona`` files and PNGs, and RoleCall's persona cards."""

    id = "rolecall-persona"
    twin_type = PersonaTwin
    containers = (JSON_FILE, PNG_FILE)
    coverage = Coverage.of(
        "name",
        "content",
        "brief",
        *SECTION_PATHS,
        "attribution.creator",
        "attribution.version",
        *media_mod.PORTRAIT_BYTES,
        notes=[
            "a fresh export is a persona card (RoleCall's Export) unless the persona has an appearance"
            " section or a version, which a persona card cannot hold (it folds appearance into the"
            " description): then it is an rcpersona, which holds both",
            "presentation.imageUrl is held only by a persona card (`extensions.rolecall.image_url`), so"
            " it is not claimed: an rcpersona export drops it",
            "attribution.source is not held: the reader stamps `rolecall` (the app the file was read"
            " from), so another app's stamp does not come back",
            "a PNG persona's picture is the portrait: a persona with a portrait image is written as a PNG"
            " (the payload in an rcpersona or chara chunk; a portrait that is not a PNG is re-encoded,"
            " keeping the pixels), one without as JSON",
            "no chat injection or world name; traits, pronouns, age and colors ride in escrow",
        ],
    )

    def decode(self, s: Sniff) -> Decoded:
        if s.is_png:
            return self._decode_png(s)
        tree = s.require_json()
        return Decoded([self._decode_tree(s, tree)])

    def _decode_tree(
        self, s: Sniff, tree: Any, *, image: bytes | None = None, **escrow: Any
    ) -> CanonicalEntity:
        inner, path = peel(tree)
        shape = shape_of(inner)
        if shape is None:
            raise NotRecognized("not a RoleCall persona: no rolecall_persona spec or persona card", path="$")
        ctx = MapContext("$")
        for k in path:
            ctx = ctx.child(k)
        body = to_body(inner, shape, ctx)
        resolve = None
        if image is not None:  # a PNG persona: the picture is the persona's portrait
            body = {**body, "media": {"portrait": card_image_portrait()}}
            resolve = portrait_resolver(image)
        e = self.entity(s, body, raw=tree, media=resolve, shape=shape, path=list(path), **escrow)
        e.warnings.extend(ctx.warnings)
        return e

    def _decode_png(self, s: Sniff) -> Decoded:
        pf = s.require_png()
        image = picture(s.data, (RCPERSONA,), parsed=pf)
        first: BunzaiError | None = None
        for kw in PNG_KEYWORDS:
            t = s.png_text(kw)
            if t is None:
                continue
            try:
                tree = sniff_payload_tree(s, t)
                return Decoded(
                    [
                        self._decode_tree(
                            s, tree, image=image, blobs={"image": s.data}, png={"payload": t.keyword}
                        )
                    ]
                )
            except BunzaiError as exc:
                if first is None:
                    first = exc
        if first is not None:
            raise first
        raise NotRecognized("PNG has no rcpersona, ccv3 or chara text chunk: not a RoleCall persona")

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        body = body_as(entity, PersonaBody)
        twin = entity.twin(self.id)
        raw = twin.raw if twin else None
        want = ctx.options.get("container")
        if want not in (None, "json", "png"):
            raise Unsupported(f"{self.id} writes json or png containers, not {want!r}")
        if not isinstance(twin, PersonaTwin) or not isinstance(raw, dict):
            shape = ctx.options.get("shape") or fresh_shape(body)
            if shape not in (CARD_SHAPE, RCPERSONA_SHAPE):
                raise Unsupported(f"{self.id} writes the shapes card or rcpersona, not {shape!r}")
            tree = to_native(body, shape, fold=True)
            has_image = media_mod.bytes_of(entity.media, body.media.portrait) is not None
            if want == "png" or (want is None and (has_image or ctx.options.get("image") is not None)):
                kw = RCPERSONA if shape == RCPERSONA_SHAPE else "chara"
                return _png(choose(entity, ctx, strip=(RCPERSONA,)).image, kw, tree)
            return orjson.dumps(tree, option=orjson.OPT_INDENT_2)
        path: Path = tuple(twin.path or ())
        shape = str(twin.shape)
        inner = _at(raw, path)
        wrapped = shape == RCPERSONA_SHAPE or isinstance(inner.get("data"), dict)
        blob = twin.blob("image")
        base = PersonaBody.model_validate(to_body(inner, shape, MapContext("$")))
        if blob is not None:
            base = base.model_copy(
                update={
                    "media": PersonaBody.model_validate({"media": {"portrait": card_image_portrait()}}).media
                }
            )
        if base == media_mod.unbound(body):
            tree = raw
        else:
            merged = merge3(
                inner, to_native(base, shape, wrapped=wrapped), to_native(body, shape, wrapped=wrapped)
            )
            tree = _put(raw, path, merged)
        if want == "json" or (want is None and blob is None):
            return orjson.dumps(tree, option=orjson.OPT_INDENT_2)
        kw = str((twin.png or {}).get("payload", RCPERSONA))
        carrier = choose(entity, ctx, twin_png=blob, strip=(RCPERSONA,))
        if carrier.source == "twin" and tree is raw:
            return carrier.image
        return _png(carrier.image, kw, tree)


def _png(image: bytes, keyword: str, tree: Any) -> bytes:
    chunk = png.make_text_chunk(keyword, base64.b64encode(orjson.dumps(tree)))
    return png.replace_text(image, remove={keyword}, add=[chunk])


__all__ = ["RoleCallPersona", "compile_sections", "fresh_shape", "peel", "shape_of"]
