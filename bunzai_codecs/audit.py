"""``bunzai audit``: compare a fidelity run with a baseline and fail on any regression.

    bunzai audit --report NEW --baseline OLD [--kept-tolerance POINTS] [--write-baseline]
    python -m bunzai_codecs.audit ...           (the same)

NEW is a run: a ``report.json``, the folder of ``rows-*.jsonl`` it sits in (``bunzai fidelity``),
or a normalize output folder (its ``fidelity/`` rows); the rows are what is compared. OLD is the
committed TSV baseline (``--write-baseline`` records one) or a previous run given the same ways, on
any fsspec store. A regression is any of:

- **reject**: an input that decoded in the baseline is now rejected (**detect**: or decodes as
  another format);
- **round trip**: an input whose same-format round trip (native bytes, or canonical stability) was
  lossless is not any more;
- **lossy**: a source -> target pair that was lossless for every entity now loses something;
- **unexpected**: a pair loses or changes a path the target's coverage says it holds (or fails with
  an error type) that the baseline did not list;
- **kept**: a pair's share of the content kept (the report's "kept" measure) dropped by more than
  the tolerance (percentage points, ``--kept-tolerance``).

Only what both runs covered is compared: an input counts when both runs read it with the same
sha256, and a pair or path counts only for those inputs. A baseline run's rows are recounted over
those inputs; a TSV baseline holds totals over all of its inputs, so a pair's kept share is
compared against it only when every baseline input of the pair's source format was compared. So CI
without the shared corpus checks the samples against a baseline recorded over samples + corpus,
and a new sample or format is simply not compared until the baseline is rewritten
(``--write-baseline``, reviewed in the diff).

The baseline is a small sorted text file, one line per input, per pair and per unexpected path
(see ``Snapshot.to_text``); it is meant to be read in review.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO, TypeAlias

import orjson

from bunzai_codecs.exitcodes import Exit

if TYPE_CHECKING:  # the codec library is imported when rows are read: `bunzai --help` needs none of it
    from bunzai_codecs.fidelity import FidelityRow

SHA_CHARS = 12
#: percentage points a pair's kept share may drop before the audit fails (``--kept-tolerance``)
KEPT_TOLERANCE = 0.1
_WORST = ("-", "lossless", "expected", "unexpected", "error")
HEADER = """\
# bunzai fidelity baseline: the audit (`make test`) fails when a run loses what this file says it kept.
# Rewrite it with `make baseline` (bunzai audit --write-baseline) and review the diff. Columns (tab-separated):
#   roots       labels of the input roots the run covered
#   input       KEY  SHA256[:12]  decoded FORMAT native=STATUS stability=STATUS | rejected ERROR
#   pair        KIND  SOURCE -> TARGET  lossless|lossy  n=ENTITIES lossless= expected= unexpected= errors= [weight= lost=]
#   unexpected  KIND  SOURCE -> TARGET  lost|changed|added|error  PATH-OR-ERROR  ENTITIES
# weight: the content weight of the pair's source entities; lost: the part of it the conversion lost.
"""


def _worst(a: str, b: str) -> str:
    return a if _WORST.index(a) >= _WORST.index(b) else b


@dataclass
class InputState:
    sha: str
    status: str  # decoded | rejected
    detail: str  # the format, or the error type
    native: str = "-"
    stability: str = "-"
    message: str = ""  # the reject message (not written)
    #: per check, the first difference of the first row that was not lossless (not written)
    messages: dict[str, str] = field(default_factory=dict)


@dataclass
class PairState:
    n: int = 0
    lossless: int = 0
    expected: int = 0
    unexpected: int = 0
    errors: int = 0
    #: rows that carried content weights, their content weight and the part of it lost
    weighed: int = 0
    weight: int = 0
    lost: int = 0
    examples: list[str] = field(default_factory=list)
    #: content weight lost per "change path" (from rows only; a TSV baseline does not keep it)
    paths: dict[str, int] = field(default_factory=dict)

    @property
    def is_lossless(self) -> bool:
        return self.n == self.lossless

    @property
    def kept(self) -> float | None:
        """The percentage of the content weight kept, when every row of the pair was weighed."""
        if not self.n or self.weighed != self.n or not self.weight:
            return None
        return 100.0 * (self.weight - self.lost) / self.weight


PairKey = tuple[str, str, str]  # kind, source, target
PathKey = tuple[str, str, str, str, str]  # kind, source, target, change, path


def _describe(r: FidelityRow, limit: int = 3) -> str:
    if r.error is not None:
        return f"{r.error.type}: {r.error.message}"
    parts = []
    for change, loss in r.losses():
        if loss.cls != "info":
            parts.append(f"{change} {loss.at or loss.path} ({loss.cls})")
    more = f" +{len(parts) - limit} more" if len(parts) > limit else ""
    return ", ".join(parts[:limit]) + more


def _who(r: FidelityRow) -> str:
    return f'{r.input} "{r.name}"' if r.name else r.input


@dataclass
class Snapshot:
    """What a run kept and lost, in the shape the baseline records."""

    roots: list[str] = field(default_factory=list)
    inputs: dict[str, InputState] = field(default_factory=dict)
    pairs: dict[PairKey, PairState] = field(default_factory=dict)
    unexpected: dict[PathKey, int] = field(default_factory=dict)
    examples: dict[PathKey, str] = field(default_factory=dict)

    @classmethod
    def from_rows(
        cls, rows: Iterable[FidelityRow], *, roots: Sequence[str] = (), only: set[str] | None = None
    ) -> Snapshot:
        """The snapshot of ``rows`` (one pass, in memory per input and pair, not per row),
        restricted to the inputs in ``only`` when given."""
        s = cls(roots=list(roots))
        checks: dict[str, dict[str, str]] = {}
        messages: dict[str, dict[str, str]] = {}
        for r in rows:
            if only is not None and r.input not in only:
                continue
            if r.check == "decode":
                detail = r.source if r.status == "decoded" else (r.error.type if r.error else "Error")
                msg = f"{r.error.type}: {r.error.message}" if r.error else ""
                s.inputs[r.input] = InputState(r.sha256[:SHA_CHARS], r.status, detail, message=msg)
            elif r.check in ("native", "stability"):
                c = checks.setdefault(r.input, {})
                c[r.check] = _worst(c.get(r.check, "-"), r.status)
                if r.status != "lossless":
                    messages.setdefault(r.input, {}).setdefault(r.check, f"{r.check}: {_describe(r)}")
            elif r.check == "cross":
                s._add_cross(r)
        for key, c in checks.items():
            st = s.inputs.get(key)
            if st is not None:  # a check without its decode row is not an input of this snapshot
                st.native, st.stability = c.get("native", "-"), c.get("stability", "-")
                st.messages = messages.get(key, {})
        return s

    def _add_cross(self, r: FidelityRow) -> None:
        p = self.pairs.setdefault((r.kind, r.source, r.target), PairState())
        p.n += 1
        if r.status == "lossless":
            p.lossless += 1
        elif r.status == "expected":
            p.expected += 1
        elif r.status == "unexpected":
            p.unexpected += 1
        else:
            p.errors += 1
        if r.weight is not None:
            p.weighed += 1
            p.weight += r.weight
            p.lost += r.lost_weight or 0
        if r.status != "lossless" and len(p.examples) < 3:
            p.examples.append(f"{_who(r)}: {_describe(r)}")
        for change, loss in r.losses():
            if loss.weight:
                label = f"{change} {loss.path}"
                p.paths[label] = p.paths.get(label, 0) + loss.weight
        keys: list[tuple[PathKey, str]] = []
        if r.error is not None:
            keys.append(((r.kind, r.source, r.target, "error", r.error.type), f": {r.error.message}"))
        for change, loss in r.losses():
            if loss.cls == "unexpected":
                keys.append(((r.kind, r.source, r.target, change, loss.path), f" at {loss.at}"))
        for k, where in keys:
            self.unexpected[k] = self.unexpected.get(k, 0) + 1
            self.examples.setdefault(k, _who(r) + where)

    # -- the baseline file --------------------------------------------------------------------------

    def to_text(self) -> str:
        lines = [HEADER.rstrip("\n"), "roots\t" + " ".join(self.roots)]
        for key in sorted(self.inputs):
            i = self.inputs[key]
            if i.status == "decoded":
                lines.append(
                    f"input\t{key}\t{i.sha}\tdecoded\t{i.detail}\tnative={i.native}\tstability={i.stability}"
                )
            else:
                lines.append(f"input\t{key}\t{i.sha}\trejected\t{i.detail}")
        for (kind, src, tgt), p in sorted(self.pairs.items()):
            state = "lossless" if p.is_lossless else "lossy"
            counts = f"n={p.n} lossless={p.lossless} expected={p.expected} unexpected={p.unexpected} errors={p.errors}"
            if p.n and p.weighed == p.n:
                counts += f" weight={p.weight} lost={p.lost}"
            lines.append(f"pair\t{kind}\t{src} -> {tgt}\t{state}\t{counts}")
        for (kind, src, tgt, change, path), n in sorted(self.unexpected.items()):
            lines.append(f"unexpected\t{kind}\t{src} -> {tgt}\t{change}\t{path}\t{n}")
        return "\n".join(lines) + "\n"

    @classmethod
    def from_text(cls, text: str, *, where: str = "baseline") -> Snapshot:
        s = cls()
        for no, line in enumerate(text.splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            f = line.split("\t")
            try:
                if f[0] == "roots":
                    s.roots = f[1].split() if len(f) > 1 else []
                elif f[0] == "input" and f[3] == "decoded":
                    kv = dict(x.split("=", 1) for x in f[5:])
                    s.inputs[f[1]] = InputState(
                        f[2], "decoded", f[4], kv.get("native", "-"), kv.get("stability", "-")
                    )
                elif f[0] == "input" and f[3] == "rejected":
                    s.inputs[f[1]] = InputState(f[2], "rejected", f[4])
                elif f[0] == "pair":
                    src, tgt = _pair(f[2])
                    n = {k: int(v) for k, v in (x.split("=", 1) for x in f[4].split())}
                    p = PairState(n["n"], n["lossless"], n["expected"], n["unexpected"], n["errors"])
                    if (f[3] == "lossless") != p.is_lossless:
                        raise ValueError(f"says {f[3]} but counts {f[4]}")
                    if ("weight" in n) != ("lost" in n) or n.get("lost", 0) > n.get("weight", 0):
                        raise ValueError(f"weight and lost go together, lost <= weight: {f[4]}")
                    if "weight" in n:
                        p.weighed, p.weight, p.lost = p.n, n["weight"], n["lost"]
                    s.pairs[(f[1], src, tgt)] = p
                elif f[0] == "unexpected":
                    src, tgt = _pair(f[2])
                    s.unexpected[(f[1], src, tgt, f[3], f[4])] = int(f[5])
                else:
                    raise ValueError(f"unknown line type {f[0]!r}")
            except (IndexError, KeyError, ValueError) as exc:
                raise BaselineError(f"{where}:{no}: cannot read this line ({exc}): {line[:120]}") from None
        return s


def _pair(text: str) -> tuple[str, str]:
    src, sep, tgt = text.partition(" -> ")
    if not sep:
        raise ValueError("expected SOURCE -> TARGET")
    return src, tgt


class BaselineError(Exception):
    pass


class RunError(Exception):
    """A report, run folder or baseline that cannot be read: the audit exits 2 with the message."""


# -- runs: where the rows are --------------------------------------------------------------------------

#: (url or path) -> (fsspec filesystem, path on it); the normalize job passes its storage's
Opener = Callable[[str], tuple[Any, str]]


def _url_to_fs(url: str) -> tuple[Any, str]:
    from fsspec.core import url_to_fs

    fs, path = url_to_fs(url)
    return fs, path


def _parent(path: str) -> str:
    head = path.rstrip("/").rpartition("/")[0]
    return head or "/"


@dataclass
class Run:
    """A fidelity run's rows: the ``rows-*.jsonl`` files of one folder, read in name order (as often
    as needed: a snapshot is built in one pass over them, without holding the rows)."""

    where: str
    fs: Any
    folder: str
    files: list[str]
    roots: list[str] = field(default_factory=list)

    def rows(self) -> Iterator[FidelityRow]:
        from bunzai_codecs.fidelity import FidelityRow

        for f in self.files:
            with self.fs.open(f, "rb") as fh:
                for no, line in enumerate(fh, 1):
                    if not line.strip():
                        continue
                    try:
                        yield FidelityRow.from_json(orjson.loads(line))
                    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                        raise RunError(f"{f}:{no}: not a fidelity row ({exc})") from None


def _rows_files(fs: Any, folder: str) -> list[str]:
    return sorted(str(p) for p in fs.glob(f"{folder.rstrip('/')}/rows-*.jsonl"))


def open_run(location: str, opener: Opener | None = None) -> Run:
    """The run at ``location``: a ``report.json`` (its rows beside it), a folder of rows (``bunzai
    fidelity -o``), or a normalize output folder (its ``fidelity/``). Lists the rows; reads none."""
    fs, path = (opener or _url_to_fs)(location)
    path = path.rstrip("/") or path
    report: str | None = None
    if fs.isfile(path):
        report, folder = path, _parent(path)
    elif fs.isdir(path):
        folder = path
    else:
        raise RunError(f"{location}: no such report or run folder")
    files = _rows_files(fs, folder)
    if not files and report is None and fs.isdir(f"{folder}/fidelity"):
        folder = f"{folder}/fidelity"
        files = _rows_files(fs, folder)
    if not files:
        hint = " (run `bunzai fidelity` first, or give a normalize output folder)"
        manifest = f"{path if report is None else folder}/manifest.json"
        if fs.isfile(manifest):
            try:
                mode = orjson.loads(fs.cat_file(manifest)).get("options", {}).get("fidelity", "full")
            except (orjson.JSONDecodeError, AttributeError):
                mode = "?"
            if mode == "off":
                hint = " (that run was made with --fidelity off)"
        raise RunError(f"{location}: no fidelity rows (rows-*.jsonl) there{hint}")
    roots: list[str] = []
    rj = report or f"{folder}/report.json"
    if fs.isfile(rj):
        try:
            meta = orjson.loads(fs.cat_file(rj)).get("meta", {})
        except (orjson.JSONDecodeError, AttributeError) as exc:
            raise RunError(f"{location}: {rj} is not a fidelity report ({exc})") from None
        roots = [str(x) for x in meta.get("roots", [])] if isinstance(meta, dict) else []
    return Run(location, fs, folder, files, roots)


@dataclass
class Baseline:
    """What a run is compared with: a TSV baseline's snapshot, or a previous run."""

    where: str
    snapshot: Snapshot | None = None
    run: Run | None = None


