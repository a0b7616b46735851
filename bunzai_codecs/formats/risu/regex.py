"""``risu-regex``: RisuAI regex scripts, wherever a file carries them.

Detection:

- 1.0 — the app's own export ``{"type":"regex","data":[customscript...]}`` (the only shape Risu
  imports as regex; the seed missed it, so it scores as the native shape);
- 0.85 — a bare JSON array of customscript rows (other tools write these; Risu does not import one);
- 0.8 — a ``.risum`` module, or a RisuRealm flat module JSON (``type: "risuModule"`` at the top).

A module decodes to every entity it carries: its regex set (primary) and its lorebook (linked, its
twin being the module's row list under this codec's id). Triggers, Lua/JS, toggles, background HTML,
asset table and every other key stay in the regex entity's twin (the whole module tree), and the
module's bytes (asset blocks included) ride the twin's blobs, so normalising a module drops nothing.

Export writes rows, never a repacked module: ``{"type":"regex","data":[...]}`` (or the bare array
a bare array came from). The one exception is the round trip itself: a module whose regex set and
lorebook are both unedited re-exports its original bytes.
"""

from __future__ import annotations

from typing import Any

import orjson

from bunzai_codecs.core.codec import Codec, Container, Coverage, EmitContext
from bunzai_codecs.core.entity import KNOWLEDGE_REFS, CanonicalEntity, Decoded
from bunzai_codecs.core.errors import Malformed, Unsupported
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.lorebook import LorebookBody
from bunzai_codecs.entities.regex import RegexSetBody
from bunzai_codecs.formats._shared.links import KEEP, keep_or_drop
from bunzai_codecs.formats.risu import jsformat, lore, risum, scripts

#: codecs whose twin of a regex entity is a bare customscript row list
ROW_TWINS = ("risu-preset", "risu")
_ROW_HINTS = ("type", "comment", "flag", "ableFlag", "disabled")
_FOREIGN = ("findRegex", "scriptName", "replaceString")


def envelope_rows(tree: Any) -> list[Any] | None:
    if isinstance(tree, dict) and tree.get("type") == "regex" and isinstance(tree.get("data"), list):
        return tree["data"]
    return None


def is_row_array(tree: Any) -> bool:
    return (
        isinstance(tree, list)
        and bool(tree)
        and all(
            isinstance(r, dict)
            and ("in" in r or "out" in r)
            and any(k in r for k in _ROW_HINTS)
            and not any(k in r for k in _FOREIGN)
            for r in tree
        )
    )


def is_flat_module(tree: Any) -> bool:
    return (
        isinstance(tree, dict)
        and tree.get("type") == risum.MODULE_TYPE
        and isinstance(tree.get("name"), str)
        and "module" not in tree
    )


def _module_of(raw: Any) -> dict[str, Any] | None:
    """The RisuModule object of a twin tree: ``{"module": {...}}`` (.risum) or a flat module."""
    if isinstance(raw, dict):
        if isinstance(raw.get("module"), dict) and raw.get("type") == risum.MODULE_TYPE:
            m: dict[str, Any] = raw["module"]
            return m
        if is_flat_module(raw):
            return raw
    return None


