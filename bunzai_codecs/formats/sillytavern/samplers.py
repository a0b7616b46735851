"""SillyTavern's text-completion sampler presets: ``sillytavern-textgen`` (``TextGen Settings/``),
``sillytavern-kobold`` (``KoboldAI Settings/``) and ``sillytavern-novel`` (``NovelAI Settings/``).

Each is a flat object of sampler values (``_flat.py``), named by its file. Sampler values map onto
``samplers``; ``sampler_order`` (KoboldAI's sampler ids, also what the Text Completion preset sends
to KoboldCpp) and the NovelAI ``order`` (NovelAI's ids as SillyTavern numbers them) onto
``samplers.samplerOrder`` as canonical sampler names. A preset SillyTavern saved itself carries the
response length as ``genamt`` and the context size as ``max_length``; a NovelAI preset shipped with
the app (no ``genamt``) says ``max_length`` for the response length and ``max_context`` for the
context, as NovelAI does. Keys with no canonical home (the Text Completion backends' own switches:
``do_sample``, ``num_beams``, ``sampler_priority``, ``logit_bias``, ``json_schema``...; KoboldAI's
``use_default_badwordsids``; NovelAI's ``prefix``, ``use_cache``...) ride the escrow twin, as do
legacy keys. ``extensions.regex_scripts`` decode into a linked regex set, as for chat-completion
presets.
"""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core.codec import Coverage
from bunzai_codecs.entities.preset import PresetBody
from bunzai_codecs.formats._shared.wire import MapContext
from bunzai_codecs.formats.sillytavern._flat import (
    KOBOLD_SAMPLERS,
    NOVEL_SAMPLERS,
    FlatPreset,
    Key,
    keys,
    order_reshape,
    paths,
    read_keys,
    write_keys,
)
from bunzai_codecs.formats.sillytavern._wire import Path

#: response length and context size as SillyTavern saves them with any sampler preset
LENGTHS = keys("samplers", (("genamt", "maxTokens", "num", None), ("max_length", "maxContext", "num", None)))
SEED = keys("generation", (("seed", "seed", "num", None),))

#: the Text Completion preset (fresh values: each sampler switched off)
TEXTGEN = (
    keys(
        "samplers",
        (
            ("temp", "temperature", "num", 1),
            ("temperature_last", "temperatureLast", "bool", True),
            ("top_p", "topP", "num", 1),
            ("top_k", "topK", "num", 0),
            ("top_a", "topA", "num", 0),
            ("tfs", "tailFreeSampling", "num", 1),
            ("epsilon_cutoff", "epsilonCutoff", "num", 0),
            ("eta_cutoff", "etaCutoff", "num", 0),
            ("typical_p", "typicalP", "num", 1),
            ("min_p", "minP", "num", 0),
            ("rep_pen", "repetitionPenalty", "num", 1),
            ("rep_pen_range", "repetitionPenaltyRange", "num", 0),
            ("rep_pen_decay", "repetitionPenaltyDecay", "num", 0),
            ("rep_pen_slope", "repetitionPenaltySlope", "num", 1),
            ("no_repeat_ngram_size", "noRepeatNgramSize", "num", 0),
            ("min_length", "minTokens", "num", 0),
            ("encoder_rep_pen", "encoderRepetitionPenalty", "num", 1),
            ("freq_pen", "frequencyPenalty", "num", 0),
            ("presence_pen", "presencePenalty", "num", 0),
            ("dynatemp", "dynamicTemperature", "bool", False),
            ("min_temp", "dynamicTemperatureMin", "num", 0),
            ("max_temp", "dynamicTemperatureMax", "num", 2),
            ("dynatemp_exponent", "dynamicTemperatureExponent", "num", 1),
            ("smoothing_factor", "smoothingFactor", "num", 0),
            ("smoothing_curve", "smoothingCurve", "num", 1),
            ("dry_allowed_length", "dryAllowedLength", "num", 2),
            ("dry_multiplier", "dryMultiplier", "num", 0),
            ("dry_base", "dryBase", "num", 1.75),
            ("dry_sequence_breakers", "drySequenceBreakers", "json_strs", '["\\n", ":", "\\"", "*"]'),
            ("dry_penalty_last_n", "dryPenaltyLastN", "num", 0),
            ("mirostat_mode", "mirostatMode", "num", 0),
            ("mirostat_tau", "mirostatTau", "num", 5),
            ("mirostat_eta", "mirostatEta", "num", 0.1),
            ("guidance_scale", "cfgScale", "num", 1),
            ("negative_prompt", "negativePrompt", "str", ""),
            ("grammar_string", "grammar", "str", ""),
            ("banned_tokens", "bannedTokens", "str", ""),
            ("sampler_order", "samplerOrder", "kobold_order", [6, 0, 1, 3, 4, 2, 5]),
            ("xtc_threshold", "xtcThreshold", "num", 0.1),
            ("xtc_probability", "xtcProbability", "num", 0),
            ("nsigma", "topNSigma", "num", 0),
            ("min_keep", "minKeep", "num", 0),
        ),
    )
    + LENGTHS
    + SEED
)

