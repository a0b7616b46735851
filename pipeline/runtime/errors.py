"""The one error a job's own code raises for a bad command line: the job prints it and exits with
the usage code (``bunzai_codecs.exitcodes``)."""

from __future__ import annotations


class UsageError(ValueError):
    """A bad option: the job prints it and exits 2."""


__all__ = ["UsageError"]
