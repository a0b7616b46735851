"""The command line's inputs: a file, or several files that are one input (``core/fileset``).

``bunzai detect``, ``inspect``, ``convert`` and ``fidelity`` name files and folders. Most inputs
are one file; two kinds are several, by the rules of ``core/fileset``:

- a **card folder** (a folder holding ``card.yaml``), named itself or found in a folder walked: one
  input, everything below it (nothing below it is an input of its own);
- a text-generation-webui character ``Name.yaml`` with ``Name.png`` (``.jpg``, ``.jpeg``) beside it,
  found in a folder walked or both named on the command line: one input.

An :class:`Input` reads as the bytes a codec decodes: a file's own bytes, or the file set of its
files. Reading is bounded (``core.sniff.MAX_INPUT_BYTES`` in all) and a card folder's symbolic links
are refused (a link could point anywhere on the disk), with the typed error naming the path.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from bunzai_codecs.core import fileset
from bunzai_codecs.core.errors import LimitExceeded, Malformed
from bunzai_codecs.core.sniff import MAX_INPUT_BYTES


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


__all__ = ["Input", "inputs", "is_card_folder", "one_input", "walk"]
