"""Detection of a card folder (``formats/folder``); imports no canonical model.

A card folder reaches a codec as a file set (``core/fileset``): a zip of its files named relative
to the folder. One with ``card.yaml`` at its top is certainly a card folder (a user's zip of the
folder itself, ``mycard/card.yaml``..., too). A ``card.yaml`` read on its own (its texts are the
files beside it) is recognised by its ``card_folder`` key, so that its decoder can say to read the
folder.
"""

from __future__ import annotations

from bunzai_codecs.core import fileset, yamlio
from bunzai_codecs.core.sniff import Sniff

#: the key that marks bunzai's ``card.yaml``
MARK = "card_folder"


def root_of(names: tuple[str, ...] | list[str]) -> str | None:
    """The prefix of a file set's card folder: ``""`` when ``card.yaml`` is at its top, ``"x/"``
    when every member is below one folder ``x`` holding it (a zip of the folder), else None."""
    if fileset.CARD_FILE in names:
        return ""
    tops = {n.split("/", 1)[0] for n in names}
    if len(tops) == 1:
        top = next(iter(tops))
        if f"{top}/{fileset.CARD_FILE}" in names:
            return f"{top}/"
    return None


def card_folder(s: Sniff) -> float:
    if s.is_zip:
        z = fileset.listing(s)
        return 1.0 if z is not None and root_of(z.names) is not None else 0.0
    if MARK not in yamlio.top_keys(s):
        return 0.0
    t = yamlio.mapping(s)
    if t is None:
        return yamlio.BROKEN if yamlio.broken(s) else 0.0
    return 0.9 if MARK in t else 0.0
