"""byaf: the Backyard Archive Format (``.byaf``, v1): a zip of one character and its scenarios.

Layout (ahoylabs/byaf v1 specs)::

    manifest.json                        {schemaVersion, createdAt, author?, characters: [1 path], scenarios: [paths]}
    characters/<id>/character.json       {schemaVersion, id, name, displayName, isNSFW, persona, createdAt,
                                          updatedAt, loreItems: [{key, value}], images: [{path, label}]}
    characters/<id>/images/<file>        image paths in character.json are relative to characters/<id>/
    scenarios/<name>.json                samplers, formattingInstructions, narrative, firstMessages (0-1),
                                          exampleMessages, messages, backgroundImage? (archive-root path)

Canonical: ``displayName`` is the name and ``name`` the nickname when they differ; ``persona`` the
description; the first scenario gives the system prompt (``formattingInstructions``), the scenario
(``narrative``), the first message and the example dialogue (each example message a ``<START>``
block); each further scenario's first message is an alternate greeting titled by the scenario's
``title``; images are the portrait (label ``avatar``, else the first) and other assets, referenced
by their path; ``author.name`` is the creator. ``loreItems`` are a linked lorebook. Samplers,
``isNSFW``, chat ``messages``, ``model``, ``grammar``, ``promptTemplate``, the other scenarios'
settings, ids and every file's bytes ride in the escrow twin.

Same-format export keeps the member names and order, every non-JSON member's bytes and every JSON
key the body does not decide. Archives are read within ``core/archive`` bounds.
"""

from __future__ import annotations

import base64
import binascii
import posixpath
import re
from dataclasses import dataclass
from typing import Any, cast

import orjson

from bunzai_codecs.core import archive
from bunzai_codecs.core import media as media_mod
from bunzai_codecs.core.codec import Codec, Container, Coverage, EmitContext
from bunzai_codecs.core.entity import KNOWLEDGE_REFS, CanonicalEntity, Decoded
from bunzai_codecs.core.errors import Malformed, Unsupported, json_path
from bunzai_codecs.core.escrow import Twin, facet
from bunzai_codecs.core.overlay import merge3
from bunzai_codecs.core.sniff import Sniff, parse_json
from bunzai_codecs.entities.character import CharacterBody, MediaAsset
from bunzai_codecs.entities.lorebook import LorebookBody
from bunzai_codecs.formats._shared.wire import MapContext
from bunzai_codecs.formats.backyard import common
from bunzai_codecs.formats.backyard.detect import _CHARACTER_PATH, MANIFEST

_SCENARIO_PATH = re.compile(r"^scenarios/[^/]+\.json$")
_START = "<START>"
#: the media role of the first scenario's background image
BACKGROUND = "background"
_MIME = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".webp": "image/webp",
    ".gif": "image/gif",
}
#: image types an archive image is written as (any other image keeps its own type's extension)
_EXT = {"image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp", "image/gif": ".gif"}

#: scenario keys in the order Backyard writes them, with what a fresh scenario holds
_SCENARIO_DEFAULTS: dict[str, Any] = {
    "schemaVersion": 1,
    "formattingInstructions": "",
    "minP": 0.1,
    "minPEnabled": True,
    "temperature": 0.8,
    "repeatPenalty": 1.05,
    "repeatLastN": 256,
    "topK": 30,
    "topP": 0.9,
    "exampleMessages": [],
    "canDeleteExampleMessages": True,
    "firstMessages": [],
    "narrative": "",
    "promptTemplate": None,
    "grammar": None,
    "messages": [],
}
#: what a new scenario (an added greeting) copies from the first scenario
_SHARED_SCENARIO_KEYS = (
    "formattingInstructions",
    "minP",
    "minPEnabled",
    "temperature",
    "repeatPenalty",
    "repeatLastN",
    "topK",
    "topP",
    "exampleMessages",
    "canDeleteExampleMessages",
    "narrative",
    "promptTemplate",
    "grammar",
    "model",
)


# -- examples: one example message per <START> block -----------------------------------------


def examples_from_messages(texts: list[str]) -> str | None:
    return "\n".join(f"{_START}\n{t}" for t in texts) if texts else None