#: the KoboldAI preset
KOBOLD = (
    keys(
        "samplers",
        (
            ("temp", "temperature", "num", 1),
            ("rep_pen", "repetitionPenalty", "num", 1),
            ("rep_pen_range", "repetitionPenaltyRange", "num", 0),
            ("top_p", "topP", "num", 1),
            ("min_p", "minP", "num", 0),
            ("top_a", "topA", "num", 0),
            ("top_k", "topK", "num", 0),
            ("typical", "typicalP", "num", 1),
            ("tfs", "tailFreeSampling", "num", 1),
            ("rep_pen_slope", "repetitionPenaltySlope", "num", 1),
            ("sampler_order", "samplerOrder", "kobold_order", [6, 0, 1, 3, 4, 2, 5]),
            ("mirostat", "mirostatMode", "num", 0),
            ("mirostat_tau", "mirostatTau", "num", 5),
            ("mirostat_eta", "mirostatEta", "num", 0.1),
            ("grammar", "grammar", "str", ""),
        ),
    )
    + LENGTHS
    + SEED
)

#: NovelAI's own parameter names (and fresh values) shared by a NovelAI preset file's ``parameters``
#: and SillyTavern's copy of a NovelAI preset, in NovelAI's order: the length floor, the samplers and
#: the repetition penalties...
NOVEL_SAMPLING_ROWS: tuple[tuple[str, str, str, Any], ...] = (
    ("min_length", "minTokens", "num", 1),
    ("top_k", "topK", "num", 0),
    ("top_p", "topP", "num", 1),
    ("top_a", "topA", "num", 0),
    ("typical_p", "typicalP", "num", 1),
    ("tail_free_sampling", "tailFreeSampling", "num", 1),
    ("repetition_penalty", "repetitionPenalty", "num", 1),
    ("repetition_penalty_range", "repetitionPenaltyRange", "num", 0),
    ("repetition_penalty_slope", "repetitionPenaltySlope", "num", 0),
    ("repetition_penalty_frequency", "frequencyPenalty", "num", 0),
    ("repetition_penalty_presence", "presencePenalty", "num", 0),
)
#: ... and the unified sampler (``math1``) and min-p
NOVEL_UNIFIED_ROWS: tuple[tuple[str, str, str, Any], ...] = (
    ("math1_temp", "unifiedLinear", "num", 1),
    ("math1_quad", "unifiedQuad", "num", 0),
    ("math1_quad_entropy_scale", "unifiedConf", "num", 0),
    ("min_p", "minP", "num", 0),
)

#: the NovelAI preset's samplers (both layouts)
NOVEL_SAMPLER_KEYS = keys(
    "samplers",
    (
        ("temperature", "temperature", "num", 1),
        *NOVEL_SAMPLING_ROWS,
        ("phrase_rep_pen", "phraseRepetitionPenalty", "str", "off"),
        ("mirostat_lr", "mirostatEta", "num", 1),
        ("mirostat_tau", "mirostatTau", "num", 0),
        *NOVEL_UNIFIED_ROWS,
        ("order", "samplerOrder", "novel_order", [1, 5, 0, 2, 3, 4]),
        ("banned_tokens", "bannedTokens", "str", None),
    ),
)
#: lengths of a NovelAI preset shipped with SillyTavern (NovelAI's own spelling); the fresh values are
#: what SillyTavern's own NovelAI preset import writes
NOVEL_LENGTHS = keys(
    "samplers", (("max_context", "maxContext", "num", 8000), ("max_length", "maxTokens", "num", 150))
)
#: lengths of a NovelAI preset SillyTavern saved (it has ``genamt``)
NOVEL_SAVED_LENGTHS = LENGTHS


