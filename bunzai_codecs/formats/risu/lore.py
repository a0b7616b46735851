"""Risu ``loreBook`` rows <-> the canonical lorebook (docs/formats/risu.md#lorebook-rows-risu-lorebook-module-lorebook-charx, docs/canonical-model.md#lorebook).

Risu keeps a lorebook as a flat row list wherever it appears: the ``{type:"risu"}`` export, a
module's ``lorebook``, a ``.charx``'s module.risum. Rows carry no book settings. A row with
``mode:"folder"`` is a folder header (its ``key`` is ``"\\uF000folder:" + uuid``; third-party copies
may have lost the U+F000) and becomes a ``LoreCategory``; every other row is an entry whose
``folder`` names its folder's key.

Ids: an entry keeps its row ``id`` when it has a non-empty one, else its row index; a repeated id
gets ``-2``, ``-3``... in row order, so the assignment is the same on every decode. Folder ids are
their keys, in a namespace of their own. A fresh row list (``body_to_rows``) writes every entry id
except one that is the row's own index (it reads back the same without it), so numeric uids from
SillyTavern or Chub survive; an overlay on the twin's rows never adds a numeric id to a row.

``merge_rows`` is the escrow overlay for a row list: rows are paired with the body by these ids (not
by position), so deleting one entry keeps every other row's unmapped residue (``mode``,
``loreCache``, ``bookVersion``, spacing in ``key``) on the right row, and an unedited list comes back
as the very list object it was.
"""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core import basecache
from bunzai_codecs.core.overlay import merge3
from bunzai_codecs.entities.base import MESSAGE_ROLES
from bunzai_codecs.entities.lorebook import LorebookBody, LoreCategory, LoreEntry
from bunzai_codecs.formats._shared.wire import MapContext, wrong
from bunzai_codecs.formats.risu.twins import twin_rows

FOLDER_MARK = "\uf000"
FOLDER_PREFIX = FOLDER_MARK + "folder:"
#: the row fields this mapping reads; everything else on a row rides the twin
MAPPED = (
    "key",
    "secondkey",
    "insertorder",
    "comment",
    "content",
    "mode",
    "alwaysActive",
    "selective",
    "extentions",
    "activationPercent",
    "useRegex",
    "id",
    "folder",
)

RowKey = tuple[str, str]  # ("entry" | "category", canonical id)


def folder_norm(key: str) -> str:
    """A folder key without its U+F000 mark, for matching keys that lost it."""
    return key[1:] if key.startswith(FOLDER_MARK) else key


def is_folder_row(row: dict[str, Any]) -> bool:
    return row.get("mode") == "folder"


def _unique(wanted: str, seen: set[str]) -> str:
    if wanted not in seen:
        seen.add(wanted)
        return wanted
    n = 2
    while f"{wanted}-{n}" in seen:
        n += 1
    out = f"{wanted}-{n}"
    seen.add(out)
    return out


def row_keys(rows: list[Any]) -> list[RowKey]:
    """The canonical (kind, id) of each row, in row order (see the module docstring)."""
    entry_ids: set[str] = set()
    cat_ids: set[str] = set()
    out: list[RowKey] = []
    for i, row in enumerate(rows):
        if is_folder_row(row):
            key = row.get("key")
            out.append(("category", _unique(key if isinstance(key, str) and key else f"folder-{i}", cat_ids)))
        else:
            rid = row.get("id")
            out.append(("entry", _unique(rid if isinstance(rid, str) and rid else str(i), entry_ids)))
    return out


# -- decode --------------------------------------------------------------------------------------


def _keys(v: Any, ctx: MapContext, key: str) -> list[str]:
    """A Risu key string split on commas, trimmed, empties dropped (a list is read item by item)."""
    if v is None:
        return []
    if isinstance(v, list):
        parts = [ctx.text(x, (key, i), "") for i, x in enumerate(v)]
    else:
        parts = ctx.text(v, (key,), "").split(",")
    return [p.strip() for p in parts if p.strip()]


def _trigger(text: str, regex: bool, probability: int | float | None) -> dict[str, Any]:
    t: dict[str, Any] = {"text": text}
    if regex:
        t["isRegex"] = True
        # a Risu regex key is /pattern/flags
        if len(text) >= 2 and text.startswith("/") and text.rfind("/") > 0:
            cut = text.rfind("/")
            t["text"] = text[1:cut]
            t["flags"] = text[cut + 1 :] or None
    if probability is not None:
        t["probability"] = probability
    return t


