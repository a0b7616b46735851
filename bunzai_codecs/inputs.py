"""The command line's inputs: a file, several files that are one input (``core/fileset``), or the
files inside a zip of files.

``bunzai detect``, ``inspect``, ``convert`` and ``fidelity`` name files and folders. Most inputs
are one file; two kinds are several, by the rules of ``core/fileset``:

- a **card folder** (a folder holding ``card.yaml``), named itself or found in a folder walked: one
  input, everything below it (nothing below it is an input of its own);
- a text-generation-webui character ``Name.yaml`` with ``Name.png`` (``.jpg``, ``.jpeg``) beside it,
  found in a folder walked or both named on the command line: one input.

An :class:`Input` reads as the bytes a codec decodes: a file's own bytes, or the file set of its
files. Reading is bounded (``core.sniff.MAX_INPUT_BYTES`` in all) and a card folder's symbolic links
are refused (a link could point anywhere on the disk), with the typed error naming the path.

**A zip of files.** ``detect``, ``inspect`` and ``convert`` read the files inside a zip that no
format recognises (a backup, a folder someone zipped) the way ``bunzai normalize`` reads an archive
given as ``--input``: each member is an input of its own (:func:`zip_members`), named by its chain
URL (``zip://cards/a.png::dump.zip``), read with the bounds of every zip bunzai opens
(``core.archive.DEFAULT_LIMITS``: size, member count, each member's size and ratio, the total; every
name checked before anything is inflated), and grouped by the same rules as a folder: a card folder
inside the zip is one input (``zip://cards/mycard::dump.zip``), a character YAML with its picture
beside it one. A zip that is a format's own file (a ``.charx``, a ``.byaf``, a Voxta package, a
Lumiverse zip, a zip of one card folder) is that format's, as always. A zip of files that cannot be
read (truncated, over a bound) is not expanded: decoding it says why, in one line
(``Malformed``/``LimitExceeded`` with the byte offset or the member).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from bunzai_codecs.core import fileset
from bunzai_codecs.core.errors import BunzaiError, LimitExceeded, Malformed
from bunzai_codecs.core.sniff import MAX_INPUT_BYTES, ZIP_MAGIC, Sniff


@dataclass(frozen=True)
class Input:
    """One input: ``path`` is the file, the card folder, or a character's YAML; ``picture`` the
    picture read with that YAML; ``folder`` whether ``path`` is a card folder."""

    path: Path
    picture: Path | None = None
    folder: bool = False

    @property
    def name(self) -> str:
        """The input's name for detection and decoding (the YAML's, the card folder's)."""
        return self.path.name

    def __str__(self) -> str:
        if self.folder:
            return f"{self.path}{os.sep}"
        if self.picture is not None:
            return f"{self.path} (+ {self.picture.name})"
        return str(self.path)

    def read(self) -> bytes:
        """The bytes a codec reads (see the module docstring). Raises ``LimitExceeded`` or
        ``Malformed`` (with the input's uri) or ``OSError``."""
        if self.folder:
            return fileset.pack(_folder_files(self.path))
        if self.picture is not None:
            total = self.path.stat().st_size + self.picture.stat().st_size
            _check_size(total, self.path)
            return fileset.pack(
                {self.path.name: self.path.read_bytes(), self.picture.name: self.picture.read_bytes()}
            )
        _check_size(self.path.stat().st_size, self.path)
        return self.path.read_bytes()


def _check_size(size: int, where: Path) -> None:
    if size > MAX_INPUT_BYTES:
        raise LimitExceeded(f"input is {size} bytes; the limit is {MAX_INPUT_BYTES}", uri=str(where))


def _folder_files(folder: Path) -> dict[str, bytes]:
    """Every file of the card folder ``folder`` (``fileset.folder_member``), bounded; a symbolic
    link anywhere below it is refused."""
    files: dict[str, Path] = {}
    total = 0
    for root, dirs, names in os.walk(folder):
        here = Path(root)
        rel_root = here.relative_to(folder).as_posix()
        for d in sorted(dirs):
            if (here / d).is_symlink():
                rel = d if rel_root == "." else f"{rel_root}/{d}"
                if fileset.folder_member(rel):
                    raise Malformed(f"{rel}: a symbolic link in a card folder is not read", uri=str(folder))
        dirs[:] = sorted(
            d for d in dirs if fileset.folder_member(d if rel_root == "." else f"{rel_root}/{d}")
        )
        for n in sorted(names):
            rel = n if rel_root == "." else f"{rel_root}/{n}"
            if not fileset.folder_member(rel):
                continue
            p = here / n
            if p.is_symlink():
                raise Malformed(f"{rel}: a symbolic link in a card folder is not read", uri=str(folder))
            total += p.stat().st_size
            _check_size(total, folder)
            files[rel] = p
            if len(files) > fileset.LIMITS.max_entries:
                raise LimitExceeded(
                    f"a card folder of more than {fileset.LIMITS.max_entries} files", uri=str(folder)
                )
    return {rel: p.read_bytes() for rel, p in files.items()}


def is_card_folder(p: Path) -> bool:
    return p.is_dir() and (p / fileset.CARD_FILE).is_file()


def walk(folder: Path) -> Iterator[Input]:
    """Every input below ``folder`` (sorted; names starting with ``.`` skipped), grouped: a card
    folder is one input and nothing below it another; a character YAML takes its picture."""
    if is_card_folder(folder):
        yield Input(folder, folder=True)
        return
    for root, dirs, files in os.walk(folder):
        here = Path(root)
        names = sorted(f for f in files if not f.startswith("."))
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        if here != folder and fileset.is_card_folder(names):
            dirs[:] = []
            yield Input(here, folder=True)
            continue
        yield from _group(here, names)