def open_baseline(location: str, opener: Opener | None = None) -> Baseline:
    """A TSV baseline (read now), or a previous run as ``open_run`` takes it (its rows are read when
    compared)."""
    fs, path = (opener or _url_to_fs)(location)
    if fs.isfile(path):
        with fs.open(path, "rb") as fh:
            head = fh.read(256).lstrip()
        if not (path.endswith(".json") or head.startswith(b"{")):
            try:
                text = fs.cat_file(path).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise BaselineError(f"{location}: not a baseline ({exc})") from None
            return Baseline(location, snapshot=Snapshot.from_text(text, where=location))
    elif not fs.isdir(path):
        raise RunError(
            f"{location}: no baseline (record one with --write-baseline, or give a previous run's "
            "report.json or folder)"
        )
    return Baseline(location, run=open_run(location, opener))


# -- the comparison -----------------------------------------------------------------------------------


@dataclass
class Audit:
    regressions: list[tuple[str, str]] = field(default_factory=list)
    improvements: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    compared_inputs: int = 0
    compared_pairs: int = 0

    @property
    def ok(self) -> bool:
        return not self.regressions

    def render(self, baseline: str, report: str | None = None) -> str:
        """The result in a few lines; a hint names the command that records this run as the
        baseline (``report``: the run as it was given; the TSV named ``baseline``, or
        ``baseline.tsv`` when a previous run was the baseline)."""
        out = []
        if self.regressions:
            out.append(
                f"bunzai audit: {len(self.regressions)} regression(s) against {baseline} "
                f"({self.compared_inputs} inputs and {self.compared_pairs} format pairs compared):"
            )
            width = max(len(c) for c, _ in self.regressions)
            out += [f"  {c.upper().ljust(width)}  {m}" for c, m in self.regressions]
            out.append(
                "A codec change made bunzai lose data it kept before. Fix it, or, if the loss is intended, "
                f"record this run as the baseline with `{_record(report, baseline)}` (and review its diff)."
            )
        else:
            out.append(
                f"bunzai audit: no regressions against {baseline} "
                f"({self.compared_inputs} inputs and {self.compared_pairs} format pairs compared)"
            )
        if self.improvements:
            out.append(
                f"{len(self.improvements)} improvement(s); `{_record(report, baseline)}` locks them in:"
            )
            out += [f"  + {m}" for m in self.improvements[:20]]
            if len(self.improvements) > 20:
                out.append(f"  + ... {len(self.improvements) - 20} more")
        out += [f"note: {n}" for n in self.notes]
        return "\n".join(out)


