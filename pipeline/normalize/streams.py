"""The run's streams as the steps of the normalize graph hand them on (pipeline/normalize/graph.py).

The local runners (the DirectRunner's FnApiRunner) materialise every ``Flatten`` of several
inputs in the job process. So a stream that several stages make (inventory rows come from the
reader, the detector, the decoder, the validator, ``--since``) is never flattened: it travels as
its *producers*, a dict of PCollections by name, and every consumer is applied to each producer on
its own (``each``), fused with it. Only small partial results (shard run notes, partial sums,
partial reports) meet in a Flatten.

``Results`` is what the steps make for the run's outputs, one field per stream; the steps that
make results (List, Normalize, CarryForward) each return one, ``merged`` joins them, and the
steps that consume them (Write, Count) take them as their input. A new dataset is a new field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import apache_beam as beam

#: one stream, as its producers: name -> PCollection (never flattened; see ``each``)
Producers = dict[str, Any]


class Results(NamedTuple):
    """What the run writes and counts, each stream as its producers (``Producers``)."""

    #: canonical lines (``datasets.CanonicalLine``: the line, its entity id, its input's uri)
    canonical: Producers
    #: inventory rows (``elements.inventory_row``): one per listed input
    inventory: Producers
    #: reject rows (``elements.reject``)
    rejects: Producers
    #: fidelity rows (``FidelityRow.to_json()``); none with ``--fidelity off``
    fidelity: Producers
    #: entity index rows (``index.index_row``): one per canonical line
    index_rows: Producers
    #: ``export.ExportCandidate``s: settled at the commit of exports, one winner per path
    exports: Producers
    #: paths (relative to the output) of exports staged straight to their place
    exported: Producers
    #: uris of listed inputs an output accounts for besides a reject (an entity's source)
    accounted: Producers
    #: count pairs ``((key, ...), n)`` of what no stream above shows (deleted inputs, export attempts)
    counts: Producers
    #: blob references ``(sha256, (bytes, where))`` of the canonical lines (``blobs.SettleBlobs``)
    blobs: Producers


def results(**streams: Producers) -> Results:
    """``Results`` with the given streams, every other one empty."""
    return Results(**{name: dict(streams.get(name, {})) for name in Results._fields})


def merged(*parts: Results) -> Results:
    """The streams of ``parts`` together, producer by producer (names may not repeat)."""
    out: dict[str, Producers] = {name: {} for name in Results._fields}
    for part in parts:
        for name, producers in zip(Results._fields, part, strict=True):
            twice = out[name].keys() & producers.keys()
            if twice:
                raise ValueError(f"{name}: producers named twice: {sorted(twice)}")
            out[name].update(producers)
    return Results(**out)


@dataclass
class Each(beam.PTransform):
    """Producers -> producers: ``transform(*args)`` applied to each producer on its own, labelled
    with its name, so that it fuses with it."""

    transform: Any
    args: tuple[Any, ...] = ()

    def expand(self, producers: Producers) -> Producers:
        return {name: pc | name >> self.transform(*self.args) for name, pc in producers.items()}


def each(label: str, producers: Producers, transform: Any, *args: Any) -> Producers:
    """``Each`` under ``label``, for any number of producers (none: none)."""
    return producers | label >> Each(transform, args) if producers else {}


__all__ = ["Each", "Producers", "Results", "each", "merged", "results"]