def _samplers_coverage(table: tuple[Key, ...], ids: dict[int, str], app: str, *notes: str) -> Coverage:
    return Coverage.of(
        *paths(table),
        notes=[
            "the preset name is the file name, not part of the file: it is kept only when the export is "
            "saved as `<name>.json` (a linked preset written beside a file is `<stem>.preset.json`)",
            "a fresh export writes every key, as SillyTavern saves a preset: a sampler the body lacks is "
            "written switched off (its neutral value) and reads back as that value",
            *notes,
        ],
        reshapes=[order_reshape("samplers.samplerOrder", ids, app)],
    )


class SillyTavernTextgenCodec(FlatPreset):
    id = "sillytavern-textgen"
    named_by_file = True
    carries_regex = True
    what = "a Text Completion preset object"
    table = TEXTGEN
    coverage = _samplers_coverage(
        TEXTGEN,
        KOBOLD_SAMPLERS,
        "KoboldCpp",
        "the sampler order is `sampler_order` (KoboldCpp's ids); the orders of other backends "
        "(`sampler_priority`, `samplers`, `samplers_priorities`) and the backends' own switches "
        "(`do_sample`, `num_beams`, `penalty_alpha`, `logit_bias`, `json_schema`...) ride the escrow twin",
    )


class SillyTavernKoboldCodec(FlatPreset):
    id = "sillytavern-kobold"
    named_by_file = True
    carries_regex = True
    what = "a KoboldAI preset object"
    table = KOBOLD
    coverage = _samplers_coverage(
        KOBOLD,
        KOBOLD_SAMPLERS,
        "KoboldAI",
        "`use_default_badwordsids` and `streaming_kobold` ride the escrow twin",
    )


def novel_tables(saved: bool) -> tuple[Key, ...]:
    """The NovelAI preset's keys: as SillyTavern saved it (``genamt``) or as NovelAI spells it."""
    return NOVEL_SAMPLER_KEYS + (NOVEL_SAVED_LENGTHS if saved else NOVEL_LENGTHS)


class SillyTavernNovelCodec(FlatPreset):
    id = "sillytavern-novel"
    named_by_file = True
    carries_regex = True
    what = "a NovelAI preset object"
    coverage = _samplers_coverage(
        novel_tables(False),
        NOVEL_SAMPLERS,
        "SillyTavern's NovelAI preset",
        "`repetition_penalty_frequency` and `repetition_penalty_presence` are NovelAI's frequency and "
        "presence penalties (frequencyPenalty, presencePenalty); `mirostat_lr` is mirostatEta; the "
        "`math1_*` values are NovelAI's unified sampling",
        "a sampler switched off in the order is left out of it (no disabledSamplers)",
        "NovelAI module (`prefix`), `use_cache`, `return_full_text`, `preamble` and `logit_bias` ride the "
        "escrow twin",
    )

    def read(self, top: dict[str, Any], r: MapContext, at: Path = ()) -> tuple[dict[str, Any], Any]:
        saved = "genamt" in top
        body: dict[str, Any] = {}
        read_keys(top, novel_tables(saved), body, r, at)
        return body, saved

    def write(self, body: PresetBody, layout: Any) -> dict[str, Any]:
        return write_keys(body, novel_tables(bool(layout)))


__all__ = [
    "KOBOLD",
    "NOVEL_SAMPLER_KEYS",
    "NOVEL_SAMPLING_ROWS",
    "NOVEL_UNIFIED_ROWS",
    "TEXTGEN",
    "SillyTavernKoboldCodec",
    "SillyTavernNovelCodec",
    "SillyTavernTextgenCodec",
    "novel_tables",
]
