"""The ``bunzai`` command line (a stable contract: scripts depend on its output and exit codes).

Every failure is one line on stderr, never a traceback (``--debug`` adds it), and an exit code
of the one table every command shares (``bunzai_codecs.exitcodes.Exit``; README.md, "Exit codes and
errors").

The pipeline's commands (``normalize``, ``export``) are found through the ``bunzai.commands``
entry-point group (pyproject.toml): each entry is a function that adds its subcommand to the
parser, loaded only when the command line may name it.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, NoReturn

import orjson

from bunzai_codecs import audit
from bunzai_codecs.exitcodes import Exit

if TYPE_CHECKING:
    from bunzai_codecs.inputs import Input


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)  # this (sub)command's usage: `bunzai detect --bogus` gets detect's
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(Exit.USAGE)


def _files(paths: Sequence[str], empty: list[Path] | None = None) -> Iterator[Input]:
    """The inputs named on the command line (``bunzai_codecs.inputs``): a file; a folder stands for
    every input below it (sorted; names starting with ``.`` are skipped), a card folder and a
    character YAML with its picture being one input each. A folder with no input is added to
    ``empty``."""
    from bunzai_codecs.inputs import inputs

    return inputs(paths, empty)


def _no_files(path: Path) -> str:
    return f"{path}: no input files under this folder"


def _read(path: Path) -> bytes:
    from bunzai_codecs.core.errors import BunzaiError
    from bunzai_codecs.core.sniff import MAX_INPUT_BYTES

    try:
        size = path.stat().st_size
        if size > MAX_INPUT_BYTES:
            from bunzai_codecs.core.errors import LimitExceeded

            raise LimitExceeded(f"input is {size} bytes; the limit is {MAX_INPUT_BYTES}", uri=str(path))
        return path.read_bytes()
    except BunzaiError:
        raise
    except OSError as exc:
        raise _InputError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _read_input(inp: Input) -> bytes:
    """An input's bytes (a file set's, for several files), bounded; ``_InputError`` when a file
    cannot be read."""
    try:
        return inp.read()
    except OSError as exc:
        where = exc.filename or inp.path
        raise _InputError(f"{where}: cannot read: {exc.strerror or exc}") from None


class _InputError(Exception):
    pass


# -- commands ------------------------------------------------------------------------------------


def cmd_formats(args: argparse.Namespace) -> int:
    from bunzai_codecs.core import registry

    if args.markdown:
        from bunzai_codecs.support import format_support_markdown

        sys.stdout.write(format_support_markdown())
        return Exit.OK
    if args.apps:  # what an app name means as a --to target
        by_app = [("APP", "KIND", "FORMATS")]
        for app, decls in registry.apps().items():
            for kind in registry.app_kinds(app):
                by_app.append((app, kind, " ".join(d.id for d in decls if d.holds(kind))))
        _table(by_app)
        return Exit.OK
    rows = [("FORMAT", "KIND", "SUFFIXES", "WRITES", "APP", "DESCRIPTION")]
    for c in sorted(registry.declarations(), key=lambda c: (c.kind, c.id)):
        writes = "read-only" if c.read_only else "yes"
        rows.append(
            (c.id, c.kind_label(), " ".join(c.suffixes) or "-", writes, c.family or "-", c.label or "-")
        )
    _table(rows)
    return Exit.OK


class _Entry(NamedTuple):
    """One input as detect and inspect read it (:func:`_entries`)."""

    #: how a table names it (``mycard/``, ``Name.yaml (+ Name.png)``, ``zip://a.png::dump.zip``)
    shown: str
    #: how messages and ``--json`` name it: its path, or its chain URL inside a zip
    uri: str
    #: the name it is detected and decoded under
    name: str
    data: bytes | None
    error: Exception | None = None
    #: the picture read with a character YAML
    picture: Path | None = None


def _entries(found: Iterable[Input]) -> Iterator[_Entry]:
    """Every input of ``found`` (:func:`_files`: a file, a card folder, a character YAML with its
    picture), or each input inside a zip of files (``bunzai_codecs.inputs``), named by its chain
    URL. An input that cannot be read, or a zip member that does not inflate, comes with its
    error."""
    from bunzai_codecs.core.errors import BunzaiError
    from bunzai_codecs.inputs import no_members, zip_members

    for inp in found:
        uri = str(inp.path)
        try:
            data = _read_input(inp)
        except (BunzaiError, _InputError) as exc:
            yield _Entry(str(inp), uri, inp.name, None, exc)
            continue
        several = inp.folder or inp.picture is not None  # a file set: never a zip of files
        members = None if several else zip_members(data, uri)
        if members is None:
            yield _Entry(str(inp), uri, inp.name, data, picture=inp.picture)
        elif not members:
            yield _Entry(str(inp), uri, inp.name, None, _InputError(no_members(uri)))
        for m in members or ():
            yield _Entry(m.label, m.label, m.basename, m.data, m.error)


def cmd_detect(args: argparse.Namespace) -> int:
    from bunzai_codecs.core import registry
    from bunzai_codecs.core.errors import BunzaiError
    from bunzai_codecs.core.sniff import Sniff

    status = Exit.OK
    rows = [("FILE", "FORMAT", "KIND", "SCORE", "RUNNER-UP")]
    empty: list[Path] = []
    for e in _entries(_files(args.files, empty)):
        try:
            if e.error is not None:
                raise e.error
            assert e.data is not None
            s = Sniff(e.data, e.name, uri=e.uri)
        except (BunzaiError, _InputError) as exc:
            print(str(exc), file=sys.stderr)
            status = Exit.INPUT
            continue
        d = registry.detect_all(s)
        best = d.best
        if args.json:
            kind = registry.kind_of(best.id, s) if best else None
            line: dict[str, object] = {
                "file": e.uri,
                "format": best.id if best else None,
                "kind": kind,
                "score": best.score if best else 0.0,
                "candidates": [[c.id, c.score] for c in d.candidates],
            }
            if e.picture is not None:
                line["picture"] = str(e.picture)
            sys.stdout.write(orjson.dumps(line).decode() + "\n")
        else:
            ru = d.runner_up
            rows.append(
                (
                    e.shown,
                    best.id if best else "-",
                    registry.kind_of(best.id, s) if best else "-",
                    f"{best.score:.2f}" if best else "0.00",
                    f"{ru.id} ({ru.score:.2f})" if ru else "-",
                )
            )
        if best is None:
            print(str(registry.unrecognized(s, d)), file=sys.stderr)
            status = Exit.INPUT
    if not args.json and len(rows) > 1:
        _table(rows)
    for folder in empty:
        print(_no_files(folder), file=sys.stderr)
        status = Exit.INPUT
    return status


def cmd_inspect(args: argparse.Namespace) -> int:
    from bunzai_codecs.bundle import read
    from bunzai_codecs.core.errors import BunzaiError
    from bunzai_codecs.formats.vaud.codec import dumps

    found = list(_files(args.file))
    if len(found) != 1:
        what = ", ".join(str(x) for x in found[:3]) + (" ..." if len(found) > 3 else "")
        args._parser.error(f"inspect reads one input; these paths are {len(found)}: {what or 'none'}")
    source_format = _source_format(args)
    _moved_notes(source_format)
    status = Exit.OK
    for entry in _entries(found):
        try:
            if entry.error is not None:
                raise entry.error
            assert entry.data is not None
            decoded = read(entry.data, entry.name, uri=entry.uri, format=source_format)
        except (BunzaiError, _InputError) as exc:
            if not entry.uri.startswith("zip://"):  # the input itself: main() says it, as before
                raise
            print(str(exc), file=sys.stderr)  # one member of a zip of files: the others go on
            status = Exit.INPUT
            continue
        for e in decoded.entities:
            if args.pretty:
                from bunzai_codecs.core.sniff import parse_json

                sys.stdout.write(
                    orjson.dumps(parse_json(dumps(e)), option=orjson.OPT_INDENT_2).decode() + "\n"
                )
            else:
                sys.stdout.write(dumps(e).decode() + "\n")
    return status


def _source_format(args: argparse.Namespace) -> str | None:
    """``--from``, or the deprecated ``--format`` (said on stderr; kept for one release)."""
    old = getattr(args, "old_format", None)
    if old is not None:
        print("note: --format is deprecated (it goes in the next release): use --from", file=sys.stderr)
        if args.source_format is None:
            return str(old)
    return args.source_format


def _image_option(args: argparse.Namespace) -> bytes | Literal[False] | None:
    """The bytes of ``--image`` (``None`` without one), or ``False`` (said on stderr) when the file
    is not an image or ``--to`` holds no picture."""
    from bunzai_codecs.convert import ConvertUsageError, check_image_target
    from bunzai_codecs.core.media import sniff_mime

    if args.image is None:
        return None
    try:
        check_image_target(args.to)
    except ConvertUsageError as exc:
        print(f"bunzai: error: {exc}", file=sys.stderr)
        return False
    image = _read(Path(args.image))
    if not (sniff_mime(image) or "").startswith("image/"):
        print(f"bunzai: error: --image {args.image}: not an image file", file=sys.stderr)
        return False
    return image


def cmd_convert(args: argparse.Namespace) -> int:
    from bunzai_codecs.convert import (
        ConvertUsageError,
        Options,
        losses,
        plan,
        render_losses,
        unexpected,
        write_planned,
    )
    from bunzai_codecs.convert_batch import is_batch

    if is_batch(args.input):
        return cmd_convert_batch(args)
    from bunzai_codecs.inputs import one_input

    inp = one_input(args.input)
    assert inp is not None  # not a batch
    src = inp.path
    _moved_notes(args.source_format, args.to)
    image = _image_option(args)
    if image is False:
        return Exit.USAGE
    opts = Options(
        to=args.to,
        output=args.output,
        source_format=args.source_format,
        entity=args.entity,
        kind=args.kind,
        image=image,
    )
    try:
        planned = plan(src, _read_input(inp), opts)
        write_planned(planned, force=args.force)
    except ConvertUsageError as exc:
        print(f"bunzai: error: {exc}", file=sys.stderr)
        return Exit.USAGE
    rows = losses(planned)
    if not args.quiet:
        for f in planned.files:
            laid = f.laid_out()
            if f.tree:
                where = f"{f.path}{os.sep} ({len(laid)} files)"
            elif len(laid) > 1:
                where = f"{f.path} (+ {', '.join(p.name for p, _ in laid[1:])})"
            else:
                where = str(f.path)
            print(f"wrote {where} ({f.export.format}, {f.export.entity.kind})", file=sys.stderr)
        for line in render_losses(rows):
            print(line, file=sys.stderr)
    if args.strict and unexpected(rows):
        return Exit.LOSSY
    return Exit.OK


def cmd_convert_batch(args: argparse.Namespace) -> int:
    """``convert PATH... -o OUTDIR``: see :mod:`bunzai_codecs.convert_batch`."""
    from bunzai_codecs.convert_batch import (
        InputsError,
        Job,
        Outcome,
        Refused,
        commit,
        list_inputs,
        name_outputs,
        run,
        staging_folder,
    )
    from bunzai_codecs.progress import Progress

    parser = args._parser
    if args.output is None:
        parser.error("-o OUTDIR is required to convert several files (a folder, a glob or a zip of files)")
    if args.entity is not None:
        parser.error("--entity names one input's entity: convert that file on its own (or use --kind)")
    _moved_notes(args.source_format, args.to)
    image = _image_option(args)
    if image is False:
        return Exit.USAGE
    out = Path(args.output)
    try:
        inputs = list_inputs(args.input, skip=out)
    except InputsError as exc:
        print(str(exc), file=sys.stderr)
        return Exit.INPUT
    if out.exists() and not out.is_dir():
        from bunzai_codecs.core.files import OutputError

        raise OutputError(f"{out}: is a file, not a folder")
    workers = args.jobs or os.cpu_count() or 1
    with staging_folder(out) as staging:
        jobs = [
            Job(i.source, i.folder, staging / str(n), args.to, args.source_format, args.kind, image, i.member)
            for n, i in enumerate(inputs)
        ]
        with Progress("bunzai convert", unit="files", total=len(jobs), quiet=args.quiet) as progress:

            def done(o: Outcome) -> None:
                progress.advance(failed=int(o.error is not None))

            outcomes = run(jobs, workers, done)
        renamed = name_outputs(outcomes)
        try:
            written = commit(outcomes, out, force=args.force)
        except Refused as exc:
            print(f"bunzai convert: error: {exc}", file=sys.stderr)
            return Exit.USAGE
    failed = [o for o in outcomes if o.error is not None]
    if not args.quiet:
        for o in outcomes:
            for rel, summary in o.summaries:
                print(f"{o.source} -> {out / o.final(rel)}: {summary}", file=sys.stderr)
        for r in renamed:
            print(
                f"renamed: {r.source} -> {out / r.final} ({out / r.wanted} is {r.owner}'s)",
                file=sys.stderr,
            )
    for o in failed:
        print(o.error, file=sys.stderr)
    if not args.quiet:
        ok = len(outcomes) - len(failed)
        more = f" ({len(renamed)} renamed: another input writes their name)" if renamed else ""
        print(
            f"converted {ok} of {len(outcomes)} inputs, {len(failed)} failed: "
            f"{len(written)} files written in {out}{more}",
            file=sys.stderr,
        )
    if any(o.internal for o in failed):
        return Exit.INTERNAL
    if failed:
        return Exit.INPUT
    if args.strict and any(o.unexpected for o in outcomes):
        return Exit.LOSSY
    return Exit.OK


def _jobs(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of processes, 1 or more")
    return n


def _moved_notes(*format_ids: str | None) -> None:
    """A deprecation note on stderr for each named format id whose old meaning moved."""
    from bunzai_codecs.core import registry

    for note in dict.fromkeys(registry.moved_note(f) for f in format_ids if f):
        if note is not None:
            print(f"note: {note}", file=sys.stderr)


def _write_file(path: Path, data: bytes) -> None:
    """Atomic: a reader never sees half a file, and a failure leaves no temporary behind
    (``OutputError``, exit 4: the target is a folder, the folder cannot be made or written)."""
    from bunzai_codecs.core.files import write_atomic

    write_atomic(path, data)


def _labelled(arg: str) -> tuple[str, Path]:
    """``LABEL=PATH`` or ``PATH``: the label prefixes input keys so runs on other machines (or
    without the corpus) name the same file the same way; it defaults to the folder's name."""
    label, sep, path = arg.partition("=")
    if sep and label and "/" not in label and not Path(arg).exists():
        return label, Path(path)
    p = Path(arg)
    return (p.name if p.is_dir() else p.as_posix()), p


