"""Voxta's character and memory book JSON <-> canonical bodies, and the small wire conventions they
share: Scriban placeholders, .NET dates, UUIDs.

A character (``Characters/<id>/character.json``, ``"$type": "character"``) and a memory book
(``Books/<id>/book.json``, ``"$type": "book"``) are flat objects with PascalCase keys. The mapped
keys are read here; everything else (ids, voice, scripts, chat settings, ``AppConfiguration``...)
stays in the escrow twin. ``mapped_*`` give the part of a native tree the canonical body decides,
which the codec merges into the twin (``core/overlay.merge3``) or into a fresh skeleton.

Placeholders: Voxta's templates are Scriban, where ``{{ user }}`` and ``{{user}}`` are the same
expression; canonical text uses the Tavern spelling ``{{user}}`` / ``{{char}}``, so the spaced form
is read as the compact one (case kept) and canonical text is written as it is (valid Scriban).
"""

from __future__ import annotations

import hashlib
import re
import uuid
from typing import Any

from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.entities.base import Num
from bunzai_codecs.entities.character import CharacterBody
from bunzai_codecs.entities.lorebook import LorebookBody
from bunzai_codecs.formats._shared.wire import (
    MapContext,
    bool_at,
    id_text,
    iso_to_seconds,
    num_at,
    str_at,
    strs_at,
    utc_from_us,
    wrong,
)

# -- placeholders ---------------------------------------------------------------------------------

#: ``{{ user }}`` / ``{{char }}``...: a Scriban user or char expression with inner spaces
_SPACED = re.compile(r"\{\{(?:\s+(user|char)\s*|(user|char)\s+)\}\}", re.IGNORECASE)


def from_voxta(text: str) -> str:
    """Voxta text -> canonical: a spaced ``{{ user }}`` / ``{{ char }}`` becomes ``{{user}}`` /
    ``{{char}}`` (its case kept); every other Scriban expression is left as written."""
    return _SPACED.sub(lambda m: "{{" + (m.group(1) or m.group(2)) + "}}", text) if "{{" in text else text


def has_spaced_placeholder(value: Any) -> bool:
    """Whether canonical text holds a spaced placeholder, which reads back from Voxta compact."""
    return isinstance(value, str) and _SPACED.search(value) is not None


# -- dates ----------------------------------------------------------------------------------------

#: what Voxta writes for an unknown date (an imported character's ``DateCreated``)
UNKNOWN_DATE = "0001-01-01T00:00:00+00:00"


def read_date(value: Any) -> Num | None:
    """An ISO-8601 date (``2024-09-10T18:00:12.837+00:00``, 7-digit fractions too) as unix
    seconds, millisecond precision; ``None`` for ``0001-01-01`` (unknown) or a value that is not a
    readable date (the twin keeps the text either way)."""
    if isinstance(value, str) and value[:4].isdigit() and int(value[:4]) <= 1:
        return None
    return iso_to_seconds(value, ms=True)


def write_date(value: Num | None) -> str:
    """Unix seconds as Voxta writes a date (``2024-09-10T18:00:12.837+00:00``); an unknown date, or
    one a date cannot hold, as ``0001-01-01T00:00:00+00:00``."""
    if value is None:
        return UNKNOWN_DATE
    try:
        ms = round(value * 1000)
    except (OverflowError, ValueError):  # not finite
        return UNKNOWN_DATE
    dt = utc_from_us(ms * 1000)
    if dt is None or dt.year <= 1:
        return UNKNOWN_DATE
    frac = f".{ms % 1000:03d}" if ms % 1000 else ""
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + frac + "+00:00"


# -- ids ------------------------------------------------------------------------------------------

_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def is_uuid(value: Any) -> bool:
    return isinstance(value, str) and _UUID.match(value) is not None


def derived_uuid(*parts: str) -> str:
    """A UUID (version-4 form) derived from ``parts``: the same entity gets the same id on every run,
    and Voxta, which wants UUIDs, gets one."""
    h = hashlib.sha256("\0".join(("bunzai-voxta", *parts)).encode("utf-8")).digest()
    return str(uuid.UUID(bytes=h[:16], version=4))


# -- characters -----------------------------------------------------------------------------------

