"""``Detect`` and ``Decode``: which codec reads an input, and the entities it reads.

Both only talk to the codec library's registry, so a new codec never changes them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import apache_beam as beam
from apache_beam.pvalue import TaggedOutput

from bunzai_codecs.core import registry
from bunzai_codecs.core.errors import Malformed, NotRecognized, Unsupported
from pipeline.normalize.elements import (
    INVENTORY,
    REJECTED_WHOLE,
    REJECTS,
    DecodedInput,
    Detected,
    InputFile,
    inventory_row,
    reject,
)
from pipeline.runtime import fixed_cost
from pipeline.runtime.counters import count
from pipeline.runtime.memory import tune_gc


class _Detect(beam.DoFn):
    def process(self, f: InputFile) -> Iterator[Any]:
        try:
            cand = registry.require(f.sniff)
        except (NotRecognized, Malformed, Unsupported) as exc:  # Malformed: clearly JSON/PNG/zip, broken
            rec = reject(f.ref.uri, "detect", exc)
            inv = inventory_row(f.ref, f.status, sha256=f.sniff.sha256, rejected="detect")
            yield TaggedOutput(REJECTS, rec)
            yield TaggedOutput(INVENTORY, inv)
            yield TaggedOutput(REJECTED_WHOLE, (inv, [rec]))
            return
        count("inputs_detected")
        count(f"detected_{cand.id}")
        yield Detected(f, cand.id, cand.score)


class Detect(beam.PTransform):
    """``InputFile`` -> ``Detected`` (the registry's winner), ``rejects`` and ``inventory``."""

    def expand(self, files: Any) -> Any:
        return files | beam.ParDo(_Detect()).with_outputs(REJECTS, INVENTORY, REJECTED_WHOLE, main="detected")


class _Decode(beam.DoFn):
    def setup(self) -> None:
        fixed_cost.install()  # Beam's memos in whatever worker process the runner starts
        tune_gc()  # a no-op where ReadBytes, fused with this stage, did it already

    def process(self, d: Detected) -> Iterator[Any]:
        f = d.file
        try:
            # the codec's output as it is (Validate stamps this run's source on copies): the native
            # fidelity check compares the file with exactly what the codec writes back
            decoded = registry.get(d.format).decode(f.sniff)
            if not decoded.entities:
                raise Malformed(f"{d.format} decoded no entity", uri=f.ref.uri)
        except Exception as exc:
            rec = reject(f.ref.uri, "decode", exc)
            inv = inventory_row(f.ref, f.status, sha256=f.sniff.sha256, format=d.format, rejected="decode")
            yield TaggedOutput(REJECTS, rec)
            yield TaggedOutput(INVENTORY, inv)
            yield TaggedOutput(REJECTED_WHOLE, (inv, [rec]))
            return
        count("inputs_decoded")
        count("entities_decoded", len(decoded.entities))
        yield DecodedInput(f, d.format, d.score, decoded)


class Decode(beam.PTransform):
    """``Detected`` -> ``DecodedInput`` (a bundle: the primary entity and the ones it links),
    ``rejects`` and ``inventory``."""

    def expand(self, detected: Any) -> Any:
        return detected | beam.ParDo(_Decode()).with_outputs(
            REJECTS, INVENTORY, REJECTED_WHOLE, main="decoded"
        )


__all__ = ["Decode", "Detect"]
