"""Agnai's Tavern export flavour: the ``data.extensions.agnai`` block of a CCv2 card.

Agnai's "Tavern" export (JSON or PNG) is an ordinary CCv2 card, read by the ``sillytavern`` codec,
plus ``extensions.agnai = {voice, persona, appearance, json, sprite}`` (A1.1). This dialect maps that
block onto the same canonical paths as the native ``agnai`` codec, through the same mappers
(``mapping.py``), and writes it back for a character that holds something only Agnai writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bunzai_codecs.core.codec import Coverage
from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.formats.agnai.mapping import body_to_extension, extension_to_body
from bunzai_codecs.formats.tavern.fields import TavernDialect

if TYPE_CHECKING:
    from bunzai_codecs.entities.character import CharacterBody
    from bunzai_codecs.formats._shared.wire import MapContext

AGNAI = "agnai"


class AgnaiDialect(TavernDialect):
    """``extensions.agnai`` on a Tavern card <-> ``persona.structured``, ``persona.voice``,
    ``persona.appearance``, ``settings.responseSchema`` and ``media.sprite``."""

    name = AGNAI
    claims = frozenset({AGNAI})
    # voice and appearance are carried only beside one of these (see ``body_to_extension``)
    coverage = Coverage.of(
        "persona.structured",
        "settings.responseSchema",
        "media.sprite",
        notes=[
            "Agnai's extensions.agnai (voice, persona, appearance, json, sprite) is read on any card "
            "and written for a character with a structured persona, a sprite or a response schema; "
            "voice and appearance travel only inside it, without voiceDisabled",
        ],
    )

    def read(self, data: Mapping[str, Any], body: dict[str, Any], ctx: MapContext) -> None:
        agnai = self.extension(data, AGNAI)
        if agnai is None:
            return
        base = ctx.at("extensions", AGNAI)
        try:
            pieces = extension_to_body(agnai, ctx.child("extensions", AGNAI))
        except Malformed as exc:
            # the shape checks name paths inside the block ("$.persona.kind"): put the card's in front
            if exc.path is not None and exc.path.startswith("$") and not exc.path.startswith(base):
                exc.path = base + exc.path[1:]
            raise
        for section, fields in pieces.items():
            body.setdefault(section, {}).update(fields)

    def write(self, body: CharacterBody, data: dict[str, Any]) -> None:
        p = body.persona
        block = body_to_extension(
            structured=p.structured.model_dump(exclude_none=True) if p.structured is not None else None,
            description=body.identity.description,
            personality=p.personality,
            voice=p.voice.model_dump(exclude_none=True) if p.voice is not None else None,
            appearance=p.appearance,
            response_schema=body.settings.responseSchema,
            sprite=body.media.sprite.model_dump(exclude_none=True) if body.media.sprite is not None else None,
        )
        if block is not None:
            data.setdefault("extensions", {})[AGNAI] = block
