"""``lumiverse-persona``: a Lumiverse persona, as the account object Lumiverse's API returns.

Lumiverse has no persona file of its own; the one standalone form is the account object
(docs/formats/lumiverse.md#persona): ``name, title, description, subjective_pronoun, objective_pronoun,
possessive_pronoun, avatar_path, attached_world_book_id, folder, is_default, is_narrator, metadata``
and timestamps.

=====================  ==========================================================
wire                   canonical ``PersonaBody``
=====================  ==========================================================
``name``               ``name``
``description``        ``content`` (the text sent as ``{{user}}``)
``title``              ``brief`` (shown in the app, never sent: SillyTavern's persona
                       ``title`` has the same role)
``avatar_path``        ``presentation.imageUrl``
(stamped)              ``attribution.source`` = ``lumiverse``
=====================  ==========================================================

Twin only (no canonical home): the pronoun triplet, ``attached_world_book_id`` (an id, not a
world name), ``folder``, ``is_default``, ``is_narrator``, ``metadata``, ids and timestamps.

Detection: 0.95 for an object with string ``name``, ``description``, ``subjective_pronoun`` and
``objective_pronoun`` (above SillyTavern's 0.6 for a flat ``{name, description}`` card).

Encode: a same-format export overlays the body's edits on the twin; a fresh export writes the
account fields canonical can fill, with empty pronouns (bunzai does not guess them).
"""

from __future__ import annotations

from typing import Any

import orjson

from bunzai_codecs.core.codec import Codec, Coverage, EmitContext, body_as
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.overlay import overlay_twin
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.persona import PersonaBody
from bunzai_codecs.formats._shared.wire import MapContext, str_at, wrong

_REQUIRED = ("name", "description", "subjective_pronoun", "objective_pronoun")
_PRONOUNS = ("subjective_pronoun", "objective_pronoun", "possessive_pronoun")


def is_account_persona(t: Any) -> bool:
    return isinstance(t, dict) and all(isinstance(t.get(k), str) for k in _REQUIRED)


def persona_to_body(t: Any, ctx: MapContext | None = None) -> dict[str, Any]:
    ctx = ctx or MapContext("$")
    if not isinstance(t, dict):
        raise wrong(ctx.path, "a persona object", t)
    for k in _PRONOUNS:
        str_at(t.get(k), ctx, k)
    return {
        "name": str_at(t.get("name"), ctx, "name") or "",
        "content": str_at(t.get("description"), ctx, "description") or "",
        "brief": str_at(t.get("title"), ctx, "title") or None,
        "presentation": {"imageUrl": str_at(t.get("avatar_path"), ctx, "avatar_path") or None},
        "attribution": {"source": "lumiverse"},
    }


def body_to_persona(body: PersonaBody) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": body.name,
        "title": body.brief or "",
        "description": body.content,
        "subjective_pronoun": "",
        "objective_pronoun": "",
        "possessive_pronoun": "",
    }
    if body.presentation.imageUrl:
        out["avatar_path"] = body.presentation.imageUrl
    return out


class LumiversePersona(Codec):
    """Lumiverse personas (the account object)."""

    id = "lumiverse-persona"
    kind = "persona"
    family = "lumiverse"
    label = "Lumiverse persona (account object)"
    suffixes = (".json",)
    extension = ".json"
    coverage = Coverage.of(
        "name",
        "content",
        "brief",
        "presentation.imageUrl",
        notes=[
            "attribution.source is not held: the reader stamps `lumiverse` (the app the file was read"
            " from), so another app's stamp does not come back",
            "pronouns, the attached world book id, folder and default/narrator flags ride in escrow only",
            "no sections, chat injection, world name or portrait image",
        ],
    )

    def detect(self, s: Sniff) -> float:
        return 0.95 if is_account_persona(s.json_object) else 0.0

    def decode(self, s: Sniff) -> Decoded:
        tree = s.require_json()
        ctx = MapContext("$")
        e = self.entity(s, persona_to_body(tree, ctx), raw=tree)
        e.warnings.extend(ctx.warnings)
        return Decoded([e])

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        body = body_as(entity, PersonaBody)
        twin = entity.twin(self.id)
        raw = twin.raw if twin else None
        if isinstance(raw, dict):
            out: Any = overlay_twin(raw, body, persona_to_body(raw), body_to_persona)
        else:
            out = body_to_persona(body)
        return orjson.dumps(out, option=orjson.OPT_INDENT_2)


__all__ = ["LumiversePersona", "body_to_persona", "is_account_persona", "persona_to_body"]
