"""``rolecall-lorebook``: RoleCall's lorebook export, ``RoleCallExportV1``.

``{schemaVersion: "1.0.0", exportDate, lorebook: {name, description, settings, metadata, entries[],
categories?, tree?}}`` (docs/formats/rolecall.md#lorebook-rolecallexportv1). Entries are nested groups on the wire and flat in
canonical:

============================================  ==============================================
wire (entry)                                  canonical ``LoreEntry``
============================================  ==============================================
``id``, ``title``, ``content``, ``enabled``,  same names (``comment: null`` is no comment; a
``constant``, ``comment``                     missing ``title`` is ``Entry N``)
``triggers.primary[]`` / ``.secondary[]``     ``triggers`` / ``secondaryTriggers``:
                                              ``{keyword, isRegex, flags?, probability?}`` ->
                                              ``{text, isRegex, flags, probability}``
``triggers.selectiveLogic``                   ``selectiveLogic`` (same four names)
``matching.{caseSensitive, matchWholeWords,   same names (``null`` = the book's setting)
scanDepth}``
``injection.{position, depth, role}``         same names; RoleCall-only positions (``append``,
                                              ``append_bottom``, ``prepend_top``, ``scene``) kept
                                              verbatim
``priority.{sortOrder, priority}``            ``sortOrder`` (placement), ``priority`` (eviction)
``timing.{sticky, cooldown, delay}``          same names
``grouping.{groupName, categoryId,            ``group``, ``categoryId``, ``groupWeight``
groupWeight}``
``probability``                               ``probability``
``advanced.{excludeRecursion,                 same names (``delayUntilRecursion`` is a number)
preventRecursion, delayUntilRecursion,
ignoreBudget}``
``characterFilter``                           ``characterFilter`` (``null`` = none)
``scanSources.{characterDescription,          ``scanSources`` ``character_description``,
characterPersonality, userPersona,            ``character_personality``,
scenario}``                                   ``persona_description``, ``character_scenario``
``unsupportedFields`` (ST-origin bag)         ``vectorized``, ``groupOverride``,
                                              ``useGroupScoring``, ``automationId``,
                                              ``generationTriggers``, ``outletName``;
                                              ``matchCharacterDepthPrompt`` /
                                              ``matchCreatorNotes`` -> ``scanSources``; other
                                              keys -> ``extensions``, and so do the keys of
                                              an object ``extensions`` (ST's own field: an
                                              extension key named like one of the fields
                                              above, or ``extensions``, is written there)
============================================  ==============================================

Book: ``settings.{lorebookType, globalMatchWholeWords, globalScanDepth, globalRecursion,
tokenBudget, entryBudget}`` and ``metadata.tags`` map by name; ``categories[]`` are canonical
categories. Twin only (no canonical home): ``exportDate``, ``settings.globalCaseSensitive``,
``budgetMode``, ``metadata.genre``/``fandom``, ``tree``, entry ``triggers.mode``, per-trigger
``frequency``, ``advanced.useMemo``, ``sideEffects``, entry ``metadata``.

Detection: 1.0 when ``lorebook.entries`` is an array and ``schemaVersion`` is a string containing
``1.0.0`` (the original design's rule: RoleCall's other lorebook shapes are not claimed).

Encode: a same-format export overlays the body's edits on the twin (entries paired by ``id``); a
fresh export writes the v1 envelope with ``exportDate`` = ``EmitContext.options["exportedAt"]`` or
the Unix epoch (bytes must be deterministic), and only the settings the body has.
"""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core.codec import Coverage, EmitContext
from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.core.overlay import by_id
from bunzai_codecs.entities.base import MESSAGE_ROLES
from bunzai_codecs.entities.lorebook import LorebookBody, LoreEntry, Trigger
from bunzai_codecs.formats._shared.tree_codec import TreeCodec
from bunzai_codecs.formats._shared.wire import (
    MapContext,
    bool_at,
    id_text,
    num_at,
    opt_obj,
    str_at,
    strs_at,
    wrong,
)
from bunzai_codecs.formats.rolecall.detect import SCHEMA_VERSION, is_rolecall_export
from bunzai_codecs.formats.tavern.character_book import CATEGORY_PATHS, ST_ENTRY_PATHS
from bunzai_codecs.formats.tavern.lore import LOGIC_INTS, map_rows, with_unique_ids

