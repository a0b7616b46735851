"""kobold-save: a KoboldAI story save (KoboldAI Lite, KoboldCpp, the KoboldAI client) read as a
lorebook, and KoboldAI Lite's world info export.

A save is ``{gamestarted, prompt, memory, authorsnote, anotetemplate, actions[], actions_metadata,
worldinfo[], wifolders_d, wifolders_l, ...}`` (docs/formats/kobold.md#the-save); KoboldAI Lite
adds its own keys (``anotestr``, ``wisearchdepth``, ``wiinsertlocation``, ``personal_notes``,
``documentdb_*``, ``altbranches``, ``savedsettings``, ``savedaestheticsettings``...). A world info
entry is ``{key, keysecondary, keyanti, content, comment, folder, selective, constant,
probability, wigroup, widisabled}`` (Lite's set; the client writes the first seven).

Canonical: the world info entries are the book's entries (``key``/``keysecondary``/``keyanti`` are
comma-separated key lists, each key trimmed, as both apps match them); the memory and the author's
note are two constant entries (``formats/_shared/story_notes.py``); the client's folders and
Lite's groups are categories. The story itself (``prompt``, ``actions``), the author's note
template, Lite's settings and everything else stay in the escrow twin, and a same-format export of
an unedited save gives its bytes back (its JSON layout is a twin facet). A save without world info
is still a save: a book holding its memory and author's note, or no entry at all.

The world info export (a bare array of entries) reads as a book of those entries and is written
back as one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bunzai_codecs.core.codec import Codec, Coverage, EmitContext, Reshape, body_as
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.core.escrow import Twin, facet
from bunzai_codecs.core.overlay import overlay_twin
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.lorebook import LorebookBody, LoreCategory, LoreEntry
from bunzai_codecs.formats._shared import json_style, story_notes
from bunzai_codecs.formats._shared.story_notes import AUTHORS_NOTE, MEMORY
from bunzai_codecs.formats._shared.wire import (
    MapContext,
    Path,
    file_stem,
    js_number_text,
    parse_number,
    wrong,
)
from bunzai_codecs.formats.kobold.detect import SAVE, WORLD_INFO, shape_of
from bunzai_codecs.formats.tavern.character_book import BASIC_ENTRY_PATHS

#: the layout a fresh file is written in: KoboldAI Lite's ``JSON.stringify(save)``
FRESH_STYLE = "js"
#: a category id's prefix: a client folder (numbered) or a Lite group (named)
FOLDER, GROUP = "folder:", "group:"
#: the list key a mapped entry carries through the overlay (never written: see ``_unmarked``)
_MARK = "\0bunzai-entry-id"


# -- keys ----------------------------------------------------------------------------------------


def split_keys(text: str) -> list[str]:
    """A comma-separated key list as the apps read it: split on every comma, each key trimmed; an
    empty or blank list is no key."""
    return [] if not text.strip() else [k.strip() for k in text.split(",")]


def join_keys(texts: list[str]) -> str:
    return ",".join(texts)


def _key_lost(text: str) -> bool:
    return "," in text or text != text.strip() or not text


def _keys_lost(triggers: Any) -> bool:
    """A key list KoboldAI cannot keep as it is: a key with a comma, blank, or with spaces around."""
    return isinstance(triggers, list) and any(
        isinstance(t, dict) and _key_lost(str(t.get("text", ""))) for t in triggers
    )


_KEYS_NOTE = (
    "KoboldAI keeps an entry's keys as one comma-separated string, split on every comma and trimmed "
    "when matched: a key holding a comma comes back as two, a blank key or one with spaces around it "
    "comes back trimmed"
)


_CATEGORIES_NOTE = (
    "a KoboldAI Lite group is only the name its entries carry: categories come back one per name, in"
    " the order entries first use them (a category no entry uses is not kept); the client's numbered"
    " folders keep their list"
)


def _logic_lost(logic: Any) -> bool:
    """A logic KoboldAI cannot keep: and_all, not_all, and not_any without anti keys to hold it."""
    return logic in ("and_all", "not_all", "not_any")


def _never(probability: Any) -> bool:
    return isinstance(probability, int | float) and probability < 1


def folder_uid(category_id: str) -> int | None:
    """The client folder uid a category id names (``folder:<integer>``), else None: any other
    category is written as a Lite group, by name."""
    if not category_id.startswith(FOLDER):
        return None
    text = category_id[len(FOLDER) :]
    n = parse_number(text)
    return n if isinstance(n, int) and js_number_text(n) == text else None


def group_name(category: Any) -> str:
    """The Lite group a category is written as: its name, else its id."""
    name = category.get("name") if isinstance(category, dict) else category.name
    cid = category.get("id") if isinstance(category, dict) else category.id
    return str(name or str(cid or "").removeprefix(GROUP))


def _categories_reshaped(body: Any) -> bool:
    """Whether a body's categories read back otherwise from a KoboldAI file: client folders stay as
    listed, but a Lite group is only a name its entries carry, so the others come back one per name,
    in the order entries first use them, and one no entry uses is gone."""
    cats = [c for c in body.get("categories") or [] if isinstance(c, dict)] if isinstance(body, dict) else []
    if not cats:
        return False
    by_id = {c.get("id"): c for c in cats}
    back = [str(c.get("name") or "") for c in cats if folder_uid(str(c.get("id") or "")) is not None]
    groups: list[str] = []
    for e in body.get("entries") or []:
        if not isinstance(e, dict) or (e.get("constant") is True and e.get("id") in (MEMORY, AUTHORS_NOTE)):
            continue
        c = by_id.get(e.get("categoryId"))
        if c is not None and folder_uid(str(c.get("id") or "")) is None and group_name(c) not in groups:
            groups.append(group_name(c))
    return [str(c.get("name") or "") for c in cats] != back + groups


# -- native -> canonical -------------------------------------------------------------------------


def _text(v: Any, r: MapContext, at: Path) -> str | None:
    return r.text(v, at)


def _probability(v: Any, r: MapContext, at: Path) -> int | float:
    """Lite's chance (its UI stores the select's text, ``"50"``): 0, blank or absent is "always"
    (Lite skips the roll for a falsy value), as is anything from 100 up."""
    n = v if isinstance(v, int | float) and not isinstance(v, bool) else None
    if isinstance(v, str):
        n = parse_number(v) if v.strip() else 0
    if n is None and v is not None:
        n = r.num(v, at, 100)  # the policy's note or error for a value of another type
    if not n or n >= 100:
        return 100
    return max(n, 0)


def _folder_id(v: Any, at: str) -> str | None:
    """A client folder uid (an integer; text read as is) as a category id."""
    if v is None:
        return None
    if isinstance(v, int | float) and not isinstance(v, bool):
        return FOLDER + js_number_text(v)
    if isinstance(v, str):
        return FOLDER + v
    raise wrong(at, "a folder uid (a number)", v)


class _Categories:
    """The categories a save's entries fall into, in the order first met: the client's folders
    (``wifolders_l``, then any other ``wifolders_d`` key or entry folder), then Lite's groups."""

    def __init__(self) -> None:
        self.by_id: dict[str, dict[str, Any]] = {}

    def add(self, cid: str, name: str) -> str:
        if cid not in self.by_id:
            self.by_id[cid] = {"id": cid, "name": name, "sortOrder": len(self.by_id)}
        return cid

    def listed(self) -> list[dict[str, Any]]:
        return list(self.by_id.values())