def examples_to_messages(text: str | None) -> list[str]:
    """Split example dialogue at ``<START>`` lines (the inverse of ``examples_from_messages``)."""
    if not text:
        return []
    blocks: list[list[str]] = []
    head: list[str] = []
    current = head
    for line in text.split("\n"):
        if line.strip() == _START:
            current = []
            blocks.append(current)
        else:
            current.append(line)
    out = ["\n".join(b) for b in blocks]
    if any(line.strip() for line in head):
        out.insert(0, "\n".join(head))
    return out


# -- native <-> canonical ----------------------------------------------------------------------


def _texts(r: MapContext, sc: dict[str, Any], key: str) -> list[str]:
    """The ``text`` of each ``{text}`` object in ``sc[key]`` (``r``: the context of ``sc``)."""
    return [
        r.text(r.obj(m, (key, i)).get("text"), (key, i, "text"), "")
        for i, m in enumerate(common.opt_array(r, sc, key))
    ]


def body_from_archive(raw: dict[str, Any], r: MapContext) -> dict[str, Any]:
    """The canonical character of a parsed archive ``{manifest, character, scenarios}``; ``r`` reads
    the character and notes what it coerced (a scenario is read in a context at its own root that
    shares those notes)."""
    c, manifest, scenarios = raw["character"], raw["manifest"], raw["scenarios"]
    sr = MapContext("$", r.warnings)
    display = r.text(c.get("displayName"), ("displayName",), "")
    short = r.text(c.get("name"), ("name",))
    name = display or short or ""
    author = manifest.get("author")
    creator = author.get("name") if isinstance(author, dict) else None

    images: list[dict[str, Any]] = []
    for i, raw_img in enumerate(common.opt_array(r, c, "images")):
        img = r.obj(raw_img, ("images", i))
        path = r.text(img.get("path"), ("images", i, "path"), "")
        label = r.text(img.get("label"), ("images", i, "label"))
        ext = posixpath.splitext(path)[1].lower()
        images.append(
            {
                "role": "other",
                "ref": path,
                "name": posixpath.basename(path) or None,
                "label": label or None,
                "mime": _MIME.get(ext),
            }
        )
    portrait = next((a for a in images if a["label"] == "avatar"), images[0] if images else None)
    if portrait is not None:
        portrait["role"] = "portrait"
    bg = scenarios[0].get("backgroundImage") if scenarios else None
    if isinstance(bg, str) and bg:
        # the first scenario's background (an archive-root path): the character's background
        images.append(
            {
                "role": BACKGROUND,
                "ref": bg,
                "name": posixpath.basename(bg) or None,
                "mime": _MIME.get(posixpath.splitext(bg)[1].lower()),
            }
        )

    body: dict[str, Any] = {
        "identity": {
            "name": name,
            "nickname": short if short is not None and short != name else None,
            "description": common.opt_text(common.from_backyard(r.text(c.get("persona"), ("persona",), ""))),
        },
        "media": {"portrait": portrait, "assets": [a for a in images if a is not portrait] or None},
        "attribution": {
            "creator": creator if isinstance(creator, str) and creator else None,
            "createdAt": common.card_date(c.get("createdAt")),
            "updatedAt": common.card_date(c.get("updatedAt")),
        },
    }
    if scenarios:
        first = scenarios[0]
        greeting = _texts(sr, first, "firstMessages")
        instructions = sr.text(first.get("formattingInstructions"), ("formattingInstructions",), "")
        body["prompts"] = {"systemPrompt": common.opt_text(common.from_backyard(instructions))}
        body["persona"] = {
            "scenario": common.opt_text(
                common.from_backyard(sr.text(first.get("narrative"), ("narrative",), ""))
            )
        }
        body["greetings"] = {
            "firstMessage": common.from_backyard(greeting[0]) if greeting else None,
            "alternateGreetings": [
                {
                    "text": common.from_backyard(next(iter(_texts(sr, sc, "firstMessages")), "")),
                    "title": sr.text(sc.get("title"), ("title",)),
                }
                for sc in scenarios[1:]
            ]
            or None,
        }
        body["examples"] = {
            "exampleMessages": examples_from_messages(
                [common.from_backyard(t) for t in _texts(sr, first, "exampleMessages")]
            )
        }
    return body


def _image_entry(a: MediaAsset, portrait: bool) -> dict[str, Any]:
    label = a.label if a.label is not None else ("avatar" if portrait else "")
    return {"path": a.ref, "label": label}


