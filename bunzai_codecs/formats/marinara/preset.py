"""marinara-preset: the ``marinara_preset`` export envelope (docs/canonical-model.md#presetbody, docs/formats/marinara.md#preset-fields).

``{type: "marinara_preset", version: 1, exportedAt, data: {preset, sections[], groups[],
choiceBlocks[]}}`` holds **raw rows**: booleans are ``"true"``/``"false"`` and ``sectionOrder``,
``groupOrder``, ``parameters``, ``defaultChoices``, ``markerConfig`` and choice ``options`` are JSON
strings. The seed scores it 0.95 (type tag, an object at ``data.preset``, an array at
``data.sections``).

Sections become prompts in ``sectionOrder`` (the canonical prompt id is the section
``identifier``); groups follow ``groupOrder``. ``parameters`` supplies samplers and API options;
on export the mapped keys are merged back into the original JSON string (a single pair of
``customThinkingTags`` is the reasoning prefix and suffix), so the keys bunzai does not map (``strictRoleFormatting``, ``customParameters``...) survive an edit. Like Marinara's
importer, a section, group or choice boolean is true only when it is ``true`` or ``"true"``: a
missing ``enabled`` is a disabled section. ``conversationPrompt``, ``gamePrompt``, variable
storage, ``isDefault`` and timestamps ride the escrow twin.
"""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core.codec import Coverage
from bunzai_codecs.core.errors import NotRecognized
from bunzai_codecs.formats._shared.wire import MapContext, first_text
from bunzai_codecs.formats.marinara import _rows
from bunzai_codecs.formats.marinara._rows import EnvelopeCodec, Path, RowSpec, Style
from bunzai_codecs.formats.marinara.detect import PRESET_TYPE as TYPE

PRESET = RowSpec.of(
    bools=("isDefault",),
    json=("sectionOrder", "groupOrder", "variableGroups", "variableValues", "parameters", "defaultChoices"),
)
SECTION = RowSpec.of(bools=("enabled", "isMarker", "wrapInXml", "forbidOverrides"), json=("markerConfig",))
GROUP = RowSpec.of(bools=("enabled",))
CHOICE = RowSpec.of(bools=("multiSelect", "randomPick"), json=("options",))

#: Marinara marker type -> canonical marker slot (ST identifiers); others are kept verbatim
SLOTS = {
    "chat_history": "chatHistory",
    "world_info_before": "worldInfoBefore",
    "world_info_after": "worldInfoAfter",
    "lorebook": "worldInfo",
    "dialogue_examples": "dialogueExamples",
    "persona": "personaDescription",
    "chat_summary": "chatSummary",
}
SLOTS_OUT = {v: k for k, v in SLOTS.items()}
PLACEMENT = {"ordered": "relative", "depth": "in_chat"}
PLACEMENT_OUT = {v: k for k, v in PLACEMENT.items()}

#: ``parameters`` key -> (body section, field, value kind)
PARAMS: dict[str, tuple[str, str, str]] = {
    "temperature": ("samplers", "temperature", "num"),
    "topP": ("samplers", "topP", "num"),
    "topK": ("samplers", "topK", "num"),
    "minP": ("samplers", "minP", "num"),
    "frequencyPenalty": ("samplers", "frequencyPenalty", "num"),
    "presencePenalty": ("samplers", "presencePenalty", "num"),
    "maxContext": ("samplers", "maxContext", "num"),
    "maxTokens": ("samplers", "maxTokens", "num"),
    "stopSequences": ("samplers", "stopSequences", "strs"),
    "useMaxContext": ("generation", "maxContextUnlocked", "bool"),
    "reasoningEffort": ("apiOptions", "reasoningEffort", "str"),
    "verbosity": ("apiOptions", "verbosity", "str"),
    "serviceTier": ("apiOptions", "serviceTier", "str"),
    "squashSystemMessages": ("apiOptions", "squashSystemMessages", "bool"),
    "showThoughts": ("apiOptions", "showThoughts", "bool"),
    "assistantPrefill": ("systemPrompts", "assistantPrefill", "str"),
}


