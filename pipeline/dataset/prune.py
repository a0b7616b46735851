"""Pruning: after the commit moved this run's files into place, the files of the managed folders
that this run did not write are removed (shards of an earlier run with another shard count,
exports of inputs that are gone, leftovers of an interrupted write). Run by ``commit.Commit``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import apache_beam as beam

from pipeline.runtime.bundles import counted
from pipeline.runtime.storage import Output, is_local, list_files, remove_file

#: folders the job owns in the output; files there that this run did not write are removed
MANAGED = ("canonical", "fidelity", "rejects", "inventory", "index", "exports", "blobs")


class _ListManaged(beam.DoFn):
    def __init__(self, output: Output) -> None:
        self.output = output

    def process(self, _: Any, written: Any, gate: Any = None) -> Iterator[tuple[str, str]]:
        # ``written`` (partial counts of the paths written) is only a barrier: this runs once
        # every output file is in place; a run that is not committed (``gate``) removes nothing
        if gate is None or gate["ok"]:
            yield from self._found()

    def _found(self) -> Iterator[tuple[str, str]]:
        fs, root = self.output.open()
        for top in MANAGED:
            base = f"{root}/{top}"
            if not fs.exists(base):
                continue
            for path, _info in list_files(fs, base, hidden=True):
                yield path[len(root) + 1 :], "found"


def _stale(item: tuple[str, dict[str, list[str]]]) -> Iterator[str]:
    rel, groups = item
    if groups["found"] and not groups["written"]:
        yield rel


class _Remove(beam.DoFn):
    def __init__(self, output: Output) -> None:
        self.output = output

    def setup(self) -> None:
        self.fs, self.root = self.output.open()

    def process(self, rel: str) -> Iterator[str]:
        path = f"{self.root}/{rel}"
        remove_file(self.fs, path)
        if is_local(self.fs):  # no empty folders left behind (object stores have none)
            parent = path.rpartition("/")[0]
            with contextlib.suppress(OSError):
                while parent != self.root and not os.listdir(parent):
                    os.rmdir(parent)
                    parent = parent.rpartition("/")[0]
        yield rel


@dataclass
class Prune(beam.PTransform):
    """Written paths -> paths removed: files under the managed folders that this run did not write
    (shards of an earlier run with another shard count, exports of inputs that are gone, leftovers
    of an interrupted write). Runs after every write, so a re-run leaves exactly this run's files.
    ``gate`` (a singleton ``{"ok": bool, ...}``, the commit's verdict): nothing is removed unless
    it is ok."""

    output: Output
    gate: Any = None

    def expand(self, written: Any) -> Any:
        done = beam.pvalue.AsList(counted(written, "CountWritten"))
        gate = () if self.gate is None else (beam.pvalue.AsSingleton(self.gate),)
        found = (
            written.pipeline
            | "Start" >> beam.Create([None])
            | "ListOutput" >> beam.ParDo(_ListManaged(self.output), done, *gate)
        )
        mine = written | "Mine" >> beam.Map(lambda rel: (rel, "written"))
        return (
            {"found": found, "written": mine}
            | "Join" >> beam.CoGroupByKey()
            | "Stale" >> beam.FlatMap(_stale)
            | "Remove" >> beam.ParDo(_Remove(self.output))
        )


__all__ = ["MANAGED", "Prune"]