EPOCH = "1970-01-01T00:00:00.000Z"

#: RoleCall ``scanSources`` flag -> canonical scan source
SCAN_FLAGS: tuple[tuple[str, str], ...] = (
    ("characterDescription", "character_description"),
    ("characterPersonality", "character_personality"),
    ("userPersona", "persona_description"),
    ("scenario", "character_scenario"),
)
#: ``unsupportedFields`` flags that are scan sources
UNSUPPORTED_SCAN: tuple[tuple[str, str], ...] = (
    ("matchCharacterDepthPrompt", "character_depth_prompt"),
    ("matchCreatorNotes", "creator_notes"),
)
#: ``unsupportedFields`` keys that are canonical fields of the same name
UNSUPPORTED_FIELDS = (
    "vectorized",
    "groupOverride",
    "useGroupScoring",
    "automationId",
    "generationTriggers",
    "outletName",
)
_SCAN_ORDER = {
    canon: i for i, canon in enumerate([c for _, c in SCAN_FLAGS] + [c for _, c in UNSUPPORTED_SCAN])
}
#: the ST field that holds an entry's own extension keys, inside ``unsupportedFields``
EXTENSIONS = "extensions"
#: ``unsupportedFields`` keys that mean a canonical field: an extension key of the same name is
#: written inside ``unsupportedFields.extensions`` instead, so it is not read as that field
_RESERVED = frozenset({*UNSUPPORTED_FIELDS, *(flag for flag, _ in UNSUPPORTED_SCAN), EXTENSIONS})


# --- decode -------------------------------------------------------------------------------------


def _group(e: dict[str, Any], key: str, ctx: MapContext) -> dict[str, Any]:
    v = e.get(key)
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise wrong(ctx.at(key), "an object", v)
    return v


def _triggers(v: Any, ctx: MapContext, *path: str | int) -> list[dict[str, Any]] | None:
    if v is None:
        return None
    return map_rows(v, ctx, path, "an array of triggers", "a trigger object", _trigger)


def _trigger(t: dict[str, Any], _i: int, ctx: MapContext) -> dict[str, Any]:
    row: dict[str, Any] = {"text": str_at(t.get("keyword"), ctx, "keyword") or ""}
    is_regex = bool_at(t.get("isRegex"), ctx, "isRegex")
    if is_regex is not None:
        row["isRegex"] = is_regex
    flags = str_at(t.get("flags"), ctx, "flags")
    if flags is not None:
        row["flags"] = flags
    p = num_at(t.get("probability"), ctx, "probability")
    if p is not None:
        row["probability"] = p
    return row


