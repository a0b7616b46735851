"""``rolecall-preset``: RoleCall presets — a SillyTavern chat-completion preset plus RoleCall's keys.

The body of the file is an ordinary ST flat preset (prompts, ``prompt_order``, samplers...), mapped
by the ``sillytavern-preset`` functions (``formats/sillytavern/preset.py``). RoleCall adds
(docs/formats/rolecall.md#preset):

- ``name`` — the display name -> ``body.name`` (the file name only when there is none);
- ``readme`` -> ``body.description``;
- ``choice_groups[]`` -> ``body.choices[]``: ``id``, ``label``, ``type`` (``one|many|toggle|input``,
  open), ``key`` (else ``variableName``) -> ``key``, ``default`` (a string or a list of strings; a
  boolean default stays in ``extras``), ``separator``, ``sortOrder``, ``options[{id, label,
  value?}]``; everything else of a group (``description``/``readme``, ``placeholder``,
  ``suggestions``, ``min``...) -> the choice's ``extras``, written back as group keys. Option
  ``description`` and ``prompts`` (the prompts an option enables) have no canonical home and ride
  in the twin;
- ``macro_engine_yaml`` (sealed, never run) and ``extensions.linkedRegexScripts`` (bundled
  RoleCall regex payloads) — escrow twin only. ``extensions.regex_scripts`` (ST's preset-scoped
  scripts) decode into a linked regex set as for ``sillytavern-preset``.

Detection: 0.95 — above ``sillytavern-preset`` (0.9) — when the object is an ST preset and has
any RoleCall fingerprint: a string ``macro_engine_yaml``, an array ``choice_groups`` or an array
``extensions.linkedRegexScripts``. A bare ``extensions.regex_scripts`` is not a fingerprint, and a
RoleCall library wrapper ``{exportedAt, type: "preset", version, data}`` is not claimed.

Encode: a same-format export overlays the body's edits on the twin (prompts paired by
``identifier``, choice groups by ``id``); a fresh export is the ST preset writer's output plus
``name``, ``readme`` (when there is a description) and ``choice_groups`` (``[]`` when there are no
choices: the fingerprint that makes the file RoleCall's).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from bunzai_codecs.core.codec import Codec, Coverage, EmitContext
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.preset import PresetBody, PresetChoice
from bunzai_codecs.formats._shared.wire import MapContext, file_stem
from bunzai_codecs.formats.rolecall.detect import is_rolecall_preset
from bunzai_codecs.formats.sillytavern import _regex_link
from bunzai_codecs.formats.sillytavern._wire import Path, dumps, keyed_items
from bunzai_codecs.formats.sillytavern.preset import (
    SillyTavernPresetCodec,
    body_to_preset,
    preset_to_body,
)
from bunzai_codecs.formats.tavern.st_regex import EMBEDDED_SCRIPTS_COVERAGE

#: choice-group keys mapped onto ``PresetChoice`` fields (the rest goes to ``extras``)
_CHOICE_KEYS = frozenset({"id", "label", "type", "key", "variableName", "options", "separator", "sortOrder"})
_OPTION_KEYS = ("id", "label", "value")


def rc_name(tree: Any, file_name: str) -> str:
    n = tree.get("name") if isinstance(tree, dict) else None
    return n if isinstance(n, str) else file_stem(file_name)


def _choice(g: Any, i: int, r: MapContext, at: Path) -> dict[str, Any]:
    g = r.obj(g, at, "a choice group object")
    gid = g.get("id")
    out: dict[str, Any] = {
        "id": gid if isinstance(gid, str) and gid else str(i),
        "label": r.text(g.get("label"), (*at, "label"), ""),
        "type": r.text(g.get("type"), (*at, "type"), "one"),
    }
    key = g.get("key") if g.get("key") is not None else g.get("variableName")
    kname = "key" if g.get("key") is not None else "variableName"
    if key is not None:
        out["key"] = r.text(key, (*at, kname))
    extras = {k: v for k, v in g.items() if k not in _CHOICE_KEYS}
    d = g.get("default")
    if isinstance(d, str) or (isinstance(d, list) and all(isinstance(x, str) for x in d)):
        out["default"] = d
        extras.pop("default")
    if g.get("separator") is not None:
        out["separator"] = r.text(g["separator"], (*at, "separator"))
    if g.get("sortOrder") is not None:
        out["sortOrder"] = r.num(g["sortOrder"], (*at, "sortOrder"))
    opts = g.get("options")
    if opts is not None:
        rows = []
        for j, o in enumerate(r.arr(opts, (*at, "options"))):
            oat = (*at, "options", j)
            o = r.obj(o, oat, "an option object")
            oid = o.get("id")
            row: dict[str, Any] = {
                "id": oid if isinstance(oid, str) and oid else str(j),
                "label": r.text(o.get("label"), (*oat, "label"), ""),
            }
            if o.get("value") is not None:
                row["value"] = r.text(o["value"], (*oat, "value"))
            rows.append(row)
        out["options"] = rows
    if extras:
        out["extras"] = extras
    return out


def rc_to_body(tree: Any, name: str, r: MapContext) -> tuple[dict[str, Any], Any]:
    """The ST preset mapping plus RoleCall's name, readme and choice groups."""
    body, layout = preset_to_body(tree, name, r)
    readme = tree.get("readme")
    if readme is not None:
        body["description"] = r.text(readme, ("readme",))
    groups = tree.get("choice_groups")
    if groups is not None:
        body["choices"] = [
            _choice(g, i, r, ("choice_groups", i)) for i, g in enumerate(r.arr(groups, ("choice_groups",)))
        ]
    return body, layout


