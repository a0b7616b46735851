"""sillytavern-preset: SillyTavern chat-completion presets (``OpenAI Settings/<name>.json``) and the
PromptManager's own export (``{version, type, data: {prompts, prompt_order}}``).

A preset is a flat object of ~80 settings (docs/formats/sillytavern.md#preset---presetbody). Canonical keeps the prompts,
samplers, generation and API options, utility prompts and format templates (docs/canonical-model.md#presetbody);
connection data (``*_model``, ``custom_url``, ``proxy_password``, ``reverse_proxy``...), legacy keys
and anything unknown ride in the escrow twin.

Prompt order: ``prompts`` is an unordered pool; the order SillyTavern's chat completion actually
assembles is the ``prompt_order`` slot with ``character_id`` 100001, else 100000 (else the first
slot). Canonical ``prompts`` are that order, each ``enabled`` as the order says; prompts the order
leaves out are appended with ``enabled: false``. A file with no order at all keeps its array order
and each prompt's own ``enabled`` (default on). On a same-format export the prompt pool keeps the
twin's array order and the other ``prompt_order`` slots are kept as they were.

``extensions.regex_scripts`` (preset-scoped regex) decode into a linked regex-set entity.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bunzai_codecs.core.codec import Codec, Coverage, EmitContext, body_as
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.overlay import merge3
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.preset import PresetBody, PresetPrompt
from bunzai_codecs.formats._shared.wire import MapContext, file_stem, int_text
from bunzai_codecs.formats.sillytavern import _regex_link
from bunzai_codecs.formats.sillytavern._wire import (
    Path,
    dumps,
    int_like,
    keyed_items,
)
from bunzai_codecs.formats.sillytavern.detect import MARKERS, is_prompt_export

#: the prompt order chat completion uses (the "global strategy" dummy character), then the legacy one
EFFECTIVE_ORDER_IDS = (100001, 100000)
#: the slot a fresh export writes
FRESH_ORDER_ID = 100001

#: injection_position number -> canonical placement
PLACEMENTS = {0: "relative", 1: "in_chat"}
PLACEMENT_NUMBERS = {v: k for k, v in PLACEMENTS.items()}

# (preset key, canonical section, canonical field, value type)
SCALARS: tuple[tuple[str, str, str, str], ...] = (
    ("temperature", "samplers", "temperature", "num"),
    ("frequency_penalty", "samplers", "frequencyPenalty", "num"),
    ("presence_penalty", "samplers", "presencePenalty", "num"),
    ("top_p", "samplers", "topP", "num"),
    ("top_k", "samplers", "topK", "num"),
    ("top_a", "samplers", "topA", "num"),
    ("min_p", "samplers", "minP", "num"),
    ("repetition_penalty", "samplers", "repetitionPenalty", "num"),
    ("openai_max_context", "samplers", "maxContext", "num"),
    ("openai_max_tokens", "samplers", "maxTokens", "num"),
    ("seed", "generation", "seed", "num"),
    ("n", "generation", "completions", "num"),
    ("max_context_unlocked", "generation", "maxContextUnlocked", "bool"),
    ("reasoning_effort", "apiOptions", "reasoningEffort", "str"),
    ("verbosity", "apiOptions", "verbosity", "str"),
    ("squash_system_messages", "apiOptions", "squashSystemMessages", "bool"),
    ("show_thoughts", "apiOptions", "showThoughts", "bool"),
    ("custom_prompt_post_processing", "apiOptions", "promptPostProcessing", "post"),
    ("stream_openai", "apiOptions", "streamResponses", "bool"),
    ("function_calling", "apiOptions", "functionCalling", "bool"),
    ("enable_web_search", "apiOptions", "enableWebSearch", "bool"),
    ("request_images", "apiOptions", "requestImages", "bool"),
    ("assistant_prefill", "systemPrompts", "assistantPrefill", "str"),
    ("assistant_impersonation", "systemPrompts", "assistantImpersonation", "str"),
    ("impersonation_prompt", "systemPrompts", "impersonation", "str"),
    ("new_chat_prompt", "systemPrompts", "newChat", "str"),
    ("new_group_chat_prompt", "systemPrompts", "newGroupChat", "str"),
    ("new_example_chat_prompt", "systemPrompts", "newExampleChat", "str"),
    ("continue_nudge_prompt", "systemPrompts", "continueNudge", "str"),
    ("group_nudge_prompt", "systemPrompts", "groupNudge", "str"),
    ("wi_format", "templates", "worldInfoFormat", "str"),
    ("scenario_format", "templates", "scenarioFormat", "str"),
    ("personality_format", "templates", "personalityFormat", "str"),
    ("names_behavior", "behavior", "namesBehavior", "num"),
    ("send_if_empty", "behavior", "sendIfEmpty", "str"),
    ("continue_prefill", "behavior", "continuePrefill", "bool"),
    ("continue_postfix", "behavior", "continuePostfix", "str"),
)


PRESET = "preset"
PROMPTS = "prompts"


# -- layout: what a same-format export keeps from the twin -------------------------------------------


@dataclass
class OrderLayout:
    """Where the effective prompt order lives in a tree, and the prompt pool's array order."""

    #: "slots" ([{character_id, order}]), "flat" ([{identifier, enabled}]) or "none"
    form: str = "none"
    #: the prompt_order list as it was (slots form), for the slots that are not effective
    slots: list[Any] = field(default_factory=list)
    #: index of the effective slot in ``slots`` (slots form)
    effective: int | None = None
    #: identifiers of the prompt pool, in array order
    pool: list[str] = field(default_factory=list)
    #: whether the tree had a ``prompts`` key
    has_prompts: bool = False


