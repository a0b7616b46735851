"""Detection of RoleCall's files; imports no canonical model."""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core.format import object_detector
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.formats.sillytavern.detect import is_preset
from bunzai_codecs.formats.tavern.png import card_extensions, png_card_trees

#: RoleCall's ``extensions`` key on a card (a character's, and its persona card's: ``type: "persona"``);
#: the character card's mark is its row's in ``formats/table.py``
ROLECALL = "rolecall"

SPEC = "rolecall_persona"

RCPERSONA = "rcpersona"

RCPERSONA_SHAPE = "rcpersona"

CARD_SHAPE = "card"


def peel(tree: Any) -> tuple[Any, tuple[str, ...]]:
    """The persona object inside the library-export and ``{persona}`` wrappers, and its path."""
    path: tuple[str, ...] = ()
    if (
        isinstance(tree, dict)
        and "spec" not in tree
        and ("exportedAt" in tree or "type" in tree)
        and isinstance(tree.get("data"), dict)
    ):
        tree, path = tree["data"], ("data",)
    if isinstance(tree, dict) and "spec" not in tree and isinstance(tree.get("persona"), dict):
        tree, path = tree["persona"], (*path, "persona")
    return tree, path


def shape_of(t: Any) -> str | None:
    """``rcpersona``, ``card`` or ``None`` for a peeled tree."""
    if not isinstance(t, dict):
        return None
    if t.get("spec") == SPEC and isinstance(t.get("data"), dict):
        return RCPERSONA_SHAPE
    ext = card_extensions(t)
    bag = ext.get(ROLECALL) if ext is not None else None
    if isinstance(bag, dict) and bag.get("type") == "persona":
        return CARD_SHAPE
    return None


def is_rolecall_preset(t: Any) -> bool:
    """An ST preset with a RoleCall fingerprint (see ``rolecall/preset.py``)."""
    if not isinstance(t, dict) or not is_preset(t):
        return False
    if "exportedAt" in t and "data" in t:
        return False  # RoleCall's library wrapper, not a preset file
    ext = t.get("extensions")
    return (
        isinstance(t.get("macro_engine_yaml"), str)
        or isinstance(t.get("choice_groups"), list)
        or (isinstance(ext, dict) and isinstance(ext.get("linkedRegexScripts"), list))
    )


SCHEMA_VERSION = "1.0.0"


def is_rolecall_export(tree: Any) -> bool:
    """The detection rule: ``schemaVersion`` string containing ``1.0.0`` and ``lorebook.entries`` array."""
    if not isinstance(tree, dict):
        return False
    sv = tree.get("schemaVersion")
    book = tree.get("lorebook")
    return (
        isinstance(sv, str)
        and SCHEMA_VERSION in sv
        and isinstance(book, dict)
        and isinstance(book.get("entries"), list)
    )


def is_rolecall_script(t: Any) -> bool:
    """The detection rule (see ``rolecall/regex.py``)."""
    if not isinstance(t, dict):
        return False
    rules = t.get("rules")
    if not isinstance(rules, list) or not rules:
        return False
    return all(isinstance(r, dict) and ("find_pattern" in r or "replace_string" in r) for r in rules)


def persona(s: Sniff) -> float:
    if s.is_png:
        if s.png_text(RCPERSONA) is not None:
            return 1.0
        return 1.0 if any(shape_of(peel(t)[0]) is not None for t in png_card_trees(s)) else 0.0
    return 1.0 if shape_of(peel(s.json_object)[0]) is not None else 0.0


preset = object_detector(is_rolecall_preset, 0.95)
lorebook = object_detector(is_rolecall_export, 1.0)
regex = object_detector(is_rolecall_script, 0.9)
