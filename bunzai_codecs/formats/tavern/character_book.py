"""CCv2/CCv3 ``character_book`` <-> the canonical lorebook body (docs/canonical-model.md#lorebook, docs/formats/sillytavern.md#lorebook-an-embedded-character_book-taverncharacter_bookpy).

The book a card embeds (``data.character_book``), a standalone CCv3 ``lorebook_v3`` file's ``data``
and a Chub lorebook all share this shape: spec fields at the entry's top level (``keys``,
``insertion_order``, ``position: "before_char"|"after_char"``...) and SillyTavern's own fields
tucked into each entry's ``extensions`` in snake_case (``exclude_recursion``, ``group_weight``...),
except ``useProbability`` and ``selectiveLogic`` which stay camelCase.

Pure functions, no I/O:

- :func:`book_to_body` ``(book, *, ctx) -> dict`` — a ``LorebookBody`` dict, not yet validated (the
  codec validates once, in ``Codec.entity``);
- :func:`body_to_book` ``(body, *, spelling="snake") -> dict`` — a fresh native book for a
  ``LorebookBody``; a same-format export merges it with the escrow twin (``core.overlay.merge3``
  with ``list_key=ENTRY_KEY``), so unknown keys and odd spellings of an unedited entry survive;
- :func:`entry_to_body` / :func:`body_to_entry` for one entry;
- :func:`is_character_book` — the cheap shape test detectors use for a standalone book;
- :func:`embed_book` ``(lorebook_entity, codec_id) -> dict`` — a linked lorebook entity as the
  ``character_book`` to embed, through its twin under ``codec_id`` when it has one.

Decode rules worth knowing (each pinned by a test):

- ``title`` is ``name`` if non-empty, else ``comment``, else ``Entry N`` (N = 1-based position);
  ``comment`` is kept only when ``name`` was used and the comment differs.
- A key written ``/pattern/flags`` is a regex trigger; ``use_regex`` alone does not make plain keys
  regexes (ST writes ``use_regex: true`` on every book). ``use_regex`` is written back as "any
  trigger is a regex", so a V3 reader that honours it (RisuAI) does not turn plain keys into regexes.
- ``extensions.position`` (an ST int, 0..7) beats the ``position`` string; a missing position is
  ``character`` (ST's importer reads anything but ``before_char`` as after-char).
- Each ST field is read from ``extensions`` in snake_case, then its camelCase spelling (RisuAI and
  Chub write ST's world-info names there), then the entry's top level (Chub writes
  ``selectiveLogic``/``probability`` there, and the spec's own ``case_sensitive`` lives there: it
  counts when ``extensions`` leave case sensitivity open). Written back in ``extensions`` only.
- ``useProbability: false`` means the probability is not applied: canonical ``probability`` is 100
  (the raw pair stays in the twin). Written back, ``useProbability`` is ``probability != 100``.
- Entry ``extensions`` keys the mapping claims are removed from ``LoreEntry.extensions``; the rest
  are kept verbatim there (an empty bag is ``None``).
- Risu's ``folder`` (the parent folder key of a child entry) is ``categoryId``. Folder rows
  themselves (``mode: "folder"``) stay ordinary entries here; lifting them into categories is the
  Risu codecs' business.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from bunzai_codecs.core.codec import Coverage
from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.core.overlay import by_id
from bunzai_codecs.entities.lorebook import LorebookBody, LoreEntry
from bunzai_codecs.formats._shared.links import embed_twin
from bunzai_codecs.formats._shared.wire import (
    MapContext,
    camel,
    js_number_text,
    opt_bool,
    opt_num,
    opt_obj,
    opt_str,
    opt_str_list,
    read_bool,
    str_at,
    strs_at,
    wrong,
)
from bunzai_codecs.formats.tavern.detect import is_character_book
from bunzai_codecs.formats.tavern.lore import (
    LOGIC_INTS,
    LOGIC_NAMES,
    POSITION_NAMES,
    ROLE_INTS,
    ROLE_NAMES,
    SCAN_SOURCES,
    format_keys,
    logic_name,
    parse_key,
    position_int,
    position_name,
    role_name,
    unique_ids,
)

if TYPE_CHECKING:
    from bunzai_codecs.core.entity import CanonicalEntity

Spelling = Literal["snake", "camel"]

# (canonical field, snake_case extensions key, camelCase spelling) for the ST fields a card book
# keeps in ``entry.extensions``. The camelCase spelling is what RisuAI and Chub write there; the
# canonical field is that spelling but for ``triggers``.
_EXT_FIELDS: tuple[tuple[str, str, str], ...] = tuple(
    ("generationTriggers" if snake == "triggers" else camel(snake), snake, camel(snake))
    for snake in (
        "outlet_name",
        "scan_depth",
        "match_whole_words",
        "exclude_recursion",
        "prevent_recursion",
        "delay_until_recursion",
        "group",
        "group_weight",
        "group_override",
        "use_group_scoring",
        "automation_id",
        "ignore_budget",
        "display_index",
        "vectorized",
        "sticky",
        "cooldown",
        "delay",
        "triggers",
    )
)

#: every ``entry.extensions`` key this mapper reads (both spellings): not copied to ``extensions``
CLAIMED_EXTENSION_KEYS: frozenset[str] = frozenset(
    {
        "position",
        "depth",
        "role",
        "probability",
        "useProbability",
        "selectiveLogic",
        "case_sensitive",
        "caseSensitive",
        *(k for _, k, _ in _EXT_FIELDS),
        *(c for _, _, c in _EXT_FIELDS),
        *(s for _, _, s in SCAN_SOURCES),
        *(c for _, c, _ in SCAN_SOURCES),
    }
)

#: book-level ``extensions`` keys this mapper reads
CLAIMED_BOOK_EXTENSION_KEYS: frozenset[str] = frozenset({"risu_fullWordMatching"})

_NUM_FIELDS = frozenset(
    {"scanDepth", "groupWeight", "displayIndex", "sticky", "cooldown", "delay", "delayUntilRecursion"}
)
_BOOL_FIELDS = frozenset(
    {
        "matchWholeWords",
        "excludeRecursion",
        "preventRecursion",
        "groupOverride",
        "useGroupScoring",
        "ignoreBudget",
        "vectorized",
    }
)
_STR_FIELDS = frozenset({"outletName", "group", "automationId"})
#: fields a fresh writer emits as ``null`` when the body has none (ST's own "inherit" value)
_NULLABLE = frozenset(
    {"scanDepth", "matchWholeWords", "useGroupScoring", "groupWeight", "sticky", "cooldown", "delay"}
)
#: fields always present in a canonical entry (non-optional in ``LoreEntry``)
_ALWAYS = frozenset({"excludeRecursion", "preventRecursion", "delayUntilRecursion"})

_CAMEL_SPELLING = {snake: camel for _, snake, camel in _EXT_FIELDS}
_CAMEL_SPELLING.update({"case_sensitive": "caseSensitive"})
_CAMEL_SPELLING.update({snake: camel for _, camel, snake in SCAN_SOURCES})

#: ``merge3`` list key: entries paired by ``id``
ENTRY_KEY = by_id


#: ``core.basecache`` tag of :func:`book_to_body`'s dicts (decoders that keep them use this tag)
BOOK_TAG = "character_book"


# --- decode -------------------------------------------------------------------------------------


def book_to_body(book: Mapping[str, Any], ctx: MapContext | None = None) -> dict[str, Any]:
    """A ``character_book`` object as a ``LorebookBody`` dict (see the module docstring).

    ``ctx.path`` is the book's JSON path (``$.data.character_book``); a wrong type raises
    ``Malformed`` with the full path of the bad value.
    """
    ctx = ctx or MapContext()
    entries = book.get("entries")
    if entries is None:
        entries = []
    elif not isinstance(entries, list):
        raise wrong(ctx.at("entries"), "an array of entries", entries)

    ext = opt_obj(book.get("extensions"), ctx.at("extensions"))
    out_ext: dict[str, Any] | None = None
    gmww = None
    if ext:
        gmww = opt_bool(ext.get("risu_fullWordMatching"), ctx.at("extensions", "risu_fullWordMatching"), ctx)
        out_ext = {k: v for k, v in ext.items() if k not in CLAIMED_BOOK_EXTENSION_KEYS} or None

    ectx = ctx.child("entries")
    rows = []
    raw_ids = []
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            raise wrong(ectx.at(i), "an entry object", e)
        row = entry_to_body(e, i, ectx.child(i))
        rows.append(row)
        raw_ids.append(row["id"])
    if len(set(raw_ids)) != len(raw_ids):
        for row, uid in zip(rows, unique_ids(raw_ids), strict=True):
            row["id"] = uid

    return {
        "name": opt_str(book.get("name"), ctx.at("name"), ctx) or "",
        "description": opt_str(book.get("description"), ctx.at("description"), ctx),
        "globalScanDepth": opt_num(book.get("scan_depth"), ctx.at("scan_depth"), ctx),
        "tokenBudget": opt_num(book.get("token_budget"), ctx.at("token_budget"), ctx),
        "globalRecursion": opt_bool(book.get("recursive_scanning"), ctx.at("recursive_scanning"), ctx),
        "globalMatchWholeWords": gmww,
        "extensions": out_ext,
        "entries": rows,
    }


def _entry_id(v: Any, index: int, ctx: MapContext) -> str:
    if v is None:
        return str(index)
    if isinstance(v, str):
        return v
    if isinstance(v, int | float) and not isinstance(v, bool):
        return str(v) if v.__class__ is int else js_number_text(v)
    raise wrong(ctx.at("id"), "a number or string id", v)


# --- per-field readers for ``entry.extensions`` (and the same keys at the entry's top level) ------
# Each writes ``row[field]`` from wire value ``v``; ``k`` is the wire key and ``top`` says whether it
# sat at the entry's top level, so the JSON path is only built when the value is wrong.


def _where(ctx: MapContext, k: str, top: bool) -> str:
    return ctx.at(k) if top else ctx.at("extensions", k)


def _r_num(row: dict[str, Any], f: str, v: Any, ctx: MapContext, k: str, top: bool) -> None:
    row[f] = v if v is None or v.__class__ is int else opt_num(v, _where(ctx, k, top), ctx)


def _r_num_keep(row: dict[str, Any], f: str, v: Any, ctx: MapContext, k: str, top: bool) -> None:
    if v is not None:  # null: the model's default (depth 4, probability 100)
        row[f] = v if v.__class__ is int else opt_num(v, _where(ctx, k, top), ctx)


def _r_bool(row: dict[str, Any], f: str, v: Any, ctx: MapContext, k: str, top: bool) -> None:
    row[f] = v if v is None or v is True or v is False else read_bool(v, ctx, _where(ctx, k, top))


def _r_bool_keep(row: dict[str, Any], f: str, v: Any, ctx: MapContext, k: str, top: bool) -> None:
    if v is True or v is False:
        row[f] = v
    elif v is not None:
        row[f] = read_bool(v, ctx, _where(ctx, k, top))


def _r_delay(row: dict[str, Any], f: str, v: Any, ctx: MapContext, k: str, top: bool) -> None:
    if v is True or v is False:
        row[f] = int(v)  # ST: true = from the first recursion level
    elif v is not None:
        row[f] = v if v.__class__ is int else opt_num(v, _where(ctx, k, top), ctx)


def _r_str(row: dict[str, Any], f: str, v: Any, ctx: MapContext, k: str, top: bool) -> None:
    row[f] = v if v is None or v.__class__ is str else opt_str(v, _where(ctx, k, top), ctx)


def _r_strs(row: dict[str, Any], f: str, v: Any, ctx: MapContext, k: str, top: bool) -> None:
    row[f] = opt_str_list(v, _where(ctx, k, top), ctx) if v is not None else None


def _r_scan(row: dict[str, Any], f: str, v: Any, ctx: MapContext, k: str, top: bool) -> None:
    sources = row.get("scanSources")
    if sources is None:
        sources = row["scanSources"] = []
    if v is not None and v is not True and v is not False:
        v = read_bool(v, ctx, _where(ctx, k, top))
    if v is True and f not in sources:
        sources.append(f)


def _r_position(row: dict[str, Any], f: str, v: Any, ctx: MapContext, k: str, top: bool) -> None:
    if v.__class__ is int or v.__class__ is float:
        row["position"] = position_name(v)  # the ST int beats the coarse spec string


def _r_role(row: dict[str, Any], f: str, v: Any, ctx: MapContext, k: str, top: bool) -> None:
    name = ROLE_NAMES.get(v) if v.__class__ is int else None
    row["role"] = name or role_name(v, ctx, _where(ctx, k, top))


def _r_logic(row: dict[str, Any], f: str, v: Any, ctx: MapContext, k: str, top: bool) -> None:
    name = LOGIC_NAMES.get(v) if v.__class__ is int else None
    row["selectiveLogic"] = name or logic_name(v, ctx, _where(ctx, k, top))


def _r_use_probability(row: dict[str, Any], f: str, v: Any, ctx: MapContext, k: str, top: bool) -> None:
    if v is not None and v is not True and v is not False:
        v = read_bool(v, ctx, _where(ctx, k, top))
    if v is False:
        row["_noProbability"] = True


_Reader = Any
_NONE = type(None)
#: value classes each reader would store unchanged: those skip the call (the hot path of a book)
_VERBATIM: dict[Any, frozenset[type]] = {
    _r_num: frozenset({int, _NONE}),
    _r_num_keep: frozenset({int}),
    _r_bool: frozenset({bool, _NONE}),
    _r_bool_keep: frozenset({bool}),
    _r_str: frozenset({str, _NONE}),
    _r_delay: frozenset({int}),
}
#: ST ints each reader maps by table alone (``_r_position``: POSITION_NAMES; ``_r_role``, ``_r_logic``:
#: the known values; every other value still goes through the reader)
_NAMES: dict[Any, dict[int, str]] = {
    _r_position: POSITION_NAMES,
    _r_role: ROLE_NAMES,
    _r_logic: LOGIC_NAMES,
}
_NEVER: frozenset[type] = frozenset()

#: wire key -> (canonical field, reader, spelling rank: 0 = ST's snake_case, 1 = the camelCase alias,
#: value classes stored as they are)
_X: dict[str, tuple[str, _Reader, int, frozenset[type], dict[int, str] | None]] = {}


def _add(key: str, field: str, reader: _Reader, rank: int) -> None:
    _X[key] = (field, reader, rank, _VERBATIM.get(reader, _NEVER), _NAMES.get(reader))


_add("position", "position", _r_position, 0)
_add("depth", "depth", _r_num_keep, 0)
_add("role", "role", _r_role, 0)
_add("selectiveLogic", "selectiveLogic", _r_logic, 0)
_add("probability", "probability", _r_num_keep, 0)
_add("useProbability", "useProbability", _r_use_probability, 0)
_add("case_sensitive", "caseSensitive", _r_bool, 0)
_add("caseSensitive", "caseSensitive", _r_bool, 1)
for _field, _snake, _camel in _EXT_FIELDS:
    _reader = (
        _r_delay
        if _field == "delayUntilRecursion"
        else _r_bool_keep
        if _field in _ALWAYS
        else _r_num
        if _field in _NUM_FIELDS
        else _r_bool
        if _field in _BOOL_FIELDS
        else _r_str
        if _field in _STR_FIELDS
        else _r_strs
    )
    _add(_snake, _field, _reader, 0)
    if _camel != _snake:
        _add(_camel, _field, _reader, 1)
for _canon, _camel, _snake in SCAN_SOURCES:
    _add(_snake, _canon, _r_scan, 0)
    _add(_camel, _canon, _r_scan, 1)
del _field, _snake, _camel, _reader, _canon

#: entry top-level keys that are spec fields (never read as a fallback for an extensions field)
_SPEC_KEYS = frozenset(
    {
        "keys",
        "secondary_keys",
        "content",
        "enabled",
        "insertion_order",
        "case_sensitive",
        "name",
        "priority",
        "id",
        "comment",
        "selective",
        "constant",
        "position",
        "use_regex",
        "extensions",
        "character_filter",
        "folder",
    }
)
_SCAN_ORDER = {canon: i for i, (canon, _, _) in enumerate(SCAN_SOURCES)}


#: the entry's booleans, read under the same name
_FLAGS = ("enabled", "constant", "selective")


def entry_to_body(e: Mapping[str, Any], index: int, ctx: MapContext) -> dict[str, Any]:
    """One ``character_book`` entry as a ``LoreEntry`` dict; ``index`` is its position in the book."""
    g = e.get
    x = g("extensions")
    if x is None:
        x = {}
    elif x.__class__ is not dict:
        raise wrong(ctx.at("extensions"), "an object", x)

    # title / comment: name ?? comment (docs/canonical-model.md#loreentry). The wire readers are inlined for
    # the common value classes in this function (it runs once per entry of every book): each
    # ``x.__class__ is ...`` test below is the fast path of ``str_at``/``bool_at``/``num_at``.
    name = g("name")
    if name is not None and name.__class__ is not str:
        name = opt_str(name, ctx.at("name"), ctx)
    comment = g("comment")
    if comment is not None and comment.__class__ is not str:
        comment = opt_str(comment, ctx.at("comment"), ctx)
    if name:
        title = name
        note = comment if comment is not None and comment != name else None
    elif comment:
        title, note = comment, None
    else:
        title, note = f"Entry {index + 1}", None

    keys = strs_at(g("keys"), ctx, "keys")
    secondary = strs_at(g("secondary_keys"), ctx, "secondary_keys")
    eid = g("id")
    content = g("content")
    if content.__class__ is not str:
        content = opt_str(content, ctx.at("content"), ctx) or ""
    row: dict[str, Any] = {
        "id": eid if eid.__class__ is str else _entry_id(eid, index, ctx),
        "title": title,
        "content": content,
        # parse_key, with its plain-key case inline (only a key starting with "/" can be a regex)
        "triggers": None if keys is None else [{"text": k} if k[:1] != "/" else parse_key(k) for k in keys],
        "secondaryTriggers": None
        if secondary is None
        else [{"text": k} if k[:1] != "/" else parse_key(k) for k in secondary],
    }
    if note is not None:
        row["comment"] = note
    for flag in _FLAGS:
        v = g(flag)
        if v is not None:
            row[flag] = v if v is True or v is False else read_bool(v, ctx, (flag,))
    v = g("insertion_order")
    if v is not None:
        row["sortOrder"] = v if v.__class__ is int else opt_num(v, ctx.at("insertion_order"), ctx)
    v = g("priority")
    if v is not None:
        row["priority"] = v if v.__class__ is int else opt_num(v, ctx.at("priority"), ctx)

    # ST's fields: extensions first (snake_case wins over the camelCase alias), then the top level
    rest: dict[str, Any] | None = None
    xget = _X.get
    for k, v in x.items():
        spec = xget(k)
        if spec is None:
            if rest is None:
                rest = {}
            rest[k] = v
            continue
        field, reader, rank, verbatim, names = spec
        if rank and field in row:
            continue
        c = v.__class__
        if c in verbatim:
            row[field] = v
        elif c is int and names is not None and v in names:
            row[field] = names[v]  # the reader's own result for a known ST int
        else:
            reader(row, field, v, ctx, k, False)
    if not _SPEC_KEYS.issuperset(e):  # keys beside the spec fields: ST fields at the top level?
        for k in e.keys() - _SPEC_KEYS:
            spec = xget(k)
            if spec is not None and spec[0] not in row and not (spec[1] is _r_scan and "scanSources" in row):
                spec[1](row, spec[0], e[k], ctx, k, True)

    if "position" not in row:
        spos = g("position")
        if spos is None or spos == "after_char":
            row["position"] = "character"  # ST: anything but before_char is after-char
        elif spos == "before_char":
            row["position"] = "world"
        elif spos.__class__ is str:
            row["position"] = spos  # open enum: kept verbatim (before_char_defs, "")
        elif isinstance(spos, int | float) and not isinstance(spos, bool):
            row["position"] = position_name(spos)
        else:
            raise wrong(ctx.at("position"), "a position string", spos)
    cs = g("case_sensitive")
    if (cs is True or cs is False) and row.get("caseSensitive") is None:
        row["caseSensitive"] = cs  # the spec's own field, when extensions leave it open
    if row.pop("_noProbability", False):
        row["probability"] = 100  # ST does not apply it (the raw pair stays in the twin)
    sources = row.get("scanSources")
    if sources is not None and len(sources) > 1:
        sources.sort(key=_SCAN_ORDER.__getitem__)

    cf = g("character_filter")
    if cf is not None:
        row["characterFilter"] = _character_filter(cf, ctx.child("character_filter"))
    folder = g("folder")
    if folder is not None:
        row["categoryId"] = str_at(folder, ctx, "folder")
    if rest is not None:
        row["extensions"] = rest
    return row


def _character_filter(v: Any, ctx: MapContext) -> dict[str, Any]:
    cf = ctx.obj(v)
    return {
        "isExclude": ctx.boolean(cf.get("isExclude"), ("isExclude",), False),
        "names": strs_at(cf.get("names"), ctx, "names") or [],
        "tags": strs_at(cf.get("tags"), ctx, "tags") or [],
    }


# --- encode -------------------------------------------------------------------------------------


def body_to_book(body: LorebookBody, *, spelling: Spelling = "snake") -> dict[str, Any]:
    """A fresh ``character_book`` for a canonical lorebook (optional book fields only when set).

    ``spelling="camel"`` writes the entry ``extensions`` keys in ST's world-info spelling
    (``excludeRecursion``) as RisuAI does; the default is the snake_case SillyTavern writes.
    """
    book: dict[str, Any] = {}
    if body.name:
        book["name"] = body.name
    if body.description is not None:
        book["description"] = body.description
    if body.globalScanDepth is not None:
        book["scan_depth"] = body.globalScanDepth
    if body.tokenBudget is not None:
        book["token_budget"] = body.tokenBudget
    if body.globalRecursion is not None:
        book["recursive_scanning"] = body.globalRecursion
    ext = dict(body.extensions) if body.extensions else {}
    if body.globalMatchWholeWords is not None:
        ext["risu_fullWordMatching"] = body.globalMatchWholeWords
    book["extensions"] = ext
    book["entries"] = [body_to_entry(e, spelling=spelling) for e in body.entries]
    return book


def _wire_id(id_: str) -> int | str:
    return (
        int(id_)
        if id_.isascii() and id_.isdigit() and (id_ == "0" or id_[0] != "0") and len(id_) < 16
        else id_
    )


def body_to_entry(e: LoreEntry, *, spelling: Spelling = "snake") -> dict[str, Any]:
    """One canonical entry as a ``character_book`` entry (ST's key order, spec fields first)."""
    triggers = e.triggers or []
    secondary = e.secondaryTriggers
    out: dict[str, Any] = {
        "id": _wire_id(e.id),
        "keys": format_keys(triggers),
    }
    if secondary is not None:
        out["secondary_keys"] = format_keys(secondary)
    if e.comment is not None:
        out["name"] = e.title  # name + a separate comment; otherwise the comment is the title (ST)
    out["comment"] = e.comment if e.comment is not None else e.title
    out["content"] = e.content
    out["constant"] = e.constant
    if e.selective is not None:
        out["selective"] = e.selective
    out["insertion_order"] = e.sortOrder
    if e.priority != 100:
        out["priority"] = e.priority
    out["enabled"] = e.enabled
    pint = position_int(e.position)
    if pint is None:
        out["position"] = e.position  # an unknown verbatim string
    else:
        out["position"] = "before_char" if pint == 0 else "after_char"
    out["use_regex"] = any(t.isRegex for t in triggers) or any(t.isRegex for t in secondary or ())
    if e.characterFilter is not None:
        cf = e.characterFilter
        out["character_filter"] = {"isExclude": cf.isExclude, "names": list(cf.names), "tags": list(cf.tags)}
    if e.categoryId is not None:
        out["folder"] = e.categoryId

    x: dict[str, Any] = dict(e.extensions) if e.extensions else {}
    if pint is not None:
        x["position"] = pint
    x["depth"] = e.depth
    x["role"] = ROLE_INTS[e.role]
    x["selectiveLogic"] = LOGIC_INTS[e.selectiveLogic]
    x["probability"] = e.probability
    x["useProbability"] = e.probability != 100
    x["case_sensitive"] = e.caseSensitive
    for field, snake, _ in _EXT_FIELDS:
        v = getattr(e, field)
        if v is None and field not in _NULLABLE:
            continue
        if field == "delayUntilRecursion" and v == 0:
            v = False  # what ST writes for "no delay"
        elif field == "generationTriggers":
            v = list(v)
        x[snake] = v
    if e.scanSources is not None:
        chosen = set(e.scanSources)
        for canon, _, snake in SCAN_SOURCES:
            x[snake] = canon in chosen
    if spelling == "camel":
        x = {_CAMEL_SPELLING.get(k, k): v for k, v in x.items()}
    out["extensions"] = x
    return out


def embed_book(book: CanonicalEntity, codec_id: str) -> dict[str, Any]:
    """A linked lorebook as a ``character_book``: its twin under ``codec_id`` with the body's edits
    applied (the twin itself when unedited, in the twin's key spelling), else a fresh book."""

    def write(body: LorebookBody, twin: dict[str, Any] | None) -> dict[str, Any]:
        return body_to_book(body) if twin is None else body_to_book(body, spelling=book_spelling(twin))

    book_tree: dict[str, Any] = embed_twin(
        book, codec_id, dict, BOOK_TAG, book_to_body, write, list_key=ENTRY_KEY
    )
    return book_tree


def book_spelling(book: Any) -> Spelling:
    """The ``entry.extensions`` spelling a native book uses: ``camel`` when its entries carry ST's
    world-info names (``excludeRecursion``) and none of the snake_case ones, else ``snake``."""
    if not isinstance(book, dict) or not isinstance(book.get("entries"), list):
        return "snake"
    camel = False
    for e in book["entries"]:
        x = e.get("extensions") if isinstance(e, dict) else None
        if not isinstance(x, dict):
            continue
        if "exclude_recursion" in x or "display_index" in x or "group_weight" in x:
            return "snake"
        if "excludeRecursion" in x or "displayIndex" in x or "groupWeight" in x:
            camel = True
    return "camel" if camel else "snake"


def require_book(v: Any, path: str) -> dict[str, Any]:
    """``v`` as a book object, or ``Malformed`` naming ``path``."""
    if not isinstance(v, dict):
        raise Malformed(f"a character_book must be an object, found {type(v).__name__}", path=path)
    return v


#: the basic canonical paths of a lore entry: its title, text, on and always-on switches and plain
#: trigger words; the books of apps that import SillyTavern lore (Agnai, NovelAI) hold these too
BASIC_ENTRY_PATHS: tuple[str, ...] = (
    "entries[].title",
    "entries[].content",
    "entries[].enabled",
    "entries[].constant",
    "entries[].triggers[].text",
)

#: the canonical paths of a SillyTavern lore entry: what a card book's entry holds; a world's, and
#: the entries of apps that import ST lore, hold these less a few (their coverage says which)
ST_ENTRY_PATHS: frozenset[str] = frozenset(
    {
        "entries[].id",
        "entries[].comment",
        *BASIC_ENTRY_PATHS,
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
        "entries[].priority",
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
        "entries[].categoryId",
        "entries[].characterFilter",
        "entries[].generationTriggers",
        "entries[].ignoreBudget",
        "entries[].vectorized",
        "entries[].automationId",
        "entries[].displayIndex",
        "entries[].extensions",
    }
)

#: the canonical paths of a lore category (a flat folder): what apps with folder rows hold; a card
#: book has none
CATEGORY_PATHS: tuple[str, ...] = (
    "categories[].id",
    "categories[].name",
    "categories[].sortOrder",
    "categories[].enabled",
)

#: canonical lorebook paths a ``character_book`` can hold (drives fidelity reports)
CHARACTER_BOOK_COVERAGE = Coverage.of(
    "name",
    "description",
    "globalScanDepth",
    "tokenBudget",
    "globalRecursion",
    "globalMatchWholeWords",
    "extensions",
    *sorted(ST_ENTRY_PATHS),
    notes=[
        "an entry's own extension keys that name a card-book field (position, depth, display_index, "
        "probability...) are that field's slot: the entry's value is written there, as SillyTavern "
        "does when it writes a card book from a world whose entries kept their card's extensions",
        "categories are not held (Risu folder rows stay entries)",
        "per-trigger probability is not held (the entry's probability is)",
        "scanSources: only the six SillyTavern match* sources; character_name, character_tags and "
        "persona_tags are not held",
    ],
    excludes=[f"entries[].extensions.{k}" for k in sorted(CLAIMED_EXTENSION_KEYS)],
)


__all__ = [
    "BASIC_ENTRY_PATHS",
    "BOOK_TAG",
    "CATEGORY_PATHS",
    "CHARACTER_BOOK_COVERAGE",
    "CLAIMED_BOOK_EXTENSION_KEYS",
    "CLAIMED_EXTENSION_KEYS",
    "ENTRY_KEY",
    "ST_ENTRY_PATHS",
    "body_to_book",
    "body_to_entry",
    "book_spelling",
    "book_to_body",
    "embed_book",
    "entry_to_body",
    "is_character_book",
    "require_book",
]
