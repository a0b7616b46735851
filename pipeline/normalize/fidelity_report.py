"""The run's fidelity report: ``fidelity/report.json`` and ``fidelity/report.html`` (the same
files ``bunzai fidelity`` writes), folded from every fidelity row of the run, fresh and carried.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import apache_beam as beam

from bunzai_codecs.fidelity.html import render_html
from bunzai_codecs.fidelity.report import ReportBuilder, report_json
from pipeline.normalize.streams import each
from pipeline.runtime.storage import Output, staged_path, write_bytes

#: where the report lands, beside the rows it is built from
FIDELITY_REPORT = ("fidelity/report.json", "fidelity/report.html")


class FidelityReportFn(beam.CombineFn):
    """Fidelity rows (dicts) -> one ``ReportBuilder`` (bunzai_codecs.fidelity_report). Partial
    builders merge and the report does not depend on row order, so every runner writes the same."""

    def create_accumulator(self) -> ReportBuilder:
        return ReportBuilder()

    def add_input(self, acc: ReportBuilder, row: dict[str, Any]) -> ReportBuilder:
        acc.add(row)
        return acc

    def merge_accumulators(self, accs: Iterable[ReportBuilder]) -> ReportBuilder:
        it = iter(accs)
        first = next(it, None) or ReportBuilder()
        for acc in it:
            first.merge(acc)
        return first

    def extract_output(self, acc: ReportBuilder) -> ReportBuilder:
        return acc


class MergeReports(beam.CombineFn):
    """Partial ``ReportBuilder``s -> one (the second level of ``WriteFidelityReport``)."""

    def create_accumulator(self) -> ReportBuilder:
        return ReportBuilder()

    def add_input(self, acc: ReportBuilder, part: ReportBuilder) -> ReportBuilder:
        acc.merge(part)
        return acc

    def merge_accumulators(self, accs: Iterable[ReportBuilder]) -> ReportBuilder:
        return FidelityReportFn().merge_accumulators(accs)

    def extract_output(self, acc: ReportBuilder) -> ReportBuilder:
        return acc


class _WriteFidelityReport(beam.DoFn):
    def __init__(self, output: Output, roots: Sequence[str], staging: str) -> None:
        self.output = output
        self.roots = list(roots)
        self.staging = staging

    def process(self, builder: ReportBuilder) -> Iterator[str]:
        report = builder.report({"roots": self.roots})
        fs, root = self.output.open()
        json_rel, html_rel = FIDELITY_REPORT
        write_bytes(fs, f"{root}/{staged_path(self.staging, json_rel)}", report_json(report))
        write_bytes(fs, f"{root}/{staged_path(self.staging, html_rel)}", render_html(report).encode("utf-8"))
        yield json_rel
        yield html_rel


@dataclass
class WriteFidelityReport(beam.PTransform):
    """Every fidelity row of the run (fresh and carried, as dicts; one PCollection, or several by
    name) -> ``fidelity/report.json`` and ``fidelity/report.html`` (staged), the same files
    ``bunzai fidelity`` writes; yields their paths.

    Each producer's rows are folded where they are made (the combine runs fused with the
    producer); only the partial builders meet. A Flatten of the rows themselves would hold every
    row in memory on the local runners, which materialise every multi-input Flatten.
    """

    output: Output
    roots: Sequence[str]
    staging: str

    def expand(self, producers: Any) -> Any:
        if isinstance(producers, beam.PCollection):
            producers = (producers,)
        if not isinstance(producers, dict):
            producers = {str(i): pc for i, pc in enumerate(producers)}
        parts = each("Fold", producers, _Fold)
        return (
            tuple(parts.values())
            | "Parts" >> beam.Flatten()
            | "Combine" >> beam.CombineGlobally(MergeReports())
            | "Write" >> beam.ParDo(_WriteFidelityReport(self.output, self.roots, self.staging))
        )


class _Fold(beam.PTransform):
    def expand(self, rows: Any) -> Any:
        return rows | beam.CombineGlobally(FidelityReportFn()).without_defaults()


__all__ = ["FIDELITY_REPORT", "FidelityReportFn", "MergeReports", "WriteFidelityReport"]
