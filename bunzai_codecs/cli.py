"""The ``bunzai`` command line (a stable contract: scripts depend on its output and exit codes).

Exit codes: 0 ok; 1 ``convert --strict`` lost something unexpectedly; 2 usage error; 3 an input
was not recognised or was rejected (the typed error's one-line message goes to stderr, never a
traceback).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

import orjson

EXIT_OK, EXIT_LOSSY, EXIT_USAGE, EXIT_INPUT = 0, 1, 2, 3


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        print(f"bunzai: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _files(paths: Sequence[str]) -> Iterator[Path]:
    """Files named on the command line; a directory stands for every file below it (sorted)."""
    for p in map(Path, paths):
        if p.is_dir():
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for f in sorted(files):
                    if not f.startswith("."):
                        yield Path(root) / f
        else:
            yield p


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


class _InputError(Exception):
    pass


# -- commands ------------------------------------------------------------------------------------


def cmd_formats(args: argparse.Namespace) -> int:
    from bunzai_codecs.core import registry

    if args.markdown:
        from bunzai_codecs.support import format_support_markdown

        sys.stdout.write(format_support_markdown())
        return EXIT_OK
    rows = [("FORMAT", "KIND", "SUFFIXES", "APP")]
    for c in sorted(registry.all_codecs(), key=lambda c: (c.kind, c.id)):
        rows.append((c.id, c.kind_label(), " ".join(c.suffixes) or "-", c.label or c.family))
    _table(rows)
    return EXIT_OK


def cmd_detect(args: argparse.Namespace) -> int:
    from bunzai_codecs.core import registry
    from bunzai_codecs.core.errors import BunzaiError
    from bunzai_codecs.core.sniff import Sniff

    status = EXIT_OK
    rows = [("FILE", "FORMAT", "KIND", "SCORE", "RUNNER-UP")]
    for path in _files(args.files):
        try:
            s = Sniff(_read(path), path.name, uri=str(path))
        except (BunzaiError, _InputError) as exc:
            print(str(exc), file=sys.stderr)
            status = EXIT_INPUT
            continue
        d = registry.detect_all(s)
        best = d.best
        if args.json:
            kind = registry.get(best.id).kind_of(s) if best else None
            line = {
                "file": str(path),
                "format": best.id if best else None,
                "kind": kind,
                "score": best.score if best else 0.0,
                "candidates": [[c.id, c.score] for c in d.candidates],
            }
            sys.stdout.write(orjson.dumps(line).decode() + "\n")
        else:
            ru = d.runner_up
            rows.append(
                (
                    str(path),
                    best.id if best else "-",
                    registry.get(best.id).kind_of(s) if best else "-",
                    f"{best.score:.2f}" if best else "0.00",
                    f"{ru.id} ({ru.score:.2f})" if ru else "-",
                )
            )
        if best is None:
            print(f"{path}: NotRecognized: no format recognised this input", file=sys.stderr)
            status = EXIT_INPUT
    if not args.json:
        _table(rows)
    return status


def cmd_inspect(args: argparse.Namespace) -> int:
    from bunzai_codecs.bundle import read
    from bunzai_codecs.formats.vaud.codec import dumps

    path = Path(args.file)
    _moved_notes(args.format)
    decoded = read(_read(path), path.name, uri=str(path), format=args.format)
    for e in decoded.entities:
        if args.pretty:
            from bunzai_codecs.core.sniff import parse_json

            sys.stdout.write(orjson.dumps(parse_json(dumps(e)), option=orjson.OPT_INDENT_2).decode() + "\n")
        else:
            sys.stdout.write(dumps(e).decode() + "\n")
    return EXIT_OK


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
    from bunzai_codecs.core.media import sniff_mime

    src = Path(args.input)
    _moved_notes(args.source_format, args.to)
    image = None
    if args.image is not None:
        image = _read(Path(args.image))
        if not (sniff_mime(image) or "").startswith("image/"):
            print(f"bunzai: error: --image {args.image}: not an image file", file=sys.stderr)
            return EXIT_USAGE
    opts = Options(
        to=args.to,
        output=args.output,
        source_format=args.source_format,
        entity=args.entity,
        kind=args.kind,
        image=image,
    )
    try:
        planned = plan(src, _read(src), opts)
        written = write_planned(planned, force=args.force)
    except ConvertUsageError as exc:
        print(f"bunzai: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    rows = losses(planned)
    if not args.quiet:
        for f, path in zip(planned.files, written, strict=True):
            print(f"wrote {path} ({f.export.format}, {f.export.entity.kind})", file=sys.stderr)
        for line in render_losses(rows):
            print(line, file=sys.stderr)
    if args.strict and unexpected(rows):
        return EXIT_LOSSY
    return EXIT_OK


def _moved_notes(*format_ids: str | None) -> None:
    """A deprecation note on stderr for each named format id whose old meaning moved."""
    from bunzai_codecs.core import registry

    for note in dict.fromkeys(registry.moved_note(f) for f in format_ids if f):
        if note is not None:
            print(f"note: {note}", file=sys.stderr)


def _write_file(path: Path, data: bytes) -> None:
    """Atomic: a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _labelled(arg: str) -> tuple[str, Path]:
    """``LABEL=PATH`` or ``PATH``: the label prefixes input keys so runs on other machines (or
    without the corpus) name the same file the same way; it defaults to the folder's name."""
    label, sep, path = arg.partition("=")
    if sep and label and "/" not in label and not Path(arg).exists():
        return label, Path(path)
    p = Path(arg)
    return (p.name if p.is_dir() else p.as_posix()), p