def fidelity_inputs(args: Sequence[str], exclude: Sequence[str] = ()) -> Iterator[tuple[str, Input]]:
    """``(input key, input)`` for every input below the given roots: ``LABEL/relative/path`` (a
    card folder's path, a character YAML's for it and its picture); inputs whose name or key
    matches an ``exclude`` glob are left out."""
    from fnmatch import fnmatchcase

    from bunzai_codecs.inputs import inputs

    for arg in args:
        label, root = _labelled(arg)
        if not root.exists():
            raise _InputError(f"{root}: no such file or directory")
        found = (
            ((f"{label}/{f.path.relative_to(root).as_posix()}", f) for f in inputs([str(root)]))
            if root.is_dir() and not (root / "card.yaml").is_file()
            else ((label, f) for f in inputs([str(root)]))
        )
        n = 0
        for key, f in found:
            if not any(fnmatchcase(f.name, g) or fnmatchcase(key, g) for g in exclude):
                n += 1
                yield key, f
        if not n:
            raise _InputError(_no_files(root) + (" (after --exclude)" if exclude and root.is_dir() else ""))


def cmd_fidelity(args: argparse.Namespace) -> int:
    """``bunzai fidelity``: every check over every input, then DIR's rows and report. A run
    interrupted (or failing) before its files are written leaves DIR as it was: a DIR it made is
    removed again."""
    from bunzai_codecs.core.files import ensure_folder
    from bunzai_codecs.fidelity.report import ReportBuilder

    out = Path(args.output)
    builder = ReportBuilder()
    chunks: list[bytes] = []
    labels = [_labelled(a)[0] for a in args.paths]
    inputs = list(fidelity_inputs(args.paths, args.exclude or ()))
    made = not out.exists()
    ensure_folder(out)  # before the work: an output that cannot be made fails at once
    try:
        return _fidelity(args, out, inputs, labels, builder, chunks)
    except BaseException:  # Ctrl-C, SIGTERM, a failure: a folder this run made goes again
        if made:
            import shutil

            shutil.rmtree(out, ignore_errors=True)
        raise