def _truthy(row: dict[str, Any], key: str) -> bool:
    """Marinara's import rule for section/group/choice booleans: ``true`` or ``"true"`` only."""
    v = row.get(key)
    return v is True or v == "true"


def _opt_truthy(row: dict[str, Any], key: str) -> bool | None:
    return None if row.get(key) is None else _truthy(row, key)


class _Parts:
    """The four row lists of one envelope, their styles and the canonical <-> wire id maps."""

    def __init__(self, raw: Any | None) -> None:
        self.preset: dict[str, Any] = {}
        self.sections: list[Any] = []
        self.groups: list[Any] = []
        self.choices: list[Any] = []
        if raw is not None:
            t = _rows.obj(raw, (), "a preset export object")
            if t.get("type") != TYPE:
                raise NotRecognized(f'not a Marinara preset: expected type "{TYPE}"')
            data = _rows.obj(t.get("data"), ("data",), "the preset data object")
            self.preset = _rows.obj(data.get("preset"), ("data", "preset"), "the preset row")
            self.sections = _rows.arr(data.get("sections"), ("data", "sections"), "an array of sections")
            self.groups = _opt_arr(data, "groups")
            self.choices = _opt_arr(data, "choiceBlocks")
        # a fresh file's empty rows observe as the fresh style
        self.styles = {
            "preset": Style.observe([self.preset], PRESET, raw_form=True),
            "section": Style.observe(self.sections, SECTION, raw_form=True),
            "group": Style.observe(self.groups, GROUP, raw_form=True),
            "choice": Style.observe(self.choices, CHOICE, raw_form=True),
        }
        for i, r in enumerate(self.sections):
            _rows.obj(r, ("data", "sections", i), "a section row")
        for i, r in enumerate(self.groups):
            _rows.obj(r, ("data", "groups", i), "a group row")
        for i, r in enumerate(self.choices):
            _rows.obj(r, ("data", "choiceBlocks", i), "a choice block row")
        pid = self.preset.get("id")
        self.preset_id = pid if isinstance(pid, str) else None
        # canonical prompt id = identifier (else the row id); rows keep their own id and identifier
        self.prompt_ids = _rows.unique_ids(
            first_text(r, ("identifier", "id")) or f"section-{i}" for i, r in enumerate(self.sections)
        )
        self.group_ids = _rows.unique_ids(
            first_text(r, ("id",)) or f"group-{i}" for i, r in enumerate(self.groups)
        )
        self.choice_ids = _rows.unique_ids(
            first_text(r, ("id",)) or f"choice-{i}" for i, r in enumerate(self.choices)
        )
        self.section_wire = {
            cid: (
                first_text(r, ("id",)) or cid,
                r.get("identifier") if isinstance(r.get("identifier"), str) else cid,
            )
            for cid, r in zip(self.prompt_ids, self.sections, strict=True)
        }
        self.group_wire = {
            cid: first_text(r, ("id",)) or cid for cid, r in zip(self.group_ids, self.groups, strict=True)
        }
        self.choice_wire = {
            cid: first_text(r, ("id",)) or cid for cid, r in zip(self.choice_ids, self.choices, strict=True)
        }


def _opt_arr(data: dict[str, Any], key: str) -> list[Any]:
    v = data.get(key)
    return [] if v is None else _rows.arr(v, ("data", key), f"an array of {key}")


# -- native -> canonical -----------------------------------------------------------------------


def _ordered(rows: list[Any], ids: list[str], order: Any, path: Path, ctx: MapContext) -> list[int]:
    """Row indexes in the order the id list gives (unknown ids skipped), then the rest."""
    out: list[int] = []
    if order is not None:
        by_id: dict[str, int] = {}
        for i, r in enumerate(rows):
            rid = r.get("id")
            if isinstance(rid, str):
                by_id.setdefault(rid, i)
        for rid in _rows.str_list(ctx, order, path):
            at = by_id.get(rid)
            if at is not None and at not in out:
                out.append(at)
    out.extend(i for i in range(len(rows)) if i not in out)
    return out


