"""Inputs and exports made of several files: a card folder, a text-generation-webui character with
its picture beside it.

A codec reads and writes bytes. An input that is several files reaches it as one **file set**: the
files packed into a zip (stored, names sorted, fixed timestamps: the same files give the same bytes
on every machine), each named by its path relative to the set's folder. A codec that writes such a
format returns a file set too, and says how its members are laid out on disk
(``Codec.layout``): the command line writes them as files, the pipeline keeps the zip (``.zip``).
A user's own zip of the same files reads the same way.

Which files make one input is decided by their names, here, for everyone who lists files (the
command line's folders, the pipeline's listing):

- a folder holding a ``card.yaml`` (:data:`CARD_FILE`) is a **card folder**: everything below it is
  one input (:func:`folder_member` says which files; hidden ones are not, but for the folder's own
  ``.bunzai/`` escrow and ``.gitattributes``);
- ``Name.yaml`` (or ``.yml``) with ``Name.png`` (else ``.jpg``, ``.jpeg``: the order in which
  text-generation-webui looks for a character's picture) in the same folder is one input, the
  character and its picture (:func:`pairs`).

Reading is bounded like any zip (``core/archive``), with room for a card folder's many small files
(:data:`LIMITS`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from bunzai_codecs.core import archive
from bunzai_codecs.core.archive import ArchiveLimits
from bunzai_codecs.core.errors import BunzaiError
from bunzai_codecs.core.sniff import MAX_INPUT_BYTES

if TYPE_CHECKING:
    from bunzai_codecs.core.archive import ZipReader
    from bunzai_codecs.core.sniff import Sniff

#: the file that makes a folder a card folder
CARD_FILE = "card.yaml"
#: a card folder's hidden files that belong to it (its escrow folder, its git attributes)
FOLDER_HIDDEN = (".bunzai", ".gitattributes")
#: the suffixes of a text-generation-webui character file that is YAML
YAML_SUFFIXES = (".yaml", ".yml")
#: the suffixes of a character's picture, in the order text-generation-webui looks for them
PICTURE_SUFFIXES = (".png", ".jpg", ".jpeg")

#: bounds of a file set: a card folder is many small files (a lorebook entry each)
LIMITS = ArchiveLimits(
    max_archive=MAX_INPUT_BYTES, max_entries=20_000, max_entry=64 * 1024 * 1024, max_total=MAX_INPUT_BYTES
)


_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]+')


def safe_stem(name: str) -> str:
    """A file name stem from card text: separators, control and reserved characters replaced,
    leading dots and spaces dropped, at most 100 characters."""
    return _UNSAFE.sub("_", " ".join(name.split())).strip(" .")[:100]


def pack(files: Mapping[str, bytes]) -> bytes:
    """The file set of ``files`` (relative ``a/b`` names -> bytes): a stored zip, names sorted."""
    return archive.write_zip(
        ((name, files[name]) for name in sorted(files)), method=archive.ZIP_STORED, level=0
    )


def listing(s: Sniff) -> ZipReader | None:
    """The file set ``s`` holds, listed within :data:`LIMITS` (once per input), or None when ``s``
    is not a readable zip."""
    if not s.is_zip:
        return None
    try:
        return s.memo("fileset", lambda: archive.open_zip(s.data, limits=LIMITS))
    except BunzaiError:
        return None


def require(s: Sniff) -> ZipReader:
    """The file set ``s`` holds, or the typed error saying why it is none."""
    return s.memo("fileset", lambda: archive.open_zip(s.data, limits=LIMITS))


def files_of(z: ZipReader) -> dict[str, bytes]:
    """Every file of a listed set (folders left out), read bounded."""
    return {n: z.read(n) for n in z.names if not n.endswith("/")}


def stem(name: str) -> str:
    """``Name.yaml`` -> ``Name``."""
    base = name.rsplit("/", 1)[-1]
    dot = base.rfind(".")
    return base[:dot] if dot > 0 else base


def suffix(name: str) -> str:
    """``Name.YAML`` -> ``.yaml``."""
    base = name.rsplit("/", 1)[-1]
    dot = base.rfind(".")
    return base[dot:].lower() if dot > 0 else ""


def pairs(names: Iterable[str]) -> dict[str, str]:
    """The character YAML -> picture pairs among the file names of one folder: ``Name.yaml`` (or
    ``.yml``) with ``Name.png`` (else ``.jpg``, ``.jpeg``). The stem must match exactly; one picture
    belongs to one YAML (``Name.yaml`` before ``Name.yml``)."""
    by_stem: dict[str, dict[str, str]] = {}
    for n in names:
        by_stem.setdefault(stem(n), {}).setdefault(suffix(n), n)
    out: dict[str, str] = {}
    for group in by_stem.values():
        yaml = next((group[s] for s in YAML_SUFFIXES if s in group), None)
        picture = next((group[s] for s in PICTURE_SUFFIXES if s in group), None)
        if yaml is not None and picture is not None:
            out[yaml] = picture
    return out


def is_card_folder(names: Iterable[str]) -> bool:
    """Whether a folder whose files are ``names`` is a card folder."""
    return CARD_FILE in names


def folder_member(rel: str) -> bool:
    """Whether the file at ``rel`` (relative to a card folder) belongs to the card folder's set:
    every file but hidden ones (a name starting with ``.`` anywhere: ``.git/``, ``.DS_Store``),
    except the folder's own :data:`FOLDER_HIDDEN`."""
    parts = rel.split("/")
    for i, part in enumerate(parts):
        if part.startswith(".") and not (i == 0 and part in FOLDER_HIDDEN):
            return False
    return True


__all__ = [
    "CARD_FILE",
    "FOLDER_HIDDEN",
    "LIMITS",
    "PICTURE_SUFFIXES",
    "YAML_SUFFIXES",
    "files_of",
    "folder_member",
    "is_card_folder",
    "listing",
    "pack",
    "pairs",
    "require",
    "safe_stem",
    "stem",
    "suffix",
]
