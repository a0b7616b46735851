"""``bunzai normalize`` / ``python -m jobs.normalize``: run the normalize pipeline and print its summary.

With no arguments it reads the bundled ``samples/`` folder, writes ``./out/`` on the DirectRunner
and prints what it found and where everything is. See README.md ("The normalize job").

On Dataflow (``--runner=DataflowRunner``, see deploy/README.md) it submits the job and, like
locally, waits for it and prints the summary; inside a Flex Template launcher, or with
``--dry_run`` / ``--template_location``, it returns once the job is handed over.

With ``--audit-against PREVIOUS_OUTPUT`` the run, once written, is audited against a previous run
(``jobs/audit.py``: the same gate as ``bunzai audit``) and the audit's result is printed after the
summary.

Exit codes: 0 done (rejects are results, not failures); 1 the manifest does not balance (an input
is unaccounted for: a bug to report), or the audit found a regression; 2 a usage error (the
previous run given to ``--audit-against`` is checked before the run starts).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import apache_beam as beam
import orjson
from apache_beam.runners.runner import PipelineResult

from pipeline.graph import Built, build
from pipeline.memory import tune_malloc
from pipeline.options import NormalizeConfig, UsageError, help_text, parse, runner_name, submits_only
from pipeline.report import MANIFEST, now, summary

EXIT_OK, EXIT_UNBALANCED, EXIT_USAGE = 0, 1, 2


def run_pipeline(
    cfg: NormalizeConfig, options: beam.options.pipeline_options.PipelineOptions, *, wait: bool = True
) -> tuple[Built, PipelineResult]:
    """Build and run the graph, waiting for it to finish unless ``wait`` is false."""
    p = beam.Pipeline(options=options)
    built = build(p, cfg, runner=runner_name(options), started=now())
    result = p.run()
    if wait:
        result.wait_until_finish()
    return built, result


def submitted(result: PipelineResult, built: Built) -> str:
    """What a run that only hands the job over prints."""
    job_id = getattr(result, "job_id", None)
    ident = job_id() if callable(job_id) and getattr(result, "has_job", False) else None
    what = f"submitted Dataflow job {ident}" if ident else "translated the job (not submitted here)"
    return f"bunzai normalize: {what}; results go to {built.output.url} (manifest.json appears last)\n"


def read_manifest(built: Built) -> dict[str, Any]:
    fs, root = built.output.open()
    manifest: dict[str, Any] = orjson.loads(fs.cat_file(f"{root}/{MANIFEST}"))
    return manifest


def check_audit(cfg: NormalizeConfig, handover: bool) -> None:
    """``--audit-against``: the previous run must be there before this one starts (a typo found
    after a night's run helps no one), and the audit needs the run to finish here."""
    if cfg.audit_against is None:
        return
    from jobs import audit

    if handover:
        raise UsageError("--audit-against audits the finished run: not with a job that is only submitted")
    try:
        audit.open_baseline(cfg.audit_against, opener=cfg.storage.fs)
    except (audit.RunError, audit.BaselineError, OSError) as exc:
        raise UsageError(f"--audit-against: {exc}") from None


def audit_run(cfg: NormalizeConfig, built: Built) -> int:
    """The audit of the written run against ``--audit-against``: prints it, returns its exit code."""
    from jobs import audit

    assert cfg.audit_against is not None
    tolerance = audit.KEPT_TOLERANCE if cfg.audit_tolerance is None else cfg.audit_tolerance
    report = built.output.display("fidelity")
    return audit.gate(report, cfg.audit_against, tolerance=tolerance, opener=cfg.storage.fs)


def notes(cfg: NormalizeConfig, built: Built) -> list[str]:
    """Deprecation notes for format ids this run's ``--export`` or the ``--since`` manifest named."""
    previous = built.previous.notes if built.previous is not None else ()
    return list(dict.fromkeys((*cfg.notes, *previous)))


def run(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if "-h" in args or "--help" in args:
        sys.stdout.write(help_text())
        return EXIT_OK
    tune_malloc()  # before the runner starts its workers: they inherit the settings
    try:
        cfg, options = parse(args)
        handover = submits_only(options)
        check_audit(cfg, handover)
        built, result = run_pipeline(cfg, options, wait=not handover)
    except UsageError as exc:
        print(f"bunzai normalize: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for note in notes(cfg, built):
        print(f"bunzai normalize: note: {note}", file=sys.stderr)
    if handover:
        sys.stdout.write(submitted(result, built))
        return EXIT_OK
    manifest = read_manifest(built)
    sys.stdout.write(summary(manifest, built.output))
    sys.stdout.flush()
    code = EXIT_OK if manifest["balance"]["ok"] else EXIT_UNBALANCED
    if cfg.audit_against is not None:
        audited = audit_run(cfg, built)
        code = code or audited
    return code


def main() -> None:
    raise SystemExit(run())


if __name__ == "__main__":
    main()
