"""Toy codecs with known, deliberate losses, for the fidelity tests.

They follow the real codecs' contract (escrow twin + merge3 for same-format exports, a clean
skeleton for other formats) so the checks see what they would see with a real app's format, but
each loses exactly what its docstring says. ``TOYS`` is a registry table for ``registry.using``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import orjson

from bunzai_codecs.core.codec import Codec, Coverage, EmitContext
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.errors import Malformed, Unsupported
from bunzai_codecs.core.overlay import merge3
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import LorebookBody

# native lore keys -> canonical entry fields
ENTRY_KEYS = {
    "uid": "id",
    "label": "title",
    "note": "comment",
    "text": "content",
    "on": "enabled",
    "chance": "probability",
}
FULL_ENTRY = ("uid", "label", "note", "text", "keys", "on", "chance")


def lore_body(t: dict[str, Any]) -> dict[str, Any]:
    """Native lore tree -> canonical lorebook body dict."""
    entries = []
    for i, item in enumerate(t.get("items", [])):
        e: dict[str, Any] = {"id": str(item.get("uid", i))}
        for nk, ck in ENTRY_KEYS.items():
            if nk in item and nk != "uid":
                e[ck] = item[nk]
        if "keys" in item:
            e["triggers"] = [{"text": k} for k in item["keys"]]
        entries.append(e)
    body: dict[str, Any] = {"name": t.get("title", ""), "entries": entries}
    if "about" in t:
        body["description"] = t["about"]
    return body


def lore_native(b: LorebookBody, marker: str, entry_keys: tuple[str, ...], about: bool) -> dict[str, Any]:
    """Canonical lorebook -> native tree, writing only ``entry_keys`` per entry."""
    items = []
    for e in b.entries:
        full = {
            "uid": e.id,
            "label": e.title,
            "note": e.comment,
            "text": e.content,
            "keys": [t.text for t in e.triggers or []],
            "on": e.enabled,
            "chance": e.probability,
        }
        items.append({k: v for k, v in full.items() if k in entry_keys and v is not None})
    out: dict[str, Any] = {"toy": marker, "title": b.name, "items": items}
    if about and b.description is not None:
        out["about"] = b.description
    return out


class ToyLore(Codec):
    """Carries every field it maps; a same-format export keeps unknown keys through the twin."""

    id = "toy-lore"
    kind = "lorebook"
    family = "toy"
    extension = ".toylore.json"
    entry_keys: ClassVar[tuple[str, ...]] = FULL_ENTRY
    about: ClassVar[bool] = True
    coverage = Coverage.of(
        "name",
        "description",
        "entries[].id",
        "entries[].title",
        "entries[].comment",
        "entries[].content",
        "entries[].triggers[].text",
        "entries[].enabled",
        "entries[].probability",
    )

    def detect(self, s: Sniff) -> float:
        j = s.json_object
        return 1.0 if j is not None and j.get("toy") == self.id else 0.0

    def decode(self, s: Sniff) -> Decoded:
        t = s.json_object
        if t is None:
            raise Malformed("not a toy lorebook", uri=s.uri)
        return Decoded([self.entity(s, self.body_from(t), raw=t)])

    def body_from(self, t: dict[str, Any]) -> dict[str, Any]:
        return lore_body(t)

    def to_native(self, b: Any) -> dict[str, Any]:
        return lore_native(b, self.id, self.entry_keys, self.about)

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        fresh = self.to_native(entity.body)
        twin = entity.twin(self.id)
        if twin is not None:
            base = self.to_native(LorebookBody.model_validate(self.body_from(twin.raw)))
            fresh = merge3(twin.raw, base, fresh)
        return orjson.dumps(fresh)


class ToyLoreNarrow(ToyLore):
    """Holds only the book name and each entry's content and keys: everything else is an expected
    loss (ids come back as positions)."""

    id = "toy-narrow"
    family = "narrow"
    entry_keys = ("text", "keys")
    about = False
    coverage = Coverage.of("name", "entries[].content", "entries[].triggers[].text")


class ToyLoreBuggy(ToyLoreNarrow):
    """Writes what the narrow one writes but claims ``entries[].comment`` and ``description``:
    losing them is a bug (unexpected)."""

    id = "toy-buggy"
    family = "buggy"
    coverage = Coverage.of(
        "name", "description", "entries[].content", "entries[].triggers[].text", "entries[].comment"
    )


class ToyLoreCrash(ToyLore):
    """Its encoder has a bug: a KeyError escapes (an internal error)."""

    id = "toy-crash"
    family = "crash"

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        return {}["boom"]  # type: ignore[no-any-return]


class ToyLoreRefuse(ToyLore):
    """Refuses every export with a typed error."""

    id = "toy-refuse"
    family = "refuse"

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        raise Unsupported("toy-refuse writes nothing")


class ToyLoreUnstable(ToyLore):
    """Has no escrow and its decoder appends ``*`` to the book name: every write and read adds a
    star, so ``decode(encode(e)).body`` drifts on ``name``."""

    id = "toy-unstable"
    family = "unstable"

    def body_from(self, t: dict[str, Any]) -> dict[str, Any]:
        b = lore_body(t)
        b["name"] = b["name"] + "*"
        return b

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        return orjson.dumps(self.to_native(entity.body))


class ToyLoreNamed(ToyLore):
    """Names the book after its file, as SillyTavern names a world (``Harbor.json`` is "Harbor")."""

    id = "toy-named"
    family = "named"
    extension = ".json"

    def decode(self, s: Sniff) -> Decoded:
        t = s.json_object
        if t is None:
            raise Malformed("not a toy lorebook", uri=s.uri)
        body = self.body_from(t)
        body["name"] = s.name.rsplit("/", 1)[-1].split(".")[0]
        return Decoded([self.entity(s, body, raw=t)])

    def to_native(self, b: Any) -> dict[str, Any]:
        out = super().to_native(b)
        del out["title"]
        return out


class ToyLoreLeaky(ToyLore):
    """Has no escrow: a same-format export drops keys it does not map (a native round-trip bug)."""

    id = "toy-leaky"
    family = "leaky"

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        return orjson.dumps(self.to_native(entity.body))


class ToyCard(Codec):
    """A character with a name, a description and one embedded lorebook (``book``, toy-lore's
    shape); the book decodes as its own linked entity whose twin sits under this codec's id."""

    id = "toy-card"
    kind = "character"
    family = "toy"
    extension = ".toycard.json"
    book_keys: ClassVar[tuple[str, ...]] = FULL_ENTRY
    embeds: ClassVar[bool] = True
    coverage = Coverage.of("identity.name", "identity.description")

    def detect(self, s: Sniff) -> float:
        j = s.json_object
        return 1.0 if j is not None and j.get("toy") == self.id else 0.0

    def decode(self, s: Sniff) -> Decoded:
        t = s.json_object
        if t is None:
            raise Malformed("not a toy card", uri=s.uri)
        ident: dict[str, Any] = {"name": t.get("name", "")}
        if "desc" in t:
            ident["description"] = t["desc"]
        card = self.entity(s, {"identity": ident}, raw=t)
        out = [card]
        if isinstance(t.get("book"), dict):
            book = self.entity(
                s, lore_body(t["book"]), raw=t["book"], part=("lorebook", "book"), kind="lorebook"
            )
            card.links["knowledgeRefs"] = [book.id]
            out.append(book)
        return Decoded(out)

    def to_native(self, e: CanonicalEntity) -> dict[str, Any]:
        ident = e.body.identity  # type: ignore[attr-defined]
        out: dict[str, Any] = {"toy": self.id, "name": ident.name}
        if "identity.description" in self.coverage.paths and ident.description is not None:
            out["desc"] = ident.description
        return out

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        fresh = self.to_native(entity)
        twin = entity.twin(self.id)
        if twin is not None:
            raw = {k: v for k, v in twin.raw.items() if k != "book"}
            fresh = merge3(raw, self.to_native(entity), fresh)
        if self.embeds:
            for ref in ctx.refs(entity, "lorebook"):
                book = lore_native(ref.body, "toy-lore", self.book_keys, True)  # type: ignore[arg-type]
                btwin = ref.twin(self.id)
                if btwin is not None:
                    base = lore_native(
                        LorebookBody.model_validate(lore_body(btwin.raw)), "toy-lore", self.book_keys, True
                    )
                    book = merge3(btwin.raw, base, book)
                fresh = {**fresh, "book": book}
                ctx.embed(ref)
                break
        return orjson.dumps(fresh)


