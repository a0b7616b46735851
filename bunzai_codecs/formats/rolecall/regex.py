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

from typing import Any

from bunzai_codecs.core.codec import Coverage
from bunzai_codecs.core.overlay import by_id
from bunzai_codecs.entities.regex import RegexSetBody
from bunzai_codecs.formats._shared import wire
from bunzai_codecs.formats._shared.tree_codec import TreeCodec
from bunzai_codecs.formats.rolecall.detect import is_rolecall_script
from bunzai_codecs.formats.tavern import regex_rows as rx
from bunzai_codecs.formats.tavern.st_regex import RULE_PATHS

#: RoleCall ``placement`` strings -> canonical phases
PLACEMENT_PHASES: dict[str, str] = {
    **rx.ST_UI_PLACEMENTS,
    "display_only": "display",
    "prompt_only": "request",
    "lorebook": "lorebook",
    "reasoning": "reasoning",
}
DEFAULT_FLAGS = "g"

#: a RoleCall rule as a rule row (``tavern/regex_rows.py``), in the key order RoleCall writes
ROW = rx.RuleRow(
    "rolecall",
    (
        rx.Id(),
        rx.Text("name", "label"),
        rx.ExtraAt("description"),
        rx.Text("find_pattern", "find"),
        rx.Text("replace_string", "replace"),
        rx.Placement("placement", PLACEMENT_PHASES, numbers="digits"),
        rx.Text("flags", "flags", default=DEFAULT_FLAGS),
        rx.Flag("enabled", "enabled", default=True),
        rx.Number("min_depth", "minDepth"),
        rx.Number("max_depth", "maxDepth"),
        rx.Flag("run_on_edit", "runOnEdit", as_bool=True),
        rx.Number("sort_order", "sortOrder", index=True),
        rx.Strings("trim_strings", "trimStrings"),
        rx.Extras(),
    ),
    reads=("placement", "flags", "enabled", "sort_order"),
)


def script_to_body(t: Any, ctx: wire.MapContext | None = None) -> dict[str, Any]:
    """A RoleCall script file as a ``RegexSetBody`` dict."""
    ctx = ctx or wire.MapContext("$")
    if not isinstance(t, dict):
        raise wire.wrong(ctx.path, "a regex script object", t)
    rules = rx.rules_of(ROW, t.get("rules"), ctx, ("rules",), what="rule")
    return {"name": wire.str_at(t.get("name"), ctx, "name") or "", "rules": rules}


def body_to_script(body: RegexSetBody) -> dict[str, Any]:
    """A fresh RoleCall script file for a canonical regex set."""
    out: dict[str, Any] = {}
    if body.name:
        out["name"] = body.name
    out["rules"] = rx.rows_of(ROW, body.rules)
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


__all__ = ["ROW", "RoleCallRegex", "body_to_script", "is_rolecall_script", "script_to_body"]