#: prompt text keys: (wire key, canonical section, field); placeholders are translated
CHARACTER_TEXTS: tuple[tuple[str, str, str], ...] = (
    ("Profile", "identity", "description"),
    ("Description", "persona", "appearance"),
    ("Personality", "persona", "personality"),
    ("Scenario", "persona", "scenario"),
    ("FirstMessage", "greetings", "firstMessage"),
    ("MessageExamples", "examples", "exampleMessages"),
    ("SystemPrompt", "prompts", "systemPrompt"),
    ("PostHistoryInstructions", "prompts", "postHistoryInstructions"),
)
#: text keys read verbatim: written only when the body has them
CHARACTER_LABELS: tuple[tuple[str, str, str], ...] = (
    ("Label", "identity", "nickname"),
    ("Version", "identity", "characterVersion"),
    ("Culture", "identity", "culture"),
)
#: text keys read verbatim, written as ``""`` when absent (as Voxta writes an empty field)
CHARACTER_NOTES: tuple[tuple[str, str, str], ...] = (
    ("Creator", "attribution", "creator"),
    ("CreatorNotes", "attribution", "creatorNotes"),
)
ALT_GREETINGS = "AlternativeFirstMessages"
MEMORY_BOOKS = "MemoryBooks"


def _text(v: Any, ctx: MapContext, key: str) -> str | None:
    s = str_at(v, ctx, key)
    return s if s else None


def character_body(tree: dict[str, Any], ctx: MapContext) -> dict[str, Any]:
    """The canonical character (a dict, media aside) of a ``character.json`` tree; the reader's
    notes go to ``ctx``."""
    body: dict[str, Any] = {
        "identity": {"name": str_at(tree.get("Name"), ctx, "Name") or ""},
        "persona": {},
        "prompts": {},
        "greetings": {},
        "examples": {},
        "attribution": {},
        "discovery": {},
    }
    for key, section, field in CHARACTER_TEXTS:
        v = _text(tree.get(key), ctx, key)
        if v is not None:
            body[section][field] = from_voxta(v)
    for key, section, field in (*CHARACTER_LABELS, *CHARACTER_NOTES):
        v = _text(tree.get(key), ctx, key)
        if v is not None:
            body[section][field] = v
    alts = strs_at(tree.get(ALT_GREETINGS), ctx, ALT_GREETINGS)
    if alts:
        body["greetings"]["alternateGreetings"] = [{"text": from_voxta(t)} for t in alts]
    tags = strs_at(tree.get("Tags"), ctx, "Tags")
    if tags:
        body["discovery"]["tags"] = tags
    for key, field in (("DateCreated", "createdAt"), ("DateModified", "updatedAt")):
        v = tree.get(key)
        if v is not None and not isinstance(v, str):
            raise wrong(ctx.at(key), "a date string", v)
        t = read_date(v)
        if t is not None:
            body["attribution"][field] = t
    return body


def memory_book_ids(tree: dict[str, Any]) -> list[str]:
    """The book ids ``MemoryBooks`` names, in order, each once (other items are left in the twin)."""
    v = tree.get(MEMORY_BOOKS)
    if v is None:
        return []
    if not isinstance(v, list):
        raise wrong(MapContext().at(MEMORY_BOOKS), "an array of book ids", v)
    return list(dict.fromkeys(x for x in v if isinstance(x, str)))


def mapped_character(body: CharacterBody) -> dict[str, Any]:
    """The keys of ``character.json`` the canonical body decides (media and books aside)."""
    out: dict[str, Any] = {"Name": body.identity.name}
    for key, section, field in CHARACTER_TEXTS:
        out[key] = getattr(getattr(body, section), field) or ""
    for key, section, field in CHARACTER_LABELS:
        v = getattr(getattr(body, section), field)
        if v is not None:
            out[key] = v
    for key, section, field in CHARACTER_NOTES:
        out[key] = getattr(getattr(body, section), field) or ""
    alts = body.greetings.alternateGreetings
    if alts:
        out[ALT_GREETINGS] = [g.text for g in alts]
    out["Tags"] = list(body.discovery.tags or [])
    out["DateCreated"] = write_date(body.attribution.createdAt)
    out["DateModified"] = write_date(body.attribution.updatedAt)
    return out


def fresh_character(
    body: CharacterBody, cid: str, package_id: str, books: list[str], thumbnail: dict[str, Any] | None
) -> dict[str, Any]:
    """A complete ``character.json`` for a character from another format, in the key order of
    Voxta's own exports, with Voxta's defaults for what the body does not hold."""
    m = mapped_character(body)
    out: dict[str, Any] = {"$type": "character", "Id": cid, "Name": m["Name"]}
    for key in ("Label", "Version"):
        if key in m:
            out[key] = m[key]
    out["PackageId"] = package_id
    if "Culture" in m:
        out["Culture"] = m["Culture"]
    for key in ("Description", "Personality", "Profile", "Scenario", "FirstMessage"):
        out[key] = m[key]
    if ALT_GREETINGS in m:
        out[ALT_GREETINGS] = m[ALT_GREETINGS]
    out.update(
        {
            "MessageExamples": m["MessageExamples"],
            "SystemPrompt": m["SystemPrompt"],
            "PostHistoryInstructions": m["PostHistoryInstructions"],
            "Context": "",
            "Instructions": "",
            "Creator": m["Creator"],
            "CreatorNotes": m["CreatorNotes"],
            "Tags": m["Tags"],
            "ExplicitContent": False,
            "ChatStyle": 0,
            "EnableThinkingSpeech": False,
            "NotifyUserAwayReturn": False,
            "TimeAware": False,
            "UseMemory": False,
            "MaxTokens": 0,
            "MaxSentences": 0,
            "SystemPromptOverrideType": 0,
            MEMORY_BOOKS: books,
            "DefaultScenarios": [],
            "TextToSpeech": [],
            "Scripts": [],
            "Augmentations": [],
        }
    )
    if thumbnail is not None:
        out["Thumbnail"] = thumbnail
    out["DateCreated"] = m["DateCreated"]
    out["DateModified"] = m["DateModified"]
    return out


