"""The wire keys of SillyTavern's flat presets (``_flat.py``): a :class:`Key` per key, and the
tables of the formatting templates whose key sets detection also reads. Imports no canonical model.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Key:
    """One wire key: where its value lives in the body, how it is spelled, what a fresh file says."""

    key: str
    #: canonical section (``samplers``, ``instruct``...) and field
    section: str
    field: str
    #: ``num``, ``bool``, ``str``, ``role`` (0/1/2), ``json_strs`` (a JSON text of a string array),
    #: ``kobold_order`` / ``novel_order`` (a list of sampler ids)
    kind: str = "num"
    #: written when the body has no value (``None``: the key is left out)
    fresh: Any = None


def keys(section: str, rows: Iterable[tuple[str, str, str, Any]]) -> tuple[Key, ...]:
    """``Key`` rows of one section from ``(wire key, field, kind, fresh)`` tuples."""
    return tuple(Key(k, section, f, kind, fresh) for k, f, kind, fresh in rows)


def paths(table: Iterable[Key]) -> list[str]:
    """The canonical paths a table carries (for coverage declarations)."""
    return [f"{k.section}.{k.field}" for k in table]


def only_keys(t: dict[str, Any], allowed: frozenset[str]) -> bool:
    """Whether every key of ``t`` is one of ``allowed``."""
    return all(k in allowed for k in t)


INSTRUCT = keys(
    "instruct",
    (
        ("input_sequence", "inputSequence", "str", ""),
        ("output_sequence", "outputSequence", "str", ""),
        ("last_output_sequence", "lastOutputSequence", "str", ""),
        ("system_sequence", "systemSequence", "str", ""),
        ("stop_sequence", "stopSequence", "str", ""),
        ("wrap", "wrap", "bool", True),
        ("macro", "macro", "bool", True),
        ("names_behavior", "namesBehavior", "str", "force"),
        ("activation_regex", "activationRegex", "str", ""),
        ("first_output_sequence", "firstOutputSequence", "str", ""),
        ("skip_examples", "skipExamples", "bool", False),
        ("output_suffix", "outputSuffix", "str", ""),
        ("input_suffix", "inputSuffix", "str", ""),
        ("system_suffix", "systemSuffix", "str", ""),
        ("user_alignment_message", "userAlignmentMessage", "str", ""),
        ("system_same_as_user", "systemSameAsUser", "bool", False),
        ("last_system_sequence", "lastSystemSequence", "str", ""),
        ("first_input_sequence", "firstInputSequence", "str", ""),
        ("last_input_sequence", "lastInputSequence", "str", ""),
        ("sequences_as_stop_strings", "sequencesAsStopStrings", "bool", True),
        ("story_string_prefix", "storyStringPrefix", "str", ""),
        ("story_string_suffix", "storyStringSuffix", "str", ""),
    ),
)

#: keys SillyTavern's import checks for an instruct template, and the ones only instruct templates have
INSTRUCT_SIGNATURE = ("input_sequence", "output_sequence")

INSTRUCT_KEYS = frozenset(k.key for k in INSTRUCT) | {
    "names",
    "names_force_groups",
    "separator_sequence",
    "system_sequence_prefix",
    "system_sequence_suffix",
}

CONTEXT = keys(
    "context",
    (
        ("story_string", "storyString", "str", ""),
        ("example_separator", "exampleSeparator", "str", ""),
        ("chat_start", "chatStart", "str", ""),
        ("use_stop_strings", "useStopStrings", "bool", False),
        ("names_as_stop_strings", "namesAsStopStrings", "bool", True),
        ("story_string_position", "storyStringPosition", "num", 0),
        ("story_string_depth", "storyStringDepth", "num", 1),
        ("story_string_role", "storyStringRole", "role", 0),
        ("always_force_name2", "alwaysForceName2", "bool", True),
        ("trim_sentences", "trimSentences", "bool", False),
        ("single_line", "singleLine", "bool", False),
    ),
)

CONTEXT_KEYS = frozenset(k.key for k in CONTEXT) | {"allow_jailbreak"}

REASONING_KEYS = frozenset({"name", "prefix", "suffix", "separator"})

SYSPROMPT_KEYS = frozenset({"name", "content", "post_history"})
