"""What Backyard's two formats share: placeholders, ISO dates, lore items.

Backyard (and Faraday before it) writes single-brace placeholders, ``{character}`` (also ``{char}``)
and ``{user}``; canonical text uses the Tavern macros ``{{char}}`` and ``{{user}}``, so text is
translated on the way in and back on the way out. The translation is not a bijection on every
string, which is why an unedited field always comes back from the escrow twin verbatim.

Lore items (``[{key, value}]``, legacy items also ``id``/``order``) become a linked lorebook entity
whose entries fire on the comma-separated keywords of ``key`` (Backyard's editor: "enter as many
associated keywords as you like"). Backyard scans the four most recent messages and injects active
lore just before the last two, within a 384-token budget; the book says so in canonical terms.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, cast

from bunzai_codecs.core.codec import Codec, EmitContext
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.overlay import ListKey, merge3
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.base import Num
from bunzai_codecs.entities.lorebook import LorebookBody
from bunzai_codecs.formats._shared.links import KEEP, keep_or_drop
from bunzai_codecs.formats._shared.wire import MapContext, iso_to_seconds, utc_from_us

_BY_CHAR = re.compile(r"(?<!\{)\{(?:character|char)\}(?!\})")
_BY_USER = re.compile(r"(?<!\{)\{user\}(?!\})")
_CANON_CHAR = re.compile(r"(?<!\{)\{\{char\}\}(?!\})")
_CANON_USER = re.compile(r"(?<!\{)\{\{user\}\}(?!\})")
#: a turn of Backyard example dialogue starts a line with ``#{user}:`` / ``#{character}:``
_BY_TURN = re.compile(r"^#(\{\{(?:user|char)\}\}:)", re.MULTILINE)
_CANON_TURN = re.compile(r"^\{\{(user|char)\}\}:", re.MULTILINE)

#: Backyard's lore behaviour (its docs): keywords in the last 4 messages, lore injected before the
#: last 2 messages, at most 384 tokens of lore in all
LORE_SCAN_DEPTH = 4
LORE_DEPTH = 2
LORE_TOKEN_BUDGET = 384

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def from_backyard(text: str) -> str:
    """Backyard text -> canonical: ``{character}``/``{char}`` -> ``{{char}}``, ``{user}`` -> ``{{user}}``."""
    return _BY_USER.sub("{{user}}", _BY_CHAR.sub("{{char}}", text))


def to_backyard(text: str) -> str:
    """Canonical text -> Backyard placeholders (the inverse of ``from_backyard``)."""
    return _CANON_USER.sub("{user}", _CANON_CHAR.sub("{character}", text))


def dialogue_from_backyard(text: str) -> str:
    """Example dialogue: placeholders translated and the ``#`` turn markers dropped."""
    return _BY_TURN.sub(r"\1", from_backyard(text))


def dialogue_to_backyard(text: str) -> str:
    """Example dialogue back: ``{{user}}:`` at a line start becomes ``#{user}:``."""
    return to_backyard(_CANON_TURN.sub(r"#{{\1}}:", text))


def iso_to_unix(value: Any) -> Num | None:
    """An ISO-8601 string as unix seconds to the millisecond (Backyard keeps no more); ``None``
    when it is not a readable date (the twin keeps the text either way)."""
    return iso_to_seconds(value, ms=True)


def card_date(value: Any) -> Num | None:
    """A Backyard date field as unix seconds; the epoch, which an export writes for an unknown date
    (the field is required), reads back as unknown."""
    t = iso_to_unix(value)
    return None if t == 0 else t


def unix_to_iso(value: Num | None) -> str:
    """Unix seconds as the ``2025-06-12T19:03:56.873Z`` form Backyard writes (epoch when unknown,
    or when no date holds the number: the field is required)."""
    ms = round(value * 1000) if value is not None else 0
    dt = utc_from_us(ms * 1000)
    if dt is None:
        ms, dt = 0, _EPOCH
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}Z"


def opt_text(v: str | None) -> str | None:
    """Empty strings and nulls are 'absent' in the canonical body."""
    return v if v else None


def opt_array(r: MapContext, obj: dict[str, Any], key: str) -> list[Any]:
    """``obj[key]`` as an array read by ``r`` (the context of ``obj``); absent or null is ``[]``."""
    v = obj.get(key)
    return [] if v is None else r.arr(v, (key,))


