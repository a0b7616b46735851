"""``RoundTrip``: the fidelity rows of every input (``bunzai_codecs.fidelity``), and the ``decode``
row of each input the run rejected whole.

A row travels as its JSON form (``FidelityRow.to_json()``), the form the fidelity shards hold, the
report folds and ``--since`` carries: it is made once and never parsed back.

With ``--fidelity full`` and a sample of one in K > 1 (``--fidelity-sample``, default 1/16), the
cross rows go by pattern (``bunzai_codecs.fidelity.patterns``, docs/fidelity.md): ``LearnPatterns``
reads the inputs of the sample first (by the digest of their uri, so known before anything is
read) and observes every cross row of them, folding what each teaches into one ``PatternBook``;
``RoundTrip`` then takes that book as a side input and predicts an input's cross row from it where
it knows the source's shape, observing the row otherwise (an input of the sample, a pattern the
sample did not show, or one whose sampled rows disagree). The book is made from the sample alone
and every input's choice from its own shape and the book: the rows are the same whatever the
number of workers or the order inputs come in.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import apache_beam as beam
from apache_beam.pvalue import TaggedOutput

from bunzai_codecs.core import registry
from bunzai_codecs.core.errors import BunzaiError
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.fidelity import (
    PatternBook,
    Patterns,
    RowError,
    check_decoded,
    decode_row,
    learn_patterns,
    reject_row,
    sampled,
)
from pipeline.dataset.index.rows import INDEX, index_rows
from pipeline.normalize.elements import REJECTS, Pending, ValidInput, reject
from pipeline.normalize.read import _READ_FAULTS, _ReadBytes
from pipeline.runtime import fixed_cost
from pipeline.runtime.counters import count
from pipeline.runtime.memory import tune_gc
from pipeline.runtime.storage import Storage, read_bounded


class _RoundTrip(beam.DoFn):
    """The three fidelity checks of ``bunzai_codecs.fidelity`` on one input, plus its ``decode``
    row; rows of entities that failed validation are left out (they have no canonical line).
    Without ``cross`` (``--fidelity native``) the cross-format conversions are not made."""

    def __init__(self, cross: bool = True, sample: int = 1) -> None:
        self.targets: tuple[str, ...] | None = None if cross else ()
        self.sample = sample
        self._patterns: tuple[Any, Patterns] | None = None

    def setup(self) -> None:
        fixed_cost.install()  # Beam's memos in whatever worker process the runner starts
        tune_gc()

    def patterns(self, book: PatternBook | None) -> Patterns | None:
        """The run's ``Patterns`` over ``book`` (the side input: the same object for a bundle)."""
        if book is None:
            return None
        if self._patterns is None or self._patterns[0] is not book:
            self._patterns = (book, Patterns(self.sample, book))
        return self._patterns[1]

    def process(self, v: ValidInput, book: PatternBook | None = None) -> Iterator[Any]:
        keep = {ve.entity.id for ve in v.accepted}
        s = v.file.sniff
        where = {"input": v.uri, "sha256": s.sha256, "uri": v.uri}
        try:
            rows = [
                decode_row(v.decoded, source=v.format, **where),
                *check_decoded(
                    s.data,
                    v.decoded,
                    source=v.format,
                    name=s.name,
                    targets=self.targets,
                    patterns=self.patterns(book),
                    **where,
                ),
            ]
        except Exception as exc:  # check_decoded turns codec failures into rows; this is a bug of ours
            yield TaggedOutput(REJECTS, reject(v.uri, "roundtrip", exc))
            rows = []
        # the entity index's rows, with the status of the input's native round trip (pipeline/dataset/index/)
        native = next((r.status for r in rows if r.check == "native"), None)
        for entry in index_rows((ve.entity for ve in v.accepted), native):
            yield TaggedOutput(INDEX, entry)
        bugs: set[tuple[str, str, str]] = set()
        for row in rows:
            if row.entity not in keep and row.check != "decode":
                continue
            err = row.error
            # one reject per crash: the native and the stability check hit the same encoder
            if err is not None and err.internal and (row.target, err.type, err.message) not in bugs:
                bugs.add((row.target, err.type, err.message))
                bug = RuntimeError(
                    f"{row.check} round trip through {row.target} of {row.entity}: {err.type}: {err.message}"
                )
                yield TaggedOutput(REJECTS, reject(v.uri, "roundtrip", bug))
            count("fidelity_rows")
            if row.basis == "predicted":
                count("fidelity_rows_predicted")
            yield row.to_json()


@dataclass
class RoundTrip(beam.PTransform):
    """``ValidInput`` -> fidelity rows (a ``decode`` row, then the native, stability and, with
    ``cross``, the cross-format checks of ``bunzai_codecs.fidelity``), plus ``rejects`` for a check
    that crashed on a bug (its row says ``error`` with ``internal``). ``book`` (``LearnPatterns``'
    output) with a ``sample`` of one in K > 1: the cross rows by pattern."""

    cross: bool = True
    sample: int = 1
    book: Any = None

    def expand(self, valid: Any) -> Any:
        side = () if self.book is None else (beam.pvalue.AsSingleton(self.book),)
        dofn = _RoundTrip(self.cross, self.sample)
        return valid | beam.ParDo(dofn, *side).with_outputs(REJECTS, INDEX, main="rows")