def mapped_archive(body: CharacterBody, char_id: str) -> dict[str, Any]:
    """The parts of ``{manifest, character, scenarios}`` the canonical body decides."""
    ident, media = body.identity, body.media
    images = [_image_entry(media.portrait, True)] if media.portrait is not None else []
    images += [_image_entry(a, False) for a in media.assets or [] if a.role != BACKGROUND]
    background = next((a.ref for a in media.assets or [] if a.role == BACKGROUND), None)

    def said(text: str) -> list[dict[str, Any]]:
        return [{"characterID": char_id, "text": common.to_backyard(text)}]

    first = body.greetings.firstMessage
    scenarios: list[dict[str, Any]] = [
        {
            **({"backgroundImage": background} if background is not None else {}),
            "formattingInstructions": common.to_backyard(body.prompts.systemPrompt or ""),
            "exampleMessages": [
                m for t in examples_to_messages(body.examples.exampleMessages) for m in said(t)
            ],
            "firstMessages": said(first) if first is not None else [],
            "narrative": common.to_backyard(body.persona.scenario or ""),
        }
    ]
    for g in body.greetings.alternateGreetings or []:
        sc: dict[str, Any] = {"firstMessages": said(g.text) if g.text else []}
        if g.title is not None:
            sc = {"title": g.title, **sc}
        scenarios.append(sc)
    creator = body.attribution.creator
    return {
        "manifest": {"author": {"name": creator}} if creator else {},
        "character": {
            "name": ident.nickname if ident.nickname is not None else ident.name,
            "displayName": ident.name,
            "persona": common.to_backyard(ident.description or ""),
            "createdAt": common.unix_to_iso(body.attribution.createdAt),
            "updatedAt": common.unix_to_iso(body.attribution.updatedAt),
            "images": images,
        },
        "scenarios": scenarios,
    }


def full_scenario(mapped: dict[str, Any], template: dict[str, Any]) -> dict[str, Any]:
    """A complete scenario: ``mapped`` keys, then ``template``'s shared settings, then defaults."""
    out: dict[str, Any] = {}
    if "title" in mapped:
        out["title"] = mapped["title"]
    for k, default in _SCENARIO_DEFAULTS.items():
        if k in mapped:
            out[k] = mapped[k]
        elif k in _SHARED_SCENARIO_KEYS and k in template:
            out[k] = template[k]
        else:
            out[k] = default
    if "model" in template:
        out["model"] = template["model"]
    if "backgroundImage" in mapped:
        out["backgroundImage"] = mapped["backgroundImage"]
    return out


def byaf_lore_items(book: LorebookBody) -> list[dict[str, Any]]:
    """Lore items for a BYAF character: ``{key, value}`` only, keys unique (a repeated key's text
    is appended to the first item with that key)."""
    out: list[dict[str, Any]] = []
    by_key: dict[str, dict[str, Any]] = {}
    for item in common.book_to_lore_items(book, with_ids=False):
        first = by_key.get(item["key"])
        if first is None:
            by_key[item["key"]] = item
            out.append(item)
        else:
            first["value"] = f"{first['value']}\n\n{item['value']}"
    return out


def _dumps(tree: Any) -> bytes:
    return orjson.dumps(tree, option=orjson.OPT_INDENT_2)


def _data_uri(ref: str) -> tuple[bytes, str] | None:
    """(bytes, extension) of a base64 ``data:image/...`` reference, else ``None``."""
    m = re.match(r"^data:(image/[a-z+.-]+);base64,", ref)
    if m is None or (m.group(1) not in _EXT and m.group(1) not in media_mod.MIME_EXT):
        return None
    try:
        ext = _EXT.get(m.group(1)) or "." + media_mod.MIME_EXT[m.group(1)]
        return base64.b64decode(ref[m.end() :], validate=True), ext
    except (binascii.Error, ValueError):
        return None


# -- the codec -------------------------------------------------------------------------------


@dataclass(eq=False)
class ArchiveTwin(Twin):
    """A ``.byaf`` archive's escrow: its members in order with their compression methods
    (``members``: ``[name, method]`` pairs) and the bytes of the members the mapping does not read
    (``blobs``, by member name)."""

    members: list[Any] | None = facet(list)


