"""``rolecall-regex``: a RoleCall regex script file — one script, many rules.

``{id?, name?, rules: [{id, name, description, find_pattern, replace_string, placement: string[],
flags, enabled, min_depth, max_depth, run_on_edit, sort_order, trim_strings[]}, ...]}``
(docs/formats/rolecall.md#regex). One file is one canonical regex set.

==========================  ===============================================================
rule key                    canonical ``RegexRule``
==========================  ===============================================================
``id``                      ``id`` (missing: the row index; repeats get ``-2``...)
``name``                    ``label``
``find_pattern``            ``find`` (verbatim, no delimiters)
``flags``                   ``flags`` (absent: RoleCall's default ``g``)
``replace_string``          ``replace``
``placement[]``             ``phases``: ``user_input`` input, ``ai_output`` output,
                            ``display_only`` display, ``prompt_only`` request (the outgoing
                            prompt), ``lorebook``, ``reasoning``; other strings verbatim
``enabled``                 ``enabled`` (absent: on)
``min_depth``/``max_depth`` ``minDepth``/``maxDepth`` (``null`` = no bound)
``run_on_edit``             ``runOnEdit``
``sort_order``              ``sortOrder`` (absent: the row index)
``trim_strings``            ``trimStrings`` (``[]`` is absent)
``description``, others     ``extras`` (verbatim; written back as rule keys)
==========================  ===============================================================

The set's ``name`` is ``name``; the file's own ``id`` rides in the twin. Detection: 0.9 for an
object (not an array) whose ``rules`` is a non-empty array of objects each with ``find_pattern`` or
``replace_string`` (the original design's rule; RoleCall's second regex subsystem, with
``substitution``, is dead code and not claimed).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bunzai_codecs.core.codec import Coverage
from bunzai_codecs.core.overlay import by_id
from bunzai_codecs.entities.regex import RegexRule, RegexSetBody
from bunzai_codecs.formats._shared import wire
from bunzai_codecs.formats._shared.tree_codec import TreeCodec
from bunzai_codecs.formats.rolecall.detect import is_rolecall_script
from bunzai_codecs.formats.tavern.lore import map_rows, with_unique_ids
from bunzai_codecs.formats.tavern.st_regex import RULE_PATHS

#: RoleCall ``placement`` strings -> canonical phases
PLACEMENT_PHASES: dict[str, str] = {
    "user_input": "input",
    "ai_output": "output",
    "display_only": "display",
    "prompt_only": "request",
    "lorebook": "lorebook",
    "reasoning": "reasoning",
}
PHASE_PLACEMENTS: dict[str, str] = {v: k for k, v in PLACEMENT_PHASES.items()}
DEFAULT_FLAGS = "g"

#: rule keys this mapper reads (everything else goes to ``extras``)
RULE_KEYS = frozenset(
    {
        "id",
        "name",
        "find_pattern",
        "replace_string",
        "placement",
        "flags",
        "enabled",
        "min_depth",
        "max_depth",
        "run_on_edit",
        "sort_order",
        "trim_strings",
    }
)


def rule_to_body(r: Mapping[str, Any], index: int, ctx: wire.MapContext) -> dict[str, Any]:
    """One RoleCall rule as a ``RegexRule`` dict."""
    placement = r.get("placement")
    phases: list[str] = []
    if placement is not None:
        if not isinstance(placement, list):
            raise wire.wrong(ctx.at("placement"), "an array of placement names", placement)
        for i, p in enumerate(placement):
            if isinstance(p, str):
                ph = PLACEMENT_PHASES.get(p, p)
            elif isinstance(p, int | float) and not isinstance(p, bool):
                ph = wire.js_number_text(p)  # not RoleCall's spelling; kept as its digits
            else:
                raise wire.wrong(ctx.at("placement", i), "a placement name", p)
            if ph not in phases:
                phases.append(ph)
    flags = wire.str_at(r.get("flags"), ctx, "flags")
    enabled = wire.bool_at(r.get("enabled"), ctx, "enabled")
    sort_order = wire.num_at(r.get("sort_order"), ctx, "sort_order")
    extras = {k: v for k, v in r.items() if k not in RULE_KEYS}
    return {
        "id": wire.id_text(r.get("id"), index, ctx),
        "label": wire.str_at(r.get("name"), ctx, "name") or "",
        "find": wire.str_at(r.get("find_pattern"), ctx, "find_pattern") or "",
        "flags": DEFAULT_FLAGS if flags is None else flags,
        "replace": wire.str_at(r.get("replace_string"), ctx, "replace_string") or "",
        "trimStrings": wire.strs_at(r.get("trim_strings"), ctx, "trim_strings") or None,
        "phases": phases,
        "minDepth": wire.num_at(r.get("min_depth"), ctx, "min_depth"),
        "maxDepth": wire.num_at(r.get("max_depth"), ctx, "max_depth"),
        "runOnEdit": wire.bool_at(r.get("run_on_edit"), ctx, "run_on_edit"),
        "enabled": True if enabled is None else enabled,
        "sortOrder": index if sort_order is None else sort_order,
        "extras": extras or None,
    }


def script_to_body(t: Any, ctx: wire.MapContext | None = None) -> dict[str, Any]:
    """A RoleCall script file as a ``RegexSetBody`` dict."""
    ctx = ctx or wire.MapContext("$")
    if not isinstance(t, dict):
        raise wire.wrong(ctx.path, "a regex script object", t)
    out = with_unique_ids(
        map_rows(t.get("rules"), ctx, ("rules",), "an array of rules", "a rule object", rule_to_body)
    )
    return {"name": wire.str_at(t.get("name"), ctx, "name") or "", "rules": out}


def rule_to_native(rule: RegexRule) -> dict[str, Any]:
    """A fresh RoleCall rule for a canonical rule."""
    placement = [PHASE_PLACEMENTS.get(ph, ph) for ph in rule.phases]
    out: dict[str, Any] = {"id": rule.id, "name": rule.label}
    extras = rule.extras or {}
    if "description" in extras:
        out["description"] = extras["description"]
    out |= {
        "find_pattern": rule.find,
        "replace_string": rule.replace,
        "placement": placement,
        "flags": rule.flags,
        "enabled": rule.enabled,
        "min_depth": rule.minDepth,
        "max_depth": rule.maxDepth,
        "run_on_edit": bool(rule.runOnEdit),
        "sort_order": rule.sortOrder,
        "trim_strings": list(rule.trimStrings or ()),
    }
    for k, v in extras.items():
        out.setdefault(k, v)
    return out


def body_to_script(body: RegexSetBody) -> dict[str, Any]:
    """A fresh RoleCall script file for a canonical regex set."""
    out: dict[str, Any] = {}
    if body.name:
        out["name"] = body.name
    out["rules"] = [rule_to_native(r) for r in body.rules]
    return out


class RoleCallRegex(TreeCodec):
    """RoleCall regex script files (one script with its rules)."""

    id = "rolecall-regex"
    coverage = Coverage.of(
        "name",
        *RULE_PATHS,
        "rules[].phases",
        "rules[].minDepth",
        "rules[].maxDepth",
        "rules[].runOnEdit",
        "rules[].enabled",
        "rules[].sortOrder",
        "rules[].extras.description",
        notes=[
            "extras: RoleCall's own `description` is held; another app's extras are written as rule"
            " keys too, except one named like a key RoleCall maps (a Risu row's `flags`), which cannot be",
            "no targets (prompt/display copies) and no macro substitution setting; phases `display`"
            " and `request` are the `display_only` and `prompt_only` placements",
            "phase `slash` has no RoleCall placement and is written verbatim",
        ],
    )

    list_key = by_id

    read = staticmethod(script_to_body)
    write = staticmethod(body_to_script)


__all__ = ["RoleCallRegex", "body_to_script", "is_rolecall_script", "rule_to_body", "script_to_body"]