def _effective_slot(slots: list[Any]) -> int | None:
    for want in EFFECTIVE_ORDER_IDS:
        for i, slot in enumerate(slots):
            if isinstance(slot, dict) and str(slot.get("character_id")) == str(want):
                return i
    for i, slot in enumerate(slots):
        if isinstance(slot, dict) and isinstance(slot.get("order"), list):
            return i
    return None


# -- native -> canonical ------------------------------------------------------------------------------


def prompt_to_canonical(p: dict[str, Any], pid: str, r: MapContext, at: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"id": pid}
    out["name"] = r.text(p.get("name"), (*at, "name"), "")
    out["content"] = r.text(p.get("content"), (*at, "content"), "")
    out["role"] = r.text(p.get("role"), (*at, "role"))
    marker = r.boolean(p.get("marker"), (*at, "marker"), False)
    out["marker"] = marker
    if marker:
        out["markerSlot"] = pid
    out["systemPrompt"] = r.boolean(p.get("system_prompt"), (*at, "system_prompt"), None)
    pos = p.get("injection_position")
    n = int_like(pos)
    out["placement"] = "relative" if pos is None else PLACEMENTS.get(n, str(n)) if n is not None else str(pos)
    out["injectionDepth"] = r.num(p.get("injection_depth"), (*at, "injection_depth"))
    out["injectionOrder"] = r.num(p.get("injection_order"), (*at, "injection_order"))
    if p.get("injection_trigger") is not None:
        out["injectionTrigger"] = r.str_list(p["injection_trigger"], (*at, "injection_trigger"))
    out["forbidOverrides"] = r.boolean(p.get("forbid_overrides"), (*at, "forbid_overrides"), None)
    if "extension" in p:
        out["extras"] = {"extension": p["extension"]}
    return {k: v for k, v in out.items() if v is not None}


def read_prompts(
    prompts: Any, prompt_order: Any, r: MapContext, at: Path
) -> tuple[list[dict[str, Any]], OrderLayout]:
    """Canonical prompts (assembly order) and the layout of the native lists they came from."""
    layout = OrderLayout(has_prompts=prompts is not None)
    pool: list[tuple[str, dict[str, Any], Path]] = []
    seen: set[str] = set()
    if prompts is not None:
        for i, p in enumerate(r.arr(prompts, (*at, "prompts"))):
            pat = (*at, "prompts", i)
            p = r.obj(p, pat)
            ident = p.get("identifier")
            pid = ident if isinstance(ident, str) and ident else f"prompt-{i}"
            base, n = pid, 2
            while pid in seen:
                pid, n = f"{base}-{n}", n + 1
            seen.add(pid)
            pool.append((pid, p, pat))
    layout.pool = [pid for pid, _, _ in pool]

    order: list[Any] | None = None
    order_at: Path = (*at, "prompt_order")
    if prompt_order is not None:
        slots = r.arr(prompt_order, order_at)
        if not slots:
            layout.form = "flat" if at else "slots"  # an empty order is no order
        elif at and all(isinstance(x, dict) and "identifier" in x for x in slots):
            layout.form = "flat"  # a PromptManager export carries the order list itself
            order = slots
        else:
            layout.form = "slots"
            layout.slots = slots
            layout.effective = _effective_slot(slots)
            if layout.effective is not None:
                order_at = (*order_at, layout.effective, "order")
                order = r.arr(slots[layout.effective].get("order"), order_at)  # the slot may lack it

    by_id = {pid: (p, pat) for pid, p, pat in pool}
    out: list[dict[str, Any]] = []
    placed: set[str] = set()
    if order is not None:
        for j, item in enumerate(order):
            item = r.obj(item, (*order_at, j))
            ident = item.get("identifier")
            if not isinstance(ident, str) or ident not in by_id or ident in placed:
                continue  # SillyTavern skips an order entry with no prompt behind it
            p, pat = by_id[ident]
            c = prompt_to_canonical(p, ident, r, pat)
            c["enabled"] = r.boolean(item.get("enabled"), (*order_at, j, "enabled"), True)
            out.append(c)
            placed.add(ident)
    for pid, p, pat in pool:
        if pid in placed:
            continue
        c = prompt_to_canonical(p, pid, r, pat)
        c["enabled"] = False if order is not None else r.boolean(p.get("enabled"), (*pat, "enabled"), True)
        out.append(c)
    return out, layout


