"""Detection of NovelAI's files (a lorebook, a PNG with a ``naidata`` book, a scenario's book, a
preset, a story); imports no canonical model."""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core.format import object_detector
from bunzai_codecs.core.sniff import Sniff

PNG_KEYWORD = "naidata"


def is_book(tree: Any) -> bool:
    v = tree.get("lorebookVersion") if isinstance(tree, dict) else None
    return isinstance(v, int | float) and not isinstance(v, bool) and isinstance(tree.get("entries"), list)


def is_scenario(tree: Any) -> bool:
    v = tree.get("scenarioVersion") if isinstance(tree, dict) else None
    return isinstance(v, int | float) and not isinstance(v, bool) and is_book(tree.get("lorebook"))


def is_story(tree: Any) -> bool:
    """A ``.story``: NovelAI's story container, ``{storyContainerVersion, metadata, content}``
    (NovelAI's own importer knows one by ``storyContainerVersion``)."""
    v = tree.get("storyContainerVersion") if isinstance(tree, dict) else None
    return isinstance(v, int | float) and not isinstance(v, bool) and isinstance(tree.get("content"), dict)


def is_preset(t: Any) -> bool:
    if not isinstance(t, dict) or isinstance(t.get("presetVersion"), bool):
        return False
    params = t.get("parameters")
    return (
        isinstance(t.get("presetVersion"), int | float)
        and isinstance(params, dict)
        and any(k in params for k in ("order", "temperature", "max_length", "textGenerationSettingsVersion"))
    )


def lorebook(s: Sniff) -> float:
    tree = s.json_object
    if tree is not None:
        return 1.0 if is_book(tree) else 0.9 if is_scenario(tree) else 0.0
    if s.is_png and s.png_text(PNG_KEYWORD) is not None:
        return 1.0
    return 0.0


preset = object_detector(is_preset, 0.95)

story = object_detector(is_story, 1.0)
