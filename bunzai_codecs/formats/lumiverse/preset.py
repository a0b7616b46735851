"""``lumiverse-preset``: Lumiverse's preset export wrapper.

``{type: "lumiverse_preset", schemaVersion: 2, cover_url?, preset: {id, name, description,
blocks[], promptBehavior{}, completionSettings{}, samplerOverrides{}, advancedSettings{},
promptVariables{}}}`` (docs/formats/lumiverse.md#preset).

Blocks -> ``prompts`` (in block order):

==========================  =============================================================
block key                   canonical ``PresetPrompt``
==========================  =============================================================
``id``                      ``id`` (a non-string id reads as ``block-<n>``; the twin keeps it)
``name``, ``content``       same names
``role``                    ``role`` (verbatim, ``tool`` included)
``marker``                  ``"chat_history"`` -> ``marker: true, markerSlot: chatHistory``;
                            ``""`` -> not a marker; ``"category"`` (a section header) and
                            other values -> not a marker, the value kept in ``extras.marker``
``enabled``                 ``enabled`` (only an explicit ``false`` disables)
``isLocked``                ``forbidOverrides``
``position``                ``"depth"`` -> ``placement: in_chat``; ``pre_history``/
                            ``post_history`` -> ``relative`` (the value kept in
                            ``extras.position``)
``depth``                   ``injectionDepth``
``injectionTrigger``        ``injectionTrigger`` (``null`` = all)
other keys                  ``extras``
==========================  =============================================================

Settings (camelCase -> canonical): ``samplerOverrides`` ``temperature, topP, topK, minP,
presencePenalty, frequencyPenalty, repetitionPenalty, maxTokens, contextSize`` -> ``samplers.*``
(``contextSize`` is ``maxContext``), ``streaming`` -> ``apiOptions.streamResponses``;
``promptBehavior`` ``impersonationPrompt, newChatPrompt, newGroupChatPrompt, continueNudge,
groupNudge`` -> ``systemPrompts.*``, ``sendIfEmpty`` -> ``behavior.sendIfEmpty``;
``completionSettings`` ``assistantPrefill, assistantImpersonation`` -> ``systemPrompts.*``,
``namesBehavior, continuePrefill, continuePostfix`` -> ``behavior.*``, ``enableWebSearch,
squashSystemMessages`` and ``enableFunctionCalling`` (``functionCalling``) -> ``apiOptions.*``;
``advancedSettings.seed`` -> ``generation.seed``, ``advancedSettings.customStopStrings`` ->
``samplers.stopSequences``; ``preset.name``/``description`` -> ``name``/
``description``. Twin only: ``cover_url``, ids, ``promptVariables``, ``sendInlineMedia``,
``useSystemPrompt`` and every other setting.

Detection: 1.0 for ``type: "lumiverse_preset"`` with an object ``preset`` (``schemaVersion`` is not
checked). Encode: a same-format export overlays the body's edits on the twin (blocks paired by
``id``); a fresh export writes the wrapper (``schemaVersion`` 2) with the blocks and settings
canonical can fill.
"""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core.codec import Coverage
from bunzai_codecs.entities.preset import PresetBody, PresetPrompt
from bunzai_codecs.formats._shared.tree_codec import TreeCodec
from bunzai_codecs.formats._shared.wire import MapContext
from bunzai_codecs.formats.lumiverse.detect import PRESET_TYPE as TYPE
from bunzai_codecs.formats.lumiverse.detect import is_preset_export
from bunzai_codecs.formats.sillytavern._wire import Path

CHAT_HISTORY = "chat_history"

