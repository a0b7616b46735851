"""sillytavern-master: the Advanced Formatting master export (``ST-formatting-<date>.json``).

SillyTavern's "Master Export" writes the templates a user picked into one object, each under its
section key: ``instruct`` (an instruct template), ``context`` (a context template), ``sysprompt`` (a
system prompt), ``preset`` (the Text Completion sampler preset, with its ``name`` added), ``reasoning``
(a reasoning template) and ``srw`` (the "Start Reply With" setting, ``{value, show}``). Its "Master
Import" reads the same object and offers each section whose keys it recognises.

Decoding yields one entity per part, linked from the primary:

- the primary is the whole bundle: its body is every part's canonical values together (the
  instruct, context and reasoning templates, the system prompt's prompts, the sampler values) plus
  ``srw.value`` as ``systemPrompts.assistantPrefill`` (the text a reply starts with), named after the
  file. A conversion of the bundle to another app's single preset carries all of it;
- each template (``instruct``, ``context``, ``sysprompt``, ``preset``, ``reasoning``) is a preset
  entity of its own, with the escrow twin of its own format (``sillytavern-instruct``...), so it
  converts, or is written beside another app's file, as that template alone.

Writing back is one file. A same-format export keeps every key of the file: each section is its
twin with, three-way merged in, the edits of its part entity (when the links resolve to it), then
the edits made to the primary's body. Sections the file has but SillyTavern would not import (keys
missing) and unknown top-level keys ride along unread. A fresh export writes a section for each part
entity linked from the preset, and for each template the preset's own body holds (a system prompt
when it holds none), in SillyTavern's order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bunzai_codecs.core.codec import Codec, Coverage, EmitContext
from bunzai_codecs.core.entity import KNOWLEDGE_REFS, CanonicalEntity, Decoded, canonical_id
from bunzai_codecs.core.overlay import merge3
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.preset import PresetBody
from bunzai_codecs.formats._shared.wire import MapContext, file_stem
from bunzai_codecs.formats.sillytavern._flat import FlatPreset
from bunzai_codecs.formats.sillytavern._wire import dumps, keyed_items
from bunzai_codecs.formats.sillytavern.detect import MASTER_SECTIONS, SRW, has_keys, is_master
from bunzai_codecs.formats.sillytavern.formatting import (
    CONTEXT,
    INSTRUCT,
    MAIN,
    POST_HISTORY,
    REASONING,
    SillyTavernContextCodec,
    SillyTavernInstructCodec,
    SillyTavernReasoningCodec,
    SillyTavernSyspromptCodec,
    find_prompt,
)
from bunzai_codecs.formats.sillytavern.samplers import TEXTGEN, SillyTavernTextgenCodec


#: "Start Reply With": not a template, a setting of the bundle
def _any_set(body: PresetBody, table: Any) -> bool:
    return any(getattr(getattr(body, k.section), k.field) is not None for k in table)


class Section:
    """One template section: its key, its codec, what SillyTavern's import checks for it, and
    whether a body holds anything for it."""

    def __init__(
        self, key: str, codec: FlatPreset, required: tuple[str, ...], holds: Callable[[PresetBody], bool]
    ) -> None:
        self.key = key
        self.codec = codec
        self.required = required
        self.holds = holds

    def valid(self, t: Any) -> bool:
        """SillyTavern's own test of the section (its ``isPossibly...Data``)."""
        return has_keys(t, *self.required)

    def read(self, sec: dict[str, Any], r: MapContext) -> tuple[dict[str, Any], Any, str]:
        """The part's body dict, layout and name (its ``name`` key)."""
        n = r.text(sec.get("name"), (self.key, "name"), "")
        body, layout = self.codec.body_of(sec, str(n), r, (self.key,))
        return body, layout, str(n)

    def tree(self, body: PresetBody, layout: Any, name: str) -> dict[str, Any]:
        """The section for ``body`` under ``name`` (the sampler preset's name is a key here)."""
        out = self.codec.tree(body.model_copy(update={"name": name}), layout)
        if "name" not in out:
            out["name"] = name
        return out