class RisuRegexCodec(Codec):
    id = "risu-regex"
    kind = "regex"
    family = "risu"
    label = "RisuAI regex scripts (export, .risum module)"
    suffixes = (".json", ".risum")
    extension = ".json"
    containers = (Container("json", (".json",), "json"), Container("risum", (".risum",), "binary"))
    coverage = Coverage.of(
        "rules[].label",
        "rules[].find",
        "rules[].flags",
        "rules[].useFlags",
        "rules[].replace",
        "rules[].enabled",
        "rules[].extras",
        notes=[
            "one phase per rule (Risu type: input, output, request, display, or an unknown type kept "
            "verbatim); a rule with several phases keeps the first, and a disabled rule has none",
            "no trim strings, targets, depth window or macro substitution in find",
            "name and description exist only in a module: an export is a regex file named after the set, "
            "whose name is the file name",
            "rows have no ids and no order field: a rule's id is its row index, and rules are written in "
            "sortOrder (run order is the array order)",
        ],
    )

    def detect(self, s: Sniff) -> float:
        if risum.looks_like_risum(s.data):
            return 0.8
        if not s.looks_like_json:
            return 0.0
        j = s.json
        if envelope_rows(j) is not None:
            return 1.0
        if is_row_array(j):
            return 0.85
        if is_flat_module(j):
            return 0.8
        return 0.0

    # -- decode ----------------------------------------------------------------------------------

    def decode(self, s: Sniff) -> Decoded:
        if s.data[:1] == bytes([risum.MAGIC]) and not s.looks_like_json:
            opened = risum.open_module(s.data)
            d = self._module(s, opened.tree, opened.module, "$.module", container="risum", style=opened.style)
            for e in d.entities:
                e.warnings.extend(opened.warnings)
            return d
        tree = s.require_json()
        rows = envelope_rows(tree)
        if rows is not None:
            body = scripts.rows_to_body(rows, name=_stem(s.name), at="$.data")
            return Decoded([self.entity(s, body, raw=tree)])
        if isinstance(tree, list):
            body = scripts.rows_to_body(tree, name=_stem(s.name), at="$")
            return Decoded([self.entity(s, body, raw=tree)])
        if is_flat_module(tree):
            risum.check_module(tree, "$")
            style = None
            return self._module(s, tree, tree, "$", container="json", style=style)
        raise Malformed('Risu regex scripts are {"type":"regex","data":[...]} or a module', path="$")

    def _module(
        self,
        s: Sniff,
        tree: dict[str, Any],
        module: dict[str, Any],
        at: str,
        *,
        container: str,
        style: str | None,
    ) -> Decoded:
        name, desc = _name_desc(module)
        body = scripts.rows_to_body(module.get("regex") or [], name=name, description=desc, at=f"{at}.regex")
        escrow: dict[str, Any] = {"container": container}
        if container == "risum":
            escrow["jsonStyle"] = style
            escrow["blobs"] = {"risum": s.data}
        primary = self.entity(s, body, raw=tree, **escrow)
        warnings = _safety(module)
        primary.warnings.extend(warnings)
        entities = [primary]
        rows = module.get("lorebook")
        if isinstance(rows, list) and rows:
            book = self.entity(
                s,
                lore.rows_to_body(rows, name=name, at=f"{at}.lorebook"),
                raw=rows,
                part=("lorebook", "module"),
                kind="lorebook",
            )
            entities.append(book)
            primary.links = {KNOWLEDGE_REFS: [book.id]}
        return Decoded(entities)

    # -- encode ----------------------------------------------------------------------------------

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        body = entity.body
        assert isinstance(body, RegexSetBody)
        twin = entity.twin(self.id)
        raw = twin.get("raw") if twin else None
        module = _module_of(raw)
        want = ctx.options.get("container")
        if want not in (None, "json", "risum"):
            raise Unsupported(f"{self.id} writes json or risum containers, not {want!r}")
        if module is not None and twin is not None:
            if want == "json" and twin.get("container") == "risum":
                # Risu's regex export: the rows (the module's lorebook is written beside it)
                rows = module.get("regex")
                merged = (
                    scripts.merge_rows(rows, body) if isinstance(rows, list) else scripts.body_to_rows(body)
                )
                return orjson.dumps({"type": "regex", "data": merged})
            out = self._encode_module(entity, body, ctx, twin, raw, module)
            if want == "risum" and out[:1] in (b"{", b"["):
                return self._fresh_module(entity, body, ctx, module)
            return out
        if want == "risum":
            return self._fresh_module(entity, body, ctx, None)
        rows = envelope_rows(raw)
        if rows is not None and isinstance(raw, dict):
            merged = scripts.merge_rows(rows, body)
            return orjson.dumps(raw if merged is rows else {**raw, "data": merged})
        if isinstance(raw, list):
            return orjson.dumps(scripts.merge_rows(raw, body))
        return orjson.dumps({"type": "regex", "data": scripts.rows_for(entity, body, ROW_TWINS)})

    def _encode_module(
        self,
        entity: CanonicalEntity,
        body: RegexSetBody,
        ctx: EmitContext,
        twin: dict[str, Any],
        raw: Any,
        module: dict[str, Any],
    ) -> bytes:
        rows = module.get("regex") or []
        merged = scripts.merge_rows(rows, body) if isinstance(rows, list) else scripts.body_to_rows(body)
        name, desc = _name_desc(module)
        base = RegexSetBody.model_validate(
            scripts.rows_to_body(rows if isinstance(rows, list) else [], name=name, description=desc)
        )
        unchanged = merged is rows and body.name == base.name and body.description == base.description
        lore_refs = ctx.refs(entity, "lorebook")
        if unchanged and self._lore_unchanged(entity, ctx, lore_refs, module):
            for ref in lore_refs:
                ctx.embed(ref)
            blob = (twin.get("blobs") or {}).get("risum")
            if twin.get("container") == "risum" and isinstance(blob, bytes):
                return blob
            if twin.get("container") == "json":
                return jsformat.stringify(raw, 2).encode("utf-8")
        # edited: the rows, never a repacked module (the lorebook is exported beside it)
        return orjson.dumps({"type": "regex", "data": merged})

    def _fresh_module(
        self, entity: CanonicalEntity, body: RegexSetBody, ctx: EmitContext, module: dict[str, Any] | None
    ) -> bytes:
        """A ``.risum`` for the set (and its linked lorebook) through the gated module writer; the
        twin's module keys (name, id, triggers...) are kept."""
        import uuid

        lore_rows: list[Any] = []
        for ref in ctx.refs(entity, "lorebook")[:1]:
            ctx.embed(ref)
            assert isinstance(ref.body, LorebookBody)
            lore_rows = lore.rows_for(ref, ref.body)
        m: dict[str, Any] = dict(module or {})
        m.setdefault("name", body.name or "Module")
        m.setdefault("description", body.description or "")
        m.setdefault("id", str(uuid.uuid5(uuid.NAMESPACE_URL, "bunzai:" + entity.id)))
        m.setdefault("trigger", [])
        m["regex"] = scripts.rows_for(entity, body, ROW_TWINS)
        m["lorebook"] = lore_rows or m.get("lorebook") or []
        return risum.encode_module({"module": m, "type": risum.MODULE_TYPE}, [])

    def _lore_unchanged(
        self, entity: CanonicalEntity, ctx: EmitContext, refs: list[CanonicalEntity], module: dict[str, Any]
    ) -> bool:
        rows = module.get("lorebook")
        had = isinstance(rows, list) and bool(rows)
        if not refs:
            # no resolvable lorebook: unchanged unless the links say it was removed
            return not had or keep_or_drop(entity, ctx, "lorebook", rows) is KEEP
        if not had or len(refs) != 1:
            return False
        ref = refs[0]
        t = ref.twin(self.id)
        if not t or t.get("raw") != rows or not isinstance(ref.body, LorebookBody):
            return False
        return lore.merge_rows(rows, ref.body) is rows  # type: ignore[arg-type]


def _name_desc(module: dict[str, Any]) -> tuple[str, str | None]:
    name = module.get("name")
    desc = module.get("description")
    return (name if isinstance(name, str) else ""), (desc if isinstance(desc, str) else None)


def _stem(name: str) -> str:
    base = name.rsplit("/", 1)[-1]
    for suf in (".json", ".risum"):
        if base.lower().endswith(suf):
            return base[: -len(suf)]
    return base


def _safety(module: dict[str, Any]) -> list[str]:
    """Notes about what the module would run in Risu (bunzai never runs any of it)."""
    out = []
    if module.get("lowLevelAccess") is True:
        out.append("module requests Risu low-level access (lowLevelAccess); kept as data, never run")
    scripts_found = [k for k in ("cjs", "lua") if isinstance(module.get(k), str) and module[k]]
    trig = module.get("trigger")
    if isinstance(trig, list) and any(
        isinstance(t, dict)
        and any(
            isinstance(e, dict) and e.get("type") in ("triggerlua", "triggercode")
            for e in t.get("effect") or []
        )
        for t in trig
    ):
        scripts_found.append("trigger scripts")
    if scripts_found:
        out.append(f"module carries executable content ({', '.join(scripts_found)}); kept as data, never run")
    return out
