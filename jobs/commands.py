"""Subcommands the ``bunzai`` CLI loads from the jobs package (``register(subparsers)``).

Kept apart from the codec library so ``bunzai_codecs`` never imports jobs or Beam; each command
imports its module only when it runs.
"""

from __future__ import annotations

import argparse
from typing import Any


def _audit(args: argparse.Namespace) -> int:
    from jobs import audit

    return audit.run(args)


def register(subparsers: Any) -> None:
    from jobs import audit

    p = subparsers.add_parser("audit", help=audit.HELP, description=audit.DESCRIPTION)
    audit.configure(p)
    p.set_defaults(fn=_audit)
