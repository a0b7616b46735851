"""Batch ``bunzai convert PATH... --to FMT -o OUTDIR/``: every input file below the given folders
and globs converted into one folder, each on its own (as a single convert with ``-o FILE`` would),
on several processes, with the same files and bytes whatever their number.

1. :func:`list_inputs` names the inputs and the sub-folder of OUTDIR each one goes to: below a
   folder its relative folder, below a glob the folder before the first wildcard, a file named
   alone the top. A card folder, and a character YAML with its picture, are one input each
   (``bunzai_codecs.inputs``). A path that does not exist, a folder with no input file (names
   starting with ``.`` are skipped) and a glob matching none end the batch before anything is
   converted.
2. :func:`convert_one` (in a worker process, or in-process with ``-j 1``) converts one input into
   its own staging folder (in a hidden one inside OUTDIR), names the first file after the input
   (:func:`bunzai_codecs.convert.source_stem`) and the rest as a single convert does, reads them
   back for the loss report, and returns an :class:`Outcome`: the files, or the input's one-line
   typed error. One input failing never stops the others.
3. :func:`commit` moves the staged files into OUTDIR, only once every input is done and nothing is
   in the way: two inputs that would write one file, an existing file (without ``force``), a file
   where a folder is needed refuse the whole batch, and OUTDIR is left as it was.
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
from bunzai_codecs.inputs import Input, inputs, is_card_folder, one_input, walk


class InputsError(Exception):
    """An input path names no file (the CLI prints it, one line, and exits 3)."""


class Refused(Exception):
    """The batch would overwrite a file or write one file twice (exit 2, nothing written)."""


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


@dataclass
class Outcome:
    """What one input gave: its files (paths relative to the output folder, in the order a single
    convert writes them) and a loss summary per written entity, or its error."""

    source: Input
    #: the input's own staging folder (its files are relative to it)
    staging: Path
    files: list[str] = field(default_factory=list)
    #: the card folders among ``files``' folders (relative): ``--force`` replaces such a folder's
    #: card files whole (``convert.stale_files``)
    trees: list[tuple[str, str]] = field(default_factory=list)
    #: (file, one-line loss summary) per written entity
    summaries: list[tuple[str, str]] = field(default_factory=list)
    unexpected: bool = False
    error: str | None = None
    #: the error is a bug in bunzai, not a property of the input
    internal: bool = False


def _glob_root(pattern: str) -> Path:
    parts: list[str] = []
    for part in Path(pattern).parts:
        if glob.has_magic(part):
            break
        parts.append(part)
    return Path(*parts) if parts else Path(".")


def is_batch(paths: Sequence[str]) -> bool:
    """Whether the command line asks for a batch: several paths (but a character YAML with its
    picture), a folder (but a card folder), or a glob."""
    if len(paths) != 1:
        return one_input(paths) is None
    p = Path(paths[0])
    if is_card_folder(p):
        return False
    return p.is_dir() or (glob.has_magic(paths[0]) and not p.exists())


def list_inputs(paths: Sequence[str], *, skip: Path | None = None) -> list[tuple[Input, str]]:
    """``(input, output sub-folder)`` for every input, in command-line order then sorted; files
    below ``skip`` (the output folder) are never inputs. Raises ``InputsError``."""
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
    from bunzai_codecs.convert import ConvertUsageError, Options, losses, plan, unexpected, write_planned

    inp = job.source
    src = inp.path
    result = Outcome(inp, job.staging)
    folder = job.staging / job.folder if job.folder else job.staging
    try:
        data = inp.read()
        opts = Options(
            to=job.to, output=f"{folder}/", source_format=job.source_format, kind=job.kind, image=job.image
        )
        planned = plan(src, data, opts, named_as_source=True)
        written = write_planned(planned, force=False)
        rows = losses(planned)
    except BunzaiError as exc:
        result.error = str(exc.with_uri(str(src)))
        return result
    except ConvertUsageError as exc:  # this input cannot go to this format
        result.error = f"{src}: Unsupported: {' '.join(str(exc).split())}"
        return result
    except OutputError:
        raise
    except OSError as exc:
        result.error = f"{src}: {type(exc).__name__}: {exc.strerror or exc}"
        return result
    except Exception as exc:  # a bug: said for this input, the others go on
        why = " ".join(str(exc).split())
        result.error = f"{src}: internal error (a bug: please report it): {type(exc).__name__}: {why}"
        result.internal = True
        return result
    result.files = [p.relative_to(job.staging).as_posix() for p in written]
    result.trees = [
        (f.path.relative_to(job.staging).as_posix(), f.export.format) for f in planned.files if f.tree
    ]
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


def commit(outcomes: Sequence[Outcome], out: Path, *, force: bool) -> list[Path]:
    """Move every staged file into ``out`` (see the module docstring); the written paths."""
    owner: dict[str, tuple[str, Outcome]] = {}
    clashes: list[str] = []
    for o in outcomes:
        for rel in o.files:
            if Path(rel).is_absolute() or ".." in Path(rel).parts:  # list_inputs already refuses it
                raise OutputError(f"{out / rel}: outside {out}")
            key = rel.lower()  # some file systems ignore case
            if key in owner:
                clashes.append(f"{out / rel}: both {owner[key][1].source} and {o.source} would write it")
            owner.setdefault(key, (rel, o))
    if clashes:
        more = f" (and {len(clashes) - 1} more)" if len(clashes) > 1 else ""
        raise Refused(f"{clashes[0]} (convert them into different folders){more}")
    targets = [(o.staging / rel, out / rel) for rel, o in owner.values()]
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
        [q for o in outcomes for rel, fmt in o.trees for q in stale_files(out / rel, fmt, finals)]
        if force
        else []
    )
    written = []
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
    "Job",
    "Outcome",
    "Refused",
    "commit",
    "convert_one",
    "is_batch",
    "list_inputs",
    "run",
    "staging_folder",
]
