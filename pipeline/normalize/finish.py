"""Step ``Finish``: the run's numbers, its balance and its verdict, then (only when the listing is
complete and the run balanced) the commit: every staged file moved into place, the files of
earlier runs pruned, ``manifest.json`` written last (pipeline/dataset/commit.py).

    Results + Written -> Count (counts.py)            -> Commit
                         RejectExamples (counts.py)   ->
    listed batches + every uri an output accounts for -> Balance (balance.py) ->
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import apache_beam as beam

from pipeline.dataset.commit import Commit
from pipeline.normalize.balance import Balance
from pipeline.normalize.counts import Count, RejectExamples
from pipeline.normalize.outputs import Written
from pipeline.normalize.packed import packed_uris
from pipeline.normalize.streams import Results, each
from pipeline.runtime.options import NormalizeConfig
from pipeline.runtime.storage import Output


def input_uri(rec: dict[str, Any]) -> Iterator[str]:
    """The listed input a reject accounts for (a listing reject names an input URL, not a file)."""
    if rec["stage"] != "list":
        yield rec["uri"]


@dataclass
class Finish(beam.PTransform):
    """``{"packed": listing.Listed.packed, "patterns": ..., "results": Results, "written":
    Written}`` -> the manifest's URL (``commit.Commit``). ``header``: the manifest's options,
    runner, start, codec fingerprint and ``--since``."""

    cfg: NormalizeConfig
    output: Output
    staging: str
    header: dict[str, Any]

    def expand(self, parts: dict[str, Any]) -> Any:
        res: Results = parts["results"]
        written: Written = parts["written"]
        # every listed input is an entity's source or a reject
        accounted = [
            *each("InputRejects", res.rejects, beam.FlatMap, input_uri).values(),
            *res.accounted.values(),
        ]
        balance = parts["packed"] | "Balance" >> Balance(accounted, uris_of=packed_uris)
        counts = res | "Count" >> Count({**written.counts, "balance": balance["counts"]})
        return {
            "counts": counts,
            "patterns": parts["patterns"],
            "shards": written.shards,
            "balance": balance["examples"],
            "reject_examples": res.rejects | "RejectExamples" >> RejectExamples(),
            "list_rejects": res.rejects["list"],
            "staged": written.staged,
            "kept": written.kept,
        } | "Commit" >> Commit(self.output, self.staging, self.header, self.cfg.inputs, self.cfg.allow_empty)


__all__ = ["Finish", "input_uri"]
