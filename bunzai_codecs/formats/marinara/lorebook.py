"""marinara-lorebook: the ``marinara_lorebook`` export envelope (docs/canonical-model.md#lorebookbody, docs/formats/marinara.md#lorebook-fields).

``{type: "marinara_lorebook", version: 1, exportedAt, data: {lorebook, entries[], folders[]}}``,
decoded values (``folders`` is absent in exports older than folder support). The envelope tag is
the firewall: 1.0 for that tag with a ``data.entries`` array, whatever else the book holds.

Marinara ``order`` is the placement axis (``sortOrder``), never eviction ``priority``. Folder rows
become flat categories; ``parentFolderId`` and every engine-only column (knowledge-router
``description``, ``tag``, ``locked``, relationships, schedules, filters, embeddings, timestamps)
stay in the escrow twin, so an unedited round trip keeps the nested tree. Entry ids that repeat get
stable unique canonical ids (``-2``, ``-3``...) and each keeps its own source row on export, even
after a reorder. Booleans and list columns are read in both forms (the DB keeps ``"true"`` and JSON
strings; the export decodes them) and written back in the form the file used.
"""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core.codec import Coverage
from bunzai_codecs.core.errors import NotRecognized
from bunzai_codecs.entities.base import MESSAGE_ROLES
from bunzai_codecs.formats._shared.wire import MapContext, int_text, wrong_at
from bunzai_codecs.formats.marinara import _rows
from bunzai_codecs.formats.marinara._rows import EnvelopeCodec, Path, RowSpec, Style
from bunzai_codecs.formats.marinara.detect import LOREBOOK_TYPE as TYPE
from bunzai_codecs.formats.tavern.character_book import CATEGORY_PATHS, ST_ENTRY_PATHS

BOOK = RowSpec.of(
    bools=("recursiveScanning", "excludeFromVectorization", "isGlobal", "enabled", "hiddenFromLibrary"),
    json=("scope", "tags", "characterIds", "personaIds"),
)
ENTRY = RowSpec.of(
    bools=(
        "enabled",
        "constant",
        "selective",
        "matchWholeWords",
        "caseSensitive",
        "useRegex",
        "locked",
        "preventRecursion",
        "excludeRecursion",
        "delayUntilRecursion",
        "excludeFromVectorization",
    ),
    json=(
        "keys",
        "secondaryKeys",
        "characterFilterIds",
        "characterTagFilters",
        "generationTriggerFilters",
        "additionalMatchingSources",
        "relationships",
        "dynamicState",
        "activationConditions",
        "schedule",
        "embedding",
    ),
)
FOLDER = RowSpec.of(bools=("enabled",))

#: Marinara selectiveLogic -> canonical (v2: "and" and "or" both mean any secondary)
LOGIC = {"and": "and_any", "or": "and_any", "not_all": "not_all", "not": "not_any", "and_all": "and_all"}
LOGIC_OUT = {"and_any": "and", "not_all": "not_all", "not_any": "not", "and_all": "and_all"}

#: Marinara numeric position -> canonical
POSITIONS = {0: "world", 1: "character", 2: "depth", 7: "outlet"}
POSITIONS_OUT = {v: k for k, v in POSITIONS.items()}
#: canonical positions Marinara lacks: after the character definition is the nearest slot
POSITION_FALLBACK = {
    "author_note_top": 1,
    "author_note_bottom": 1,
    "before_example": 1,
    "after_example": 1,
}


def _data(t: Any) -> dict[str, Any]:
    t = _rows.obj(t, (), "a lorebook export object")
    if t.get("type") != TYPE:
        raise NotRecognized(f'not a Marinara lorebook: expected type "{TYPE}"')
    return _rows.obj(t.get("data"), ("data",), "the lorebook data object")


def _parts(data: dict[str, Any]) -> tuple[dict[str, Any], list[Any], list[Any]]:
    book = data.get("lorebook")
    book = {} if book is None else _rows.obj(book, ("data", "lorebook"), "the lorebook row")
    entries = _rows.arr(data.get("entries"), ("data", "entries"), "an array of entries")
    folders = data.get("folders")
    folders = [] if folders is None else _rows.arr(folders, ("data", "folders"), "an array of folders")
    return book, entries, folders


