"""Partial results made per bundle, fused with the stage that produces the elements.

A step of a local runner costs every worker a bundle of its own, and a combine across a whole
PCollection (``CombineGlobally``, ``Count.Globally``) costs two or three steps; a partial result
per bundle, emitted when the bundle ends and read where it is needed as a side input
(``AsList``), costs none. What is left to add up is a few values per bundle.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import apache_beam as beam
from apache_beam.transforms.window import GlobalWindows


class BundleCount(beam.DoFn):
    """Elements -> how many there were in each bundle (one int per bundle that had any)."""

    def start_bundle(self) -> None:
        self.n = 0

    def process(self, _item: Any) -> None:
        self.n += 1

    def finish_bundle(self) -> Iterator[Any]:
        if self.n:
            yield GlobalWindows.windowed_value(self.n)


def counted(pcoll: Any, label: str) -> Any:
    """``pcoll``'s partial counts (``BundleCount``), labelled ``label``: ``sum`` of them read as
    ``AsList`` is its size, and reading them waits for all of it."""
    return pcoll | label >> beam.ParDo(BundleCount())


__all__ = ["BundleCount", "counted"]