def entry_to_body(e: dict[str, Any], index: int, ctx: MapContext) -> dict[str, Any]:
    """One RoleCall entry as a ``LoreEntry`` dict (see the module docstring)."""
    row: dict[str, Any] = {
        "id": id_text(e.get("id"), index, ctx, empty_is_absent=False),
        "title": str_at(e.get("title"), ctx, "title") or f"Entry {index + 1}",
        "content": str_at(e.get("content"), ctx, "content") or "",
    }
    comment = str_at(e.get("comment"), ctx, "comment")
    if comment is not None:
        row["comment"] = comment
    for key in ("enabled", "constant"):
        b = bool_at(e.get(key), ctx, key)
        if b is not None:
            row[key] = b

    trig = _group(e, "triggers", ctx)
    row["triggers"] = _triggers(trig.get("primary"), ctx, "triggers", "primary")
    row["secondaryTriggers"] = _triggers(trig.get("secondary"), ctx, "triggers", "secondary")
    logic = trig.get("selectiveLogic")
    if logic is not None:
        if isinstance(logic, str) and logic in LOGIC_INTS:
            row["selectiveLogic"] = logic
        else:
            ctx.warn(
                f"{ctx.at('triggers', 'selectiveLogic')}: unknown selectiveLogic {logic!r} read as and_any"
            )

    m = _group(e, "matching", ctx)
    row["caseSensitive"] = bool_at(m.get("caseSensitive"), ctx, "matching", "caseSensitive")
    row["matchWholeWords"] = bool_at(m.get("matchWholeWords"), ctx, "matching", "matchWholeWords")
    row["scanDepth"] = num_at(m.get("scanDepth"), ctx, "matching", "scanDepth")

    inj = _group(e, "injection", ctx)
    pos = str_at(inj.get("position"), ctx, "injection", "position")
    if pos is not None:
        row["position"] = pos
    depth = num_at(inj.get("depth"), ctx, "injection", "depth")
    if depth is not None:
        row["depth"] = depth
    role = inj.get("role")
    if role is not None:
        if role in MESSAGE_ROLES:
            row["role"] = role
        else:
            ctx.warn(f"{ctx.at('injection', 'role')}: unknown role {role!r} read as system")

    pr = _group(e, "priority", ctx)
    for wire, canon in (("sortOrder", "sortOrder"), ("priority", "priority")):
        n = num_at(pr.get(wire), ctx, "priority", wire)
        if n is not None:
            row[canon] = n

    tm = _group(e, "timing", ctx)
    for key in ("sticky", "cooldown", "delay"):
        row[key] = num_at(tm.get(key), ctx, "timing", key)

    gr = _group(e, "grouping", ctx)
    row["group"] = str_at(gr.get("groupName"), ctx, "grouping", "groupName")
    row["categoryId"] = str_at(gr.get("categoryId"), ctx, "grouping", "categoryId")
    row["groupWeight"] = num_at(gr.get("groupWeight"), ctx, "grouping", "groupWeight")

    p = num_at(e.get("probability"), ctx, "probability")
    if p is not None:
        row["probability"] = p

    adv = _group(e, "advanced", ctx)
    for key in ("excludeRecursion", "preventRecursion"):
        b = bool_at(adv.get(key), ctx, "advanced", key)
        if b is not None:
            row[key] = b
    d = adv.get("delayUntilRecursion")
    if d is True or d is False:
        row["delayUntilRecursion"] = int(d)  # ST's boolean spelling, if an ST-origin row carries it
    elif d is not None:
        row["delayUntilRecursion"] = num_at(d, ctx, "advanced", "delayUntilRecursion")
    row["ignoreBudget"] = bool_at(adv.get("ignoreBudget"), ctx, "advanced", "ignoreBudget")

    cf = e.get("characterFilter")
    if cf is not None:
        if not isinstance(cf, dict):
            raise wrong(ctx.at("characterFilter"), "an object or null", cf)
        row["characterFilter"] = {
            "isExclude": bool_at(cf.get("isExclude"), ctx, "characterFilter", "isExclude") or False,
            "names": strs_at(cf.get("names"), ctx, "characterFilter", "names") or [],
            "tags": strs_at(cf.get("tags"), ctx, "characterFilter", "tags") or [],
        }

    sources: list[str] | None = None
    ss = e.get("scanSources")
    if ss is not None:
        if not isinstance(ss, dict):
            raise wrong(ctx.at("scanSources"), "an object", ss)
        sources = [canon for flag, canon in SCAN_FLAGS if bool_at(ss.get(flag), ctx, "scanSources", flag)]

    un = _group(e, "unsupportedFields", ctx)
    rest: dict[str, Any] = {}
    for k, v in un.items():
        if k in ("vectorized", "groupOverride", "useGroupScoring"):
            row[k] = bool_at(v, ctx, "unsupportedFields", k)
        elif k in ("automationId", "outletName"):
            row[k] = str_at(v, ctx, "unsupportedFields", k)
        elif k == "generationTriggers":
            row[k] = strs_at(v, ctx, "unsupportedFields", k)
        elif k in ("matchCharacterDepthPrompt", "matchCreatorNotes"):
            if bool_at(v, ctx, "unsupportedFields", k):
                canon = dict(UNSUPPORTED_SCAN)[k]
                sources = [*(sources or ()), canon]
        elif k != EXTENSIONS or not isinstance(v, dict):
            rest[k] = v
    nested = un.get(EXTENSIONS)
    if isinstance(nested, dict):  # the ST entry's own extensions: keys a field name would shadow
        rest.update(nested)
    if sources is not None:
        row["scanSources"] = sorted(sources, key=_SCAN_ORDER.__getitem__)
    if rest:
        row["extensions"] = rest
    return row


def _category(c: dict[str, Any], i: int, ctx: MapContext) -> dict[str, Any]:
    cat: dict[str, Any] = {
        "id": id_text(c.get("id"), i, ctx, empty_is_absent=False),
        "name": str_at(c.get("name"), ctx, "name") or "",
    }
    so = num_at(c.get("sortOrder"), ctx, "sortOrder")
    if so is not None:
        cat["sortOrder"] = so
    cat["enabled"] = bool_at(c.get("enabled"), ctx, "enabled")
    return cat