def _row_ids(rows: list[Any], what: str) -> list[str]:
    return _rows.unique_ids(
        r["id"] if isinstance(r, dict) and isinstance(r.get("id"), str) and r["id"] else f"{what}{i}"
        for i, r in enumerate(rows)
    )


# -- native -> canonical -----------------------------------------------------------------------


def body_from(t: Any, ctx: MapContext) -> dict[str, Any]:
    book, entries, folders = _parts(_data(t))
    bp: Path = ("data", "lorebook")
    body: dict[str, Any] = {"name": _rows.text(ctx, book, "name", bp)}
    desc = _rows.opt_text(ctx, book, "description", bp)
    if desc is not None:
        body["description"] = desc
    if book.get("category") is not None:
        body["lorebookType"] = _rows.text(ctx, book, "category", bp)
    if book.get("tags") is not None:
        body["tags"] = _rows.str_list(ctx, _rows.json_col(book, "tags", bp, []), (*bp, "tags"))
    if book.get("enabled") is not None:
        body["enabled"] = _rows.flag(ctx, book, "enabled", bp, True)
    if book.get("recursiveScanning") is not None:
        body["globalRecursion"] = _rows.flag(ctx, book, "recursiveScanning", bp, False)
    for wire, canon in (
        ("scanDepth", "globalScanDepth"),
        ("tokenBudget", "tokenBudget"),
        ("maxRecursionDepth", "maxRecursionDepth"),
        ("entryLimit", "entryBudget"),
    ):
        v = _rows.number(ctx, book, wire, bp)
        if v is not None:
            body[canon] = v
    fids = _row_ids(folders, "folder-")
    body["categories"] = [
        _category(f, fids[i], ("data", "folders", i), i, ctx) for i, f in enumerate(folders)
    ]
    eids = _row_ids(entries, "")
    body["entries"] = [entry_from(e, eids[i], i, ("data", "entries", i), ctx) for i, e in enumerate(entries)]
    return body


def _category(row: Any, fid: str, path: Path, index: int, ctx: MapContext) -> dict[str, Any]:
    f = _rows.obj(row, path, "a folder object")
    cat: dict[str, Any] = {
        "id": fid,
        "name": _rows.text(ctx, f, "name", path),
        "sortOrder": _rows.number(ctx, f, "order", path, 0),
    }
    if f.get("enabled") is not None:
        cat["enabled"] = _rows.flag(ctx, f, "enabled", path, True)
    return cat


def _position(v: Any, path: Path) -> str:
    if isinstance(v, str):
        s = v.strip()
        if s == "after_char":
            return "character"
        if s in ("at_depth", "depth"):
            return "depth"
        if s.isascii() and s.lstrip("-").isdigit():  # "²" is a digit to isdigit, not to int
            return _position(int(s), path)
        return "world"  # Marinara's importer reads any other string as 0
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise wrong_at(path, "a number or a position name", v)
    n = int(v) if isinstance(v, float) and v.is_integer() else v
    return POSITIONS.get(n, str(n)) if isinstance(n, int) else str(n)


