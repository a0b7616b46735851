"""marinara-regex: Marinara-Engine regex scripts (docs/canonical-model.md#regexrule, docs/formats/marinara.md#regex-fields-one-row-per-canonical-rule).

Three shapes, one rule mapping:

- a bare array of rows: ``GET /api/regex-scripts`` (raw rows: ``"true"``/``"false"``, JSON-string
  ``placement``/``trimStrings``/``targetCharacterIds``) or the bundled seed file (decoded rows);
- the client's single export ``{kind: "marinara.regex-script", ...row}`` and bulk export
  ``{kind: "marinara.regex-scripts", regexScripts: [...]}``; both decoded and without ``id``.

The firewall against SillyTavern: both dialects carry ``findRegex``/``replaceString`` and ST bids
0.9 on them, so a bare array scores 0.95 only when no row has ST's ``scriptName`` and at least one
row carries a Marinara signal (``targetCharacterIds``, ``order``, or a string placement
``ai_output``/``user_input``; ST placements are numbers). The tagged exports carry no ``id``; the
seed's id gate would reject them, so ids are only required to be strings when present.

``applyMode`` decides which copy a rule edits; when it is null, ``promptOnly`` does: true is
prompt only, false is **display only** (not both; the seed's "undefined" would lose that).
"""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core.codec import Codec, Coverage, EmitContext
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.errors import Malformed, NotRecognized
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.regex import RegexSetBody
from bunzai_codecs.formats._shared.wire import MapContext, file_stem, wrong_at
from bunzai_codecs.formats.marinara import _rows
from bunzai_codecs.formats.marinara._rows import MARINARA_SUFFIXES, Path, RowSpec, Style
from bunzai_codecs.formats.marinara.detect import BULK, SINGLE
from bunzai_codecs.formats.tavern.st_regex import RULE_PATHS

ROW = RowSpec.of(
    bools=("enabled", "promptOnly"),
    json=("trimStrings", "placement", "targetCharacterIds", "targetPromptPresetIds"),
)

#: Marinara placement -> canonical phase
PHASES = {"ai_output": "output", "user_input": "input"}
#: canonical phase -> Marinara placement
PLACEMENTS = {v: k for k, v in PHASES.items()}
#: canonical phases Marinara has no placement for: dropped on export (reported by coverage)
NO_PLACEMENT = frozenset({"request", "display", "slash", "lorebook", "reasoning"})

APPLY_TARGETS: dict[str, list[str]] = {
    "prompt": ["prompt"],
    "display": ["display"],
    "both": ["display", "prompt"],  # the order SillyTavern's reader gives both flags
}


# -- native -> canonical -----------------------------------------------------------------------


def _shape(t: Any) -> tuple[str, list[Any], Path]:
    """``(shape, rows, path of the rows)`` where shape is ``array``, ``single`` or ``bulk``."""
    if isinstance(t, list):
        return "array", t, ()
    if isinstance(t, dict):
        kind = t.get("kind")
        if kind == BULK:
            return (
                "bulk",
                _rows.arr(t.get("regexScripts"), ("regexScripts",), "an array of scripts"),
                ("regexScripts",),
            )
        if kind == SINGLE:
            return "single", [t], ()
    raise NotRecognized(
        f'not a Marinara regex file: expected an array of scripts or kind "{SINGLE}"/"{BULK}"'
    )


def _ids(rows: list[Any], shape: str) -> list[str]:
    raw = []
    for i, r in enumerate(rows):
        rid = r.get("id") if isinstance(r, dict) and shape == "array" else None
        raw.append(rid if isinstance(rid, str) and rid else str(i))
    return _rows.unique_ids(raw)


