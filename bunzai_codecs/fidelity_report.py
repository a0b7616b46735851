"""Fidelity reports: ``FidelityRow`` records aggregated into report.json and rendered as report.html.

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

report.html is one self-contained page (inline CSS and SVG, no script, no network): the matrix as
a colour-scaled heat map, per-format bars, and the drill-down tables. Every string that came from
an input (names, paths, messages) is HTML-escaped.
"""

from __future__ import annotations

import html
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from bunzai_codecs.fidelity import FidelityRow

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

    def add(self, row: FidelityRow) -> None:
        self.entities += 1
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

    def add(self, row: FidelityRow | dict[str, Any]) -> None:
        r = row if isinstance(row, FidelityRow) else FidelityRow.from_json(row)
        self.rows += 1
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


# -- HTML -------------------------------------------------------------------------------------------


def _e(v: Any) -> str:
    """Escape anything for HTML text or a quoted attribute."""
    return html.escape(str(v), quote=True)


def _slug(*parts: str) -> str:
    return "d-" + "--".join("".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in p) for p in parts)


def heat(pct: float, *, strong: bool = False) -> str:
    """Colour for a percentage kept (or lossless): warm orange (0) through yellow to green (100).
    Lossy is not "bad" by itself (expected losses are the target's limits), so the scale stays
    light; the red badge marks unexpected losses."""
    p = max(0.0, min(100.0, pct))
    hue = round(12 + p * 1.08)
    light = 52 if strong else round(84 - p * 0.08, 1)
    return f"hsl({hue},{70 if strong else 78}%,{light:g}%)"


_CSS = """
:root{--fg:#1d2330;--muted:#5d6678;--line:#d8dce4;--bg:#fff;--soft:#f4f6f9;--bad:#b3261e}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);margin:0;padding:24px 32px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:32px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:15px;margin:20px 0 6px}p.sub{color:var(--muted);margin:0 0 16px}
.stats{display:flex;gap:12px;flex-wrap:wrap;margin:12px 0}
.stat{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:8px 14px;min-width:110px}
.stat b{display:block;font-size:20px}.stat span{color:var(--muted);font-size:12px}
table{border-collapse:collapse;margin:6px 0 14px}
th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600}
table.matrix td.cell{text-align:center;min-width:92px;padding:6px}
table.matrix td.cell a{color:inherit;text-decoration:none;display:block}
table.matrix td.cell .pct{font-size:15px;font-weight:700}
table.matrix td.cell .n{font-size:11px;color:#3c4455;white-space:nowrap}
table.matrix td.empty{background:#fafbfc}
table.matrix th.src{text-align:right}
table.matrix th.tgt{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap;padding:8px 4px;text-align:left}
.badge{display:inline-block;background:var(--bad);color:#fff;border-radius:9px;padding:0 6px;font-size:11px;font-weight:700;margin-left:4px}
.exp{color:#6b4e00}.unexp{color:var(--bad);font-weight:600}
code{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--soft);padding:1px 4px;border-radius:3px;overflow-wrap:anywhere}
td.path{min-width:240px;max-width:480px}td.pairs{min-width:230px;font-size:12px}
.legend{display:flex;align-items:center;gap:8px;color:var(--muted);font-size:12px;margin:4px 0 10px}
.legend i{display:inline-block;width:26px;height:12px;border:1px solid var(--line)}
details{margin:4px 0}summary{cursor:pointer}
.ex{color:var(--muted);font-size:12px}
section.drill{margin:10px 0 18px;padding-left:10px;border-left:3px solid var(--line)}
td.share{text-align:right;white-space:nowrap}table.best td{min-width:170px}
"""


def _stat(n: Any, label: str) -> str:
    return f'<div class="stat"><b>{_e(n)}</b><span>{_e(label)}</span></div>'


def _examples(ids: list[str], names: dict[str, Any]) -> str:
    out = []
    for i in ids:
        info = names.get(i, {})
        nm = info.get("name") or ""
        label = f"{_e(nm)} " if nm else ""
        out.append(f'<span title="{_e(info.get("input", ""))}">{label}<code>{_e(i)}</code></span>')
    return '<span class="ex">' + ", ".join(out) + "</span>"


def _cls(c: str) -> str:
    return {"expected": "exp", "unexpected": "unexp"}.get(c, "")