def entry_from(row: Any, eid: str, index: int, path: Path, ctx: MapContext) -> dict[str, Any]:
    e = _rows.obj(row, path, "an entry object")
    name = _rows.text(ctx, e, "name", path)
    use_regex = _rows.flag(ctx, e, "useRegex", path, False)
    entry: dict[str, Any] = {
        "id": eid,
        "title": name if name.strip() else f"Entry {index + 1}",
        "content": _rows.text(ctx, e, "content", path),
        "enabled": _rows.flag(ctx, e, "enabled", path, True),
        "constant": _rows.flag(ctx, e, "constant", path, False),
    }
    for wire, canon in (("keys", "triggers"), ("secondaryKeys", "secondaryTriggers")):
        if e.get(wire) is not None:
            keys = _rows.str_list(ctx, _rows.json_col(e, wire, path, []), (*path, wire))
            entry[canon] = [{"text": k, "isRegex": use_regex} for k in keys]
    if e.get("selective") is not None:
        entry["selective"] = _rows.flag(ctx, e, "selective", path, False)
    logic = e.get("selectiveLogic")
    if logic is not None:
        if not isinstance(logic, str):
            raise wrong_at((*path, "selectiveLogic"), "a string", logic)
        if logic in LOGIC:
            entry["selectiveLogic"] = LOGIC[logic]
        else:
            ctx.warn(f"entries[{index}].selectiveLogic {logic!r} is unknown: read as and_any")
    pos = e.get("position")
    entry["position"] = "world" if pos is None else _position(pos, (*path, "position"))
    outlet = _rows.text(ctx, e, "outletName", path)
    if outlet:
        entry["outletName"] = outlet
    entry["depth"] = _rows.number(ctx, e, "depth", path, 4)
    role = _rows.text(ctx, e, "role", path, "system")
    entry["role"] = role if role in MESSAGE_ROLES else "system"
    entry["sortOrder"] = _rows.number(ctx, e, "order", path, 100)
    entry["probability"] = _rows.number(ctx, e, "probability", path, 100)  # null = always
    for key in ("scanDepth", "sticky", "cooldown", "delay", "groupWeight"):
        v = _rows.number(ctx, e, key, path)
        if v is not None:
            entry[key] = v
    for key in ("caseSensitive", "matchWholeWords"):
        if e.get(key) is not None:
            entry[key] = _rows.flag(ctx, e, key, path, False)
    entry["excludeRecursion"] = _rows.flag(ctx, e, "excludeRecursion", path, False)
    entry["preventRecursion"] = _rows.flag(ctx, e, "preventRecursion", path, True)  # importer default: true
    delay = e.get("delayUntilRecursion")
    if isinstance(delay, bool | str):
        entry["delayUntilRecursion"] = 1 if _rows.flag(ctx, e, "delayUntilRecursion", path, False) else 0
    elif delay is not None:
        entry["delayUntilRecursion"] = _rows.number(ctx, e, "delayUntilRecursion", path, 0)
    group = _rows.text(ctx, e, "group", path)
    if group:
        entry["group"] = group
    folder = e.get("folderId")
    if folder is not None:
        entry["categoryId"] = _rows.text(ctx, e, "folderId", path)
    sources = e.get("additionalMatchingSources")
    if sources is not None:
        got = _rows.str_list(
            ctx,
            _rows.json_col(e, "additionalMatchingSources", path, []),
            (*path, "additionalMatchingSources"),
        )
        if got:
            entry["scanSources"] = got
    return entry


# -- canonical -> native -----------------------------------------------------------------------


def _position_out(p: str) -> int:
    if p in POSITIONS_OUT:
        return POSITIONS_OUT[p]
    if p in POSITION_FALLBACK:
        return POSITION_FALLBACK[p]
    n = int_text(p)  # a position Marinara cannot hold reads back as 0 (world): a reported change
    return 0 if n is None else n


def entry_row(
    entry: dict[str, Any], style: Style, wire_id: str, book_id: str | None, folder_ids: dict[str, str]
) -> dict[str, Any]:
    """The decoded Marinara entry row for a canonical entry (optional columns only when the file
    carries them or the entry sets them)."""

    def opt(col: str, value: Any, default: Any) -> None:
        if style.has(col) or value != default:
            row[col] = value

    triggers = entry.get("triggers") or []
    secondary = entry.get("secondaryTriggers") or []
    row: dict[str, Any] = {"id": wire_id}
    if book_id is not None:
        row["lorebookId"] = book_id
    cat = entry.get("categoryId")
    opt("folderId", folder_ids.get(cat, cat) if cat is not None else None, None)
    row["name"] = entry.get("title", "")
    row["content"] = entry.get("content", "")
    row["keys"] = [t["text"] for t in triggers]
    row["secondaryKeys"] = [t["text"] for t in secondary]
    row["enabled"] = entry.get("enabled", True)
    row["constant"] = entry.get("constant", False)
    row["selective"] = bool(entry.get("selective", False))
    row["selectiveLogic"] = LOGIC_OUT[entry.get("selectiveLogic", "and_any")]
    prob = entry.get("probability", 100)
    row["probability"] = None if prob == 100 else prob
    row["scanDepth"] = entry.get("scanDepth")
    row["matchWholeWords"] = bool(entry.get("matchWholeWords", False))
    row["caseSensitive"] = bool(entry.get("caseSensitive", False))
    row["useRegex"] = any(t.get("isRegex") for t in (*triggers, *secondary))
    pos = entry.get("position", "world")
    row["position"] = _position_out(pos)
    opt("outletName", entry.get("outletName", ""), "")
    row["depth"] = entry.get("depth", 4)
    row["order"] = entry.get("sortOrder", 100)
    row["role"] = entry.get("role", "system")
    row["sticky"] = entry.get("sticky")
    row["cooldown"] = entry.get("cooldown")
    row["delay"] = entry.get("delay")
    row["group"] = entry.get("group") or ""
    row["groupWeight"] = entry.get("groupWeight")
    opt("additionalMatchingSources", list(entry.get("scanSources") or []), [])
    row["preventRecursion"] = entry.get("preventRecursion", False)
    opt("excludeRecursion", entry.get("excludeRecursion", False), False)
    delay = entry.get("delayUntilRecursion", 0)
    opt("delayUntilRecursion", delay if style.strings.get("delayUntilRecursion") is None else bool(delay), 0)
    return row