#: ``core.basecache`` tag of :func:`rows_to_body`'s dicts for an unnamed row list (``at`` only
#: names paths in errors, so it does not change the dict)
ROWS_TAG = "risu-lore-rows"


def rows_to_body(rows: Any, *, warnings: list[str], name: str = "", at: str = "$") -> dict[str, Any]:
    """The canonical lorebook body (as a dict) of a Risu row list (found at JSON path ``at``);
    ``Malformed`` names the bad path, values read by the reader's policy are noted in ``warnings``."""
    if not isinstance(rows, list):
        raise wrong(at, "an array of rows", rows)
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise wrong(f"{at}[{i}]", "an object", row)
    keys = row_keys(rows)
    categories: list[dict[str, Any]] = []
    by_norm: dict[str, str] = {}
    for kind, cid in keys:
        if kind == "category":
            by_norm.setdefault(folder_norm(cid), cid)
    entries: list[dict[str, Any]] = []
    for i, ((kind, eid), row) in enumerate(zip(keys, rows, strict=True)):
        ctx = MapContext(at, warnings, (i,))
        if kind == "category":
            categories.append(
                {
                    "id": eid,
                    "name": ctx.text(row.get("comment"), ("comment",), ""),
                    "sortOrder": ctx.num(row.get("insertorder"), ("insertorder",), 100),
                }
            )
            continue
        entries.append(_row_to_entry(row, eid, i, ctx, by_norm))
    return {"name": name, "categories": categories, "entries": entries}


def _row_to_entry(
    row: dict[str, Any], eid: str, i: int, ctx: MapContext, by_norm: dict[str, str]
) -> dict[str, Any]:
    use_regex = row.get("useRegex") is True
    prob: int | float = 100
    if row.get("activationPercent") is not None:
        prob = max(0, min(100, ctx.num(row["activationPercent"], ("activationPercent",), 100)))
    stamp = prob if prob != 100 else None
    comment = ctx.text(row.get("comment"), ("comment",), "")
    e: dict[str, Any] = {
        "id": eid,
        "title": comment or f"Entry {i + 1}",
        "content": ctx.text(row.get("content"), ("content",), ""),
        "constant": row.get("alwaysActive") is True,
        "sortOrder": ctx.num(row.get("insertorder"), ("insertorder",), 100),
        "probability": prob,
    }
    keys = _keys(row.get("key"), ctx, "key")
    if keys:
        e["triggers"] = [_trigger(k, use_regex, stamp) for k in keys]
    second = _keys(row.get("secondkey"), ctx, "secondkey")
    if second:
        e["secondaryTriggers"] = [_trigger(k, use_regex, None) for k in second]
    if isinstance(row.get("selective"), bool):
        e["selective"] = row["selective"]
    ext = row.get("extentions")
    if ext is not None:
        if not isinstance(ext, dict):
            raise wrong(ctx.at("extentions"), "an object", ext)
        e["extensions"] = ext
        if isinstance(ext.get("risu_case_sensitive"), bool):
            e["caseSensitive"] = ext["risu_case_sensitive"]
    folder = row.get("folder")
    if isinstance(folder, str) and folder:
        e["categoryId"] = by_norm.get(folder_norm(folder), folder)
    role = row.get("role")  # not a Risu field; read when a tool wrote one (canonical-model.md#loreentry)
    if role in MESSAGE_ROLES:
        e["role"] = role
    return e


# -- encode --------------------------------------------------------------------------------------


def folder_key(category_id: str) -> str:
    """The Risu folder key for a category id: Risu's own keys verbatim, any other id marked."""
    if category_id.startswith(FOLDER_PREFIX) or category_id.startswith("folder:"):
        return category_id
    return FOLDER_PREFIX + category_id


def _key_text(t: Any) -> str:
    if t.isRegex:
        return f"/{t.text}/{t.flags or ''}"
    return str(t.text)


