"""sillytavern-lorebook: SillyTavern world info files (``worlds/<name>.json``).

The native shape is ``{entries: {"<uid>": {...}}, name?, extensions?, originalData?}``: ``entries``
is an object keyed by the uid as a string (not an array), each entry carrying up to ~45 fields
(docs/formats/sillytavern.md#sillytavern-world-info-chat-completion-presets-personas). The book's name is the file stem. ``originalData`` (the card book a
world was imported from) is ``sourceBook``, verbatim; ``addMemo`` has no canonical home and rides in
the escrow twin.

Enumerations (docs/canonical-model.md#loreentry): ``position`` 0..7 -> ``world``, ``character``,
``author_note_top``, ``author_note_bottom``, ``depth``, ``before_example``, ``after_example``,
``outlet`` (unknown numbers kept verbatim as their text); ``role`` 0/1/2 (and ``null``) ->
``system``/``user``/``assistant``; ``selectiveLogic`` 0..3 -> ``and_any``/``not_all``/``not_any``/
``and_all`` (an unknown number reads as ``and_any`` with a warning, the twin keeps it).

Also read, at lower scores: a standalone CCv3 ``{spec: "lorebook_v3", data: book}`` and a bare
Chub/card-extracted ``character_book`` (``entries`` array), through the shared card-book mapper;
such a file is written back in its own shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bunzai_codecs.core import basecache, seal
from bunzai_codecs.core.codec import Codec, Coverage, EmitContext, body_as
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.core.overlay import merge3, unedited
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.lorebook import LorebookBody, LoreEntry, Trigger
from bunzai_codecs.formats._shared.wire import MapContext, file_stem, int_text
from bunzai_codecs.formats.sillytavern._wire import (
    Path,
    dumps,
    int_like,
)
from bunzai_codecs.formats.sillytavern.detect import (
    CHARACTER_BOOK,
    LOREBOOK_V3,
    book_shape,
)
from bunzai_codecs.formats.tavern import lore
from bunzai_codecs.formats.tavern.character_book import (
    ENTRY_KEY,
    ST_ENTRY_PATHS,
    body_to_book,
    book_spelling,
    book_to_body,
)

#: the six extra-scan-source flags, in SillyTavern's order, and their canonical ``scanSources`` value
SCAN_FLAGS: tuple[tuple[str, str], ...] = tuple((flag, canon) for canon, flag, _ in lore.SCAN_SOURCES)

WORLD = "world"


# -- world info -> canonical ----------------------------------------------------------------------


def write_key(t: Trigger) -> str:
    return lore.format_key(t.text, t.isRegex, t.flags)


def read_position(v: Any) -> str:
    n = int_like(v)
    if n is not None:
        return lore.POSITION_NAMES.get(n, str(n))
    if v is None:
        return "world"
    return str(v)


def write_position(p: str) -> int | str:
    n = lore.position_int(p)
    return p if n is None else n  # an unknown spelling goes back verbatim


def _read_named(v: Any, r: MapContext, path: Path, names: Mapping[int, str], default: str, bad: str) -> str:
    """The name ``names`` gives the number ``v``: ``default`` for an absent one, and for an unknown
    one with the note ``bad`` (the twin keeps the number)."""
    n = int_like(v)
    if v is None:
        return default
    if n is not None and n in names:
        return names[n]
    r.warn_at(path, f"{bad}; read as {default} (kept in the twin)")
    return default


def read_role(v: Any, r: MapContext, path: Path) -> str:
    return _read_named(v, r, path, lore.ROLE_NAMES, "system", f"role {v!r} is not 0, 1 or 2")


def read_selective_logic(v: Any, r: MapContext, path: Path) -> str:
    return _read_named(v, r, path, lore.LOGIC_NAMES, "and_any", f"selectiveLogic {v!r} is not 0..3")


def read_delay_until_recursion(v: Any, r: MapContext, path: Path) -> Any:
    """``false``/``true`` or a recursion level; canonical is the level (true = 1)."""
    if isinstance(v, bool):
        return 1 if v else 0
    return r.num(v, path, 0)


def write_delay_until_recursion(level: Any) -> Any:
    return False if level == 0 else True if level == 1 else level


def entry_to_canonical(key: str, e: dict[str, Any], index: int, r: MapContext, at: Path) -> dict[str, Any]:
    """One world info entry as a canonical ``LoreEntry`` dict (``key`` is its object key)."""
    out: dict[str, Any] = {"id": key}
    comment = r.text(e.get("comment"), (*at, "comment"), "")
    out["title"] = comment if comment.strip() else f"Entry {index + 1}"
    out["content"] = r.text(e.get("content"), (*at, "content"), "")
    out["enabled"] = not r.boolean(e.get("disable"), (*at, "disable"), False)
    out["constant"] = r.boolean(e.get("constant"), (*at, "constant"), False)
    if e.get("key") is not None:
        out["triggers"] = [lore.parse_key(k) for k in r.str_list(e["key"], (*at, "key"))]
    if e.get("keysecondary") is not None:
        out["secondaryTriggers"] = [
            lore.parse_key(k) for k in r.str_list(e["keysecondary"], (*at, "keysecondary"))
        ]
    if "selective" in e:
        out["selective"] = r.boolean(e["selective"], (*at, "selective"), None)
    out["selectiveLogic"] = read_selective_logic(e.get("selectiveLogic"), r, (*at, "selectiveLogic"))
    out["position"] = read_position(e.get("position"))
    out["depth"] = r.num(e.get("depth"), (*at, "depth"), 4)
    out["role"] = read_role(e.get("role"), r, (*at, "role"))
    out["outletName"] = r.text(e.get("outletName"), (*at, "outletName"))
    out["sortOrder"] = r.num(e.get("order"), (*at, "order"), 100)
    use_probability = r.boolean(e.get("useProbability"), (*at, "useProbability"), True)
    probability = r.num(e.get("probability"), (*at, "probability"), 100)
    out["probability"] = probability if use_probability else 100
    out["scanDepth"] = r.num(e.get("scanDepth"), (*at, "scanDepth"))
    out["caseSensitive"] = r.boolean(e.get("caseSensitive"), (*at, "caseSensitive"), None)
    out["matchWholeWords"] = r.boolean(e.get("matchWholeWords"), (*at, "matchWholeWords"), None)
    out["excludeRecursion"] = r.boolean(e.get("excludeRecursion"), (*at, "excludeRecursion"), False)
    out["preventRecursion"] = r.boolean(e.get("preventRecursion"), (*at, "preventRecursion"), False)
    out["delayUntilRecursion"] = read_delay_until_recursion(
        e.get("delayUntilRecursion"), r, (*at, "delayUntilRecursion")
    )
    for f in ("sticky", "cooldown", "delay"):
        out[f] = r.num(e.get(f), (*at, f))
    out["group"] = r.text(e.get("group"), (*at, "group"))
    out["groupWeight"] = r.num(e.get("groupWeight"), (*at, "groupWeight"))
    out["groupOverride"] = r.boolean(e.get("groupOverride"), (*at, "groupOverride"), None)
    out["useGroupScoring"] = r.boolean(e.get("useGroupScoring"), (*at, "useGroupScoring"), None)
    if any(flag in e for flag, _ in SCAN_FLAGS):
        out["scanSources"] = [src for flag, src in SCAN_FLAGS if r.boolean(e.get(flag), (*at, flag), False)]
    if e.get("characterFilter") is not None:
        out["characterFilter"] = _read_character_filter(e["characterFilter"], r, (*at, "characterFilter"))
    if e.get("triggers") is not None:
        out["generationTriggers"] = r.str_list(e["triggers"], (*at, "triggers"))
    out["ignoreBudget"] = r.boolean(e.get("ignoreBudget"), (*at, "ignoreBudget"), None)
    out["vectorized"] = r.boolean(e.get("vectorized"), (*at, "vectorized"), None)
    out["automationId"] = r.text(e.get("automationId"), (*at, "automationId"))
    out["displayIndex"] = r.num(e.get("displayIndex"), (*at, "displayIndex"))
    out["extensions"] = r.opaque(e.get("extensions"), (*at, "extensions"))
    return {k: v for k, v in out.items() if v is not None}


def _read_character_filter(v: Any, r: MapContext, at: Path) -> dict[str, Any] | None:
    f = r.opaque(v, at)
    if f is None:
        return None
    out: dict[str, Any] = {"isExclude": r.boolean(f.get("isExclude"), (*at, "isExclude"), False)}
    for k in ("names", "tags"):
        if f.get(k) is not None:
            out[k] = r.str_list(f[k], (*at, k))
    return out


def world_to_body(tree: Any, name: str, r: MapContext) -> dict[str, Any]:
    """A world info tree as a canonical ``LorebookBody`` dict (``name`` = the file stem)."""
    top = r.obj(tree, (), "a world info object")
    if "entries" not in top:
        raise Malformed("world info has no entries", path="$.entries")
    entries = r.obj(top["entries"], ("entries",), "an object keyed by uid")
    body: dict[str, Any] = {"name": name}
    ext = r.opaque(top.get("extensions"), ("extensions",))
    if ext is not None:
        body["extensions"] = ext
    source_book = r.opaque(top.get("originalData"), ("originalData",))
    if source_book is not None:
        body["sourceBook"] = source_book
    body["entries"] = [
        entry_to_canonical(k, r.obj(e, ("entries", k)), i, r, ("entries", k))
        for i, (k, e) in enumerate(entries.items())
    ]
    return body


def _world_tag(name: str) -> str:
    """``core.basecache`` tag of :func:`world_to_body`'s dicts (the mapping depends on ``name``)."""
    return f"st-world:{name}"


