"""Detection of KoboldAI's story saves and world info exports; imports no canonical model.

A **save** is what KoboldAI Lite (and KoboldCpp, which embeds it) and the KoboldAI client write
for a story: a JSON object with ``gamestarted`` beside ``prompt``/``memory``/``actions``/
``worldinfo`` (the client's loader reads those keys; NovelAI's importer recognises a KoboldAI save
by ``gamestarted`` alone). KoboldAI United's own format (``file_version``, ``worldinfo_v2``) is
another shape and is not claimed.

A **world info export** is KoboldAI Lite's "export world info" file: a JSON array of its world info
entries, each ``{key, content, ...}`` with Lite's entry keys. An AI Dungeon world info export is an
array too, of ``{keys, entry}``: it is decided by those keys, not by the file's suffix, and is not
claimed.
"""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core.sniff import Sniff

#: the keys of a save besides ``gamestarted``, one of which a save has
SAVE_KEYS = ("prompt", "memory", "actions", "worldinfo", "authorsnote")
#: the keys every KoboldAI world info entry Lite writes has besides ``key`` and ``content`` (the
#: client's too; Lite adds ``keyanti``, ``probability``, ``wigroup``, ``widisabled``). RisuAI's lore
#: rows also have ``key``, ``content``, ``comment`` and ``selective``, but ``secondkey`` and
#: ``alwaysActive``
ENTRY_KEYS = ("keysecondary", "constant")

SAVE = "save"
WORLD_INFO = "worldinfo"


def is_save(t: Any) -> bool:
    return (
        isinstance(t, dict)
        and isinstance(t.get("gamestarted"), bool)
        and "file_version" not in t
        and any(k in t for k in SAVE_KEYS)
    )


def is_entry(e: Any) -> bool:
    """A world info entry as KoboldAI Lite exports it: ``key`` and ``content`` text beside
    ``keysecondary`` and ``constant`` (AI Dungeon's entries are ``{keys, entry}``)."""
    return (
        isinstance(e, dict)
        and isinstance(e.get("key"), str)
        and isinstance(e.get("content"), str)
        and all(k in e for k in ENTRY_KEYS)
    )


def is_world_info(t: Any) -> bool:
    return isinstance(t, list) and bool(t) and all(is_entry(e) for e in t)


def shape_of(t: Any) -> str | None:
    """``save``, ``worldinfo`` or ``None``."""
    return SAVE if is_save(t) else WORLD_INFO if is_world_info(t) else None


def save(s: Sniff) -> float:
    t = s.json
    if is_save(t):
        return 0.95
    if is_world_info(t):
        return 0.85
    return 0.0


__all__ = [
    "ENTRY_KEYS",
    "SAVE",
    "SAVE_KEYS",
    "WORLD_INFO",
    "is_entry",
    "is_save",
    "is_world_info",
    "save",
    "shape_of",
]