def export_to_body(tree: Any, ctx: MapContext | None = None) -> dict[str, Any]:
    """A RoleCallExportV1 tree as a ``LorebookBody`` dict."""
    ctx = ctx or MapContext("$")
    if not isinstance(tree, dict):
        raise wrong(ctx.path, "a RoleCall lorebook export object", tree)
    book = tree.get("lorebook")
    if not isinstance(book, dict):
        raise wrong(ctx.at("lorebook"), "the lorebook object", book)
    bctx = ctx.child("lorebook")
    settings = opt_obj(book.get("settings"), bctx.at("settings")) or {}
    meta = opt_obj(book.get("metadata"), bctx.at("metadata")) or {}
    sp = ("settings",)
    body: dict[str, Any] = {
        "name": str_at(book.get("name"), bctx, "name") or "",
        "description": str_at(book.get("description"), bctx, "description"),
        "lorebookType": str_at(settings.get("lorebookType"), bctx, *sp, "lorebookType"),
        "globalMatchWholeWords": bool_at(
            settings.get("globalMatchWholeWords"), bctx, *sp, "globalMatchWholeWords"
        ),
        "globalScanDepth": num_at(settings.get("globalScanDepth"), bctx, *sp, "globalScanDepth"),
        "globalRecursion": bool_at(settings.get("globalRecursion"), bctx, *sp, "globalRecursion"),
        "tokenBudget": num_at(settings.get("tokenBudget"), bctx, *sp, "tokenBudget"),
        "entryBudget": num_at(settings.get("entryBudget"), bctx, *sp, "entryBudget"),
        "tags": strs_at(meta.get("tags"), bctx, "metadata", "tags"),
    }
    bool_at(settings.get("globalCaseSensitive"), bctx, *sp, "globalCaseSensitive")  # type check only

    cats = book.get("categories")
    if cats is not None:
        body["categories"] = map_rows(
            cats, bctx, ("categories",), "an array of categories", "a category object", _category
        )

    entries = book.get("entries", [])
    rows = map_rows(entries, bctx, ("entries",), "an array of entries", "an entry object", entry_to_body)
    body["entries"] = with_unique_ids(rows)
    return body


# --- encode -------------------------------------------------------------------------------------


def _trigger_out(t: Trigger) -> dict[str, Any]:
    out: dict[str, Any] = {"keyword": t.text, "isRegex": t.isRegex}
    if t.flags is not None:
        out["flags"] = t.flags
    if t.probability is not None:
        out["probability"] = t.probability
    return out


def body_to_entry(e: LoreEntry) -> dict[str, Any]:
    """One canonical entry as a RoleCall entry (RoleCall's group order)."""
    primary = e.triggers or []
    secondary = e.secondaryTriggers or []
    advanced_mode = any(t.probability is not None for t in (*primary, *secondary))
    sources = set(e.scanSources or ())
    out: dict[str, Any] = {
        "id": e.id,
        "title": e.title,
        "content": e.content,
        "comment": e.comment,
        "enabled": e.enabled,
        "constant": e.constant,
        "triggers": {
            "mode": "advanced" if advanced_mode else "simple",
            "primary": [_trigger_out(t) for t in primary],
            "secondary": [_trigger_out(t) for t in secondary],
            "selectiveLogic": e.selectiveLogic,
        },
        "matching": {
            "caseSensitive": e.caseSensitive,
            "matchWholeWords": e.matchWholeWords,
            "scanDepth": e.scanDepth,
        },
        "injection": {"position": e.position, "depth": e.depth, "role": e.role},
        "priority": {"sortOrder": e.sortOrder, "priority": e.priority},
        "timing": {"sticky": e.sticky or 0, "cooldown": e.cooldown or 0, "delay": e.delay or 0},
        "grouping": {
            "groupName": e.group,
            "categoryId": e.categoryId,
            "groupWeight": 100 if e.groupWeight is None else e.groupWeight,
        },
        "probability": e.probability,
        "advanced": {
            "useMemo": False,
            "excludeRecursion": e.excludeRecursion,
            "preventRecursion": e.preventRecursion,
            "delayUntilRecursion": e.delayUntilRecursion,
            "ignoreBudget": bool(e.ignoreBudget),
        },
        "characterFilter": None
        if e.characterFilter is None
        else {
            "isExclude": e.characterFilter.isExclude,
            "names": list(e.characterFilter.names),
            "tags": list(e.characterFilter.tags),
        },
        "scanSources": {flag: canon in sources for flag, canon in SCAN_FLAGS},
    }
    un: dict[str, Any] = {}
    for k in UNSUPPORTED_FIELDS:
        v = getattr(e, k)
        if v is not None:
            un[k] = list(v) if isinstance(v, list) else v
    for flag, canon in UNSUPPORTED_SCAN:
        if canon in sources:
            un[flag] = True
    if e.extensions:
        nested: dict[str, Any] = {}
        for k, v in e.extensions.items():
            if k in _RESERVED:
                nested[k] = v
            else:
                un.setdefault(k, v)
        if nested:
            un[EXTENSIONS] = nested
    if un:
        out["unsupportedFields"] = un
    return out


