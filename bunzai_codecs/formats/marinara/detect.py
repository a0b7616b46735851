"""Detection of Marinara-Engine's exports (each an object with its own ``type``; regex scripts a
``kind``ed envelope or a bare array of rows); imports no canonical model."""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core.sniff import Sniff


def exported(t: Any, type_: str) -> dict[str, Any] | None:
    """The ``data`` object of Marinara's export envelope ``{type: <type_>, data: {...}}``, or ``None``."""
    if isinstance(t, dict) and t.get("type") == type_:
        data = t.get("data")
        if isinstance(data, dict):
            return data
    return None


CHARACTER_TYPE = "marinara_character"


def character_score(t: Any) -> float:
    card = exported(t, CHARACTER_TYPE)
    return 1.0 if card is not None and isinstance(card.get("data"), dict) else 0.0


LOREBOOK_TYPE = "marinara_lorebook"


def lorebook_score(t: Any) -> float:
    data = exported(t, LOREBOOK_TYPE)
    return 1.0 if data is not None and isinstance(data.get("entries"), list) else 0.0


PERSONA_TYPE = "marinara_persona"


def _is_persona_row(t: dict[str, Any]) -> bool:
    # the seed's gates, "disjoint from Lumi/ST/RC": id and name, description and personality,
    # and a theming or stat signal
    return (
        isinstance(t.get("id"), str)
        and isinstance(t.get("name"), str)
        and isinstance(t.get("description"), str)
        and isinstance(t.get("personality"), str)
        and any(k in t for k in ("nameColor", "boxColor", "personaStats"))
    )


def _is_compatible(t: dict[str, Any]) -> bool:
    ext = t.get("extensions")
    return (
        isinstance(ext, dict)
        and isinstance(ext.get("marinara"), dict)
        and not any(k in t for k in ("spec", "entries", "type", "data"))
        and isinstance(t.get("name"), str)
        and isinstance(t.get("description"), str)
        and isinstance(t.get("personality"), str)
    )


def persona_score(t: Any) -> float:
    if not isinstance(t, dict):
        return 0.0
    if t.get("type") == PERSONA_TYPE:
        return 1.0 if exported(t, PERSONA_TYPE) is not None else 0.0
    if _is_persona_row(t) or _is_compatible(t):
        return 0.95
    return 0.0


PRESET_TYPE = "marinara_preset"


def preset_score(t: Any) -> float:
    data = exported(t, PRESET_TYPE)
    ok = data is not None and isinstance(data.get("preset"), dict) and isinstance(data.get("sections"), list)
    return 0.95 if ok else 0.0


SINGLE = "marinara.regex-script"

BULK = "marinara.regex-scripts"


def _signal(row: dict[str, Any]) -> bool:
    if "targetCharacterIds" in row or "order" in row:
        return True
    p = row.get("placement")
    if isinstance(p, list):
        return "ai_output" in p or "user_input" in p
    return isinstance(p, str) and ('"ai_output"' in p or '"user_input"' in p)


def _is_regex_row(row: Any) -> bool:
    return (
        isinstance(row, dict)
        and isinstance(row.get("findRegex"), str)
        and isinstance(row.get("id", ""), str)
        and "scriptName" not in row
    )


def regex_score(t: Any) -> float:
    if isinstance(t, list):
        # the seed's four gates: non-empty array of objects; no ST scriptName; every row a
        # Marinara row; at least one Marinara-only signal
        if not t or not all(_is_regex_row(r) for r in t):
            return 0.0
        return 0.95 if any(_signal(r) for r in t) else 0.0
    if isinstance(t, dict):
        kind = t.get("kind")
        if kind == BULK and isinstance(t.get("regexScripts"), list):
            return 1.0 if all(isinstance(r, dict) for r in t["regexScripts"]) else 0.0
        if kind == SINGLE and isinstance(t.get("findRegex"), str):
            return 1.0
    return 0.0


STORY_BUNDLE_TYPE = "marinara_story_bundle"


def character(s: Sniff) -> float:
    return character_score(s.json)


def lorebook(s: Sniff) -> float:
    return lorebook_score(s.json)


def persona(s: Sniff) -> float:
    return persona_score(s.json)


def preset(s: Sniff) -> float:
    return preset_score(s.json)


def regex(s: Sniff) -> float:
    return regex_score(s.json)


def story_bundle(s: Sniff) -> float:
    return 1.0 if exported(s.json_object, STORY_BUNDLE_TYPE) is not None else 0.0