def _folders(t: dict[str, Any], r: MapContext, cats: _Categories) -> None:
    d = t.get("wifolders_d")
    names: dict[str, str] = {}
    if d is not None:
        for k, info in r.obj(d, ("wifolders_d",)).items():
            info = r.obj(info, ("wifolders_d", k))
            names[k] = r.text(info.get("name"), ("wifolders_d", k, "name"), "") or ""
    order = t.get("wifolders_l")
    for i, uid in enumerate([] if order is None else r.arr(order, ("wifolders_l",))):
        cid = _folder_id(uid, r.at("wifolders_l", i))
        if cid is not None:
            cats.add(cid, names.get(cid[len(FOLDER) :], ""))
    for k, name in names.items():
        cats.add(FOLDER + k, name)


def entry_to_canonical(e: Any, i: int, r: MapContext, cats: _Categories) -> dict[str, Any]:
    """World info entry ``i`` as a canonical ``LoreEntry`` dict."""
    at: Path = (i,)
    e = r.obj(e, at)
    out: dict[str, Any] = {"id": str(i)}
    comment = _text(e.get("comment"), r, (*at, "comment")) or ""
    out["title"] = comment if comment.strip() else f"Entry {i + 1}"
    out["content"] = _text(e.get("content"), r, (*at, "content")) or ""
    out["enabled"] = r.boolean(e.get("widisabled"), (*at, "widisabled"), False) is not True
    out["constant"] = r.boolean(e.get("constant"), (*at, "constant"), False) is True
    key = _text(e.get("key"), r, (*at, "key"))
    if key is not None:
        out["triggers"] = [{"text": k} for k in split_keys(key)]
    if "selective" in e:
        out["selective"] = r.boolean(e["selective"], (*at, "selective"), None)
    second = _text(e.get("keysecondary"), r, (*at, "keysecondary"))
    anti = _text(e.get("keyanti"), r, (*at, "keyanti"))
    if second is not None and second.strip():
        out["secondaryTriggers"] = [{"text": k} for k in split_keys(second)]
    elif anti is not None and anti.strip():
        out["secondaryTriggers"] = [{"text": k} for k in split_keys(anti)]
        out["selectiveLogic"] = "not_any"
    elif second is not None or anti is not None:
        out["secondaryTriggers"] = []
    if "probability" in e:
        out["probability"] = _probability(e["probability"], r, (*at, "probability"))
    group = _text(e.get("wigroup"), r, (*at, "wigroup"))
    folder = _folder_id(e.get("folder"), r.at(*at, "folder"))
    if group:
        out["categoryId"] = cats.add(GROUP + group, group)
    elif folder is not None:
        out["categoryId"] = cats.add(folder, "")
    return out


