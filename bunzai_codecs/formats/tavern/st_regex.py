"""SillyTavern regex script <-> canonical regex rule (docs/canonical-model.md#regexrule, docs/formats/sillytavern.md#regex-tavernst_regexpy).

One ST script (the built-in Regex extension's object) is one ``RegexRule``. The same objects live
in a script file (``sillytavern-regex``), a card's ``data.extensions.regex_scripts``, a preset's
``extensions.regex_scripts`` and ``settings.json``'s ``extension_settings.regex``; every codec that
meets them calls this module. The script is ST's row of the lineage's one rule mapper
(``tavern/regex_rows.py``): :data:`ST_ROW` is its table.

Functions:

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

from typing import TYPE_CHECKING, Any

from bunzai_codecs.core.codec import Coverage
from bunzai_codecs.entities.regex import RegexRule, RegexSetBody
from bunzai_codecs.formats._shared import wire
from bunzai_codecs.formats._shared.links import embed_twin
from bunzai_codecs.formats.tavern import regex_rows as rx
from bunzai_codecs.formats.tavern.detect import is_script
from bunzai_codecs.formats.tavern.regex_rows import join_find, split_find, st_flags

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

#: ST ``substituteRegex`` ints -> canonical ``substituteFind``
SUBSTITUTE_NAMES: dict[int, str] = {0: "none", 1: "raw", 2: "escaped"}

#: an ST script as a rule row (``tavern/regex_rows.py``), in the key order ST's editor saves
ST_ROW = rx.RuleRow(
    "sillytavern",
    (
        rx.Id(none=(-1, "-1"), omit_index="always"),
        rx.Text("scriptName", "label"),
        rx.FindLiteral("findRegex"),
        rx.Text("replaceString", "replace"),
        rx.Strings("trimStrings", "trimStrings"),
        rx.Placement("placement", PLACEMENT_PHASES, numbers="table", display=(1, 2)),
        rx.Flag("disabled", "enabled", negated=True),
        rx.FlagTargets((("markdownOnly", "display"), ("promptOnly", "prompt")), display_phase="display"),
        rx.Flag("runOnEdit", "runOnEdit", omit_unset=True),
        rx.SubstituteNumber("substituteRegex", SUBSTITUTE_NAMES),
        rx.Number("minDepth", "minDepth"),
        rx.Number("maxDepth", "maxDepth"),
    ),
    reads=("findRegex", "placement", "markdownOnly", "disabled", "trimStrings"),
)


def SCRIPT_KEY(item: Any) -> Any:
    """``merge3`` list key: pairs scripts by ``id`` (positional when ids are missing or repeat)."""
    if isinstance(item, dict):
        v = item.get("id")
        return v if isinstance(v, str) and v else None
    return None


def script_to_rule(script: dict[str, Any], index: int, ctx: wire.MapContext) -> dict[str, Any]:
    """One ST script as a ``RegexRule`` dict; ``index`` is its position (id fallback, sortOrder)."""
    return rx.rule_of(ST_ROW, script, index, ctx)


def scripts_to_body(scripts: Any, *, name: str = "", ctx: wire.MapContext | None = None) -> dict[str, Any]:
    """An array of ST scripts as a ``RegexSetBody`` dict named ``name``.

    ``ctx.path`` is the array's JSON path (``$.data.extensions.regex_scripts``); an item that is not
    an object, or a field of the wrong type, raises ``Malformed`` with its path.
    """
    return {"name": name, "rules": rx.rules_of(ST_ROW, scripts, ctx or wire.MapContext())}


def rule_to_script(rule: RegexRule, index: int | None = None) -> dict[str, Any]:
    """A fresh ST script for a canonical rule, in the key order ST's editor saves.

    ``index`` is the rule's position in its array: an id that is just that position (what a
    script without an id decodes to) is not written, and ST gives the script a fresh one on import.
    """
    return rx.row_of(ST_ROW, rule, -1 if index is None else index)


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
    scripts: list[Any] = embed_twin(
        regex,
        codec_id,
        list,
        SCRIPTS_TAG,
        scripts_to_body,
        lambda b, _twin: body_to_scripts(b),
        list_key=SCRIPT_KEY,
    )
    return scripts


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
    "PLACEMENT_PHASES",
    "RULE_PATHS",
    "SCRIPTS_TAG",
    "SCRIPT_KEY",
    "ST_REGEX_COVERAGE",
    "ST_ROW",
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
