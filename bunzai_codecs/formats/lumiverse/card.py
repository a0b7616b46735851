"""``lumiverse``: Lumiverse characters — a Tavern card with Lumiverse's bare ``data.extensions`` keys,
as JSON, PNG, or a zip with ``card.json`` + ``lumiverse_modules.json`` + asset files.

Lumiverse has no ``extensions.lumiverse`` namespace: its keys sit directly in ``data.extensions``
(docs/formats/lumiverse.md#character). The fingerprint is any of: an object ``expressions``,
``expression_groups``, ``alternate_fields`` or ``lumiverse_image_gen_lora``, an array
``alternate_avatars``, ``world_book_ids`` or ``databank_ids``, a string ``alternate_character_name``,
or a ``ttsVoice`` key.

Detection is the Tavern lineage's, by the ``lumiverse`` row (``formats/table.py``): its mark is the
fingerprint, its own file the zip (``lumiverse/detect.py::archive``):

=================================================================  =====
input                                                              score
=================================================================  =====
zip with ``lumiverse_modules.json`` (and no ``module.risum``)      1.0
JSON card (V3, V2 or flat) or PNG ``ccv3``/``chara`` payload with  0.95
the fingerprint
zip with ``module.risum``; anything else                           0
=================================================================  =====

The zip scores 1.0 like RisuAI's ``.charx`` (any zip with ``card.json``); the tie is broken by
content and priority, never by import order: this codec only claims a zip that has
``lumiverse_modules.json``, and its ``priority`` (10) ranks it above ``risu`` (0), so the registry
asks it first and its certain score ends detection. A plain charx (no modules file) is never
claimed here.

Mapping: the shared Tavern mapper (plus the Chub lens). Lumiverse's keys have no canonical home
(canonical has no alternate-field variants, expression packs, LoRA or TTS voice ids; the
``alternate_character_name`` is a prompt-name override that would collide with CCv3 ``nickname``),
so they stay in ``body.extensions`` verbatim — which also means a SillyTavern export carries them.

Zip: ``card.json`` is decoded like a JSON card (its book and scripts become linked entities); the
modules file's ``regex_scripts[]`` (module rows: a single-string ``target``) decode into one more
linked regex set, mapped by ``lumiverse-regex`` and marked as the module's (its twin, the row list,
is stored under this codec's id with ``module: true``). The whole archive rides in the escrow blobs
(``blobs.archive``). A same-format export returns the archive unchanged when nothing changed, and
otherwise rewrites only ``card.json`` (the overlaid card) and ``lumiverse_modules.json`` (the
re-embedded module scripts), keeping every other member's bytes, the member order, each member's
compression method and any bytes before the zip (a JPEG polyglot). ``options["container"] = "json"``
writes the card alone (the module scripts are then written beside it by ``bundle.write``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import orjson

from bunzai_codecs.core import archive
from bunzai_codecs.core import media as media_mod
from bunzai_codecs.core.codec import Container, Coverage, EmitContext
from bunzai_codecs.core.entity import KNOWLEDGE_REFS, CanonicalEntity, Decoded
from bunzai_codecs.core.errors import Malformed, Unsupported
from bunzai_codecs.core.sniff import Sniff, parse_json
from bunzai_codecs.entities import CharacterBody, RegexSetBody
from bunzai_codecs.entities.character import MediaAsset
from bunzai_codecs.formats._shared.links import DROP, KEEP
from bunzai_codecs.formats._shared.wire import MapContext, wrong
from bunzai_codecs.formats.lumiverse.detect import MODULES_JSON
from bunzai_codecs.formats.lumiverse.regex import body_to_scripts as lv_body_to_scripts
from bunzai_codecs.formats.lumiverse.regex import merge_scripts, scripts_to_body
from bunzai_codecs.formats.tavern.card import CardTwin, TavernCard
from bunzai_codecs.formats.tavern.fields import TAVERN_EMBEDDED
from bunzai_codecs.formats.tavern.links import linked_scripts

LUMIVERSE = "lumiverse"
CARD_JSON = "card.json"
#: the escrow part of the module scripts' regex-set entity
MODULE_PART = ("regex", "lumiverse_modules")


def is_module_set(entity: CanonicalEntity) -> bool:
    """A regex set that came from a Lumiverse zip's ``lumiverse_modules.json``."""
    twin = entity.twin(LUMIVERSE)
    return isinstance(twin, CardTwin) and twin.module is True


