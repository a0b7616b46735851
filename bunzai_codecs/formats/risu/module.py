"""``risu-module``: a RisuAI module — a ``.risum`` file, or the flat module JSON RisuRealm serves.

A module is Risu's bundle of regex scripts, lorebook rows, triggers, Lua/JS, toggles, background
HTML and assets. Detection:

- 0.8 — a ``.risum`` (byte 0 ``0x6F``, byte 1 ``0x00``, a main block that fits and RPack-decodes
  to ``{``), or a flat module JSON (``type: "risuModule"`` with a string ``name`` and no ``module``).

A module decodes to its regex set (primary, this codec's kind) and its lorebook (linked; its twin is
the module's row list under this codec's id). Triggers, Lua/JS, toggles, background HTML, the asset
table and every other key stay in the regex entity's twin (the whole module tree), and a ``.risum``'s
bytes (asset blocks included) ride the twin's blobs, so normalising a module drops nothing.

Encode always writes a module:

- unedited (regex set, name, description and lorebook as decoded): the module's own bytes;
- edited: the module tree with the edits (regex rows, lorebook rows, name, description), re-encoded
  in its own container and JSON layout (``risum.encode_module``: asset blocks and trailing bytes
  kept); a lorebook link that was removed removes the module's lorebook rows;
- from another format: a new ``.risum`` as Risu's own export writes one (2-space JSON, no asset
  blocks): ``{name, description, id, regex, lorebook, assets: []}``, the id a uuid derived from the
  entity id (Risu gives every imported module a new id anyway), the linked lorebook's rows embedded.

In bunzai 0.1.0 modules were format ``risu-regex``; an entity decoded by it carries its module twin
under that id, which this codec reads as its own (``LEGACY``). Asking to read a module as
``risu-regex`` is resolved to this codec by the registry (``registry.MOVED``) for one release.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from bunzai_codecs.core.codec import JSON_FILE, Codec, Container, Coverage, EmitContext
from bunzai_codecs.core.entity import KNOWLEDGE_REFS, CanonicalEntity, Decoded
from bunzai_codecs.core.errors import Malformed, Unsupported
from bunzai_codecs.core.escrow import Twin, facet
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.lorebook import LorebookBody
from bunzai_codecs.entities.regex import RegexSetBody
from bunzai_codecs.formats._shared.links import DROP, keep_or_drop
from bunzai_codecs.formats.risu import jsformat, lore, risum, scripts
from bunzai_codecs.formats.risu.detect import is_flat_module, looks_like_module

ID = "risu-module"
#: the id modules had before they got their own (a twin stored under it is a module twin too)
LEGACY = "risu-regex"


def module_of(raw: Any) -> dict[str, Any] | None:
    """The RisuModule object of a twin tree: ``{"module": {...}}`` (.risum) or a flat module."""
    if isinstance(raw, dict):
        if isinstance(raw.get("module"), dict) and raw.get("type") == risum.MODULE_TYPE:
            m: dict[str, Any] = raw["module"]
            return m
        if is_flat_module(raw):
            return raw
    return None


@dataclass(eq=False)
class ModuleTwin(Twin):
    """A Risu module's escrow: its ``container`` (``risum`` or ``json``), the ``.risum`` file
    (``blobs.risum``) and how its JSON block was written (``jsonStyle``)."""

    json_style: str | None = facet(str, wire="jsonStyle")


def module_twin(entity: CanonicalEntity) -> ModuleTwin | None:
    """The entity's module twin: under this codec's id, else a module tree under the legacy id."""
    for fid in (ID, LEGACY):
        t = entity.twin(fid)
        if isinstance(t, ModuleTwin) and module_of(t.raw) is not None:
            return t
    return None


class RisuModuleCodec(Codec):
    id = ID
    twin_type = ModuleTwin
    #: Risu exports a module as .risum; RisuRealm hands out the same module as flat JSON
    containers = (Container("risum", (".risum",), "binary"), JSON_FILE)
    coverage = Coverage.of(
        "name",
        "description",
        *scripts.RULE_PATHS,
        notes=[
            "a module's regex rows are Risu regex scripts: one phase per rule (Risu type), no trim "
            "strings, targets, depth window or macro substitution; a rule's id and sortOrder are its "
            "row index",
            "the module's lorebook is its linked lorebook, as Risu lorebook rows (see risu-lorebook)",
            "triggers, Lua/JS, toggles, background HTML and assets have no canonical home: they ride "
            "the module's escrow twin, so only a module bunzai read keeps them",
        ],
    )

    # -- decode ----------------------------------------------------------------------------------

    def decode(self, s: Sniff) -> Decoded:
        if s.data[:1] == bytes([risum.MAGIC]) and not s.looks_like_json:
            opened = risum.open_module(s.data)
            d = self._module(s, opened.tree, opened.module, "$.module", container="risum", style=opened.style)
            for e in d.entities:
                e.warnings.extend(opened.warnings)
            return d
        tree = s.require_json()
        if is_flat_module(tree):
            risum.check_module(tree, "$")
            return self._module(s, tree, tree, "$", container="json", style=None)
        raise Malformed('a Risu module is a .risum file or {"type":"risuModule","name":...} JSON', path="$")

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
        notes: list[str] = []
        body = scripts.rows_to_body(
            module.get("regex") or [], name=name, description=desc, at=f"{at}.regex", warnings=notes
        )
        escrow: dict[str, Any] = {"container": container}
        if container == "risum":
            escrow["json_style"] = style
            escrow["blobs"] = {"risum": s.data}
        primary = self.entity(s, body, raw=tree, **escrow)
        primary.warnings.extend(notes)
        primary.warnings.extend(_safety(module))
        entities = [primary]
        rows = module.get("lorebook")
        if isinstance(rows, list) and rows:
            notes = []
            book = self.entity(
                s,
                lore.rows_to_body(rows, name=name, at=f"{at}.lorebook", warnings=notes),
                raw=rows,
                part=("lorebook", "module"),
                kind="lorebook",
            )
            book.warnings.extend(notes)
            entities.append(book)
            primary.links = {KNOWLEDGE_REFS: [book.id]}
        return Decoded(entities)

    # -- encode ----------------------------------------------------------------------------------

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        body = entity.body
        assert isinstance(body, RegexSetBody)
        want = ctx.options.get("container")
        twin = module_twin(entity)
        if twin is None:
            return self._written(self._fresh(entity, body, ctx), None, want)
        raw = twin.raw
        module = module_of(raw)
        assert module is not None
        m = dict(module)
        rows = module.get("regex")
        rows = rows if isinstance(rows, list) else []
        merged = scripts.merge_rows(rows, body)
        if merged is not rows:
            m["regex"] = merged
        name, desc = _name_desc(module)
        if body.name != name:
            m["name"] = body.name
        if body.description != desc:
            m["description"] = body.description or ""
        lore_rows = self._lore_rows(entity, ctx, module.get("lorebook"))
        if lore_rows is not _SAME:
            if lore_rows is None:
                m.pop("lorebook", None)
            else:
                m["lorebook"] = lore_rows
        blob = twin.blob("risum")
        if twin.container == "risum" and blob is not None and want == "json":
            blocks = len(risum.open_module(blob).assets)
            if blocks:
                raise Unsupported(
                    f"this module carries {blocks} asset file(s), which only a .risum holds: "
                    "write it as .risum, not as module JSON"
                )
        if twin.container == "risum" and blob is not None and want != "json":
            if m == module:
                return blob
            opened = risum.open_module(blob)
            tree = {**raw, "module": m}
            return risum.encode_module(tree, opened.assets, twin.json_style, opened.trailing)
        if module is raw and want != "risum":
            # a flat module JSON (RisuRealm), written as Risu's JSON.stringify(x, null, 2)
            return jsformat.stringify(m, 2).encode("utf-8")
        return self._written(m, raw if module is not raw else None, want)

    @staticmethod
    def _written(m: dict[str, Any], raw: dict[str, Any] | None, want: Any) -> bytes:
        """The module ``m`` in the container asked for: a flat module JSON, else a ``.risum`` (in
        the twin's envelope ``raw`` when there is one)."""
        if want == "json":
            return jsformat.stringify({"type": risum.MODULE_TYPE, **m}, 2).encode("utf-8")
        if want != "json" and m.get("assets"):
            raise Unsupported(
                f"this module lists {len(m['assets'])} asset(s) without their bytes (module JSON does not "
                "carry them): a .risum needs them; write it as module JSON"
            )
        if raw is None:
            return risum.encode_module({"module": m, "type": risum.MODULE_TYPE}, [])
        return risum.encode_module({**raw, "module": m}, [])

    def _lore_rows(self, entity: CanonicalEntity, ctx: EmitContext, old: Any) -> Any:
        """The module's lorebook rows for the export: ``_SAME`` to leave them, ``None`` to remove
        them (the lorebook link was removed), else the rows (the linked lorebook, embedded)."""
        had = old if isinstance(old, list) and old else None
        refs = ctx.refs(entity, "lorebook")
        if not refs:
            return _SAME if keep_or_drop(entity, ctx, "lorebook", had) is not DROP else None
        ref = refs[0]  # a module holds one lorebook; any other is written beside it
        ctx.embed(ref)
        book = ref.body
        assert isinstance(book, LorebookBody)
        rows = lore.rows_for(ref, book)  # its twin's rows (this module's, when it came from one), edited
        return _SAME if rows is had or rows == (had or []) else rows

    def _fresh(self, entity: CanonicalEntity, body: RegexSetBody, ctx: EmitContext) -> dict[str, Any]:
        module: dict[str, Any] = {
            "name": body.name,
            "description": body.description or "",
            "id": str(uuid.uuid5(uuid.NAMESPACE_URL, "bunzai:" + entity.id)),
            "regex": scripts.rows_for(entity, body),
        }
        lore_rows = self._lore_rows(entity, ctx, None)
        if lore_rows is not _SAME and lore_rows:
            module["lorebook"] = lore_rows
        module["assets"] = []
        return module


#: "leave the module's rows as they are"
_SAME: Any = object()


def _name_desc(module: dict[str, Any]) -> tuple[str, str | None]:
    name = module.get("name")
    desc = module.get("description")
    return (name if isinstance(name, str) else ""), (desc if isinstance(desc, str) else None)


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


__all__ = [
    "ID",
    "LEGACY",
    "RisuModuleCodec",
    "is_flat_module",
    "looks_like_module",
    "module_of",
    "module_twin",
]
