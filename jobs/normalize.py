"""``bunzai normalize`` / ``python -m jobs.normalize``: run the normalize pipeline and print its summary.

With no arguments it reads the bundled ``samples/`` folder, writes ``./out/`` on the DirectRunner
and prints what it found and where everything is. See README.md ("The normalize job").

On Dataflow (``--runner=DataflowRunner``, see deploy/README.md) it submits the job, prints the job's
console URL and, like locally, waits for it and prints the summary; inside a Flex Template
launcher, or with ``--dry_run`` / ``--template_location``, it returns once the job is handed over.

A run changes the output folder only when it is complete and balanced (pipeline/dataset/commit.py); every
failure is one line on stderr (``--debug``: with its traceback) and an exit code of
``bunzai_codecs.exitcodes.Exit`` (``EXIT_CODES`` says what each means for this job).

With ``--audit-against PREVIOUS_OUTPUT`` the run, once written, is audited against a previous run
(``bunzai_codecs/audit.py``: the same gate as ``bunzai audit``) and the audit's result is printed after the
summary.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.runners.runner import PipelineResult

from bunzai_codecs.core.stop import interrupted_exit
from bunzai_codecs.exitcodes import Exit
from bunzai_codecs.progress import Progress
from jobs.runner import (
    OutputProblem,
    check_output,
    clean_up,
    failure_line,
    new_pipeline,
    reason,
    refused_manifest,
    run_and_wait,
    run_job,
    submitted,
    written_manifest,
)
from pipeline.dataset.commit import EMPTY, LISTING
from pipeline.dataset.manifest import MANIFEST, now
from pipeline.normalize.graph import Built, build
from pipeline.normalize.summary import summary
from pipeline.runtime.errors import UsageError
from pipeline.runtime.options import (
    NormalizeConfig,
    help_text,
    is_remote,
    parse,
    runner_name,
    submits_only,
)
from pipeline.runtime.storage import Output, list_files, staged_path

PROG = "bunzai normalize"


class InputProblem(Exception):
    """An input does not exist, matched nothing or cannot be listed: ``Exit.INPUT``."""


def prepare(cfg: NormalizeConfig, options: PipelineOptions) -> tuple[beam.Pipeline, Built]:
    p = new_pipeline(options)
    return p, build(p, cfg, runner=runner_name(options), started=now())


def run_pipeline(
    cfg: NormalizeConfig, options: PipelineOptions, *, wait: bool = True
) -> tuple[Built, PipelineResult]:
    """Build and run the graph, waiting for it to finish unless ``wait`` is false."""
    p, built = prepare(cfg, options)
    result = p.run()
    if wait:
        result.wait_until_finish()
    return built, result


def check_audit(cfg: NormalizeConfig, handover: bool) -> None:
    """``--audit-against``: the previous run must be there before this one starts (a typo found
    after a night's run helps no one), and the audit needs the run to finish here."""
    if cfg.audit_against is None:
        return
    from bunzai_codecs import audit

    if handover:
        raise UsageError("--audit-against audits the finished run: not with a job that is only submitted")
    try:
        audit.open_baseline(cfg.audit_against, opener=cfg.storage.fs)
    except (audit.RunError, audit.BaselineError, OSError) as exc:
        raise UsageError(f"--audit-against: {exc}") from None


def audit_run(cfg: NormalizeConfig, built: Built) -> int:
    """The audit of the written run against ``--audit-against``: prints it, returns its exit code."""
    from bunzai_codecs import audit

    assert cfg.audit_against is not None
    tolerance = audit.KEPT_TOLERANCE if cfg.audit_tolerance is None else cfg.audit_tolerance
    report = built.output.display("fidelity")
    return audit.gate(report, cfg.audit_against, tolerance=tolerance, opener=cfg.storage.fs)


def notes(cfg: NormalizeConfig) -> list[str]:
    """Deprecation notes for format ids the user named in ``--export`` (none under ``--quiet``):
    not for ``--export all``, nor for what a ``--since`` run exported, which nobody typed."""
    return [] if cfg.quiet else list(cfg.notes)


# -- before the run: what can be checked here, fast -----------------------------------------------


def check_inputs(cfg: NormalizeConfig) -> None:
    """Each input exists and names at least one file (only the first is looked for), unless
    ``--allow-empty``; an input that cannot be listed is refused either way. The pipeline checks
    the whole listing again (the run's verdict): this only answers a typo at once."""
    for url in dict.fromkeys(cfg.inputs):
        try:
            fs, path = cfg.storage.fs(url)
            first = next(iter(list_files(fs, path)), None)
        except FileNotFoundError:
            if not cfg.allow_empty:
                raise InputProblem(f"{url} does not exist (--allow-empty runs anyway)") from None
            continue
        except Exception as exc:
            raise InputProblem(f"cannot list {url}: {reason(exc)}") from exc
        if first is None and not cfg.allow_empty:
            raise InputProblem(f"{url} matched no file (--allow-empty runs anyway)")


# -- after the run ----------------------------------------------------------------------------------


def _err(message: str) -> None:
    print(f"{PROG}: error: {message}", file=sys.stderr)


@dataclass
class _Run:
    cfg: NormalizeConfig
    options: PipelineOptions
    existed: bool | None = None
    #: whether the output held a manifest (a complete run) before this run
    had_manifest: bool | None = None
    #: with ``--bigquery-table``: the output's manifest before this run (None: none), to tell a
    #: load that failed after this run's commit from a run that failed
    manifest_before: bytes | None = None


def _manifest_bytes(output: Output) -> bytes | None:
    try:
        fs, root = output.open()
        data: bytes = fs.cat_file(f"{root}/{MANIFEST}")
        return data
    except Exception:
        return None


def _has_manifest(output: Output) -> bool | None:
    try:
        fs, root = output.open()
        return bool(fs.exists(f"{root}/{MANIFEST}"))
    except Exception:
        return None


def _failed(run: _Run, built: Built, exc: BaseException) -> int:
    """A run that did not commit: why, in one line, and the exit code."""
    refused = refused_manifest(built.output, built.staging)
    if refused is not None:
        verdict = refused.get("commit") or {}
        if verdict.get("reason") in (LISTING, EMPTY):
            clean_up(built.output, built.staging, run.existed)
            _err(f"{verdict.get('message')}; nothing was written: {built.output.url} is as it was")
            return Exit.INPUT
        staged = Output(
            built.output.display(staged_path(built.staging, "")).rstrip("/"), built.output.storage
        )
        sys.stdout.write(summary(refused, staged))
        _err(
            f"{verdict.get('message', 'the manifest does not balance')}; nothing was committed: "
            f"{built.output.url} is as it was, and this run's results are in {staged.url}/"
        )
        return Exit.UNBALANCED
    clean_up(built.output, built.staging, run.existed)
    if run.cfg.bigquery_table:  # the load runs after the commit: was this run committed?
        now_there = _manifest_bytes(built.output)
        if now_there is not None and now_there != run.manifest_before:
            _err(
                f"the run is committed ({built.output.display(MANIFEST)}), but loading its entity index "
                f"into BigQuery {run.cfg.bigquery_table} failed: {failure_line(exc)}"
            )
            return Exit.FAILED
    if run.had_manifest and _has_manifest(built.output) is False:
        # the window pipeline/dataset/commit.py leaves: it failed while moving its files into place
        _err(
            f"the run failed while committing: {failure_line(exc)}; {built.output.url} has no "
            "manifest.json now (incomplete): run again into it to rewrite it whole"
        )
        return Exit.FAILED
    _err(f"the run failed: {failure_line(exc)}; nothing was committed: {built.output.url} is as it was")
    return Exit.FAILED


def _interrupted(run: _Run, built: Built, stop: KeyboardInterrupt) -> int:
    """Ctrl-C or SIGTERM during the run: its staged files are removed and one line says where the
    output stands (as it was, unless the stop came while the commit moved files into place)."""
    clean_up(built.output, built.staging, run.existed)
    if run.had_manifest and _has_manifest(built.output) is False:
        _err(
            f"interrupted while committing; {built.output.url} has no manifest.json now (incomplete): "
            "run again into it to rewrite it whole"
        )
    else:
        _err(f"interrupted; nothing was committed: {built.output.url} is as it was")
    return interrupted_exit(stop)


def _execute(run: _Run) -> int:
    cfg, options = run.cfg, run.options
    handover = submits_only(options)
    check_audit(cfg, handover)
    remote = is_remote(options)
    if not remote:
        try:
            run.existed = check_output(Output(cfg.output, cfg.storage))
            run.had_manifest = _has_manifest(Output(cfg.output, cfg.storage))
            check_inputs(cfg)
        except InputProblem as exc:
            _err(str(exc))
            return Exit.INPUT
        except OutputProblem as exc:
            _err(str(exc))
            return Exit.FAILED
    if cfg.bigquery_table:
        run.manifest_before = _manifest_bytes(Output(cfg.output, cfg.storage))
    p, built = prepare(cfg, options)
    for note in notes(cfg):
        print(f"{PROG}: note: {note}", file=sys.stderr)
    display = None if cfg.quiet or remote else Progress(PROG, unit="inputs")
    try:

        def announce(result: PipelineResult, url: str | None) -> str:
            return submitted(result, built.output.url, url, prog=PROG)

        if not run_and_wait(p, options, display, prog=PROG, announce=announce):
            return Exit.OK
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (bunzai_codecs.core.stop)
        return _interrupted(run, built, exc)
    except Exception as exc:
        if cfg.debug:
            traceback.print_exc()
        return _failed(run, built, exc)
    manifest = written_manifest(built.output)
    sys.stdout.write(summary(manifest, built.output))
    sys.stdout.flush()
    code: int = Exit.OK if manifest["balance"]["ok"] else Exit.UNBALANCED
    if cfg.audit_against is not None:
        code = code or audit_run(cfg, built)
    return code


def run(argv: Sequence[str] | None = None) -> int:
    return run_job(argv, prog=PROG, help_text=help_text, start=lambda args: _execute(_Run(*parse(args))))


def main() -> None:
    raise SystemExit(run())


if __name__ == "__main__":
    main()
