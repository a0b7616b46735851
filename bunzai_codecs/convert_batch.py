"""Batch ``bunzai convert PATH... --to FMT -o OUTDIR/``: every input file below the given folders
and globs converted into one folder, each on its own (as a single convert with ``-o FILE`` would),
on several processes, with the same files and bytes whatever their number.

1. :func:`list_inputs` names the inputs and the sub-folder of OUTDIR each one goes to: below a
   folder its relative folder, below a glob the folder before the first wildcard, a file named
   alone the top. A card folder, and a character YAML with its picture, are one input each
   (``bunzai_codecs.inputs``). A path that does not exist, a folder with no input file (names
   starting with ``.`` are skipped), a glob matching none and a zip of files holding none end the
   batch before anything is converted.
2. :func:`convert_one` (in a worker process, or in-process with ``-j 1``) converts one input into
   its own staging folder (in a hidden one inside OUTDIR), names the first file after the input
   (:func:`bunzai_codecs.convert.source_stem`) and the rest as a single convert does, reads them
   back for the loss report, and returns an :class:`Outcome`: the files, or the input's one-line
   typed error. One input failing never stops the others.
3. :func:`name_outputs` gives every input's files names no earlier input's have (an input that
   would write an earlier one's name gets its source's suffix after its stem,
   ``quill.lumiverse-zip.png``; a card folder's folder, ``quill-zip/``), the same whatever the
   number of processes; :func:`commit` then
   moves the staged files into OUTDIR, only once every input is done and nothing is in the way: an
   existing file (without ``force``) or a file where a folder is needed refuse the whole batch, and
   OUTDIR is left as it was. With ``force``, a card folder written over an existing one replaces
   its card files whole (``convert.stale_files``).

A zip of files (``bunzai_codecs.inputs``) given or found is its members: each an input going to its
folder inside the zip, below the zip's own folder (a card folder inside it, a character YAML with
its picture, one input each).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bunzai_codecs.core.errors import BunzaiError
from bunzai_codecs.core.files import OutputError, ensure_folder
from bunzai_codecs.core.sniff import MAX_INPUT_BYTES, ZIP_MAGIC
from bunzai_codecs.inputs import Input, Member, inputs, is_card_folder, one_input, walk


class InputsError(Exception):
    """An input path names no file (the CLI prints it, one line, and exits 3)."""


class Refused(Exception):
    """The batch would overwrite a file (exit 2, nothing written)."""


@dataclass(frozen=True)
class Job:
    """One input to convert: the file (or the files of one input), the sub-folder of the output it
    goes to (``a/b``, or ``""``) and what to convert it to."""

    source: Input
    folder: str
    staging: Path
    to: str
    source_format: str | None = None
    kind: str | None = None
    image: bytes | None = None
    #: a member of a zip of files: its bytes (read by the main process, bounded), name and label
    member: Member | None = None


@dataclass
class Outcome:
    """What one input gave: its files (paths relative to the output folder, in the order a single
    convert writes them) and a loss summary per written entity, or its error."""

    #: how the input is named to the user (a file, ``mycard/``, ``zip://a.png::dump.zip``)
    source: str
    #: the input's own staging folder (its files are relative to it)
    staging: Path
    #: the files as staged (relative to ``staging``); ``commit`` may give them other names in the
    #: output folder (``finals``), when another input would write one of them
    files: list[str] = field(default_factory=list)
    #: the stem every file of this input starts with (``source_stem``) and the source's suffix as
    #: a stem can hold it (``source_tag``: ``-zip``), for those other names
    stem: str = ""
    tag: str = ""
    #: each file's name in the output folder (``files`` unless renamed)
    finals: list[str] = field(default_factory=list)
    #: the card folders among ``files``' folders (as staged) and their format: ``--force``
    #: replaces such a folder's card files whole (``convert.stale_files``)
    trees: list[tuple[str, str]] = field(default_factory=list)
    #: (file, one-line loss summary) per written entity
    summaries: list[tuple[str, str]] = field(default_factory=list)
    unexpected: bool = False
    error: str | None = None
    #: the error is a bug in bunzai, not a property of the input
    internal: bool = False

    def final(self, rel: str) -> str:
        """The name in the output folder of staged file ``rel``, or of a card folder among
        ``trees`` (then a folder)."""
        finals = self.finals or self.files
        if rel in self.files:
            return finals[self.files.index(rel)]
        return next((final for tree, final, _fmt in _final_trees(self) if tree == rel), rel)


def _glob_root(pattern: str) -> Path:
    parts: list[str] = []
    for part in Path(pattern).parts:
        if glob.has_magic(part):
            break
        parts.append(part)
    return Path(*parts) if parts else Path(".")


def is_batch(paths: Sequence[str]) -> bool:
    """Whether the command line asks for a batch: several paths (but a character YAML with its
    picture), a folder (but a card folder), a glob, or a zip of files."""
    if len(paths) != 1:
        return one_input(paths) is None
    p = Path(paths[0])
    if is_card_folder(p):
        return False
    return p.is_dir() or (glob.has_magic(paths[0]) and not p.exists()) or is_zip_of_files(paths[0])


@dataclass(frozen=True)
class Item:
    """One input of a batch: a file or several that are one (``bunzai_codecs.inputs.Input``), or a
    member of a zip of files, and the sub-folder of the output folder it goes to."""

    source: Input
    folder: str
    member: Member | None = None

    @property
    def label(self) -> str:
        return self.member.label if self.member is not None else str(self.source.path)


def list_inputs(paths: Sequence[str], *, skip: Path | None = None) -> list[Item]:
    """Every input, in command-line order then sorted; files below ``skip`` (the output folder) are
    never inputs. A card folder, and a character YAML with its picture (found together, or both
    named), are one input each. A zip of files is read as the inputs inside it (each goes to its
    folder inside the zip, below the zip's own folder). Raises ``InputsError``."""
    out: list[Item] = []
    for inp, rel in _named(paths, skip):
        out.extend(_expand(inp, rel))
    return out


def _named(paths: Sequence[str], skip: Path | None) -> list[tuple[Input, str]]:
    out: list[tuple[Input, str]] = []
    skipped = skip.resolve() if skip is not None else None

    def keep(f: Input) -> bool:
        return skipped is None or not f.path.resolve().is_relative_to(skipped)

    def rel(f: Input, root: Path) -> str:
        return f.path.parent.relative_to(root).as_posix()

    named = [Path(a) for a in paths if not Path(a).is_dir() and Path(a).exists()]
    together = {x.path: x for x in inputs([str(p) for p in named])}  # a YAML named with its picture
    for arg in paths:
        p = Path(arg)
        if p.is_dir() and skipped is not None and p.resolve().is_relative_to(skipped):
            raise InputsError(f"{p}: is inside the output folder {skip}: give another -o")
        if is_card_folder(p):
            found = [(Input(p, folder=True), "")]
        elif p.is_dir():
            found = [(f, rel(f, p)) for f in walk(p) if keep(f)]
            if not found:
                raise InputsError(f"{p}: no input files under this folder")
        elif p.exists():
            if p not in together:
                continue  # the picture of a YAML named beside it
            found = [(together[p], "")]
        elif glob.has_magic(arg):
            root = _glob_root(arg)
            hits = sorted(Path(f) for f in glob.glob(arg, recursive=True))
            found = [
                (Input(f), os.path.normpath(f.parent.relative_to(root)))
                for f in hits
                if f.is_file() and keep(Input(f))
            ]
            if not found:
                raise InputsError(f"{arg}: no input files match")
            if any(rel == ".." or rel.startswith(("../", "/")) for _f, rel in found):  # a/*/../../x
                raise InputsError(
                    f"{arg}: matches files outside {root}, the folder before its first wildcard"
                )
        else:
            raise InputsError(f"{p}: no such file or directory")
        out.extend((f, "" if rel == "." else rel) for f, rel in found)
    return out


def _expand(inp: Input, rel: str) -> list[Item]:
    """``inp`` itself, or the inputs inside it when it is a zip of files."""
    from bunzai_codecs.inputs import no_members, zip_members

    if inp.folder or inp.picture is not None:
        return [Item(inp, rel)]
    f = inp.path
    try:
        with f.open("rb") as fh:
            if fh.read(4) != ZIP_MAGIC:
                return [Item(inp, rel)]
        if f.stat().st_size > MAX_INPUT_BYTES:
            return [Item(inp, rel)]  # too big to be read: its own failure line says so
        members = zip_members(f.read_bytes(), str(f))
    except OSError:
        return [Item(inp, rel)]  # its own failure line says why it cannot be read
    except BunzaiError:
        members = None
    if members is None:
        return [Item(inp, rel)]
    if not members:
        raise InputsError(no_members(str(f)))
    return [Item(inp, "/".join(x for x in (rel, m.folder) if x), m) for m in members]


def is_zip_of_files(path: str) -> bool:
    """Whether ``path`` is one file that is a zip of files (a batch of its members)."""
    p = Path(path)
    if not p.is_file():
        return False
    try:
        return any(i.member is not None for i in _expand(Input(p), ""))
    except InputsError:
        return True  # an empty one: the batch says so


def _summary(row: object) -> str:
    from bunzai_codecs.fidelity import FidelityRow

    assert isinstance(row, FidelityRow)
    if row.error is not None:
        return f"could not be read back: {row.error.type}: {row.error.message}"
    n = {"unexpected": 0, "expected": 0, "info": 0}
    for _change, loss in row.losses():
        n[loss.cls] += loss.count
    if not (n["unexpected"] or n["expected"] or n["info"]):
        return "nothing lost"
    return f"{n['unexpected']} unexpected, {n['expected']} expected lost or changed"


def convert_one(job: Job) -> Outcome:
    """Convert ``job.source`` into the staging folder (see the module docstring). An input's
    problem is its ``Outcome.error``; an output problem raises ``OutputError``."""
    from bunzai_codecs.convert import (
        ConvertUsageError,
        Options,
        losses,
        plan,
        source_stem,
        source_tag,
        unexpected,
        write_planned,
    )

    inp = job.source
    m = job.member
    label = m.label if m is not None else str(inp.path)
    result = Outcome(m.label if m is not None else str(inp), job.staging)
    folder = job.staging / job.folder if job.folder else job.staging
    try:
        if m is not None:
            if m.error is not None:
                raise m.error
            assert m.data is not None
            data, name = m.data, Path(m.basename)
        else:
            data, name = inp.read(), inp.path  # bounded (MAX_INPUT_BYTES)
        opts = Options(
            to=job.to, output=f"{folder}/", source_format=job.source_format, kind=job.kind, image=job.image
        )
        planned = plan(name, data, opts, named_as_source=True, uri=label)
        written = write_planned(planned, force=False)
        rows = losses(planned)
    except BunzaiError as exc:
        result.error = str(exc.with_uri(label))
        return result
    except ConvertUsageError as exc:  # this input cannot go to this format
        result.error = f"{label}: Unsupported: {' '.join(str(exc).split())}"
        return result
    except OutputError:
        raise
    except OSError as exc:
        result.error = f"{label}: {type(exc).__name__}: {exc.strerror or exc}"
        return result
    except Exception as exc:  # a bug: said for this input, the others go on
        why = " ".join(str(exc).split())
        result.error = f"{label}: internal error (a bug: please report it): {type(exc).__name__}: {why}"
        result.internal = True
        return result
    result.files = [p.relative_to(job.staging).as_posix() for p in written]
    result.finals = list(result.files)
    result.trees = [
        (f.path.relative_to(job.staging).as_posix(), f.export.format) for f in planned.files if f.tree
    ]
    result.stem = source_stem(name, planned.decoded)
    result.tag = source_tag(name, planned.decoded)
    mains = [f.path.relative_to(job.staging).as_posix() for f in planned.files if f.main]
    # losses(): one row per main file, in order
    result.summaries = [(rel, _summary(r)) for rel, r in zip(mains, rows, strict=True)]
    result.unexpected = unexpected(rows)
    return result


def run(jobs: list[Job], workers: int, on_done: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Every job's outcome, in the jobs' order, with ``workers`` processes (1: in this one).
    ``on_done(outcome)`` is called as each finishes (in order)."""

    def done(o: Outcome) -> None:
        if on_done is not None:
            on_done(o)

    outcomes: list[Outcome] = []
    if workers <= 1 or len(jobs) <= 1:
        for job in jobs:
            outcomes.append(convert_one(job))
            done(outcomes[-1])
        return outcomes
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    ctx = multiprocessing.get_context("spawn")  # a clean interpreter: no state, no threads copied
    pool = ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=ctx)
    try:
        for outcome in pool.map(convert_one, jobs):
            outcomes.append(outcome)
            done(outcome)
    except BaseException:  # Ctrl-C, SIGTERM, a failure: the queued jobs are not started
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return outcomes


@dataclass(frozen=True)
class Renamed:
    """An input whose files got other names because an earlier input writes its names."""

    source: Path | str
    #: its first file as it would have been named, and as it is
    wanted: str
    final: str
    #: the input that writes ``wanted``
    owner: Path | str


def _renamed(rel: str, stem: str, tag: str, trees: Sequence[str] = ()) -> str:
    """``rel`` with ``tag`` after the input's ``stem`` (``lumiverse/quill.lumiverse.png`` ->
    ``lumiverse/quill.lumiverse-zip.png``); a file of a card folder among ``trees`` is renamed by
    its folder's name (``quill/card.yaml`` -> ``quill-zip/card.yaml``)."""
    tree = next((t for t in trees if rel.startswith(f"{t}/")), None)
    if tree is not None:
        return _renamed(tree, stem, tag) + rel[len(tree) :]
    folder, _, base = rel.rpartition("/")
    if not base.startswith(stem):  # not planned so: before the first suffix instead
        dot = base.find(".", 1)
        stem = base[:dot] if dot > 0 else base
    new = f"{base[: len(stem)]}{tag}{base[len(stem) :]}"
    return f"{folder}/{new}" if folder else new


def _tags(o: Outcome) -> Iterator[str]:
    """The tags tried, in order, to give ``o``'s files names no earlier input takes: the source's
    suffix (``-zip``), then a number after it (``-zip-2``...)."""
    if o.tag:
        yield o.tag
    n = 2
    while True:
        yield f"{o.tag}-{n}"
        n += 1


def name_outputs(outcomes: Sequence[Outcome]) -> list[Renamed]:
    """Give every file a name in the output folder no other input's file has (compared without
    case: some file systems ignore it): an input, in input order, keeps its names unless an
    earlier one has one of them; then every one of its files gets the source's suffix after its
    stem (:func:`_tags`). Sets each outcome's ``finals``; returns the renamed inputs. The same
    inputs get the same names, whatever the number of processes."""
    owner: dict[str, Outcome] = {}
    renamed: list[Renamed] = []
    for o in outcomes:
        if o.error is not None:
            continue
        finals = list(o.files)
        clash = next((owner[f.lower()] for f in finals if f.lower() in owner), None)
        if clash is not None:
            trees = [t for t, _fmt in o.trees]
            for tag in _tags(o):
                finals = [_renamed(rel, o.stem, tag, trees) for rel in o.files]
                if not any(f.lower() in owner for f in finals):
                    break
        o.finals = finals
        if clash is not None:  # named by its first file, or its card folder (then a folder)
            first = o.trees[0][0] if o.trees else o.files[0]
            renamed.append(Renamed(o.source, first, o.final(first), clash.source))
        for f in finals:
            owner[f.lower()] = o
    return renamed


def commit(outcomes: Sequence[Outcome], out: Path, *, force: bool) -> list[Path]:
    """Move every staged file into ``out`` under its name there (``Outcome.finals``: see
    :func:`name_outputs`); the written paths."""
    targets: list[tuple[Path, Path]] = []
    for o in outcomes:
        for rel, name in zip(o.files, o.finals or o.files, strict=True):
            if Path(name).is_absolute() or ".." in Path(name).parts:  # list_inputs already refuses it
                raise OutputError(f"{out / name}: outside {out}")
            targets.append((o.staging / rel, out / name))
    for _staged, final in targets:
        folder = final.parent
        while folder != out and out in folder.parents:
            if folder.exists() and not folder.is_dir():
                raise OutputError(f"{folder}: is a file, not a folder")
            folder = folder.parent
        if final.is_dir():
            raise OutputError(f"{final}: is a folder; a converted file goes there")
    if not force:
        there = [final for _s, final in targets if final.exists()]
        if there:
            more = f" (and {len(there) - 1} more)" if len(there) > 1 else ""
            raise Refused(f"{there[0]} exists{more}: pass --force to overwrite")
    from bunzai_codecs.convert import stale_files

    finals = {final for _s, final in targets}
    stale = (
        [q for o in outcomes for _t, rel, fmt in _final_trees(o) for q in stale_files(out / rel, fmt, finals)]
        if force
        else []
    )
    written: list[Path] = []
    for staged, final in targets:
        ensure_folder(final.parent)
        try:
            os.replace(staged, final)
        except OSError as exc:
            raise OutputError(f"{final}: cannot write: {exc.strerror or exc}") from exc
        written.append(final)
    for q in stale:  # only reached with force: a card folder's own files the new one does not have
        q.unlink(missing_ok=True)
    return written


def _final_trees(o: Outcome) -> Iterator[tuple[str, str, str]]:
    """``o``'s card folders (``Outcome.trees``) as staged and as named in the output folder
    (renamed with their files, :func:`name_outputs`), with their format."""
    for tree, fmt in o.trees:
        for rel, final in zip(o.files, o.finals or o.files, strict=True):
            if rel.startswith(f"{tree}/"):
                yield tree, final[: len(final) - len(rel) + len(tree)], fmt
                break


@contextlib.contextmanager
def staging_folder(out: Path) -> Iterator[Path]:
    """A hidden folder inside ``out`` (same file system: the final moves are renames), removed
    afterwards whatever happens; ``out`` is removed too when this made it and it stays empty."""
    made = not out.exists()
    ensure_folder(out)
    try:
        path = Path(tempfile.mkdtemp(prefix=".bunzai-convert-", dir=out))
    except OSError as exc:
        raise OutputError(f"{out}: cannot write: {exc.strerror or exc}") from exc
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        if made:
            with contextlib.suppress(OSError):
                out.rmdir()  # only when empty


__all__ = [
    "InputsError",
    "Item",
    "Job",
    "Outcome",
    "Refused",
    "Renamed",
    "commit",
    "convert_one",
    "is_batch",
    "list_inputs",
    "name_outputs",
    "run",
    "staging_folder",
]