def world_name(tree: Any, file_name: str) -> str:
    """The book name: the file stem, else the tree's own ``name``, else empty."""
    if file_name:
        return file_stem(file_name)
    n = tree.get("name") if isinstance(tree, dict) else None
    return n if isinstance(n, str) else ""


# -- canonical -> world info ----------------------------------------------------------------------


def assign_uids(entries: list[LoreEntry], reserved: frozenset[str] = frozenset()) -> list[int]:
    """Each entry's uid: its id when that is a free non-negative integer SillyTavern holds exactly,
    else the lowest free one that no entry of the twin used (a new entry never inherits a deleted
    entry's escrow). A numeric id beyond ``MAX_SAFE_INT`` (a 39-digit id) is renumbered like any
    other id that is no uid: the fidelity report names the changed id."""
    taken: set[int] = {n for n in map(_uid, reserved) if n is not None}
    taken -= {n for n in (_uid(e.id) for e in entries) if n is not None}
    wanted: list[int | None] = []
    for e in entries:
        n = _uid(e.id)
        if n is not None and n in taken:
            n = None
        if n is not None:
            taken.add(n)
        wanted.append(n)
    out = []
    free = 0
    for n in wanted:
        if n is None:
            while free in taken:
                free += 1
            n = free
            taken.add(n)
        out.append(n)
    return out


