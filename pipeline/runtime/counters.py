"""The stages' Beam counters: what a run is doing, live, on every runner.

Counters live in the ``bunzai`` namespace (``COUNTERS`` lists them). Each ``count()`` is also
added to the live display of a local run (pipeline/runtime/progress.py). The manifest's numbers do not
come from here: they are counted from the records themselves (pipeline/normalize/counts.py), exact on
every runner.
"""

from __future__ import annotations

from typing import Any

from apache_beam.metrics import Metrics

from pipeline.runtime.progress import note as note_progress

NAMESPACE = "bunzai"

#: every counter the stages bump (namespace ``bunzai``)
COUNTERS = {
    "inputs_listed": "files the listing found",
    "inputs_queued": "distinct listed files, queued to be read",
    "inputs_unchanged": "inputs --since found unchanged (not decoded again)",
    "inputs_read": "inputs read",
    "inputs_done": "inputs whose work (read to export, in the fused per-input chain) is over",
    "bytes_read": "bytes read",
    "inputs_detected": "inputs a codec recognised",
    "inputs_decoded": "inputs decoded into entities",
    "entities_decoded": "entities decoded",
    "entities_valid": "entities that passed validation",
    "lint_warnings": "lint warnings attached to entities",
    "exports_written": "export files written or staged",
    "fidelity_rows": "fidelity rows produced",
    "rejects": "reject records, all stages",
    "internal_errors": "rejects caused by a bunzai bug rather than the input",
}


_COUNTERS: dict[str, Any] = {}


def count(name: str, n: int = 1) -> None:
    # one counter object per name: Metrics.counter builds a MetricName and an updater on every
    # call, and this runs several times per input. The object finds the running step's metrics
    # container when it is incremented, so sharing it between steps and bundles is safe.
    c = _COUNTERS.get(name)
    if c is None:
        c = _COUNTERS[name] = Metrics.counter(NAMESPACE, name)
    c.inc(n)
    note_progress(name, n)  # the live display of a local run (pipeline/runtime/progress.py)


__all__ = ["COUNTERS", "NAMESPACE", "count"]
