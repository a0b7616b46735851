"""SillyTavern regex script <-> canonical regex rule (docs/canonical-model.md#regexrule, docs/formats/sillytavern.md#regex-tavernst_regexpy).

One ST script (the built-in Regex extension's object) is one ``RegexRule``. The same objects live
in a script file (``sillytavern-regex``), a card's ``data.extensions.regex_scripts``, a preset's
``extensions.regex_scripts`` and ``settings.json``'s ``extension_settings.regex``; every codec that
meets them calls this module.

Pure functions:

- :func:`scripts_to_body` ``(scripts, *, name, ctx) -> dict`` — a ``RegexSetBody`` dict (not yet
  validated) for an array of scripts; :func:`script_to_rule` for one script;
- :func:`body_to_scripts` ``(body) -> list`` and :func:`rule_to_script` ``(rule) -> dict`` — fresh
  native scripts; a same-format export merges them with the twin (``merge3(..., list_key=SCRIPT_KEY)``);
- :func:`split_find` / :func:`join_find` — the ``/pattern/flags`` literal;
- :func:`embed_scripts` ``(regex_entity, codec_id) -> list`` — a linked regex set as the script array
  to embed (``regex_scripts``), through its twin under ``codec_id`` when it has one.

Mapping (each rule pinned by a test):

- ``findRegex`` ``/pattern/flags`` -> ``find`` + ``flags``. Like ST's ``regexFromString``, the split
  happens only when the text starts with ``/``, a later ``/`` closes a non-empty pattern and what
  follows is letters with no repeat; otherwise the whole string is the pattern and ``flags`` is
  ``""``. Written back as ``/find/flags`` (a bare pattern therefore comes back delimited after an
  edit of that rule; an unedited rule keeps its twin's text). Only flag letters ST reads are
  written (``st_flags``): Risu ``<...>`` directives are dropped, and a Risu rule with custom flags
  off (``useFlags`` false) is written with ``g``.
- ``placement`` ints -> ``phases``: 0 ``display`` (deprecated), 1 ``input``, 2 ``output``, 3 ``slash``,
  5 ``lorebook``, 6 ``reasoning``; any other number (4 = legacy "sendAs") is kept as its digits. On
  write ``display`` becomes 1 + 2 with ``markdownOnly`` (ST's own migration of 0); phases ST has no
  number for (``request``) are dropped.
- ``markdownOnly`` -> target ``display``, ``promptOnly`` -> target ``prompt``; neither -> ``targets``
  absent (the stored message is edited).
- ``substituteRegex`` 0/1/2 -> ``none``/``raw``/``escaped``; ``true`` (community files) is ``raw``,
  ``false`` is ``none``; other numbers are kept as digits.
- ``disabled`` -> ``enabled`` (negated); ``trimStrings`` (an empty list is absent); ``minDepth`` /
  ``maxDepth`` (``null`` = no bound); ``runOnEdit``.
- ``id``: a missing id or ST's placeholder ``-1`` becomes the row index (and is not written back:
  ST gives such a script a uuid on import); repeats get ``-2``...
  ``sortOrder`` is the row index (ST runs scripts in array order).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bunzai_codecs.core import basecache
from bunzai_codecs.core.codec import Coverage
from bunzai_codecs.core.overlay import merge3, unedited
from bunzai_codecs.entities.regex import RegexRule, RegexSetBody
from bunzai_codecs.formats._shared import wire
from bunzai_codecs.formats.tavern.detect import is_script
from bunzai_codecs.formats.tavern.lore import map_rows, with_unique_ids

if TYPE_CHECKING:
    from bunzai_codecs.core.entity import CanonicalEntity

#: ST ``placement`` ints -> canonical phases
PLACEMENT_PHASES: dict[int, str] = {
    0: "display",
    1: "input",
    2: "output",
    3: "slash",
    5: "lorebook",
    6: "reasoning",
}
PHASE_PLACEMENTS: dict[str, int] = {v: k for k, v in PLACEMENT_PHASES.items() if k != 0}

#: ST ``substituteRegex`` ints -> canonical ``substituteFind``
SUBSTITUTE_NAMES: dict[int, str] = {0: "none", 1: "raw", 2: "escaped"}
SUBSTITUTE_INTS: dict[str, int] = {v: k for k, v in SUBSTITUTE_NAMES.items()}

#: the flag letters ST's ``regexFromString`` accepts (JavaScript's plus the PCRE-style ones it lets through)
_FLAG_LETTERS = frozenset("dgimsuvyxXUAJ")

#: the keys of an ST script this mapper reads
SCRIPT_KEYS: frozenset[str] = frozenset(
    {
        "id",
        "scriptName",
        "findRegex",
        "replaceString",
        "trimStrings",
        "placement",
        "disabled",
        "markdownOnly",
        "promptOnly",
        "runOnEdit",
        "substituteRegex",
        "minDepth",
        "maxDepth",
    }
)


def SCRIPT_KEY(item: Any) -> Any:
    """``merge3`` list key: pairs scripts by ``id`` (positional when ids are missing or repeat)."""
    if isinstance(item, dict):
        v = item.get("id")
        return v if isinstance(v, str) and v else None
    return None


def split_find(find_regex: str) -> tuple[str, str]:
    """``"/a+b/gi"`` -> ``("a+b", "gi")``; a string that is not a ``/pattern/flags`` literal is
    the whole pattern with no flags (see the module docstring)."""
    if len(find_regex) >= 3 and find_regex[0] == "/":
        j = find_regex.rfind("/")
        if j >= 2:
            flags = find_regex[j + 1 :]
            if all(c in _FLAG_LETTERS for c in flags) and len(set(flags)) == len(flags):
                return find_regex[1:j], flags
    return find_regex, ""


def join_find(find: str, flags: str) -> str:
    """The ``/pattern/flags`` literal ST stores; ``""`` for an empty pattern (``//`` would be the
    two-slash pattern to ST's ``regexFromString``, and ``split_find`` reads it so)."""
    return f"/{find}/{flags}" if find else ""


_DIRECTIVE = re.compile(r"<[^>]*>")


def st_flags(rule: RegexRule) -> str:
    """The flags ST can store for ``rule``: the flag letters ``split_find`` reads back, each once.

    Risu's ``<...>`` directives (``<order 5>``, ``<cbs,move_top>``) have no ST equivalent and are
    dropped (kept in the ``/pattern/flags`` literal they would make ST read the whole text as the
    pattern); a Risu rule whose custom flags are off (``useFlags`` false) runs with ``g``, as in Risu.
    """
    if rule.useFlags is False:
        return "g"
    return "".join(dict.fromkeys(c for c in _DIRECTIVE.sub("", rule.flags) if c in _FLAG_LETTERS))


def _phase(v: Any, ctx: wire.MapContext, i: int) -> str:
    if v.__class__ is int:
        return PLACEMENT_PHASES.get(v) or str(v)  # the common case
    if isinstance(v, bool) or not isinstance(v, int | float | str):
        raise wire.wrong(ctx.at("placement", i), "a placement number", v)
    if isinstance(v, str):
        return v  # not ST's own spelling, but an open enum keeps what it is given
    if isinstance(v, float) and not v.is_integer():
        return wire.js_number_text(v)
    n = int(v)
    return PLACEMENT_PHASES.get(n) or str(n)


def _substitute(v: Any, ctx: wire.MapContext) -> str | None:
    if v is None:
        return None
    if v is True:
        return "raw"
    if v is False:
        return "none"
    if isinstance(v, int | float) and not isinstance(v, bool):
        n = int(v) if float(v).is_integer() else None
        if n is not None and n in SUBSTITUTE_NAMES:
            return SUBSTITUTE_NAMES[n]
        return wire.js_number_text(v)
    if isinstance(v, str):
        return v
    raise wire.wrong(ctx.at("substituteRegex"), "a substituteRegex number", v)


def _script_id(v: Any, index: int, ctx: wire.MapContext) -> str:
    if v == -1 or v == "-1":  # SillyTavern's "no id" sentinel, beside absent and ""
        return str(index)
    return wire.id_text(v, index, ctx)


def script_to_rule(script: Mapping[str, Any], index: int, ctx: wire.MapContext) -> dict[str, Any]:
    """One ST script as a ``RegexRule`` dict; ``index`` is its position (id fallback, sortOrder).

    JSON paths are built only for an error (``ctx.at``): the happy path formats none."""
    g = script.get
    find, flags = split_find(wire.str_at(g("findRegex"), ctx, "findRegex") or "")

    placement = g("placement")
    phases: list[str] = []
    if placement is not None:
        if placement.__class__ is not list:
            raise wire.wrong(ctx.at("placement"), "an array of placement numbers", placement)
        for i, p in enumerate(placement):
            ph = _phase(p, ctx, i)
            if ph not in phases:
                phases.append(ph)

    md = wire.bool_at(g("markdownOnly"), ctx, "markdownOnly")
    po = wire.bool_at(g("promptOnly"), ctx, "promptOnly")
    targets = None
    if md or po:
        targets = []
        if md:
            targets.append("display")
        if po:
            targets.append("prompt")

    disabled = wire.bool_at(g("disabled"), ctx, "disabled")
    trim = wire.strs_at(g("trimStrings"), ctx, "trimStrings")
    return {
        "id": _script_id(g("id"), index, ctx),
        "label": wire.str_at(g("scriptName"), ctx, "scriptName") or "",
        "find": find,
        "flags": flags,
        "replace": wire.str_at(g("replaceString"), ctx, "replaceString") or "",
        "trimStrings": trim or None,
        "phases": phases,
        "targets": targets,
        "substituteFind": _substitute(g("substituteRegex"), ctx),
        "minDepth": wire.num_at(g("minDepth"), ctx, "minDepth"),
        "maxDepth": wire.num_at(g("maxDepth"), ctx, "maxDepth"),
        "runOnEdit": wire.bool_at(g("runOnEdit"), ctx, "runOnEdit"),
        "enabled": not disabled,
        "sortOrder": index,
    }


def scripts_to_body(scripts: Any, *, name: str = "", ctx: wire.MapContext | None = None) -> dict[str, Any]:
    """An array of ST scripts as a ``RegexSetBody`` dict named ``name``.

    ``ctx.path`` is the array's JSON path (``$.data.extensions.regex_scripts``); an item that is not
    an object, or a field of the wrong type, raises ``Malformed`` with its path.
    """
    ctx = ctx or wire.MapContext()
    rules = map_rows(scripts, ctx, (), "an array of regex scripts", "a regex script object", script_to_rule)
    return {"name": name, "rules": with_unique_ids(rules)}


def rule_to_script(rule: RegexRule, index: int | None = None) -> dict[str, Any]:
    """A fresh ST script for a canonical rule, in the key order ST's editor saves.

    ``index`` is the rule's position in its array: an id that is just that position (what a
    script without an id decodes to) is not written, and ST gives the script a fresh one on import.
    """
    placement: list[int | float] = []
    markdown = False
    for ph in rule.phases:
        n = PHASE_PLACEMENTS.get(ph)
        if n is None:
            if ph == "display":  # ST's migration of the deprecated 0: both directions, display only
                markdown = True
                for m in (1, 2):
                    if m not in placement:
                        placement.append(m)
            elif ph.isascii() and ph.isdigit():
                placement.append(int(ph))
            continue
        if n not in placement:
            placement.append(n)
    targets = rule.targets or ()
    out: dict[str, Any] = {}
    if index is None or rule.id != str(index):
        out["id"] = rule.id
    out |= {
        "scriptName": rule.label,
        "findRegex": join_find(rule.find, st_flags(rule)),
        "replaceString": rule.replace,
        "trimStrings": list(rule.trimStrings) if rule.trimStrings else [],
        "placement": placement,
        "disabled": not rule.enabled,
        "markdownOnly": markdown or "display" in targets,
        "promptOnly": "prompt" in targets,
    }
    if rule.runOnEdit is not None:
        out["runOnEdit"] = rule.runOnEdit
    if rule.substituteFind is not None:
        sub = rule.substituteFind
        n = SUBSTITUTE_INTS.get(sub)
        out["substituteRegex"] = n if n is not None else int(sub) if sub.isascii() and sub.isdigit() else 0
    out["minDepth"] = rule.minDepth
    out["maxDepth"] = rule.maxDepth
    return out


def body_to_scripts(body: RegexSetBody) -> list[dict[str, Any]]:
    """A regex set as ST scripts, in run order (``sortOrder``, then list order)."""
    rules = body.rules
    if any(r.sortOrder != i for i, r in enumerate(rules)):
        rules = sorted(rules, key=lambda r: r.sortOrder)  # stable: ties keep list order
    return [rule_to_script(r, i) for i, r in enumerate(rules)]


#: ``core.basecache`` tag of :func:`scripts_to_body`'s dicts for an unnamed (embedded) script list
SCRIPTS_TAG = "st-regex-scripts"


def embed_scripts(regex: CanonicalEntity, codec_id: str) -> list[Any]:
    """A linked regex set as ``regex_scripts`` (its twin under ``codec_id`` when it has one)."""
    body = regex.body
    assert isinstance(body, RegexSetBody)
    twin = regex.twin(codec_id)
    raw = twin.raw if twin else None
    if not isinstance(raw, list):
        return body_to_scripts(body)
    kept: list[dict[str, Any]] = []

    def mapped() -> dict[str, Any]:
        if not kept:
            got = basecache.recall(SCRIPTS_TAG, raw)  # what the card decoder mapped from this list
            kept.append(scripts_to_body(raw) if got is None else got)
        return kept[0]

    if unedited(body, mapped, tag=SCRIPTS_TAG, raw=raw):
        return raw
    base_body = RegexSetBody.model_validate(mapped())
    if body.rules == base_body.rules:
        return raw
    return merge3(raw, body_to_scripts(base_body), body_to_scripts(body), list_key=SCRIPT_KEY)


#: the rule paths every regex format of the Tavern lineage holds (SillyTavern's, RoleCall's,
#: Lumiverse's, Marinara's): a rule's id, label, pattern and flags, replacement and trim strings
RULE_PATHS: tuple[str, ...] = (
    "rules[].id",
    "rules[].label",
    "rules[].find",
    "rules[].flags",
    "rules[].replace",
    "rules[].trimStrings",
)

#: canonical regex paths an ST script array can hold (for every value: a path ST holds only some
#: values of is left out and its note says which)
ST_REGEX_COVERAGE = Coverage.of(
    "rules[].id",
    "rules[].label",
    "rules[].find",
    "rules[].replace",
    "rules[].trimStrings",
    "rules[].minDepth",
    "rules[].maxDepth",
    "rules[].runOnEdit",
    "rules[].enabled",
    notes=[
        "the set name is not in the file: a file of one script is named after it, any other after the "
        "file, and scripts embedded in a card, preset or settings.json have none",
        "flags: only the letters ST reads (dgimsuvy and ST's xXUAJ, each once); Risu `<...>` directives "
        "are dropped and a Risu rule with custom flags off (useFlags false) is written with `g`",
        "phases: placements input, output, slash, lorebook, reasoning (and unknown numbers) only; `request` "
        "and non-numeric unknown phases are dropped, `display` is written as 1+2 with markdownOnly "
        "(read back as input+output with target display)",
        "targets: only `prompt` (promptOnly) and `display` (markdownOnly); other values are dropped",
        "substituteFind: only none/raw/escaped and numbers (substituteRegex); other values are written as 0",
        "sortOrder is the array order",
        "useFlags, characterIds, presetIds and extras are not held",
    ],
)

#: what a script array embedded in a card or preset (``regex_scripts``) holds: a script file's paths
#: (``name`` is not one: an embedded array has no set name of its own)
EMBEDDED_SCRIPTS_COVERAGE = Coverage(
    ST_REGEX_COVERAGE.paths - {"name"},
    (
        "embedded as `regex_scripts`: the set has no name of its own (a card's set reads back unnamed,"
        " a preset's is named after the preset), and several linked sets are written as one array",
        *ST_REGEX_COVERAGE.notes,
    ),
)


__all__ = [
    "EMBEDDED_SCRIPTS_COVERAGE",
    "PHASE_PLACEMENTS",
    "PLACEMENT_PHASES",
    "RULE_PATHS",
    "SCRIPTS_TAG",
    "SCRIPT_KEY",
    "SCRIPT_KEYS",
    "ST_REGEX_COVERAGE",
    "SUBSTITUTE_INTS",
    "SUBSTITUTE_NAMES",
    "body_to_scripts",
    "embed_scripts",
    "is_script",
    "join_find",
    "rule_to_script",
    "script_to_rule",
    "scripts_to_body",
    "split_find",
    "st_flags",
]