def _group(here: Path, names: Sequence[str]) -> Iterator[Input]:
    """The inputs files ``names`` of one folder make: each YAML with its picture, the rest alone."""
    pairs = fileset.pairs(names)
    taken = set(pairs.values())
    for n in names:
        if n in taken:
            continue
        picture = pairs.get(n)
        yield Input(here / n, here / picture if picture is not None else None)


def inputs(paths: Sequence[str], empty: list[Path] | None = None) -> Iterator[Input]:
    """The inputs the command line names: a file (a character YAML and its picture both named make
    one input), a card folder, or a folder walked (:func:`walk`). A walked folder without any input
    is added to ``empty``."""
    named = [Path(p) for p in paths]
    files = [p for p in named if not p.is_dir()]
    # a YAML and its picture named side by side are one input
    pairs: dict[Path, Path] = {}
    by_folder: dict[Path, list[str]] = {}
    for p in files:
        by_folder.setdefault(p.parent, []).append(p.name)
    for parent, names in by_folder.items():
        for y, pic in fileset.pairs(names).items():
            pairs[parent / y] = parent / pic
    taken = set(pairs.values())
    for p in named:
        if p.is_dir():
            n = 0
            for inp in walk(p):
                n += 1
                yield inp
            if not n and empty is not None:
                empty.append(p)
        elif p not in taken:
            yield Input(p, pairs.get(p))


def one_input(paths: Sequence[str]) -> Input | None:
    """The single input ``paths`` name when they name one (a file, a card folder, a character YAML
    with its picture), else None (several inputs, or a folder to walk)."""
    named = [Path(p) for p in paths]
    if len(named) == 1:
        p = named[0]
        if is_card_folder(p):
            return Input(p, folder=True)
        return None if p.is_dir() else Input(p)
    if len(named) == 2 and not any(p.is_dir() for p in named):
        found = list(inputs(paths))
        return found[0] if len(found) == 1 else None
    return None


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
    """The inputs of ``data`` when it is a zip of files (see the module docstring), in the zip's
    order (a group where its first file is), folders and hidden names left out; None when it is not
    one: not a zip, a format's own zip, or a zip that cannot be listed (its decode then says why)."""
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
    for name, base, parts in _zip_groups([m.name for m in z.members if not m.is_dir]):
        label = f"zip://{name}::{uri}"
        try:
            if parts is None:
                out.append(Member(name, label, z.read(name)))
            else:  # several files that are one input: their file set
                out.append(Member(name, label, fileset.pack({rel: z.read(base + rel) for rel in parts})))
        except BunzaiError as exc:
            out.append(Member(name, label, None, exc.with_uri(label)))
    return out


def _zip_groups(names: Sequence[str]) -> list[tuple[str, str, tuple[str, ...] | None]]:
    """The inputs among a zip's file names, grouped as a folder walked (:func:`walk`) groups files:
    ``(name, base, parts)`` for a card folder below the zip's top (its path, ``path/``, its files'
    paths relative to it; nothing below it is an input of its own) and for a character YAML with
    its picture (the YAML's path, its folder, both files' names); ``(path, "", None)`` for every
    other file not hidden."""
    cards = sorted(
        {n[: -len(fileset.CARD_FILE) - 1] for n in names if n.endswith(f"/{fileset.CARD_FILE}")}, key=len
    )
    roots: list[str] = []
    for c in cards:  # the outermost card folders: one inside another is its files
        if not _hidden(c) and not any(c.startswith(f"{r}/") for r in roots):
            roots.append(c)
    members: dict[str, list[str]] = {r: [] for r in roots}
    first: dict[str, int] = {}
    alone: list[tuple[int, str]] = []
    for i, n in enumerate(names):
        root = next((r for r in roots if n.startswith(f"{r}/")), None)
        if root is None:
            if not _hidden(n):
                alone.append((i, n))
        elif fileset.folder_member(n[len(root) + 1 :]):
            members[root].append(n[len(root) + 1 :])
            first.setdefault(root, i)
    by_folder: dict[str, list[str]] = {}
    for _i, n in alone:
        folder, _, base = n.rpartition("/")
        by_folder.setdefault(folder, []).append(base)
    pairs: dict[str, tuple[str, str]] = {}  # the YAML's path -> (its folder, its picture's name)
    for folder, bases in by_folder.items():
        prefix = f"{folder}/" if folder else ""
        for y, pic in fileset.pairs(bases).items():
            pairs[prefix + y] = (prefix, pic)
    pictures = {prefix + pic for prefix, pic in pairs.values()}
    found: list[tuple[int, str, str, tuple[str, ...] | None]] = [
        (first[r], r, f"{r}/", tuple(members[r])) for r in roots if r in first
    ]
    for i, n in alone:
        if n in pairs:
            prefix, pic = pairs[n]
            found.append((i, n, prefix, (n[len(prefix) :], pic)))
        elif n not in pictures:
            found.append((i, n, "", None))
    return [(n, base, parts) for _i, n, base, parts in sorted(found)]


def no_members(uri: str) -> str:
    """The one line for a zip of files that holds no file."""
    return f"{uri}: a zip with no input files in it"


__all__ = ["Input", "Member", "inputs", "is_card_folder", "no_members", "one_input", "walk", "zip_members"]