def save_to_body(t: Any, name: str, r: MapContext) -> dict[str, Any]:
    """A save as a canonical ``LorebookBody`` dict: its notes, then its world info."""
    t = r.obj(t, (), "a KoboldAI save object")
    entries: list[dict[str, Any]] = []
    memory = r.text(t.get("memory"), ("memory",), "") or ""
    note = r.text(t.get("authorsnote"), ("authorsnote",), "") or ""
    if memory:
        entries.append(story_notes.memory_entry(memory))
    if note:
        entries.append(story_notes.note_entry(note))
    cats = _Categories()
    _folders(t, r, cats)
    wi = t.get("worldinfo")
    rows = [] if wi is None else r.arr(wi, ("worldinfo",))
    wr = r.child("worldinfo")
    entries += [entry_to_canonical(e, i, wr, cats) for i, e in enumerate(rows)]
    return {"name": name, "categories": cats.listed(), "entries": entries}


def world_info_to_body(t: Any, name: str, r: MapContext) -> dict[str, Any]:
    """Lite's world info export (an array of entries) as a canonical ``LorebookBody`` dict."""
    rows = r.arr(t, (), "an array of world info entries")
    cats = _Categories()
    entries = [entry_to_canonical(e, i, r, cats) for i, e in enumerate(rows)]
    return {"name": name, "categories": cats.listed(), "entries": entries}


def to_body(tree: Any, shape: str, name: str, r: MapContext) -> dict[str, Any]:
    return save_to_body(tree, name, r) if shape == SAVE else world_info_to_body(tree, name, r)


# -- canonical -> native -------------------------------------------------------------------------