#: rows as a list, or a function that reads them afresh (a ``Run``'s ``rows``)
Rows: TypeAlias = "Sequence[FidelityRow] | Callable[[], Iterable[FidelityRow]]"


def _each(rows: Rows) -> Iterable[FidelityRow]:
    return rows() if callable(rows) else rows


def _most_lost(now: PairState, was: PairState | None, n: int = 3) -> str:
    """The paths behind a drop in a pair's kept share: those that lose more weight than in the
    baseline (a run baseline), else those that lose the most now (a TSV baseline keeps no paths)."""
    if was is not None:
        grown = {k: w - was.paths.get(k, 0) for k, w in now.paths.items() if w > was.paths.get(k, 0)}
        top = sorted(grown.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
        return "; more lost at " + ", ".join(f"{k} (+{w:,})" for k, w in top) if top else ""
    top = sorted(now.paths.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
    return "; most lost at " + ", ".join(f"{k} ({w:,})" for k, w in top) if top else ""


def compare(
    base: Snapshot,
    rows: Rows,
    *,
    base_rows: Rows | None = None,
    tolerance: float = KEPT_TOLERANCE,
) -> Audit:
    """Every regression of ``rows`` against ``base`` on what both covered (module docstring).
    ``base_rows``: the baseline run's rows (``base`` is then their snapshot), recounted over the
    inputs both runs read; without them ``base`` is a TSV baseline's totals."""
    full = Snapshot.from_rows(_each(rows))
    common = {k for k, i in base.inputs.items() if k in full.inputs and full.inputs[k].sha == i.sha}
    new = Snapshot.from_rows(_each(rows), only=common)
    exact = base_rows is not None
    full_base = base
    if base_rows is not None:
        base = Snapshot.from_rows(_each(base_rows), roots=base.roots, only=common)
    a = Audit(compared_inputs=len(common))
    everything = exact or common == set(full_base.inputs)

    for key in sorted(common):
        b, n = base.inputs[key], new.inputs[key]
        if b.status == "decoded" and n.status == "rejected":
            a.regressions.append(
                ("reject", f"{key}: decoded as {b.detail} in the baseline, now rejected: {n.message}")
            )
            continue
        if b.status == "rejected" and n.status == "decoded":
            a.improvements.append(f"{key}: was rejected ({b.detail}), now decodes as {n.detail}")
            continue
        if b.status == "decoded" and n.detail != b.detail:
            a.regressions.append(
                ("detect", f"{key}: detected as {b.detail} in the baseline, now as {n.detail}")
            )
            continue
        for check in ("native", "stability"):
            was, now = getattr(b, check), getattr(n, check)
            what = "native round trip" if check == "native" else "canonical stability"
            if was == "lossless" and now != "lossless":
                a.regressions.append(
                    (
                        "round trip",
                        f"{key} ({n.detail}): {what} was lossless, now {now}: {n.messages.get(check, '')}",
                    )
                )
            elif was not in ("lossless", "-") and now == "lossless":
                a.improvements.append(f"{key} ({n.detail}): {what} was {was}, now lossless")

    # a TSV pair's totals cover every baseline input of its source format: its kept share compares
    # with this run's only when all of those were compared
    partial = {i.detail for k, i in full_base.inputs.items() if i.status == "decoded" and k not in common}
    kept_skipped = 0
    for pk in sorted(base.pairs.keys() & new.pairs.keys()):
        b_pair, n_pair = base.pairs[pk], new.pairs[pk]
        kind, src, tgt = pk
        a.compared_pairs += 1
        if b_pair.is_lossless and not n_pair.is_lossless:
            lossy = n_pair.n - n_pair.lossless
            a.regressions.append(
                (
                    "lossy",
                    f"{kind} {src} -> {tgt}: lossless on all {b_pair.n} entities in the baseline, now {lossy} of "
                    f"{n_pair.n} lose data, e.g. {'; '.join(n_pair.examples[:2])}",
                )
            )
        elif everything and not b_pair.is_lossless and n_pair.is_lossless:
            a.improvements.append(f"{kind} {src} -> {tgt}: now lossless on all {n_pair.n} entities")
        was, now = b_pair.kept, n_pair.kept
        if was is None or now is None:
            continue
        if not exact and src in partial:
            kept_skipped += 1
            continue
        if was - now > tolerance:
            a.regressions.append(
                (
                    "kept",
                    f"{kind} {src} -> {tgt}: kept {was:.2f}% of the content in the baseline, now {now:.2f}% "
                    f"({was - now:.2f} points less; tolerance {tolerance:g})"
                    + _most_lost(n_pair, b_pair if exact else None),
                )
            )
        elif now - was > tolerance:
            a.improvements.append(f"{kind} {src} -> {tgt}: keeps {now:.2f}% of the content, was {was:.2f}%")

    for uk in sorted(new.unexpected):
        kind, src, tgt, change, path = uk
        if (kind, src, tgt) not in base.pairs or uk in base.unexpected:
            continue
        what = f"fails with {path}" if change == "error" else f"{change} path {path}"
        a.regressions.append(
            (
                "unexpected",
                f"{kind} {src} -> {tgt}: new unexpected {what} "
                f"({new.unexpected[uk]} entities), e.g. {new.examples[uk]}",
            )
        )
    if everything:
        for uk in sorted(base.unexpected.keys() - new.unexpected.keys()):
            kind, src, tgt, change, path = uk
            if (kind, src, tgt) in new.pairs:
                a.improvements.append(f"{kind} {src} -> {tgt}: no longer {change} {path}")

    only_base = len(full_base.inputs.keys() - full.inputs.keys())
    only_new = len(full.inputs.keys() - full_base.inputs.keys())
    changed = sum(
        1
        for k in full_base.inputs.keys() & full.inputs.keys()
        if full.inputs[k].sha != full_base.inputs[k].sha
    )
    if only_base:
        a.notes.append(f"{only_base} baseline inputs were not in this run (not compared)")
    if only_new:
        a.notes.append(f"{only_new} inputs of this run are not in the baseline (not compared)")
    if changed:
        a.notes.append(f"{changed} inputs changed since the baseline (not compared)")
    new_pairs = len(full.pairs.keys() - full_base.pairs.keys())
    if new_pairs:
        a.notes.append(f"{new_pairs} format pairs are not in the baseline (not compared)")
    if kept_skipped:
        a.notes.append(
            f"{kept_skipped} format pairs' kept share not compared: the baseline counts inputs of their "
            "source format that this run did not read"
        )
    return a


def audit_runs(baseline: Baseline, run: Run, *, tolerance: float = KEPT_TOLERANCE) -> Audit:
    """Compare ``run`` with ``baseline`` (a TSV baseline, or a previous run's rows)."""
    if baseline.run is not None:
        base = Snapshot.from_rows(baseline.run.rows(), roots=baseline.run.roots)
        return compare(base, run.rows, base_rows=baseline.run.rows, tolerance=tolerance)
    assert baseline.snapshot is not None
    return compare(baseline.snapshot, run.rows, tolerance=tolerance)


def gate(
    report: str,
    baseline: str,
    *,
    tolerance: float = KEPT_TOLERANCE,
    opener: Opener | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Audit the run at ``report`` against ``baseline`` (either as ``--report``/``--baseline`` take
    them), print the result, and return the exit code: the command's, and ``normalize
    --audit-against``'s."""
    out, err = out or sys.stdout, err or sys.stderr
    try:
        new = open_run(report, opener)
        base = open_baseline(baseline, opener)
        result = audit_runs(base, new, tolerance=tolerance)
    except (RunError, BaselineError, OSError) as exc:
        print(f"bunzai audit: {exc}", file=err)
        return Exit.INPUT
    print(result.render(baseline, report), file=out if result.ok else err)
    return Exit.OK if result.ok else Exit.REGRESSION


def _record(report: str | None, baseline: str) -> str:
    """The command that records ``report`` as the baseline: into ``baseline`` when it is a TSV
    file, else (a previous run was the baseline) into ``baseline.tsv``."""
    import shlex

    tsv = baseline if baseline.endswith(".tsv") else "baseline.tsv"
    run = shlex.quote(report) if report else "REPORT"
    return f"bunzai audit --report {run} --baseline {shlex.quote(tsv)} --write-baseline"


# -- command ------------------------------------------------------------------------------------------


def write_baseline(report: str, baseline: str) -> int:
    """Record the run at ``report`` as the TSV baseline ``baseline`` (a local file)."""
    from pathlib import Path

    try:
        new = open_run(report)
        snap = Snapshot.from_rows(new.rows(), roots=new.roots)
    except (RunError, OSError) as exc:
        print(f"bunzai audit: {exc}", file=sys.stderr)
        return Exit.INPUT
    path = Path(baseline)
    if path.is_file():
        try:
            old = Snapshot.from_text(path.read_text(encoding="utf-8"), where=str(path))
            dropped = sorted(old.inputs.keys() - snap.inputs.keys())
            if dropped:
                print(
                    f"bunzai audit: warning: {len(dropped)} inputs of the old baseline are not in this run "
                    f"and leave the baseline (e.g. {dropped[0]}); run with the corpus to keep them",
                    file=sys.stderr,
                )
        except (BaselineError, UnicodeDecodeError):
            pass
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(snap.to_text(), encoding="utf-8")
    print(
        f"bunzai audit: wrote {path}: {len(snap.inputs)} inputs, {len(snap.pairs)} pairs, "
        f"{len(snap.unexpected)} unexpected paths",
        file=sys.stderr,
    )
    return Exit.OK


def run(args: argparse.Namespace) -> int:
    if args.write_baseline:
        return write_baseline(args.report, args.baseline)
    return gate(args.report, args.baseline, tolerance=args.kept_tolerance)


def _tolerance(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError("percentage points between 0 and 100")
    return value


def configure(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument(
        "--report",
        required=True,
        metavar="NEW",
        help="the run: its report.json, the folder of its rows-*.jsonl, or a normalize output folder",
    )
    p.add_argument(
        "--baseline",
        required=True,
        metavar="OLD",
        help="the committed TSV baseline (audit/baseline.tsv), or a previous run given as NEW is",
    )
    p.add_argument(
        "--kept-tolerance",
        type=_tolerance,
        default=KEPT_TOLERANCE,
        metavar="POINTS",
        help=f"fail when a format pair's kept share drops by more than this many percentage points "
        f"(default {KEPT_TOLERANCE:g})",
    )
    p.add_argument(
        "--write-baseline",
        action="store_true",
        help="record NEW as the TSV baseline OLD instead of comparing",
    )
    p.set_defaults(fn=run)
    return p


HELP = "compare a fidelity run with a baseline or a previous run; exit 1 on any regression"
DESCRIPTION = (
    "Fails (exit 1, with a readable list) when the run loses what the baseline kept: a file that decoded "
    "is rejected, a same-format round trip breaks, a lossless format pair turns lossy, a new "
    "unexpected lost path appears, or a pair's share of the content kept drops by more than the "
    "tolerance. The baseline is a TSV file (--write-baseline) or a previous run's report.json or "
    "folder. Only inputs both runs read with the same bytes are compared."
)


def main(argv: Sequence[str] | None = None) -> int:
    p = configure(argparse.ArgumentParser(prog="python -m bunzai_codecs.audit", description=DESCRIPTION))
    return int(run(p.parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
