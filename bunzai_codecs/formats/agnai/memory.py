"""Agnai's MemoryBook <-> the canonical lorebook: the one mapper for a standalone book file
(``agnai-lorebook``) and the ``characterBook`` a native Agnai character carries, so a book
canonicalises identically in either container.

A MemoryEntry names things its own way (A2): the text is ``entry``, the keys are a plain
``keywords`` array (never regex), and both ordering axes are explicit: ``weight`` is placement
(canonical ``sortOrder``), ``priority`` is eviction (canonical ``priority``), as Agnai's own
CCv2 mapping pairs ``insertion_order`` with ``weight``. Book-level ``scanDepth``/``tokenBudget``/
``recursiveScanning``/``extensions`` are V2 carry-through Agnai's engine never reads.

Export overlays each entry on its own raw row, paired by the canonical id decode gave it (repeated
raw ids get ``7``, ``7-2``... in row order, and export pairs rows through the same assignment),
so unknown keys and ST-import residue stay on the right row whatever the body did to the order.
"""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.core.overlay import merge3
from bunzai_codecs.entities.lorebook import LorebookBody, LoreEntry
from bunzai_codecs.formats._shared.wire import MapContext, bool_at, int_text, num_at, str_at, strs_at
from bunzai_codecs.formats.agnai.detect import MEMORY
from bunzai_codecs.formats.agnai.mapping import (
    Path,
    is_num,
    put,
    wrong_at,
)
from bunzai_codecs.formats.tavern.lore import (
    LOGIC_INTS,
    LOGIC_NAMES,
    POSITION_INTS,
    position_name,
    unique_ids,
)

#: Agnai's two position strings; any other canonical position falls back to ``after_char``
POSITION_FROM_AGNAI = {"before_char": "world", "after_char": "character"}

#: keys Agnai adds to a book it stores, which a book file export never carries
SERVER_KEYS = ("_id", "userId")


# --- ids ----------------------------------------------------------------------------------------


def raw_id(row: dict[str, Any], index: int, path: Path) -> str:
    """The source id of an entry row as a string (Agnai's ``id`` is a number; absent = index)."""
    v = row.get("id")
    if v is None:
        return str(index)
    if isinstance(v, bool) or not (isinstance(v, str) or is_num(v)):
        raise wrong_at((*path, "id"), "a number or a string", v)
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def assign_ids(rows: list[Any], path: Path) -> list[str]:
    """Stable unique canonical ids for the rows, in order: a repeated id gets ``-2``, ``-3``...
    (the shared lore rule, so a book keeps its ids in every container)."""
    raw_ids = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise wrong_at((*path, i), "an object", row)
        raw_ids.append(raw_id(row, i, (*path, i)))
    return unique_ids(raw_ids)


def id_to_agnai(cid: str) -> int | str:
    """A canonical id as Agnai writes it: a number when it is one Agnai holds exactly, else the
    string verbatim (``"007"``, a UUID, a 39-digit id: Agnai reads a string id as it is)."""
    n = int_text(cid) if cid == "0" or cid[:1] not in ("0", "-") else None
    return cid if n is None else n


# --- decode -------------------------------------------------------------------------------------


