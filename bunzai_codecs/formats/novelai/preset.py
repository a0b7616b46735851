"""novelai-preset: NovelAI's text generation preset, as its web app exports it (``.preset``).

The file is ``{presetVersion: 3, name, id, remoteId, parameters: {...}, model}``. ``parameters``
holds the sampler values under NovelAI's API names (the same names SillyTavern's own NovelAI presets
use, ``sillytavern-novel``) and ``order``, the samplers in the order they apply, each
``{id, enabled}``: the enabled ones become ``samplers.samplerOrder`` and the switched-off ones
``samplers.disabledSamplers`` (canonical sampler names; an id bunzai does not know is kept as
written). An order of plain numbers (SillyTavern's spelling) is read too.

Canonical: ``name``; ``temperature``, ``max_length`` (the reply length, ``maxTokens``),
``min_length``, ``top_k``/``top_p``/``top_a``/``top_g``, ``typical_p``, ``tail_free_sampling``,
the repetition penalty and its range and slope, ``repetition_penalty_frequency``/``_presence``
(frequency and presence penalties), ``phrase_rep_pen``, ``cfg_scale``/``cfg_uc`` (classifier-free
guidance and its negative prompt), ``mirostat_tau``/``mirostat_lr``, the ``math1_*`` unified
sampling values and ``min_p``. The escrow twin keeps the rest: ``id``, ``remoteId``,
``presetVersion``, ``model`` (connection data, never canonical), ``textGenerationSettingsVersion``,
token-id lists (``bad_words_ids``, ``stop_sequences``, ``logit_bias_exp``,
``repetition_penalty_whitelist``) and ``repetition_penalty_default_whitelist``.

A fresh export writes every parameter (a value the body lacks as the sampler switched off, the
lengths as SillyTavern's NovelAI import does), the order, a stable UUID made from the content, and
NovelAI's current text model.
"""

from __future__ import annotations

import uuid
from typing import Any

import orjson

from bunzai_codecs.core.codec import Codec, Coverage, EmitContext, Reshape, body_as
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.errors import Malformed, json_path
from bunzai_codecs.core.overlay import merge3
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.preset import PresetBody
from bunzai_codecs.formats._shared.wire import MapContext, file_stem, parse_number, type_name
from bunzai_codecs.formats.novelai.detect import is_preset
from bunzai_codecs.formats.sillytavern._flat import (
    KOBOLD_SAMPLERS,
    NOVEL_SAMPLERS,
    keys,
    paths,
    read_keys,
    read_order,
    write_keys,
    write_order,
)
from bunzai_codecs.formats.sillytavern._wire import Path, dumps
from bunzai_codecs.formats.sillytavern.samplers import NOVEL_SAMPLING_ROWS, NOVEL_UNIFIED_ROWS

PRESET_VERSION = 3
#: the parameters version and model a fresh export names (NovelAI's current text model's presets)
SETTINGS_VERSION = 7
MODEL = "llama-3-erato-v1"
_ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "bunzai:novelai-preset")

PARAMETERS = keys(
    "samplers",
    (
        ("temperature", "temperature", "num", 1),
        ("max_length", "maxTokens", "num", 150),
        *NOVEL_SAMPLING_ROWS,
        ("cfg_scale", "cfgScale", "num", 1),
        ("cfg_uc", "negativePrompt", "str", ""),
        ("phrase_rep_pen", "phraseRepetitionPenalty", "str", "off"),
        ("top_g", "topG", "num", 0),
        ("mirostat_tau", "mirostatTau", "num", 0),
        ("mirostat_lr", "mirostatEta", "num", 1),
        *NOVEL_UNIFIED_ROWS,
    ),
)

#: NovelAI sampler ids -> canonical sampler names
SAMPLER_IDS = {
    "temperature": "temperature",
    "top_k": "topK",
    "top_p": "topP",
    "tfs": "tailFreeSampling",
    "top_a": "topA",
    "typical_p": "typicalP",
    "cfg": "cfg",
    "top_g": "topG",
    "mirostat": "mirostat",
    "math1": "unified",
    "min_p": "minP",
}
SAMPLER_NAMES = {v: k for k, v in SAMPLER_IDS.items()}
#: every sampler name bunzai knows: one NovelAI has no id for is another app's
_KNOWN = (
    frozenset(SAMPLER_IDS.values()) | frozenset(NOVEL_SAMPLERS.values()) | frozenset(KOBOLD_SAMPLERS.values())
)


def can_hold(name: Any) -> bool:
    """Whether NovelAI's order can hold sampler ``name``: one of its own, or an id bunzai read from a
    NovelAI file and does not know (kept as written); never another app's sampler or number."""
    if not isinstance(name, str):
        return False
    return name in SAMPLER_NAMES or not (name in _KNOWN or _is_number(name))


def _is_number(name: str) -> bool:
    """A sampler id that is a number (SillyTavern's spelling, or a number no app has)."""
    return parse_number(name) is not None


# -- native -> canonical ------------------------------------------------------------------------------