def book_row(body: dict[str, Any], style: Style, book_id: str | None) -> dict[str, Any]:
    row: dict[str, Any] = {}
    if book_id is not None:
        row["id"] = book_id
    row["name"] = body.get("name", "")
    row["description"] = body.get("description") or ""
    for canon, col, default in (
        ("lorebookType", "category", "uncategorized"),
        ("globalScanDepth", "scanDepth", None),
        ("tokenBudget", "tokenBudget", None),
        ("globalRecursion", "recursiveScanning", False),
        ("maxRecursionDepth", "maxRecursionDepth", None),
        ("entryBudget", "entryLimit", None),
        ("enabled", "enabled", True),
        ("tags", "tags", []),
    ):
        v = body.get(canon)
        if v is not None:
            row[col] = v
        elif style.columns and col in style.columns:
            row[col] = default
    return row


def folder_row(cat: dict[str, Any], style: Style, wire_id: str, book_id: str | None) -> dict[str, Any]:
    row: dict[str, Any] = {"id": wire_id}
    if book_id is not None:
        row["lorebookId"] = book_id
    row["name"] = cat.get("name", "")
    row["enabled"] = cat.get("enabled") is not False
    if style.has("parentFolderId"):
        row["parentFolderId"] = None
    row["order"] = cat.get("sortOrder", 0)
    return row


