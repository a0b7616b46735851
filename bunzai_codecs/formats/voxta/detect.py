"""Detection of a Voxta package (a zip with ``Characters/<id>/character.json``); imports no
canonical model."""

from __future__ import annotations

import re

from bunzai_codecs.core.sniff import Sniff

CHARACTER = re.compile(r"^Characters/([^/]+)/character\.json$")

#: root members of the other zip card formats (charx/Lumiverse ``card.json``, BYAF ``manifest.json``)
FOREIGN = ("card.json", "manifest.json")


def package(s: Sniff) -> float:
    if not s.is_zip:
        return 0.0
    z = s.zip
    if z is None:
        return 0.5 if s.suffix == ".voxpkg" else 0.0
    if any(f in z for f in FOREIGN):
        return 0.0
    if any(CHARACTER.match(n) for n in z.names):
        return 1.0
    return 0.6 if s.suffix == ".voxpkg" else 0.0
