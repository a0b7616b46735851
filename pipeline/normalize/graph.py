"""The normalize graph: five named steps, each a composite of its own module.

    ListInputs    (listing.py)   --input URLs -> each file once (dedupe by uri; --since: paired with
                                 its previous inventory row), packed and spread over the workers
    Normalize     (normalize.py) read -> detect -> decode -> validate -> canonical lines,
                                 RoundTrip (fidelity rows), Export; fused per input
    CarryForward  (since.py)     --since: the previous run's results for the inputs not read again
    WriteOutputs  (outputs.py)   canonical/, rejects/, inventory/, fidelity/ shards, the fidelity
                                 report, index/*.parquet, exports/: all staged
                                 (.bunzai-staging/<run>/out/)
    Finish        (finish.py)    counts, balance, the verdict; only if ok: the commit (move into
                                 place, Prune, manifest.json last; pipeline/dataset/commit.py)
    BigQuery      (index.py)     --bigquery-table: the committed entity index loaded into BigQuery

The steps hand on ``streams.Results``: every stream (canonical records, inventory rows, rejects,
fidelity rows, export candidates, ...) as its producers, never flattened, so each consumer fuses
with the stage that made it. Big data (bytes, entities, lines) stays inside the fused read-to-write
chain; only small records (file refs packed 64 to a batch, run notes, export candidates, partial
counts) cross a shuffle, so the local runners, which hold shuffled data in memory, stream an
archive of any size.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import apache_beam as beam

from pipeline.dataset.commit import STAGING
from pipeline.dataset.index.bigquery import LoadBigQuery
from pipeline.normalize.finish import Finish
from pipeline.normalize.listing import ListInputs
from pipeline.normalize.outputs import WriteOutputs
from pipeline.normalize.per_input import Normalize
from pipeline.normalize.since import CarryForward, Previous, codec_fingerprint, load_previous
from pipeline.normalize.streams import merged
from pipeline.runtime.options import NormalizeConfig
from pipeline.runtime.storage import Output


@dataclass(frozen=True)
class Built:
    output: Output
    previous: Previous | None
    manifest: Any
    #: this run's staging folder, relative to the output (``.bunzai-staging/<run>``)
    staging: str = ""


def _header(
    cfg: NormalizeConfig, runner: str, started: str, fingerprint: str, previous: Previous | None
) -> dict[str, Any]:
    """What the manifest says about the run before it ran (pipeline/dataset/commit.py)."""
    since = previous.public() if previous is not None else None
    return {
        "options": cfg.public(),
        "runner": runner,
        "started": started,
        "fingerprint": fingerprint,
        "since": since,
    }


def build(p: beam.Pipeline, cfg: NormalizeConfig, *, runner: str, started: str) -> Built:
    fingerprint = codec_fingerprint()
    previous = load_previous(cfg, fingerprint)
    reuse = previous if previous is not None and previous.honoured else None
    output, staging = Output(cfg.output, cfg.storage), f"{STAGING}/{uuid.uuid4().hex}"

    listed = p | "ListInputs" >> ListInputs(cfg, reuse)
    fresh = listed.pending | "Normalize" >> Normalize(
        cfg, output, staging, since=reuse is not None, shared_sizes=listed.shared_sizes
    )
    parts = [listed.results, fresh.results]
    if reuse is not None:  # results are reused only under the same --fidelity and exports
        left = {"unchanged": fresh.unchanged, "refreshed": fresh.refreshed, "deleted": listed.deleted}
        carry = CarryForward(reuse, cfg.storage, export=cfg.export, fidelity=cfg.fidelity != "off")
        parts.append(left | "CarryForward" >> carry)
    results = merged(*parts)
    written = results | "WriteOutputs" >> WriteOutputs(cfg, output, staging, listed.totals)

    header = _header(cfg, runner, started, fingerprint, previous)
    finish = {"packed": listed.packed, "patterns": listed.patterns, "results": results, "written": written}
    manifest = finish | "Finish" >> Finish(cfg, output, staging, header)
    if cfg.bigquery_table:  # the committed entity index, loaded into BigQuery once the run is committed
        written.shards | "BigQuery" >> LoadBigQuery(cfg.bigquery_table, output, manifest)
    return Built(output, previous, manifest, staging)


__all__ = ["STAGING", "Built", "build"]
