"""Chub's ``data.extensions.chub`` bag on Tavern cards, as a read-only lens onto canonical media.

Chub cards are ordinary CCv2/CCv3 cards; Chub namespaces its own keys under ``extensions.chub``
(docs/formats/chub.md#extensionschub-on-cards-chubdialect-a-lens): hub identity (``id``, ``full_path``), ``custom_css``,
``background_image``, sprite maps (``expressions``, ``alt_expressions``), ``related_lorebooks``,
``preset`` and Stages refs (``extensions``). Only two of them have a canonical home:

- ``background_image`` (a URL) -> a ``media.assets`` item ``{role: "background", ref: url,
  name: "background", label: "chub background_image"}``;
- ``expressions`` (else, when that is empty, ``alt_expressions``): label -> URL string or an object
  with ``url``/``uri``/``path``/``image``/``src`` -> ``media.assets`` items ``{role: "emotion",
  ref, name: label, label: "chub expression"}``, in map order.

The bag itself is **not** claimed: it stays in ``body.extensions["chub"]`` verbatim, so every
format that keeps unknown card extensions carries it through. The media items are derived from it
(a lens): they are appended after the card's own assets on read, and the writer removes exactly the
items the bag derives before it writes ``data.assets``, so they never turn into CCv3 assets on a
SillyTavern export. The ``label`` marks them: a CCv3 asset read by the shared mapper never has one.
An edited derived item (a different ref) is no longer the bag's and is written as a real asset.
Nothing in the bag is ever fetched or applied (CSS, Stages).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bunzai_codecs.core.codec import Coverage
from bunzai_codecs.formats._shared.wire import MapContext, first_text
from bunzai_codecs.formats.chub.detect import CHUB
from bunzai_codecs.formats.tavern.fields import TavernDialect, _assets

if TYPE_CHECKING:
    from bunzai_codecs.entities.character import CharacterBody, MediaAsset

BACKGROUND_LABEL = "chub background_image"
EXPRESSION_LABEL = "chub expression"
#: keys of an expression object that may hold its image reference, in the order they are tried
_REF_KEYS = ("url", "uri", "path", "image", "src")


def derived_media(bag: Any) -> list[dict[str, Any]]:
    """The ``media.assets`` items a Chub bag derives (see the module docstring); ``[]`` for anything
    that is not a bag or holds nothing usable. Never raises: odd values are simply not derived (the
    bag itself is kept verbatim either way)."""
    if not isinstance(bag, Mapping):
        return []
    out: list[dict[str, Any]] = []
    bg = bag.get("background_image")
    if isinstance(bg, str) and bg:
        out.append({"role": "background", "ref": bg, "name": "background", "label": BACKGROUND_LABEL})
    sprites = bag.get("expressions")
    if not isinstance(sprites, Mapping) or not sprites:
        sprites = bag.get("alt_expressions")
    if isinstance(sprites, Mapping):
        for label, v in sprites.items():
            ref = _sprite_ref(v)
            if ref:
                out.append({"role": "emotion", "ref": ref, "name": str(label), "label": EXPRESSION_LABEL})
    return out


def _sprite_ref(v: Any) -> str | None:
    if isinstance(v, str):
        return v
    return first_text(v, _REF_KEYS)


class ChubDialect(TavernDialect):
    """``extensions.chub`` -> background and expression media (a lens; the bag stays in extensions)."""

    name = CHUB
    claims = frozenset()
    coverage = Coverage.of(
        notes=[
            "Chub's extensions.chub background_image and expressions also read as media assets (a lens:"
            " the bag itself is written back verbatim from extensions)"
        ]
    )

    def read(self, data: Mapping[str, Any], body: dict[str, Any], ctx: MapContext) -> None:
        items = derived_media(self.extension(data, CHUB))
        if not items:
            return
        media = body["media"]
        media["assets"] = [*(media.get("assets") or ()), *items]

    def write(self, body: CharacterBody, data: dict[str, Any]) -> None:
        derived = derived_media(body.extensions.get(CHUB))
        assets = body.media.assets
        if not derived or not assets:
            return
        from bunzai_codecs.entities.character import MediaAsset

        rest: list[MediaAsset] = list(assets)
        for d in derived:
            m = MediaAsset.model_validate(d)
            if m in rest:
                rest.remove(m)
        if len(rest) == len(assets):
            return
        lens_free = body.model_copy(update={"media": body.media.model_copy(update={"assets": rest or None})})
        wire = _assets(lens_free)
        if wire is None:
            data.pop("assets", None)
        else:
            data["assets"] = wire


__all__ = ["BACKGROUND_LABEL", "CHUB", "EXPRESSION_LABEL", "ChubDialect", "derived_media"]