def _paths_table(paths: list[dict[str, Any]], names: dict[str, Any], *, pairs: bool = False) -> str:
    if not paths:
        return '<p class="ex">no lost or changed paths</p>'
    share = all("loss_share" in p for p in paths)
    head = "<tr><th>path</th><th>change</th><th>class</th><th>entities</th><th>occurrences</th>"
    head += '<th title="this path\'s part of the content the cell lost">share of loss</th>' if share else ""
    head += "<th>pairs</th>" if pairs else ""
    head += "<th>examples</th></tr>"
    rows = []
    for p in paths:
        pr = ""
        if pairs:
            ps = p.get("pairs", [])
            shown = "<br>".join(_e(x) for x in ps[:3]) + (f"<br>+{len(ps) - 3} more" if len(ps) > 3 else "")
            pr = f"<td class=pairs>{shown}</td>"
        sh = f"<td class=share>{p['loss_share']:g}%</td>" if share else ""
        rows.append(
            f"<tr><td class=path><code>{_e(p['path'])}</code></td><td>{_e(p['change'])}</td>"
            f'<td class="{_cls(p["class"])}">{_e(p["class"])}</td><td>{_e(p["entities"])}</td>'
            f"<td>{_e(p['count'])}</td>{sh}{pr}<td>{_examples(p['examples'], names)}</td></tr>"
        )
    return "<table>" + head + "".join(rows) + "</table>"


def _matrix(kind: str, k: dict[str, Any]) -> str:
    cells = {(c["source"], c["target"]): c for c in k["matrix"]}
    rts = {r["format"]: r for r in k["roundtrip"]}
    targets = list(k["targets"])
    for f in k["sources"]:  # a source that is also a format of this kind gets its diagonal column
        if f in rts and f not in targets and rts[f]["files"]:
            targets.append(f)
    targets.sort()
    out = [f'<table class="matrix" data-kind="{_e(kind)}"><tr><th>source \\ target</th>']
    out += [f'<th class="tgt" scope="col">{_e(t)}</th>' for t in targets]
    out.append("</tr>")
    for s in k["sources"]:
        out.append(f'<tr><th class="src" scope="row">{_e(s)}</th>')
        for t in targets:
            c = cells.get((s, t))
            if s == t and s in rts and rts[s]["files"]:
                r = rts[s]
                pct = r["native_rate"]
                out.append(
                    f'<td class="cell diag" data-kind="{_e(kind)}" data-source="{_e(s)}" data-target="{_e(t)}" '
                    f'data-lossless="{pct}" style="background:{heat(pct)};outline:2px solid #1d2330;outline-offset:-3px" '
                    f'title="same-format round trip"><a href="#{_slug(kind, "rt", s)}"><div class="pct">{pct:g}%</div>'
                    f'<div class="n">round trip · {r["native_lossless"]}/{r["files"]}</div></a></td>'
                )
            elif c is None:
                out.append('<td class="empty"></td>')
            else:
                pct = c["lossless_pct"]
                kept = c.get("kept_pct")
                bad = c["unexpected"] + c["errors"]
                badge = f'<span class="badge" title="unexpected losses or errors">{bad}</span>' if bad else ""
                title = (
                    f"{s} → {t}: "
                    + (f"{kept:g}% of the content kept; " if kept is not None else "")
                    + f"{c['lossless']} lossless, {c['expected']} expected loss only, "
                    f"{c['unexpected']} unexpected loss, {c['errors']} errors of {c['entities']} entities"
                )
                if kept is not None:
                    big = f'<div class="pct">{kept:g}%{badge}</div><div class="n">kept</div>'
                    data = f'data-kept="{kept}" '
                else:  # rows without content weights (an older bunzai): lossless % as before
                    big = f'<div class="pct">{pct:g}%{badge}</div>'
                    data = ""
                exp = f" · {c['expected']} exp." if c["expected"] else ""
                out.append(
                    f'<td class="cell" data-kind="{_e(kind)}" data-source="{_e(s)}" data-target="{_e(t)}" '
                    f'data-lossless="{pct}" {data}data-unexpected="{bad}" '
                    f'style="background:{heat(pct if kept is None else kept)}" title="{_e(title)}">'
                    f'<a href="#{_slug(kind, s, t)}">{big}'
                    f'<div class="n">{c["lossless"]}/{c["entities"]} lossless{exp}</div></a></td>'
                )
        out.append("</tr>")
    out.append("</table>")
    return "".join(out)