def rule_from_row(row: Any, index: int, rid: str, path: Path, ctx: MapContext) -> dict[str, Any]:
    r = _rows.obj(row, path, "a regex script object")
    if "scriptName" in r:
        raise Malformed(
            "this row is a SillyTavern regex script (scriptName): read it with sillytavern-regex",
            path=_p((*path, "scriptName")),
        )
    if not isinstance(r.get("findRegex"), str):
        raise wrong_at((*path, "findRegex"), "a string", r.get("findRegex"))
    rule: dict[str, Any] = {
        "id": rid,
        "label": _rows.text(ctx, r, "name", path),
        "find": r["findRegex"],
        "flags": _rows.text(ctx, r, "flags", path, "gi"),
        "replace": _rows.text(ctx, r, "replaceString", path),
        "enabled": _rows.flag(ctx, r, "enabled", path, True),
        "sortOrder": _rows.number(ctx, r, "order", path, index),
    }
    trim = _rows.str_list(ctx, _rows.json_col(r, "trimStrings", path, []), (*path, "trimStrings"))
    if trim:
        rule["trimStrings"] = trim
    phases: list[str] = []
    placement = _rows.arr(_rows.json_col(r, "placement", path, []), (*path, "placement"))
    for i, p in enumerate(placement):
        if not isinstance(p, str):
            # a number is SillyTavern's placement, never Marinara's
            raise wrong_at((*path, "placement", i), "a string", p)
        ph = PHASES.get(p, p)
        if ph not in phases:
            phases.append(ph)
    rule["phases"] = phases
    rule["targets"] = _targets(r, path, ctx)
    for key in ("minDepth", "maxDepth"):
        v = _rows.number(ctx, r, key, path)
        if v is not None:
            rule[key] = v
    chars = _rows.str_list(
        ctx, _rows.json_col(r, "targetCharacterIds", path, []), (*path, "targetCharacterIds")
    )
    if not chars and isinstance(r.get("characterId"), str) and r["characterId"]:
        chars = [r["characterId"]]  # the older nullable single-character column (null = global)
    if chars:
        rule["characterIds"] = chars
    presets = _rows.str_list(
        ctx, _rows.json_col(r, "targetPromptPresetIds", path, []), (*path, "targetPromptPresetIds")
    )
    if presets:
        rule["presetIds"] = presets
    extras = {}
    for wire, name in (("createdAt", "marinaraCreatedAt"), ("updatedAt", "marinaraUpdatedAt")):
        if r.get(wire) is not None:
            extras[name] = r[wire]
    if extras:
        rule["extras"] = extras
    return rule


def _targets(r: dict[str, Any], path: Path, ctx: MapContext) -> list[str]:
    mode = r.get("applyMode")
    if mode is None:
        # null applyMode is derived from the legacy promptOnly: false means display only
        return ["prompt"] if _rows.flag(ctx, r, "promptOnly", path, False) else ["display"]
    if not isinstance(mode, str):
        raise wrong_at((*path, "applyMode"), "a string or null", mode)
    return list(APPLY_TARGETS.get(mode, [mode]))


def body_from(t: Any, ctx: MapContext, name: str = "") -> dict[str, Any]:
    shape, rows, path = _shape(t)
    ids = _ids(rows, shape)
    # a single-script file's row is the file itself: its paths start at the root
    rules = [
        rule_from_row(r, i, ids[i], path if shape == "single" else (*path, i), ctx)
        for i, r in enumerate(rows)
    ]
    if shape == "single":
        name = rules[0]["label"]
    return {"name": name, "rules": rules}


# -- canonical -> native -----------------------------------------------------------------------


def apply_mode(targets: list[str] | None) -> str:
    if targets is None:
        return "both"  # no target = the text itself: Marinara's importer calls that "both"
    t = set(targets)
    if t == {"prompt"}:
        return "prompt"
    if t == {"display"}:
        return "display"
    if len(targets) == 1:
        return targets[0]
    return "both"


def row_from_rule(rule: dict[str, Any], style: Style, *, with_id: bool) -> dict[str, Any]:
    """A decoded Marinara row for one canonical rule (``style`` says which optional columns the
    file carries; values are rendered later)."""
    mode = apply_mode(rule.get("targets"))
    row: dict[str, Any] = {}
    if with_id:
        row["id"] = rule["id"]
    row["name"] = rule.get("label", "")
    row["enabled"] = rule.get("enabled", True)
    row["findRegex"] = rule.get("find", "")
    row["replaceString"] = rule.get("replace", "")
    row["trimStrings"] = list(rule.get("trimStrings") or [])
    row["placement"] = [PLACEMENTS.get(p, p) for p in rule.get("phases", []) if p not in NO_PLACEMENT]
    row["flags"] = rule.get("flags", "")
    row["promptOnly"] = mode == "prompt"
    if style.has("applyMode"):
        row["applyMode"] = mode
    chars = list(rule.get("characterIds") or [])
    if style.has("targetCharacterIds"):
        row["targetCharacterIds"] = chars
    elif style.has("characterId"):
        row["characterId"] = chars[0] if chars else None
    elif chars:
        row["targetCharacterIds"] = chars
    presets = list(rule.get("presetIds") or [])
    if presets or (style.columns and "targetPromptPresetIds" in style.columns):
        row["targetPromptPresetIds"] = presets
    row["order"] = rule.get("sortOrder", 0)
    row["minDepth"] = rule.get("minDepth")
    row["maxDepth"] = rule.get("maxDepth")
    extras = rule.get("extras") or {}
    if with_id:
        for wire, key in (("createdAt", "marinaraCreatedAt"), ("updatedAt", "marinaraUpdatedAt")):
            if key in extras:
                row[wire] = extras[key]
    return row


