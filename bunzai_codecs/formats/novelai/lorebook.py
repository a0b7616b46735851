"""novelai-lorebook: NovelAI's lorebook, as a ``.lorebook`` file, a PNG card or inside a ``.scenario``.

The book is ``{lorebookVersion, entries[], settings, categories[], order?}`` with no name. An entry
is ``{text, contextConfig{...budgetPriority...}, displayName, id (v5+), keys[], searchRange,
enabled, forceActivation, keyRelative, nonStoryActivatable, category, loreBiasGroups[],
advancedConditions[], lastUpdatedAt}``. Enums (``trimDirection``, ``insertionType``,
``maximumTrimType``) are strings and are never rewritten; ``searchRange`` counts characters, not
messages, so it is not a scan depth and stays in escrow with the rest of ``contextConfig``, the
bias groups (v6 writes ``generateOnce``/``generate_once`` twice, both kept) and the timestamps.

Canonical: ``text`` content, ``displayName`` title (``Entry N`` when absent), ``keys`` triggers
(``/re/flags`` is a case-sensitive regex key, anything else a case-insensitive literal),
``forceActivation`` constant, ``contextConfig.budgetPriority`` the insertion order ``sortOrder``
(higher goes first, as in NovelAI; ``priority`` is never written), ``category`` the category id
(``""`` = none); categories keep id, name and enabled, ordered as listed.

Containers: a PNG lorebook card is one ``tEXt`` chunk ``naidata`` = base64 of the compact JSON
(NovelAI puts it right after ``IHDR``; an edit is written back in the same place). A ``.scenario``
(``scenarioVersion``) carries its book under ``lorebook``; this codec claims it at 0.9 (the book is
the only part bunzai models), keeps the rest of the scenario in escrow and writes the whole
scenario back on a same-format export. A fresh export is a ``lorebookVersion: 6`` file in the
shape NovelAI writes, entry and category ids minted as stable UUIDs when they are not UUIDs.
"""

from __future__ import annotations

import base64
import re
import uuid
from dataclasses import dataclass
from typing import Any, cast

import orjson

from bunzai_codecs.core import media, png
from bunzai_codecs.core.codec import JSON_FILE, PNG_FILE, Codec, Container, Coverage, EmitContext
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.errors import Malformed, Unsupported
from bunzai_codecs.core.escrow import Twin, facet
from bunzai_codecs.core.overlay import by_id, merge3
from bunzai_codecs.core.sniff import Sniff, base64_json
from bunzai_codecs.entities.lorebook import LorebookBody, LoreEntry, Trigger
from bunzai_codecs.formats._shared.carrier import card_image_portrait, choose, picture, portrait_resolver
from bunzai_codecs.formats._shared.wire import MapContext
from bunzai_codecs.formats.novelai.detect import PNG_KEYWORD, is_book, is_scenario
from bunzai_codecs.formats.tavern.character_book import BASIC_ENTRY_PATHS

FRESH_VERSION = 6
#: lore entries' default insertion order in NovelAI
DEFAULT_BUDGET_PRIORITY = 400
_REGEX_KEY = re.compile(r"/(.+)/([a-z]*)", re.DOTALL)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
_ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "bunzai:novelai-lorebook")

#: a fresh entry's settings, as NovelAI writes them (the v6 sample)
_CONTEXT_CONFIG: dict[str, Any] = {
    "prefix": "",
    "suffix": "\n",
    "tokenBudget": 1,
    "reservedTokens": 0,
    "budgetPriority": DEFAULT_BUDGET_PRIORITY,
    "trimDirection": "trimBottom",
    "insertionType": "newline",
    "maximumTrimType": "sentence",
    "insertionPosition": -1,
}
_BIAS_GROUP: dict[str, Any] = {
    "phrases": [],
    "ensure_sequence_finish": False,
    "ensureSequenceFinish": False,
    "generate_once": True,
    "generateOnce": True,
    "bias": 0,
    "enabled": True,
    "whenInactive": False,
}


#: the canonical lorebook paths a NovelAI book holds (wherever it travels: a file, a PNG, a story)
BOOK_PATHS: tuple[str, ...] = (
    *BASIC_ENTRY_PATHS,
    "entries[].triggers[].isRegex",
    "entries[].triggers[].flags",
    "entries[].sortOrder",
    "categories[].name",
    "categories[].enabled",
)