def category_row(c: LoreCategory) -> dict[str, Any]:
    return {
        "key": folder_key(c.id),
        "comment": c.name,
        "content": "",
        "mode": "folder",
        "insertorder": c.sortOrder,
        "alwaysActive": False,
        "secondkey": "",
        "selective": False,
        "bookVersion": 2,
    }


def entry_row(e: LoreEntry, index: int | None = None) -> dict[str, Any]:
    """A fresh Risu row for an entry (Risu's own key order). ``index`` is the row's position in a
    fresh row list (folder rows included): given, a numeric id that is not that position is written
    too. Without it (an overlay on the twin's rows) a numeric id is taken for bunzai's own
    index-derived id and left out, so an edit adds no ``id`` to rows that had none."""
    triggers = e.triggers or []
    second = e.secondaryTriggers or []
    row: dict[str, Any] = {
        "key": ", ".join(_key_text(t) for t in triggers),
        "comment": e.title,
        "content": e.content,
        "mode": "normal",
        "insertorder": e.sortOrder,
        "alwaysActive": e.constant,
        "secondkey": ", ".join(_key_text(t) for t in second),
        "selective": bool(e.selective),
    }
    ext = dict(e.extensions or {})
    if e.caseSensitive is not None:
        ext["risu_case_sensitive"] = e.caseSensitive
    if ext:
        row["extentions"] = ext
    if e.probability != 100:
        row["activationPercent"] = e.probability
    if e.categoryId:
        row["folder"] = folder_key(e.categoryId)
    row["useRegex"] = any(t.isRegex for t in [*triggers, *second])
    # a row without an id reads back as its index: an id that is the row's index is left out, any
    # other id is written (a numeric SillyTavern or Chub uid left out would read back as another number)
    if e.id and (not e.id.isdigit() or (index is not None and e.id != str(index))):
        row["id"] = e.id
    row["bookVersion"] = 2
    return row


def body_to_rows(body: LorebookBody) -> list[dict[str, Any]]:
    """Fresh rows for a body: folder rows first (Risu lists them before their children), then entries."""
    n = len(body.categories)
    return [category_row(c) for c in body.categories] + [
        entry_row(e, n + i) for i, e in enumerate(body.entries)
    ]


def _fresh_by_key(body: LorebookBody) -> dict[RowKey, dict[str, Any]]:
    out: dict[RowKey, dict[str, Any]] = {}
    for c in body.categories:
        out[("category", c.id)] = category_row(c)
    for e in body.entries:
        out[("entry", e.id)] = entry_row(e)
    return out


def _order(body: LorebookBody) -> list[RowKey]:
    return [("category", c.id) for c in body.categories] + [("entry", e.id) for e in body.entries]


def merge_rows(
    raw_rows: list[Any],
    body: LorebookBody,
    *,
    base: LorebookBody | None = None,
) -> list[Any]:
    """The twin's rows overlaid with ``body`` (see the module docstring); ``raw_rows`` itself when
    nothing changed. ``base`` is the body decoded from ``raw_rows`` (recomputed when not given)."""
    if base is None:
        mapped = basecache.recall(ROWS_TAG, raw_rows)  # what the decoder mapped from these rows
        base = LorebookBody.model_validate(rows_to_body(raw_rows, warnings=[]) if mapped is None else mapped)
    keys = row_keys(raw_rows)
    base_fresh = _fresh_by_key(base)
    new_fresh = _fresh_by_key(body)
    new_order = _order(body)
    raw_at = {k: i for i, k in enumerate(keys)}
    kept = [k for k in keys if k in new_fresh]
    # folder rows and entries interleave in a file but are two lists in the body: each list's own
    # order decides whether the user reordered anything
    reordered = any(
        [k for k in new_order if k in raw_at and k[0] == kind] != [k for k in kept if k[0] == kind]
        for kind in ("category", "entry")
    )
    merged: dict[RowKey, Any] = {}
    for k in new_order:
        i = raw_at.get(k)
        merged[k] = new_fresh[k] if i is None else merge3(raw_rows[i], base_fresh[k], new_fresh[k])
    if reordered:
        out = [merged[k] for k in new_order]
    else:
        out = [merged[k] for k in kept] + [merged[k] for k in new_order if k not in raw_at]
    if len(out) == len(raw_rows) and all(a is b for a, b in zip(out, raw_rows, strict=True)):
        return raw_rows
    return out