def body_from(raw: Any, ctx: MapContext) -> dict[str, Any]:
    parts = _Parts(raw)
    p = parts.preset
    pp: Path = ("data", "preset")
    body: dict[str, Any] = {"name": _rows.text(ctx, p, "name", pp)}
    desc = _rows.opt_text(ctx, p, "description", pp)
    if desc is not None:
        body["description"] = desc
    author = _rows.opt_text(ctx, p, "author", pp)
    body["attribution"] = {"creator": author} if author is not None else {}
    order = _ordered(
        parts.sections, parts.prompt_ids, _rows.json_col(p, "sectionOrder", pp), (*pp, "sectionOrder"), ctx
    )
    body["prompts"] = [
        _prompt(parts.sections[i], parts.prompt_ids[i], ("data", "sections", i), ctx) for i in order
    ]
    gorder = _ordered(
        parts.groups, parts.group_ids, _rows.json_col(p, "groupOrder", pp), (*pp, "groupOrder"), ctx
    )
    body["groups"] = [_group(parts.groups[i], parts.group_ids[i], ("data", "groups", i), ctx) for i in gorder]
    defaults = _rows.obj(_rows.json_col(p, "defaultChoices", pp, {}), (*pp, "defaultChoices"))
    body["choices"] = [
        _choice(r, parts.choice_ids[i], ("data", "choiceBlocks", i), defaults, ctx)
        for i, r in enumerate(parts.choices)
    ]
    params = _rows.obj(_rows.json_col(p, "parameters", pp, {}), (*pp, "parameters"))
    for key, (section, name, kind) in PARAMS.items():
        v = params.get(key)
        if v is None:
            continue
        where: Path = (*pp, "parameters", key)
        if kind == "num":
            v = _rows.to_number(ctx, v, where)
        elif kind == "bool":
            v = ctx.boolean(v, where)
        elif kind == "strs":
            v = _rows.str_list(ctx, v, where)
        else:
            v = ctx.text(v, where)
        body.setdefault(section, {})[name] = v
    reasoning = thinking_tags(params.get("customThinkingTags"))
    if reasoning is not None:
        body["reasoning"] = reasoning
    wrap = _rows.opt_text(ctx, p, "wrapFormat", pp)
    if wrap is not None:
        body["behavior"] = {"wrapFormat": wrap}
    return body


def thinking_tags(v: Any) -> dict[str, str] | None:
    """One pair of custom thinking tags as the reasoning prefix and suffix (several pairs, or an odd
    shape, stay in the parameters string unread)."""
    if not (isinstance(v, list) and len(v) == 1 and isinstance(v[0], dict)):
        return None
    opening, closing = v[0].get("open"), v[0].get("close")
    if isinstance(opening, str) and isinstance(closing, str):
        return {"prefix": opening, "suffix": closing}
    return None


def _prompt(r: dict[str, Any], pid: str, path: Path, ctx: MapContext) -> dict[str, Any]:
    prompt: dict[str, Any] = {
        "id": pid,
        "name": _rows.text(ctx, r, "name", path),
        "content": _rows.text(ctx, r, "content", path),
        "enabled": _truthy(r, "enabled"),  # Marinara's importer: a missing enabled is disabled
        "marker": _truthy(r, "isMarker"),
    }
    role = _rows.text(ctx, r, "role", path)
    if role:
        prompt["role"] = role
    config = _rows.json_col(r, "markerConfig", path)
    if config is not None:
        config = _rows.obj(config, (*path, "markerConfig"))
        kind = config.get("type")
        if isinstance(kind, str) and kind:
            prompt["markerSlot"] = SLOTS.get(kind, kind)
        rest = {k: v for k, v in config.items() if k != "type"}
        if rest:
            prompt["extras"] = {"markerConfig": rest}
    placement = _rows.text(ctx, r, "injectionPosition", path, "ordered")
    prompt["placement"] = PLACEMENT.get(placement, placement)
    for key in ("injectionDepth", "injectionOrder"):
        v = _rows.number(ctx, r, key, path)
        if v is not None:
            prompt[key] = v
    for key in ("forbidOverrides", "wrapInXml"):
        b = _opt_truthy(r, key)
        if b is not None:
            prompt[key] = b
    tag = _rows.opt_text(ctx, r, "xmlTagName", path)
    if tag is not None:
        prompt["xmlTagName"] = tag
    group = r.get("groupId")
    if group is not None:
        prompt["groupId"] = _rows.text(ctx, r, "groupId", path)
    return prompt