def _fidelity(
    args: argparse.Namespace,
    out: Path,
    inputs: list[tuple[str, Input]],
    labels: list[str],
    builder: Any,
    chunks: list[bytes],
) -> int:
    from bunzai_codecs.core.errors import BunzaiError
    from bunzai_codecs.fidelity import check_file, reject_row
    from bunzai_codecs.fidelity.report import rows_jsonl, write_report
    from bunzai_codecs.progress import Progress

    with Progress("bunzai fidelity", unit="files", total=len(inputs), quiet=args.quiet) as progress:
        for key, inp in inputs:
            try:
                rows = check_file(_read_input(inp), inp.name, input=key, uri=key, targets=args.to)
            except BunzaiError as exc:  # too big to read: a reject like any other
                rows = [reject_row(exc, input=key, uri=key)]
            builder.add_all(rows)
            chunks.append(rows_jsonl(rows))
            rejected = any(r.status == "rejected" for r in rows)
            progress.advance(rejected=int(rejected), checks=len(rows))
            if args.verbose:
                worst = max((r.status for r in rows), key=_STATUS_ORDER.index)
                progress.write(f"{key}: {len(rows)} checks, worst {worst}")
    rows_file = out / "rows-00000-of-00001.jsonl"
    _write_file(rows_file, b"".join(chunks))
    report = builder.report({"roots": labels})
    j, h = write_report(report, out)
    for old in out.glob("rows-*.jsonl"):  # only once the new ones are in place
        if old != rows_file:
            old.unlink()
    inp = report["inputs"]
    if not args.quiet:
        print(
            f"{inp['files']} files ({inp['rejected']} rejected), {inp['rows']} rows: {j}, {h}",
            file=sys.stderr,
        )
    return Exit.OK


