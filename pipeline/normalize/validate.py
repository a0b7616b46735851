"""``Validate``: the lint rules on every decoded entity, and its canonical line.

An entity with an error-level finding is rejected; the others are stamped with this run's
provenance and their warnings, and written as their vaud-json line once, here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import apache_beam as beam
from apache_beam.pvalue import TaggedOutput

from bunzai_codecs import lint as lint_rules
from bunzai_codecs.core.entity import CanonicalEntity, Source
from pipeline.dataset.blobs import lean_line
from pipeline.normalize.elements import (
    INVENTORY,
    REJECTED_WHOLE,
    REJECTS,
    DecodedInput,
    ValidEntity,
    ValidInput,
    inventory_row,
    reject,
)
from pipeline.runtime.counters import count


class _Validate(beam.DoFn):
    def process(self, d: DecodedInput) -> Iterator[Any]:
        f = d.file
        uri = f.ref.uri
        entities = d.decoded.entities
        bundle = d.decoded.by_id()
        findings = {e.id: lint_rules.lint(e, bundle) for e in entities}
        rejected: dict[str, CanonicalEntity] = {}
        recs: list[dict[str, Any]] = []
        for e in entities:
            errs = lint_rules.errors(findings[e.id])
            if errs:
                more = f" (+{len(errs) - 1} more)" if len(errs) > 1 else ""
                exc = errs[0].to_error(e, uri)
                exc.message += more
                recs.append(reject(uri, "validate", exc))
                yield TaggedOutput(REJECTS, recs[-1])
                rejected[e.id] = e
        # this run's provenance: where the pipeline read the entity (a vaud-json input's own,
        # earlier ``source`` is replaced, so every canonical line accounts for one listed input)
        src = Source(uri=uri, format=d.format, score=d.score, sha256=f.sniff.sha256, bytes=f.sniff.size)
        out = ValidInput(f, d.format, d.score, d.decoded)
        for e in entities:
            if e.id in rejected:
                continue
            notes = [str(w) for w in lint_rules.warnings(findings[e.id])]
            for ref in e.knowledge_refs:
                if ref in rejected:
                    notes.append(f"links.rejected: linked {rejected[ref].kind} {ref} failed validation")
            count("lint_warnings", len(notes))
            stamped = CanonicalEntity(
                kind=e.kind,
                id=e.id,
                body=e.body,
                links=e.links,
                original=e.original,
                source=src,
                warnings=[*e.warnings, *notes],
                media=e.media,
            )
            try:
                line, blobs = lean_line(stamped)
            except Exception as exc:  # escrow that is not JSON: a codec bug
                recs.append(reject(uri, "validate", exc, prefix=f"{e.kind} {e.id}: "))
                yield TaggedOutput(REJECTS, recs[-1])
                continue
            out.accepted.append(ValidEntity(stamped, line, blobs))
        count("entities_valid", len(out.accepted))
        inv = inventory_row(
            f.ref,
            f.status,
            sha256=f.sniff.sha256,
            format=d.format,
            entities=[v.entity.id for v in out.accepted],
            decoded=len(entities),
            rejected=None if out.accepted else "validate",
        )
        yield TaggedOutput(INVENTORY, inv)
        if out.accepted:
            yield out
        else:
            yield TaggedOutput(REJECTED_WHOLE, (inv, recs))


class Validate(beam.PTransform):
    """``DecodedInput`` -> ``ValidInput`` (entities that pass the lint rules, stamped with their
    source and carrying their warnings), ``rejects`` (one per entity with an error-level finding)
    and ``inventory`` (one row per input that reached this stage)."""

    def expand(self, decoded: Any) -> Any:
        return decoded | beam.ParDo(_Validate()).with_outputs(
            REJECTS, INVENTORY, REJECTED_WHOLE, main="valid"
        )


__all__ = ["Validate"]
