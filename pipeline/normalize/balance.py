"""The balance: every listed input is an entity's source or a reject, and no output names an input
nobody listed. The manifest records it, and a run that does not balance is not committed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import apache_beam as beam
from apache_beam.transforms.window import GlobalWindows

from pipeline.normalize.packed import uri_digest
from pipeline.normalize.streams import each

#: uris listed per balance problem in the manifest
SAMPLE = 20

#: hash cells the balance is checked in
BALANCE_CELLS = 256
#: the balance's tagged output: ``(digest, problem)`` of each uri in a problem
PROBLEMS = "problems"


def _cell_digest(uri: str) -> tuple[int, int]:
    h = uri_digest(uri)
    return h % BALANCE_CELLS, h


def _union(sets: Iterable[set[int]]) -> set[int]:
    out: set[int] = set()
    for s in sets:
        out |= s
    return out


class DigestSet(beam.CombineFn):
    """uri digests, or sets of them (partial results) -> their union."""

    def create_accumulator(self) -> set[int]:
        return set()

    def add_input(self, acc: set[int], h: int | set[int]) -> set[int]:
        if isinstance(h, set):
            acc |= h
        else:
            acc.add(h)
        return acc

    def merge_accumulators(self, accs: Iterable[set[int]]) -> set[int]:
        return _union(accs)

    def extract_output(self, acc: set[int]) -> set[int]:
        return acc


#: the sides of the balance, as its partial digest sets are tagged
LISTED, ACCOUNTED = "listed", "accounted"


def balance_of(item: tuple[int, Iterable[tuple[str, set[int]]]]) -> Iterator[Any]:
    """``listed`` vs ``accounted`` uri digests of one hash cell (partial sets, each tagged with
    its side): the count of each outcome -- ``ok``, ``unaccounted`` (listed, yet neither an
    entity's source nor a reject: lost) and ``unlisted`` (an output naming an input nobody listed)
    -- and, tagged ``PROBLEMS``, the ``(digest, problem)`` of every uri in a problem, to find
    example uris by."""
    _, parts = item
    sides: dict[str, list[set[int]]] = {LISTED: [], ACCOUNTED: []}
    for side, digests in parts:
        sides[side].append(digests)
    listed, accounted = _union(sides[LISTED]), _union(sides[ACCOUNTED])
    ok = len(listed & accounted)
    if ok:
        yield ("balance", "ok"), ok
    for problem, digests in (("unaccounted", listed - accounted), ("unlisted", accounted - listed)):
        if digests:
            yield ("balance", problem), len(digests)
        for h in digests:
            yield beam.pvalue.TaggedOutput(PROBLEMS, (h, problem))


def _examples(uri: str, problems: dict[int, str], problem: str) -> Iterator[tuple[str, str]]:
    if problems and problems.get(uri_digest(uri)) == problem:
        yield problem, uri


def _listed_examples(item: Any, problems: dict[int, str], uris_of: Any) -> Iterator[tuple[str, str]]:
    if problems:
        for uri in [item] if uris_of is None else uris_of(item):
            yield from _examples(uri, problems, "unaccounted")


class _BundleDigests(beam.DoFn):
    """uris (``uris_of``: the uris an element stands for) -> ``(cell, (side, set of digests))``
    per hash cell, at the end of each bundle: reduced where the uris are made, so what crosses the
    shuffle is a few bytes per uri, and one step groups both sides of every producer."""

    def __init__(self, side: str, uris_of: Callable[[Any], Iterable[str]] | None = None) -> None:
        self.side = side
        self.uris_of = uris_of

    def start_bundle(self) -> None:
        self.sets: dict[int, set[int]] = {}

    def process(self, item: Any) -> None:
        for uri in [item] if self.uris_of is None else self.uris_of(item):
            cell, h = _cell_digest(uri)
            self.sets.setdefault(cell, set()).add(h)

    def finish_bundle(self) -> Iterator[Any]:
        sets, self.sets = self.sets, {}
        for cell, digests in sorted(sets.items()):
            yield GlobalWindows.windowed_value((cell, (self.side, digests)))


@dataclass
class Balance(beam.PTransform):
    """Listed uris + accounted uris (one PCollection per producer, by name or in a list) ->
    ``counts`` (``(("balance", outcome), n)``) and ``examples`` (``(problem, [up to SAMPLE uris])``).

    Each uri stream is reduced to digest sets per hash cell where it is produced (per bundle), so
    what crosses the shuffle is a few bytes per uri, never the uris: the local runners hold
    shuffled data in memory, and a join by uri held every listed one there. Both sides of every
    producer meet in one grouping by cell. The uris of a problem (none when the run is sound) are
    found again through their digests."""

    accounted: Mapping[str, Any] | Sequence[Any]
    #: the uris one element of the listed PCollection stands for (by default each element is one uri)
    uris_of: Any = None

    def expand(self, listed: Any) -> dict[str, Any]:
        accounted = (
            dict(self.accounted)
            if isinstance(self.accounted, Mapping)
            else {str(i): pc for i, pc in enumerate(self.accounted)}
        )
        parts = [
            listed | "Listed" >> beam.ParDo(_BundleDigests(LISTED, self.uris_of)),
            *each("Accounted", accounted, beam.ParDo, _BundleDigests(ACCOUNTED)).values(),
        ]
        out = (
            tuple(parts)
            | "Parts" >> beam.Flatten()
            | "ByCell" >> beam.GroupByKey()
            | "Classify" >> beam.FlatMap(balance_of).with_outputs(PROBLEMS, main="counts")
        )
        problems = beam.pvalue.AsDict(out[PROBLEMS])
        # the uris of a problem, found again through their digests (none in a sound run): the
        # listed side is read again in the form it came in (packed batches hold much less)
        uris = tuple(accounted.values()) | "AccountedUris" >> beam.Flatten()
        found = (
            listed | "UnaccountedUris" >> beam.FlatMap(_listed_examples, problems, self.uris_of),
            uris | "UnlistedUris" >> beam.FlatMap(_examples, problems, "unlisted"),
        )
        examples = (
            found | "ProblemUris" >> beam.Flatten() | "Examples" >> beam.combiners.Top.SmallestPerKey(SAMPLE)
        )
        return {"counts": out.counts, "examples": examples}


__all__ = ["ACCOUNTED", "BALANCE_CELLS", "LISTED", "SAMPLE", "Balance", "DigestSet", "balance_of"]
