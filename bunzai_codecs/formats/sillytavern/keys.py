"""The wire keys of SillyTavern's flat presets (``_flat.py``): a :class:`Key` per key, and the
tables of the formatting templates whose key sets detection also reads. Imports no canonical model.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from bunzai_codecs.formats._shared.wire import camel


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


def camel_keys(section: str, rows: Iterable[tuple[str, str, Any]]) -> tuple[Key, ...]:
    """``Key`` rows whose canonical field is the wire key in camelCase, from ``(wire key, kind,
    fresh)`` tuples (``input_sequence`` -> ``instruct.inputSequence``)."""
    return tuple(Key(k, section, camel(k), kind, fresh) for k, kind, fresh in rows)


def paths(table: Iterable[Key]) -> list[str]:
    """The canonical paths a table carries (for coverage declarations)."""
    return [f"{k.section}.{k.field}" for k in table]


def only_keys(t: dict[str, Any], allowed: frozenset[str]) -> bool:
    """Whether every key of ``t`` is one of ``allowed``."""
    return all(k in allowed for k in t)


INSTRUCT = camel_keys(
    "instruct",
    (
        ("input_sequence", "str", ""),
        ("output_sequence", "str", ""),
        ("last_output_sequence", "str", ""),
        ("system_sequence", "str", ""),
        ("stop_sequence", "str", ""),
        ("wrap", "bool", True),
        ("macro", "bool", True),
        ("names_behavior", "str", "force"),
        ("activation_regex", "str", ""),
        ("first_output_sequence", "str", ""),
        ("skip_examples", "bool", False),
        ("output_suffix", "str", ""),
        ("input_suffix", "str", ""),
        ("system_suffix", "str", ""),
        ("user_alignment_message", "str", ""),
        ("system_same_as_user", "bool", False),
        ("last_system_sequence", "str", ""),
        ("first_input_sequence", "str", ""),
        ("last_input_sequence", "str", ""),
        ("sequences_as_stop_strings", "bool", True),
        ("story_string_prefix", "str", ""),
        ("story_string_suffix", "str", ""),
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

CONTEXT = camel_keys(
    "context",
    (
        ("story_string", "str", ""),
        ("example_separator", "str", ""),
        ("chat_start", "str", ""),
        ("use_stop_strings", "bool", False),
        ("names_as_stop_strings", "bool", True),
        ("story_string_position", "num", 0),
        ("story_string_depth", "num", 1),
        ("story_string_role", "role", 0),
        ("always_force_name2", "bool", True),
        ("trim_sentences", "bool", False),
        ("single_line", "bool", False),
    ),
)

CONTEXT_KEYS = frozenset(k.key for k in CONTEXT) | {"allow_jailbreak"}

REASONING_KEYS = frozenset({"name", "prefix", "suffix", "separator"})

SYSPROMPT_KEYS = frozenset({"name", "content", "post_history"})
