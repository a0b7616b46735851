"""The end of a run: settling exports, removing stale outputs, counting, the manifest and the
summary table.

Counts are computed from the records themselves (inventory rows, rejects, fidelity rows, committed
exports), combined per key, so the manifest is exact on every runner; Beam counters (namespace
``bunzai``) report the same flow live. Every file of the run is staged first; ``pipeline/commit.py``
moves them into place and writes the manifest, the run's commit record (a folder with a manifest
is complete), only once the run is complete and balanced.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import platform
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import apache_beam as beam

import bunzai_codecs
from bunzai_codecs.core import registry
from bunzai_codecs.fidelity_report import ReportBuilder, render_html, report_json
from pipeline.io import Output, copy_file, is_local, list_files, move_file, staged_path, write_bytes
from pipeline.shards import ShardInfo
from pipeline.transforms import STAGES, ExportCandidate, uri_digest

MANIFEST = "manifest.json"
#: ``CommitExports``' output of exports the previous run left in place (``--since`` into its own folder)
KEPT = "kept"
#: example inputs per (stage, error) of the rejects, in the manifest and the summary
REJECT_EXAMPLES = 5
#: folders the job owns in the output; files there that this run did not write are removed
MANAGED = ("canonical", "fidelity", "rejects", "inventory", "index", "exports")
#: uris listed per balance problem in the manifest
SAMPLE = 20


# -- exports -------------------------------------------------------------------------------------


class _Commit(beam.DoFn):
    def __init__(self, output: Output, staging: str) -> None:
        self.output = output
        self.staging = staging

    def setup(self) -> None:
        self.fs, self.root = self.output.open()

    def process(self, item: tuple[str, Iterable[ExportCandidate]]) -> Iterator[Any]:
        rel, cands = item
        ordered = sorted(cands, key=lambda c: (c.uri, c.staged or "", c.previous or ""))
        winner, losers = ordered[0], ordered[1:]
        final = f"{self.root}/{staged_path(self.staging, rel)}"
        for c in losers:
            if c.staged:
                self.fs.rm_file(c.staged)
        if winner.staged:
            move_file(self.fs, winner.staged, final)
            yield rel
            return
        assert winner.previous is not None
        src_fs, src = self.output.storage.fs(winner.previous)
        if src_fs is self.fs and src == f"{self.root}/{rel}":
            # same output folder: the file is already where it goes; it stays there (the commit
            # keeps it rather than pruning it)
            if self.fs.exists(src):
                yield beam.pvalue.TaggedOutput(KEPT, rel)
            return
        try:
            copy_file(src_fs, src, self.fs, final)
        except FileNotFoundError:  # the previous run could not export it (its reject is carried)
            return
        yield rel


class CommitExports(beam.PTransform):
    """``ExportCandidate``s -> export paths (relative to the output): one winner per path, staged
    (main) or, for a ``--since`` run into the previous run's own folder, ``kept`` where it is."""

    def __init__(self, output: Output, staging: str) -> None:
        super().__init__()
        self.output = output
        self.staging = staging

    def expand(self, candidates: Any) -> Any:
        return (
            candidates
            | "ByPath" >> beam.Map(lambda c: (c.rel, c))
            | "Group" >> beam.GroupByKey()
            | "Commit" >> beam.ParDo(_Commit(self.output, self.staging)).with_outputs(KEPT, main="staged")
        )


# -- pruning -------------------------------------------------------------------------------------


class _ListManaged(beam.DoFn):
    def __init__(self, output: Output) -> None:
        self.output = output

    def process(self, _: Any, written: int, gate: Any = None) -> Iterator[tuple[str, str]]:
        # ``written`` is only a barrier: this runs once every output file is in place; a run
        # that is not committed (``gate``) removes nothing
        if gate is None or gate["ok"]:
            yield from self._found()

    def _found(self) -> Iterator[tuple[str, str]]:
        fs, root = self.output.open()
        for top in MANAGED:
            base = f"{root}/{top}"
            if not fs.exists(base):
                continue
            for path, _info in list_files(fs, base, hidden=True):
                yield path[len(root) + 1 :], "found"


