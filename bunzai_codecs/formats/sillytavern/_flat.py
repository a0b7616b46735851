"""Flat preset objects: one wire key per canonical value, read and written through a table.

SillyTavern's text-completion presets (Text Completion, KoboldAI and NovelAI sampler presets) and
its Advanced Formatting templates (instruct, context, system prompt, reasoning) are flat objects
whose keys each hold one value. A codec describes its format as a tuple of :class:`Key` rows; the
functions here read such an object into body sections and write a body back, so each codec keeps
only its table and the keys that need more than a table.

Reading follows a lenient ``MapContext``'s rule: a scalar of the wrong type is read as absent (noted in the
entity's warnings; the escrow twin keeps it), a structure of the wrong type (an order that is not a
list) is ``Malformed``. Writing fills every key of the table: the body's value, else the key's
``fresh`` value (the app's own neutral setting; ``None`` leaves the key out), so a fresh file is
shaped like one the app saved, and a same-format export's three-way merge sees the same defaults on
both sides.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, ClassVar

import orjson

from bunzai_codecs.core.codec import Codec, EmitContext, Reshape, body_as
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.errors import Malformed, json_path
from bunzai_codecs.core.overlay import merge3
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.preset import PresetBody
from bunzai_codecs.formats._shared.wire import MapContext, file_stem, js_number_text, type_name
from bunzai_codecs.formats.sillytavern import _regex_link
from bunzai_codecs.formats.sillytavern._wire import Path, dumps, int_like, keyed_items
from bunzai_codecs.formats.sillytavern.keys import Key, keys, only_keys, paths
from bunzai_codecs.formats.tavern.lore import ROLE_INTS, ROLE_NAMES

#: message role numbers (context templates, persona descriptions)

#: KoboldAI's sampler ids (``sampler_order`` of KoboldAI and of SillyTavern's Text Completion preset)
KOBOLD_SAMPLERS = {
    0: "topK",
    1: "topA",
    2: "topP",
    3: "tailFreeSampling",
    4: "typicalP",
    5: "temperature",
    6: "repetitionPenalty",
}
#: the largest sampler id read as a number (larger ones are kept as text and never written)
MAX_ID = 10**15 - 1
#: NovelAI's sampler ids as SillyTavern numbers them (``order`` of its NovelAI presets)
NOVEL_SAMPLERS = {
    0: "temperature",
    1: "topK",
    2: "topP",
    3: "tailFreeSampling",
    4: "topA",
    5: "typicalP",
    6: "cfg",
    7: "topG",
    8: "mirostat",
    9: "unified",
    10: "minP",
}


# -- reading ------------------------------------------------------------------------------------------


def read_keys(
    top: dict[str, Any], table: Iterable[Key], body: dict[str, Any], r: MapContext, at: Path = ()
) -> None:
    """Every key of ``table`` that ``top`` has, into ``body``'s sections."""
    for k in table:
        if k.key not in top:
            continue
        val = read_value(top[k.key], k.kind, r, (*at, k.key))
        if val is not None:
            body.setdefault(k.section, {})[k.field] = val


def read_value(v: Any, kind: str, r: MapContext, path: Path) -> Any:
    """One wire value as canonical (None: absent, or a scalar of the wrong type, noted)."""
    if kind == "num":
        return r.num(v, path)
    if kind == "bool":
        return r.boolean(v, path, None)
    if kind == "str":
        return r.text(v, path)
    if kind == "role":
        n = int_like(v)
        if v is None:
            return None
        if n in ROLE_NAMES:
            return ROLE_NAMES[n]
        if isinstance(v, str) and v in ROLE_INTS:
            return v
        r.warn_at(path, f"{type_name(v)} {v!r} is not a message role (0, 1, 2); left in escrow")
        return None
    if kind == "json_strs":
        return _json_strs(v, r, path)
    if kind == "kobold_order":
        return read_order(v, KOBOLD_SAMPLERS, r, path)
    if kind == "novel_order":
        return read_order(v, NOVEL_SAMPLERS, r, path)
    raise ValueError(f"unknown key kind {kind!r}")


