"""marinara-story-bundle: Marinara-Engine's story bundle envelope (v2.4.x).

``{type: "marinara_story_bundle", version: 1, exportedAt, data: {name, description, characterIds,
personaIds, lorebookIds}}`` groups a story's characters, personas and lorebooks by their Marinara
row ids. It carries no entries of its own, only references into the app's database, so bunzai keeps
it as a lorebook-kind entity with ``lorebookType: "story_bundle"`` — the story's name and its (HTML)
description are canonical; the id lists ride the escrow twin — rather than dropping the file: an
archive run accounts for it and a same-format export gives it back.
"""

from __future__ import annotations

from typing import Any

import orjson

from bunzai_codecs.core.codec import Codec, Coverage, EmitContext
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.core.overlay import merge3
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.lorebook import LorebookBody
from bunzai_codecs.formats._shared.wire import wrong
from bunzai_codecs.formats.marinara._rows import EPOCH
from bunzai_codecs.formats.marinara.detect import STORY_BUNDLE_TYPE as TYPE

BUNDLE_TYPE = "story_bundle"
ID_LISTS = ("characterIds", "personaIds", "lorebookIds")


def body_from(tree: Any) -> dict[str, Any]:
    if not isinstance(tree, dict) or tree.get("type") != TYPE:
        raise Malformed(f"not a {TYPE} envelope", path="$.type")
    data = tree.get("data")
    if not isinstance(data, dict):
        raise wrong("$.data", "an object", data)
    out: dict[str, Any] = {"lorebookType": BUNDLE_TYPE}
    for key in ("name", "description"):
        v = data.get(key)
        if v is not None and not isinstance(v, str):
            raise wrong(f"$.data.{key}", "a string", v)
        if v is not None:
            out[key] = v
    for key in ID_LISTS:
        v = data.get(key)
        if v is not None and not (isinstance(v, list) and all(isinstance(x, str) for x in v)):
            raise wrong(f"$.data.{key}", "an array of ids", v)
    return out


def to_native(body: dict[str, Any], exported_at: str = EPOCH) -> dict[str, Any]:
    data: dict[str, Any] = {"name": body.get("name", ""), "description": body.get("description", "")}
    for key in ID_LISTS:
        data[key] = []
    return {"type": TYPE, "version": 1, "exportedAt": exported_at, "data": data}


class MarinaraStoryBundleCodec(Codec):
    id = "marinara-story-bundle"
    coverage = Coverage.of(
        "name",
        "description",
        notes=[
            "a story bundle holds only references (character, persona and lorebook row ids), kept in "
            "the escrow twin; entries and book settings have no place in it",
            "lorebookType is not held: the envelope is the type, and every bundle reads back as "
            "`story_bundle`",
        ],
    )

    def decode(self, s: Sniff) -> Decoded:
        t = s.require_json()
        return Decoded([self.entity(s, body_from(t), raw=t)])

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        assert isinstance(entity.body, LorebookBody)
        new = entity.body.dump()
        twin = entity.twin(self.id)
        if twin is None:
            tree = to_native(new, ctx.options.get("exportedAt", EPOCH))
        else:
            raw = twin.raw
            tree = merge3(raw, to_native(body_from(raw)), to_native(new))
        return orjson.dumps(tree, option=orjson.OPT_INDENT_2)