def _stale(item: tuple[str, dict[str, list[str]]]) -> Iterator[str]:
    rel, groups = item
    if groups["found"] and not groups["written"]:
        yield rel


class _Remove(beam.DoFn):
    def __init__(self, output: Output) -> None:
        self.output = output

    def setup(self) -> None:
        self.fs, self.root = self.output.open()

    def process(self, rel: str) -> Iterator[str]:
        path = f"{self.root}/{rel}"
        self.fs.rm_file(path)
        if is_local(self.fs):  # no empty folders left behind (object stores have none)
            parent = path.rpartition("/")[0]
            with contextlib.suppress(OSError):
                while parent != self.root and not os.listdir(parent):
                    os.rmdir(parent)
                    parent = parent.rpartition("/")[0]
        yield rel


class Prune(beam.PTransform):
    """Written paths -> paths removed: files under the managed folders that this run did not write
    (shards of an earlier run with another shard count, exports of inputs that are gone, leftovers
    of an interrupted write). Runs after every write, so a re-run leaves exactly this run's files.
    ``gate`` (a singleton ``{"ok": bool, ...}``, the commit's verdict): nothing is removed unless
    it is ok."""

    def __init__(self, output: Output, gate: Any = None) -> None:
        super().__init__()
        self.output = output
        self.gate = gate

    def expand(self, written: Any) -> Any:
        done = beam.pvalue.AsSingleton(written | "CountWritten" >> beam.combiners.Count.Globally())
        gate = () if self.gate is None else (beam.pvalue.AsSingleton(self.gate),)
        found = (
            written.pipeline
            | "Start" >> beam.Create([None])
            | "ListOutput" >> beam.ParDo(_ListManaged(self.output), done, *gate)
        )
        mine = written | "Mine" >> beam.Map(lambda rel: (rel, "written"))
        return (
            {"found": found, "written": mine}
            | "Join" >> beam.CoGroupByKey()
            | "Stale" >> beam.FlatMap(_stale)
            | "Remove" >> beam.ParDo(_Remove(self.output))
        )


# -- counts --------------------------------------------------------------------------------------


def row_counts(row: dict[str, Any]) -> Iterator[tuple[tuple[str, ...], int]]:
    """Counts one inventory row contributes: its status, format, entities and the stages it passed."""
    yield ("inputs", "listed"), 1
    yield ("inputs", row["status"]), 1
    entities = row.get("entities") or []
    if row.get("format"):
        yield ("formats", row["format"]), 1
    for eid in entities:
        yield ("entities", eid.split("-", 1)[0], row.get("format") or "?"), 1
    yield ("outcome", "entities" if entities else "rejected"), 1
    if row["status"] == "unchanged":
        yield ("stage", "read", "skipped"), 1
        return
    stopped = row.get("rejected")
    for stage in ("read", "detect", "decode"):
        yield ("stage", stage, "in"), 1
        if stopped == stage:
            return
        yield ("stage", stage, "out"), 1
    yield ("stage", "decode", "entities"), row.get("decoded") or 0
    yield ("stage", "validate", "in"), row.get("decoded") or 0
    yield ("stage", "validate", "out"), len(entities)


def reject_counts(rec: dict[str, Any]) -> Iterator[tuple[tuple[str, ...], int]]:
    yield ("rejects", rec["stage"], rec["error"]), 1


def fidelity_counts(row: dict[str, Any]) -> Iterator[tuple[tuple[str, ...], int]]:
    yield ("fidelity", row["check"], row["status"]), 1


def export_counts(rel: str) -> Iterator[tuple[tuple[str, ...], int]]:
    yield ("exports", rel.split("/")[1]), 1


#: hash cells the balance is checked in
BALANCE_CELLS = 256
#: the balance's tagged output: ``(digest, problem)`` of each uri in a problem
PROBLEMS = "problems"


def _cell_digest(uri: str) -> tuple[int, int]:
    h = uri_digest(uri)
    return h % BALANCE_CELLS, h


def _union(sets: Iterable[set[int]]) -> set[int]:
    out: set[int] = set()
    for s in sets:
        out |= s
    return out


