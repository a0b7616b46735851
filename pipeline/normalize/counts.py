"""The manifest's numbers: count pairs ``((key, ...), n)`` made from the records themselves
(inventory rows, rejects, fidelity rows, committed exports), summed per key, so the manifest is
exact on every runner. Beam counters (pipeline/runtime/counters.py) report the same flow live.

``Count`` sums every stream of the run per bundle, fused with its producer (``BundleSum``), so only
a few partial sums per key and bundle meet in a Flatten, never one pair per input, and one step
sums them all; ``RejectExamples`` keeps the smallest uris per stage and error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import apache_beam as beam
from apache_beam.transforms.window import GlobalWindows

from pipeline.normalize.streams import Producers, Results, each

#: example inputs the manifest gives per stage and error
REJECT_EXAMPLES = 5

Pair = tuple[tuple[str, ...], int]


def row_counts(row: dict[str, Any]) -> Iterator[Pair]:
    """Counts one inventory row contributes: its status, format, entities and the stages it passed."""
    yield ("inputs", "listed"), 1
    yield ("inputs", row["status"]), 1
    entities = row.get("entities") or []
    if row.get("format"):
        yield ("formats", row["format"]), 1
    for eid in entities:
        yield ("entities", eid.split("-", 1)[0], row.get("format") or "?"), 1
    yield ("outcome", "entities" if entities else "rejected"), 1
    if row["status"] == "unchanged":
        yield ("stage", "read", "skipped"), 1
        return
    stopped = row.get("rejected")
    for stage in ("read", "detect", "decode"):
        yield ("stage", stage, "in"), 1
        if stopped == stage:
            return
        yield ("stage", stage, "out"), 1
    yield ("stage", "decode", "entities"), row.get("decoded") or 0
    yield ("stage", "validate", "in"), row.get("decoded") or 0
    yield ("stage", "validate", "out"), len(entities)


def reject_counts(rec: dict[str, Any]) -> Iterator[Pair]:
    yield ("rejects", rec["stage"], rec["error"]), 1


def fidelity_counts(row: dict[str, Any]) -> Iterator[Pair]:
    yield ("fidelity", row["check"], row["status"]), 1
    basis = row.get("basis") or {}  # a row of an older bunzai (carried by --since): observed
    yield ("fidelityBasis", basis.get("how", "observed")), 1
    if basis.get("disagreed"):
        yield ("fidelityBasis", "disagreed"), 1


def export_counts(rel: str) -> Iterator[Pair]:
    yield ("exports", rel.split("/")[1]), 1


def deleted_counts(_uri: str) -> Iterator[Pair]:
    """An input only the previous run had (``--since``)."""
    yield ("inputs", "deleted"), 1


def export_attempt(_item: Any) -> Pair:
    """An export made (staged straight to its path, or a candidate): the export stage's ``in``."""
    return ("stage", "export", "in"), 1


def reject_example(rec: dict[str, Any]) -> tuple[tuple[str, str], tuple[str, str]]:
    """``((stage, error), (uri, first line of the message))`` of a reject: the examples the
    manifest and the summary give per stage and error are the smallest uris."""
    lines = str(rec.get("message") or "").splitlines()
    first = lines[0] if lines else ""
    if len(first) > 200:
        first = first[:199] + "…"
    return (rec["stage"], rec["error"]), (rec["uri"], first)


class BundleSum(beam.DoFn):
    """Elements -> their count pairs (``pairs``; None: the elements are pairs) summed per key over
    a bundle, at its end: a few pairs per key and bundle, whatever the number of inputs."""

    def __init__(self, pairs: Callable[[Any], Iterable[Pair]] | None = None) -> None:
        self.pairs = pairs

    def start_bundle(self) -> None:
        self.sums: dict[tuple[str, ...], int] = {}

    def process(self, item: Any) -> None:
        sums = self.sums
        for key, n in [item] if self.pairs is None else self.pairs(item):
            sums[key] = sums.get(key, 0) + n

    def finish_bundle(self) -> Iterator[Any]:
        sums, self.sums = self.sums, {}
        for key, n in sums.items():
            yield GlobalWindows.windowed_value((key, n))


@dataclass
class Count(beam.PTransform):
    """``Results`` (and ``extra``: more count-pair producers, e.g. the exports committed) -> the
    run's counts, ``((key, ...), n)`` summed per key."""

    extra: Producers | None = None

    def expand(self, res: Results) -> Any:
        extra = dict(self.extra or {})
        twice = res.counts.keys() & extra.keys()
        if twice:
            raise ValueError(f"count producers named twice: {sorted(twice)}")
        parts = [
            *each("Inventory", res.inventory, beam.ParDo, BundleSum(row_counts)).values(),
            *each("Rejects", res.rejects, beam.ParDo, BundleSum(reject_counts)).values(),
            *each("Fidelity", res.fidelity, beam.ParDo, BundleSum(fidelity_counts)).values(),
            *each("Counts", {**res.counts, **extra}, beam.ParDo, BundleSum()).values(),
        ]
        return tuple(parts) | "AllCounts" >> beam.Flatten() | "Sum" >> beam.CombinePerKey(sum)


class RejectExamples(beam.PTransform):
    """Reject producers -> ``((stage, error), [up to REJECT_EXAMPLES (uri, message)])``."""

    def expand(self, rejects: Producers) -> Any:
        examples = each("Example", rejects, beam.Map, reject_example)
        return (
            tuple(examples.values())
            | "AllExamples" >> beam.Flatten()
            | "Smallest" >> beam.combiners.Top.SmallestPerKey(REJECT_EXAMPLES)
        )


__all__ = [
    "REJECT_EXAMPLES",
    "BundleSum",
    "Count",
    "RejectExamples",
    "deleted_counts",
    "export_attempt",
    "export_counts",
    "fidelity_counts",
    "reject_counts",
    "reject_example",
    "row_counts",
]