def _chance(p: int | float) -> int | float:
    """A canonical probability as Lite's: one below 1 (never) is 1, which Lite never rolls under."""
    return 1 if p < 1 else p


def entry_to_native(e: LoreEntry, cats: dict[str, LoreCategory]) -> dict[str, Any]:
    """A world info entry in KoboldAI Lite's key order (which the client reads too)."""
    second = [t.text for t in e.secondaryTriggers or ()]
    anti = e.selectiveLogic in ("not_any", "not_all")
    cat = cats.get(e.categoryId) if e.categoryId else None
    folder: int | str | None = None
    group = ""
    if cat is not None and folder_uid(cat.id) is not None:
        folder = folder_uid(cat.id)
    elif cat is not None:
        group = group_name(cat)
    out: dict[str, Any] = {
        _MARK: e.id,
        "key": join_keys([t.text for t in e.triggers or ()]),
        "keysecondary": "" if anti else join_keys(second),
        "keyanti": join_keys(second) if anti else "",
        "content": e.content,
        "comment": e.title,
        "folder": folder,
    }
    if e.selective is not None:
        out["selective"] = e.selective
    out["constant"] = e.constant
    out["probability"] = _chance(e.probability)
    out["wigroup"] = group
    out["widisabled"] = not e.enabled
    return out


def _world_entries(body: LorebookBody, notes: bool) -> list[LoreEntry]:
    if not notes:
        return list(body.entries)
    memory = next((e for e in body.entries if story_notes.is_note(e, MEMORY)), None)
    note = next((e for e in body.entries if story_notes.is_note(e, AUTHORS_NOTE)), None)
    return [e for e in body.entries if e is not memory and e is not note]


def body_to_world_info(body: LorebookBody, notes: bool = False) -> list[dict[str, Any]]:
    cats = {c.id: c for c in body.categories}
    return [entry_to_native(e, cats) for e in _world_entries(body, notes)]


def body_to_save(body: LorebookBody) -> dict[str, Any]:
    """The parts of a save the canonical body decides (the overlay's two sides)."""
    folders = [(uid, c) for c in body.categories if (uid := folder_uid(c.id)) is not None]
    return {
        "memory": story_notes.note_text(body.entries, MEMORY),
        "authorsnote": story_notes.note_text(body.entries, AUTHORS_NOTE),
        "worldinfo": body_to_world_info(body, notes=True),
        "wifolders_d": {js_number_text(uid): {"name": c.name} for uid, c in folders},
        "wifolders_l": [uid for uid, _ in folders],
    }


def fresh_save(body: LorebookBody) -> dict[str, Any]:
    """A new save in KoboldAI Lite's shape (its ``generate_base_storyobj``) with no story."""
    m = body_to_save(body)
    return {
        "gamestarted": True,
        "prompt": "",
        "memory": m["memory"],
        "authorsnote": m["authorsnote"],
        "anotetemplate": "",
        "actions": [],
        "actions_metadata": {},
        "worldinfo": m["worldinfo"],
        "wifolders_d": m["wifolders_d"],
        "wifolders_l": m["wifolders_l"],
    }


def _entry_key(item: Any) -> Any:
    return item.get(_MARK) if isinstance(item, dict) else None


def _unmarked(tree: Any) -> Any:
    """``tree`` without the overlay's list keys (an entry the edit added still carries one)."""
    if isinstance(tree, list):
        return [_unmarked(x) for x in tree]
    if isinstance(tree, dict):
        if _MARK in tree:
            return {k: v for k, v in tree.items() if k != _MARK}
        if "worldinfo" in tree and isinstance(tree["worldinfo"], list):
            return {**tree, "worldinfo": _unmarked(tree["worldinfo"])}
    return tree


# -- the codec -----------------------------------------------------------------------------------