def _uid(key: str) -> int | None:
    """The uid an entry key or id spells: a non-negative integer within ``MAX_SAFE_INT``."""
    return int_text(key) if key[:1] != "-" else None


def entry_to_native(e: LoreEntry, uid: int) -> dict[str, Any]:
    """A fresh world info entry in SillyTavern's template order. Fields SillyTavern writes as
    ``null`` when unset get that; any other canonical field that is absent (``ignoreBudget``,
    ``outletName``, ``groupWeight``, the ``match*`` flags...) is left out, which the app reads as its
    default — so the entry decodes back to the same body."""
    out: dict[str, Any] = {
        "uid": uid,
        "key": [write_key(t) for t in e.triggers or ()],
        "keysecondary": [write_key(t) for t in e.secondaryTriggers or ()],
        "comment": e.title,
        "content": e.content,
        "constant": e.constant,
    }
    _put(out, "vectorized", e.vectorized)
    _put(out, "selective", e.selective)
    out["selectiveLogic"] = lore.LOGIC_INTS[e.selectiveLogic]
    out["addMemo"] = True
    out["order"] = e.sortOrder
    out["position"] = write_position(e.position)
    out["disable"] = not e.enabled
    _put(out, "ignoreBudget", e.ignoreBudget)
    out["excludeRecursion"] = e.excludeRecursion
    out["preventRecursion"] = e.preventRecursion
    if e.scanSources is not None:
        for flag, src in SCAN_FLAGS:
            out[flag] = src in e.scanSources
    out["delayUntilRecursion"] = write_delay_until_recursion(e.delayUntilRecursion)
    out["probability"] = e.probability
    out["useProbability"] = True
    out["depth"] = e.depth
    _put(out, "outletName", e.outletName)
    _put(out, "group", e.group)
    _put(out, "groupOverride", e.groupOverride)
    _put(out, "groupWeight", e.groupWeight)
    out["scanDepth"] = e.scanDepth
    out["caseSensitive"] = e.caseSensitive
    out["matchWholeWords"] = e.matchWholeWords
    out["useGroupScoring"] = e.useGroupScoring
    _put(out, "automationId", e.automationId)
    out["role"] = lore.ROLE_INTS[e.role]
    out["sticky"] = e.sticky
    out["cooldown"] = e.cooldown
    out["delay"] = e.delay
    if e.generationTriggers is not None:
        out["triggers"] = list(e.generationTriggers)
    _put(out, "displayIndex", e.displayIndex)
    if e.characterFilter is not None:
        out["characterFilter"] = e.characterFilter.model_dump(mode="json")
    _put(out, "extensions", e.extensions)
    return out