def split_keywords(key: str) -> list[str]:
    return [k.strip() for k in key.split(",") if k.strip()]


def lore_items_to_book(items: list[Any], r: MapContext) -> dict[str, Any]:
    """Lore items (read by ``r``, the context of their array) -> a canonical lorebook body (a dict,
    validated by the caller)."""
    entries = []
    seen: set[str] = set()
    for i, raw in enumerate(items):
        item = r.obj(raw, (i,))
        key = r.text(item.get("key"), (i, "key"), "")
        value = r.text(item.get("value"), (i, "value"), "")
        raw_id = item.get("id")
        eid = raw_id if isinstance(raw_id, str) and raw_id else str(i)
        base, n = eid, 2
        while eid in seen:
            eid, n = f"{base}-{n}", n + 1
        seen.add(eid)
        entries.append(
            {
                "id": eid,
                "title": key,
                "content": from_backyard(value),
                "triggers": [{"text": k} for k in split_keywords(key)],
                "position": "depth",
                "depth": LORE_DEPTH,
            }
        )
    return {"globalScanDepth": LORE_SCAN_DEPTH, "tokenBudget": LORE_TOKEN_BUDGET, "entries": entries}


def book_to_lore_items(book: LorebookBody, *, with_ids: bool) -> list[dict[str, Any]]:
    """A canonical lorebook -> lore items. Disabled entries are left out (Backyard has no switch);
    an entry without keywords keeps an empty key (it never fires, as it would not in Backyard)."""
    out: list[dict[str, Any]] = []
    for e in book.entries:
        if not e.enabled:
            continue
        item: dict[str, Any] = {}
        if with_ids:
            item["id"] = e.id
        item["key"] = ", ".join(t.text for t in e.triggers or [])
        item["value"] = to_backyard(e.content)
        out.append(item)
    return out


def lore_fallback(entity: CanonicalEntity, ctx: EmitContext, kept: Any) -> list[Any]:
    """The lore items when no linked lorebook resolves: the twin's copy (``kept``) or none, by the
    re-embed rule every bundle format applies (``_shared/links.keep_or_drop``)."""
    if not isinstance(kept, list):
        return []
    return kept if keep_or_drop(entity, ctx, "lorebook", kept) is KEEP else []


def lore_book(codec: Codec, s: Sniff, items: list[Any], at: str) -> CanonicalEntity:
    """The linked lorebook entity of a character's lore ``items`` (the array at JSON path ``at``),
    with the notes its reader made."""
    r = MapContext(at)
    body = lore_items_to_book(items, r)
    return codec.entity(
        s, body, raw=items, part=("lorebook", "loreItems"), kind="lorebook", warnings=r.warnings
    )


def lore_to_write(
    codec_id: str,
    entity: CanonicalEntity,
    ctx: EmitContext,
    kept: Any,
    to_items: Callable[[LorebookBody], list[dict[str, Any]]],
    list_key: ListKey | None = None,
) -> list[Any]:
    """The lore items to write for ``entity``: its linked lorebook re-embedded as ``to_items`` writes
    it, merged into the items the book was read from (``list_key`` pairs them), so an unedited item
    keeps its form; without a linked book, the twin's copy ``kept`` or none (:func:`lore_fallback`)."""
    refs = ctx.refs(entity, "lorebook")
    if not refs:
        return lore_fallback(entity, ctx, kept)
    book = refs[0]
    ctx.embed(book)
    fresh = to_items(cast(LorebookBody, book.body))
    twin = book.twin(codec_id)
    items = twin.raw if twin else None
    if not isinstance(items, list):
        return fresh
    old = LorebookBody.model_validate(lore_items_to_book(items, MapContext()))
    return list(merge3(items, to_items(old), fresh, list_key=list_key))


def item_id(item: Any) -> str | None:
    """List key pairing legacy lore items by ``id`` in the escrow merge."""
    return item.get("id") if isinstance(item, dict) and isinstance(item.get("id"), str) else None


#: the canonical character paths every Backyard format holds (its character fields and dates)
CHARACTER_PATHS: tuple[str, ...] = (
    "identity.name",
    "identity.nickname",
    "identity.description",
    "persona.scenario",
    "prompts.systemPrompt",
    "greetings.firstMessage",
    "examples.exampleMessages",
    "attribution.createdAt",
    "attribution.updatedAt",
)