def fidelity_inputs(args: Sequence[str], exclude: Sequence[str] = ()) -> Iterator[tuple[str, Path]]:
    """``(input key, file)`` for every file below the given roots: ``LABEL/relative/path``; files
    whose name or key matches an ``exclude`` glob are left out."""
    from fnmatch import fnmatchcase

    for arg in args:
        label, root = _labelled(arg)
        if not root.exists():
            raise _InputError(f"{root}: no such file or directory")
        found = (
            ((f"{label}/{f.relative_to(root).as_posix()}", f) for f in _files([str(root)]))
            if root.is_dir()
            else iter([(label, root)])
        )
        for key, f in found:
            if not any(fnmatchcase(f.name, g) or fnmatchcase(key, g) for g in exclude):
                yield key, f


def cmd_fidelity(args: argparse.Namespace) -> int:
    from bunzai_codecs.core.errors import BunzaiError
    from bunzai_codecs.fidelity import check_file, reject_row
    from bunzai_codecs.fidelity_report import ReportBuilder, rows_jsonl, write_report

    out = Path(args.output)
    builder = ReportBuilder()
    chunks: list[bytes] = []
    labels = [_labelled(a)[0] for a in args.paths]
    for key, path in fidelity_inputs(args.paths, args.exclude or ()):
        try:
            rows = check_file(_read(path), path.name, input=key, uri=key, targets=args.to)
        except BunzaiError as exc:  # too big to read: a reject like any other
            rows = [reject_row(exc, input=key, uri=key)]
        builder.add_all(rows)
        chunks.append(rows_jsonl(rows))
        if args.verbose:
            worst = max((r.status for r in rows), key=_STATUS_ORDER.index)
            print(f"{key}: {len(rows)} checks, worst {worst}", file=sys.stderr)
    for old in out.glob("rows-*.jsonl") if out.is_dir() else ():
        old.unlink()
    _write_file(out / "rows-00000-of-00001.jsonl", b"".join(chunks))
    report = builder.report({"roots": labels})
    j, h = write_report(report, out)
    inp = report["inputs"]
    if not args.quiet:
        print(
            f"{inp['files']} files ({inp['rejected']} rejected), {inp['rows']} rows: {j}, {h}",
            file=sys.stderr,
        )
    return EXIT_OK


_STATUS_ORDER = ["decoded", "lossless", "expected", "unexpected", "error", "rejected"]


def cmd_schema(args: argparse.Namespace) -> int:
    from bunzai_codecs.support import write_schemas

    for p in write_schemas(Path(args.dir)):
        print(p)
    return EXIT_OK


