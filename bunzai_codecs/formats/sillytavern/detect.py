"""Detection of SillyTavern's files; imports no canonical model.

Cards are the Tavern card lineage's (``tavern/detect.py``, named by the row). A world info file is an ``entries``
object (0.9), a ``lorebook_v3`` book 0.8 and a bare card book 0.78 (below the other apps' books);
a chat-completion preset or prompt export 0.9; a persona backup or a settings file with personas
0.9; a regex script or array of scripts 0.9; the Advanced Formatting master export 0.95; the flat
templates and sampler presets by the keys SillyTavern's own import looks for (``formatting.py``,
``samplers.py``).
"""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core.format import object_detector
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.formats.sillytavern.keys import (
    CONTEXT_KEYS,
    INSTRUCT_KEYS,
    INSTRUCT_SIGNATURE,
    REASONING_KEYS,
    SYSPROMPT_KEYS,
    only_keys,
)
from bunzai_codecs.formats.tavern.detect import is_character_book, is_script

LOREBOOK_V3 = "lorebook_v3"

CHARACTER_BOOK = "character_book"


def _is_world(t: dict[str, Any]) -> bool:
    entries = t.get("entries")
    if not isinstance(entries, dict):
        return False
    if not all(isinstance(e, dict) for e in entries.values()):
        return False
    if not entries:
        return True
    return any(("key" in e or "uid" in e or "content" in e) for e in entries.values())


#: keys that mark another app's book with an ``entries`` array (Agnai, Risu, NovelAI) or a card
_FOREIGN_BOOK_KEYS = ("kind", "type", "spec", "lorebookVersion")


def book_shape(t: dict[str, Any]) -> str | None:
    """``lorebook_v3`` for ``{spec: "lorebook_v3", data: {entries: [...]}}``, ``character_book`` for
    a bare card book (Chub, card-extracted), else ``None``."""
    if t.get("spec") == LOREBOOK_V3:
        data = t.get("data")
        return LOREBOOK_V3 if isinstance(data, dict) and isinstance(data.get("entries"), list) else None
    if is_character_book(t) and not any(k in t for k in _FOREIGN_BOOK_KEYS):
        return CHARACTER_BOOK
    return None


BACKUP = "backup"

SETTINGS = "settings"


def shape_of(t: dict[str, Any]) -> str | None:
    if isinstance(t.get("personas"), dict) and isinstance(t.get("persona_descriptions"), dict):
        return BACKUP
    pu = t.get("power_user")
    if isinstance(pu, dict) and (
        isinstance(pu.get("personas"), dict) or isinstance(pu.get("persona_descriptions"), dict)
    ):
        return SETTINGS
    return None


#: keys that say "SillyTavern chat-completion preset" (detection)
PRESET_SIGNAL_KEYS = frozenset(
    {
        "chat_completion_source",
        "openai_max_context",
        "openai_max_tokens",
        "openai_model",
        "claude_model",
        "wi_format",
        "scenario_format",
        "personality_format",
        "impersonation_prompt",
        "new_chat_prompt",
        "new_group_chat_prompt",
        "new_example_chat_prompt",
        "continue_nudge_prompt",
        "names_behavior",
        "send_if_empty",
        "stream_openai",
        "bias_preset_selected",
        "assistant_prefill",
        "squash_system_messages",
    }
)


def is_prompt_export(t: dict[str, Any]) -> bool:
    """SillyTavern's prompt export: ``{version, type, data: {prompts: [...]}}``."""
    data = t.get("data")
    return (
        isinstance(t.get("version"), int | float)
        and isinstance(t.get("type"), str)
        and isinstance(data, dict)
        and isinstance(data.get("prompts"), list)
        and "spec" not in t
    )


def is_preset(t: dict[str, Any]) -> bool:
    """A chat-completion preset: ``prompts`` with ``prompt_order``, or three of its signal keys
    (RoleCall's preset is one, with its own keys besides)."""
    if isinstance(t.get("prompts"), list) and isinstance(t.get("prompt_order"), list):
        return True
    return sum(1 for k in PRESET_SIGNAL_KEYS if k in t) >= 3


#: built-in marker identifiers (slots SillyTavern fills itself)
MARKERS = frozenset(
    {
        "dialogueExamples",
        "chatHistory",
        "worldInfoBefore",
        "worldInfoAfter",
        "charDescription",
        "charPersonality",
        "scenario",
        "personaDescription",
    }
)

#: the identifiers of SillyTavern's own prompts: its prompt manager's defaults and the markers
BUILTIN_PROMPTS = MARKERS | {"main", "nsfw", "jailbreak", "enhanceDefinitions"}


def _is_prompt_list(t: dict[str, Any]) -> bool:
    """A chat-completion preset as older SillyTavern versions saved it: its ``prompts`` and no
    ``prompt_order`` (nor sampler keys). SillyTavern loads it, putting its default order in place:
    every prompt an object with an ``identifier``, one of them SillyTavern's own."""
    prompts = t.get("prompts")
    if not isinstance(prompts, list) or not prompts or "prompt_order" in t:
        return False
    if not all(isinstance(p, dict) and isinstance(p.get("identifier"), str) for p in prompts):
        return False
    return any(p["identifier"] in BUILTIN_PROMPTS for p in prompts)


#: keys only the Text Completion preset has (KoboldAI and NovelAI presets never do)
TEXTGEN_ONLY = frozenset(
    {
        "temperature_last",
        "epsilon_cutoff",
        "eta_cutoff",
        "typical_p",
        "encoder_rep_pen",
        "no_repeat_ngram_size",
        "penalty_alpha",
        "num_beams",
        "dynatemp",
        "smoothing_factor",
        "dry_multiplier",
        "mirostat_mode",
        "guidance_scale",
        "sampler_priority",
        "skip_special_tokens",
        "freq_pen",
        "presence_pen",
        "xtc_threshold",
        "nsigma",
        "ban_eos_token",
    }
)