class _LearnPatterns(_ReadBytes):
    """An input of the sample read (as ``ReadBytes`` reads it), detected and decoded, and every
    cross row of it observed into a ``PatternBook`` of its own (``learn_patterns``). An input that
    does not read or decode teaches nothing (the main pass reads it again and reports why); an
    error the runner may retry (a dropped connection) raises, as in ``ReadBytes``."""

    def __init__(self, inputs: tuple[str, ...], storage: Storage, max_bytes: int, sample: int) -> None:
        super().__init__(inputs, storage, max_bytes, since=False)
        self.sample = sample

    def process(self, pending: Pending, shared_sizes: Any = None) -> Iterator[PatternBook]:
        ref = pending.ref
        if not sampled(ref.uri, self.sample):
            return
        if ref.size is not None and ref.size > self.max_bytes:
            return
        try:
            data = read_bounded(self._fs(ref), ref.path, self.max_bytes, ref.size)
        except (OverflowError, *_READ_FAULTS):
            return
        book = PatternBook()
        try:
            s = Sniff(data, ref.path.rsplit("/", 1)[-1], uri=ref.uri)
            fmt = registry.require(s).id
            decoded = registry.get(fmt).decode(s)
            rows = learn_patterns(data, decoded, book, source=fmt, input=ref.uri, name=s.name)
        except BunzaiError:
            return
        except Exception:  # a codec bug: the main pass meets it again and reports it
            return
        count("fidelity_sampled_inputs")
        count("fidelity_sampled_rows", rows)
        yield book


class MergeBooks(beam.CombineFn):
    """``PatternBook``s -> one (``PatternBook.merge``: the same book in any order)."""

    def create_accumulator(self) -> PatternBook:
        return PatternBook()

    def add_input(self, acc: PatternBook, book: PatternBook) -> PatternBook:
        return acc.merge(book)

    def merge_accumulators(self, accs: Iterable[PatternBook]) -> PatternBook:
        out = PatternBook()
        for acc in accs:
            out.merge(acc)
        return out

    def extract_output(self, acc: PatternBook) -> PatternBook:
        return acc


@dataclass
class LearnPatterns(beam.PTransform):
    """``Pending`` (every listed input) -> one ``PatternBook``: the cross rows of the inputs in the
    sample (one in ``sample``, by ``fidelity.sampled`` of the uri) observed and folded."""

    inputs: tuple[str, ...]
    storage: Storage
    max_bytes: int
    sample: int

    def expand(self, pending: Any) -> Any:
        dofn = _LearnPatterns(self.inputs, self.storage, self.max_bytes, self.sample)
        return pending | "Sample" >> beam.ParDo(dofn) | "Book" >> beam.CombineGlobally(MergeBooks())


def pattern_counts(book: PatternBook) -> Iterator[tuple[tuple[str, ...], int]]:
    """The manifest's count pairs of the book: patterns learned, and those whose sampled rows
    disagree or teach nothing."""
    broken = book.broken()
    disagreed = sum(1 for b in broken.values() if b.disagreed)
    yield ("fidelityPatterns", "sampled"), len(book)
    yield ("fidelityPatterns", "disagreeing"), disagreed
    yield ("fidelityPatterns", "unpredictable"), len(broken) - disagreed


#: stages after which an input is over: its fidelity ``decode`` row says ``rejected``
_INPUT_ENDS = ("read", "detect", "decode", "validate")


def rejected_row(item: tuple[dict[str, Any], list[dict[str, Any]]]) -> Iterator[dict[str, Any]]:
    """The ``decode`` fidelity row of an input this run rejected whole, from the stage that
    rejected it (its ``rejected_whole`` output): its inventory row (sha256, where it stopped) and
    the rejects that stage made for it (what stopped it; the first by error and message when there
    are several). Made where the input stopped: no join over every input's inventory row."""
    inv, rejects = item
    stage = inv.get("rejected")
    if stage not in _INPUT_ENDS:
        return
    uri = inv["uri"]
    recs = sorted(
        (r for r in rejects if r["stage"] == stage and r["uri"] == uri),
        key=lambda r: (r["error"], r["message"]),
    )
    err = recs[0] if recs else {"error": "Rejected", "message": f"rejected at {stage}"}
    error = RowError(err["error"], err["message"], internal=err["error"] == "InternalError")
    row = reject_row(
        error, input=uri, sha256=inv.get("sha256") or "", uri=uri, source=inv.get("format") or ""
    )
    count("fidelity_rows")
    yield row.to_json()


__all__ = [
    "LearnPatterns",
    "MergeBooks",
    "RoundTrip",
    "pattern_counts",
    "rejected_row",
]