def _table(rows: Sequence[tuple[str, ...]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="bunzai", description="Convert AI-roleplay cards, lorebooks, regex, personas and presets."
    )
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    f = sub.add_parser("formats", help="list the formats bunzai reads and writes")
    f.add_argument("--markdown", action="store_true", help="print docs/FORMAT-SUPPORT.md")
    f.set_defaults(fn=cmd_formats)

    d = sub.add_parser("detect", help="name the format of each file (directories are walked)")
    d.add_argument("files", nargs="+", metavar="FILE")
    d.add_argument("--json", action="store_true", help="one JSON object per file")
    d.set_defaults(fn=cmd_detect)

    i = sub.add_parser("inspect", help="print a file's canonical entities as vaud-json lines")
    i.add_argument("file", metavar="FILE")
    i.add_argument("--format", help="decode as this format instead of detecting")
    i.add_argument("--pretty", action="store_true", help="indent the JSON (one entity after another)")
    i.set_defaults(fn=cmd_inspect)

    c = sub.add_parser(
        "convert",
        help="export a file to another format (or its own: a round trip)",
        description="Writes every entity of IN as FORMAT (linked ones the format cannot embed beside "
        "it), then reads the files back and says on stderr what was lost or changed, expected (the "
        "format has no place for it) or unexpected. OUT's suffix picks the container (card.png, "
        "card.json); OUT/ or no -o names each file after its entity, keeping the input's container.",
    )
    c.add_argument("input", metavar="IN")
    c.add_argument("--to", required=True, metavar="FORMAT")
    c.add_argument("-o", "--output", metavar="OUT", help="output file, or folder (OUT/); default: .")
    c.add_argument("--from", dest="source_format", metavar="FORMAT", help="decode as this format")
    pick = c.add_mutually_exclusive_group()
    pick.add_argument("--entity", metavar="ID", help="convert this entity of IN (an id or unique id prefix)")
    pick.add_argument(
        "--kind", metavar="KIND", help="convert IN's entities of this kind (lorebook, regex...)"
    )
    c.add_argument("--image", metavar="FILE", help="the picture a PNG card is written into")
    c.add_argument("--force", action="store_true", help="overwrite existing files")
    c.add_argument("--strict", action="store_true", help="exit 1 when anything unexpected was lost")
    c.add_argument("-q", "--quiet", action="store_true", help="no report on stderr")
    c.set_defaults(fn=cmd_convert)

    fi = sub.add_parser(
        "fidelity",
        help="round-trip fidelity checks over files: rows, report.json and report.html in DIR",
        description="Runs the three fidelity checks (native round trip, canonical stability, "
        "cross-format to every format of the same kind) on every file below each PATH and writes "
        "DIR/rows-*.jsonl, DIR/report.json and DIR/report.html. LABEL=PATH names a root in input "
        "keys (default: the folder's name), so reports from different machines compare.",
    )
    fi.add_argument("paths", nargs="+", metavar="[LABEL=]PATH")
    fi.add_argument("-o", "--output", required=True, metavar="DIR")
    fi.add_argument("--to", action="append", metavar="FORMAT", help="limit cross-format targets (repeatable)")
    fi.add_argument(
        "--exclude", action="append", metavar="GLOB", help="skip files whose name or key matches (repeatable)"
    )
    fi.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    fi.add_argument("-v", "--verbose", action="store_true", help="one line per input on stderr")
    fi.set_defaults(fn=cmd_fidelity)

    s = sub.add_parser("schema", help="write the JSON Schema of each entity kind")
    s.add_argument("dir", nargs="?", default="docs/schema")
    s.set_defaults(fn=cmd_schema)

    _add_plugins(sub)
    return p


def _add_plugins(sub: Any) -> None:
    """Commands that live outside the codec library (the pipeline's jobs), when installed."""
    try:
        commands = importlib.import_module("jobs.commands")
    except ImportError:
        return
    commands.register(sub)


def main(argv: Sequence[str] | None = None) -> int:
    from bunzai_codecs.core.errors import BunzaiError

    args = build_parser().parse_args(argv)
    try:
        return int(args.fn(args))
    except BunzaiError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_INPUT
    except _InputError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