class ByafCodec(Codec):
    id = "byaf"
    twin_type = ArchiveTwin
    containers = (Container("byaf", (".byaf",), "zip", images=True),)
    coverage = Coverage.of(
        *common.CHARACTER_PATHS,
        "greetings.alternateGreetings",
        "attribution.creator",
        *media_mod.PORTRAIT_BYTES,
        *media_mod.ASSET_BYTES,
        notes=[
            "the first scenario holds the system prompt, scenario, first message and examples;"
            " each further scenario is an alternate greeting titled by its `title`",
            "example dialogue: one example message per `<START>` block",
            "placeholders `{character}`/`{user}` become `{{char}}`/`{{user}}` and back",
            "images keep their bytes as archive files: the portrait (label avatar) and other images in"
            " characters/<id>/images/, a background image (role background) as the first scenario's"
            " backgroundImage; a web URL or path without bytes cannot be packed and is left out",
            "samplers, `isNSFW`, chat `messages`, `model`, `grammar`, `promptTemplate`, the further"
            " scenarios' own settings and backgrounds: escrow only",
            "`loreItems` are a linked lorebook (keywords, text); keys are unique, so repeated keys merge",
        ],
    )

    def decode(self, s: Sniff) -> Decoded:
        z = s.require_zip()
        manifest = _read_json(z, MANIFEST)
        chars = manifest.get("characters")
        if not isinstance(chars, list) or not chars or not all(isinstance(p, str) for p in chars):
            raise Malformed(
                "manifest.json: characters must be a non-empty array of paths", path="$.characters"
            )
        if len(chars) != 1:
            raise Unsupported(
                f"manifest.json lists {len(chars)} characters; a BYAF archive holds exactly one",
                path="$.characters",
            )
        cpath = chars[0]
        m = _CHARACTER_PATH.match(cpath)
        if m is None:
            raise Malformed(
                f"manifest.json: {cpath!r} is not characters/<id>/character.json", path="$.characters[0]"
            )
        if cpath not in z:
            raise Malformed(f"manifest.json names a missing file: {cpath}", path="$.characters[0]")
        character = _read_json(z, cpath)
        scen_paths = manifest.get("scenarios", [])
        if not isinstance(scen_paths, list) or not all(isinstance(p, str) for p in scen_paths):
            raise Malformed("manifest.json: scenarios must be an array of paths", path="$.scenarios")
        scenarios = []
        for i, p in enumerate(scen_paths):
            if not _SCENARIO_PATH.match(p):
                raise Malformed(
                    f"manifest.json: {p!r} is not scenarios/<name>.json", path=json_path(("scenarios", i))
                )
            if p not in z:
                raise Malformed(f"manifest.json names a missing file: {p}", path=json_path(("scenarios", i)))
            sc = _read_json(z, p)
            bg = sc.get("backgroundImage")
            if bg is not None and (not isinstance(bg, str) or bg not in z):
                raise Malformed(f"{p} names a missing background image: {bg!r}", path="$.backgroundImage")
            scenarios.append(sc)

        cdir = posixpath.dirname(cpath)
        r = MapContext("$")
        try:
            images, lore = (
                common.opt_array(r, character, "images"),
                common.opt_array(r, character, "loreItems"),
            )
        except Malformed as exc:
            raise _within(exc, cpath) from None
        for i, img in enumerate(images):
            where = json_path(("images", i, "path"))
            rel = img.get("path") if isinstance(img, dict) else None
            if not isinstance(rel, str):
                raise Malformed(f"{cpath}: an image needs a string path", path=where)
            member = f"{cdir}/{rel}"
            try:
                archive.safe_member_name(member)
            except Malformed:
                raise Malformed(f"{cpath}: unsafe image path {rel!r}", path=where) from None
            if member not in z:
                raise Malformed(f"{cpath} names a missing image: {member}", path=where)

        raw = {"manifest": manifest, "character": character, "scenarios": scenarios}
        json_members = {MANIFEST, cpath, *scen_paths}
        members = [[mm.name, mm.method] for mm in z.members]
        blobs = {
            mm.name: z.read(mm.name) for mm in z.members if not mm.is_dir and mm.name not in json_members
        }
        warnings = []
        if character.get("id") != m.group(1):
            warnings.append(f"character id {character.get('id')!r} differs from its folder {m.group(1)!r}")
        try:
            body = body_from_archive(raw, r)
        except Malformed as exc:
            raise _within(exc, cpath) from None
        primary = self.entity(s, body, raw=raw, media=_resolver(cdir, blobs), members=members, blobs=blobs)
        primary.warnings.extend(warnings + r.warnings)
        entities = [primary]
        if lore:
            try:
                book = common.lore_book(self, s, lore, "$.loreItems")
            except Malformed as exc:
                raise _within(exc, cpath) from None
            primary.links = {KNOWLEDGE_REFS: [book.id]}
            entities.append(book)
        return Decoded(entities)

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        own = entity.twin(self.id)
        twin = own if isinstance(own, ArchiveTwin) else ArchiveTwin()
        raw = twin.raw
        cpath = raw["manifest"]["characters"][0] if isinstance(raw, dict) and _is_archive_tree(raw) else ""
        resolve = _resolver(posixpath.dirname(cpath), twin.blobs or {})

        def elsewhere(path: str, a: MediaAsset) -> bool:
            # bytes that are not this archive's member: written as a new member (from a data: URL)
            data = resolve(path, a) if cpath else None
            return data is None or media_mod.digest(data) != a.sha256

        body = cast(CharacterBody, media_mod.wire(entity.body, entity.media, inline=elsewhere))
        if not _is_archive_tree(raw):
            return self._fresh(entity, body, ctx)
        assert isinstance(raw, dict)
        char_id = raw["character"].get("id")
        char_id = char_id if isinstance(char_id, str) else ""
        base = mapped_archive(CharacterBody.model_validate(body_from_archive(raw, MapContext())), char_id)
        merged = merge3(raw, base, mapped_archive(body, char_id))

        manifest = merged["manifest"]
        cpath = raw["manifest"]["characters"][0]
        cdir = posixpath.dirname(cpath)
        blobs: dict[str, bytes] = twin.blobs or {}
        extra: list[tuple[str, bytes]] = []
        character = dict(merged["character"])
        character["images"] = _resolve_images(character.get("images", []), cdir, blobs, extra)
        merged = {**merged, "scenarios": _resolve_background(merged["scenarios"], blobs, extra)}
        lore = self._lore(entity, ctx, raw["character"].get("loreItems", []))
        if "loreItems" in character or lore:
            character["loreItems"] = lore

        raw_paths: list[str] = raw["manifest"].get("scenarios", [])
        scenarios = list(merged["scenarios"])
        paths = list(raw_paths[: len(scenarios)])
        taken = set(raw_paths)
        for i in range(len(paths), len(scenarios)):
            scenarios[i] = full_scenario(scenarios[i], scenarios[0] if i else {})
            n = i + 1
            while f"scenarios/scenario{n}.json" in taken:
                n += 1
            paths.append(f"scenarios/scenario{n}.json")
            taken.add(paths[-1])
        if paths != raw_paths:
            manifest = {**manifest, "scenarios": paths}

        out: list[archive.ZipMemberSpec] = []
        written: set[str] = set()
        for name, method in twin.members or []:
            data: bytes | None
            if name == MANIFEST:
                data = _dumps(manifest)
            elif name == cpath:
                data = _dumps(character)
            elif name in raw_paths:
                data = _dumps(scenarios[paths.index(name)]) if name in paths else None
            elif name.endswith("/"):
                data = b""
            else:
                data = blobs.get(name)
            if data is not None:
                out.append(archive.ZipMemberSpec(name, data, method))
                written.add(name)
        for name, data in [*extra, *((p, _dumps(scenarios[i])) for i, p in enumerate(paths))]:
            if name not in written:
                out.append(archive.ZipMemberSpec(name, data, archive.ZIP_STORED))
                written.add(name)
        return archive.write_zip(out, method=archive.ZIP_STORED)

    def _fresh(self, entity: CanonicalEntity, body: CharacterBody, ctx: EmitContext) -> bytes:
        char_id = "c" + entity.id.rsplit("-", 1)[-1][:24]
        mapped = mapped_archive(body, char_id)
        cdir = f"characters/{char_id}"
        extra: list[tuple[str, bytes]] = []
        images = _resolve_images(mapped["character"]["images"], cdir, {}, extra)
        mapped["scenarios"] = _resolve_background(mapped["scenarios"], {}, extra)
        c = mapped["character"]
        character = {
            "schemaVersion": 1,
            "id": char_id,
            "name": c["name"],
            "displayName": c["displayName"],
            "isNSFW": False,
            "persona": c["persona"],
            "createdAt": c["createdAt"],
            "updatedAt": c["updatedAt"],
            "loreItems": self._lore(entity, ctx, []),
            "images": images,
        }
        first = full_scenario(mapped["scenarios"][0], {})
        scenarios = [first, *(full_scenario(sc, first) for sc in mapped["scenarios"][1:])]
        paths = [f"scenarios/scenario{i + 1}.json" for i in range(len(scenarios))]
        manifest: dict[str, Any] = {
            "schemaVersion": 1,
            "createdAt": common.unix_to_iso(body.attribution.updatedAt or body.attribution.createdAt),
            **mapped["manifest"],
            "characters": [f"{cdir}/character.json"],
            "scenarios": paths,
        }
        members: list[tuple[str, bytes]] = [
            (MANIFEST, _dumps(manifest)),
            ("characters/", b""),
            (f"{cdir}/", b""),
            (f"{cdir}/images/", b""),
            *((n, b) for n, b in extra if not n.startswith("scenarios/")),
            (f"{cdir}/character.json", _dumps(character)),
            ("scenarios/", b""),
            *((n, b) for n, b in extra if n.startswith("scenarios/")),
            *((p, _dumps(sc)) for p, sc in zip(paths, scenarios, strict=True)),
        ]
        return archive.write_zip(members, method=archive.ZIP_STORED)

    def _lore(self, entity: CanonicalEntity, ctx: EmitContext, kept: Any) -> list[Any]:
        """The ``loreItems`` to write: the linked lorebook re-embedded, else the twin's copy."""
        return common.lore_to_write(self.id, entity, ctx, kept, byaf_lore_items)