def read_nai_order(v: Any, r: MapContext, at: Path) -> tuple[list[str], list[str], str]:
    """``(enabled names, disabled names, layout)``: NovelAI's ``[{id, enabled}]`` or plain numbers."""
    items = r.arr(v, at, "an array of samplers")
    if items and all(isinstance(x, int | float) and not isinstance(x, bool) for x in items):
        return read_order(items, NOVEL_SAMPLERS, r, at) or [], [], "ids"
    on: list[str] = []
    off: list[str] = []
    for i, item in enumerate(items):
        item = r.obj(item, (*at, i), "a sampler object")
        sid = item.get("id")
        if not isinstance(sid, str):
            raise Malformed(f"expected a sampler id, found {type_name(sid)}", path=json_path((*at, i, "id")))
        name = SAMPLER_IDS.get(sid, sid)
        (on if r.boolean(item.get("enabled"), (*at, i, "enabled"), True) else off).append(name)
    return on, off, "objects"


def preset_to_body(top: dict[str, Any], name: str, r: MapContext) -> tuple[dict[str, Any], str]:
    params = r.obj(top.get("parameters"), ("parameters",))
    body: dict[str, Any] = {"name": name}
    read_keys(params, PARAMETERS, body, r, ("parameters",))
    layout = "objects"
    if params.get("order") is not None:
        on, off, layout = read_nai_order(params["order"], r, ("parameters", "order"))
        samplers = body.setdefault("samplers", {})
        samplers["samplerOrder"] = on
        if off:
            samplers["disabledSamplers"] = off
    return body, layout


# -- canonical -> native ------------------------------------------------------------------------------


def write_nai_order(body: PresetBody, layout: str) -> list[Any] | None:
    s = body.samplers
    if s.samplerOrder is None and s.disabledSamplers is None:
        return None
    if layout == "ids":
        return write_order(list(s.samplerOrder or []), NOVEL_SAMPLERS)
    out: list[Any] = []
    for names, enabled in ((s.samplerOrder or [], True), (s.disabledSamplers or [], False)):
        for name in names:
            if can_hold(name):
                out.append({"id": SAMPLER_NAMES.get(name, name), "enabled": enabled})
    return out


def body_to_params(body: PresetBody, layout: str) -> dict[str, Any]:
    out: dict[str, Any] = {"textGenerationSettingsVersion": SETTINGS_VERSION}
    write_keys(body, PARAMETERS, out)
    order = write_nai_order(body, layout)
    if order is not None:
        out["order"] = order
    return out


def body_to_preset(body: PresetBody, layout: str | None) -> dict[str, Any]:
    """The preset for ``body``: with a layout, the keys the codec maps (for the twin's merge);
    without, a whole fresh file."""
    params = body_to_params(body, layout or "objects")
    if layout is not None:
        return {"name": body.name, "parameters": params}
    digest = orjson.dumps([body.name, params], option=orjson.OPT_SORT_KEYS)
    return {
        "presetVersion": PRESET_VERSION,
        "name": body.name,
        "id": str(uuid.uuid5(_ID_NAMESPACE, digest.decode("utf-8"))),
        "remoteId": "",
        "parameters": params,
        "model": MODEL,
    }


def _loses_some(v: Any) -> bool:
    return isinstance(v, list) and not all(can_hold(x) for x in v)


class NovelAIPresetCodec(Codec):
    id = "novelai-preset"
    coverage = Coverage.of(
        "name",
        *paths(PARAMETERS),
        "samplers.samplerOrder",
        "samplers.disabledSamplers",
        notes=[
            "`repetition_penalty_frequency`/`_presence` are NovelAI's frequency and presence penalties; "
            "`mirostat_lr` is mirostatEta; `math1_*` are unified sampling; `cfg_uc` is the negative prompt",
            "the model, ids, token-id lists (banned words, stop sequences, logit bias) and "
            "`repetition_penalty_default_whitelist` ride the escrow twin",
            "a fresh export writes every parameter, as NovelAI exports a preset: one the body lacks is "
            "written as the sampler switched off and reads back as that value",
        ],
        reshapes=[
            Reshape("samplers.samplerOrder", _loses_some, "NovelAI has no id for some samplers"),
            Reshape("samplers.disabledSamplers", _loses_some, "NovelAI has no id for some samplers"),
        ],
    )

    def decode(self, s: Sniff) -> Decoded:
        tree = s.require_json()
        r = MapContext(lenient=True)
        top = r.obj(tree, (), "a NovelAI preset object")
        n = r.text(top.get("name"), ("name",))
        name = n if n is not None else file_stem(s.name)
        body, _ = preset_to_body(top, name, r)
        e = self.entity(s, body, raw=tree, name=name)
        e.warnings.extend(r.warnings)
        return Decoded([e])

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        body = body_as(entity, PresetBody)
        twin = entity.twin(self.id)
        raw = twin.raw if twin is not None else None
        if isinstance(raw, dict):
            old, layout = preset_to_body(raw, (twin.name or "") if twin else "", MapContext(lenient=True))
            base = body_to_preset(PresetBody.model_validate(old), layout)
            fresh = body_to_preset(body, layout)
            out = merge3(raw, base, fresh)
            order = fresh["parameters"].get("order")
            if order != base["parameters"].get("order") and isinstance(out.get("parameters"), dict):
                # the twin lists enabled and disabled samplers interleaved, the writer enabled first:
                # an edited order is written whole, never merged item by item
                params = {k: v for k, v in out["parameters"].items() if k != "order"}
                out["parameters"] = params if order is None else {**params, "order": order}
            return dumps(out)
        return dumps(body_to_preset(body, None))


__all__ = ["NovelAIPresetCodec", "body_to_preset", "is_preset", "preset_to_body"]
