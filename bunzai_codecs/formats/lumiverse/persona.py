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

from bunzai_codecs.core.codec import Coverage
from bunzai_codecs.entities.persona import PersonaBody
from bunzai_codecs.formats._shared.tree_codec import TreeCodec
from bunzai_codecs.formats._shared.wire import MapContext, str_at, wrong
from bunzai_codecs.formats.lumiverse.detect import is_account_persona

_PRONOUNS = ("subjective_pronoun", "objective_pronoun", "possessive_pronoun")


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


class LumiversePersona(TreeCodec):
    """Lumiverse personas (the account object)."""

    id = "lumiverse-persona"
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

    read = staticmethod(persona_to_body)
    write = staticmethod(body_to_persona)


__all__ = ["LumiversePersona", "body_to_persona", "is_account_persona", "persona_to_body"]
