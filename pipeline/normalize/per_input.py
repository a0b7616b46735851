"""Step ``Normalize``: every listed file read, detected, decoded, validated, round-tripped and
exported, in one fused chain per input.

    Pending -> ReadBytes -> Detect -> Decode -> Validate -> CanonicalRecords
                                                          -> StoreBlobs (the lines' big bytes, staged once)
                                                          -> RoundTrip (--fidelity full / native;
                                                             and the entity index's rows)
    Pending (the sample) -> LearnPatterns (--fidelity full, --fidelity-sample 1/K, K > 1): the
                            book RoundTrip predicts cross rows from (a side input)
                                                          -> Export (--export)

The bytes and the entities never leave the chain: what it hands on (``streams.Results``) is shard
records, rows and export paths, each stream as its producers (one per stage), so every consumer
fuses with the stage that made it. Each stage's rejects and inventory rows are its own producers;
an input rejected whole gets its fidelity ``decode`` row from the stage that rejected it
(``roundtrip.rejected_row``).
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Any, NamedTuple

import apache_beam as beam

from pipeline.dataset.blobs import StoreBlobs
from pipeline.dataset.datasets import canonical_lines
from pipeline.dataset.index.rows import INDEX, unchecked_rows
from pipeline.export.files import WRITTEN, Export
from pipeline.normalize.counts import export_attempt
from pipeline.normalize.decode import Decode, Detect
from pipeline.normalize.elements import INVENTORY, REJECTED_WHOLE, REJECTS, ValidInput
from pipeline.normalize.read import REFRESHED, UNCHANGED, ReadBytes
from pipeline.normalize.roundtrip import (
    LearnPatterns,
    RoundTrip,
    pattern_counts,
    rejected_row,
)
from pipeline.normalize.streams import Producers, Results, each, results
from pipeline.normalize.validate import Validate
from pipeline.runtime.options import NormalizeConfig
from pipeline.runtime.storage import Output


def _entity_sources(v: ValidInput) -> set[str]:
    """The uris a valid input's entities account for (the balance)."""
    return {ve.entity.source.uri for ve in v.accepted if ve.entity.source is not None}


class Normalized(NamedTuple):
    #: what this run made for its outputs
    results: Results
    #: ``Pending`` that ``--since`` found unchanged (not read again)
    unchanged: Any
    #: uris the previous run had that this run processed anew
    refreshed: Any


@dataclass
class Normalize(beam.PTransform):
    """``Pending`` (spread) -> ``Normalized``. ``since``: compare with the previous inventory rows
    the listing paired (``--since``); ``shared_sizes``: ``listing.SharedSizes``' output (exports)."""

    cfg: NormalizeConfig
    output: Output
    staging: str
    _: KW_ONLY
    since: bool
    shared_sizes: Any = None

    def expand(self, pending: Any) -> Normalized:
        cfg = self.cfg
        read = pending | "ReadBytes" >> ReadBytes(
            cfg.inputs, cfg.storage, cfg.max_file_bytes, since=self.since, shared_sizes=self.shared_sizes
        )
        detected = read.files | "Detect" >> Detect()
        decoded = detected.detected | "Decode" >> Decode()
        validated = decoded.decoded | "Validate" >> Validate()
        valid = validated.valid
        stages = {"read": read, "detect": detected, "decode": decoded, "validate": validated}
        rejects: Producers = {name: out[REJECTS] for name, out in stages.items()}
        fidelity: Producers = {}
        index: Producers = {}
        exports: Producers = {}
        exported: Producers = {}
        counts: Producers = {}
        if cfg.fidelity != "off":
            book = None
            if cfg.fidelity == "full" and cfg.fidelity_sample > 1:  # cross rows by pattern
                book = pending | "LearnPatterns" >> LearnPatterns(
                    cfg.inputs, cfg.storage, cfg.max_file_bytes, cfg.fidelity_sample
                )
                counts["patterns"] = book | "PatternCounts" >> beam.FlatMap(pattern_counts)
            roundtrip = valid | "RoundTrip" >> RoundTrip(
                cross=cfg.fidelity == "full", sample=cfg.fidelity_sample, book=book
            )
            rejects["roundtrip"] = roundtrip.rejects
            fidelity["roundtrip"] = roundtrip.rows
            index["roundtrip"] = roundtrip[INDEX]  # the entity index's rows (pipeline/dataset/index/)
            whole = {name: out[REJECTED_WHOLE] for name, out in stages.items()}
            fidelity.update(each("RejectedRow", whole, beam.FlatMap, rejected_row))
        else:  # no RoundTrip: the index rows without a native status
            index["fresh"] = valid | "IndexRows" >> beam.FlatMap(unchecked_rows)
        if cfg.export:
            made = valid | "Export" >> Export(cfg.export, self.output, self.staging)
            rejects["export"] = made.rejects
            exports["fresh"] = made.candidates
            exported["fresh"] = made[WRITTEN]
            attempts = {"candidates": made.candidates, "written": made[WRITTEN]}
            counts.update(each("ExportAttempts", attempts, beam.Map, export_attempt))
        made_results = results(
            canonical={"fresh": valid | "CanonicalLines" >> beam.FlatMap(canonical_lines)},
            inventory={name: out[INVENTORY] for name, out in stages.items()},
            rejects=rejects,
            fidelity=fidelity,
            index_rows=index,
            exports=exports,
            exported=exported,
            accounted={"fresh": valid | "EntitySources" >> beam.FlatMap(_entity_sources)},
            counts=counts,
            blobs={"fresh": valid | "StoreBlobs" >> StoreBlobs(self.output, self.staging)},
        )
        return Normalized(made_results, read[UNCHANGED], read[REFRESHED])


__all__ = ["Normalize", "Normalized"]
