"""Subcommands the ``bunzai`` CLI picks up from the jobs package (``register`` is its hook).

Kept apart from the codec library so ``bunzai_codecs`` never imports jobs or Beam; each command
imports its module only when it runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any


def run_job(
    argv: Sequence[str] | None,
    *,
    prog: str,
    help_text: Callable[[], str],
    start: Callable[[list[str]], int],
    usage: str = "",
) -> int:
    """The entry point ``bunzai normalize`` and ``bunzai export`` share (``argv``: the arguments,
    default ``sys.argv[1:]``): ``-h``/``--help`` prints ``help_text()`` and exits 0; otherwise
    malloc is tuned before the runner starts its workers (they inherit the settings), Beam's logs
    stay quiet unless ``--debug``, and ``start(args)`` parses and runs the job, its exit code
    returned. A ``UsageError`` from it is one line ``PROG: error: ...`` on stderr (then ``usage``,
    if given) and exit 2; SIGTERM is handled as Ctrl-C (:mod:`bunzai_codecs.core.stop`)."""
    from bunzai_codecs.core.stop import interrupted_exit, terminate_as_interrupt
    from jobs.normalize import EXIT_OK, EXIT_USAGE, beam_logs
    from pipeline.runtime.errors import UsageError
    from pipeline.runtime.memory import tune_malloc

    args = list(sys.argv[1:] if argv is None else argv)
    if "-h" in args or "--help" in args:
        sys.stdout.write(help_text())
        return EXIT_OK
    tune_malloc()  # before the runner starts its workers: they inherit the settings
    with beam_logs("--debug" in args):
        try:
            with terminate_as_interrupt():  # SIGTERM takes the Ctrl-C path: the staged run is removed
                return start(args)
        except UsageError as exc:
            print(f"{prog}: error: {exc}", file=sys.stderr)
            sys.stderr.write(usage)
            return EXIT_USAGE
        except KeyboardInterrupt as exc:  # before or after the run's own interrupt handling
            print(f"{prog}: interrupted", file=sys.stderr)
            return interrupted_exit(exc)


def _normalize(args: argparse.Namespace) -> int:
    from jobs.normalize import run

    return run(args.args)


def _export(args: argparse.Namespace) -> int:
    from jobs.export import run

    return run(args.args)


def _audit(args: argparse.Namespace) -> int:
    from jobs import audit

    return audit.run(args)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "normalize",
        help="run the Beam pipeline: canonical JSONL, exports, fidelity rows, rejects and a manifest",
        description="Run `bunzai normalize --help` for the options (any Beam option is accepted too).",
        add_help=False,
        prefix_chars="\0",  # every argument, --help included, goes to the job untouched
    )
    p.add_argument("args", nargs=argparse.REMAINDER)
    p.set_defaults(fn=_normalize)

    e = subparsers.add_parser(
        "export",
        help="write the entities of a canonical dataset (normalize's output) in app formats",
        description="Run `bunzai export --help` for the options (any Beam option is accepted too).",
        add_help=False,
        prefix_chars="\0",
    )
    e.add_argument("args", nargs=argparse.REMAINDER)
    e.set_defaults(fn=_export)

    from jobs import audit

    a = subparsers.add_parser("audit", help=audit.HELP, description=audit.DESCRIPTION)
    audit.configure(a)
    a.set_defaults(fn=_audit)
