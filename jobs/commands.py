"""Subcommands the ``bunzai`` CLI picks up from the jobs package (``register`` is its hook)."""

from __future__ import annotations

import argparse
from typing import Any


def _normalize(args: argparse.Namespace) -> int:
    from jobs.normalize import run

    return run(args.args)


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
