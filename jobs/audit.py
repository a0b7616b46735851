"""``bunzai audit``: compare a fidelity run with a committed baseline and fail on any regression.

    bunzai audit --report out/audit/report.json --baseline audit/baseline.tsv [--write-baseline]
    python -m jobs.audit ...           (the same)

The run is read from the ``rows-*.jsonl`` files beside ``report.json`` (``bunzai fidelity`` and the
normalize job both write them). A regression is any of:

- **reject**: an input that decoded in the baseline is now rejected (**detect**: or decodes as
  another format);
- **round trip**: an input whose same-format round trip (native bytes, or canonical stability) was
  lossless is not any more;
- **lossy**: a source -> target pair that was lossless for every entity now loses something;
- **unexpected**: a pair loses or changes a path the target's coverage says it holds (or fails with
  an error type) that the baseline did not list.

Only what both runs covered is compared: an input counts when both runs read it with the same
sha256, and a pair or path counts only for those inputs. So CI without the shared corpus checks the
samples against a baseline recorded over samples + corpus, and a new sample or format is simply
not compared until the baseline is rewritten (``--write-baseline``, reviewed in the diff).

The baseline is a small sorted text file, one line per input, per pair and per unexpected path
(see ``Snapshot.to_text``); it is meant to be read in review.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from bunzai_codecs.fidelity import FidelityRow
from bunzai_codecs.fidelity_report import read_rows

EXIT_OK, EXIT_REGRESSION, EXIT_USAGE = 0, 1, 2
SHA_CHARS = 12
_WORST = ("-", "lossless", "expected", "unexpected", "error")
HEADER = """\
# bunzai fidelity baseline: the audit (`make test`) fails when a run loses what this file says it kept.
# Rewrite it with `make baseline` (bunzai audit --write-baseline) and review the diff. Columns (tab-separated):
#   roots       labels of the input roots the run covered
#   input       KEY  SHA256[:12]  decoded FORMAT native=STATUS stability=STATUS | rejected ERROR
#   pair        KIND  SOURCE -> TARGET  lossless|lossy  n=ENTITIES lossless= expected= unexpected= errors=
#   unexpected  KIND  SOURCE -> TARGET  lost|changed|added|error  PATH-OR-ERROR  ENTITIES
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
    message: str = ""  # the reject message / first native or stability difference (not written)


@dataclass
class PairState:
    n: int = 0
    lossless: int = 0
    expected: int = 0
    unexpected: int = 0
    errors: int = 0
    examples: list[str] = field(default_factory=list)

    @property
    def is_lossless(self) -> bool:
        return self.n == self.lossless


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
        """The snapshot of ``rows``, restricted to the inputs in ``only`` when given."""
        s = cls(roots=list(roots))
        pending: list[FidelityRow] = []
        for r in rows:
            if only is not None and r.input not in only:
                continue
            if r.check == "decode":
                detail = r.source if r.status == "decoded" else (r.error.type if r.error else "Error")
                msg = f"{r.error.type}: {r.error.message}" if r.error else ""
                s.inputs[r.input] = InputState(r.sha256[:SHA_CHARS], r.status, detail, message=msg)
            else:
                pending.append(r)
        for r in pending:
            st = s.inputs.get(r.input)
            if r.check in ("native", "stability") and st is not None:
                old = getattr(st, r.check)
                new = _worst(old, r.status)
                setattr(st, r.check, new)
                if new != "lossless" and new != old and not st.message:
                    st.message = f"{r.check}: {_describe(r)}"
            elif r.check == "cross":
                p = s.pairs.setdefault((r.kind, r.source, r.target), PairState())
                p.n += 1
                if r.status == "lossless":
                    p.lossless += 1
                elif r.status == "expected":
                    p.expected += 1
                elif r.status == "unexpected":
                    p.unexpected += 1
                else:
                    p.errors += 1
                if r.status != "lossless" and len(p.examples) < 3:
                    p.examples.append(f"{_who(r)}: {_describe(r)}")
                keys: list[tuple[PathKey, str]] = []
                if r.error is not None:
                    keys.append(((r.kind, r.source, r.target, "error", r.error.type), f": {r.error.message}"))
                for change, loss in r.losses():
                    if loss.cls == "unexpected":
                        keys.append(((r.kind, r.source, r.target, change, loss.path), f" at {loss.at}"))
                for k, where in keys:
                    s.unexpected[k] = s.unexpected.get(k, 0) + 1
                    s.examples.setdefault(k, _who(r) + where)
        return s

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

    def render(self, baseline: str) -> str:
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
                "rewrite the baseline with `make baseline` and explain it in review."
            )
        else:
            out.append(
                f"bunzai audit: no regressions against {baseline} "
                f"({self.compared_inputs} inputs and {self.compared_pairs} format pairs compared)"
            )
        if self.improvements:
            out.append(f"{len(self.improvements)} improvement(s); `make baseline` locks them in:")
            out += [f"  + {m}" for m in self.improvements[:20]]
            if len(self.improvements) > 20:
                out.append(f"  + ... {len(self.improvements) - 20} more")
        out += [f"note: {n}" for n in self.notes]
        return "\n".join(out)