def _group(r: dict[str, Any], gid: str, path: Path, ctx: MapContext) -> dict[str, Any]:
    g: dict[str, Any] = {"id": gid, "name": _rows.text(ctx, r, "name", path)}
    parent = r.get("parentGroupId")
    if parent is not None:
        g["parentGroupId"] = _rows.text(ctx, r, "parentGroupId", path)
    order = _rows.number(ctx, r, "order", path)
    if order is not None:
        g["order"] = order
    enabled = _opt_truthy(r, "enabled")
    if enabled is not None:
        g["enabled"] = enabled
    return g


def _choice(
    r: dict[str, Any], cid: str, path: Path, defaults: dict[str, Any], ctx: MapContext
) -> dict[str, Any]:
    key = _rows.text(ctx, r, "variableName", path)
    c: dict[str, Any] = {
        "id": cid,
        "label": _rows.text(ctx, r, "question", path),
        "type": "many" if _truthy(r, "multiSelect") else "one",
    }
    if key:
        c["key"] = key
    options = _rows.json_col(r, "options", path, [])
    c["options"] = [
        _option(o, i, (*path, "options", i), ctx)
        for i, o in enumerate(_rows.arr(options, (*path, "options")))
    ]
    d = defaults.get(key) if key else None
    if isinstance(d, str):
        c["default"] = d
    elif isinstance(d, list) and all(isinstance(x, str) for x in d):
        c["default"] = list(d)
    if r.get("separator") is not None:
        c["separator"] = _rows.text(ctx, r, "separator", path)
    rp = _opt_truthy(r, "randomPick")
    if rp is not None:
        c["randomPick"] = rp
    so = _rows.number(ctx, r, "sortOrder", path)
    if so is not None:
        c["sortOrder"] = so
    extras = {k: r[k] for k in ("displayMode", "optionSort") if r.get(k) is not None}
    if extras:
        c["extras"] = extras
    return c


def _option(o: Any, i: int, path: Path, ctx: MapContext) -> dict[str, Any]:
    o = _rows.obj(o, path, "an option object")
    opt: dict[str, Any] = {
        "id": _rows.text(ctx, o, "id", path) or str(i),
        "label": _rows.text(ctx, o, "label", path),
    }
    v = o.get("value")
    if v is not None:
        opt["value"] = _rows.text(ctx, o, "value", path)
    return opt


# -- canonical -> native -----------------------------------------------------------------------


def rows(body: dict[str, Any], parts: _Parts) -> dict[str, Any]:
    """Decoded rows for ``body``, in the columns ``parts`` (the twin, or a fresh file) carries."""
    ps = parts.styles
    prompts = body.get("prompts", [])
    sections = []
    for pr in prompts:
        rid, ident = parts.section_wire.get(pr["id"], (pr["id"], pr["id"]))
        sections.append(_section_row(pr, rid, ident, parts.preset_id, ps["section"]))
    groups = []
    for g in body.get("groups", []):
        row: dict[str, Any] = {"id": parts.group_wire.get(g["id"], g["id"])}
        if parts.preset_id is not None:
            row["presetId"] = parts.preset_id
        row["name"] = g.get("name", "")
        row["parentGroupId"] = g.get("parentGroupId")
        row["order"] = g.get("order", 100)
        row["enabled"] = g.get("enabled") is not False
        groups.append(row)
    choices = [
        _choice_row(c, parts.choice_wire.get(c["id"], c["id"]), parts.preset_id, ps["choice"])
        for c in body.get("choices", [])
    ]
    preset: dict[str, Any] = {}
    if parts.preset_id is not None:
        preset["id"] = parts.preset_id
    preset["name"] = body.get("name", "")
    preset["description"] = body.get("description") or ""
    preset["sectionOrder"] = [s["id"] for s in sections]
    preset["groupOrder"] = [g["id"] for g in groups]
    params: dict[str, Any] = {}
    for key, (section, name, _) in PARAMS.items():
        v = body.get(section, {}).get(name)
        if v is not None:
            params[key] = v
    reasoning = body.get("reasoning", {})
    if reasoning.get("prefix") is not None or reasoning.get("suffix") is not None:
        params["customThinkingTags"] = [
            {"open": reasoning.get("prefix") or "", "close": reasoning.get("suffix") or ""}
        ]
    preset["parameters"] = params
    wrap = body.get("behavior", {}).get("wrapFormat")
    if wrap is not None or ps["preset"].has("wrapFormat"):
        preset["wrapFormat"] = wrap if wrap is not None else "xml"
    preset["defaultChoices"] = {
        c["key"]: c["default"]
        for c in body.get("choices", [])
        if c.get("key") and c.get("default") is not None
    }
    preset["author"] = body.get("attribution", {}).get("creator") or ""
    return {"preset": preset, "sections": sections, "groups": groups, "choiceBlocks": choices}


