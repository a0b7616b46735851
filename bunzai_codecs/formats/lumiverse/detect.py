"""Detection of Lumiverse's files; imports no canonical model. Its card is the Tavern card lineage's
(the ``lumiverse`` row's ``CardDetector`` in ``formats/table.py``), but for its zip (:func:`archive`)."""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core.format import object_detector
from bunzai_codecs.core.sniff import Sniff

MODULES_JSON = "lumiverse_modules.json"

RISU_MODULE = "module.risum"


def archive(s: Sniff) -> float | None:
    """The score of Lumiverse's character zip, the file its card row scores itself (the card inside
    a JSON or PNG file is the lineage's, by the row's mark): 1.0 for a zip with
    ``lumiverse_modules.json`` and no ``module.risum`` (RisuAI's), 0 for any other zip; ``None`` for
    an input that is not a zip."""
    if not s.is_zip:
        return None
    z = s.zip
    if z is None or RISU_MODULE in z:
        return 0.0
    return 1.0 if MODULES_JSON in z else 0.0


_REQUIRED = ("name", "description", "subjective_pronoun", "objective_pronoun")


def is_account_persona(t: Any) -> bool:
    return isinstance(t, dict) and all(isinstance(t.get(k), str) for k in _REQUIRED)


PRESET_TYPE = "lumiverse_preset"


def is_preset_export(t: Any) -> bool:
    return isinstance(t, dict) and t.get("type") == PRESET_TYPE and isinstance(t.get("preset"), dict)


FILE_TYPE = "lumiverse_regex_scripts"


def is_export(t: Any) -> bool:
    return isinstance(t, dict) and t.get("type") == FILE_TYPE and isinstance(t.get("scripts"), list)


persona = object_detector(is_account_persona, 0.95)
preset = object_detector(is_preset_export, 1.0)
regex = object_detector(is_export, 1.0)
