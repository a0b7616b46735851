"""Every exit code of the ``bunzai`` command line, defined once and shared by every command (the
library's ``convert``, ``fidelity``, ``audit``... and the pipeline's ``normalize`` and ``export``).
Each code means one thing, whichever command returns it; ``MEANING`` is its one line, which
README.md's table ("Exit codes and errors") starts each row with (``tests/test_exit_codes.py`` walks
both) and which the jobs' ``--help`` prints.
"""

from __future__ import annotations

import signal
from collections.abc import Iterable
from enum import IntEnum


class Exit(IntEnum):
    """The exit codes (a stable contract: scripts and schedulers read them)."""

    #: the command did what it was asked (rejected inputs of a pipeline run are results)
    OK = 0
    #: ``bunzai audit`` (or ``normalize --audit-against``) found a regression
    REGRESSION = 1
    #: a usage error: nothing was done
    USAGE = 2
    #: an input is missing, unreadable, not recognised or rejected
    INPUT = 3
    #: an output cannot be written, or a pipeline run failed: nothing was committed
    FAILED = 4
    #: an internal error (a bug)
    INTERNAL = 5
    #: ``convert --strict``: a conversion lost something the target format can hold
    LOSSY = 6
    #: ``normalize``: the manifest does not balance (a bug); nothing was committed
    UNBALANCED = 7
    #: Ctrl-C (128 + SIGINT)
    INTERRUPTED = 128 + signal.SIGINT
    #: SIGTERM, handled as Ctrl-C (128 + SIGTERM)
    TERMINATED = 128 + signal.SIGTERM


#: each code's one line: README.md's table starts each row with it
MEANING: dict[Exit, str] = {
    Exit.OK: "done",
    Exit.REGRESSION: "the audit found a regression",
    Exit.USAGE: "usage error",
    Exit.INPUT: "an input is missing, unreadable, not recognised or rejected",
    Exit.FAILED: "an output cannot be written, or the run failed",
    Exit.INTERNAL: "an internal error",
    Exit.LOSSY: "`convert --strict` lost something unexpectedly",
    Exit.UNBALANCED: "the manifest does not balance",
    Exit.INTERRUPTED: "interrupted (Ctrl-C)",
    Exit.TERMINATED: "terminated (SIGTERM)",
}


def describe(codes: Iterable[Exit], details: dict[Exit, str] | None = None) -> str:
    """``exit codes: 0 done; 2 usage error (...)...``: a command's codes for its ``--help``, each
    with its meaning and, from ``details``, what it means for that command."""
    details = details or {}
    parts = []
    for code in codes:
        more = details.get(code)
        parts.append(f"{int(code)} {MEANING[code].replace('`', '')}" + (f" ({more})" if more else ""))
    return "exit codes: " + "; ".join(parts) + "."


__all__ = ["MEANING", "Exit", "describe"]