def nai_id(seed: str, local: str) -> str:
    """``local`` when it is a UUID already, else a UUID derived from ``seed`` and ``local``."""
    return local if _UUID.fullmatch(local) else str(uuid.uuid5(_ID_NAMESPACE, f"{seed}\0{local}"))


# -- keys ------------------------------------------------------------------------------------


def trigger_from_key(key: str) -> dict[str, Any]:
    m = _REGEX_KEY.fullmatch(key)
    if m is None:
        return {"text": key}
    return {"text": m.group(1), "isRegex": True, "flags": m.group(2) or None}


def key_from_trigger(t: Trigger) -> str:
    return f"/{t.text}/{t.flags or ''}" if t.isRegex else t.text


# -- native <-> canonical ----------------------------------------------------------------------


def body_from_book(book: dict[str, Any], ctx: MapContext) -> dict[str, Any]:
    """The canonical lorebook of a NovelAI book object (``ctx``: the book's context)."""
    entries = []
    seen: set[str] = set()
    for i, e in enumerate(book["entries"]):
        ec = ctx.child("entries", i)
        e = ctx.obj(e, ("entries", i))
        raw_keys = e.get("keys")
        keys = None if raw_keys is None else ec.str_list(raw_keys, ("keys",))
        cc = ec.opaque(e.get("contextConfig"), ("contextConfig",)) or {}
        priority = ec.num(cc.get("budgetPriority"), ("contextConfig", "budgetPriority"))
        eid = ec.text(e.get("id"), ("id",)) or str(i)
        base, n = eid, 2
        while eid in seen:
            eid, n = f"{base}-{n}", n + 1
        seen.add(eid)
        title = ec.text(e.get("displayName"), ("displayName",))
        entries.append(
            {
                "id": eid,
                "title": title if title is not None else f"Entry {i + 1}",
                "content": ec.text(e.get("text"), ("text",)) or "",
                "enabled": ec.boolean(e.get("enabled"), ("enabled",)) is not False,
                "constant": ec.boolean(e.get("forceActivation"), ("forceActivation",)) is True,
                "triggers": None if keys is None else [trigger_from_key(k) for k in keys],
                "sortOrder": DEFAULT_BUDGET_PRIORITY if priority is None else priority,
                "categoryId": ec.text(e.get("category"), ("category",)) or None,
            }
        )
    categories = []
    cats = book.get("categories")
    for j, c in enumerate([] if cats is None else ctx.arr(cats, ("categories",))):
        cctx = ctx.child("categories", j)
        c = ctx.obj(c, ("categories", j))
        categories.append(
            {
                "id": cctx.text(c.get("id"), ("id",)) or str(j),
                "name": cctx.text(c.get("name"), ("name",)) or "",
                "sortOrder": j,
                "enabled": cctx.boolean(c.get("enabled"), ("enabled",)),
            }
        )
    return {"name": "", "categories": categories, "entries": entries}


def _mapped_entry(e: LoreEntry, seed: str) -> dict[str, Any]:
    return {
        "text": e.content,
        "contextConfig": {"budgetPriority": e.sortOrder},
        "displayName": e.title,
        "id": nai_id(seed, e.id),
        "keys": [key_from_trigger(t) for t in e.triggers or []],
        "enabled": e.enabled,
        "forceActivation": e.constant,
        "category": nai_id(seed, e.categoryId) if e.categoryId else "",
    }


def mapped_book(body: LorebookBody, seed: str) -> dict[str, Any]:
    """The parts of a NovelAI book the canonical body decides."""
    return {
        "entries": [_mapped_entry(e, seed) for e in body.entries],
        "categories": [
            {"name": c.name, "id": nai_id(seed, c.id), "enabled": c.enabled is not False}
            for c in body.categories
        ],
    }


def _full_entry(mapped: dict[str, Any]) -> dict[str, Any]:
    """A complete entry in NovelAI's key order around the mapped values."""
    return {
        "text": mapped.get("text", ""),
        "contextConfig": {**_CONTEXT_CONFIG, **mapped.get("contextConfig", {})},
        "lastUpdatedAt": 0,
        "displayName": mapped.get("displayName", "New Lorebook Entry"),
        "id": mapped["id"],
        "keys": mapped.get("keys", []),
        "searchRange": 1000,
        "enabled": mapped.get("enabled", True),
        "forceActivation": mapped.get("forceActivation", False),
        "keyRelative": False,
        "nonStoryActivatable": False,
        "category": mapped.get("category", ""),
        "loreBiasGroups": [_BIAS_GROUP],
        "advancedConditions": [],
    }


