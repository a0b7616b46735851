"""Detection of text-generation-webui's YAML files: a character (alone, or as a file set with its
picture), a generation preset, an instruction template. Imports no canonical model.

Every rule reads the file's top-level keys first, without parsing (``core.yamlio.top_keys``): a
file without a format's keys is never parsed for it. JSON (a Pygmalion character the app also
reads) is never claimed: JSON is YAML, but it is another format's file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bunzai_codecs.core import fileset, yamlio
from bunzai_codecs.core.errors import BunzaiError
from bunzai_codecs.core.sniff import Sniff

#: the keys a character's name is read from, in the app's order (its loader takes the first that
#: is not empty)
NAME_KEYS = ("name", "bot", "<|bot|>", "char_name")
#: the keys the user's name is read from (the app's order)
USER_KEYS = ("your_name", "user", "<|user|>")
#: the keys only instruction templates have
INSTRUCT_MARKS = ("instruction_template", "turn_template")
#: what a character holds besides its name (any one makes a name-keyed file a character)
CHARACTER_TEXT = (
    "context",
    "greeting",
    "char_persona",
    "char_greeting",
    "example_dialogue",
    "world_scenario",
)
#: the card folder's own mark (``formats/folder``): never a character of this app
CARD_FOLDER_MARK = "card_folder"

#: every key a generation preset of the app has held (``modules/presets.py`` across its history)
PRESET_KEYS = frozenset(
    {
        "temperature",
        "dynatemp_low",
        "dynatemp_high",
        "dynatemp_exponent",
        "dynamic_temperature",
        "dynamic_temperature_low",
        "smoothing_factor",
        "smoothing_curve",
        "top_p",
        "top_k",
        "min_p",
        "top_n_sigma",
        "typical_p",
        "xtc_threshold",
        "xtc_probability",
        "epsilon_cutoff",
        "eta_cutoff",
        "tfs",
        "top_a",
        "adaptive_target",
        "adaptive_decay",
        "dry_multiplier",
        "dry_allowed_length",
        "dry_base",
        "dry_sequence_breakers",
        "repetition_penalty",
        "repetition_penalty_range",
        "frequency_penalty",
        "presence_penalty",
        "encoder_repetition_penalty",
        "no_repeat_ngram_size",
        "penalty_alpha",
        "guidance_scale",
        "negative_prompt",
        "mirostat_mode",
        "mirostat_tau",
        "mirostat_eta",
        "do_sample",
        "temperature_last",
        "sampler_priority",
        "num_beams",
        "length_penalty",
        "early_stopping",
        "min_length",
        "max_new_tokens",
        "seed",
        "grammar_string",
        "custom_token_bans",
    }
)


def _scalar(v: Any) -> bool:
    return v is None or isinstance(v, str | int | float | bool)


def is_instruct(t: Mapping[str, Any]) -> bool:
    """An instruction template: the Jinja ``instruction_template``, or the older
    ``turn_template`` with its ``<|user-message|>`` / ``<|bot-message|>`` placeholders."""
    if isinstance(t.get("instruction_template"), str):
        return True
    tt = t.get("turn_template")
    return isinstance(tt, str) and "<|user-message|>" in tt and "<|bot-message|>" in tt


def is_character(t: Mapping[str, Any]) -> float:
    """How surely ``t`` is a character: 0.95 with a name and a text, 0.8 with a text alone (the app
    then keeps its default name), 0 otherwise (an instruction template, a card folder's
    ``card.yaml``, a text that is not a string)."""
    if CARD_FOLDER_MARK in t or any(k in t for k in INSTRUCT_MARKS):
        return 0.0
    texts = [k for k in CHARACTER_TEXT if k in t]
    if not texts or not all(isinstance(t[k], str) for k in texts):
        return 0.0
    if not any(isinstance(t.get(k), str) for k in ("context", "greeting", "char_persona", "char_greeting")):
        return 0.0
    named = any(isinstance(t.get(k), str) and t[k] != "" for k in NAME_KEYS)
    return 0.95 if named else 0.8


def preset_score(t: Mapping[str, Any]) -> float:
    """0.9 when every key is a preset key holding a scalar; 0.6 when at least two keys and three in
    four are (an app version's key this table lacks); else 0."""
    if not t or not all(isinstance(k, str) and _scalar(v) for k, v in t.items()):
        return 0.0
    known = sum(k in PRESET_KEYS for k in t)
    if known == len(t):
        return 0.9
    return 0.6 if len(t) >= 2 and known * 4 >= len(t) * 3 else 0.0


# -- the character: a YAML file, or a file set of the YAML and its picture -------------------------


def pair_names(names: tuple[str, ...]) -> tuple[str, str | None] | None:
    """``(yaml, picture)`` when a file set's names are one character YAML and at most one picture
    of the same stem (top level, nothing else), else None."""
    files = [n for n in names if not n.endswith("/")]
    if any("/" in n for n in files):
        return None
    yamls = [n for n in files if fileset.suffix(n) in fileset.YAML_SUFFIXES]
    if len(yamls) != 1:
        return None
    rest = [n for n in files if n != yamls[0]]
    if not rest:
        return yamls[0], None
    if len(rest) == 1 and fileset.pairs(files).get(yamls[0]) == rest[0]:
        return yamls[0], rest[0]
    return None


def pair_yaml(s: Sniff) -> Sniff | None:
    """The character YAML of a file set holding one (with or without its picture), as an input of
    its own (read bounded, once per input); None for any other input."""

    def find() -> Sniff | None:
        z = fileset.listing(s)
        names = pair_names(z.names) if z is not None else None
        if z is None or names is None:
            return None
        return Sniff(z.read(names[0]), names[0], uri=s.uri)

    try:
        return s.memo("textgen-pair", find)
    except BunzaiError:
        return None


def character(s: Sniff) -> float:
    inner = pair_yaml(s) if s.is_zip else None
    target = inner if inner is not None else s
    keys = yamlio.top_keys(target)
    if not keys & set(CHARACTER_TEXT) or CARD_FOLDER_MARK in keys or keys & set(INSTRUCT_MARKS):
        return 0.0
    t = yamlio.mapping(target)
    if t is None:  # a character's keys in YAML that does not read: its decoder says why
        return yamlio.BROKEN if keys & set(NAME_KEYS) and yamlio.broken(target) else 0.0
    return is_character(t)


def preset(s: Sniff) -> float:
    keys = yamlio.top_keys(s)
    if not keys & PRESET_KEYS:
        return 0.0
    t = yamlio.mapping(s)
    if t is None:
        return yamlio.BROKEN if len(keys & PRESET_KEYS) >= 2 and yamlio.broken(s) else 0.0
    return preset_score(t)


def instruct(s: Sniff) -> float:
    keys = yamlio.top_keys(s)
    if not keys & set(INSTRUCT_MARKS):
        return 0.0
    t = yamlio.mapping(s)
    if t is None:
        return yamlio.BROKEN if yamlio.broken(s) else 0.0
    return 0.95 if is_instruct(t) else 0.0
