"""report.html: one self-contained page (inline CSS and SVG, no script, no network): the matrix as
a colour-scaled heat map, per-format bars, and the drill-down tables. Every string that came from
an input (names, paths, messages) is HTML-escaped.
It shows report.json (``report.py``), which it is rendered from alone.
"""

from __future__ import annotations

import html
from typing import Any


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


def _basis_line(basis: dict[str, Any] | None) -> str:
    """How the rows were obtained, when some were predicted (``normalize --fidelity-sample``)."""
    if not basis or not (basis.get("predicted") or basis.get("disagreed")):
        return ""
    observed, predicted = basis.get("observed", 0), basis.get("predicted", 0)
    bad = len(basis.get("disagreements") or ())
    return (
        f"<p>{observed:,} rows observed (written, read back and compared), {predicted:,} cross-format "
        "rows <b>predicted</b> from the observed rows of their pattern: the same source format, "
        "target and filled paths (normalize's <code>--fidelity-sample</code>; "
        "<code>--fidelity-sample 1/1</code> observes every row)."
        + (
            f" <span class=unexp>{bad} pattern{'s' if bad != 1 else ''} disagreed</span>: "
            '<a href="#disagreed">below</a>.'
            if bad
            else ""
        )
        + "</p>"
    )


def _disagreements(basis: dict[str, Any] | None) -> str:
    """The patterns whose sampled rows disagreed (their rows were observed for every input)."""
    items = (basis or {}).get("disagreements") or []
    if not items:
        return ""
    out = [
        f'<h2 id="disagreed" class="unexp">Predictions that disagreed ({len(items)} patterns)</h2>',
        "<p>The sampled rows of these patterns are not all what one prediction gives: a codec bug, or "
        "a loss that depends on the values themselves. Every row of them was observed; the inputs "
        "below show it.</p><table><tr><th>kind</th><th>source → target</th><th>rows</th>"
        "<th>pattern</th><th>inputs</th></tr>",
    ]
    for d in items:
        inputs = "<br>".join(f"<code>{_e(i)}</code>" for i in d.get("inputs", []))
        out.append(
            f"<tr><td>{_e(d.get('kind', ''))}</td><td>{_e(d.get('source', ''))} → {_e(d.get('target', ''))}</td>"
            f"<td>{_e(d.get('rows', 0))}</td><td><code>{_e(d.get('pattern', ''))}</code></td><td>{inputs}</td></tr>"
        )
    out.append("</table>")
    return "\n".join(out)


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
        *filter(None, [_basis_line(report.get("basis"))]),  # nothing, not a blank line, when all observed
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
    disagreed = _disagreements(report.get("basis"))
    if disagreed:
        out.append(disagreed)
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