def compare(base: Snapshot, rows: Sequence[FidelityRow]) -> Audit:
    """Every regression of ``rows`` against ``base`` on what both covered (module docstring)."""
    full = Snapshot.from_rows(rows)
    common = {k for k, i in base.inputs.items() if k in full.inputs and full.inputs[k].sha == i.sha}
    new = Snapshot.from_rows(rows, only=common)
    a = Audit(compared_inputs=len(common))
    everything = common == set(base.inputs)

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
                    ("round trip", f"{key} ({n.detail}): {what} was lossless, now {now}: {n.message}")
                )
            elif was not in ("lossless", "-") and now == "lossless":
                a.improvements.append(f"{key} ({n.detail}): {what} was {was}, now lossless")

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

    only_base = len(base.inputs.keys() - full.inputs.keys())
    only_new = len(full.inputs.keys() - base.inputs.keys())
    changed = sum(
        1 for k in base.inputs.keys() & full.inputs.keys() if full.inputs[k].sha != base.inputs[k].sha
    )
    if only_base:
        a.notes.append(f"{only_base} baseline inputs were not in this run (not compared)")
    if only_new:
        a.notes.append(f"{only_new} inputs of this run are not in the baseline (not compared)")
    if changed:
        a.notes.append(f"{changed} inputs changed since the baseline (not compared)")
    new_pairs = len(full.pairs.keys() - base.pairs.keys())
    if new_pairs:
        a.notes.append(f"{new_pairs} format pairs are not in the baseline (not compared)")
    return a


# -- command ------------------------------------------------------------------------------------------


def load_run(report: Path) -> tuple[list[FidelityRow], list[str]]:
    """The rows beside ``report`` (a report.json or its folder) and the roots it names."""
    folder = report if report.is_dir() else report.parent
    if not folder.is_dir():
        raise FileNotFoundError(f"{report}: no such report")
    rows = list(read_rows(folder))
    if not rows:
        raise FileNotFoundError(f"{folder}: no rows-*.jsonl beside the report (run `bunzai fidelity` first)")
    roots: list[str] = []
    rj = folder / "report.json" if report.is_dir() else report
    if rj.is_file():
        meta: dict[str, Any] = orjson.loads(rj.read_bytes()).get("meta", {})
        roots = [str(x) for x in meta.get("roots", [])]
    return rows, roots


def run(args: argparse.Namespace) -> int:
    report, baseline = Path(args.report), Path(args.baseline)
    try:
        rows, roots = load_run(report)
    except (FileNotFoundError, orjson.JSONDecodeError) as exc:
        print(f"bunzai audit: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.write_baseline:
        snap = Snapshot.from_rows(rows, roots=roots)
        if baseline.is_file():
            try:
                old = Snapshot.from_text(baseline.read_text(encoding="utf-8"), where=str(baseline))
                dropped = sorted(old.inputs.keys() - snap.inputs.keys())
                if dropped:
                    print(
                        f"bunzai audit: warning: {len(dropped)} inputs of the old baseline are not in this run "
                        f"and leave the baseline (e.g. {dropped[0]}); run with the corpus to keep them",
                        file=sys.stderr,
                    )
            except BaselineError:
                pass
        baseline.parent.mkdir(parents=True, exist_ok=True)
        baseline.write_text(snap.to_text(), encoding="utf-8")
        print(
            f"bunzai audit: wrote {baseline}: {len(snap.inputs)} inputs, {len(snap.pairs)} pairs, "
            f"{len(snap.unexpected)} unexpected paths",
            file=sys.stderr,
        )
        return EXIT_OK
    if not baseline.is_file():
        print(f"bunzai audit: {baseline}: no baseline (record one with --write-baseline)", file=sys.stderr)
        return EXIT_USAGE
    try:
        base = Snapshot.from_text(baseline.read_text(encoding="utf-8"), where=str(baseline))
    except BaselineError as exc:
        print(f"bunzai audit: {exc}", file=sys.stderr)
        return EXIT_USAGE
    result = compare(base, rows)
    print(result.render(str(baseline)), file=sys.stdout if result.ok else sys.stderr)
    return EXIT_OK if result.ok else EXIT_REGRESSION


def configure(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument(
        "--report", required=True, metavar="NEW", help="report.json of the run (rows-*.jsonl beside it)"
    )
    p.add_argument(
        "--baseline", required=True, metavar="OLD", help="the committed baseline (audit/baseline.tsv)"
    )
    p.add_argument(
        "--write-baseline", action="store_true", help="record NEW as the baseline instead of comparing"
    )
    p.set_defaults(fn=run)
    return p


HELP = "compare a fidelity report with a baseline; exit 1 on any regression"
DESCRIPTION = (
    "Fails (exit 1, with a readable list) when the run loses what the baseline kept: a file that decoded "
    "is rejected, a same-format round trip breaks, a lossless format pair turns lossy, or a new "
    "unexpected lost path appears. Only inputs both runs read with the same bytes are compared."
)


def main(argv: Sequence[str] | None = None) -> int:
    p = configure(argparse.ArgumentParser(prog="python -m jobs.audit", description=DESCRIPTION))
    return int(run(p.parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
