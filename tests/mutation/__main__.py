"""Run mutmut over each target in its own folder and record the results (see ``__init__``)."""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .targets import EXPLAINED, TARGETS, Explained, Target

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "out" / "mutate"
DOC = ROOT / "docs" / "mutation.md"
#: what each mutants/ copy holds besides the three packages (tests read samples/, audit/, docs/)
ALSO_COPY = ("tests", "samples", "audit", "docs", "pyproject.toml", "README.md", "CHANGELOG.md")
PACKAGES = ("bunzai_codecs", "pipeline", "jobs")
#: the doc's measured part sits between these lines; the rest is written by hand
BEGIN, END = "<!-- make mutate: begin -->", "<!-- make mutate: end -->"
#: mutmut's exit codes (mutmut.stats.status_by_exit_code) as the statuses this record uses
STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped"}
STATUS |= {c: "timeout" for c in (36, -24, 24, 152, 255)} | {-11: "crashed", -9: "crashed"}


@dataclass
class Survivor:
    name: str
    function: str
    status: str
    before: str
    after: str
    reason: str | None = None


@dataclass
class Result:
    target: Target
    counts: Counter[str] = field(default_factory=Counter)
    survivors: list[Survivor] = field(default_factory=list)
    seconds: float = 0.0


def _toml_list(items: Any) -> str:
    return json.dumps(list(items))


