"""A zip of files as inputs: ``bunzai detect``, ``inspect`` and ``convert`` read the files inside a
zip that no format recognises (a backup, a folder someone zipped) the way ``bunzai normalize``
reads an archive given as ``--input``: each member is an input of its own, named by its chain URL
(``zip://cards/a.png::dump.zip``), read with the bounds of every zip bunzai opens
(``core.archive.DEFAULT_LIMITS``: size, member count, each member's size and ratio, the total; every
name checked before anything is inflated). A zip that is a format's own file (a ``.charx``, a
``.byaf``, a Voxta package, a Lumiverse zip) is that format's, as always.

A zip of files that cannot be read (truncated, over a bound) is not expanded: decoding it says why,
in one line (``Malformed``/``LimitExceeded`` with the byte offset or the member).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from bunzai_codecs.core.errors import BunzaiError
from bunzai_codecs.core.sniff import ZIP_MAGIC, Sniff


@dataclass(frozen=True)
class Member:
    """One file inside a zip of files."""

    #: the member's path inside the zip (``cards/a.png``)
    name: str
    #: how messages and reports name it: ``zip://cards/a.png::dump.zip``
    label: str
    #: its bytes, or None when it could not be read (``error`` says why)
    data: bytes | None
    error: BunzaiError | None = None

    @property
    def basename(self) -> str:
        return PurePosixPath(self.name).name

    @property
    def folder(self) -> str:
        """The member's folder inside the zip (``cards``, or ``""``)."""
        parent = PurePosixPath(self.name).parent.as_posix()
        return "" if parent == "." else parent


def _hidden(name: str) -> bool:
    """Names a folder walk skips too (``.git``, ``.DS_Store``), and macOS's resource forks."""
    parts = name.split("/")
    return parts[0] == "__MACOSX" or any(p.startswith(".") for p in parts)


def zip_members(data: bytes, uri: str) -> list[Member] | None:
    """The files of ``data`` when it is a zip of files (see the module docstring), in the zip's
    order, folders and hidden names left out; None when it is not one: not a zip, a format's own
    zip, or a zip that cannot be listed (its decode then says why)."""
    if data[:4] != ZIP_MAGIC:
        return None
    from bunzai_codecs.core import registry

    s = Sniff(data, uri.rsplit("/", 1)[-1], uri=uri)
    if registry.detect(s) is not None:
        return None
    z = s.zip
    if z is None:
        return None
    out = []
    for m in z.members:
        if m.is_dir or _hidden(m.name):
            continue
        label = f"zip://{m.name}::{uri}"
        try:
            out.append(Member(m.name, label, z.read(m.name)))
        except BunzaiError as exc:
            out.append(Member(m.name, label, None, exc.with_uri(label)))
    return out


def no_members(uri: str) -> str:
    """The one line for a zip of files that holds no file."""
    return f"{uri}: a zip with no input files in it"


__all__ = ["Member", "no_members", "zip_members"]
