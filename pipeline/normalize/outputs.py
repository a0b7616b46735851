"""Step ``WriteOutputs``: the run's results, staged (``.bunzai-staging/<run>/out/``).

    canonical / rejects / inventory / fidelity / index rows -> sorted shards
        (pipeline/dataset/shards.py, one writer fused with each producer; datasets.DATASETS says
        what each holds and how a row becomes its shard record): the canonical lines one shard
        per unit of inputs, written once; the others through sorted runs, one plan and one merge
        step for all (the index's shards are Parquet files, pipeline/dataset/index/)
    fidelity rows -> fidelity/report.{json,html} (folded per producer)
    export candidates -> CommitExports (one winner per path); exports staged straight to their
        paths pass as they are
    blob references -> SettleBlobs (one per digest: staged, kept in place, or copied from the
        previous run's folder; pipeline/dataset/blobs.py)

Nothing here is in place yet: ``finish.Finish`` commits it. A new output is a new field of
``streams.Results`` written here (a dataset: a new entry of ``datasets.DATASETS``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import apache_beam as beam

from pipeline.dataset.blobs import KEPT as BLOBS_KEPT
from pipeline.dataset.blobs import SettleBlobs
from pipeline.dataset.datasets import DATASETS
from pipeline.dataset.index.rows import INDEX
from pipeline.dataset.shards import WriteDatasets
from pipeline.export.files import CommitExports
from pipeline.normalize.counts import export_counts
from pipeline.normalize.fidelity_report import WriteFidelityReport
from pipeline.normalize.packed import InputUnits
from pipeline.normalize.streams import Producers, Results, each
from pipeline.runtime.options import NormalizeConfig
from pipeline.runtime.storage import Output

#: the ``Results`` field of a dataset not named as it is
_FIELD = {INDEX: "index_rows"}


class Written(NamedTuple):
    #: ``ShardInfo`` of every shard staged
    shards: Any
    #: paths (relative to the output) of every file staged
    staged: Any
    #: paths the previous run left in place (``--since`` into its own folder); None: no step
    #: of this run can keep one
    kept: Any
    #: count pairs of the exports committed and kept
    counts: Producers


@dataclass
class WriteOutputs(beam.PTransform):
    """``streams.Results`` -> ``Written``. ``totals``: the listing's (``listing.Listed.totals``),
    from which the units of inputs, one canonical shard each, are known."""

    cfg: NormalizeConfig
    output: Output
    staging: str
    totals: Any

    def expand(self, res: Results) -> Written:
        output, staging = self.output, self.staging
        # --fidelity off: no fidelity shards (a dataset without producers has no files)
        streams = {ds.name: getattr(res, _FIELD.get(ds.name, ds.name)) for ds in DATASETS}
        units = InputUnits(self.cfg.shard_bytes)
        shards = streams | "WriteDatasets" >> WriteDatasets(
            DATASETS,
            output,
            staging,
            target_bytes=self.cfg.shard_bytes,
            units=units,
            totals=self.totals,
            spill_bytes=units.spill_bytes,
        )
        staged = [shards | "ShardPaths" >> beam.Map(lambda s: s.rel)]
        kept = []
        counts: Producers = {}
        if res.fidelity:
            staged.append(
                res.fidelity | "FidelityReport" >> WriteFidelityReport(output, self.cfg.inputs, staging)
            )
        if res.exports:
            settled = (
                tuple(res.exports.values())
                | "AllCandidates" >> beam.Flatten()
                | "CommitExports" >> CommitExports(output, staging)
            )
            staged.append(settled.staged)
            kept.append(settled.kept)
            counts.update(each("CountExports", {"committed": settled.staged}, beam.FlatMap, export_counts))
            counts.update(each("CountKept", {"kept": settled.kept}, beam.FlatMap, export_counts))
        if res.blobs:  # the lines' big bytes, once per digest (pipeline/dataset/blobs.py)
            previous_root = self.cfg.since.rsplit("/", 1)[0] if self.cfg.since else None
            blobs = (
                tuple(res.blobs.values())
                | "AllBlobRefs" >> beam.Flatten()
                | "Blobs" >> SettleBlobs(output, staging, previous_root)
            )
            staged.append(blobs.staged)
            kept.append(blobs[BLOBS_KEPT])
            counts["blobs"] = blobs.counts
        staged += res.exported.values()
        exported = each("CountExported", res.exported, beam.FlatMap, export_counts)
        counts.update({f"exported/{name}": pc for name, pc in exported.items()})
        return Written(
            shards,
            tuple(staged) | "Staged" >> beam.Flatten(),
            tuple(kept) | "AllKept" >> beam.Flatten() if kept else None,
            counts,
        )


__all__ = ["WriteOutputs", "Written"]
