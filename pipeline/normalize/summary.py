"""The summary table a local run prints: inputs, entities, rejects (with example inputs), exports
and where every output is."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pipeline.dataset.blobs import blob_rows
from pipeline.dataset.manifest import MANIFEST
from pipeline.normalize.elements import STAGES
from pipeline.normalize.fidelity_report import FIDELITY_REPORT
from pipeline.runtime.storage import Output


def _table(rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [indent + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def _rejects_section(manifest: dict[str, Any], output: Output) -> list[str]:
    """Rejects per stage and error, each with its example inputs and the first line of their
    message, and where the whole rejects dataset is."""
    rejects = manifest["counts"]["rejects"]
    shards = manifest["outputs"]["shards"].get("rejects", [])
    where = ""
    if rejects["total"] and shards:
        where = (
            "  (all of them: "
            + (
                output.display(shards[0]["path"])
                if len(shards) == 1
                else output.display("rejects/") + "part-*.jsonl"
            )
            + ")"
        )
    lines = [f"REJECTS  {rejects['total']}{where}"]
    rej = rejects["byStageError"]
    examples = rejects.get("examples") or {}
    rows: list[tuple[str, ...]] = [("STAGE", "ERROR", "COUNT")]
    rows += [(s, e, str(n)) for s in STAGES for e, n in sorted(rej.get(s, {}).items())]
    if len(rows) == 1:
        return lines
    lines += _table(rows)
    for s in STAGES:
        for e, n in sorted(rej.get(s, {}).items()):
            some = examples.get(s, {}).get(e, [])
            if not some:
                continue
            shown = f"{len(some)} of {n}" if n > len(some) else str(n)
            lines.append(f"  {s} {e} ({shown}):")
            lines += [f"    {x['uri']}: {x['message']}" if x["message"] else f"    {x['uri']}" for x in some]
    return lines


def summary(manifest: dict[str, Any], output: Output) -> str:
    """What a person wants after a run: inputs, entities, rejects, where everything is."""
    inp, bal, counts = manifest["inputs"], manifest["balance"], manifest["counts"]
    lines = [f"bunzai normalize ({manifest['runner']}, {manifest['started']} -> {manifest['finished']})", ""]
    lines.append(
        f"INPUTS  listed {inp['listed']}  new {inp['new']}  changed {inp['changed']}  "
        f"unchanged {inp['unchanged']}  deleted {inp['deleted']}  "
        f"accounted {bal['accounted']}/{bal['listed']}" + ("" if bal["ok"] else "  ** NOT BALANCED **")
    )
    for p in inp["patterns"]:
        if not p["matched"]:
            lines.append(f"  warning: {p['input']} matched no file")
    if manifest.get("since"):
        s = manifest["since"]
        lines.append(
            f"  since {s['manifest']}: " + ("reused" if s["honoured"] else f"not reused ({s['reason']})")
        )
    lines.append("")
    ents = counts["entities"]["byKindFormat"]
    rows: list[tuple[str, ...]] = [("KIND", "FORMAT", "ENTITIES")]
    rows += [(k, f, str(n)) for k in sorted(ents) for f, n in sorted(ents[k].items())]
    lines.append(f"ENTITIES  {counts['entities']['total']}")
    if len(rows) > 1:
        lines += _table(rows)
    lines.append("")
    lines += _rejects_section(manifest, output)
    lines.append("")
    lines += _fidelity_basis_lines(manifest)
    ex = counts["exports"]["byFormat"]
    lines.append(
        f"EXPORTS  {counts['exports']['total']}"
        + ("" if ex else "  (none requested: --export FMT[,FMT]|all)")
    )
    if ex:
        lines += _table([("FORMAT", "FILES"), *((f, str(n)) for f, n in sorted(ex.items()))])
    lines.append("")
    lines.append("OUTPUTS")
    shards = manifest["outputs"]["shards"]
    rows = []
    for ds, what in (
        ("canonical", "canonical entities (vaud-json lines)"),
        ("fidelity", "fidelity rows"),
        ("rejects", "rejects"),
        ("inventory", "input inventory"),
        ("index", "entity index rows (Parquet)"),
    ):
        for s in shards.get(ds, []):
            rows.append((output.display(s["path"]), f"{s['records']} {what}"))
    mode = manifest["options"].get("fidelity", "full")
    if shards.get("fidelity"):
        rows.append((output.display(FIDELITY_REPORT[1]), f"fidelity report ({mode}; report.json beside it)"))
    elif mode == "off":
        rows.append(("(no fidelity rows or report)", "--fidelity off"))
    if ex:
        rows.append((output.display("exports/"), f"{counts['exports']['total']} export files"))
    rows += blob_rows(counts.get("blobs"), output)
    rows.append((output.display(MANIFEST), "manifest"))
    lines += _table(rows)
    return "\n".join(lines) + "\n"


def _fidelity_basis_lines(manifest: dict[str, Any]) -> list[str]:
    """How the fidelity rows were obtained, when some were predicted (``--fidelity-sample``), and a
    warning naming the patterns whose sampled rows disagreed."""
    basis = manifest["counts"].get("fidelityBasis") or {}
    if not basis.get("predicted") and not basis.get("disagreed"):
        return []
    sample = manifest["options"].get("fidelitySample", "")
    out = [
        f"FIDELITY  {basis.get('observed', 0)} rows observed, {basis.get('predicted', 0)} cross-format rows "
        f"predicted from the observed rows of their pattern (--fidelity-sample {sample}; 1/1 observes every row)"
    ]
    bad = (basis.get("patterns") or {}).get("disagreeing", 0)
    if bad:
        out.append(
            f"  warning: {bad} pattern{'s' if bad != 1 else ''} whose sampled rows disagree (a codec bug, or a "
            f"loss that depends on the values): their {basis.get('disagreed', 0)} rows were observed; the "
            "fidelity report names them and their inputs (Predictions that disagreed)"
        )
    out.append("")
    return out


__all__ = ["summary"]
