"""sillytavern-lorebook: SillyTavern world info files (``worlds/<name>.json``).

The native shape is ``{entries: {"<uid>": {...}}, name?, extensions?, originalData?}``: ``entries``
is an object keyed by the uid as a string (not an array), each entry carrying up to ~45 fields
(formats/sillytavern.md §5). The book's name is the file stem. ``originalData`` (the card book a
world was imported from) and ``addMemo`` have no canonical home and ride in the escrow twin.

Enumerations (CANONICAL.md §2.3): ``position`` 0..7 -> ``world``, ``character``,
``author_note_top``, ``author_note_bottom``, ``depth``, ``before_example``, ``after_example``,
``outlet`` (unknown numbers kept verbatim as their text); ``role`` 0/1/2 (and ``null``) ->
``system``/``user``/``assistant``; ``selectiveLogic`` 0..3 -> ``and_any``/``not_all``/``not_any``/
``and_all`` (an unknown number reads as ``and_any`` with a warning, the twin keeps it).

Also read, at lower scores: a standalone CCv3 ``{spec: "lorebook_v3", data: book}`` and a bare
Chub/card-extracted ``character_book`` (``entries`` array), through the shared card-book mapper;
such a file is written back in its own shape.
"""

from __future__ import annotations

import re
from typing import Any

from bunzai_codecs.core.codec import Codec, Coverage, EmitContext
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.errors import Malformed, Unsupported
from bunzai_codecs.core.overlay import merge3
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.lorebook import LorebookBody, LoreEntry, Trigger
from bunzai_codecs.formats.sillytavern._wire import (
    Path,
    Reader,
    dumps,
    file_stem,
    int_like,
    none_if_empty,
)

#: world info ``position`` number -> canonical position
POSITIONS: dict[int, str] = {
    0: "world",
    1: "character",
    2: "author_note_top",
    3: "author_note_bottom",
    4: "depth",
    5: "before_example",
    6: "after_example",
    7: "outlet",
}
POSITION_NUMBERS: dict[str, int] = {v: k for k, v in POSITIONS.items()}

#: world info ``role`` number -> canonical role (``null`` is system too)
ROLES: dict[int, str] = {0: "system", 1: "user", 2: "assistant"}
ROLE_NUMBERS: dict[str, int] = {v: k for k, v in ROLES.items()}

#: world info ``selectiveLogic`` number -> canonical logic
SELECTIVE_LOGIC: dict[int, str] = {0: "and_any", 1: "not_all", 2: "not_any", 3: "and_all"}
SELECTIVE_LOGIC_NUMBERS: dict[str, int] = {v: k for k, v in SELECTIVE_LOGIC.items()}

#: the six extra-scan-source flags, in SillyTavern's order, and their canonical ``scanSources`` value
SCAN_FLAGS: tuple[tuple[str, str], ...] = (
    ("matchPersonaDescription", "persona_description"),
    ("matchCharacterDescription", "character_description"),
    ("matchCharacterPersonality", "character_personality"),
    ("matchCharacterDepthPrompt", "character_depth_prompt"),
    ("matchScenario", "character_scenario"),
    ("matchCreatorNotes", "creator_notes"),
)

#: a key written ``/pattern/flags`` is a JavaScript regex in SillyTavern (flags from ``gimsuy``)
_REGEX_KEY = re.compile(r"/([\s\S]+)/([gimsuy]*)")

WORLD = "world"


# -- world info -> canonical ----------------------------------------------------------------------


def parse_key(key: str) -> dict[str, Any]:
    """One world info key as a canonical trigger: ``/p/f`` is a regex, anything else plain text."""
    m = _REGEX_KEY.fullmatch(key)
    if m is None:
        return {"text": key}
    out: dict[str, Any] = {"text": m.group(1), "isRegex": True}
    if m.group(2):
        out["flags"] = m.group(2)
    return out


def write_key(t: Trigger) -> str:
    return f"/{t.text}/{t.flags or ''}" if t.isRegex else t.text


def read_position(v: Any) -> str:
    n = int_like(v)
    if n is not None:
        return POSITIONS.get(n, str(n))
    if v is None:
        return "world"
    return str(v)


def write_position(p: str) -> int | str:
    if p in POSITION_NUMBERS:
        return POSITION_NUMBERS[p]
    try:
        return int(p)
    except ValueError:
        return p  # an unknown spelling goes back verbatim


def read_role(v: Any, r: Reader, path: Path) -> str:
    n = int_like(v)
    if v is None:
        return "system"
    if n is not None and n in ROLES:
        return ROLES[n]
    r.warn(path, f"role {v!r} is not 0, 1 or 2; read as system (kept in the twin)")
    return "system"


