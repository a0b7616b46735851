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
    #: when the run started (its folder's config was written)
    run_at: str = ""


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
        # a mutant that loops (a bound undone) is stopped once its tests take 2x their time plus
        # 10 s of wall clock (mutmut's default, 15x + 1 s, spends minutes on each bomb test; a
        # tighter bound stops sound runs on a loaded machine, and a stopped mutant counts as caught)
        "timeout_multiplier = 2.0",
        "timeout_constant = 10.0",
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
        if name not in ("pyproject.toml", "tests") and (ROOT / name).exists():
            (folder / name).symlink_to(ROOT / name)
    # the tests as a package in the copy: tests/ has no __init__.py, so pytest puts tests/ itself on
    # sys.path and ``import pipeline`` finds tests/pipeline first (the real modules are then found
    # through the editable install, in the tree, not in mutmut's copy: no mutant would be seen)
    # (only where it matters: a few format tests import the top conftest as a bare ``conftest``)
    if t.module.startswith("pipeline/"):
        shutil.copytree(ROOT / "tests", folder / "tests", ignore=shutil.ignore_patterns("__pycache__"))
        (folder / "tests" / "__init__.py").touch()
    else:
        (folder / "tests").symlink_to(ROOT / "tests")
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
    if code != 0:
        tail = "".join(log.read_text(errors="replace").splitlines(keepends=True)[-15:])
        raise SystemExit(f"mutmut failed on {t.module} (exit {code}); {log}:\n{tail}")
    return collect(t, time.monotonic() - started)


def collect(t: Target, seconds: float | None = None) -> Result:
    """The results of ``t``'s folder as its last mutmut run left them; ``seconds`` unknown: from the
    files' times (the config is written first, the log last)."""
    folder = OUT / t.slug
    meta = folder / "mutants" / (t.module + ".meta")
    if not meta.is_file():
        raise SystemExit(f"no mutmut results for {t.module} in {folder}: run it first")
    if seconds is None:
        seconds = (folder / "mutmut.log").stat().st_mtime - (folder / "pyproject.toml").stat().st_mtime
    begun = time.gmtime((folder / "pyproject.toml").stat().st_mtime)
    result = Result(t, seconds=seconds, run_at=time.strftime("%Y-%m-%d %H:%M UTC", begun))
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


def render(records: dict[str, dict[str, Any]], jobs: int) -> str:
    """The doc's measured part: the last run of each target (``records``: ``STORE``)."""
    order = [t.slug for t in TARGETS if t.slug in records]
    total: Counter[str] = Counter()
    for slug in order:
        total.update(records[slug]["counts"])
    minutes = sum(records[s]["seconds"] for s in order) / 60
    lines = [
        BEGIN,
        "",
        f"`make mutate` (mutmut, {jobs} worker processes on this 2-core machine, shared with other jobs): "
        f"{minutes:.1f} minutes of runs over {len(order)} targets.",
        "",
        "| module | last run | mutants | killed | timeout | survived | no tests | minutes |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for slug in order:
        r, c = records[slug], Counter(records[slug]["counts"])
        lines.append(
            f"| `{r['module']}` | {r['run_at']} | {sum(c.values())} | {c['killed']} | {c['timeout']} "
            f"| {c['survived']} | {c['no tests']} | {r['seconds'] / 60:.1f} |"
        )
    lines.append(
        f"| **total** | | {sum(total.values())} | {total['killed']} | {total['timeout']} | {total['survived']} "
        f"| {total['no tests']} | {minutes:.1f} |"
    )
    missing = [t.module for t in TARGETS if t.slug not in records]
    if missing:
        lines += ["", "Not run yet: " + ", ".join(f"`{m}`" for m in missing) + "."]
    lines += ["", "Every mutant no test caught, and why that is harmless:", ""]
    for slug in order:
        r = records[slug]
        if not r["survivors"]:
            continue
        lines += [
            f"### `{r['module']}`",
            "",
            "| function | removed | added | status | why |",
            "|---|---|---|---|---|",
        ]
        for s in r["survivors"]:
            why = s["reason"] or "**NOT EXPLAINED**"
            lines.append(
                f"| `{s['function']}` | {_cell(s['before'])} | {_cell(s['after'])} | {s['status']} | {why} |"
            )
        lines.append("")
    lines.append(END)
    return "\n".join(lines)


#: each target's last run, committed beside the list: the doc is rendered from it, and a run of some
#: targets (or a fresh clone's first run) replaces their records and keeps the others'
STORE = Path(__file__).resolve().parent / "results.json"


def _records() -> dict[str, dict[str, Any]]:
    """``STORE``: each target's last run, for the targets the list still names."""
    records = json.loads(STORE.read_text()) if STORE.is_file() else {}
    if not isinstance(records, dict):  # an older layout: nothing to keep
        return {}
    known = {t.slug: t.module for t in TARGETS}
    return {k: v for k, v in records.items() if known.get(k) == v.get("module")}


def _record(r: Result) -> None:
    records = _records()
    records[r.target.slug] = {
        "module": r.target.module,
        "run_at": r.run_at,
        "counts": dict(r.counts),
        "seconds": round(r.seconds, 1),
        "survivors": [s.__dict__ for s in r.survivors],
    }
    STORE.write_text(json.dumps(records, indent=2, ensure_ascii=False) + "\n")


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
    ap.add_argument(
        "--collect",
        action="store_true",
        help="record the targets' last runs (out/mutate/) without running mutmut",
    )
    a = ap.parse_args(argv)
    unknown = set(a.slugs) - {t.slug for t in TARGETS}
    if unknown:
        ap.error(f"unknown target(s): {', '.join(sorted(unknown))}")
    by_slug = {t.slug: t for t in TARGETS}
    chosen = [by_slug[s] for s in dict.fromkeys(a.slugs)] if a.slugs else list(TARGETS)
    results = []
    for t in chosen:
        print(f"== {t.slug}: {t.module} ({len(t.tests)} test paths)", flush=True)
        r = collect(t) if a.collect else run_target(t, a.jobs)
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
        _record(r)  # after each target: a run cut short keeps what it finished
    if not a.no_doc:
        write_doc(render(_records(), a.jobs))
    unexplained = [s for r in results for s in r.survivors if s.reason is None]
    if unexplained:
        print(
            f"{len(unexplained)} survivor(s) not explained: pin each with a test, or explain it in targets.py"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