def _p(path: Path) -> str:
    from bunzai_codecs.core.errors import json_path

    return json_path(path)


class MarinaraRegexCodec(Codec):
    id = "marinara-regex"
    coverage = Coverage.of(
        *RULE_PATHS,
        "rules[].targets",
        "rules[].minDepth",
        "rules[].maxDepth",
        "rules[].characterIds",
        "rules[].presetIds",
        "rules[].enabled",
        "rules[].sortOrder",
        "rules[].extras.marinaraCreatedAt",
        "rules[].extras.marinaraUpdatedAt",
        notes=[
            "the set name is not in the file: it is the file's name (a single-script export: the "
            "script's name), so a name a file cannot be called (`:`, `/`...) or a set saved under "
            "another name (bunzai writes a linked set as `<file>.regex.json`) reads back as the file's "
            "name; set description and enabled have no Marinara home",
            "phases: only input and output have a Marinara placement (user_input, ai_output); display, "
            "request, slash, lorebook and reasoning are dropped, so phases are not claimed",
            "targets absent (the stored text) is written as applyMode both; applyMode null reads "
            "promptOnly (false = display only)",
            "useFlags, substituteFind, runOnEdit are not carried",
        ],
    )

    def decode(self, s: Sniff) -> Decoded:
        name = file_stem(s.name or s.uri or "", MARINARA_SUFFIXES)
        return _rows.decode_tree(self, s, lambda t, ctx: body_from(t, ctx, name))

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        import orjson

        body = entity.body
        assert isinstance(body, RegexSetBody)
        new = body.dump()
        twin = entity.twin(self.id)
        tree = self.overlay(twin.raw, new) if twin is not None else self.fresh(new)
        return orjson.dumps(tree, option=orjson.OPT_INDENT_2)

    # a fresh export is a bare array of decoded rows (what the app's bundled seed file holds):
    # unlike the client's bulk export it keeps rule ids and timestamps, and Marinara imports both
    def fresh(self, new: dict[str, Any]) -> Any:
        style = Style.fresh(ROW, raw_form=False)
        rows = [style.row(row_from_rule(r, style, with_id=True)) for r in new.get("rules", [])]
        if rows:
            return rows
        return {"kind": BULK, "version": 1, "regexScripts": []}

    def overlay(self, raw: Any, new: dict[str, Any]) -> Any:
        shape, raw_rows, _ = _shape(raw)
        base = body_from(raw, MapContext())
        style = Style.observe(raw_rows, ROW, raw_form=False)
        with_id = shape == "array"
        new_rules = new.get("rules", [])
        base_rows = [row_from_rule(r, style, with_id=with_id) for r in base["rules"]]
        new_rows = [row_from_rule(r, style, with_id=with_id) for r in new_rules]
        if shape == "single" and len(new_rules) == 1:
            return _rows.merge_row(raw, base_rows[0], new_rows[0], style)
        if shape == "single":
            raw_rows = [{k: v for k, v in raw.items() if k not in ENVELOPE_KEYS}]
        rows = _rows.merge_rows(
            raw_rows,
            base_rows,
            [r["id"] for r in base["rules"]],
            new_rows,
            [r["id"] for r in new_rules],
            style,
        )
        if shape == "array" and rows:
            return rows
        if shape == "bulk":
            return _rows.replace_key(raw, "regexScripts", rows)
        # a single-script file that now holds several rules (or none) becomes a bulk export
        env = {k: raw[k] for k in ("kind", "version", "exportedAt") if k in raw}
        return {**env, "kind": BULK, "version": env.get("version", 1), "regexScripts": rows}


#: the keys of a single-script export that belong to the file, not to the script
ENVELOPE_KEYS = frozenset({"kind", "version", "exportedAt"})