def _config(t: Target) -> str:
    """The folder's pyproject.toml: mutmut's settings for ``t`` and the project's pytest settings."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    pytest_opts = project["tool"]["pytest"]["ini_options"]
    lines = [
        "[tool.mutmut]",
        f"source_paths = {_toml_list(PACKAGES)}",
        f"only_mutate = {_toml_list([t.module])}",
        f"pytest_add_cli_args_test_selection = {_toml_list(t.tests)}",
        f"also_copy = {_toml_list(ALSO_COPY)}",
        # the tests' own addopts (-q -ra) stay; the slow pipeline runs never do
        f"pytest_add_cli_args = {_toml_list(['-m', 'not slow', '-p', 'no:cacheprovider'])}",
        # a mutant that loops (a bound undone) is stopped at 3x the CPU its tests took (mutmut's
        # default, 30x, spends minutes on each); the estimate is wall time, at least the CPU time
        "timeout_multiplier = 1.5",
        "",
        "[tool.pytest.ini_options]",
    ]
    lines += [f"{k} = {json.dumps(v)}" for k, v in pytest_opts.items()]
    return "\n".join(lines) + "\n"


def _prepare(t: Target) -> Path:
    """``out/mutate/<slug>/``: links to the project, its own config, no mutants/ left from before."""
    folder = OUT / t.slug
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for name in (*PACKAGES, *ALSO_COPY):
        if name != "pyproject.toml" and (ROOT / name).exists():
            (folder / name).symlink_to(ROOT / name)
    shared = ROOT.parent / "shared"
    if shared.is_dir():  # the corpus tests find ../shared from the copy's root (folder/mutants)
        (folder / "shared").symlink_to(shared)
    (folder / "pyproject.toml").write_text(_config(t), encoding="utf-8")
    return folder


def _function(name: str, module: str) -> str:
    """``bunzai_codecs.core.inflate.x_bounded__mutmut_3`` -> ``bounded``; a method -> ``Class.method``."""
    dotted = module.removesuffix(".py").replace("/", ".") + "."
    stem = name.removeprefix(dotted).rsplit("__mutmut_", 1)[0]
    if stem.startswith("xǁ"):
        return ".".join(stem[2:].split("ǁ"))
    return stem.removeprefix("x_")


def _diff(folder: Path, name: str) -> tuple[str, str]:
    """The lines a mutant removed and added (each run joined with `` / ``)."""
    out = subprocess.run(
        [sys.executable, "-m", "mutmut", "show", name],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    minus = [ln[1:].strip() for ln in out.splitlines() if ln.startswith("-") and not ln.startswith("---")]
    plus = [ln[1:].strip() for ln in out.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    return " / ".join(minus), " / ".join(plus)


def explain(module: str, s: Survivor, table: tuple[Explained, ...] = EXPLAINED) -> str | None:
    for e in table:
        if not (fnmatch.fnmatchcase(module, e.module) and fnmatch.fnmatchcase(s.function, e.function)):
            continue
        if re.search(e.before, s.before) and re.search(e.after, s.after):
            return e.reason
    return None


def run_target(t: Target, jobs: int) -> Result:
    folder = _prepare(t)
    started = time.monotonic()
    log = folder / "mutmut.log"
    with log.open("w") as f:
        args = [sys.executable, "-m", "mutmut", "run", "--max-children", str(jobs)]
        mutated = t.module.removesuffix(".py").replace("/", ".")
        args += [f"{mutated}.x{'ǁ' if '.' in p else '_'}{p.replace('.', 'ǁ')}__mutmut_*" for p in t.functions]
        code = subprocess.run(args, cwd=folder, stdout=f, stderr=subprocess.STDOUT, check=False).returncode
    result = Result(t, seconds=time.monotonic() - started)
    meta = folder / "mutants" / (t.module + ".meta")
    if code != 0 or not meta.is_file():
        tail = "".join(log.read_text(errors="replace").splitlines(keepends=True)[-15:])
        raise SystemExit(f"mutmut failed on {t.module} (exit {code}); {log}:\n{tail}")
    codes = json.loads(meta.read_text())["exit_code_by_key"]
    for name, code in sorted(codes.items()):
        fn = _function(name, t.module)
        if t.functions and not any(fnmatch.fnmatchcase(fn, p) for p in t.functions):
            continue
        status = STATUS.get(code, "suspicious") if code is not None else "not checked"
        result.counts[status] += 1
        if status not in ("killed", "timeout"):
            before, after = _diff(folder, name)
            s = Survivor(name, fn, status, before, after)
            s.reason = explain(t.module, s)
            result.survivors.append(s)
    return result


def _cell(text: str) -> str:
    return "`" + text.replace("`", "'").replace("|", "\\|")[:140] + "`" if text else "(nothing)"


def render(results: list[Result], started: str, jobs: int) -> str:
    total = sum((r.counts for r in results), Counter())
    lines = [
        BEGIN,
        "",
        f"Last run: {started}, `make mutate` (mutmut, {jobs} worker processes), "
        f"{sum(r.seconds for r in results) / 60:.1f} minutes.",
        "",
        "| module | mutants | killed | timeout | survived | no tests | minutes |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        c = r.counts
        lines.append(
            f"| `{r.target.module}` | {sum(c.values())} | {c['killed']} | {c['timeout']} | {c['survived']} "
            f"| {c['no tests']} | {r.seconds / 60:.1f} |"
        )
    lines.append(
        f"| **total** | {sum(total.values())} | {total['killed']} | {total['timeout']} | {total['survived']} "
        f"| {total['no tests']} | {sum(r.seconds for r in results) / 60:.1f} |"
    )
    lines += ["", "Every mutant no test caught, and why that is harmless:", ""]
    for r in results:
        if not r.survivors:
            continue
        lines += [
            f"### `{r.target.module}`",
            "",
            "| function | removed | added | status | why |",
            "|---|---|---|---|---|",
        ]
        for s in r.survivors:
            why = s.reason or "**NOT EXPLAINED**"
            lines.append(f"| `{s.function}` | {_cell(s.before)} | {_cell(s.after)} | {s.status} | {why} |")
        lines.append("")
    lines.append(END)
    return "\n".join(lines)


def write_doc(block: str) -> None:
    text = DOC.read_text("utf-8") if DOC.is_file() else f"# Mutation testing\n\n{BEGIN}\n{END}\n"
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.DOTALL)
    if not pattern.search(text):
        text = text.rstrip("\n") + f"\n\n{BEGIN}\n{END}\n"
    DOC.write_text(pattern.sub(lambda _: block, text), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.mutation", description=__doc__)
    ap.add_argument(
        "slugs", nargs="*", help=f"targets to run (default: all): {', '.join(t.slug for t in TARGETS)}"
    )
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="mutmut worker processes")
    ap.add_argument("--no-doc", action="store_true", help="do not rewrite docs/mutation.md")
    a = ap.parse_args(argv)
    unknown = set(a.slugs) - {t.slug for t in TARGETS}
    if unknown:
        ap.error(f"unknown target(s): {', '.join(sorted(unknown))}")
    by_slug = {t.slug: t for t in TARGETS}
    chosen = [by_slug[s] for s in dict.fromkeys(a.slugs)] if a.slugs else list(TARGETS)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    results = []
    for t in chosen:
        print(f"== {t.slug}: {t.module} ({len(t.tests)} test paths)", flush=True)
        r = run_target(t, a.jobs)
        c = r.counts
        print(
            f"   {sum(c.values())} mutants: {c['killed']} killed, {c['timeout']} timeout, "
            f"{c['survived']} survived, {c['no tests']} no tests ({r.seconds / 60:.1f} min)",
            flush=True,
        )
        for s in r.survivors:
            mark = "explained" if s.reason else "NOT EXPLAINED"
            print(f"   {s.status}: {s.function}: {s.before!r} -> {s.after!r} [{mark}] {s.name}", flush=True)
        results.append(r)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "results.json").write_text(
        json.dumps(
            [
                {
                    "module": r.target.module,
                    "counts": dict(r.counts),
                    "seconds": round(r.seconds, 1),
                    "survivors": [s.__dict__ for s in r.survivors],
                }
                for r in results
            ],
            indent=2,
            ensure_ascii=False,
        )
        + "\n"
    )
    if not a.no_doc and len(chosen) == len(TARGETS):
        write_doc(render(results, started, a.jobs))
    unexplained = [s for r in results for s in r.survivors if s.reason is None]
    if unexplained:
        print(
            f"{len(unexplained)} survivor(s) not explained: pin each with a test, or explain it in targets.py"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
