"""A story app's memory and author's note as lorebook entries.

KoboldAI (Lite, KoboldCpp, the client) and NovelAI keep two texts beside a story's world info: the
**memory**, inserted at the top of every prompt, and the **author's note**, inserted a few lines
before its end. Their files are read as lorebooks, and a lorebook has one place for text that is
always inserted: a constant entry. So each note becomes one constant entry with a fixed id, which
every lorebook format can carry and which the two story formats map back to their own fields:

- ``memory`` (title ``Memory``): constant, at the book's default position (``world``: before
  everything else the book inserts);
- ``authors-note`` (title ``Author's Note``): constant, ``position: depth`` with ``depth: 3``
  (KoboldAI's default distance in actions from the end; NovelAI puts it 4 units from the bottom,
  KoboldAI Lite ~320 characters from the end).

An empty note is no entry. On the way back an entry is a note when its id is one of these and it
is constant; any other entry is ordinary world info.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bunzai_codecs.entities.lorebook import LoreEntry

MEMORY = "memory"
AUTHORS_NOTE = "authors-note"
#: depth of the author's note entry (KoboldAI's default ``andepth``)
NOTE_DEPTH = 3


def memory_entry(text: str) -> dict[str, Any]:
    """The canonical entry of a memory text."""
    return {"id": MEMORY, "title": "Memory", "content": text, "constant": True}


def note_entry(text: str) -> dict[str, Any]:
    """The canonical entry of an author's note."""
    return {
        "id": AUTHORS_NOTE,
        "title": "Author's Note",
        "content": text,
        "constant": True,
        "position": "depth",
        "depth": NOTE_DEPTH,
    }


def is_note(e: LoreEntry, note_id: str) -> bool:
    return e.id == note_id and e.constant


def note_text(entries: Iterable[LoreEntry], note_id: str) -> str:
    """The text of note ``note_id`` (``MEMORY``, ``AUTHORS_NOTE``) among ``entries``; ``""`` when none."""
    return next((e.content for e in entries if is_note(e, note_id)), "")


def notes_out_of_place(entries: Any) -> bool:
    """Whether the note entries of ``entries`` (a body's dumped entry list) are not where a story
    file's reader puts them, first (the memory, then the author's note): the file keeps the notes
    apart from its world info, so such a book reads back with its notes moved to the front."""
    if not isinstance(entries, list):
        return False
    notes = [
        i
        for i, e in enumerate(entries)
        if isinstance(e, dict) and e.get("constant") is True and e.get("id") in (MEMORY, AUTHORS_NOTE)
    ]
    ids = [entries[i]["id"] for i in notes]
    return notes != list(range(len(notes))) or ids not in (
        [],
        [MEMORY],
        [AUTHORS_NOTE],
        [MEMORY, AUTHORS_NOTE],
    )


#: the coverage note of :func:`notes_out_of_place`
NOTES_FIRST = "the memory and the author's note are kept apart from the world info: they read back first"

__all__ = [
    "AUTHORS_NOTE",
    "MEMORY",
    "NOTES_FIRST",
    "NOTE_DEPTH",
    "is_note",
    "memory_entry",
    "note_entry",
    "note_text",
    "notes_out_of_place",
]