SECTIONS = (
    Section(
        "instruct",
        SillyTavernInstructCodec(),
        MASTER_SECTIONS["instruct"],
        lambda b: _any_set(b, INSTRUCT),
    ),
    Section("context", SillyTavernContextCodec(), MASTER_SECTIONS["context"], lambda b: _any_set(b, CONTEXT)),
    Section(
        "sysprompt",
        SillyTavernSyspromptCodec(),
        MASTER_SECTIONS["sysprompt"],
        lambda b: find_prompt(b, MAIN) is not None or find_prompt(b, POST_HISTORY) is not None,
    ),
    Section(
        "preset",
        SillyTavernTextgenCodec(),
        MASTER_SECTIONS["preset"],
        lambda b: _any_set(b, TEXTGEN),
    ),
    Section(
        "reasoning",
        SillyTavernReasoningCodec(),
        MASTER_SECTIONS["reasoning"],
        lambda b: _any_set(b, REASONING),
    ),
)
SECTION_KEYS = frozenset(s.key for s in SECTIONS) | {SRW}
BY_KEY = {s.key: s for s in SECTIONS}


# -- native -> canonical ------------------------------------------------------------------------------


def union(parts: dict[str, dict[str, Any]], top: dict[str, Any], name: str, r: MapContext) -> dict[str, Any]:
    """The primary's body: every part's values (sections are disjoint but for the prompts, which
    come from the system prompt, else a legacy instruct template's), plus Start Reply With."""
    body: dict[str, Any] = {"name": name}
    for key in ("instruct", "context", "preset", "reasoning", "sysprompt"):
        part = parts.get(key)
        if part is None:
            continue
        for field, value in part.items():
            if field != "name":
                body[field] = value
    srw = top.get(SRW)
    if isinstance(srw, dict) and "value" in srw:
        value = r.text(srw.get("value"), (SRW, "value"))
        if value is not None:
            body.setdefault("systemPrompts", {})["assistantPrefill"] = value
    return body


def read_master(
    tree: Any, name: str, r: MapContext
) -> tuple[dict[str, Any], dict[str, tuple[dict[str, Any], Any, str]]]:
    """The primary's body dict and, per valid section, its part ``(body dict, layout, name)``."""
    top = r.obj(tree, (), "a master export object")
    parts: dict[str, tuple[dict[str, Any], Any, str]] = {}
    for s in SECTIONS:
        sec = top.get(s.key)
        if sec is None:
            continue
        if not s.valid(sec):
            r.warn_at((s.key,), "not a section SillyTavern imports (keys missing); left in escrow")
            continue
        parts[s.key] = s.read(r.obj(sec, (s.key,)), r)
    return union({k: v[0] for k, v in parts.items()}, top, name, r), parts


# -- canonical -> native ------------------------------------------------------------------------------


def _srw(body: PresetBody) -> dict[str, Any] | None:
    v = body.systemPrompts.assistantPrefill
    return None if v is None else {"value": v}


def _part_for(s: Section, refs: list[CanonicalEntity], raw_sec: Any) -> CanonicalEntity | None:
    """The linked entity that is this section's part: the one whose twin is this very section, else
    the first with this section's format."""
    found = None
    for ref in refs:
        twin = ref.twin(s.codec.id)
        if twin is None:
            continue
        if twin.raw is raw_sec:
            return ref
        if found is None:
            found = ref
    return found


def overlay(entity: CanonicalEntity, raw: dict[str, Any], name: str, ctx: EmitContext) -> dict[str, Any]:
    """A same-format export (see the module docstring)."""
    assert isinstance(entity.body, PresetBody)
    r = MapContext(lenient=True)
    old_union, parts = read_master(raw, name, r)
    base_union = PresetBody.model_validate(old_union)
    refs = [x for x in ctx.refs(entity, "preset") if x.id != entity.id]
    out: dict[str, Any] = {}
    for key, sec in raw.items():
        s = BY_KEY.get(key)
        if s is None or key not in parts:
            out[key] = sec
            continue
        old, layout, part_name = parts[key]
        base = s.tree(PresetBody.model_validate(old), layout, part_name)
        merged: Any = sec
        ref = _part_for(s, refs, sec)
        if ref is not None and isinstance(ref.body, PresetBody):
            ctx.embed(ref)
            merged = merge3(sec, base, s.tree(ref.body, layout, ref.body.name), list_key=keyed_items)
        union_base = s.tree(base_union, layout, part_name)
        union_now = s.tree(entity.body, layout, part_name)
        out[key] = merge3(merged, union_base, union_now, list_key=keyed_items)
    _added(entity, base_union, refs, out, ctx)
    old_srw, new_srw = _srw(base_union), _srw(entity.body)
    if SRW in raw:
        out[SRW] = merge3(raw[SRW], old_srw or {}, new_srw or {})
    elif new_srw is not None and new_srw != old_srw:
        out[SRW] = {**new_srw, "show": False}
    return out