class DigestSet(beam.CombineFn):
    """uri digests, or sets of them (partial results) -> their union."""

    def create_accumulator(self) -> set[int]:
        return set()

    def add_input(self, acc: set[int], h: int | set[int]) -> set[int]:
        if isinstance(h, set):
            acc |= h
        else:
            acc.add(h)
        return acc

    def merge_accumulators(self, accs: Iterable[set[int]]) -> set[int]:
        return _union(accs)

    def extract_output(self, acc: set[int]) -> set[int]:
        return acc


def balance_of(item: tuple[int, dict[str, list[set[int]]]]) -> Iterator[Any]:
    """``listed`` vs ``accounted`` uri digests of one hash cell: the count of each outcome --
    ``ok``, ``unaccounted`` (listed, yet neither an entity's source nor a reject: lost) and
    ``unlisted`` (an output naming an input nobody listed) -- and, tagged ``PROBLEMS``, the
    ``(digest, problem)`` of every uri in a problem, to find example uris by."""
    _, groups = item
    listed, accounted = _union(groups["listed"]), _union(groups["accounted"])
    ok = len(listed & accounted)
    if ok:
        yield ("balance", "ok"), ok
    for problem, digests in (("unaccounted", listed - accounted), ("unlisted", accounted - listed)):
        if digests:
            yield ("balance", problem), len(digests)
        for h in digests:
            yield beam.pvalue.TaggedOutput(PROBLEMS, (h, problem))


def _examples(uri: str, problems: dict[int, str], problem: str) -> Iterator[tuple[str, str]]:
    if problems and problems.get(uri_digest(uri)) == problem:
        yield problem, uri


def _listed_examples(item: Any, problems: dict[int, str], uris_of: Any) -> Iterator[tuple[str, str]]:
    if problems:
        for uri in [item] if uris_of is None else uris_of(item):
            yield from _examples(uri, problems, "unaccounted")


class Balance(beam.PTransform):
    """Listed uris + accounted uris (one PCollection per producer) -> ``counts``
    (``(("balance", outcome), n)``) and ``examples`` (``(problem, [up to SAMPLE uris])``).

    Each uri stream is reduced to digest sets per hash cell where it is produced (combiner
    lifting), so what crosses the shuffle is a few bytes per uri, never the uris: the local
    runners hold shuffled data in memory, and a join by uri held every listed one there. The
    uris of a problem (none when the run is sound) are found again through their digests."""

    def __init__(self, accounted: Sequence[Any], uris_of: Any = None) -> None:
        """``uris_of``: the uris one element of the listed PCollection stands for (by default
        each element is one uri)."""
        super().__init__()
        self.accounted = list(accounted)
        self.uris_of = uris_of

    def expand(self, listed: Any) -> dict[str, Any]:
        uris = listed if self.uris_of is None else listed | "ListedUris" >> beam.FlatMap(self.uris_of)
        listed_sets = (
            uris | "ListedDigests" >> beam.Map(_cell_digest) | "ListedSets" >> beam.CombinePerKey(DigestSet())
        )
        parts = [
            pc
            | f"AccountedDigests{i}" >> beam.Map(_cell_digest)
            | f"AccountedPart{i}" >> beam.CombinePerKey(DigestSet())
            for i, pc in enumerate(self.accounted)
        ]
        accounted_sets = (
            tuple(parts)
            | "AccountedParts" >> beam.Flatten()
            | "AccountedSets" >> beam.CombinePerKey(DigestSet())
        )
        out = (
            {"listed": listed_sets, "accounted": accounted_sets}
            | "Join" >> beam.CoGroupByKey()
            | "Classify" >> beam.FlatMap(balance_of).with_outputs(PROBLEMS, main="counts")
        )
        problems = beam.pvalue.AsDict(out[PROBLEMS])
        # the listed side is read again in the form it came in (packed batches hold much less)
        found = [listed | "UnaccountedUris" >> beam.FlatMap(_listed_examples, problems, self.uris_of)]
        found += [
            pc | f"UnlistedUris{i}" >> beam.FlatMap(_examples, problems, "unlisted")
            for i, pc in enumerate(self.accounted)
        ]
        examples = (
            tuple(found)
            | "ProblemUris" >> beam.Flatten()
            | "Examples" >> beam.combiners.Top.SmallestPerKey(SAMPLE)
        )
        return {"counts": out.counts, "examples": examples}