# (settings group, wire key, canonical section, canonical field, value type)
SETTINGS: tuple[tuple[str, str, str, str, str], ...] = (
    ("samplerOverrides", "temperature", "samplers", "temperature", "num"),
    ("samplerOverrides", "topP", "samplers", "topP", "num"),
    ("samplerOverrides", "topK", "samplers", "topK", "num"),
    ("samplerOverrides", "minP", "samplers", "minP", "num"),
    ("samplerOverrides", "presencePenalty", "samplers", "presencePenalty", "num"),
    ("samplerOverrides", "frequencyPenalty", "samplers", "frequencyPenalty", "num"),
    ("samplerOverrides", "repetitionPenalty", "samplers", "repetitionPenalty", "num"),
    ("samplerOverrides", "maxTokens", "samplers", "maxTokens", "num"),
    ("samplerOverrides", "contextSize", "samplers", "maxContext", "num"),
    ("samplerOverrides", "streaming", "apiOptions", "streamResponses", "bool"),
    ("promptBehavior", "impersonationPrompt", "systemPrompts", "impersonation", "str"),
    ("promptBehavior", "newChatPrompt", "systemPrompts", "newChat", "str"),
    ("promptBehavior", "newGroupChatPrompt", "systemPrompts", "newGroupChat", "str"),
    ("promptBehavior", "continueNudge", "systemPrompts", "continueNudge", "str"),
    ("promptBehavior", "groupNudge", "systemPrompts", "groupNudge", "str"),
    ("promptBehavior", "sendIfEmpty", "behavior", "sendIfEmpty", "str"),
    ("completionSettings", "assistantPrefill", "systemPrompts", "assistantPrefill", "str"),
    ("completionSettings", "assistantImpersonation", "systemPrompts", "assistantImpersonation", "str"),
    ("completionSettings", "namesBehavior", "behavior", "namesBehavior", "num"),
    ("completionSettings", "continuePrefill", "behavior", "continuePrefill", "bool"),
    ("completionSettings", "continuePostfix", "behavior", "continuePostfix", "str"),
    ("completionSettings", "enableWebSearch", "apiOptions", "enableWebSearch", "bool"),
    ("completionSettings", "squashSystemMessages", "apiOptions", "squashSystemMessages", "bool"),
    ("completionSettings", "enableFunctionCalling", "apiOptions", "functionCalling", "bool"),
    ("advancedSettings", "seed", "generation", "seed", "num"),
    ("advancedSettings", "customStopStrings", "samplers", "stopSequences", "strs"),
)
GROUPS = ("promptBehavior", "completionSettings", "samplerOverrides", "advancedSettings")
_BLOCK_KEYS = frozenset(
    {
        "id",
        "name",
        "role",
        "marker",
        "content",
        "enabled",
        "isLocked",
        "depth",
        "position",
        "injectionTrigger",
    }
)


def block_to_prompt(b: Any, i: int, r: MapContext, at: Path) -> dict[str, Any]:
    b = r.obj(b, at, "a block object")
    bid = b.get("id")
    out: dict[str, Any] = {
        "id": bid if isinstance(bid, str) else f"block-{i}",
        "name": r.text(b.get("name"), (*at, "name"), ""),
        "content": r.text(b.get("content"), (*at, "content"), ""),
        "role": r.text(b.get("role"), (*at, "role")),
        "enabled": b.get("enabled") is not False,
    }
    extras = {k: v for k, v in b.items() if k not in _BLOCK_KEYS}
    marker = b.get("marker")
    if marker == CHAT_HISTORY:
        out["marker"] = True
        out["markerSlot"] = "chatHistory"
    elif marker not in (None, ""):
        extras["marker"] = marker
    locked = r.boolean(b.get("isLocked"), (*at, "isLocked"), None)
    if locked is not None:
        out["forbidOverrides"] = locked
    pos = b.get("position")
    if pos == "depth":
        out["placement"] = "in_chat"
    elif pos is not None:
        extras["position"] = pos
    depth = r.num(b.get("depth"), (*at, "depth"))
    if depth is not None:
        out["injectionDepth"] = depth
    trig = b.get("injectionTrigger")
    if trig is not None:
        out["injectionTrigger"] = r.str_list(trig, (*at, "injectionTrigger"))
    if extras:
        out["extras"] = extras
    return out