class ToyCardLite(ToyCard):
    """Name only, embeds nothing, and its app has no lorebook format: a linked book is written
    beside it as vaud-json (lossless)."""

    id = "toy-lite"
    family = "lite"
    embeds = False
    coverage = Coverage.of("identity.name")


class ToyCardDropBook(ToyCard):
    """Embeds the book in toy-narrow's shape (content and keys only): the book's other fields are
    lost, expected by the coverage of its app's lorebook codec (toy-narrow)."""

    id = "toy-dropbook"
    family = "narrow"
    book_keys = ("text", "keys")


class ToyCardSwallow(ToyCard):
    """Says it embedded the book (so nothing is written beside the card) but writes none: the
    whole book is lost, unexpectedly."""

    id = "toy-swallow"
    family = "swallow"

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        for ref in ctx.refs(entity, "lorebook"):
            ctx.embed(ref)
        return orjson.dumps(self.to_native(entity))


class ToyCardOwnBook(ToyCard):
    """Embeds the book in a shape of its own that holds only content and keys, while its app's
    lorebook file (toy-lore) holds every field: ``embedded_coverage`` says what the embedded copy
    can hold, so the fields it drops are expected losses. Not in ``TOYS``: a test adds it."""

    id = "toy-ownbook"
    family = "toy"
    book_keys = ("text", "keys")
    embedded_coverage: ClassVar[Mapping[str, Coverage]] = {"lorebook": ToyLoreNarrow.coverage}


