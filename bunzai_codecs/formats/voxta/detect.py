"""Detection of a Voxta package (a zip with ``Characters/<id>/character.json``); imports no
canonical model."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bunzai_codecs.core.format import package_detector

if TYPE_CHECKING:
    from bunzai_codecs.core.archive import ZipReader

CHARACTER = re.compile(r"^Characters/([^/]+)/character\.json$")

#: root members of the other zip card formats (charx/Lumiverse ``card.json``, BYAF ``manifest.json``)
FOREIGN = ("card.json", "manifest.json")


def _no_foreign_root(z: ZipReader) -> bool:
    return not any(f in z for f in FOREIGN)


package = package_detector(".voxpkg", CHARACTER, _no_foreign_root)