def _full_category(mapped: dict[str, Any], seed: str) -> dict[str, Any]:
    def blank(role: str) -> dict[str, Any]:
        return _full_entry({"id": nai_id(seed, f"{mapped['id']}/{role}")})

    return {
        "name": mapped["name"],
        "id": mapped["id"],
        "enabled": mapped["enabled"],
        "createSubcontext": False,
        "subcontextSettings": blank("subcontext"),
        "useCategoryDefaults": False,
        "categoryDefaults": blank("defaults"),
        "categoryBiasGroups": [_BIAS_GROUP],
        "settings": {},
        "order": [],
        "open": True,
    }


def fresh_book(body: LorebookBody, seed: str) -> dict[str, Any]:
    m = mapped_book(body, seed)
    return {
        "lorebookVersion": FRESH_VERSION,
        "entries": [_full_entry(e) for e in m["entries"]],
        "settings": {"orderByKeyLocations": False},
        "categories": [_full_category(c, seed) for c in m["categories"]],
        "order": [],
    }


def merged_book(raw: dict[str, Any], body: LorebookBody, seed: str) -> dict[str, Any]:
    """Book ``raw`` (a twin's) with the edits ``body`` makes to what it decoded to: ``raw`` itself
    where nothing changed; an entry or category only the edit has gets NovelAI's full shape."""
    base = mapped_book(LorebookBody.model_validate(body_from_book(raw, MapContext("$"))), seed)
    new = mapped_book(body, seed)
    merged = merge3(raw, base, new, list_key=by_id)
    if merged is raw:
        return raw
    fresh_entries = {id(e) for e in new["entries"]}
    fresh_cats = {id(c) for c in new["categories"]}
    out = dict(merged)
    if isinstance(merged.get("entries"), list):
        out["entries"] = [_full_entry(e) if id(e) in fresh_entries else e for e in merged["entries"]]
    if isinstance(merged.get("categories"), list):
        out["categories"] = [
            _full_category(c, seed) if id(c) in fresh_cats else c for c in merged["categories"]
        ]
    return out


def _dumps(tree: Any) -> bytes:
    return orjson.dumps(tree, option=orjson.OPT_INDENT_2)


@dataclass(eq=False)
class BookTwin(Twin):
    """A NovelAI book's escrow: its ``container`` (``json``, ``png`` with the file in
    ``blobs.png``, or ``scenario``), and for a ``.scenario`` the rest of the scenario (``scenario``:
    every key but ``lorebook``) and where its ``lorebook`` key stood (``at``)."""

    scenario: dict[str, Any] | None = facet(dict)
    at: int | None = facet(int)