def read_scalars(top: dict[str, Any], body: dict[str, Any], r: MapContext) -> None:
    for key, section, name, typ in SCALARS:
        if key not in top:
            continue
        v = top[key]
        if typ == "num":
            val = r.num(v, (key,))
        elif typ == "bool":
            val = r.boolean(v, (key,), None)
        else:
            val = r.text(v, (key,))
            if typ == "post" and val == "":
                val = "none"
        if val is not None:
            body.setdefault(section, {})[name] = val


def preset_to_body(tree: Any, name: str, r: MapContext) -> tuple[dict[str, Any], OrderLayout]:
    top = r.obj(tree, (), "a preset object")
    body: dict[str, Any] = {"name": name}
    body["prompts"], layout = read_prompts(top.get("prompts"), top.get("prompt_order"), r, ())
    read_scalars(top, body, r)
    return body, layout


def prompt_export_to_body(tree: Any, name: str, r: MapContext) -> tuple[dict[str, Any], OrderLayout]:
    top = r.obj(tree, (), "a prompt export object")
    data = r.obj(top.get("data"), ("data",))
    prompts, layout = read_prompts(data.get("prompts"), data.get("prompt_order"), r, ("data",))
    return {"name": name, "prompts": prompts}, layout


# -- canonical -> native ------------------------------------------------------------------------------


def prompt_to_native(p: PresetPrompt) -> dict[str, Any]:
    out: dict[str, Any] = {"identifier": p.id, "name": p.name, "system_prompt": bool(p.systemPrompt)}
    if p.role is not None:
        out["role"] = p.role
    if not p.marker or p.content:
        out["content"] = p.content
    if p.marker:
        out["marker"] = True
    else:
        out["injection_position"] = (
            PLACEMENT_NUMBERS[p.placement] if p.placement in PLACEMENT_NUMBERS else _int_or_text(p.placement)
        )
    if p.injectionDepth is not None:
        out["injection_depth"] = p.injectionDepth
    if p.injectionOrder is not None:
        out["injection_order"] = p.injectionOrder
    if p.injectionTrigger is not None:
        out["injection_trigger"] = list(p.injectionTrigger)
    if p.forbidOverrides is not None:
        out["forbid_overrides"] = p.forbidOverrides
    if p.extras and "extension" in p.extras:
        out["extension"] = p.extras["extension"]
    return out


def _int_or_text(s: str) -> int | str:
    n = int_text(s)
    return s if n is None else n


def fresh_prompt_ids(prompts: list[PresetPrompt]) -> list[str]:
    """Identifiers for a fresh export: a marker from another app takes SillyTavern's slot name."""
    out: list[str] = []
    used = {p.id for p in prompts}
    for p in prompts:
        ident = p.id
        slot = p.markerSlot
        if p.marker and slot in MARKERS and slot != p.id and slot not in used:
            ident = slot
            used.add(slot)
        out.append(ident)
    return out


