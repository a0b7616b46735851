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
from bunzai_codecs.core.errors import NotRecognized
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.regex import RegexRule, RegexSetBody
from bunzai_codecs.formats._shared.wire import MapContext, file_stem
from bunzai_codecs.formats.marinara import _rows
from bunzai_codecs.formats.marinara._rows import MARINARA_SUFFIXES, Path, RowSpec, Style
from bunzai_codecs.formats.marinara.detect import BULK, SINGLE
from bunzai_codecs.formats.tavern import regex_rows as rx
from bunzai_codecs.formats.tavern.st_regex import RULE_PATHS

#: how the table store keeps the row's columns (raw rows: string booleans, JSON-string columns)
ROW_SPEC = RowSpec.of(
    bools=("enabled", "promptOnly"),
    json=("trimStrings", "placement", "targetCharacterIds", "targetPromptPresetIds"),
)

#: Marinara placement -> canonical phase
PHASES = rx.ST_UI_PLACEMENTS
#: canonical phases Marinara has no placement for: dropped on export (reported by coverage)
NO_PLACEMENT = frozenset({"request", "display", "slash", "lorebook", "reasoning"})

#: a Marinara script as a rule row (``tavern/regex_rows.py``), in the key order Marinara writes; a
#: row of SillyTavern's (``scriptName``) is refused, the ids are the file's (:func:`_ids`)
ROW = rx.RuleRow(
    "marinara",
    (
        rx.Id(given=True),
        rx.Text("name", "label"),
        rx.Flag("enabled", "enabled", default=True),
        rx.Text("findRegex", "find", required=True),
        rx.Text("replaceString", "replace"),
        rx.Strings("trimStrings", "trimStrings"),
        rx.Placement("placement", PHASES, dropped=NO_PLACEMENT),
        rx.Text("flags", "flags", default="gi"),
        rx.ApplyMode(),
        rx.IdList("targetCharacterIds", "characterIds", single="characterId"),
        rx.IdList("targetPromptPresetIds", "presetIds", fresh=False),
        rx.Number("order", "sortOrder", index=True),
        rx.Number("minDepth", "minDepth"),
        rx.Number("maxDepth", "maxDepth"),
        rx.Renamed("createdAt", "marinaraCreatedAt"),
        rx.Renamed("updatedAt", "marinaraUpdatedAt"),
    ),
    json=ROW_SPEC.json,
    string_bools=True,
    foreign={
        "scriptName": "this row is a SillyTavern regex script (scriptName): read it with sillytavern-regex"
    },
    reads=("findRegex", "name", "flags", "replaceString", "enabled", "order"),
)


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
    rule = rx.rule_of(ROW, r, index, ctx.child(*path))
    rule["id"] = rid
    return rule


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


def row_from_rule(rule: RegexRule, index: int, style: Style, *, with_id: bool) -> dict[str, Any]:
    """A decoded Marinara row for one canonical rule (``style`` says which optional columns the
    file carries; values are rendered later)."""
    return rx.row_of(ROW, rule, index, rx.Form(ids=with_id, columns=frozenset(style.columns)))


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
        twin = entity.twin(self.id)
        tree = self.overlay(twin.raw, body) if twin is not None else self.fresh(body)
        return orjson.dumps(tree, option=orjson.OPT_INDENT_2)

    # a fresh export is a bare array of decoded rows (what the app's bundled seed file holds):
    # unlike the client's bulk export it keeps rule ids and timestamps, and Marinara imports both
    def fresh(self, body: RegexSetBody) -> Any:
        style = Style.fresh(ROW_SPEC, raw_form=False)
        rows = [style.row(row_from_rule(r, i, style, with_id=True)) for i, r in enumerate(body.rules)]
        if rows:
            return rows
        return {"kind": BULK, "version": 1, "regexScripts": []}

    def overlay(self, raw: Any, body: RegexSetBody) -> Any:
        shape, raw_rows, _ = _shape(raw)
        base = RegexSetBody.model_validate(body_from(raw, MapContext()))
        style = Style.observe(raw_rows, ROW_SPEC, raw_form=False)
        with_id = shape == "array"
        base_rows = [row_from_rule(r, i, style, with_id=with_id) for i, r in enumerate(base.rules)]
        new_rows = [row_from_rule(r, i, style, with_id=with_id) for i, r in enumerate(body.rules)]
        if shape == "single" and len(body.rules) == 1:
            return _rows.merge_row(raw, base_rows[0], new_rows[0], style)
        if shape == "single":
            raw_rows = [{k: v for k, v in raw.items() if k not in ENVELOPE_KEYS}]
        rows = _rows.merge_rows(
            raw_rows,
            base_rows,
            [r.id for r in base.rules],
            new_rows,
            [r.id for r in body.rules],
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