def export_to_body(tree: Any, r: MapContext) -> dict[str, Any]:
    top = r.obj(tree, (), "a Lumiverse preset export object")
    p = r.obj(top.get("preset"), ("preset",))
    body: dict[str, Any] = {
        "name": r.text(p.get("name"), ("preset", "name"), ""),
        "description": r.text(p.get("description"), ("preset", "description")),
    }
    blocks = p.get("blocks")
    if blocks is not None:
        body["prompts"] = [
            block_to_prompt(b, i, r, ("preset", "blocks", i))
            for i, b in enumerate(r.arr(blocks, ("preset", "blocks")))
        ]
    groups: dict[str, dict[str, Any]] = {}
    for g in GROUPS:
        v = p.get(g)
        groups[g] = r.obj(v, ("preset", g)) if v is not None else {}
    for group, key, section, name, typ in SETTINGS:
        v = groups[group].get(key)
        if v is None:
            continue
        at = ("preset", group, key)
        if typ == "strs":
            val: Any = r.str_list(v, at)
        else:
            val = r.num(v, at) if typ == "num" else r.boolean(v, at, None) if typ == "bool" else r.text(v, at)
        if val is not None:
            body.setdefault(section, {})[name] = val
    return body


def prompt_to_block(pr: PresetPrompt) -> dict[str, Any]:
    extras = dict(pr.extras or {})
    if pr.marker and pr.markerSlot == "chatHistory":
        marker: Any = CHAT_HISTORY
    else:
        marker = extras.pop("marker", "")
    if pr.placement == "in_chat":
        position: Any = "depth"
        extras.pop("position", None)
    else:
        position = extras.pop("position", "pre_history")
    out: dict[str, Any] = {
        "id": pr.id,
        "name": pr.name,
        "role": pr.role or "system",
        "marker": marker,
        "content": pr.content,
        "enabled": pr.enabled,
        "isLocked": bool(pr.forbidOverrides),
        "depth": 4 if pr.injectionDepth is None else pr.injectionDepth,
        "position": position,
        "injectionTrigger": list(pr.injectionTrigger) if pr.injectionTrigger is not None else None,
    }
    for k, v in extras.items():
        out.setdefault(k, v)
    return out


def body_to_export(body: PresetBody) -> dict[str, Any]:
    preset: dict[str, Any] = {"name": body.name, "description": body.description or ""}
    preset["blocks"] = [prompt_to_block(p) for p in body.prompts]
    groups: dict[str, dict[str, Any]] = {g: {} for g in GROUPS}
    for group, key, section, name, _ in SETTINGS:
        v = getattr(getattr(body, section), name)
        if v is not None:
            groups[group][key] = list(v) if isinstance(v, list) else v
    preset.update(groups)
    return {"type": TYPE, "schemaVersion": 2, "preset": preset}


def BLOCK_ID(item: Any) -> Any:
    """``merge3`` list key: blocks paired by their string ``id``."""
    return item.get("id") if isinstance(item, dict) and isinstance(item.get("id"), str) else None


class LumiversePreset(TreeCodec):
    """Lumiverse preset exports (``lumiverse_preset`` wrapper)."""

    id = "lumiverse-preset"
    coverage = Coverage.of(
        "name",
        "description",
        "prompts[].id",
        "prompts[].name",
        "prompts[].content",
        "prompts[].role",
        "prompts[].enabled",
        "prompts[].placement",
        "prompts[].injectionDepth",
        "prompts[].injectionTrigger",
        "prompts[].forbidOverrides",
        "prompts[].extras.marker",
        "prompts[].extras.position",
        *(f"{section}.{name}" for _, _, section, name, _ in SETTINGS),
        notes=[
            "markers: a block's marker is `chat_history` (the chat history slot), a `category` header or"
            " nothing; a marker for any other slot (world info, persona, character description...) is"
            " written as an empty non-marker block, so marker and markerSlot are not claimed",
            "extras: Lumiverse's own `marker` and `position` values are held; another app's extras are"
            " written as block keys too, except one named like a key Lumiverse maps (a Risu cache"
            " item's `depth`), which cannot be",
            "prompt variables, cover image and the settings canonical has no field for ride in escrow",
        ],
    )

    list_key = BLOCK_ID

    read = staticmethod(export_to_body)
    write = staticmethod(body_to_export)

    def reader(self) -> MapContext:
        return MapContext(lenient=True)


__all__ = ["LumiversePreset", "body_to_export", "export_to_body", "is_preset_export"]
