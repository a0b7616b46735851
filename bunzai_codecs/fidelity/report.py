"""Fidelity reports: ``FidelityRow`` records aggregated into report.json (rendered as report.html by
``html.py``).

``ReportBuilder`` folds rows one at a time in bounded memory (counters, capped example lists) and
merges with another builder, so the pipeline can feed it from its rows files (or combine partial
builders) and ``bunzai fidelity`` from its in-process checks; both write the same two files.

report.json (``REPORT_SCHEMA``, documented in docs/fidelity.md), per entity kind:

- ``matrix``: one cell per source x target format: entities, lossless / expected-only / unexpected /
  error counts and percentages, and the cell's most frequent lost or changed paths with example
  entity ids (the drill-down);
- ``roundtrip``: per source format, the native round trip (files written back unchanged) and
  canonical stability (entities read back with the same body) rates, with the native paths that
  differed;
- ``lost_paths``: the most frequent lost or changed canonical paths across every target, with
  counts and example entity ids; ``unexpected_paths``: the same for unexpected losses only.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from bunzai_codecs.fidelity.html import render_html
from bunzai_codecs.fidelity.rows import FidelityRow

REPORT_SCHEMA = "bunzai.fidelity-report/1"
#: example entity ids kept per path
EXAMPLES = 3
#: distinct path patterns kept per matrix cell / kind / format; more are counted as "other" (which
#: ones are kept then depends on row order: patterns collapse list indices, so real runs stay far below)
MAX_PATHS = 2000
#: paths shown per drill-down table and in the top list
TOP_PATHS = 25
#: entities whose names are kept for the examples (a bound for runs over millions of files)
MAX_NAMES = 50_000
#: rejected inputs listed by name in the report
MAX_REJECTS = 500
#: patterns whose predictions disagreed, listed in the report (the first by key)
MAX_DISAGREEMENTS = 500


def _pct(n: int, d: int) -> float:
    return round(100.0 * n / d, 1) if d else 0.0


def _floor_pct(n: int, d: int) -> float:
    """``n / d`` in percent, one decimal, rounded down: 100.0 only when nothing was lost."""
    return (1000 * n // d) / 10 if d else 0.0


@dataclass
class _PathStat:
    """One (path pattern, change, class) within a cell, format or kind."""

    entities: int = 0
    count: int = 0
    #: content weight lost under this path (cross rows that carry weights)
    weight: int = 0
    #: the smallest entity ids seen (not the first: the report must not depend on row order)
    examples: list[str] = field(default_factory=list)
    pairs: set[str] = field(default_factory=set)

    def _example(self, entity: str) -> None:
        if entity and entity not in self.examples:
            if len(self.examples) < EXAMPLES:
                self.examples.append(entity)
                self.examples.sort()
            elif entity < self.examples[-1]:
                self.examples[-1] = entity
                self.examples.sort()

    def add(self, count: int, entity: str, pair: str = "", weight: int = 0) -> None:
        self.entities += 1
        self.count += count
        self.weight += weight
        self._example(entity)
        if pair:
            self.pairs.add(pair)

    def merge(self, o: _PathStat) -> None:
        self.entities += o.entities
        self.count += o.count
        self.weight += o.weight
        for e in o.examples:
            self._example(e)
        self.pairs |= o.pairs


PathKey = tuple[str, str, str]  # (path, change, class)


@dataclass
class _Paths:
    stats: dict[PathKey, _PathStat] = field(default_factory=dict)
    other: int = 0

    def add(self, key: PathKey, count: int, entity: str, pair: str = "", weight: int = 0) -> None:
        st = self.stats.get(key)
        if st is None:
            if len(self.stats) >= MAX_PATHS:
                self.other += 1
                return
            st = self.stats[key] = _PathStat()
        st.add(count, entity, pair, weight)

    def merge(self, o: _Paths) -> None:
        for k, st in o.stats.items():
            if k in self.stats:
                self.stats[k].merge(st)
            elif len(self.stats) < MAX_PATHS:
                self.stats[k] = _PathStat()
                self.stats[k].merge(st)
            else:
                self.other += st.entities
        self.other += o.other

    def top(
        self, n: int = TOP_PATHS, cls: str | None = None, lost: int | None = None
    ) -> list[dict[str, Any]]:
        """The ``n`` most frequent paths (by entities, then occurrences); with ``lost`` (the content
        weight the cell lost) each also gets its ``weight`` and ``loss_share`` (% of ``lost``)."""
        items = [kv for kv in self.stats.items() if cls is None or kv[0][2] == cls]
        order = sorted(items, key=lambda kv: (-kv[1].entities, -kv[1].count, kv[0]))
        out = []
        for (path, change, cls), st in order[:n]:
            d: dict[str, Any] = {
                "path": path,
                "change": change,
                "class": cls,
                "entities": st.entities,
                "count": st.count,
                "examples": list(st.examples),
            }
            if st.pairs:
                d["pairs"] = sorted(st.pairs)
            if lost is not None:
                d["weight"] = st.weight
                d["loss_share"] = _pct(st.weight, lost)
            out.append(d)
        return out


@dataclass
class _Cell:
    """Counts of one source x target pair (or of one format's native / stability checks)."""

    entities: int = 0
    lossless: int = 0
    expected: int = 0
    unexpected: int = 0
    errors: int = 0
    error_types: dict[str, int] = field(default_factory=dict)
    paths: _Paths = field(default_factory=_Paths)
    #: rows that carried content weights (cross rows since the kept measure), their content weight
    #: and the part of it lost
    weighed: int = 0
    weight: int = 0
    lost_weight: int = 0
    #: rows predicted from their pattern rather than observed (``FidelityRow.basis``)
    predicted: int = 0

    def add(self, row: FidelityRow) -> None:
        self.entities += 1
        if row.basis == "predicted":
            self.predicted += 1
        if row.weight is not None:
            self.weighed += 1
            self.weight += row.weight
            self.lost_weight += row.lost_weight or 0
        if row.status == "lossless":
            self.lossless += 1
        elif row.status == "expected":
            self.expected += 1
        elif row.status == "unexpected":
            self.unexpected += 1
        elif row.status == "error":
            self.errors += 1
            t = row.error.type if row.error else "Error"
            self.error_types[t] = self.error_types.get(t, 0) + 1
        for change, loss in row.losses():
            if loss.cls != "info":
                self.paths.add((loss.path, change, loss.cls), loss.count, row.entity, weight=loss.weight or 0)

    def merge(self, o: _Cell) -> None:
        self.entities += o.entities
        self.predicted += o.predicted
        self.weighed += o.weighed
        self.weight += o.weight
        self.lost_weight += o.lost_weight
        self.lossless += o.lossless
        self.expected += o.expected
        self.unexpected += o.unexpected
        self.errors += o.errors
        for t, n in o.error_types.items():
            self.error_types[t] = self.error_types.get(t, 0) + n
        self.paths.merge(o.paths)

    def summary(self) -> dict[str, Any]:
        n = self.entities
        return {
            "entities": n,
            "lossless": self.lossless,
            "expected": self.expected,
            "unexpected": self.unexpected,
            "errors": self.errors,
            "lossless_pct": _pct(self.lossless, n),
            "expected_loss_pct": _pct(self.expected, n),
            "unexpected_pct": _pct(self.unexpected + self.errors, n),
            "error_types": dict(sorted(self.error_types.items())),
            "weight": self.weight,
            "lost_weight": self.lost_weight,
            "kept_pct": self.kept_pct,
            "predicted": self.predicted,
        }

    @property
    def kept_pct(self) -> float | None:
        """The share of the content weight that came back unchanged; None when no row of the cell
        was weighed (rows of an older bunzai) or it had no content, or when only some were (a
        share of part of the cell would mislead)."""
        if not self.weighed or self.weighed != self.entities or not self.weight:
            return None
        return _floor_pct(self.weight - self.lost_weight, self.weight)


@dataclass
class _Kind:
    pairs: dict[tuple[str, str], _Cell] = field(default_factory=dict)
    native: dict[str, _Cell] = field(default_factory=dict)
    stability: dict[str, _Cell] = field(default_factory=dict)
    paths: _Paths = field(default_factory=_Paths)

    @property
    def entities(self) -> int:
        """Every entity gets exactly one stability row."""
        return sum(c.entities for c in self.stability.values())

    def merge(self, o: _Kind) -> None:
        for attr in ("pairs", "native", "stability"):
            mine, theirs = getattr(self, attr), getattr(o, attr)
            for k, c in theirs.items():
                mine.setdefault(k, _Cell()).merge(c)
        self.paths.merge(o.paths)


class ReportBuilder:
    """Folds ``FidelityRow`` records (or their JSON dicts) into the report (see module docstring)."""

    def __init__(self) -> None:
        self.kinds: dict[str, _Kind] = {}
        self.files = 0
        self.decoded = 0
        self.rejected = 0
        self.rejects: list[dict[str, Any]] = []
        self.reject_types: dict[str, int] = {}
        self.names: dict[str, dict[str, str]] = {}
        self.rows = 0
        #: rows by how they were obtained (``FidelityRow.basis``), and the observed rows of
        #: patterns whose sampled rows disagreed
        self.basis: dict[str, int] = {}
        self.disagreed = 0
        #: pattern -> what the report lists of a pattern whose predictions disagreed
        self.disagreements: dict[str, dict[str, Any]] = {}

    def add(self, row: FidelityRow | dict[str, Any]) -> None:
        r = row if isinstance(row, FidelityRow) else FidelityRow.from_json(row)
        self.rows += 1
        self.basis[r.basis] = self.basis.get(r.basis, 0) + 1
        if r.disagreed:
            self.disagreed += 1
            self._disagreement(
                r.pattern,
                {"source": r.source, "target": r.target, "kind": r.kind, "rows": 1, "inputs": [r.input]},
            )
        if r.check == "decode":
            self.files += 1
            if r.status == "rejected":
                self.rejected += 1
                t = r.error.type if r.error else "Error"
                self.reject_types[t] = self.reject_types.get(t, 0) + 1
                self.rejects.append(
                    {
                        "input": r.input,
                        "source": r.source,
                        "error": t,
                        "message": r.error.message if r.error else "",
                    }
                )
                if len(self.rejects) > 2 * MAX_REJECTS:
                    self._trim_rejects()
            else:
                self.decoded += 1
            return
        k = self.kinds.setdefault(r.kind, _Kind())
        if r.check == "cross":
            k.pairs.setdefault((r.source, r.target), _Cell()).add(r)
            pair = f"{r.source} -> {r.target}"
            for change, loss in r.losses():
                if loss.cls != "info":
                    k.paths.add((loss.path, change, loss.cls), loss.count, r.entity, pair, loss.weight or 0)
        elif r.check == "native":
            k.native.setdefault(r.source, _Cell()).add(r)
        elif r.check == "stability":
            k.stability.setdefault(r.source, _Cell()).add(r)
        if r.lossy and r.entity:
            self._name(r.entity, {"name": r.name, "input": r.input, "source": r.source, "kind": r.kind})

    def _name(self, entity: str, info: dict[str, str]) -> None:
        """Name and input of an entity the report may cite; the same bytes at two paths give the
        same ids, so the smallest input wins (order-independent)."""
        old = self.names.get(entity)
        if old is None:
            if len(self.names) < MAX_NAMES:
                self.names[entity] = info
        elif info["input"] < old["input"]:
            self.names[entity] = info

    def _disagreement(self, pattern: str, d: dict[str, Any]) -> None:
        """One more row (or a partial builder's rows) of a pattern whose predictions disagreed;
        the first ``MAX_DISAGREEMENTS`` patterns by key and three inputs of each by key are kept,
        whatever the order rows came in."""
        have = self.disagreements.get(pattern)
        if have is None:
            self.disagreements[pattern] = {**d, "inputs": sorted(set(d["inputs"]))[:3]}
            if len(self.disagreements) > MAX_DISAGREEMENTS:
                del self.disagreements[max(self.disagreements)]
            return
        have["rows"] += d["rows"]
        have["inputs"] = sorted(set(have["inputs"]) | set(d["inputs"]))[:3]

    def _trim_rejects(self) -> None:
        """Keep the first ``MAX_REJECTS`` by input key, whatever the order rows came in."""
        self.rejects = sorted(self.rejects, key=lambda r: (r["input"], r["error"], r["message"]))[
            :MAX_REJECTS
        ]

    def add_all(self, rows: Iterable[FidelityRow | dict[str, Any]]) -> ReportBuilder:
        for r in rows:
            self.add(r)
        return self

    def merge(self, o: ReportBuilder) -> ReportBuilder:
        for name, k in o.kinds.items():
            self.kinds.setdefault(name, _Kind()).merge(k)
        self.files += o.files
        self.decoded += o.decoded
        self.rejected += o.rejected
        self.rejects += o.rejects
        self._trim_rejects()
        for t, n in o.reject_types.items():
            self.reject_types[t] = self.reject_types.get(t, 0) + n
        for i, v in o.names.items():
            self._name(i, v)
        self.rows += o.rows
        for b, n in o.basis.items():
            self.basis[b] = self.basis.get(b, 0) + n
        self.disagreed += o.disagreed
        for pattern, d in o.disagreements.items():
            self._disagreement(pattern, d)
        return self

    def report(self, meta: dict[str, Any] | None = None) -> dict[str, Any]:
        """The report.json tree (deterministic for the same rows, whatever their order)."""
        from bunzai_codecs import __version__

        kinds: dict[str, Any] = {}
        referenced: set[str] = set()
        for kind in sorted(self.kinds):
            k = self.kinds[kind]
            sources = sorted({s for s, _ in k.pairs} | set(k.native) | set(k.stability))
            targets = sorted({t for _, t in k.pairs})
            cells = []
            for (s, t), c in sorted(k.pairs.items()):
                paths = c.paths.top(lost=c.lost_weight if c.weighed else None)
                referenced.update(x for p in paths for x in p["examples"])
                cells.append(
                    {"source": s, "target": t, **c.summary(), "paths": paths, "other_paths": c.paths.other}
                )
            rts = []
            for f in sorted(set(k.native) | set(k.stability)):
                nat, stab = k.native.get(f, _Cell()), k.stability.get(f, _Cell())
                paths = nat.paths.top() + stab.paths.top()
                referenced.update(x for p in paths for x in p["examples"])
                rts.append(
                    {
                        "format": f,
                        "files": nat.entities,
                        "native_lossless": nat.lossless,
                        "native_errors": nat.errors,
                        "native_rate": _pct(nat.lossless, nat.entities),
                        "entities": stab.entities,
                        "stable": stab.lossless,
                        "stability_errors": stab.errors,
                        "stability_rate": _pct(stab.lossless, stab.entities),
                        "native_paths": nat.paths.top(),
                        "stability_paths": stab.paths.top(),
                    }
                )
            lost = k.paths.top()
            bugs = k.paths.top(cls="unexpected")
            referenced.update(x for p in lost + bugs for x in p["examples"])
            kinds[kind] = {
                "entities": k.entities,
                "sources": sources,
                "targets": targets,
                "matrix": cells,
                "best_targets": best_targets(cells),
                "roundtrip": rts,
                "lost_paths": lost,
                "unexpected_paths": bugs,
            }
        return {
            "schema": REPORT_SCHEMA,
            "bunzai": __version__,
            **({"meta": meta} if meta else {}),
            "inputs": {
                "files": self.files,
                "decoded": self.decoded,
                "rejected": self.rejected,
                "reject_types": dict(sorted(self.reject_types.items())),
                "rows": self.rows,
            },
            "basis": {
                "observed": self.basis.get("observed", 0),
                "predicted": self.basis.get("predicted", 0),
                "disagreed": self.disagreed,
                "disagreements": [
                    {"pattern": k, **self.disagreements[k]} for k in sorted(self.disagreements)
                ],
            },
            "kinds": kinds,
            "rejects": sorted(self.rejects, key=lambda r: (r["input"], r["error"], r["message"]))[
                :MAX_REJECTS
            ],
            "entities": {i: self.names[i] for i in sorted(referenced) if i in self.names},
        }


def _rank(c: dict[str, Any]) -> tuple[Any, ...]:
    kept = c.get("kept_pct")
    return (kept is None, -(kept or 0.0), -c["lossless_pct"], c["unexpected"] + c["errors"], c["target"])


def best_targets(cells: list[dict[str, Any]], n: int = 3) -> list[dict[str, Any]]:
    """Per source format, its targets best first: the most content kept, then the most entities
    lossless, then the fewest unexpected losses and errors (then by name); the first ``n``."""
    by_source: dict[str, list[dict[str, Any]]] = {}
    for c in cells:
        by_source.setdefault(c["source"], []).append(c)
    out = []
    for source in sorted(by_source):
        ranked = sorted(by_source[source], key=_rank)[:n]
        out.append(
            {
                "source": source,
                "targets": [
                    {
                        k: c[k]
                        for k in ("target", "kept_pct", "lossless_pct", "entities", "unexpected", "errors")
                    }
                    for c in ranked
                ],
            }
        )
    return out


def build_report(
    rows: Iterable[FidelityRow | dict[str, Any]], meta: dict[str, Any] | None = None
) -> dict[str, Any]:
    return ReportBuilder().add_all(rows).report(meta)


# -- files ------------------------------------------------------------------------------------------


def read_rows(folder: str | os.PathLike[str]) -> Iterator[FidelityRow]:
    """Every row of ``folder/rows-*.jsonl`` (files in name order)."""
    paths = sorted(Path(folder).glob("rows-*.jsonl"))
    for p in paths:
        with p.open("rb") as fh:
            for line in fh:
                if line.strip():
                    yield FidelityRow.from_json(orjson.loads(line))


def rows_jsonl(rows: Iterable[FidelityRow]) -> bytes:
    return b"".join(orjson.dumps(r.to_json()) + b"\n" for r in rows)


def report_json(report: dict[str, Any]) -> bytes:
    return orjson.dumps(report, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def _atomic(path: Path, data: bytes) -> None:
    from bunzai_codecs.core.files import write_atomic

    write_atomic(path, data)


def write_report(report: dict[str, Any], folder: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write ``report.json`` and ``report.html`` into ``folder`` (atomically); returns both paths."""
    out = Path(folder)
    j, h = out / "report.json", out / "report.html"
    _atomic(j, report_json(report))
    _atomic(h, render_html(report).encode("utf-8"))
    return j, h