def write_prompts(prompts: list[PresetPrompt], layout: OrderLayout | None) -> tuple[list[Any], Any]:
    """The native prompt pool and prompt order for canonical ``prompts`` (see module docstring)."""
    natives = []
    for p in prompts:
        natives.append(prompt_to_native(p))
    if layout is None:
        for n, ident in zip(natives, fresh_prompt_ids(prompts), strict=True):
            n["identifier"] = ident
    order = [
        {"identifier": n["identifier"], "enabled": p.enabled} for n, p in zip(natives, prompts, strict=True)
    ]
    if layout is None:
        return natives, [{"character_id": FRESH_ORDER_ID, "order": order}]
    rank = {pid: i for i, pid in enumerate(layout.pool)}
    pool = sorted(natives, key=lambda n: rank.get(n["identifier"], len(rank)))
    if layout.form == "flat":
        return pool, order
    if layout.form == "slots":
        slots = list(layout.slots)
        if layout.effective is None:
            slots.append({"character_id": FRESH_ORDER_ID, "order": order})
        else:
            old = slots[layout.effective]
            slots[layout.effective] = {**old, "order": order}
        return pool, slots
    return pool, [{"character_id": FRESH_ORDER_ID, "order": order}] if prompts else None


def body_to_preset(body: PresetBody, layout: OrderLayout | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, section, name, typ in SCALARS:
        val = getattr(getattr(body, section), name)
        if val is None:
            continue
        if typ == "post" and val == "none":
            val = ""
        out[key] = val
    # a fresh preset always has its prompt lists (as SillyTavern saves one): they are what says
    # "chat-completion preset" when a preset has no prompts and few chat-completion settings
    if body.prompts or layout is None or layout.has_prompts:
        pool, order = write_prompts(body.prompts, layout)
        out["prompts"] = pool
        if order is not None:
            out["prompt_order"] = order
    return out


def body_to_prompt_export(body: PresetBody, layout: OrderLayout | None) -> dict[str, Any]:
    pool, order = write_prompts(body.prompts, layout or OrderLayout(form="flat"))
    data: dict[str, Any] = {"prompts": pool, "prompt_order": order if order is not None else []}
    return {"version": 1, "type": "full", "data": data}


# -- the codec ------------------------------------------------------------------------------------------


def preset_name(tree: Any, file_name: str) -> str:
    if file_name:
        return file_stem(file_name)
    n = tree.get("name") if isinstance(tree, dict) else None
    return n if isinstance(n, str) else ""


class SillyTavernPresetCodec(Codec):
    id = "sillytavern-preset"
    coverage = Coverage.of(
        "name",
        "prompts[].name",
        "prompts[].content",
        "prompts[].role",
        "prompts[].enabled",
        "prompts[].marker",
        "prompts[].systemPrompt",
        "prompts[].placement",
        "prompts[].injectionDepth",
        "prompts[].injectionOrder",
        "prompts[].injectionTrigger",
        "prompts[].forbidOverrides",
        "prompts[].extras.extension",
        *(f"{section}.{name}" for _, section, name, _ in SCALARS),
        notes=[
            "the preset name is the file name",
            "no prompt groups, choices, description or author; no stop sequences",
            "prompt ids are SillyTavern identifiers, and a marker's identifier is its slot: a marker from "
            "another app is written under SillyTavern's slot name (its own id is not kept), and a slot "
            "SillyTavern does not have (worldInfo, chatSummary...) reads back as the marker's identifier",
            "connection and model settings stay in escrow (never canonical)",
        ],
    )

    def decode(self, s: Sniff) -> Decoded:
        tree = s.require_json()
        r = MapContext(lenient=True)
        name = preset_name(tree, s.name)
        if isinstance(tree, dict) and is_prompt_export(tree):
            shape = PROMPTS
            body, _ = prompt_export_to_body(tree, name, r)
        else:
            shape = PRESET
            body, _ = preset_to_body(tree, name, r)
        e = self.entity(s, body, raw=tree, shape=shape, name=name)
        e.warnings.extend(r.warnings)
        out = [e]
        if shape == PRESET:
            linked = _regex_link.link_scripts(self, s, e, _regex_link.preset_scripts(tree, r), name)
            if linked is not None:
                out.append(linked)
        return Decoded(out)

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        body = body_as(entity, PresetBody)
        twin = entity.twin(self.id)
        shape = twin.shape if twin is not None else None
        if twin is not None and shape == PROMPTS:
            raw = twin.raw
            old, layout = prompt_export_to_body(raw, twin.name or "", MapContext(lenient=True))
            base = body_to_prompt_export(PresetBody.model_validate(old), layout)
            fresh = body_to_prompt_export(body, layout)
            return dumps(merge3(raw, base, fresh, list_key=keyed_items))
        raw = twin.raw if twin is not None and shape == PRESET else None
        name = (twin.name if twin is not None else None) or ""
        return dumps(
            _regex_link.preset_tree(self, entity, ctx, raw, name, preset_to_body, body_to_preset, keyed_items)
        )


__all__ = ["SillyTavernPresetCodec", "body_to_preset", "preset_to_body"]