def _json_strs(v: Any, r: MapContext, path: Path) -> list[str] | None:
    if v is None:
        return None
    if isinstance(v, list):
        return r.str_list(v, path)
    if isinstance(v, str):
        try:
            parsed = orjson.loads(v)
        except orjson.JSONDecodeError:
            parsed = None
        if isinstance(parsed, list) and all(isinstance(x, str) for x in parsed):
            return parsed
    r.warn_at(path, f"{type_name(v)} where a JSON array of strings belongs; left in escrow")
    return None


def read_order(v: Any, ids: dict[int, str], r: MapContext, path: Path) -> list[str] | None:
    """A list of sampler ids as canonical sampler names (an unknown id kept as its text)."""
    if v is None:
        return None
    out: list[str] = []
    for i, x in enumerate(r.arr(v, path, "an array of sampler ids")):
        n = int_like(x)
        if n is not None and abs(n) <= MAX_ID:
            out.append(ids.get(n, str(n)))
        elif isinstance(x, str):
            out.append(x)
        elif isinstance(x, int | float) and not isinstance(x, bool):
            out.append(js_number_text(x))  # no app has such an id: kept as its text, never written as one
        else:
            raise Malformed(f"expected a sampler id, found {type_name(x)}", path=json_path((*path, i)))
    return out


# -- writing ------------------------------------------------------------------------------------------


def write_keys(body: PresetBody, table: Iterable[Key], out: dict[str, Any] | None = None) -> dict[str, Any]:
    """``out`` (a new dict by default) with every key of ``table`` (see the module docstring)."""
    out = {} if out is None else out
    for k in table:
        val = getattr(getattr(body, k.section), k.field)
        if val is None:
            if k.fresh is not None:
                out[k.key] = k.fresh
            continue
        wire = write_value(val, k.kind)
        if wire is not None:
            out[k.key] = wire
    return out


def write_value(v: Any, kind: str) -> Any:
    if kind == "role":
        return ROLE_INTS.get(v, v)
    if kind == "json_strs":
        return orjson.dumps(v).decode("utf-8")
    if kind == "kobold_order":
        return write_order(v, KOBOLD_SAMPLERS)
    if kind == "novel_order":
        return write_order(v, NOVEL_SAMPLERS)
    if isinstance(v, list):
        return list(v)
    return v


def _id_text(name: Any) -> bool:
    """A sampler id kept as its text (a number the id table lacks, within ``MAX_ID``)."""
    return isinstance(name, str) and name.isascii() and name.isdigit() and len(name) <= 15


def write_order(names: list[str], ids: dict[int, str]) -> list[int]:
    """Sampler names as ids; a name the app has no id for is left out (see ``order_reshape``)."""
    back = {name: n for n, name in ids.items()}
    out = []
    for name in names:
        if name in back:
            out.append(back[name])
        elif _id_text(name):
            out.append(int(name))
    return out


def order_loses(ids: dict[int, str]) -> Callable[[Any], bool]:
    """Whether a sampler order (canonical names) has a name the app has no id for."""

    def lost(v: Any) -> bool:
        names = set(ids.values())
        return isinstance(v, list) and any(not (x in names or _id_text(x)) for x in v)

    return lost


def order_reshape(path: str, ids: dict[int, str], app: str) -> Reshape:
    """The coverage reshape of a sampler order an app numbers with ``ids``."""
    return Reshape(path, order_loses(ids), f"{app} has no id for some samplers of this order")


# -- the codec shape -------------------------------------------------------------------------------


