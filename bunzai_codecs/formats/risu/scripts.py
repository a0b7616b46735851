"""Risu ``customscript`` rows <-> canonical regex rules (docs/formats/risu.md#regex-rules-risu-regex-risu-modules-regex-preset-regex-card-customscripts, docs/canonical-model.md#regexrule).

The same row shape lives in a ``{type:"regex"}`` export, a module's ``regex``, a ``.risup``
preset's ``regex`` and a card's ``extensions.risuai.customScripts``::

    {comment, in, out, type, ableFlag?, flag?}

``type`` is one of ``editinput | editoutput | editprocess | editdisplay | edittrans | disabled``
(``editrequest`` is read as ``editprocess``; unknown values are kept as phase strings). ``ableFlag``
is Risu's "custom flag" switch, not an on/off switch: without it Risu runs the pattern with ``g``.
``flag`` may carry ``<order N>``-style directives, kept verbatim. Rows have no ids: a rule's id is
its row index, which ``merge_rows`` uses to pair the body with the twin's rows. Patterns are data:
nothing here compiles or runs them.
"""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core.overlay import merge3
from bunzai_codecs.entities.regex import RegexRule, RegexSetBody
from bunzai_codecs.formats._shared.wire import MapContext, wrong
from bunzai_codecs.formats.risu.twins import twin_rows

#: the rule paths a Risu regex script holds (the export file's and a module's)
RULE_PATHS: tuple[str, ...] = (
    "rules[].label",
    "rules[].find",
    "rules[].flags",
    "rules[].useFlags",
    "rules[].replace",
    "rules[].enabled",
    "rules[].extras",
)

#: Risu ``type`` -> canonical phase
TYPE_TO_PHASE = {
    "editinput": "input",
    "editoutput": "output",
    "editprocess": "request",
    "editrequest": "request",
    "editdisplay": "display",
}
#: canonical phase -> the type Risu writes today
PHASE_TO_TYPE = {
    "input": "editinput",
    "output": "editoutput",
    "request": "editprocess",
    "display": "editdisplay",
}
DISABLED = "disabled"
MAPPED = ("comment", "in", "out", "type", "ableFlag", "flag")


def row_to_rule(row: Any, i: int, at: str, warnings: list[str]) -> dict[str, Any]:
    ctx = MapContext(at, warnings, (i,))
    if not isinstance(row, dict):
        raise wrong(ctx.path, "an object", row)
    rtype = row.get("type")
    if rtype is not None and not isinstance(rtype, str):
        raise wrong(ctx.at("type"), "a string", rtype)
    phases: list[str] = []
    enabled = row.get("disabled") is not True
    if rtype == DISABLED:
        enabled = False
    elif rtype:
        phases = [TYPE_TO_PHASE.get(rtype, rtype)]
    flag = row.get("flag")
    rule: dict[str, Any] = {
        "id": str(i),
        "label": ctx.text(row.get("comment"), ("comment",), ""),
        "find": ctx.text(row.get("in"), ("in",), ""),
        "replace": ctx.text(row.get("out"), ("out",), ""),
        "flags": ctx.text(flag, ("flag",), "") if flag is not None else "g",
        "phases": phases,
        "enabled": enabled,
        "sortOrder": i,
    }
    able = row.get("ableFlag")
    if isinstance(able, bool):
        rule["useFlags"] = able
    extras = {k: v for k, v in row.items() if k not in MAPPED}
    if extras:
        rule["extras"] = extras
    return rule


def rows_to_body(
    rows: Any, *, warnings: list[str], name: str = "", description: str | None = None, at: str = "$"
) -> dict[str, Any]:
    """The canonical regex set (as a dict) of a customscript row list (found at JSON path ``at``);
    values read by the reader's policy are noted in ``warnings``."""
    if not isinstance(rows, list):
        raise wrong(at, "an array of rows", rows)
    rules = [row_to_rule(r, i, at, warnings) for i, r in enumerate(rows)]
    body: dict[str, Any] = {"name": name, "rules": rules}
    if description is not None:
        body["description"] = description
    return body


def rule_row(r: RegexRule) -> dict[str, Any]:
    """A fresh customscript row (Risu's key order)."""
    row: dict[str, Any] = {"comment": r.label, "in": r.find, "out": r.replace}
    extras = r.extras or {}
    if not r.enabled and extras.get("disabled") is not True:
        row["type"] = DISABLED
    elif r.phases:
        row["type"] = PHASE_TO_TYPE.get(r.phases[0], r.phases[0])
    able = r.useFlags if r.useFlags is not None else r.flags not in ("g",)
    row["ableFlag"] = able
    if able or r.flags != "g":
        row["flag"] = r.flags
    for k, v in extras.items():
        if k not in row:
            row[k] = v
    return row


def body_to_rows(body: RegexSetBody) -> list[dict[str, Any]]:
    """Fresh rows in run order: Risu runs a list's scripts in array order (then ``<order N>``), so
    rules are written by ``sortOrder`` (stable: ties keep their list order)."""
    rules = body.rules
    if any(r.sortOrder != i for i, r in enumerate(rules)):
        rules = sorted(rules, key=lambda r: r.sortOrder)
    return [rule_row(r) for r in rules]


def merge_rows(raw_rows: list[Any], body: RegexSetBody, *, base: RegexSetBody | None = None) -> list[Any]:
    """The twin's rows overlaid with ``body``, rules paired by id (the row index); ``raw_rows`` itself
    when nothing changed. New rules (ids the twin lacks) are written fresh where the body puts them."""
    if base is None:
        base = RegexSetBody.model_validate(rows_to_body(raw_rows, warnings=[]))
    base_fresh = {r.id: rule_row(r) for r in base.rules}
    raw_at = {str(i): i for i in range(len(raw_rows))}
    out: list[Any] = []
    for r in body.rules:
        fresh = rule_row(r)
        i = raw_at.get(r.id)
        out.append(
            fresh if i is None or r.id not in base_fresh else merge3(raw_rows[i], base_fresh[r.id], fresh)
        )
    if len(out) == len(raw_rows) and all(a is b for a, b in zip(out, raw_rows, strict=True)):
        return raw_rows
    return out


#: the Risu codecs whose twin of a regex set can be rows, in the order they are tried
ROW_SOURCES = ("risu-regex", "risu-module", "risu-preset", "risu")


def rows_for(entity: Any, body: RegexSetBody, sources: tuple[str, ...] = ROW_SOURCES) -> list[Any]:
    """Rows for a linked regex set: the first Risu twin's rows overlaid with ``body``, else fresh."""
    rows = twin_rows(entity, sources, "regex", "regex")
    return merge_rows(rows, body) if rows is not None else body_to_rows(body)
