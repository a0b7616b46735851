"""marinara-persona: Marinara-Engine user personas (docs/canonical-model.md#personabody, docs/formats/marinara.md#persona-fields).

Three shapes of the same persona row:

- the native export ``{type: "marinara_persona", version: 1, exportedAt, data}``: the row minus
  ``id``/``isActive``/``avatarPath``/timestamps, plus ``avatar`` (a data URL), ``sprites`` and
  ``metadata``. Real exports have no ``id``;
- the compatible export: the same row fields bare, tagged ``extensions.marinara``;
- the API row (``GET /api/personas``): ``id``, ``isActive``, ``avatarPath``, timestamps.

Row values are raw: ``personaStats``, ``avatarCrop``, ``trackerCardColors``, ``tags``,
``savedStatusOptions`` and ``convoBehavior`` are JSON strings (``""`` = unset). The canonical
persona maps none of them (docs/canonical-model.md#personabody puts colours, stats, crop, tags and convo settings in
escrow), so they ride the twin verbatim and are never re-encoded.

Quirks kept from the seed: an empty or whitespace-only section is left out of ``sections``; a
section cleared to ``""`` on the body is written as ``""`` (not the twin's old text); ``avatarPath``
is never fabricated, and clearing the image removes it.
"""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core import media
from bunzai_codecs.core.codec import Coverage
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.errors import NotRecognized
from bunzai_codecs.core.overlay import merge3
from bunzai_codecs.entities.base import Body
from bunzai_codecs.entities.persona import SECTION_PATHS
from bunzai_codecs.formats._shared.wire import MapContext
from bunzai_codecs.formats.marinara._rows import EPOCH, EnvelopeCodec, Path, obj, opt_text, text
from bunzai_codecs.formats.marinara.detect import PERSONA_TYPE as TYPE
from bunzai_codecs.formats.marinara.detect import _is_compatible
from bunzai_codecs.formats.marinara.detect import _is_persona_row as _is_row

#: canonical section -> Marinara column
SECTIONS = {"appearance": "appearance", "personality": "personality", "history": "backstory"}
#: canonical attribution field -> Marinara column, then the aliases its importer accepts
ATTRIBUTION = {
    "creator": ("creator",),
    "version": ("personaVersion", "persona_version", "character_version"),
    "creatorNotes": ("creatorNotes", "creator_notes"),
}


# -- detection ---------------------------------------------------------------------------------


def _shape(t: Any) -> tuple[str, dict[str, Any], Path]:
    t = obj(t, (), "a persona object")
    if t.get("type") == TYPE:
        return "envelope", obj(t.get("data"), ("data",), "the persona object"), ("data",)
    if _is_row(t):
        return "row", t, ()
    if _is_compatible(t):
        return "compatible", t, ()
    raise NotRecognized(
        f'not a Marinara persona: expected type "{TYPE}", a compatible export or a persona row'
    )


# -- native <-> canonical ----------------------------------------------------------------------


def body_from(t: Any, ctx: MapContext) -> dict[str, Any]:
    shape, row, path = _shape(t)
    body: dict[str, Any] = {
        "name": text(ctx, row, "name", path),
        "content": text(ctx, row, "description", path),
        "attribution": {"source": "marinara"},
    }
    brief = opt_text(ctx, row, "comment", path)
    if brief is not None:
        body["brief"] = brief
    sections = {}
    for canon, wire in SECTIONS.items():
        v = opt_text(ctx, row, wire, path)
        if v is not None:
            sections[canon] = v
    body["sections"] = sections
    image = text(ctx, row, "avatarPath", path)
    if image:
        body["presentation"] = {"imageUrl": image}
    avatar = text(ctx, row, "avatar", path) if shape == "envelope" else ""
    if avatar:
        body["media"] = {"portrait": _portrait(avatar)}
    for canon, wires in ATTRIBUTION.items():
        for wire in wires:
            v = text(ctx, row, wire, path)
            if v:
                body["attribution"][canon] = v
                break
    return body


def _portrait(ref: str) -> dict[str, Any]:
    asset: dict[str, Any] = {"role": "portrait", "ref": ref}
    if ref.startswith("data:"):
        mime = ref[5:].split(";", 1)[0].split(",", 1)[0]
        if mime:
            asset["mime"] = mime
    return asset


def fields(body: dict[str, Any], shape: str, columns: set[str] | None) -> dict[str, Any]:
    """The mapped Marinara columns for ``body``. ``columns`` are those of the twin's row: a column
    it has is always written (``""`` when the body has no value), one it lacks only when the body
    sets it; a fresh export (``columns`` None) writes the row's core text columns."""

    def keep(col: str) -> bool:
        return columns is not None and col in columns

    sections = body.get("sections", {})
    attribution = body.get("attribution", {})
    out: dict[str, Any] = {"name": body.get("name", "")}
    if body.get("brief") is not None or keep("comment") or columns is None:
        out["comment"] = body.get("brief") or ""
    out["description"] = body.get("content", "")
    for canon, wire in SECTIONS.items():
        v = sections.get(canon)
        if v is not None or keep(wire) or (columns is None and wire == "personality"):
            out[wire] = v if v is not None else ""
    for canon, wires in ATTRIBUTION.items():
        v = attribution.get(canon)
        col = next((w for w in wires if keep(w)), wires[0])
        if v is not None or keep(col):
            out[col] = v if v is not None else ""
    image = body.get("presentation", {}).get("imageUrl")
    if image:
        out["avatarPath"] = image
    portrait = body.get("media", {}).get("portrait")
    if shape == "envelope" and portrait and str(portrait.get("ref", "")).startswith("data:"):
        out["avatar"] = portrait["ref"]
    return out


def wrap(shape: str, data: dict[str, Any], exported_at: str = EPOCH) -> Any:
    if shape == "envelope":
        return {"type": TYPE, "version": 1, "exportedAt": exported_at, "data": data}
    return data


class MarinaraPersonaCodec(EnvelopeCodec):
    id = "marinara-persona"
    coverage = Coverage.of(
        "name",
        "content",
        "brief",
        *SECTION_PATHS,
        "presentation.imageUrl",
        "attribution.creator",
        "attribution.version",
        "attribution.creatorNotes",
        *media.PORTRAIT_BYTES,
        notes=[
            "attribution.source is not held: the reader stamps `marinara` (the app the file was read "
            "from), so another app's stamp does not come back",
            "scenario, colours, personaStats, avatarCrop, trackerCardColors, tags, "
            "savedStatusOptions, convo settings, sprites and timestamps ride the escrow twin only",
            "an empty or whitespace-only section reads as absent",
            "the export's avatar is the portrait as a data URL: its bytes are kept (read back with role"
            " portrait, without name or label); a portrait known only by a path (no bytes) is not written",
            "chatInjection and worldName have no Marinara home",
        ],
    )

    read_tree = body_from

    def wire(self, entity: CanonicalEntity) -> Body:
        # the envelope's avatar is a data: URL: a portrait with bytes is written as one
        return media.wire(entity.body, entity.media, inline=lambda _p, _a: True)

    def fresh(self, new: dict[str, Any], exported_at: str) -> Any:
        return wrap("envelope", fields(new, "envelope", None), exported_at)

    def overlay(self, raw: Any, new: dict[str, Any]) -> Any:
        shape, row, _ = _shape(raw)
        cols = set(row)
        base = fields(body_from(raw, MapContext()), shape, cols)
        return merge3(raw, wrap(shape, base), wrap(shape, fields(new, shape, cols)))