def entry_to_canonical(
    row: dict[str, Any], cid: str, index: int, ctx: MapContext, path: Path
) -> dict[str, Any]:
    """One MemoryEntry (at ``path`` below ``ctx``) -> a canonical entry dict; notes go to ``ctx``."""
    name = str_at(row.get("name"), ctx, *path, "name")
    title = name or f"Entry {index + 1}"
    out: dict[str, Any] = {"id": cid, "title": title}
    comment = str_at(row.get("comment"), ctx, *path, "comment")
    if comment is not None and comment != title:
        out["comment"] = comment
    out["content"] = str_at(row.get("entry"), ctx, *path, "entry") or ""
    put(out, "enabled", bool_at(row.get("enabled"), ctx, *path, "enabled"))
    put(out, "constant", bool_at(row.get("constant"), ctx, *path, "constant"))
    keys = strs_at(row.get("keywords"), ctx, *path, "keywords")
    if keys is not None:
        out["triggers"] = [{"text": k, "isRegex": False} for k in keys]
    secondary = strs_at(row.get("secondaryKeys"), ctx, *path, "secondaryKeys")
    if secondary is not None:
        out["secondaryTriggers"] = [{"text": k, "isRegex": False} for k in secondary]
    put(out, "selective", bool_at(row.get("selective"), ctx, *path, "selective"))
    logic = row.get("selectiveLogic")
    if logic is not None:
        if is_num(logic) and logic in LOGIC_NAMES:
            out["selectiveLogic"] = LOGIC_NAMES[int(logic)]
        else:
            ctx.warn(
                f"entry {cid}: selectiveLogic {logic!r} is not one of 0-3; read as and_any (kept in the twin)"
            )
    position = row.get("position")
    if position is not None:
        if isinstance(position, str):
            out["position"] = POSITION_FROM_AGNAI.get(position, position)
        elif is_num(position):
            out["position"] = position_name(position)
        else:
            raise wrong_at((*path, "position"), "a string or a number", position)
    put(out, "sortOrder", num_at(row.get("weight"), ctx, *path, "weight"))
    put(out, "priority", num_at(row.get("priority"), ctx, *path, "priority"))
    probability = num_at(row.get("probability"), ctx, *path, "probability")
    use = bool_at(row.get("useProbability"), ctx, *path, "useProbability")
    if probability is not None and use is not False:
        out["probability"] = min(100, max(0, probability))
    put(out, "excludeRecursion", bool_at(row.get("excludeRecursion"), ctx, *path, "excludeRecursion"))
    return out


def book_to_canonical(book: Any, ctx: MapContext, path: Path = ()) -> dict[str, Any]:
    """A MemoryBook tree (at ``path`` below ``ctx``) -> canonical lorebook body dict; notes go to
    ``ctx``. ``Malformed`` with the JSON path on a wrong shape."""
    if not isinstance(book, dict):
        raise wrong_at(path, "an object", book)
    rows = book.get("entries")
    if not isinstance(rows, list):
        raise wrong_at((*path, "entries"), "an array", rows)
    body: dict[str, Any] = {
        "name": str_at(book.get("name"), ctx, *path, "name") or "",
        "lorebookType": "other",
    }
    put(body, "description", str_at(book.get("description"), ctx, *path, "description"))
    put(body, "globalScanDepth", num_at(book.get("scanDepth"), ctx, *path, "scanDepth"))
    put(body, "tokenBudget", num_at(book.get("tokenBudget"), ctx, *path, "tokenBudget"))
    put(body, "globalRecursion", bool_at(book.get("recursiveScanning"), ctx, *path, "recursiveScanning"))
    put(body, "extensions", ctx.opaque(book.get("extensions"), (*path, "extensions")))
    ids = assign_ids(rows, (*path, "entries"))
    body["entries"] = [
        entry_to_canonical(row, cid, i, ctx, (*path, "entries", i))
        for i, (row, cid) in enumerate(zip(rows, ids, strict=True))
    ]
    return body


def body_of(book: Any) -> LorebookBody:
    return LorebookBody.model_validate(book_to_canonical(book, MapContext()))


# --- encode -------------------------------------------------------------------------------------


def entry_to_agnai(e: LoreEntry, *, logic: bool = False) -> dict[str, Any]:
    """A canonical entry -> a MemoryEntry. ``selectiveLogic`` is written only when ``logic`` (the
    raw row carried that ST-import residue): Agnai's own editor never authors it."""
    out: dict[str, Any] = {"id": id_to_agnai(e.id), "name": e.title, "entry": e.content}
    out["keywords"] = [t.text for t in e.triggers or ()]
    out["priority"] = e.priority
    out["weight"] = e.sortOrder
    out["enabled"] = e.enabled
    put(out, "comment", e.comment)
    if e.secondaryTriggers is not None:
        out["secondaryKeys"] = [t.text for t in e.secondaryTriggers]
    if e.constant:
        out["constant"] = True
    put(out, "selective", e.selective)
    if logic:
        out["selectiveLogic"] = LOGIC_INTS[e.selectiveLogic]
    if e.position != "world":
        # Agnai has two positions; ST's finer ones fall back to after_char (the loss is reported)
        out["position"] = "after_char" if e.position in POSITION_INTS else e.position
    if e.probability != 100:
        out["probability"] = e.probability
        out["useProbability"] = True
    if e.excludeRecursion:
        out["excludeRecursion"] = True
    return out