# -- memory books ---------------------------------------------------------------------------------


def book_body(tree: dict[str, Any], ctx: MapContext) -> dict[str, Any]:
    """The canonical lorebook (a dict) of a ``book.json`` tree: one entry per item; the reader's
    notes go to ``ctx``."""
    body: dict[str, Any] = {"name": str_at(tree.get("Name"), ctx, "Name") or ""}
    desc = _text(tree.get("Description"), ctx, "Description")
    if desc is not None:
        body["description"] = desc
    items = tree.get("Items")
    if items is None:
        items = []
    if not isinstance(items, list):
        raise wrong(ctx.at("Items"), "an array of items", items)
    entries: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        at = ctx.child("Items", i)
        if not isinstance(item, dict):
            raise wrong(ctx.at("Items", i), "an item object", item)
        eid = base = id_text(item.get("Id"), i, at)
        n = 2
        while eid in seen:
            eid, n = f"{base}-{n}", n + 1
        seen.add(eid)
        entry: dict[str, Any] = {
            "id": eid,
            "content": from_voxta(str_at(item.get("Text"), at, "Text") or ""),
            "enabled": not bool_at(item.get("Deleted"), at, "Deleted"),
        }
        keys = strs_at(item.get("Keywords"), at, "Keywords")
        if keys:
            entry["triggers"] = [{"text": k} for k in keys]
        weight = num_at(item.get("Weight"), at, "Weight")
        if weight is not None:
            entry["priority"] = weight
        entries.append(entry)
    body["entries"] = entries
    return body


def item_id(book_id: str, entry_id: str) -> str:
    """A book item's ``Id``: the entry id when it is a UUID (a Voxta item's), else one derived from
    the book and the entry id."""
    return entry_id if is_uuid(entry_id) else derived_uuid(book_id, "item", entry_id)


def mapped_book(body: LorebookBody, book_id: str) -> dict[str, Any]:
    """The keys of ``book.json`` the canonical body decides."""
    return {
        "Name": body.name,
        "Description": body.description or "",
        "Items": [
            {
                "Id": item_id(book_id, e.id),
                "Keywords": [t.text for t in e.triggers or []],
                "Text": e.content,
                "Weight": e.priority,
                "Deleted": not e.enabled,
            }
            for e in body.entries
        ],
    }


def fresh_book(
    body: LorebookBody, book_id: str, package_id: str, creator: str | None, owner: str
) -> dict[str, Any]:
    """A complete ``book.json`` for a lorebook from another format; a book without a name (a card's
    embedded book often has none) is named after the character that uses it (``owner``), as Voxta
    lists books by name."""
    m = mapped_book(body, book_id)
    return {
        "$type": "book",
        "Id": book_id,
        "PackageId": package_id,
        "Name": m["Name"] or (f"{owner} memory book" if owner else "Memory book"),
        "Version": "1.0.0",
        "Description": m["Description"],
        "ExplicitContent": False,
        "Creator": creator or "",
        "Items": m["Items"],
    }


def item_key(item: Any) -> Any:
    """List key pairing book items by ``Id`` in the escrow merge."""
    return item.get("Id") if isinstance(item, dict) and isinstance(item.get("Id"), str) else None


def within(exc: Malformed, member: str) -> Malformed:
    """``exc`` with the archive member it is about named in its message."""
    exc.message = f"{member}: {exc.message}"
    exc.args = (exc.message,)
    return exc


__all__ = [
    "ALT_GREETINGS",
    "MEMORY_BOOKS",
    "UNKNOWN_DATE",
    "book_body",
    "character_body",
    "derived_uuid",
    "fresh_book",
    "fresh_character",
    "from_voxta",
    "has_spaced_placeholder",
    "is_uuid",
    "item_id",
    "item_key",
    "mapped_book",
    "mapped_character",
    "memory_book_ids",
    "read_date",
    "within",
    "write_date",
]