def _put(out: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        out[key] = value


def body_to_world(
    body: LorebookBody, *, with_name: bool, twin_keys: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """A fresh world info tree. ``name`` is written only for a fresh export (a world's name is its
    file name; an escrowed file keeps whatever it had). ``twin_keys`` are the entry keys of the
    twin: an entry keeps its key, and no new entry takes a key the twin used."""
    out: dict[str, Any] = {}
    uids = assign_uids(body.entries, twin_keys)
    out["entries"] = {
        (e.id if e.id in twin_keys else str(u)): entry_to_native(e, u)
        for e, u in zip(body.entries, uids, strict=True)
    }
    if with_name and body.name:
        out["name"] = body.name
    if body.extensions is not None:
        out["extensions"] = body.extensions
    if body.sourceBook is not None:
        out["originalData"] = body.sourceBook
    return out


# -- the codec --------------------------------------------------------------------------------------


def book_name(book_body: dict[str, Any], file_name: str) -> str:
    """A standalone book's name: its own ``name``, else the file stem."""
    name = book_body.get("name")
    return name if isinstance(name, str) and name else file_stem(file_name) if file_name else ""


def _book_of(tree: Any, shape: str) -> tuple[Any, MapContext]:
    if shape == LOREBOOK_V3:
        return tree["data"], MapContext("$.data")
    return tree, MapContext("$")


def _world_dict(raw: dict[str, Any], name: str, mapped: Any) -> Any:
    """The body dict of world tree ``raw``: ``mapped`` (decode's), or when that is None mapped again."""
    return world_to_body(raw, name, MapContext(lenient=True)) if mapped is None else mapped


def _world_merge(raw: dict[str, Any], name: str, body: LorebookBody, mapped: Any) -> Any:
    """The twin's world tree with what ``body`` changes from the book it decodes to (``mapped``:
    decode's body dict of ``raw``, or None to map it again) merged in."""
    old = LorebookBody.model_validate(_world_dict(raw, name, mapped))
    keys = frozenset(raw["entries"])
    base = body_to_world(old, with_name=False, twin_keys=keys)
    fresh = body_to_world(body, with_name=False, twin_keys=keys)
    return merge3(raw, base, fresh)


class SillyTavernLorebookCodec(Codec):
    id = "sillytavern-lorebook"
    coverage = Coverage.of(
        "extensions",
        "sourceBook",
        *sorted(
            ST_ENTRY_PATHS
            - {"entries[].categoryId", "entries[].comment", "entries[].id", "entries[].priority"}
        ),
        notes=[
            "the book name is the file name, not part of the file: it is kept only when the export is saved "
            "as `<name>.json` (bunzai names a linked book written beside a file `<stem>.lorebook.json`; "
            "characters a file name cannot hold are replaced)",
            "book settings (scan depth, budget, recursion) are global SillyTavern settings, not part of a "
            "world file",
            "no eviction priority, no separate entry comment, no categories",
            "scanSources: only the six SillyTavern match* sources; character_name, character_tags and "
            "persona_tags are not held",
            "entry ids are numeric uids: a numeric id SillyTavern holds exactly (up to 2^53 - 1) is kept,"
            " any other id (a UUID, a 39-digit number) is renumbered",
        ],
    )

    def decode(self, s: Sniff) -> Decoded:
        tree = s.require_json()
        if isinstance(tree, dict) and not isinstance(tree.get("entries"), dict):
            shape = book_shape(tree)
            if shape is None and isinstance(tree.get("entries"), list):
                shape = CHARACTER_BOOK  # asked for by name: read any entries array as a card book
            if shape is not None:
                return Decoded([self._decode_book(s, tree, shape)])
        r = MapContext(lenient=True)
        name = world_name(tree, s.name)
        body = world_to_body(tree, name, r)
        e = self.entity(s, body, raw=tree, shape=WORLD, name=name, mark=_world_tag(name))
        seal.keep_unless_marked(e.body, _world_tag(name), tree, body, input_bytes=s.size)  # for encode
        e.warnings.extend(r.warnings)
        return Decoded([e])

    def _decode_book(self, s: Sniff, tree: dict[str, Any], shape: str) -> CanonicalEntity:
        """A standalone ``lorebook_v3`` or bare ``character_book`` through the shared card-book mapper."""
        book, ctx = _book_of(tree, shape)
        body = book_to_body(book, ctx)
        name = book_name(body, s.name)
        body["name"] = name
        e = self.entity(s, body, raw=tree, shape=shape, name=name)
        e.warnings.extend(ctx.warnings)
        return e

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        body = body_as(entity, LorebookBody)
        twin = entity.twin(self.id)
        if twin is not None and twin.shape == WORLD:
            raw = twin.raw
            name = twin.name or ""
            mapped = basecache.recall(_world_tag(name), raw)  # what decode mapped from this tree
            tag = _world_tag(name)
            # (without the mark nor decode's dict, the merge below maps the twin once, not twice)
            if (seal.holds(body, tag, raw) or mapped is not None) and unedited(
                body, lambda: _world_dict(raw, name, mapped), tag=tag, raw=raw
            ):
                return dumps(raw)  # what the merge below gives an unedited body
            return dumps(_world_merge(raw, name, body, mapped))
        if twin is not None and twin.shape in (LOREBOOK_V3, CHARACTER_BOOK):
            raw = twin.raw
            book, _ = _book_of(raw, twin.shape)
            old_dict = book_to_body(book)
            old_dict["name"] = old_dict["name"] or twin.name or ""
            old_book = LorebookBody.model_validate(old_dict)
            spelling = book_spelling(book)
            old_native: Any = body_to_book(old_book, spelling=spelling)
            new_native: Any = body_to_book(body, spelling=spelling)
            if twin.shape == LOREBOOK_V3:
                old_native, new_native = {"data": old_native}, {"data": new_native}
            return dumps(merge3(raw, old_native, new_native, list_key=ENTRY_KEY))
        return dumps(body_to_world(body, with_name=True))
