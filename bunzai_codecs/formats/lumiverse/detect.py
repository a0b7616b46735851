"""Detection of Lumiverse's files; imports no canonical model."""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.formats.tavern.png import card_extensions, png_card_trees

MODULES_JSON = "lumiverse_modules.json"

RISU_MODULE = "module.risum"

_OBJECT_KEYS = ("expressions", "expression_groups", "alternate_fields", "lumiverse_image_gen_lora")

_ARRAY_KEYS = ("alternate_avatars", "world_book_ids", "databank_ids")


def fingerprinted(tree: Any) -> bool:
    """True when a card tree's extensions carry a Lumiverse key (see ``lumiverse/card.py``)."""
    ext = card_extensions(tree)
    if ext is None:
        return False
    return (
        any(isinstance(ext.get(k), dict) for k in _OBJECT_KEYS)
        or any(isinstance(ext.get(k), list) for k in _ARRAY_KEYS)
        or isinstance(ext.get("alternate_character_name"), str)
        or "ttsVoice" in ext
    )


_REQUIRED = ("name", "description", "subjective_pronoun", "objective_pronoun")


def is_account_persona(t: Any) -> bool:
    return isinstance(t, dict) and all(isinstance(t.get(k), str) for k in _REQUIRED)


PRESET_TYPE = "lumiverse_preset"


def is_preset_export(t: Any) -> bool:
    return isinstance(t, dict) and t.get("type") == PRESET_TYPE and isinstance(t.get("preset"), dict)


FILE_TYPE = "lumiverse_regex_scripts"


def is_export(t: Any) -> bool:
    return isinstance(t, dict) and t.get("type") == FILE_TYPE and isinstance(t.get("scripts"), list)


def card(s: Sniff) -> float:
    if s.is_zip:
        z = s.zip
        if z is None or RISU_MODULE in z:
            return 0.0
        return 1.0 if MODULES_JSON in z else 0.0
    trees = png_card_trees(s) if s.is_png else [s.json_object]
    return 0.95 if any(fingerprinted(t) for t in trees) else 0.0


def persona(s: Sniff) -> float:
    return 0.95 if is_account_persona(s.json_object) else 0.0


def preset(s: Sniff) -> float:
    return 1.0 if is_preset_export(s.json_object) else 0.0


def regex(s: Sniff) -> float:
    return 1.0 if is_export(s.json_object) else 0.0