def body_to_export(body: LorebookBody, exported_at: str = EPOCH) -> dict[str, Any]:
    """A fresh RoleCallExportV1 tree for a canonical lorebook."""
    settings: dict[str, Any] = {}
    for key in ("lorebookType", "globalMatchWholeWords", "globalScanDepth", "globalRecursion", "tokenBudget"):
        v = getattr(body, key)
        if v is not None:
            settings[key] = v
    if body.entryBudget is not None:
        settings["budgetMode"] = "entry"
        settings["entryBudget"] = body.entryBudget
    book: dict[str, Any] = {
        "name": body.name,
        "description": body.description,
        "settings": settings,
        "metadata": {"tags": list(body.tags or ())},
        "entries": [body_to_entry(e) for e in body.entries],
    }
    if body.categories:
        book["categories"] = [
            {
                "id": c.id,
                "name": c.name,
                "sortOrder": c.sortOrder,
                **({} if c.enabled is None else {"enabled": c.enabled}),
            }
            for c in body.categories
        ]
    return {"schemaVersion": SCHEMA_VERSION, "exportDate": exported_at, "lorebook": book}


class RoleCallLorebook(TreeCodec):
    """RoleCall lorebook export (``RoleCallExportV1``)."""

    id = "rolecall-lorebook"
    coverage = Coverage.of(
        "name",
        "description",
        "lorebookType",
        "tags",
        "globalScanDepth",
        "globalRecursion",
        "globalMatchWholeWords",
        "tokenBudget",
        "entryBudget",
        *CATEGORY_PATHS,
        *sorted(
            ST_ENTRY_PATHS
            - {
                "entries[].displayIndex",
                "entries[].secondaryTriggers[].flags",
                "entries[].secondaryTriggers[].isRegex",
                "entries[].secondaryTriggers[].text",
                "entries[].selective",
                "entries[].triggers[].flags",
                "entries[].triggers[].isRegex",
                "entries[].triggers[].text",
            }
        ),
        "entries[].triggers",
        "entries[].secondaryTriggers",
        "entries[].scanSources",
        notes=[
            "no `selective` flag (secondary keys always combine by selectiveLogic) and no book `extensions`",
            "displayIndex is not held; scanSources character_name, character_tags and persona_tags are not held",
            "book globalCaseSensitive, budgetMode, genre/fandom and the category tree ride in escrow only",
        ],
    )

    list_key = by_id

    read = staticmethod(export_to_body)

    @staticmethod
    def write(body: LorebookBody) -> dict[str, Any]:
        """A fresh export stamped with the epoch (:meth:`to_native` stamps the twin's date or
        ``options["exportedAt"]``)."""
        return body_to_export(body, EPOCH)

    def to_native(self, body: LorebookBody, twin: dict[str, Any] | None, ctx: EmitContext) -> dict[str, Any]:
        if twin is not None:
            stamp = twin.get("exportDate")
            return body_to_export(body, stamp if isinstance(stamp, str) else EPOCH)
        when = ctx.options.get("exportedAt", EPOCH)
        if not isinstance(when, str):
            raise Malformed("options['exportedAt'] must be an ISO date string")
        return body_to_export(body, when)


__all__ = [
    "RoleCallLorebook",
    "body_to_entry",
    "body_to_export",
    "entry_to_body",
    "export_to_body",
    "is_rolecall_export",
]