def _added(
    entity: CanonicalEntity,
    base_union: PresetBody,
    refs: list[CanonicalEntity],
    out: dict[str, Any],
    ctx: EmitContext,
) -> None:
    """Sections the twin lacks that an edit calls for: a newly linked template of a section's
    format, or a template the primary's body now holds and did not."""
    body = entity.body
    assert isinstance(body, PresetBody)
    for s in SECTIONS:
        if s.key in out:
            continue
        ref = next((x for x in refs if x.id not in ctx.embedded and x.twin(s.codec.id) is not None), None)
        if ref is not None and isinstance(ref.body, PresetBody):
            ctx.embed(ref)
            out[s.key] = _named(s.codec.native(ref, ctx, regex=False), ref.body.name)
        elif s.holds(body) and s.tree(body, None, body.name) != s.tree(base_union, None, body.name):
            out[s.key] = s.tree(body, None, body.name)


def fresh(entity: CanonicalEntity, ctx: EmitContext) -> dict[str, Any]:
    """A new master export: linked parts first, then what the preset's own body holds."""
    body = entity.body
    assert isinstance(body, PresetBody)
    refs = [x for x in ctx.refs(entity, "preset") if x.id != entity.id]
    sections: dict[str, Any] = {}
    for s in SECTIONS:
        own = entity.twin(s.codec.id)
        if own is not None:
            sections[s.key] = _named(s.codec.native(entity, ctx, regex=False), body.name)
            continue
        ref = next((x for x in refs if x.twin(s.codec.id) is not None), None)
        if ref is None:
            ref = next((x for x in refs if isinstance(x.body, PresetBody) and s.holds(x.body)), None)
        if ref is not None and isinstance(ref.body, PresetBody):
            ctx.embed(ref)
            sections[s.key] = _named(s.codec.native(ref, ctx, regex=False), ref.body.name)
        elif s.holds(body):
            sections[s.key] = s.tree(body, None, body.name)
    if not any(k in sections for k in BY_KEY):
        sections["sysprompt"] = BY_KEY["sysprompt"].tree(body, None, body.name)
    srw = _srw(body)
    if srw is not None:
        sections[SRW] = {**srw, "show": False}
    return sections


def _named(tree: Any, name: str) -> Any:
    if isinstance(tree, dict) and "name" not in tree:
        return {**tree, "name": name}
    return tree


class SillyTavernMasterCodec(Codec):
    id = "sillytavern-master"
    coverage = (
        Coverage.of("systemPrompts.assistantPrefill")
        | Coverage(SillyTavernInstructCodec.coverage.paths - {"name"})
        | Coverage(SillyTavernContextCodec.coverage.paths - {"name"})
        | Coverage(SillyTavernReasoningCodec.coverage.paths - {"name"})
        | Coverage(
            SillyTavernTextgenCodec.coverage.paths - {"name"},
            reshapes=SillyTavernTextgenCodec.coverage.reshapes,
        )
        | Coverage.of(
            notes=[
                "the bundle's name is its file name, not part of the file; each template is also a linked "
                "preset entity of its own format, named by its `name` key",
                "the system prompt section holds the `main` and `jailbreak` prompts only (as "
                "`sillytavern-sysprompt`), so no prompt path is claimed",
                "`srw.value` is the assistant prefill (SillyTavern's Start Reply With); `srw.show` rides "
                "the escrow twin",
                "what the sections' own formats leave in escrow stays in the twin here too",
                "a fresh export writes each template the body holds as a whole section: a value the body "
                "lacks is written as SillyTavern's default, as in the template's own format",
            ]
        )
    )

    def decode(self, s: Sniff) -> Decoded:
        tree = s.require_json()
        r = MapContext(lenient=True)
        name = file_stem(s.name) if s.name else ""
        body, parts = read_master(tree, name, r)
        primary = self.entity(s, body, raw=tree, name=name)
        out = [primary]
        for s_ in SECTIONS:
            if s_.key not in parts:
                continue
            pbody, _, pname = parts[s_.key]
            part = CanonicalEntity(
                kind="preset",
                id=canonical_id("preset", s.sha256, "master", s_.key),
                body=PresetBody.model_validate(pbody),
                original={s_.codec.id: s_.codec.twin_type.of(tree[s_.key], name=pname)},
            )
            out.append(part)
        if len(out) > 1:
            primary.links[KNOWLEDGE_REFS] = [e.id for e in out[1:]]
        primary.warnings.extend(r.warnings)
        return Decoded(out)

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        twin = entity.twin(self.id)
        raw = twin.raw if twin is not None else None
        if twin is not None and isinstance(raw, dict):
            return dumps(overlay(entity, raw, twin.name or "", ctx))
        return dumps(fresh(entity, ctx))


__all__ = ["SECTIONS", "SillyTavernMasterCodec", "is_master", "read_master"]
