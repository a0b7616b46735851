"""``lumiverse-regex``: Lumiverse regex script exports, and the module-embedded script rows.

The export file is ``{version: 1, type: "lumiverse_regex_scripts", scripts: [...]}`` (formats/
others.md §2.2); the same rows, minus account fields, sit in a Lumiverse character zip's
``lumiverse_modules.json`` ``regex_scripts[]`` (read by the ``lumiverse`` codec through this
module). One file or one module list is one canonical regex set.

=========================  ==================================================================
script key                 canonical ``RegexRule``
=========================  ==================================================================
``id``                     ``id`` (missing: the row index, not written back; repeats ``-2``...)
``name``                   ``label``
``find_regex``             ``find`` (verbatim)
``flags``                  ``flags`` (absent: none)
``replace_string``         ``replace``
``placement[]``            ``phases``: ``user_input`` input, ``ai_output`` output,
                           ``world_info`` lorebook, ``reasoning``; ``memory`` (Lumiverse-only)
                           and other strings verbatim
``target``                 ``targets``: ``prompt``, ``display``, ``response`` (verbatim: the
                           stored reply). **An array in the export file, a single string in a
                           module row** (newer modules: either); written back in the row's own
                           form
``min_depth``/``max_depth`` ``minDepth``/``maxDepth``
``trim_strings``           ``trimStrings`` (``[]`` is absent)
``run_on_edit``            ``runOnEdit``
``substitute_macros``      ``substituteFind``: ``none``, ``raw``, ``escaped``; ``after`` verbatim
``disabled``               ``enabled`` (negated)
``sort_order``             ``sortOrder`` (absent: the row index)
``description``, others    ``extras`` (``user_id``, ``script_id``, ``scope``, ``scope_id``,
                           ``folder``, ``pack_id``, ``preset_id``, ``metadata``, timestamps,
                           sealed ``actions``), written back as row keys
=========================  ==================================================================

A rule with no ``targets`` (another app's "edit the stored text") is written with ``target``
``["response"]``. The set is named after the file (its stem). Detection: 1.0 for an object with
``type: "lumiverse_regex_scripts"`` and an array ``scripts``.
"""

from __future__ import annotations

from typing import Any

import orjson

from bunzai_codecs.core.codec import Codec, Coverage, EmitContext, body_as
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.overlay import merge3
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.regex import RegexSetBody
from bunzai_codecs.formats._shared import wire
from bunzai_codecs.formats.lumiverse.detect import FILE_TYPE
from bunzai_codecs.formats.tavern import regex_rows as rx
from bunzai_codecs.formats.tavern.st_regex import RULE_PATHS

PLACEMENT_PHASES: dict[str, str] = {**rx.ST_UI_PLACEMENTS, "world_info": "lorebook", "reasoning": "reasoning"}
#: ``target`` written for a rule that edits the stored text (no canonical targets)
STORED_TARGET = "response"

#: a Lumiverse script as a rule row (``tavern/regex_rows.py``), in the key order Lumiverse writes
ROW = rx.RuleRow(
    "lumiverse",
    (
        rx.Id(omit_index="module"),
        rx.Text("name", "label"),
        rx.Text("find_regex", "find"),
        rx.Text("replace_string", "replace"),
        rx.Text("flags", "flags"),
        rx.Placement("placement", PLACEMENT_PHASES, numbers="text"),
        rx.TargetList("target", STORED_TARGET),
        rx.Number("min_depth", "minDepth"),
        rx.Number("max_depth", "maxDepth"),
        rx.Strings("trim_strings", "trimStrings"),
        rx.Flag("run_on_edit", "runOnEdit", as_bool=True),
        rx.Text("substitute_macros", "substituteFind", default=None, written="none"),
        rx.Flag("disabled", "enabled", negated=True),
        rx.Number("sort_order", "sortOrder", index=True),
        rx.Extras(),
    ),
    reads=("placement", "target", "disabled", "sort_order"),
)
MODULE = rx.Form(module=True)

