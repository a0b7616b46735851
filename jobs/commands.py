"""Subcommands the ``bunzai`` CLI picks up from the jobs package (``register`` is its hook).

Kept apart from the codec library so ``bunzai_codecs`` never imports jobs or Beam; each command
imports its module only when it runs.
"""

from __future__ import annotations

import argparse
from typing import Any


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