def read_selective_logic(v: Any, r: Reader, path: Path) -> str:
    n = int_like(v)
    if v is None:
        return "and_any"
    if n is not None and n in SELECTIVE_LOGIC:
        return SELECTIVE_LOGIC[n]
    r.warn(path, f"selectiveLogic {v!r} is not 0..3; read as and_any (kept in the twin)")
    return "and_any"


def read_delay_until_recursion(v: Any, r: Reader, path: Path) -> Any:
    """``false``/``true`` or a recursion level; canonical is the level (true = 1)."""
    if isinstance(v, bool):
        return 1 if v else 0
    return r.num(v, path, 0)


def write_delay_until_recursion(level: Any) -> Any:
    return False if level == 0 else True if level == 1 else level


def entry_to_canonical(key: str, e: dict[str, Any], index: int, r: Reader, at: Path) -> dict[str, Any]:
    """One world info entry as a canonical ``LoreEntry`` dict (``key`` is its object key)."""
    out: dict[str, Any] = {"id": key}
    comment = r.text(e.get("comment"), (*at, "comment"), "")
    out["title"] = comment if comment.strip() else f"Entry {index + 1}"
    out["content"] = r.text(e.get("content"), (*at, "content"), "")
    out["enabled"] = not r.boolean(e.get("disable"), (*at, "disable"), False)
    out["constant"] = r.boolean(e.get("constant"), (*at, "constant"), False)
    if e.get("key") is not None:
        out["triggers"] = [parse_key(k) for k in r.str_list(e["key"], (*at, "key"))]
    if e.get("keysecondary") is not None:
        out["secondaryTriggers"] = [
            parse_key(k) for k in r.str_list(e["keysecondary"], (*at, "keysecondary"))
        ]
    if "selective" in e:
        out["selective"] = r.boolean(e["selective"], (*at, "selective"), None)
    out["selectiveLogic"] = read_selective_logic(e.get("selectiveLogic"), r, (*at, "selectiveLogic"))
    out["position"] = read_position(e.get("position"))
    out["depth"] = r.num(e.get("depth"), (*at, "depth"), 4)
    out["role"] = read_role(e.get("role"), r, (*at, "role"))
    out["outletName"] = none_if_empty(r.text(e.get("outletName"), (*at, "outletName")))
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
    out["group"] = none_if_empty(r.text(e.get("group"), (*at, "group")))
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
    out["automationId"] = none_if_empty(r.text(e.get("automationId"), (*at, "automationId")))
    out["displayIndex"] = r.num(e.get("displayIndex"), (*at, "displayIndex"))
    out["extensions"] = r.opaque(e.get("extensions"), (*at, "extensions"))
    return {k: v for k, v in out.items() if v is not None}


def _read_character_filter(v: Any, r: Reader, at: Path) -> dict[str, Any] | None:
    f = r.opaque(v, at)
    if f is None:
        return None
    out: dict[str, Any] = {"isExclude": r.boolean(f.get("isExclude"), (*at, "isExclude"), False)}
    for k in ("names", "tags"):
        if f.get(k) is not None:
            out[k] = r.str_list(f[k], (*at, k))
    return out


def world_to_body(tree: Any, name: str, r: Reader) -> dict[str, Any]:
    """A world info tree as a canonical ``LorebookBody`` dict (``name`` = the file stem)."""
    top = r.obj(tree, (), "a world info object")
    if "entries" not in top:
        raise Malformed("world info has no entries", path="$.entries")
    entries = r.obj(top["entries"], ("entries",), "an object keyed by uid")
    body: dict[str, Any] = {"name": name}
    ext = r.opaque(top.get("extensions"), ("extensions",))
    if ext is not None:
        body["extensions"] = ext
    body["entries"] = [
        entry_to_canonical(k, r.obj(e, ("entries", k)), i, r, ("entries", k))
        for i, (k, e) in enumerate(entries.items())
    ]
    return body


def world_name(tree: Any, file_name: str) -> str:
    """The book name: the file stem, else the tree's own ``name``, else empty."""
    if file_name:
        return file_stem(file_name)
    n = tree.get("name") if isinstance(tree, dict) else None
    return n if isinstance(n, str) else ""


# -- canonical -> world info ----------------------------------------------------------------------


def assign_uids(entries: list[LoreEntry], reserved: frozenset[str] = frozenset()) -> list[int]:
    """Each entry's uid: its id when that is a free non-negative integer, else the lowest free one
    that no entry of the twin used (a new entry never inherits a deleted entry's escrow)."""
    taken: set[int] = {int(k) for k in reserved if k.isdecimal() and k.isascii()}
    mine = {e.id for e in entries}
    taken -= {int(k) for k in mine if k.isdecimal() and k.isascii()}
    wanted: list[int | None] = []
    for e in entries:
        n = int(e.id) if e.id.isdecimal() and e.id.isascii() else None
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