def _read_json(z: archive.ZipReader, name: str) -> dict[str, Any]:
    if name not in z:
        raise Malformed(f"the archive has no {name}", path=name)
    tree = parse_json(z.read(name), what=name)
    if not isinstance(tree, dict):
        raise Malformed(f"{name} is not a JSON object", path="$")
    return tree


def _within(exc: Malformed, member: str) -> Malformed:
    exc.message = f"{member}: {exc.message}"
    exc.args = (exc.message,)
    return exc


def _is_archive_tree(raw: Any) -> bool:
    return (
        isinstance(raw, dict)
        and isinstance(raw.get("manifest"), dict)
        and isinstance(raw.get("character"), dict)
        and isinstance(raw.get("scenarios"), list)
        and isinstance(raw["manifest"].get("characters"), list)
        and bool(raw["manifest"]["characters"])
    )


def _resolver(cdir: str, blobs: dict[str, bytes]) -> media_mod.Resolver:
    """The bytes of an image: ``characters/<id>/<path>``, or for the background the archive-root
    path the first scenario names."""

    def resolve(_path: str, a: MediaAsset) -> bytes | None:
        if a.role == BACKGROUND:
            return blobs.get(a.ref)
        return blobs.get(f"{cdir}/{a.ref}")

    return resolve