def _section_row(
    pr: dict[str, Any], rid: str, ident: str, preset_id: str | None, style: Style
) -> dict[str, Any]:
    row: dict[str, Any] = {"id": rid}
    if preset_id is not None:
        row["presetId"] = preset_id
    row["identifier"] = ident
    row["name"] = pr.get("name", "")
    row["content"] = pr.get("content", "")
    row["role"] = pr.get("role") or "system"
    row["enabled"] = pr.get("enabled", True)
    row["isMarker"] = pr.get("marker", False)
    row["groupId"] = pr.get("groupId")
    slot = pr.get("markerSlot")
    rest = (pr.get("extras") or {}).get("markerConfig")
    config: dict[str, Any] | None = None
    if slot is not None or isinstance(rest, dict):
        config = {"type": SLOTS_OUT.get(slot, slot)} if slot is not None else {}
        if isinstance(rest, dict):
            config.update(rest)
    row["markerConfig"] = config
    placement = pr.get("placement", "relative")
    row["injectionPosition"] = PLACEMENT_OUT.get(placement, placement)
    row["injectionDepth"] = pr.get("injectionDepth", 0)
    row["injectionOrder"] = pr.get("injectionOrder", 100)
    if pr.get("wrapInXml") is not None or style.has("wrapInXml"):
        row["wrapInXml"] = bool(pr.get("wrapInXml"))
    if pr.get("xmlTagName") is not None or style.has("xmlTagName"):
        row["xmlTagName"] = pr.get("xmlTagName") or ""
    row["forbidOverrides"] = bool(pr.get("forbidOverrides"))
    return row


def _choice_row(c: dict[str, Any], rid: str, preset_id: str | None, style: Style) -> dict[str, Any]:
    row: dict[str, Any] = {"id": rid}
    if preset_id is not None:
        row["presetId"] = preset_id
    row["variableName"] = c.get("key") or ""
    row["question"] = c.get("label", "")
    row["options"] = [
        {
            "id": o["id"],
            "label": o.get("label", ""),
            "value": o["value"] if o.get("value") is not None else o.get("label", ""),
        }
        for o in c.get("options", [])
    ]
    row["multiSelect"] = c.get("type") == "many"
    row["separator"] = c.get("separator") if c.get("separator") is not None else ", "
    row["randomPick"] = bool(c.get("randomPick"))
    extras = c.get("extras") or {}
    for key, default in (("displayMode", "auto"), ("optionSort", "manual")):
        if key in extras or style.has(key):
            row[key] = extras.get(key, default)
    row["sortOrder"] = c.get("sortOrder", 0)
    return row


