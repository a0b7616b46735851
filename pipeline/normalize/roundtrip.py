"""``RoundTrip``: the fidelity rows of every input (``bunzai_codecs.fidelity``), and the ``decode``
row of each input the run rejected whole.

A row travels as its JSON form (``FidelityRow.to_json()``), the form the fidelity shards hold, the
report folds and ``--since`` carries: it is made once and never parsed back.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import apache_beam as beam
from apache_beam.pvalue import TaggedOutput

from bunzai_codecs.fidelity import RowError, check_decoded, decode_row, reject_row
from pipeline.dataset.index.rows import INDEX, index_rows
from pipeline.normalize.elements import REJECTS, ValidInput, reject
from pipeline.runtime import fixed_cost
from pipeline.runtime.counters import count
from pipeline.runtime.memory import tune_gc


class _RoundTrip(beam.DoFn):
    """The three fidelity checks of ``bunzai_codecs.fidelity`` on one input, plus its ``decode``
    row; rows of entities that failed validation are left out (they have no canonical line).
    Without ``cross`` (``--fidelity native``) the cross-format conversions are not made."""

    def __init__(self, cross: bool = True) -> None:
        self.targets: tuple[str, ...] | None = None if cross else ()

    def setup(self) -> None:
        fixed_cost.install()  # Beam's memos in whatever worker process the runner starts
        tune_gc()

    def process(self, v: ValidInput) -> Iterator[Any]:
        keep = {ve.entity.id for ve in v.accepted}
        s = v.file.sniff
        where = {"input": v.uri, "sha256": s.sha256, "uri": v.uri}
        try:
            rows = [
                decode_row(v.decoded, source=v.format, **where),
                *check_decoded(
                    s.data, v.decoded, source=v.format, name=s.name, targets=self.targets, **where
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
            yield row.to_json()


@dataclass
class RoundTrip(beam.PTransform):
    """``ValidInput`` -> fidelity rows (a ``decode`` row, then the native, stability and, with
    ``cross``, the cross-format checks of ``bunzai_codecs.fidelity``), plus ``rejects`` for a check
    that crashed on a bug (its row says ``error`` with ``internal``)."""

    cross: bool = True

    def expand(self, valid: Any) -> Any:
        return valid | beam.ParDo(_RoundTrip(self.cross)).with_outputs(REJECTS, INDEX, main="rows")


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


__all__ = ["RoundTrip", "rejected_row"]
