"""``textgen-webui-preset``: a text-generation-webui generation preset (``presets/Name.yaml``,
``user_data/presets/`` since 2025), a YAML mapping of sampler settings named by its file.

The app starts from its default values (``modules/presets.py``) and sets every key the file has;
it saves only the values that differ from a default. Keys map onto ``samplers`` (and ``seed`` onto
``generation.seed``) where the canonical preset has the setting (:data:`TABLE`); the app's own
switches with no canonical home (``do_sample``, ``penalty_alpha``, ``sampler_priority``, beam
search, ``custom_token_bans``, ``adaptive_*``...) ride the escrow twin. ``dry_sequence_breakers``
is the app's text of comma-separated JSON strings (``"\\n", ":", "\\"", "*"``), read as the list.

A fresh export writes every key of the table, the body's value or the app's default (as the
app's own defaults are neutral, the file means the same as one holding only the body's values, and
it is recognisable whatever the body holds); the name is the file's stem, not part of the file.
"""

from __future__ import annotations

from typing import Any

import orjson

from bunzai_codecs.core.codec import Coverage
from bunzai_codecs.entities.preset import PresetBody
from bunzai_codecs.formats._shared.wire import MapContext, type_name
from bunzai_codecs.formats.sillytavern._flat import read_value
from bunzai_codecs.formats.sillytavern.keys import Key, keys, paths
from bunzai_codecs.formats.textgen._yamlfile import YamlPreset

#: the keys that map, in the app's order, with the app's default (``None``: written only when the
#: body has a value)
TABLE: tuple[Key, ...] = keys(
    "samplers",
    (
        ("temperature", "temperature", "num", 1),
        ("dynatemp_low", "dynamicTemperatureMin", "num", 1),
        ("dynatemp_high", "dynamicTemperatureMax", "num", 1),
        ("dynatemp_exponent", "dynamicTemperatureExponent", "num", 1),
        ("smoothing_factor", "smoothingFactor", "num", 0),
        ("smoothing_curve", "smoothingCurve", "num", 1),
        ("top_p", "topP", "num", 1),
        ("top_k", "topK", "num", 0),
        ("min_p", "minP", "num", 0),
        ("top_n_sigma", "topNSigma", "num", 0),
        ("typical_p", "typicalP", "num", 1),
        ("xtc_threshold", "xtcThreshold", "num", 0.1),
        ("xtc_probability", "xtcProbability", "num", 0),
        ("epsilon_cutoff", "epsilonCutoff", "num", 0),
        ("eta_cutoff", "etaCutoff", "num", 0),
        ("tfs", "tailFreeSampling", "num", 1),
        ("top_a", "topA", "num", 0),
        ("dry_multiplier", "dryMultiplier", "num", 0),
        ("dry_allowed_length", "dryAllowedLength", "num", 2),
        ("dry_base", "dryBase", "num", 1.75),
        ("repetition_penalty", "repetitionPenalty", "num", 1),
        ("frequency_penalty", "frequencyPenalty", "num", 0),
        ("presence_penalty", "presencePenalty", "num", 0),
        ("encoder_repetition_penalty", "encoderRepetitionPenalty", "num", 1),
        ("no_repeat_ngram_size", "noRepeatNgramSize", "num", 0),
        ("repetition_penalty_range", "repetitionPenaltyRange", "num", 1024),
        ("guidance_scale", "cfgScale", "num", 1),
        ("mirostat_mode", "mirostatMode", "num", 0),
        ("mirostat_tau", "mirostatTau", "num", 5),
        ("mirostat_eta", "mirostatEta", "num", 0.1),
        ("dynamic_temperature", "dynamicTemperature", "bool", False),
        ("temperature_last", "temperatureLast", "bool", False),
        ("dry_sequence_breakers", "drySequenceBreakers", "breakers", '"\\n", ":", "\\"", "*"'),
        ("negative_prompt", "negativePrompt", "str", None),
        ("grammar_string", "grammar", "str", None),
        ("max_new_tokens", "maxTokens", "num", None),
        ("min_length", "minTokens", "num", None),
    ),
) + keys("generation", (("seed", "seed", "num", None),))


def _breakers(v: Any, r: MapContext, key: str) -> list[str] | None:
    """The app's ``"\\n", ":"`` text (or a YAML list) as a list of strings."""
    if v is None:
        return None
    if isinstance(v, list):
        return r.str_list(v, (key,))
    if isinstance(v, str):
        try:
            parsed = orjson.loads(f"[{v}]")
        except orjson.JSONDecodeError:
            parsed = None
        if isinstance(parsed, list) and all(isinstance(x, str) for x in parsed):
            return parsed
    r.warn_at((key,), f"{type_name(v)} where comma-separated JSON strings belong; left in escrow")
    return None


def _breakers_text(v: list[str]) -> str:
    return ", ".join(orjson.dumps(x).decode("utf-8") for x in v)


class TextgenPresetCodec(YamlPreset):
    id = "textgen-webui-preset"
    what = "a generation preset"
    coverage = Coverage.of(
        *paths(TABLE),
        notes=[
            "the preset name is the file name, not part of the file: it is kept only when the export is "
            "saved as `<name>.yaml`",
            "a fresh export writes every key of the table, the body's value or the app's default (a "
            "neutral setting): a sampler the body lacks reads back as that default",
            "`sampler_priority`, `do_sample`, `penalty_alpha`, beam search (`num_beams`, "
            "`length_penalty`, `early_stopping`), `custom_token_bans` (token ids) and `adaptive_*` ride "
            "the escrow twin",
        ],
    )

    def read(self, tree: dict[str, Any], r: MapContext) -> dict[str, Any]:
        body: dict[str, Any] = {}
        for k in TABLE:
            if k.key not in tree:
                continue
            if k.kind == "breakers":
                val = _breakers(tree[k.key], r, k.key)
            else:
                val = read_value(tree[k.key], k.kind, r, (k.key,))
            if val is not None:
                body.setdefault(k.section, {})[k.field] = val
        return body

    def write(self, body: PresetBody, raw: dict[str, Any] | None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k in TABLE:
            val = getattr(getattr(body, k.section), k.field)
            if val is None:
                if k.fresh is not None:
                    out[k.key] = k.fresh
            elif k.kind == "breakers":
                out[k.key] = _breakers_text(val)
            else:
                out[k.key] = val
        return out