# -- the CCv3 character_book Risu writes beside module.risum -------------------------------------


def _split_keys(v: Any) -> list[str]:
    if isinstance(v, list):
        return [str(x).strip() for x in v]
    return [k.strip() for k in str(v or "").split(",")]


def character_book(rows: list[Any], settings: dict[str, Any]) -> dict[str, Any]:
    """The ``character_book`` Risu writes for a row list (docs/formats/risu.md#lorebook-rows-risu-lorebook-module-lorebook-charx, createBaseV3).

    ``settings`` holds the book-level values (``scan_depth``, ``token_budget``,
    ``recursive_scanning``: each left out when absent) and ``extensions`` (the lore extension bag,
    ``risu_fullWordMatching`` included). Folder rows are written as entries, as Risu does.
    """
    book: dict[str, Any] = {}
    for k in ("scan_depth", "token_budget", "recursive_scanning"):
        if settings.get(k) is not None:
            book[k] = settings[k]
    book["extensions"] = dict(settings.get("extensions") or {})
    entries = []
    for row in rows:
        if not isinstance(row, dict):
            continue
        got = row.get("extentions")
        ext: dict[str, Any] = got if isinstance(got, dict) else {}
        x = dict(ext)
        if row.get("activationPercent") is not None:
            x["risu_activationPercent"] = row["activationPercent"]
        if "loreCache" in row:
            x["risu_loreCache"] = row["loreCache"]
        e: dict[str, Any] = {"keys": _split_keys(row.get("key"))}
        if row.get("selective"):
            e["secondary_keys"] = _split_keys(row.get("secondkey"))
        e["content"] = row.get("content", "")
        e["extensions"] = x
        e["enabled"] = True
        e["insertion_order"] = row.get("insertorder", 100)
        e["constant"] = row.get("alwaysActive", False)
        e["selective"] = row.get("selective", False)
        e["name"] = row.get("comment", "")
        e["comment"] = row.get("comment", "")
        e["case_sensitive"] = ext.get("risu_case_sensitive", False)
        e["use_regex"] = row.get("useRegex", False)
        e["mode"] = row.get("mode") or "normal"
        if row.get("folder") is not None:
            e["folder"] = row["folder"]
        entries.append(e)
    book["entries"] = entries
    return book


def book_settings(body: LorebookBody) -> dict[str, Any]:
    """The book-level ``character_book`` values of a canonical lorebook."""
    ext = dict(body.extensions or {})
    ext["risu_fullWordMatching"] = bool(body.globalMatchWholeWords)
    return {
        "scan_depth": body.globalScanDepth,
        "token_budget": body.tokenBudget,
        "recursive_scanning": body.globalRecursion,
        "extensions": ext,
    }


def settings_body(cb: Any) -> dict[str, Any]:
    """The canonical book-level fields of a ``character_book`` (the rest of the lorebook comes
    from module.risum's rows). Values of the wrong type are left to the twin."""
    if not isinstance(cb, dict):
        return {}
    out: dict[str, Any] = {}
    for wire, field in (("scan_depth", "globalScanDepth"), ("token_budget", "tokenBudget")):
        v = cb.get(wire)
        if isinstance(v, int | float) and not isinstance(v, bool):
            out[field] = v
    if isinstance(cb.get("recursive_scanning"), bool):
        out["globalRecursion"] = cb["recursive_scanning"]
    ext = cb.get("extensions")
    if isinstance(ext, dict):
        if isinstance(ext.get("risu_fullWordMatching"), bool):
            out["globalMatchWholeWords"] = ext["risu_fullWordMatching"]
        rest = {k: v for k, v in ext.items() if k != "risu_fullWordMatching"}
        if rest:
            out["extensions"] = rest
    return out


#: the Risu codecs whose twin of a lorebook can be rows, in the order they are tried
ROW_SOURCES = ("risu-lorebook", "risu-module", "risu-regex", "risu")


def rows_for(entity: Any, body: LorebookBody, sources: tuple[str, ...] = ROW_SOURCES) -> list[Any]:
    """Rows for a linked lorebook: the first Risu twin's rows overlaid with ``body``, else fresh."""
    rows = twin_rows(entity, sources, "risu", "lorebook")
    return merge_rows(rows, body) if rows is not None else body_to_rows(body)