def _best_table(kind: str, best: list[dict[str, Any]]) -> str:
    """Per source format: the target that keeps the most, and the next two."""

    def target(t: dict[str, Any] | None) -> str:
        if t is None:
            return "<td></td>"
        kept = t["kept_pct"]
        what = f"{kept:g}% kept, " if kept is not None else ""
        bad = t["unexpected"] + t["errors"]
        badge = f' <span class="badge" title="unexpected losses or errors">{bad}</span>' if bad else ""
        return (
            f"<td><code>{_e(t['target'])}</code>{badge}<br>"
            f'<span class="ex">{what}{t["lossless_pct"]:g}% lossless</span></td>'
        )

    out = [
        f"<h3>Best target for each source format ({_e(kind)})</h3>",
        f'<table class="best" data-kind="{_e(kind)}"><tr><th>source</th><th>best target</th><th>next</th><th>then</th></tr>',
    ]
    for b in best:
        ts = [*b["targets"], None, None, None]
        out.append(
            f'<tr data-source="{_e(b["source"])}"><th scope="row">{_e(b["source"])}</th>'
            + "".join(target(t) for t in ts[:3])
            + "</tr>"
        )
    out.append("</table>")
    return "".join(out)


def _bars(report: dict[str, Any]) -> str:
    """Per-format horizontal bars (inline SVG): native round trip and canonical stability rates."""
    rows = []
    for kind, k in report["kinds"].items():
        for r in k["roundtrip"]:
            if r["files"] or r["entities"]:
                rows.append((kind, r))
    if not rows:
        return ""
    label_w, bar_w, h = 230, 320, 22
    height = h * 2 * len(rows) + 28
    parts = [
        f'<svg class="bars" xmlns="http://www.w3.org/2000/svg" width="{label_w + bar_w + 150}" height="{height}" '
        f'role="img" aria-label="same-format round-trip rate per format" font-family="system-ui,sans-serif" font-size="12">'
    ]
    y = 4
    for kind, r in rows:
        parts.append(
            f'<text x="{label_w - 8}" y="{y + 15}" text-anchor="end" fill="#1d2330">{_e(r["format"])}</text>'
        )
        parts.append(
            f'<text x="{label_w - 8}" y="{y + h + 15}" text-anchor="end" fill="#5d6678">{_e(kind)}</text>'
        )
        for j, (what, rate, n, d) in enumerate(
            (
                ("round trip", r["native_rate"], r["native_lossless"], r["files"]),
                ("stability", r["stability_rate"], r["stable"], r["entities"]),
            )
        ):
            yy = y + j * h + 3
            w = round(bar_w * rate / 100.0)
            parts.append(f'<rect x="{label_w}" y="{yy}" width="{bar_w}" height="{h - 6}" fill="#eef0f4"/>')
            if d:
                parts.append(
                    f'<rect class="bar" data-format="{_e(r["format"])}" data-check="{what}" x="{label_w}" y="{yy}" '
                    f'width="{w}" height="{h - 6}" fill="{heat(rate, strong=True)}"/>'
                )
            txt = f"{what}: {rate:g}% ({n}/{d})" if d else f"{what}: —"
            parts.append(f'<text x="{label_w + bar_w + 8}" y="{yy + 12}" fill="#1d2330">{_e(txt)}</text>')
        y += 2 * h
    parts.append("</svg>")
    return "".join(parts)