# -- the fidelity report --------------------------------------------------------------------------

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


class WriteFidelityReport(beam.PTransform):
    """Every fidelity row of the run (fresh and carried, as dicts; one PCollection or several) ->
    ``fidelity/report.json`` and ``fidelity/report.html`` (staged), the same files ``bunzai
    fidelity`` writes; yields their paths.

    Each producer's rows are folded where they are made (the combine runs fused with the
    producer); only the partial builders meet. A Flatten of the rows themselves would hold every
    row in memory on the local runners, which materialise every multi-input Flatten.
    """

    def __init__(self, output: Output, roots: Sequence[str], staging: str) -> None:
        super().__init__()
        self.output = output
        self.roots = roots
        self.staging = staging

    def expand(self, producers: Any) -> Any:
        if isinstance(producers, beam.PCollection):
            producers = (producers,)
        parts = [
            pc | f"Fold{i}" >> beam.CombineGlobally(FidelityReportFn()).without_defaults()
            for i, pc in enumerate(producers)
        ]
        return (
            tuple(parts)
            | "Parts" >> beam.Flatten()
            | "Combine" >> beam.CombineGlobally(MergeReports())
            | "Write" >> beam.ParDo(_WriteFidelityReport(self.output, self.roots, self.staging))
        )


# -- the manifest --------------------------------------------------------------------------------