@dataclass(eq=False)
class KoboldTwin(Twin):
    """A KoboldAI file's escrow: the tree, its ``shape`` (``save`` or ``worldinfo``), the ``name``
    the book took from the file name, and ``style``, the JSON layout the file had (``js``: Lite's
    ``JSON.stringify``; ``py-indent3``: the client's ``json.dumps``; ``formats/_shared/json_style.py``)."""

    style: str | None = facet(str, wire="jsonStyle")


class KoboldSaveCodec(Codec):
    id = "kobold-save"
    twin_type = KoboldTwin
    coverage = Coverage.of(
        *BASIC_ENTRY_PATHS,
        "entries[].secondaryTriggers[].text",
        "entries[].selective",
        "entries[].selectiveLogic",
        "entries[].probability",
        "categories[].name",
        notes=[
            "the memory and the author's note are two constant entries, `memory` and `authors-note`"
            " (at depth 3): a constant entry with one of those ids is written back as the save's note,"
            " the author's note without its template (`anotetemplate` stays in escrow)",
            "the story (`prompt`, `actions`), Lite's settings and every other key of the save ride in"
            " escrow; the book name is the save's file name",
            "no regex keys: a regex trigger is written as its pattern (KoboldAI matches it as plain text)",
            "secondary keys are `keysecondary` (and_any) or Lite's `keyanti` (not_any); and_all and"
            " not_all are written as and_any and not_any; an entry using both key lists reads as its"
            " `keysecondary`, the anti keys kept in escrow",
            "probability is KoboldAI Lite's 0-100 roll; 0 or absent is always (Lite skips the roll):"
            " a probability below 1 is written as 1, which never fires",
            "categories are the client's folders and Lite's groups, by name; their ids are not kept, and"
            " a group is only the name its entries carry (one per name, in the order entries first use"
            " them; a category no entry uses is not kept)",
            "no position, depth, order, scan or recursion settings per entry: Lite's `wisearchdepth`"
            " and `wiinsertlocation` are per save and in characters, kept in escrow",
        ],
        reshapes=[
            Reshape("entries", story_notes.notes_out_of_place, story_notes.NOTES_FIRST),
            Reshape("categories", _categories_reshaped, _CATEGORIES_NOTE, whole=True),
            Reshape("entries[].triggers", _keys_lost, _KEYS_NOTE),
            Reshape("entries[].secondaryTriggers", _keys_lost, _KEYS_NOTE),
            Reshape(
                "entries[].selectiveLogic",
                _logic_lost,
                "KoboldAI has no and_all or not_all, and keeps not_any only with its anti keys",
            ),
            Reshape("entries[].probability", _never, "Lite reads a probability of 0 as always: 1 is written"),
        ],
    )

    def decode(self, s: Sniff) -> Decoded:
        tree = s.require_json()
        shape = shape_of(tree)
        if shape is None:
            where = "$.gamestarted" if isinstance(tree, dict) else "$"
            raise Malformed("not a KoboldAI save (gamestarted) or world info export", path=where)
        name = file_stem(s.name) if s.name else ""
        r = MapContext("$")
        body = to_body(tree, shape, name, r)
        style = json_style.detect(s.data, tree)
        e = self.entity(s, body, raw=tree, shape=shape, name=name, style=style)
        e.warnings.extend(r.warnings)
        return Decoded([e])

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        body = body_as(entity, LorebookBody)
        own = entity.twin(self.id)
        twin = own if isinstance(own, KoboldTwin) else None
        shape = twin.shape if twin is not None else None
        out: Any
        if twin is not None and shape in (SAVE, WORLD_INFO) and shape_of(twin.raw) == shape:
            raw = twin.raw
            mapped = to_body(raw, shape, twin.name or "", MapContext())
            native = body_to_save if shape == SAVE else body_to_world_info
            out = _unmarked(overlay_twin(raw, body, mapped, native, list_key=_entry_key))
        else:
            out = _unmarked(fresh_save(body))
        style = (twin.style if twin is not None else None) or FRESH_STYLE
        return json_style.dumps(out, style)


__all__ = ["KoboldSaveCodec", "KoboldTwin", "join_keys", "split_keys"]