class _Tree:
    """One twin (or a fresh file) as the writer needs it: styles, wire ids, the book id."""

    def __init__(self, raw: Any | None) -> None:
        self.book: dict[str, Any]
        self.entries: list[Any]
        self.folders: list[Any]
        self.book, self.entries, self.folders = ({}, [], []) if raw is None else _parts(_data(raw))
        # a fresh file's empty rows observe as the fresh style
        self.book_style = Style.observe([self.book], BOOK, raw_form=False)
        self.entry_style = Style.observe(self.entries, ENTRY, raw_form=False)
        self.folder_style = Style.observe(self.folders, FOLDER, raw_form=False)
        bid = self.book.get("id")
        self.book_id = bid if isinstance(bid, str) else None
        self.entry_wire = _wire_ids(self.entries, _row_ids(self.entries, ""))
        self.folder_wire = _wire_ids(self.folders, _row_ids(self.folders, "folder-"))

    def rows(self, body: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
        book = book_row(body, self.book_style, self.book_id)
        folders = [
            folder_row(c, self.folder_style, self.folder_wire.get(c["id"], c["id"]), self.book_id)
            for c in body.get("categories", [])
        ]
        entries = [
            entry_row(
                e, self.entry_style, self.entry_wire.get(e["id"], e["id"]), self.book_id, self.folder_wire
            )
            for e in body.get("entries", [])
        ]
        return book, entries, folders


def _wire_ids(rows: list[Any], ids: list[str]) -> dict[str, str]:
    """Canonical id -> the row's own id (a repeated source id maps back to itself)."""
    out = {}
    for r, cid in zip(rows, ids, strict=True):
        rid = r.get("id") if isinstance(r, dict) else None
        out[cid] = rid if isinstance(rid, str) and rid else cid
    return out


class MarinaraLorebookCodec(EnvelopeCodec):
    id = "marinara-lorebook"
    coverage = Coverage.of(
        "name",
        "description",
        "lorebookType",
        "tags",
        "enabled",
        "globalScanDepth",
        "tokenBudget",
        "globalRecursion",
        "maxRecursionDepth",
        "entryBudget",
        *CATEGORY_PATHS,
        *sorted(
            ST_ENTRY_PATHS
            - {
                "entries[].automationId",
                "entries[].characterFilter",
                "entries[].comment",
                "entries[].displayIndex",
                "entries[].extensions",
                "entries[].generationTriggers",
                "entries[].groupOverride",
                "entries[].ignoreBudget",
                "entries[].position",
                "entries[].priority",
                "entries[].secondaryTriggers[].flags",
                "entries[].secondaryTriggers[].isRegex",
                "entries[].triggers[].flags",
                "entries[].triggers[].isRegex",
                "entries[].useGroupScoring",
                "entries[].vectorized",
            }
        ),
        "entries[].scanSources",
        notes=[
            "useRegex is per entry: one regex key makes every key of the entry (secondary keys "
            "too) a regex, so isRegex is held only when an entry's keys agree and is not claimed; "
            "trigger flags and per-key probability are not carried",
            "position: Marinara has 0 (before the character), 1 (after it), 2 (at depth) and 7 (a "
            "named outlet); author's note and example positions are written as 1 and other names as 0 "
            "(unknown numbers are kept), so position is not claimed",
            "priority (eviction) has no Marinara column; order is the placement axis",
            "folder nesting (parentFolderId), the knowledge-router description, tag, locked, "
            "relationships, dynamicState, activationConditions, schedule, ephemeral, embedding, "
            "id-based character/tag/trigger filters and timestamps ride the escrow twin only",
            "comment, characterFilter, generationTriggers, ignoreBudget, vectorized, automationId, "
            "displayIndex, groupOverride, useGroupScoring and extensions have no Marinara column",
        ],
    )

    read_tree = body_from

    def fresh(self, new: dict[str, Any], exported_at: str) -> dict[str, Any]:
        tr = _Tree(None)
        book, entries, folders = tr.rows(new)
        data: dict[str, Any] = {
            "lorebook": tr.book_style.row(book),
            "entries": [tr.entry_style.row(r) for r in entries],
        }
        if folders:
            data["folders"] = [tr.folder_style.row(r) for r in folders]
        return {"type": TYPE, "version": 1, "exportedAt": exported_at, "data": data}

    def overlay(self, raw: Any, new: dict[str, Any]) -> Any:
        tr = _Tree(raw)
        base = body_from(raw, MapContext())
        b_book, b_entries, b_folders = tr.rows(base)
        n_book, n_entries, n_folders = tr.rows(new)
        data = raw["data"]
        out = data
        if "lorebook" in data and isinstance(data["lorebook"], dict):
            out = _rows.replace_key(
                out, "lorebook", _rows.merge_row(data["lorebook"], b_book, n_book, tr.book_style)
            )
        elif n_book != b_book:
            out = _rows.replace_key(out, "lorebook", tr.book_style.row(n_book))

        def merged(rows: list[Any], b: list[Any], n: list[Any], field: str, style: Style) -> list[Any]:
            """Rows merged by canonical id: the ids of the base's and the edit's ``field`` list."""
            base_ids = [x["id"] for x in base.get(field, [])]
            new_ids = [x["id"] for x in new.get(field, [])]
            return _rows.merge_rows(rows, b, base_ids, n, new_ids, style)

        out = _rows.replace_key(
            out, "entries", merged(tr.entries, b_entries, n_entries, "entries", tr.entry_style)
        )
        folders = merged(tr.folders, b_folders, n_folders, "categories", tr.folder_style)
        if "folders" in data or folders:
            out = _rows.replace_key(out, "folders", folders)
        return _rows.replace_key(raw, "data", out)