def book_to_agnai(body: LorebookBody, logic_ids: frozenset[str] = frozenset()) -> dict[str, Any]:
    """A canonical lorebook -> a fresh MemoryBook (``kind: "memory"``, no server keys)."""
    out: dict[str, Any] = {"kind": MEMORY, "name": body.name}
    put(out, "description", body.description)
    put(out, "scanDepth", body.globalScanDepth)
    put(out, "tokenBudget", body.tokenBudget)
    put(out, "recursiveScanning", body.globalRecursion)
    put(out, "extensions", body.extensions)
    out["entries"] = [entry_to_agnai(e, logic=e.id in logic_ids) for e in body.entries]
    return out


def write_book(body: LorebookBody, raw: dict[str, Any] | None) -> dict[str, Any]:
    """The MemoryBook to export for ``body``: fresh without a twin; with one, every field and row
    the body did not change comes from ``raw`` (three-way overlay, rows paired by canonical id)."""
    if raw is None:
        return book_to_agnai(body)
    rows: list[Any] = raw["entries"]
    ids = assign_ids(rows, ("entries",))
    by_id = dict(zip(ids, rows, strict=True))
    logic_ids = frozenset(cid for cid, row in by_id.items() if "selectiveLogic" in row)
    base_body = body_of(raw)
    base_entries = {e.id: e for e in base_body.entries}
    entries = []
    for e in body.entries:
        keep = e.id in logic_ids
        new = entry_to_agnai(e, logic=keep)
        row = by_id.get(e.id)
        if row is None:
            entries.append(new)
        else:
            merged = merge3(row, entry_to_agnai(base_entries[e.id], logic=keep), new)
            # an id-less or nameless row is named by its index: once moved, write the name out
            i = len(entries)
            if "id" not in merged and e.id != str(i):
                merged = {**merged, "id": id_to_agnai(e.id)}
            if not merged.get("name") and e.title != f"Entry {i + 1}":
                merged = {**merged, "name": e.title}
            entries.append(merged)
    head_raw = {k: v for k, v in raw.items() if k != "entries"}
    head_base = book_to_agnai(base_body.model_copy(update={"entries": []}))
    head_new = book_to_agnai(body.model_copy(update={"entries": []}))
    del head_base["entries"], head_new["entries"]
    head = merge3(head_raw, head_base, head_new)
    out: dict[str, Any] = {}
    for k in raw:
        if k == "entries":
            out[k] = entries
        elif k in head:
            out[k] = head[k]
    for k, v in head.items():
        out.setdefault(k, v)
    out.setdefault("entries", entries)
    return out


def standalone_twin(raw: Any) -> dict[str, Any] | None:
    """A twin for a standalone book file: a book that came embedded in a character carries the
    server's ``_id``/``userId``, which Agnai's book export strips and bunzai never reintroduces."""
    if not isinstance(raw, dict) or not isinstance(raw.get("entries"), list):
        return None
    if any(k in raw for k in SERVER_KEYS):
        return {k: v for k, v in raw.items() if k not in SERVER_KEYS}
    return raw


def check_twin(raw: Any) -> dict[str, Any] | None:
    """The twin tree when it still decodes as a MemoryBook, else ``None`` (write fresh)."""
    if not isinstance(raw, dict):
        return None
    try:
        book_to_canonical(raw, MapContext())
    except Malformed:
        return None
    return raw