_STATUS_ORDER = ["decoded", "lossless", "expected", "unexpected", "error", "rejected"]


def cmd_audit(args: argparse.Namespace) -> int:
    return audit.run(args)


def cmd_schema(args: argparse.Namespace) -> int:
    from bunzai_codecs.support import write_schemas

    if args.markdown:
        from bunzai_codecs.modeldoc import canonical_model_markdown

        sys.stdout.write(canonical_model_markdown())
        return Exit.OK

    if args.dir is None:  # no folder named: nothing is written, the schemas go to stdout
        from bunzai_codecs.support import all_schemas, schema_bytes

        sys.stdout.buffer.write(schema_bytes(all_schemas()))
        return Exit.OK
    for p in write_schemas(Path(args.dir)):
        print(p)
    return Exit.OK


def _table(rows: Sequence[tuple[str, ...]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())


def _version() -> str:
    from bunzai_codecs import __version__

    return f"bunzai {__version__}"


def _formats_args(f: argparse.ArgumentParser) -> None:
    f.add_argument("--markdown", action="store_true", help="print docs/FORMAT-SUPPORT.md")
    f.add_argument(
        "--apps",
        action="store_true",
        help="each app (a --to target too: its format for each entity's kind) and its formats by kind",
    )


def _detect_args(d: argparse.ArgumentParser) -> None:
    d.add_argument("files", nargs="+", metavar="FILE")
    d.add_argument("--json", action="store_true", help="one JSON object per file")


def _inspect_args(i: argparse.ArgumentParser) -> None:
    i.add_argument(
        "file",
        nargs="+",
        metavar="FILE",
        help="a file, a zip of files, a card folder, or a character YAML and its picture (one input)",
    )
    i.add_argument(
        "--from", dest="source_format", metavar="FORMAT", help="decode as this format instead of detecting"
    )
    i.add_argument("--format", dest="old_format", metavar="FORMAT", help="deprecated: --from")
    i.add_argument("--pretty", action="store_true", help="indent the JSON (one entity after another)")


def _convert_args(c: argparse.ArgumentParser) -> None:
    c.add_argument("input", nargs="+", metavar="IN")
    c.add_argument("--to", required=True, metavar="FORMAT")
    c.add_argument("-o", "--output", metavar="OUT", help="output file, or folder (OUT/); default: .")
    c.add_argument("--from", dest="source_format", metavar="FORMAT", help="decode as this format")
    pick = c.add_mutually_exclusive_group()
    pick.add_argument("--entity", metavar="ID", help="convert this entity of IN (an id or unique id prefix)")
    pick.add_argument(
        "--kind", metavar="KIND", help="convert IN's entities of this kind (lorebook, regex...)"
    )
    c.add_argument(
        "--image", metavar="FILE", help="the entity's picture (a PNG card's image, a charx's portrait...)"
    )
    c.add_argument("--force", action="store_true", help="overwrite existing files")
    c.add_argument(
        "--strict", action="store_true", help=f"exit {int(Exit.LOSSY)} when anything unexpected was lost"
    )
    c.add_argument("-q", "--quiet", action="store_true", help="no report on stderr")
    c.add_argument(
        "-j",
        "--jobs",
        type=_jobs,
        metavar="N",
        help="a batch's processes (default: one per core; 1: in this process)",
    )


def _fidelity_args(fi: argparse.ArgumentParser) -> None:
    fi.add_argument("paths", nargs="+", metavar="[LABEL=]PATH")
    fi.add_argument("-o", "--output", required=True, metavar="DIR")
    fi.add_argument("--to", action="append", metavar="FORMAT", help="limit cross-format targets (repeatable)")
    fi.add_argument(
        "--exclude", action="append", metavar="GLOB", help="skip files whose name or key matches (repeatable)"
    )
    fi.add_argument("-q", "--quiet", action="store_true", help="no progress display and no summary line")
    fi.add_argument("-v", "--verbose", action="store_true", help="one line per input on stderr")


def _schema_args(s: argparse.ArgumentParser) -> None:
    s.add_argument(
        "dir",
        nargs="?",
        metavar="DIR",
        help="write DIR/<kind>.schema.json (without DIR: every schema as one JSON object on stdout)",
    )
    s.add_argument(
        "--markdown", action="store_true", help="print docs/canonical-model.md instead (writes no files)"
    )


#: the codec library's commands: name, one-line help, description (or None), arguments, and the
#: name of the function that runs it (looked up when the parser is built)
_COMMANDS: tuple[tuple[str, str, str | None, Any, Any], ...] = (
    ("formats", "list the formats bunzai reads and writes", None, _formats_args, "cmd_formats"),
    (
        "detect",
        "name the format of each input (folders are walked; a card folder is one input)",
        None,
        _detect_args,
        "cmd_detect",
    ),
    ("inspect", "print an input's canonical entities as vaud-json lines", None, _inspect_args, "cmd_inspect"),
    (
        "convert",
        "export a file (or every file below folders and globs) to another format",
        "Writes every entity of IN as FORMAT (linked ones the format cannot embed beside "
        "it), then reads the files back and says on stderr what was lost or changed, expected (the "
        "format has no place for it) or unexpected. OUT's suffix picks the container (card.png, "
        "card.json); OUT/ or no -o names each file after its entity, keeping the input's container. "
        "A format of several files is written as files (textgen-webui: -o Name.yaml and its picture "
        "beside it; card-folder: -o DIR/ is the folder). A card folder, or a character YAML named "
        "with its picture, is one IN. "
        "Several INs, a folder or a glob: a batch into -o OUTDIR, each file named after its input "
        "(sub-folders kept), on -j processes, with a failure line per bad input (exit 3).",
        _convert_args,
        "cmd_convert",
    ),
    (
        "fidelity",
        "round-trip fidelity checks over files: rows, report.json and report.html in DIR",
        "Runs the three fidelity checks (native round trip, canonical stability, "
        "cross-format to every format of the same kind) on every file below each PATH and writes "
        "DIR/rows-*.jsonl, DIR/report.json and DIR/report.html. LABEL=PATH names a root in input "
        "keys (default: the folder's name), so reports from different machines compare.",
        _fidelity_args,
        "cmd_fidelity",
    ),
    (
        "schema",
        "the JSON Schema of each entity kind, on stdout or into DIR",
        None,
        _schema_args,
        "cmd_schema",
    ),
    ("audit", audit.HELP, audit.DESCRIPTION, audit.configure, "cmd_audit"),
)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``bunzai`` parser. Given the arguments it will parse, a command of the codec library
    (``detect``...) gets a parser of that command alone: building the others' parsers, and importing
    the plugins' commands (the pipeline's jobs), is start-up time a one-file command does not need.
    Without a known command (``bunzai --help``, a mistyped or a plugin command) every command is
    built, so the usage lists them all."""
    p = _Parser(
        prog="bunzai", description="Convert AI-roleplay cards, lorebooks, regex, personas and presets."
    )
    p.add_argument("--version", action="version", version=_version())
    p.add_argument("--debug", action="store_true", help="a failure shows its traceback")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    command = next((a for a in argv if not a.startswith("-")), None) if argv is not None else None
    known = {name for name, *_ in _COMMANDS}
    for name, help, description, arguments, fn in _COMMANDS:
        if command in known and command != name:
            continue  # each parser costs argparse's message look-ups: only the one to run is built
        sp = sub.add_parser(name, help=help, description=description)
        arguments(sp)
        sp.set_defaults(fn=globals()[fn])
    if command not in known:
        _add_plugins(sub, command)
    for sp in sub.choices.values():
        sp.set_defaults(_parser=sp)  # main() reports a usage error with the subcommand's usage
        if not _passes_through(sp):  # a job takes every argument as is (--debug too)
            sp.add_argument(
                "--debug",
                action="store_true",
                default=argparse.SUPPRESS,
                help="a failure shows its traceback",
            )
    return p


#: the entry-point group of commands that live outside the codec library (the pipeline's jobs)
COMMANDS_GROUP = "bunzai.commands"


def _add_plugins(sub: Any, command: str | None) -> None:
    """The commands of the ``bunzai.commands`` entry points (each a function that adds its
    subcommand to ``sub``): only the one the command line names, else every one (``--help``, a
    mistyped command: the usage lists them all). None when bunzai's jobs are not installed."""
    from importlib.metadata import entry_points

    found = list(entry_points(group=COMMANDS_GROUP))
    for ep in [ep for ep in found if ep.name == command] or found:
        ep.load()(sub)


