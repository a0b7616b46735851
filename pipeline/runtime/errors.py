"""The errors a job's own code raises for its command line: a bad option (the usage code) and an
input it names that is missing or unreadable (the input code; ``bunzai_codecs.exitcodes``)."""

from __future__ import annotations


class UsageError(ValueError):
    """A bad option: the job prints it and exits 2."""


class MissingInput(Exception):
    """An input the command line names (``--since``'s manifest) is missing or cannot be read: the
    job prints it and exits 3."""


__all__ = ["MissingInput", "UsageError"]