def _nest(counts: dict[tuple[str, ...], int], head: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, n in counts.items():
        if key[0] != head:
            continue
        node = out
        for k in key[1:-1]:
            node = node.setdefault(k, {})
        node[key[-1]] = node.get(key[-1], 0) + n
    return _sorted(out)


def _sorted(d: Any) -> Any:
    return {k: _sorted(d[k]) for k in sorted(d)} if isinstance(d, dict) else d


def build_manifest(
    *,
    options: dict[str, Any],
    runner: str,
    started: str,
    finished: str,
    fingerprint: str,
    since: dict[str, Any] | None,
    counts: Iterable[tuple[tuple[str, ...], int]],
    patterns: Iterable[tuple[int, int]],
    shards: Iterable[ShardInfo],
    balance: Iterable[tuple[str, list[str]]],
    pruned: int,
    reject_examples: Iterable[tuple[tuple[str, str], list[tuple[str, str]]]] = (),
) -> dict[str, Any]:
    c: dict[tuple[str, ...], int] = defaultdict(int)
    for k, n in counts:
        c[tuple(k)] += n
    inputs = _nest(c, "inputs")
    listed = inputs.get("listed", 0)
    stats_stages = _nest(c, "stage")
    rejects = _nest(c, "rejects")
    stages: dict[str, dict[str, int]] = {}
    for st in STAGES:
        row = dict(stats_stages.get(st, {}))
        row["rejected"] = sum(rejects.get(st, {}).values())
        stages[st] = _sorted(row)
    stages["list"]["out"] = listed
    exports = _nest(c, "exports")
    # export: in = this run's attempts (staged + refused); out = files committed, carried ones included
    stages["export"]["in"] = c.get(("stage", "export", "in"), 0) + stages["export"]["rejected"]
    stages["export"]["out"] = sum(exports.values())
    fidelity = _nest(c, "fidelity")
    stages["roundtrip"]["rows"] = sum(sum(v.values()) for v in fidelity.values())
    by_kind: dict[str, int] = defaultdict(int)
    by_format: dict[str, int] = defaultdict(int)
    for key, n in c.items():
        if key[0] == "entities":
            by_kind[key[1]] += n
            by_format[key[2]] += n
    bal_counts = _nest(c, "balance")
    samples = {k: sorted(v)[:SAMPLE] for k, v in balance}
    accounted = bal_counts.get("ok", 0)
    problems = {k: bal_counts.get(k, 0) for k in ("unaccounted", "unlisted")}
    listed_by_listing = accounted + problems["unaccounted"]
    shard_list: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in sorted(shards, key=lambda s: s.rel):
        shard_list[s.dataset].append(s.to_json())
    pats = dict(patterns)
    return {
        "manifestVersion": 1,
        "bunzai": {
            "version": bunzai_codecs.__version__,
            "codecFingerprint": fingerprint,
            "codecs": sorted(registry.CODECS),
        },
        "beam": beam.__version__,
        "python": platform.python_version(),
        "runner": runner,
        "started": started,
        "finished": finished,
        "options": options,
        "since": since,
        "inputs": {
            "patterns": [{"input": u, "matched": pats.get(i, 0)} for i, u in enumerate(options["inputs"])],
            "listed": listed,
            "new": inputs.get("new", 0),
            "changed": inputs.get("changed", 0),
            "unchanged": inputs.get("unchanged", 0),
            "deleted": inputs.get("deleted", 0),
            "withEntities": c.get(("outcome", "entities"), 0),
            "rejectedWhole": c.get(("outcome", "rejected"), 0),
            "formats": _nest(c, "formats"),
        },
        "balance": {
            "rule": "every listed input is the source of a canonical entity or of a reject (and has one inventory row); no output names an input that was not listed",
            "listed": listed_by_listing,
            "inventoryRows": listed,
            "accounted": accounted,
            "unaccounted": problems["unaccounted"],
            "unlisted": problems["unlisted"],
            "ok": problems["unaccounted"] == 0 and problems["unlisted"] == 0 and listed_by_listing == listed,
            "examples": {k: v for k, v in sorted(samples.items()) if k != "ok"},
        },
        "counts": {
            "stages": stages,
            "entities": {
                "total": sum(by_kind.values()),
                "byKind": _sorted(dict(by_kind)),
                "byFormat": _sorted(dict(by_format)),
                "byKindFormat": _nest(c, "entities"),
            },
            "rejects": {
                "total": sum(sum(v.values()) for v in rejects.values()),
                "byStage": {k: sum(v.values()) for k, v in rejects.items()},
                "byStageError": rejects,
                "examples": _reject_examples(reject_examples),
            },
            "exports": {"total": sum(exports.values()), "byFormat": exports},
            "fidelity": fidelity,
        },
        "outputs": {
            "shards": {k: shard_list[k] for k in sorted(shard_list)},
            "exports": "exports/<format>/<entity-id><extension>",
            # --fidelity off: no fidelity rows, shards or report
            "fidelityReport": list(FIDELITY_REPORT) if options.get("fidelity", "full") != "off" else [],
            "pruned": pruned,
        },
    }


def reject_example(rec: dict[str, Any]) -> tuple[tuple[str, str], tuple[str, str]]:
    """``((stage, error), (uri, first line of the message))`` of a reject: the examples the
    manifest and the summary give per stage and error are the smallest uris."""
    lines = str(rec.get("message") or "").splitlines()
    first = lines[0] if lines else ""
    if len(first) > 200:
        first = first[:199] + "…"
    return (rec["stage"], rec["error"]), (rec["uri"], first)


def _reject_examples(
    examples: Iterable[tuple[tuple[str, str], list[tuple[str, str]]]],
) -> dict[str, dict[str, list[dict[str, str]]]]:
    out: dict[str, dict[str, list[dict[str, str]]]] = {}
    for (stage, error), items in sorted(examples, key=lambda kv: tuple(kv[0])):
        out.setdefault(stage, {})[error] = [
            {"uri": u, "message": m} for u, m in sorted(items)[:REJECT_EXAMPLES]
        ]
    return out


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


# -- the summary table ---------------------------------------------------------------------------


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
    rows.append((output.display(MANIFEST), "manifest"))
    lines += _table(rows)
    return "\n".join(lines) + "\n"


__all__ = [
    "BALANCE_CELLS",
    "FIDELITY_REPORT",
    "MANAGED",
    "MANIFEST",
    "Balance",
    "CommitExports",
    "DigestSet",
    "FidelityReportFn",
    "MergeReports",
    "Prune",
    "WriteFidelityReport",
    "balance_of",
    "build_manifest",
    "export_counts",
    "fidelity_counts",
    "now",
    "reject_counts",
    "reject_example",
    "row_counts",
    "summary",
    "uri_digest",
]