def entry_to_native(e: LoreEntry, uid: int) -> dict[str, Any]:
    """A fresh world info entry in SillyTavern's template order. Fields SillyTavern writes as
    ``null``/``""`` when unset get that; a canonical field that is absent and has no such spelling
    (``ignoreBudget``, ``groupWeight``, the ``match*`` flags...) is left out, which the app reads as
    its default — so the entry decodes back to the same body."""
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
    out["selectiveLogic"] = SELECTIVE_LOGIC_NUMBERS[e.selectiveLogic]
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
    out["outletName"] = e.outletName or ""
    out["group"] = e.group or ""
    _put(out, "groupOverride", e.groupOverride)
    _put(out, "groupWeight", e.groupWeight)
    out["scanDepth"] = e.scanDepth
    out["caseSensitive"] = e.caseSensitive
    out["matchWholeWords"] = e.matchWholeWords
    out["useGroupScoring"] = e.useGroupScoring
    out["automationId"] = e.automationId or ""
    out["role"] = ROLE_NUMBERS[e.role]
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
    return out


# -- the codec --------------------------------------------------------------------------------------


def _is_world(t: dict[str, Any]) -> bool:
    entries = t.get("entries")
    if not isinstance(entries, dict):
        return False
    if not all(isinstance(e, dict) for e in entries.values()):
        return False
    if not entries:
        return True
    return any(("key" in e or "uid" in e or "content" in e) for e in entries.values())


def _is_vaud(t: dict[str, Any]) -> bool:
    return "schemaVersion" in t and "body" in t


class SillyTavernLorebookCodec(Codec):
    id = "sillytavern-lorebook"
    kind = "lorebook"
    family = "sillytavern"
    label = "SillyTavern world info"
    suffixes = (".json",)
    extension = ".json"
    coverage = Coverage.of(
        "name",
        "extensions",
        "entries[].id",
        "entries[].title",
        "entries[].content",
        "entries[].enabled",
        "entries[].constant",
        "entries[].triggers[].text",
        "entries[].triggers[].isRegex",
        "entries[].triggers[].flags",
        "entries[].secondaryTriggers[].text",
        "entries[].secondaryTriggers[].isRegex",
        "entries[].secondaryTriggers[].flags",
        "entries[].selective",
        "entries[].selectiveLogic",
        "entries[].position",
        "entries[].depth",
        "entries[].role",
        "entries[].outletName",
        "entries[].sortOrder",
        "entries[].probability",
        "entries[].scanDepth",
        "entries[].caseSensitive",
        "entries[].matchWholeWords",
        "entries[].excludeRecursion",
        "entries[].preventRecursion",
        "entries[].delayUntilRecursion",
        "entries[].sticky",
        "entries[].cooldown",
        "entries[].delay",
        "entries[].group",
        "entries[].groupWeight",
        "entries[].groupOverride",
        "entries[].useGroupScoring",
        "entries[].scanSources",
        "entries[].characterFilter",
        "entries[].generationTriggers",
        "entries[].ignoreBudget",
        "entries[].vectorized",
        "entries[].automationId",
        "entries[].displayIndex",
        "entries[].extensions",
        notes=[
            "the book name is the file name; book settings (scan depth, budget, recursion) are global "
            "SillyTavern settings, not part of a world file",
            "no eviction priority, no separate entry comment, no categories",
            "scanSources: only the six SillyTavern match* sources",
            "a numeric entry id is kept as the uid; other ids are renumbered",
        ],
    )

    def detect(self, s: Sniff) -> float:
        t = s.json_object
        if t is None or _is_vaud(t):
            return 0.0
        if _is_world(t):
            return 0.9
        return 0.0

    def decode(self, s: Sniff) -> Decoded:
        tree = s.require_json()
        r = Reader()
        if isinstance(tree, dict) and isinstance(tree.get("entries"), list):
            raise Malformed(
                "entries is an array: this is a card lorebook (character_book), not world info",
                path="$.entries",
            )
        name = world_name(tree, s.name)
        body = world_to_body(tree, name, r)
        e = self.entity(s, body, raw=tree, shape=WORLD, name=name)
        e.warnings.extend(r.warnings)
        return Decoded([e])

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        if not isinstance(entity.body, LorebookBody):
            raise Unsupported(f"{self.id} holds lorebooks, not {entity.kind}")
        twin = entity.twin(self.id)
        if twin is not None and twin.get("shape") == WORLD:
            raw = twin["raw"]
            old = LorebookBody.model_validate(world_to_body(raw, twin.get("name", ""), Reader()))
            keys = frozenset(raw["entries"])
            base = body_to_world(old, with_name=False, twin_keys=keys)
            fresh = body_to_world(entity.body, with_name=False, twin_keys=keys)
            return dumps(merge3(raw, base, fresh))
        return dumps(body_to_world(entity.body, with_name=True))