class NovelAILorebookCodec(Codec):
    id = "novelai-lorebook"
    twin_type = BookTwin
    containers = (
        Container("lorebook", (".lorebook",), "json"),
        JSON_FILE,
        PNG_FILE,
        Container("scenario", (".scenario", ".scenario.json"), "json"),
    )
    coverage = Coverage.of(
        *BOOK_PATHS,
        *media.PORTRAIT_BYTES,
        notes=[
            "no book name in the file",
            "`contextConfig.budgetPriority` is the insertion order `sortOrder`; `priority` is never written",
            "`searchRange` counts characters, not messages: escrow only, like the rest of `contextConfig`,"
            " bias groups, `keyRelative`, `nonStoryActivatable`, timestamps and `advancedConditions`",
            "a fresh export mints UUID entry and category ids for ids that are not UUIDs",
            "a `.scenario` decodes to its lorebook; the rest of the scenario rides in escrow",
            "a PNG card's picture (without its naidata chunk) is the book's portrait: a book with a"
            " portrait image is written as a PNG (re-encoded when it is not one: the pixels are kept),"
            " one without as a .lorebook",
        ],
    )

    def outside(self, entity: CanonicalEntity) -> dict[str, Any]:
        """A scenario's every key but its book (``scenario.prompt``, ``scenario.settings``...)."""
        twin = entity.twin(self.id)
        if isinstance(twin, BookTwin) and twin.scenario:
            return {f"scenario.{k}": v for k, v in twin.scenario.items()}
        return {}

    def decode(self, s: Sniff) -> Decoded:
        escrow: dict[str, Any] = {}
        resolve = None
        if s.is_png:
            pf = s.require_png()
            chunk = s.png_text(PNG_KEYWORD)
            if chunk is None:
                raise Malformed("PNG has no naidata text chunk", offset=8)
            book = base64_json(chunk.text, PNG_KEYWORD, pf.chunks[chunk.index].offset)
            escrow = {"container": "png", "blobs": {"png": s.data}}
            resolve = portrait_resolver(picture(s.data, (PNG_KEYWORD,), parsed=pf))
            where = "the naidata chunk"
        else:
            tree = s.require_json()
            if is_scenario(tree):
                book = tree["lorebook"]
                keys = list(tree)
                escrow = {
                    "container": "scenario",
                    "scenario": {k: v for k, v in tree.items() if k != "lorebook"},
                    "at": keys.index("lorebook"),
                }
            else:
                book = tree
                escrow = {"container": "json"}
            where = "the file"
        if not isinstance(book, dict):
            raise Malformed(f"{where} does not hold a JSON object", path="$")
        if not is_book(book):
            bad = "entries" if isinstance(book.get("lorebookVersion"), int | float) else "lorebookVersion"
            raise Malformed(f"{where} is not a NovelAI lorebook (no {bad})", path=f"$.{bad}")
        mctx = MapContext("$")
        body = body_from_book(book, mctx)
        if resolve is not None:  # the PNG is the book's picture
            body["media"] = {"portrait": card_image_portrait()}
        e = self.entity(s, body, raw=book, media=resolve, **escrow)
        e.warnings.extend(mctx.warnings)
        return Decoded([e])

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        body = cast(LorebookBody, entity.body)
        seed = entity.id
        own = entity.twin(self.id)
        twin = own if isinstance(own, BookTwin) else BookTwin()
        raw = twin.raw
        portrait = body.media.portrait if body.media is not None else None
        has_image = media.bytes_of(entity.media, portrait) is not None
        want = ctx.options.get("container")
        if want is None:
            had = twin.container if is_book(raw) else None
            # a book read from JSON is written as a .lorebook (the same bytes, NovelAI's name)
            want = had if had in ("png", "scenario") else "png" if has_image and had is None else "lorebook"
        if want not in ("lorebook", "json", "png", "scenario"):
            raise Unsupported(f"{self.id} writes lorebook, json, png or scenario containers, not {want!r}")
        if not is_book(raw):
            if want == "scenario":
                raise Unsupported(
                    "a .scenario is written only for a book read from one: its story is the twin's"
                )
            merged = fresh_book(body, seed)
        else:
            assert isinstance(raw, dict)
            merged = merged_book(raw, body, seed)
        ctx.written = want
        if want == "png":
            source = twin.blob("png") if twin.container == "png" else None
            carrier = choose(entity, ctx, twin_png=source, strip=(PNG_KEYWORD,))
            if carrier.source == "twin" and merged is raw:
                return carrier.image
            return _with_naidata(carrier.image, merged)
        if want == "scenario":
            if twin.scenario is None:
                raise Unsupported(
                    "a .scenario is written only for a book read from one: its story is the twin's"
                )
            items = list(twin.scenario.items())
            at = twin.at
            items.insert(at if isinstance(at, int) else len(items), ("lorebook", merged))
            return _dumps(dict(items))
        return _dumps(merged)


def _with_naidata(source: bytes, book: Any) -> bytes:
    """``source`` with its naidata chunk's value replaced, in the same position."""
    pf = png.parse(source, skip_crc=png.IMAGE_DATA)
    chunk = png.make_text_chunk(PNG_KEYWORD, base64.b64encode(orjson.dumps(book)))
    chunks = list(pf.chunks)
    for i, c in enumerate(chunks):
        if c.type == b"tEXt" and c.data.split(b"\0", 1)[0].lower() == PNG_KEYWORD.encode():
            chunks[i] = chunk
            return png.build(chunks, pf.trailing)
    return png.replace_text(pf, remove={PNG_KEYWORD}, add=[chunk])


__all__ = ["NovelAILorebookCodec"]