class LumiverseCard(TavernCard):
    """Lumiverse characters: Tavern cards with Lumiverse's bare extension keys (JSON, PNG, zip)."""

    id = "lumiverse"
    #: a zip is written only for an entity read from a Lumiverse zip (its members are the twin's)
    containers: ClassVar[tuple[Container, ...]] = (
        *TavernCard.containers,
        Container("zip", (".zip",), "zip", images=True),
    )
    coverage = TavernCard.coverage | Coverage.of(
        notes=[
            "alternate fields/avatars, expression packs, LoRA, TTS voice and world/databank ids ride in"
            " `extensions` verbatim (no canonical home)",
            "a zip keeps every asset member and the modules file byte for byte; module regex scripts"
            " are a linked regex set",
            "a fresh export is a JSON card: a linked lorebook is embedded as its character_book and"
            " linked regex sets as its extensions.regex_scripts, holding what those hold, not what a"
            " Lumiverse regex file holds",
        ]
    )
    embedded_coverage = TAVERN_EMBEDDED

    # -- decode ----------------------------------------------------------------------------------

    def decode(self, s: Sniff) -> Decoded:
        if s.is_zip:
            return self._decode_zip(s)
        return super().decode(s)

    def _decode_zip(self, s: Sniff) -> Decoded:
        z = s.require_zip()
        if CARD_JSON not in z:
            raise Malformed("Lumiverse zip has no card.json", path=CARD_JSON)
        tree = parse_json(z.read(CARD_JSON), what="card.json")
        if not isinstance(tree, dict):
            raise wrong(f"{CARD_JSON}:$", "a character card object", tree)
        modules: Any = None
        if MODULES_JSON in z:
            modules = parse_json(z.read(MODULES_JSON), what=MODULES_JSON)
            if not isinstance(modules, dict):
                raise wrong(f"{MODULES_JSON}:$", "an object", modules)
        entities = self.decode_tree(
            s,
            tree,
            media=_member_bytes(z),
            more_assets=module_media(modules, z),
            zip={"card": CARD_JSON},
            blobs={"archive": s.data},
        )
        card = entities[0]
        if modules is not None:
            rows = modules.get("regex_scripts")
            if rows is not None and rows != []:
                ctx = MapContext(f"{MODULES_JSON}:$.regex_scripts")
                body = scripts_to_body(rows, ctx=ctx)
                rx = self.entity(s, body, raw=rows, part=MODULE_PART, kind="regex", module=True)
                rx.warnings.extend(ctx.warnings)
                entities.append(rx)
                card.links = {KNOWLEDGE_REFS: [*card.links.get(KNOWLEDGE_REFS, []), rx.id]}
        return Decoded(entities)

    # -- encode ----------------------------------------------------------------------------------

    def script_sets(self, entity: CanonicalEntity, ctx: EmitContext) -> list[CanonicalEntity]:
        """``card.json``'s own ``regex_scripts``: every linked regex set except the module's (a
        resolved module set is not the card's: with every regex link resolved and none of them the
        card's own set, the set was unlinked and its stale copy goes)."""
        return [r for r in ctx.refs(entity, "regex") if not is_module_set(r)]

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        twin = entity.twin(self.id)
        want = ctx.options.get("container")
        from_zip = isinstance(twin, CardTwin) and twin.zip is not None
        if want == "zip" and not from_zip:
            raise Unsupported("a Lumiverse zip is written only for a card read from one; write json or png")
        if not from_zip or want in ("json", "png"):
            return super().encode(entity, ctx)
        assert twin is not None
        raw = twin.raw
        blob = twin.blob("archive")
        if not isinstance(raw, dict) or blob is None:
            raise Unsupported("the escrow twin of this Lumiverse zip is incomplete; export as json")
        z = archive.open_zip(blob)
        # the modules file's images are archive members, not card assets: new bytes for one of them
        # replace its member; the rest of the body is the card's
        module_paths = set(_module_paths(z))
        replaced: dict[str, bytes] = {}
        assert isinstance(entity.body, CharacterBody)
        kept = []
        for a in entity.body.media.assets or []:
            if a.ref in module_paths:
                data = media_mod.bytes_of(entity.media, a)
                if data is not None and data != z.read(a.ref):
                    replaced[a.ref] = data
            else:
                kept.append(a)
        card_body = entity.body.model_copy(
            update={"media": entity.body.media.model_copy(update={"assets": kept or None})}
        )
        body = media_mod.wire(card_body, entity.media, inline=lambda _p, a: not _member_is(z, a))
        assert isinstance(body, CharacterBody)
        tree, _ = self.overlay_tree(entity, raw, ctx, body)
        modules_bytes = self._modules(entity, ctx, z)
        if tree is raw and modules_bytes is None and not replaced:
            return blob
        members = []
        for m in z.members:
            data = z.read(m.name)
            if m.name == CARD_JSON and tree is not raw:
                data = orjson.dumps(tree, option=orjson.OPT_INDENT_2)
            elif m.name == MODULES_JSON and modules_bytes is not None:
                data = modules_bytes
            elif m.name in replaced:
                data = replaced[m.name]
            members.append(archive.ZipMemberSpec(m.name, data, m.method))
        return archive.write_zip(members, prefix=z.prefix)

    def _modules(self, entity: CanonicalEntity, ctx: EmitContext, z: archive.ZipReader) -> bytes | None:
        """New bytes for ``lumiverse_modules.json``, or ``None`` to keep the member as it is."""
        if MODULES_JSON not in z:
            return None
        sets = [r for r in ctx.refs(entity, "regex") if is_module_set(r)][:1]  # one modules file
        modules = parse_json(z.read(MODULES_JSON), what=MODULES_JSON)
        if not isinstance(modules, dict):
            return None
        old = modules.get("regex_scripts")
        new = linked_scripts(self.id, entity, ctx, old or None, sets, embed=_module_rows)
        if new is KEEP or (sets and new is _twin_rows(sets[0], self.id) and new == old):
            return None  # nothing linked or unlinked, or the module's own rows unedited
        if new is DROP:
            new = []  # the links no longer name the module's scripts
        return orjson.dumps({**modules, "regex_scripts": new}, option=orjson.OPT_INDENT_2)


