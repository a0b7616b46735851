"""The pipeline's subcommands of the ``bunzai`` CLI, found through the ``bunzai.commands`` entry-point
group (pyproject.toml): each entry is a function that adds its subcommand to the CLI's subparsers.

Kept apart from the codec library so ``bunzai_codecs`` never imports jobs or Beam, and light: a
command imports its job (and Beam) only when it runs, so ``bunzai --help`` stays fast. A job's
parser takes every argument as it is (``prefix_chars``: no option of its own, ``--help`` and
``--debug`` included): the job parses them itself, Beam options among them.
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


def _job(subparsers: Any, name: str, help: str, fn: Any) -> None:
    p = subparsers.add_parser(
        name,
        help=help,
        description=f"Run `bunzai {name} --help` for the options (any Beam option is accepted too).",
        add_help=False,
        prefix_chars="\0",  # every argument, --help included, goes to the job untouched
    )
    p.add_argument("args", nargs=argparse.REMAINDER)
    p.set_defaults(fn=fn)


def normalize(subparsers: Any) -> None:
    """``bunzai normalize`` (entry point ``bunzai.commands:normalize``)."""
    _job(
        subparsers,
        "normalize",
        "run the Beam pipeline: canonical JSONL, exports, fidelity rows, rejects and a manifest",
        _normalize,
    )


def export(subparsers: Any) -> None:
    """``bunzai export`` (entry point ``bunzai.commands:export``)."""
    _job(
        subparsers,
        "export",
        "write the entities of a canonical dataset (normalize's output) in app formats",
        _export,
    )


__all__ = ["export", "normalize"]