KOBOLD_ONLY = frozenset({"typical", "mirostat", "use_default_badwordsids", "streaming_kobold", "grammar"})

NOVEL_ONLY = frozenset(
    {
        "tail_free_sampling",
        "repetition_penalty_range",
        "repetition_penalty_slope",
        "repetition_penalty_frequency",
        "repetition_penalty_presence",
        "phrase_rep_pen",
        "math1_temp",
        "math1_quad",
        "mirostat_lr",
    }
)

#: keys of other apps' presets that share ``temperature``/``repetition_penalty`` with NovelAI's
NOT_NOVEL = frozenset(
    {"presetVersion", "parameters", "formatingOrder", "PresensePenalty", "chat_completion_source", "temp"}
)


# -- the Advanced Formatting master export ------------------------------------------------------------

#: the sections of a master export and what SillyTavern's import checks for each (its
#: ``isPossibly...Data``); ``srw`` is Start Reply With
MASTER_SECTIONS: dict[str, tuple[str, ...]] = {
    "instruct": ("name", "input_sequence", "output_sequence"),
    "context": ("name", "story_string"),
    "sysprompt": ("name", "content"),
    "preset": ("temp", "top_k", "top_p", "rep_pen"),
    "reasoning": ("name", "prefix", "suffix", "separator"),
}
SRW = "srw"
_MASTER_KEYS = frozenset(MASTER_SECTIONS) | {SRW}


def has_keys(t: Any, *keys: str) -> bool:
    return isinstance(t, dict) and all(k in t for k in keys)


def is_master(t: Any) -> bool:
    """A non-empty object of section keys only, one of them a section SillyTavern would import."""
    if not isinstance(t, dict) or not t or not all(k in _MASTER_KEYS for k in t):
        return False
    return any(has_keys(t.get(k), *req) for k, req in MASTER_SECTIONS.items()) or has_keys(
        t.get(SRW), "value", "show"
    )


# -- detectors ----------------------------------------------------------------------------------------


def lorebook(s: Sniff) -> float:
    t = s.json_object
    if t is None:
        return 0.0
    if _is_world(t):
        return 0.9
    shape = book_shape(t)
    if shape == LOREBOOK_V3:
        return 0.8
    if shape == CHARACTER_BOOK:
        return 0.78
    return 0.0


master = object_detector(is_master, 0.95)


def persona(s: Sniff) -> float:
    t = s.json_object
    return 0.9 if t is not None and shape_of(t) is not None else 0.0


def preset(s: Sniff) -> float:
    t = s.json_object
    if t is None:
        return 0.0
    if is_prompt_export(t) or is_preset(t):
        return 0.9
    return 0.8 if _is_prompt_list(t) else 0.0


def regex(s: Sniff) -> float:
    t = s.json
    if isinstance(t, dict):
        return 0.9 if is_script(t) and isinstance(t.get("scriptName"), str) else 0.0
    if isinstance(t, list) and t:
        return 0.9 if all(is_script(x) for x in t) else 0.0
    return 0.0


# -- flat presets: each by the keys SillyTavern's own import looks for ---------------------------------


def _is_str(t: dict[str, Any], key: str) -> bool:
    return isinstance(t.get(key), str)


def _template(s: Sniff, signature: tuple[str, ...], keys: frozenset[str], least: int) -> float:
    """A template SillyTavern's import takes by its ``signature`` strings: 0.95 with at least
    ``least`` of its ``keys``, 0.6 with only a ``name`` besides."""
    t = s.json_object
    if t is None or not all(_is_str(t, k) for k in signature):
        return 0.0
    if sum(1 for k in t if k in keys) >= least:
        return 0.95
    return 0.6 if "name" in t else 0.0


def instruct(s: Sniff) -> float:
    return _template(s, INSTRUCT_SIGNATURE, INSTRUCT_KEYS, 5)


def context(s: Sniff) -> float:
    return _template(s, ("story_string",), CONTEXT_KEYS, 4)


def sysprompt(s: Sniff) -> float:
    t = s.json_object
    if t is None or not (_is_str(t, "name") and _is_str(t, "content") and only_keys(t, SYSPROMPT_KEYS)):
        return 0.0
    return 0.8 if _is_str(t, "post_history") else 0.6


def reasoning(s: Sniff) -> float:
    t = s.json_object
    if t is not None and all(_is_str(t, k) for k in REASONING_KEYS) and only_keys(t, REASONING_KEYS):
        return 0.9
    return 0.0


def _samplers(
    s: Sniff,
    needs: tuple[str, str],
    only: frozenset[str],
    least: int = 1,
    never: frozenset[str] = frozenset(),
) -> float:
    """0.9 for a sampler preset: a JSON object with both ``needs`` keys, at least ``least`` of the
    keys ``only`` its kind has, and none of ``never`` (another kind's)."""
    t = s.json_object
    ok = (
        t is not None
        and all(k in t for k in needs)
        and sum(1 for k in only if k in t) >= least
        and not any(k in t for k in never)
    )
    return 0.9 if ok else 0.0


def textgen(s: Sniff) -> float:
    return _samplers(s, ("temp", "rep_pen"), TEXTGEN_ONLY)


def kobold(s: Sniff) -> float:
    return _samplers(s, ("temp", "rep_pen"), KOBOLD_ONLY, never=TEXTGEN_ONLY)


def novel(s: Sniff) -> float:
    return _samplers(s, ("temperature", "repetition_penalty"), NOVEL_ONLY, least=2, never=NOT_NOVEL)