def choice_to_native(c: PresetChoice) -> dict[str, Any]:
    out: dict[str, Any] = {"id": c.id, "label": c.label, "type": c.type}
    if c.key is not None:
        out["key"] = c.key
    if c.options:
        out["options"] = [
            {k: v for k, v in (("id", o.id), ("label", o.label), ("value", o.value)) if v is not None}
            for o in c.options
        ]
    if c.default is not None:
        out["default"] = list(c.default) if isinstance(c.default, list) else c.default
    if c.separator is not None:
        out["separator"] = c.separator
    if c.sortOrder is not None:
        out["sortOrder"] = c.sortOrder
    for k, v in (c.extras or {}).items():
        out.setdefault(k, v)
    return out


def body_to_rc(body: PresetBody, layout: Any) -> dict[str, Any]:
    out = body_to_preset(body, layout)
    out["name"] = body.name
    if body.description is not None:
        out["readme"] = body.description
    out["choice_groups"] = [choice_to_native(c) for c in body.choices]
    return out


def rc_keyed(item: Any) -> Any:
    """``merge3`` list key: ST's prompt/order keys, then ``id`` (choice groups, options)."""
    k = keyed_items(item)
    if k is None and isinstance(item, dict) and isinstance(item.get("id"), str):
        return ("id", item["id"])
    return k


class RoleCallPreset(Codec):
    """RoleCall presets: an ST chat-completion preset plus ``name``, ``readme`` and choice groups."""

    id = "rolecall-preset"
    # the ST preset's paths, but for the prompt ids and marker slots a fresh ST export rewrites
    coverage = Coverage(
        SillyTavernPresetCodec.coverage.paths - {"prompts[].id", "prompts[].markerSlot"},
        SillyTavernPresetCodec.coverage.notes,
    ) | Coverage.of(
        "description",
        "choices[].id",
        "choices[].key",
        "choices[].label",
        "choices[].type",
        "choices[].options[].id",
        "choices[].options[].label",
        "choices[].options[].value",
        "choices[].default",
        "choices[].separator",
        "choices[].sortOrder",
        "choices[].extras",
        notes=[
            "the preset name is RoleCall's `name` key (the file name only without one)",
            "prompt ids and marker slots are SillyTavern's: a marker prompt is identified by its slot,"
            " so a marker from another app takes ST's slot name as its id (Marinara `persona` becomes"
            " `personaDescription`), and a slot ST has no marker for (worldInfo, chatSummary,"
            " authorNote, cachePoint, postHistory) reads back as the prompt's id; neither is claimed",
            "linked regex sets are embedded as extensions.regex_scripts, holding what an ST script"
            " array holds (not what a RoleCall regex file holds); the set takes the preset's name",
            "the prompts an option enables and option descriptions ride in escrow only;"
            " macro_engine_yaml and linkedRegexScripts too",
        ],
    )

    embedded_coverage: ClassVar[Mapping[str, Coverage]] = {"regex": EMBEDDED_SCRIPTS_COVERAGE}

    def decode(self, s: Sniff) -> Decoded:
        tree = s.require_json()
        r = MapContext(lenient=True)
        tree = r.obj(tree, (), "a preset object")
        name = rc_name(tree, s.name)
        body, _ = rc_to_body(tree, name, r)
        e = self.entity(s, body, raw=tree, name=name)
        e.warnings.extend(r.warnings)
        out = [e]
        linked = _regex_link.link_scripts(self, s, e, _regex_link.preset_scripts(tree, r), name)
        if linked is not None:
            out.append(linked)
        return Decoded(out)

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        twin = entity.twin(self.id)
        raw = twin.raw if twin is not None and isinstance(twin.raw, dict) else None
        name = (twin.name if twin is not None else None) or ""
        return dumps(_regex_link.preset_tree(self, entity, ctx, raw, name, rc_to_body, body_to_rc, rc_keyed))


__all__ = ["RoleCallPreset", "body_to_rc", "is_rolecall_preset", "rc_to_body"]