class FlatPreset(Codec):
    """A SillyTavern preset kind stored as one flat object (see the module docstring).

    A subclass (detected by its row's detector, ``sillytavern/detect.py``, and listed after
    ``sillytavern-preset`` by priority -1) gives its ``read`` (tree -> body dict and a layout: what of
    the file's own spelling a same-format export must follow) and ``write`` (body + layout ->
    tree); a preset that is its key table and nothing more declares the ``table`` instead. The name is the file name (sampler presets: SillyTavern keys them by file) or the
    ``name`` key (formatting templates, written last as SillyTavern does). A same-format export
    three-way merges the body's edits into the escrow twin (``merge3``), so every key of the file
    survives; sampler presets also carry preset-scoped regex scripts as a linked regex set.
    """

    #: the name is the file name (True) or the ``name`` key (False)
    named_by_file: ClassVar[bool] = False
    #: ``extensions.regex_scripts`` decode into a linked regex set
    carries_regex: ClassVar[bool] = False
    #: what the top-level object is called in errors
    what: ClassVar[str] = "a preset object"
    #: the ``name`` key is written first (system prompt, reasoning) rather than last
    name_first: ClassVar[bool] = False
    #: the wire keys the default ``read``/``write`` map (no layout), when that is all the preset is
    table: ClassVar[tuple[Key, ...]] = ()

    def read(self, top: dict[str, Any], r: MapContext, at: Path = ()) -> tuple[dict[str, Any], Any]:
        """``top`` (found at JSON path ``at``) as a body dict without its name, and its layout
        (by default: the ``table``'s keys, no layout)."""
        body: dict[str, Any] = {}
        read_keys(top, self.table, body, r, at)
        return body, None

    def write(self, body: PresetBody, layout: Any) -> dict[str, Any]:
        """The body as a tree in ``layout`` (by default: the ``table``'s keys)."""
        return write_keys(body, self.table)

    # -- shared machinery

    def name_of(self, top: dict[str, Any], file_name: str, r: MapContext) -> str:
        if self.named_by_file and file_name:
            return file_stem(file_name)
        n = r.text(top.get("name"), ("name",))
        if n is None:
            return file_stem(file_name) if file_name else ""
        return str(n)

    def body_of(
        self, top: dict[str, Any], name: str, r: MapContext, at: Path = ()
    ) -> tuple[dict[str, Any], Any]:
        body, layout = self.read(top, r, at)
        body["name"] = name
        return body, layout

    def tree(self, body: PresetBody, layout: Any) -> dict[str, Any]:
        """The native object for ``body`` (its name last when the format stores it)."""
        out = self.write(body, layout)
        if self.named_by_file:
            return out
        out.pop("name", None)
        if self.name_first:
            return {"name": body.name, **out}
        out["name"] = body.name
        return out

    def decode(self, s: Sniff) -> Decoded:
        tree = s.require_json()
        r = MapContext(lenient=True)
        top = r.obj(tree, (), self.what)
        name = self.name_of(top, s.name, r)
        body, _ = self.body_of(top, name, r)
        e = self.entity(s, body, raw=tree, name=name)
        e.warnings.extend(r.warnings)
        out = [e]
        if self.carries_regex:
            linked = _regex_link.link_scripts(self, s, e, _regex_link.preset_scripts(top, r), name)
            if linked is not None:
                out.append(linked)
        return Decoded(out)

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        return dumps(self.native(entity, ctx))

    def native(self, entity: CanonicalEntity, ctx: EmitContext, *, regex: bool = True) -> Any:
        """The native tree ``encode`` writes: the twin with the body's edits merged in, else fresh.
        ``regex=False`` leaves linked regex sets alone (a twin's scripts are kept as they were)."""
        regex = regex and self.carries_regex
        body = body_as(entity, PresetBody)
        twin = entity.twin(self.id)
        raw = twin.raw if twin is not None else None
        if twin is not None and isinstance(raw, dict):
            r = MapContext(lenient=True)
            old, layout = self.body_of(raw, twin.name or "", r)
            base = self.tree(PresetBody.model_validate(old), layout)
            fresh = self.tree(body, layout)
            if regex:
                _regex_link.overlay_scripts(
                    self, entity, ctx, _regex_link.preset_scripts(raw, r), base, fresh
                )
            return merge3(raw, base, fresh, list_key=keyed_items)
        out = self.tree(body, None)
        if regex:
            _regex_link.fresh_scripts(self, entity, ctx, out)
        return out


__all__ = [
    "KOBOLD_SAMPLERS",
    "NOVEL_SAMPLERS",
    "FlatPreset",
    "Key",
    "keys",
    "only_keys",
    "order_loses",
    "order_reshape",
    "paths",
    "read_keys",
    "read_order",
    "read_value",
    "write_keys",
    "write_order",
    "write_value",
]