def _passes_through(parser: argparse.ArgumentParser) -> bool:
    """Whether a subcommand hands every argument to its job untouched (it has no option prefix)."""
    return "-" not in parser.prefix_chars


#: options that name a format id, by ``dest``: an unknown id is a usage error (exit 2)
_FORMAT_OPTIONS = {"to": "--to", "source_format": "--from", "old_format": "--format"}
#: the commands whose ``--to`` may also be an app name (that app's format for each entity's kind)
_APP_TARGETS = ("convert",)


def _check_format_ids(args: argparse.Namespace) -> None:
    from bunzai_codecs.core import registry
    from bunzai_codecs.core.errors import BunzaiError

    parser = getattr(args, "_parser", None)
    for dest, flag in _FORMAT_OPTIONS.items():
        value = getattr(args, dest, None)
        for fid in value if isinstance(value, list) else [value]:
            if not isinstance(fid, str):
                continue
            try:
                if dest == "to" and args.command in _APP_TARGETS:
                    registry.check_target(fid)  # a format id, or an app name
                else:
                    registry.get(fid)
            except BunzaiError as exc:
                if parser is None:
                    raise
                parser.error(f"{flag}: {exc.message}")


def main(argv: Sequence[str] | None = None) -> int:
    from bunzai_codecs.core.errors import BunzaiError
    from bunzai_codecs.core.files import OutputError

    parser = build_parser(sys.argv[1:] if argv is None else argv)
    args, extras = parser.parse_known_args(argv)
    if extras:  # argparse would print the top-level usage: the subcommand's is the useful one
        getattr(args, "_parser", parser).error(f"unrecognized arguments: {' '.join(extras)}")
    _check_format_ids(args)
    debug = bool(getattr(args, "debug", False))
    if debug and _passes_through(getattr(args, "_parser", parser)):
        args.args = [*args.args, "--debug"]
    prog = f"bunzai {args.command}"
    from bunzai_codecs.core.stop import interrupted_exit, terminate_as_interrupt

    try:
        with terminate_as_interrupt():  # SIGTERM takes the Ctrl-C path: staged files are removed
            return int(args.fn(args))
    except (BunzaiError, _InputError) as exc:
        _report(exc, debug)
        return Exit.INPUT
    except OutputError as exc:
        _report(exc, debug, f"{prog}: error: ")
        return Exit.FAILED
    except BrokenPipeError:
        return Exit.OK
    except KeyboardInterrupt as exc:
        print(f"{prog}: interrupted", file=sys.stderr)
        return interrupted_exit(exc)
    except OSError as exc:  # an output or store problem the command did not name itself
        _report(exc, debug, f"{prog}: error: {type(exc).__name__}: ", text=exc.strerror or str(exc))
        return Exit.FAILED
    except Exception as exc:
        _report(
            exc,
            debug,
            f"{prog}: internal error (a bug: please report it; --debug shows the traceback): "
            f"{type(exc).__name__}: ",
        )
        return Exit.INTERNAL


def _report(exc: BaseException, debug: bool, prefix: str = "", text: str | None = None) -> None:
    if debug:
        traceback.print_exc()
    line = " ".join((str(exc) if text is None else text).split())
    if isinstance(exc, OSError) and exc.filename and str(exc.filename) not in line:
        line = f"{exc.filename}: {line}"
    print(f"{prefix}{line}", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
