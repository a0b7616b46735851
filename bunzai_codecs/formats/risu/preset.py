"""``risu-preset``: RisuAI's botPreset as ``.risup``, ``.risupreset`` or plain JSON (docs/canonical-model.md#presetbody).

Field map (Risu -> canonical):

- ``name`` -> name; ``promptTemplate`` items -> prompts (id = index; ``text`` -> content; ``role``
  ``bot`` -> ``assistant``; ``type`` ``plain`` is a text prompt, ``jailbreak``/``cot``/``chatML`` are
  text prompts whose type rides ``extras.type``, every other type is a marker whose slot is mapped:
  chat -> chatHistory, lorebook -> worldInfo, persona -> personaDescription, description ->
  charDescription, memory -> chatSummary, authornote -> authorNote, postEverything -> postHistory,
  cache -> cachePoint; every other item key (type2, innerFormat, rangeStart...) -> extras).
  A legacy preset with no ``promptTemplate`` turns ``formatingOrder`` (sic) into prompts, with
  ``mainPrompt``/``jailbreak``/``globalNote`` as their texts.
- ``customPromptTemplateToggle`` -> choices (toggles.py).
- samplers: ``temperature``, ``frequencyPenalty``, ``PresensePenalty`` (sic) are x100 integers;
  ``top_p``/``top_k``/``min_p``/``top_a``/``repetition_penalty`` as they are; ``maxContext``,
  ``maxResponse`` -> maxTokens. ``-1000`` is Risu's "not sent" and maps to absent (and back).
- ``reasonEffort`` -1/0/1/2 -> minimal/low/medium/high; ``verbosity`` 0/1/2 -> low/medium/high and
  ``-1000`` (the slider switched off: none chosen) -> ``auto``, SillyTavern's word for the same;
  ``thinkingTokens``; ``promptSettings.assistantPrefill``.
- ``useInstructPrompt``, ``instructChatTemplate``, ``JinjaTemplate`` -> ``instruct.enabled``,
  ``instruct.chatTemplate``, ``instruct.jinjaTemplate`` (the text-completion chat template);
  ``localStopStrings`` -> ``samplers.stopSequences``.
- a prompt with id ``main`` (the system prompt) is written as a plain item of type2 ``main``.
- ``regex`` -> a linked regex set (its twin: the rows, under this codec's id).
- the ~60 other keys (connection, model, provider blocks, ``image``...) ride the twin.

Round trip: an unedited preset re-exports its original file bytes (gzip and msgpack layout are
the app's, not reproducible by zlib); an edited one is re-encoded with the overlay and written in its
own container. msgpack ``undefined`` values are restored where the body did not touch them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bunzai_codecs.core.codec import JSON_FILE, Codec, Container, Coverage, EmitContext
from bunzai_codecs.core.entity import KNOWLEDGE_REFS, CanonicalEntity, Decoded
from bunzai_codecs.core.errors import Unsupported
from bunzai_codecs.core.escrow import Twin, facet
from bunzai_codecs.core.overlay import merge3
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.preset import PresetBody, PresetPrompt
from bunzai_codecs.entities.regex import RegexSetBody
from bunzai_codecs.formats._shared.links import DROP, keep_or_drop
from bunzai_codecs.formats._shared.wire import wrong
from bunzai_codecs.formats.risu import jsformat, risup, scripts, toggles

UNSET = -1000
TEXT_TYPES = ("plain", "jailbreak", "cot", "chatML")
SLOT_OF = {
    "chat": "chatHistory",
    "lorebook": "worldInfo",
    "persona": "personaDescription",
    "description": "charDescription",
    "memory": "chatSummary",
    "authornote": "authorNote",
    "postEverything": "postHistory",
    "cache": "cachePoint",
}
TYPE_OF = {v: k for k, v in SLOT_OF.items()}
ROLE_IN = {"bot": "assistant"}
ROLE_OUT = {"assistant": "bot"}
EFFORT_IN = {-1: "minimal", 0: "low", 1: "medium", 2: "high"}
EFFORT_OUT = {v: k for k, v in EFFORT_IN.items()}
VERBOSITY_IN = {0: "low", 1: "medium", 2: "high"}
VERBOSITY_OUT = {v: k for k, v in VERBOSITY_IN.items()}
#: verbosity left to the provider (SillyTavern's "auto"): Risu's switched-off slider, ``UNSET``
AUTO = "auto"
#: x100 sampler keys: Risu key -> canonical samplers field
SCALED = {
    "temperature": "temperature",
    "frequencyPenalty": "frequencyPenalty",
    "PresensePenalty": "presencePenalty",
}
PLAIN = {
    "top_p": "topP",
    "top_k": "topK",
    "min_p": "minP",
    "top_a": "topA",
    "repetition_penalty": "repetitionPenalty",
}
#: instruct (text completion) template keys -> canonical ``instruct`` fields
INSTRUCT = {
    "useInstructPrompt": "enabled",
    "instructChatTemplate": "chatTemplate",
    "JinjaTemplate": "jinjaTemplate",
}
#: the canonical id of the system prompt (SillyTavern's main prompt)
MAIN = "main"
#: legacy formatingOrder items: order name -> (marker slot | None, text field)
LEGACY = {
    "main": (None, "mainPrompt"),
    "jailbreak": (None, "jailbreak"),
    "globalNote": (None, "globalNote"),
    "chats": ("chatHistory", None),
    "lorebook": ("worldInfo", None),
    "description": ("charDescription", None),
    "personaPrompt": ("personaDescription", None),
    "authorNote": ("authorNote", None),
    "postEverything": ("postHistory", None),
    "lastChat": ("lastChat", None),
}
#: keys Risu blanks on export (secrets, connection URLs); a fresh export writes them blank too
BLANKED = (
    "openAIKey",
    "proxyKey",
    "forceReplaceUrl",
    "forceReplaceUrl2",
    "textgenWebUIStreamURL",
    "textgenWebUIBlockingURL",
)


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _clean(x: float) -> int | float:
    """A float from unit conversion without binary noise (1.3 * 100 -> 130)."""
    r = round(x, 9)
    return int(r) if r == int(r) and abs(r) < 2**53 else r


def _prompt_in(item: Any, i: int) -> dict[str, Any]:
    p = f"$.promptTemplate[{i}]"
    if not isinstance(item, dict):
        raise wrong(p, "an object", item)
    typ = item.get("type")
    if not isinstance(typ, str):
        raise wrong(f"{p}.type", "a string", typ)
    out: dict[str, Any] = {"id": str(i)}
    name = item.get("name")
    if isinstance(name, str):
        out["name"] = name
    mapped = {"type", "name"}
    if typ in TEXT_TYPES:
        text = item.get("text")
        if text is not None and not isinstance(text, str):
            raise wrong(f"{p}.text", "a string", text)
        out["content"] = text or ""
        mapped.add("text")
    else:
        out["marker"] = True
        out["markerSlot"] = SLOT_OF.get(typ, typ)
    role = item.get("role")
    if isinstance(role, str):
        out["role"] = ROLE_IN.get(role, role)
        mapped.add("role")
    extras = {k: v for k, v in item.items() if k not in mapped}
    if typ in TEXT_TYPES and typ != "plain":
        extras = {"type": typ, **extras}
    if extras:
        out["extras"] = extras
    return out


def _legacy_prompts(tree: dict[str, Any]) -> list[dict[str, Any]]:
    order = tree.get("formatingOrder")
    if not isinstance(order, list):
        return []
    out = []
    for name in order:
        if not isinstance(name, str) or name not in LEGACY:
            continue
        slot, field = LEGACY[name]
        p: dict[str, Any] = {"id": name, "name": name}
        if slot is None:
            text = tree.get(field or "")
            p["content"] = text if isinstance(text, str) else ""
            p["role"] = "system"
        else:
            p["marker"] = True
            p["markerSlot"] = slot
        out.append(p)
    return out


def preset_body(tree: dict[str, Any]) -> dict[str, Any]:
    """The canonical preset (dict) of a botPreset tree."""
    body: dict[str, Any] = {}
    name = tree.get("name")
    body["name"] = name if isinstance(name, str) else ""
    pt = tree.get("promptTemplate")
    if isinstance(pt, list):
        body["prompts"] = [_prompt_in(item, i) for i, item in enumerate(pt)]
    elif pt is None:
        body["prompts"] = _legacy_prompts(tree)
    else:
        raise wrong("$.promptTemplate", "an array", pt)
    tog = tree.get("customPromptTemplateToggle")
    if isinstance(tog, str) and tog:
        body["choices"] = toggles.choices_of(tog)
    samplers: dict[str, Any] = {}
    for key, field in SCALED.items():
        v = tree.get(key)
        if isinstance(v, int | float) and not isinstance(v, bool) and v != UNSET:
            samplers[field] = _clean(v / 100)
    for key, field in PLAIN.items():
        v = tree.get(key)
        if _is_num(v) and v != UNSET:
            samplers[field] = v
    if _is_num(tree.get("maxContext")):
        samplers["maxContext"] = tree["maxContext"]
    if _is_num(tree.get("maxResponse")):
        samplers["maxTokens"] = tree["maxResponse"]
    body["samplers"] = samplers
    api: dict[str, Any] = {}
    effort, verbosity = tree.get("reasonEffort"), tree.get("verbosity")
    if _is_num(effort) and effort in EFFORT_IN:
        api["reasoningEffort"] = EFFORT_IN[effort]
    if _is_num(verbosity) and verbosity in VERBOSITY_IN:
        api["verbosity"] = VERBOSITY_IN[verbosity]
    elif verbosity == UNSET:  # the slider switched off: no verbosity chosen, which is "auto"
        api["verbosity"] = AUTO
    tt = tree.get("thinkingTokens")
    if _is_num(tt) and tt != UNSET:
        api["thinkingTokens"] = tt
    body["apiOptions"] = api
    stops = tree.get("localStopStrings")
    if isinstance(stops, list) and all(isinstance(x, str) for x in stops):
        samplers["stopSequences"] = list(stops)
    ps = tree.get("promptSettings")
    if isinstance(ps, dict) and isinstance(ps.get("assistantPrefill"), str):
        body["systemPrompts"] = {"assistantPrefill": ps["assistantPrefill"]}
    instruct: dict[str, Any] = {}
    for key, field in INSTRUCT.items():
        v = tree.get(key)
        if isinstance(v, bool if field == "enabled" else str):
            instruct[field] = v
    body["instruct"] = instruct
    return body


def _prompt_out(p: PresetPrompt) -> dict[str, Any]:
    extras = dict(p.extras or {})
    typ = extras.pop("type", None)
    if not isinstance(typ, str):
        typ = TYPE_OF.get(p.markerSlot or "", p.markerSlot or "plain") if p.marker else "plain"
    item: dict[str, Any] = {"type": typ}
    if typ in TEXT_TYPES:
        item["text"] = p.content
        item["role"] = ROLE_OUT.get(p.role or "system", p.role or "system")
        # the system prompt (SillyTavern's ``main``) is Risu's main prompt
        item.setdefault("type2", extras.pop("type2", "main" if p.id == MAIN else "normal"))
    elif p.role is not None:
        item["role"] = ROLE_OUT.get(p.role, p.role)
    if typ == "chat":
        item["rangeStart"] = extras.pop("rangeStart", 0)
        item["rangeEnd"] = extras.pop("rangeEnd", "end")
    if typ == "cache":
        item["depth"] = extras.pop("depth", 1)
        item.setdefault("role", "all")
    if p.name or typ == "cache":
        item["name"] = p.name
    for k, v in extras.items():
        item.setdefault(k, v)
    return item


def _is_legacy(body: PresetBody) -> bool:
    """Prompts as a legacy preset decodes them (ids and names from ``formatingOrder``): written back
    in that form; any other prompts, a system prompt named otherwise included, as a promptTemplate."""
    return bool(body.prompts) and all(p.id in LEGACY and p.name == p.id for p in body.prompts)


def to_native(body: PresetBody) -> dict[str, Any]:
    """A fresh botPreset for the body (Risu fills every other key from its template on import)."""
    t: dict[str, Any] = {"name": body.name}
    if _is_legacy(body):
        order = []
        for p in body.prompts:
            order.append(p.id)
            field = LEGACY[p.id][1]
            if field:
                t[field] = p.content
        t["formatingOrder"] = order
    else:
        t["promptTemplate"] = [_prompt_out(p) for p in body.prompts]
    s = body.samplers
    for key, field in SCALED.items():
        v = getattr(s, field)
        t[key] = UNSET if v is None else _clean(v * 100)
    if s.maxContext is not None:
        t["maxContext"] = s.maxContext
    if s.maxTokens is not None:
        t["maxResponse"] = s.maxTokens
    for key, field in PLAIN.items():
        v = getattr(s, field)
        t[key] = UNSET if v is None else v
    a = body.apiOptions
    if a.reasoningEffort in EFFORT_OUT:
        t["reasonEffort"] = EFFORT_OUT[a.reasoningEffort]
    if a.verbosity in VERBOSITY_OUT:
        t["verbosity"] = VERBOSITY_OUT[a.verbosity]
    elif a.verbosity == AUTO:
        t["verbosity"] = UNSET
    if a.thinkingTokens is not None:
        t["thinkingTokens"] = a.thinkingTokens
    if body.choices:
        t["customPromptTemplateToggle"] = toggles.toggles_of(body.choices)
    if s.stopSequences is not None:
        t["localStopStrings"] = list(s.stopSequences)
    for key, field in INSTRUCT.items():
        v = getattr(body.instruct, field)
        if v is not None:
            t[key] = v
    if body.systemPrompts.assistantPrefill is not None:
        t["promptSettings"] = {
            "assistantPrefill": body.systemPrompts.assistantPrefill,
            "postEndInnerFormat": "",
            "sendChatAsSystem": False,
            "sendName": False,
            "utilOverride": False,
        }
    return t


def _body_from(tree: dict[str, Any]) -> PresetBody:
    return PresetBody.model_validate(preset_body(tree))


@dataclass(eq=False)
class PresetTwin(Twin):
    """A Risu preset's escrow: its ``container`` (``risup``, ``risupreset``, ``json``), the file
    (``blobs.file``: its gzip is not reproducible), the outer msgpack map without the ciphertext
    (``outer``), the key the ciphertext sat under (``cipherKey``) and the values JSON cannot hold
    (``specials``: byte strings, ``undefined``... by path)."""

    outer: dict[str, Any] | None = facet(dict)
    cipher_key: str | None = facet(str, wire="cipherKey")
    specials: list[Any] | None = facet(list)


class RisuPresetCodec(Codec):
    id = "risu-preset"
    twin_type = PresetTwin
    containers = (
        Container("risup", (".risup",), "binary"),
        Container("risupreset", (".risupreset",), "binary"),
        JSON_FILE,
    )
    coverage = Coverage.of(
        "name",
        "prompts[].name",
        "prompts[].content",
        "prompts[].role",
        "prompts[].marker",
        "prompts[].markerSlot",
        "prompts[].extras",
        "choices[].key",
        "choices[].label",
        "choices[].options[].label",
        "choices[].extras.risuType",
        "samplers.temperature",
        "samplers.topP",
        "samplers.topK",
        "samplers.minP",
        "samplers.topA",
        "samplers.repetitionPenalty",
        "samplers.frequencyPenalty",
        "samplers.presencePenalty",
        "samplers.maxContext",
        "samplers.maxTokens",
        "apiOptions.verbosity",
        "apiOptions.thinkingTokens",
        "systemPrompts.assistantPrefill",
        "samplers.stopSequences",
        "instruct.enabled",
        "instruct.chatTemplate",
        "instruct.jinjaTemplate",
        notes=[
            "every prompt is enabled and placed in list order: Risu has no per-prompt switch or depth",
            "promptTemplate items have no ids: a prompt's id is its position",
            "reasoningEffort keeps minimal/low/medium/high only (reasonEffort -1..2); other efforts are "
            "not written",
            "choices are toggle lines `key=label[=type[=options]]`: a choice's id is its key, its sortOrder "
            "its line; types toggle, one (select) and input (text/textarea) only, so a multi-select choice "
            "becomes a select; options are labels whose id and value are their index; no default, "
            "separator, random pick or other extras; `=` in a label and `,` in an option split them",
            "connection, model and provider settings (about 60 keys) ride the escrow twin only, and so do the"
            " provider blocks' own samplers (`ooba`, `NAISettings`, `ainconfig`)",
            "an instruct template is a built-in chat template's name or a Jinja template: SillyTavern's "
            "sequences, context template and reasoning marks have no place",
        ],
    )

    def decode(self, s: Sniff) -> Decoded:
        escrow: dict[str, Any] = {}
        if not s.looks_like_json:
            rpacked = risup.sniff_container(s.data)
            if rpacked is None:  # neither guess shows a preset wrapper: let the full read say why
                rpacked = s.data[:2] != b"\x1f\x8b" and s.suffix != ".risupreset"
            opened = risup.open_preset(s.data, rpacked=rpacked)
            tree, specials = jsformat.jsonable(opened.preset)
            outer, _ = jsformat.jsonable(opened.outer)
            escrow = {
                "container": opened.container,
                "outer": outer,
                "cipher_key": opened.cipher_key,
                "specials": specials,
                "blobs": {"file": s.data},
            }
        else:
            j = s.require_json()
            if not isinstance(j, dict):
                raise wrong("$", "an object", j)
            tree = j
            escrow = {"container": "json"}
        body = preset_body(tree)
        entities = []
        links: list[str] = []
        rows = tree.get("regex")
        if rows is not None and not isinstance(rows, list):
            raise wrong("$.regex", "an array", rows)
        primary = self.entity(s, body, raw=tree, **escrow)
        if rows:
            notes: list[str] = []
            rx = self.entity(
                s,
                scripts.rows_to_body(rows, name=body["name"], at="$.regex", warnings=notes),
                raw=rows,
                part=("regex", "preset"),
                kind="regex",
            )
            rx.warnings.extend(notes)
            entities.append(rx)
            links.append(rx.id)
        primary.links = {KNOWLEDGE_REFS: links} if links else {}
        return Decoded([primary, *entities])

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        body = entity.body
        assert isinstance(body, PresetBody)
        twin = entity.twin(self.id)
        raw = twin.raw if twin else None
        if isinstance(raw, dict):
            tree = merge3(raw, to_native(_body_from(raw)), to_native(body))
            if isinstance(tree.get("customPromptTemplateToggle"), str) and tree is not raw:
                tree = self._toggles(raw, tree, body)
        else:
            twin = None
            tree = {**to_native(body), **dict.fromkeys(BLANKED, "")}
        tree = self._regex(entity, ctx, tree, raw if isinstance(raw, dict) else None)
        had = (twin.container or "risup") if twin is not None else "risup"
        container = ctx.options.get("container") or had
        if container not in ("risup", "risupreset", "json"):
            raise Unsupported(f"{self.id} writes risup, risupreset or json containers, not {container!r}")
        ctx.written = container
        if container != had:
            twin = None  # another container than the file's: a fresh one (the twin's tree still merged)
        blob = twin.blob("file") if twin is not None else None
        if tree is raw and blob is not None and container in ("risup", "risupreset"):
            return blob  # unedited: the app's own bytes (its gzip is not reproducible)
        if container == "json":
            return jsformat.stringify(tree, 2).encode("utf-8")
        file = twin if isinstance(twin, PresetTwin) else None
        tree = jsformat.restore(tree, (file.specials if file else None) or [])
        outer = (file.outer if file else None) or None
        key = (file.cipher_key if file else None) or "preset"
        return risup.write_preset(tree, rpacked=container != "risupreset", outer=outer, cipher_key=key)

    @staticmethod
    def _toggles(raw: dict[str, Any], tree: dict[str, Any], body: PresetBody) -> dict[str, Any]:
        """Rewrite only the edited toggle lines (layout lines survive an edit elsewhere)."""
        old = raw.get("customPromptTemplateToggle")
        if not isinstance(old, str):
            return tree
        base = _body_from(raw).choices
        merged = toggles.merge_toggles(old, base, body.choices)
        if merged == tree.get("customPromptTemplateToggle"):
            return tree
        return {**tree, "customPromptTemplateToggle": merged}

    def _regex(
        self, entity: CanonicalEntity, ctx: EmitContext, tree: dict[str, Any], raw: dict[str, Any] | None
    ) -> dict[str, Any]:
        """Re-embed the linked regex set as ``regex`` (through its twin rows when it came from here)."""
        refs = ctx.refs(entity, "regex")
        old = raw.get("regex") if raw else None
        if refs:
            rows: list[Any] = []
            for ref in refs:
                rb = ref.body
                assert isinstance(rb, RegexSetBody)
                rows += scripts.rows_for(ref, rb, (self.id, *scripts.ROW_SOURCES))
                ctx.embed(ref)
            if len(refs) == 1 and isinstance(old, list) and rows == old:
                return tree
            return {**tree, "regex": rows}
        if raw is None:
            return {**tree, "regex": []}
        if keep_or_drop(entity, ctx, "regex", old or None) is DROP:
            return {**tree, "regex": []}  # the link was removed: drop the stale copy
        return tree