class MarinaraPresetCodec(EnvelopeCodec):
    id = "marinara-preset"
    coverage = Coverage.of(
        "name",
        "description",
        "attribution.creator",
        "prompts[].id",
        "prompts[].name",
        "prompts[].content",
        "prompts[].role",
        "prompts[].enabled",
        "prompts[].marker",
        "prompts[].markerSlot",
        "prompts[].placement",
        "prompts[].injectionDepth",
        "prompts[].injectionOrder",
        "prompts[].forbidOverrides",
        "prompts[].groupId",
        "prompts[].wrapInXml",
        "prompts[].xmlTagName",
        "prompts[].extras.markerConfig",
        "groups",
        "choices[].id",
        "choices[].key",
        "choices[].label",
        "choices[].options",
        "choices[].separator",
        "choices[].randomPick",
        "choices[].sortOrder",
        "choices[].extras.displayMode",
        "choices[].extras.optionSort",
        "samplers.temperature",
        "samplers.topP",
        "samplers.topK",
        "samplers.minP",
        "samplers.frequencyPenalty",
        "samplers.presencePenalty",
        "samplers.maxContext",
        "samplers.maxTokens",
        "samplers.stopSequences",
        "generation.maxContextUnlocked",
        "apiOptions.reasoningEffort",
        "apiOptions.verbosity",
        "apiOptions.serviceTier",
        "apiOptions.squashSystemMessages",
        "apiOptions.showThoughts",
        "systemPrompts.assistantPrefill",
        "behavior.wrapFormat",
        "reasoning.prefix",
        "reasoning.suffix",
        notes=[
            "one pair of custom thinking tags (`customThinkingTags`) is the reasoning prefix and suffix; "
            "a list of several rides the escrow twin",
            "conversationPrompt, gamePrompt, variableGroups/variableValues, isDefault, timestamps "
            "and unmapped parameters (enabledParameters, strictRoleFormatting, customParameters...) "
            "ride the escrow twin; an edit merges mapped parameters back into the original string",
            "choice types: only one and many (multiSelect); toggle and input are written as "
            "single-select, so type is not claimed",
            "a choice's default is stored in defaultChoices under its variableName: a choice without a "
            "key loses it, so default is not claimed",
            "marker slots Marinara lacks (charDescription, authorNote...) are written verbatim",
            "ST-only prompt fields (systemPrompt, injectionTrigger) and samplers (topA, "
            "repetitionPenalty, seed) have no Marinara column",
        ],
    )

    read_tree = body_from

    def fresh(self, new: dict[str, Any], exported_at: str) -> Any:
        parts = _Parts(None)
        r = rows(new, parts)
        data = {
            "preset": parts.styles["preset"].row(r["preset"]),
            "sections": [parts.styles["section"].row(x) for x in r["sections"]],
            "groups": [parts.styles["group"].row(x) for x in r["groups"]],
            "choiceBlocks": [parts.styles["choice"].row(x) for x in r["choiceBlocks"]],
        }
        return {"type": TYPE, "version": 1, "exportedAt": exported_at, "data": data}

    def overlay(self, raw: Any, new: dict[str, Any]) -> Any:
        parts = _Parts(raw)
        base_body = body_from(raw, MapContext())
        base = rows(base_body, parts)
        fresh = rows(new, parts)
        ps = parts.styles
        data = raw["data"]
        out = _rows.replace_key(
            data, "preset", _rows.merge_row(parts.preset, base["preset"], fresh["preset"], ps["preset"])
        )
        for key, raw_rows, ids, style, canon in (
            ("sections", parts.sections, parts.prompt_ids, ps["section"], "prompts"),
            ("groups", parts.groups, parts.group_ids, ps["group"], "groups"),
            ("choiceBlocks", parts.choices, parts.choice_ids, ps["choice"], "choices"),
        ):
            base_ids = [x["id"] for x in base_body[canon]]
            new_ids = [x["id"] for x in new.get(canon, [])]
            if base_ids == new_ids and base[key] == fresh[key]:
                merged: list[Any] = raw_rows
            else:
                # base rows follow sectionOrder/groupOrder; pair each with its own raw row
                by_id = dict(zip(ids, raw_rows, strict=True))
                aligned = [by_id[i] for i in base_ids]
                merged = _rows.merge_rows(aligned, base[key], base_ids, fresh[key], new_ids, style)
            if key in data or merged:
                out = _rows.replace_key(out, key, merged)
        return _rows.replace_key(raw, "data", out)
