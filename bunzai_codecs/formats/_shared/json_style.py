"""How a JSON file was laid out, so an unedited one is written back byte for byte.

Most formats write two-space JSON whatever their source looked like (a same-format round trip
keeps the tree). A format whose app writes one exact serialisation — KoboldAI Lite's
``JSON.stringify(save)``, the KoboldAI client's ``json.dumps(save, indent=3)``, NovelAI's
``JSON.stringify`` of a story — records the layout its file had as a twin facet (a short name, see
:data:`STYLES`) and writes an unedited tree in it again, the bytes equal to the source's; an edited
tree is written in the same layout, so the file still looks like the app's own.

:func:`detect` only names a layout it verified: the tree written in it must give the input's
bytes exactly (JavaScript's number spelling and escapes through ``risu.jsformat.stringify``,
Python's through ``json.dumps``), else it is ``None`` and the format's default applies.
"""

from __future__ import annotations

import json
from typing import Any

from bunzai_codecs.formats.risu.jsformat import stringify

#: layout name -> (writer, indent): ``js`` is JavaScript's ``JSON.stringify(v, null, indent)``,
#: ``py`` Python's ``json.dumps(v, indent=indent)`` (ASCII escapes; ``", "`` between items when
#: compact). A trailing newline is kept as a ``+nl`` suffix of the name.
STYLES: dict[str, tuple[str, int | str]] = {
    "js": ("js", 0),
    "js-indent2": ("js", 2),
    "js-indent4": ("js", 4),
    "js-tab": ("js", "\t"),
    "py": ("py", 0),
    "py-indent2": ("py", 2),
    "py-indent3": ("py", 3),
    "py-indent4": ("py", 4),
}
NEWLINE = "+nl"


def dumps(tree: Any, style: str) -> bytes:
    """``tree`` written in layout ``style`` (a :data:`STYLES` name, optionally ``+nl``)."""
    base, nl = (style[: -len(NEWLINE)], "\n") if style.endswith(NEWLINE) else (style, "")
    writer, indent = STYLES[base]
    if writer == "js":
        text = stringify(tree, indent)
    elif indent == 0:
        text = json.dumps(tree)
    else:
        text = json.dumps(tree, indent=indent)
    return (text + nl).encode("utf-8")


def _candidates(data: bytes) -> list[str]:
    """The layouts worth trying for ``data``, from its first line: its indent (none: compact)."""
    head = data[:4096]
    nl = head.find(b"\n")
    if nl < 0 or nl > 1:  # one line, or a first line longer than ``{``: compact
        return ["js", "py"]
    line = head[nl + 1 :]
    if line[:1] == b"\t":
        return ["js-tab"]
    width = len(line) - len(line.lstrip(b" "))
    return [name for name, (_, indent) in STYLES.items() if indent == width]


def detect(data: bytes, tree: Any) -> str | None:
    """The layout whose writing of ``tree`` gives ``data`` exactly, else ``None`` (a BOM, CRLF line
    ends, key spacing no writer makes). At most two candidate writes, chosen by the first line."""
    if data[:1] not in (b"{", b"["):
        return None
    body, nl = (data[:-1], NEWLINE) if data.endswith(b"\n") else (data, "")
    for name in _candidates(body):
        try:
            if dumps(tree, name) == body:
                return name + nl
        except (TypeError, ValueError, RecursionError):
            return None
    return None


__all__ = ["NEWLINE", "STYLES", "detect", "dumps"]