#: Lumiverse script keys with no canonical home, kept in ``extras`` (docs/formats/lumiverse.md#regex-export-file-and-module-rows)
EXTRA_KEYS = (
    "description",
    "user_id",
    "script_id",
    "scope",
    "scope_id",
    "folder",
    "pack_id",
    "preset_id",
    "metadata",
    "created_at",
    "updated_at",
    "actions",
)


def scripts_to_body(scripts: Any, *, name: str = "", ctx: wire.MapContext | None = None) -> dict[str, Any]:
    """A list of Lumiverse script rows as a ``RegexSetBody`` dict."""
    return {"name": name, "rules": rx.rules_of(ROW, scripts, ctx or wire.MapContext("$"))}


def body_to_scripts(body: RegexSetBody, *, module: bool = False) -> list[dict[str, Any]]:
    """Fresh script rows; ``module`` writes the module form (a single-string ``target`` when there
    is one target, no ``id`` when it is just the row index)."""
    return rx.rows_of(ROW, body.rules, MODULE if module else rx.FRESH)


def SCRIPT_ID(item: Any) -> Any:
    """``merge3`` list key: rows paired by ``id`` (positional for module rows, which have none)."""
    return item.get("id") if isinstance(item, dict) and isinstance(item.get("id"), str) else None


def merge_scripts(raw: list[Any], body: RegexSetBody, *, module: bool) -> list[Any]:
    """The twin's rows with the body's edits applied (the twin itself when nothing changed)."""
    base = RegexSetBody.model_validate(scripts_to_body(raw))
    if base.rules == body.rules:
        return raw
    return merge3(
        raw,
        body_to_scripts(base, module=module),
        body_to_scripts(body, module=module),
        list_key=SCRIPT_ID,
    )


class LumiverseRegex(Codec):
    """Lumiverse regex script exports (``lumiverse_regex_scripts``)."""

    id = "lumiverse-regex"
    coverage = Coverage.of(
        *RULE_PATHS,
        "rules[].phases",
        "rules[].targets",
        "rules[].substituteFind",
        "rules[].minDepth",
        "rules[].maxDepth",
        "rules[].runOnEdit",
        "rules[].enabled",
        "rules[].sortOrder",
        *(f"rules[].extras.{k}" for k in EXTRA_KEYS),
        notes=[
            "the set name is not in the file: it is the file's name, so a name a file cannot be called "
            "(`:`, `/`...) or a set saved under another name (bunzai writes a linked set as "
            "`<file>.regex.json`) reads back as the file's name; no set description",
            "extras: Lumiverse's own script keys (description, scope, folder, ids, metadata, timestamps, "
            "actions) are held; another app's extras are written as script keys too, except one named "
            "like a key Lumiverse maps (a Risu row's `flags`), which cannot be",
            "phases `request`, `display` and `slash` have no Lumiverse placement and are written verbatim",
            "a rule without targets is written with target `response`",
        ],
    )

    def decode(self, s: Sniff) -> Decoded:
        tree = wire.obj(s.require_json(), "$", "a Lumiverse regex export object")
        ctx = wire.MapContext("$.scripts")
        body = scripts_to_body(tree.get("scripts"), name=wire.file_stem(s.name), ctx=ctx)
        return Decoded([self.entity(s, body, raw=tree, warnings=ctx.warnings)])

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        body = body_as(entity, RegexSetBody)
        twin = entity.twin(self.id)
        raw = twin.raw if twin else None
        if isinstance(raw, dict) and isinstance(raw.get("scripts"), list):
            scripts = merge_scripts(raw["scripts"], body, module=False)
            out: Any = raw if scripts is raw["scripts"] else {**raw, "scripts": scripts}
        else:
            out = {"version": 1, "type": FILE_TYPE, "scripts": body_to_scripts(body)}
        return orjson.dumps(out, option=orjson.OPT_INDENT_2)


__all__ = [
    "FILE_TYPE",
    "ROW",
    "LumiverseRegex",
    "body_to_scripts",
    "merge_scripts",
    "scripts_to_body",
]