def _resolve_background(
    scenarios: list[Any], blobs: dict[str, bytes], extra: list[tuple[str, bytes]]
) -> list[Any]:
    """The first scenario with a ``backgroundImage`` the archive holds: a member already escrowed,
    or a ``data:`` image written as ``scenarios/background<ext>``; any other one is left out."""
    if not scenarios or not isinstance(scenarios[0], dict):
        return scenarios
    first = scenarios[0]
    bg = first.get("backgroundImage")
    if not isinstance(bg, str) or bg in blobs:
        return scenarios
    rest = {k: v for k, v in first.items() if k != "backgroundImage"}
    inline = _data_uri(bg)
    if inline is not None:
        data, ext = inline
        name = f"scenarios/background{ext}"
        extra.append((name, data))
        rest = {**first, "backgroundImage": name}
    return [rest, *scenarios[1:]]


def _resolve_images(
    images: list[Any], cdir: str, blobs: dict[str, bytes], extra: list[tuple[str, bytes]]
) -> list[Any]:
    """Images whose file the archive will hold: a member already escrowed, or a ``data:`` image
    written as ``images/<name>``. Others (URLs, another app's paths) cannot be packed: left out."""
    out = []
    for img in images:
        path = img.get("path") if isinstance(img, dict) else None
        if not isinstance(path, str):
            continue
        if f"{cdir}/{path}" in blobs:
            out.append(img)
            continue
        inline = _data_uri(path)
        if inline is None:
            continue
        data, ext = inline
        rel = f"images/image{len(extra) + 1}{ext}"
        extra.append((f"{cdir}/{rel}", data))
        out.append({**img, "path": rel})
    return out