def _module_rows(rx: CanonicalEntity, codec_id: str) -> list[Any]:
    """A linked module regex set as module rows: its twin's rows with the body's edits (the rows
    themselves when unedited), else fresh rows."""
    assert isinstance(rx.body, RegexSetBody)
    rows = _twin_rows(rx, codec_id)
    if rows is not None:
        return merge_scripts(rows, rx.body, module=True)
    return lv_body_to_scripts(rx.body, module=True)


def _twin_rows(rx: CanonicalEntity, codec_id: str) -> list[Any] | None:
    twin = rx.twin(codec_id)
    return twin.raw if twin is not None and isinstance(twin.raw, list) else None


def _module_paths(z: archive.ZipReader) -> list[str]:
    if MODULES_JSON not in z:
        return []
    try:
        modules = parse_json(z.read(MODULES_JSON), what=MODULES_JSON)
    except Malformed:
        return []
    return [a["ref"] for a in module_media(modules, z)]


def module_media(modules: Any, z: archive.ZipReader) -> list[dict[str, Any]]:
    """The images ``lumiverse_modules.json`` names that are members of the zip, as media assets:
    each expression (``emotion``, named by its label), each character's expression group
    (``emotion``, named ``<character>--<label>``) and each alternate avatar (``other``, named by its
    id, with its label). The ref is the member path."""
    if not isinstance(modules, dict):
        return []
    out: list[dict[str, Any]] = []

    def add(role: str, name: Any, path: Any, label: Any = None) -> None:
        if isinstance(path, str) and path in z:
            item: dict[str, Any] = {"role": role, "ref": path}
            if isinstance(name, str):
                item["name"] = name
            if isinstance(label, str):
                item["label"] = label
            out.append(item)

    expr = modules.get("expressions")
    mappings = expr.get("mappings") if isinstance(expr, dict) else None
    for label, path in (mappings or {}).items() if isinstance(mappings, dict) else ():
        add("emotion", label, path)
    groups = modules.get("expression_groups")
    by_char = groups.get("groups") if isinstance(groups, dict) else None
    for char, labels in (by_char or {}).items() if isinstance(by_char, dict) else ():
        for label, path in labels.items() if isinstance(labels, dict) else ():
            add("emotion", f"{char}--{label}", path)
    for av in (
        modules.get("alternate_avatars") or [] if isinstance(modules.get("alternate_avatars"), list) else []
    ):
        if isinstance(av, dict):
            add("other", av.get("id"), av.get("path"), av.get("label"))
    return out


def _member_bytes(z: archive.ZipReader) -> media_mod.Resolver:
    """The bytes of a card asset: the member an ``embeded://`` ref or a modules path names."""

    def resolve(_path: str, a: MediaAsset) -> bytes | None:
        name = _member_name(a.ref)
        return z.read(name) if name is not None and name in z else None

    return resolve


def _member_name(ref: str) -> str | None:
    low = ref[:12].lower()
    for prefix in ("embeded://", "embedded://"):
        if low.startswith(prefix):
            return ref[len(prefix) :]
    return ref if ref and ":" not in ref else None


def _member_is(z: archive.ZipReader, a: MediaAsset) -> bool:
    name = _member_name(a.ref)
    return name is not None and name in z and media_mod.digest(z.read(name)) == a.sha256


__all__ = ["LumiverseCard", "is_module_set", "module_media"]