def render_html(report: dict[str, Any], title: str = "bunzai fidelity report") -> str:
    names = report.get("entities", {})
    inp = report["inputs"]
    meta = report.get("meta", {})
    roots = meta.get("roots") or []
    out = [
        "<!doctype html><html lang=en><head><meta charset=utf-8>",
        '<meta name="viewport" content="width=device-width,initial-scale=1">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">",
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f'<p class="sub">bunzai {_e(report.get("bunzai", ""))}'
        + (f" · inputs: {_e(', '.join(map(str, roots)))}" if roots else "")
        + "</p>",
        '<div class="stats">',
        _stat(inp["files"], "files"),
        _stat(inp["decoded"], "decoded"),
        _stat(inp["rejected"], "rejected"),
        _stat(sum(k["entities"] for k in report["kinds"].values()), "entities"),
        "</div>",
        "<p>Each cell: entities of the row's format written as the column's format and read back. "
        "The number and the colour are the share of the content <b>kept</b>: every populated value "
        "of the source entities (and of the lorebooks or scripts linked to them) is weighed by its "
        "size — a text by its characters, a media file by its bytes, any other value as 1, so a list "
        "weighs the sum of its items — and the cell keeps the weight of the values that came back "
        "unchanged, out of the weight of them all (a conversion that fails keeps nothing). Beside it: "
        "how many entities came back <b>lossless</b> (nothing lost or changed) and how many lost "
        "only <span class=exp>expected</span> paths (the target format has no place for them); a "
        "red badge counts <span class=unexp>unexpected</span> losses (the target can hold the path, "
        "so it is a bug) and errors. Outlined diagonal cells are same-format round trips (the share "
        "of files written back unchanged).</p>",
        '<div class="legend">0% <i style="background:'
        + heat(0)
        + '"></i><i style="background:'
        + heat(50)
        + '"></i><i style="background:'
        + heat(90)
        + '"></i><i style="background:'
        + heat(100)
        + '"></i> 100% kept</div>',
    ]
    for kind, k in report["kinds"].items():
        out.append(
            f'<h2 id="{_slug(kind)}">{_e(kind)} <span class="ex">({k["entities"]} entities)</span></h2>'
        )
        if k["matrix"] or k["roundtrip"]:
            out.append(_matrix(kind, k))
        if k.get("best_targets"):
            out.append(_best_table(kind, k["best_targets"]))
        bugs = k["unexpected_paths"]
        if bugs:
            out.append(f'<h3 class="unexp">Unexpected losses ({_e(kind)}): the target holds these paths</h3>')
            out.append(_paths_table(bugs[:10], names, pairs=True))
        if k["lost_paths"]:
            out.append(f"<h3>Most frequent lost or changed paths ({_e(kind)})</h3>")
            out.append(_paths_table(k["lost_paths"][:12], names, pairs=True))
    bars = _bars(report)
    if bars:
        out.append('<h2 id="roundtrip">Same-format round trip per format</h2>')
        out.append(bars)
    out.append('<h2 id="drill">Drill-down</h2>')
    for kind, k in report["kinds"].items():
        for c in k["matrix"]:
            if c["lossless"] == c["entities"]:
                continue
            errs = ", ".join(f"{_e(t)} ×{n}" for t, n in c["error_types"].items())
            kept = c.get("kept_pct")
            kept_line = (
                f"kept {kept:g}% of the content ({c['weight'] - c['lost_weight']:,} of {c['weight']:,}); "
                if kept is not None
                else ""
            )
            out.append(
                f'<section class="drill" id="{_slug(kind, c["source"], c["target"])}">'
                f"<h3>{_e(kind)}: {_e(c['source'])} → {_e(c['target'])}</h3>"
                f'<p class="ex">{kept_line}{c["entities"]} entities: {c["lossless"]} lossless, '
                f"{c['expected']} expected loss only, {c['unexpected']} unexpected loss, "
                f"{c['errors']} errors{(' (' + errs + ')') if errs else ''}. Most frequent lost or changed "
                "paths, with their share of the content lost:</p>"
                + _paths_table(c["paths"], names)
                + "</section>"
            )
        for r in k["roundtrip"]:
            paths = r["native_paths"] + r["stability_paths"]
            out.append(
                f'<section class="drill" id="{_slug(kind, "rt", r["format"])}">'
                f"<h3>{_e(kind)}: {_e(r['format'])} same-format round trip</h3>"
                f'<p class="ex">native: {r["native_lossless"]}/{r["files"]} files unchanged; '
                f"stability: {r['stable']}/{r['entities']} entities read back with the same body</p>"
                + (_paths_table(paths, names) if paths else "")
                + "</section>"
            )
    if report["rejects"]:
        out.append(f'<h2 id="rejects">Rejected inputs ({inp["rejected"]})</h2><table>')
        out.append("<tr><th>input</th><th>error</th><th>message</th></tr>")
        for r in report["rejects"]:
            out.append(
                f"<tr><td><code>{_e(r['input'])}</code></td><td>{_e(r['error'])}</td><td>{_e(r['message'])}</td></tr>"
            )
        out.append("</table>")
    out.append("</body></html>\n")
    return "\n".join(out)