class ToyCardOwnBookUndeclared(ToyCardOwnBook):
    """The same card without the declaration: its book is judged by toy-lore, which claims what the
    embedded copy dropped. Not in ``TOYS``."""

    id = "toy-ownbook-undeclared"
    embedded_coverage: ClassVar[Mapping[str, Coverage]] = {}


TOY_CODECS: tuple[type[Codec], ...] = (
    ToyLore,
    ToyLoreNarrow,
    ToyLoreBuggy,
    ToyLoreCrash,
    ToyLoreRefuse,
    ToyLoreUnstable,
    ToyLoreLeaky,
    ToyLoreNamed,
    ToyCard,
    ToyCardLite,
    ToyCardDropBook,
    ToyCardSwallow,
)

TOYS: dict[str, str | type[Codec]] = {
    "vaud-json": "bunzai_codecs.formats.vaud.codec:VaudJsonCodec",
    **{c.id: c for c in TOY_CODECS},
}


def book(**extra: Any) -> bytes:
    """A toy-lore file: two entries (one with a comment), an unknown key and a string number."""
    t = {
        "toy": "toy-lore",
        "title": "Lanternfall",
        "about": "A rainy city.",
        "items": [
            {
                "uid": "a",
                "label": "Market",
                "note": "opens in rain",
                "text": "Lanterns.",
                "keys": ["market"],
                "on": True,
            },
            {"uid": "b", "label": "Bridge", "text": "Old stone.", "keys": ["bridge", "river"], "chance": 50},
        ],
        "x-unknown": {"kept": "0.5"},
        **extra,
    }
    return orjson.dumps(t)


def card(with_book: bool = True) -> bytes:
    t: dict[str, Any] = {"toy": "toy-card", "name": "Aria", "desc": "Keeps the lanterns lit.", "mood": "wry"}
    if with_book:
        t["book"] = orjson.loads(book())
    return orjson.dumps(t)
