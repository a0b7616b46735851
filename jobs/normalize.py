"""``bunzai normalize`` / ``python -m jobs.normalize``: run the normalize pipeline and print its summary.

With no arguments it reads the bundled ``samples/`` folder, writes ``./out/`` on the DirectRunner
and prints what it found and where everything is. See README.md ("The normalize job").

On Dataflow (``--runner=DataflowRunner``, see deploy/README.md) it submits the job, prints the job's
console URL and, like locally, waits for it and prints the summary; inside a Flex Template
launcher, or with ``--dry_run`` / ``--template_location``, it returns once the job is handed over.

A run changes the output folder only when it is complete and balanced (pipeline/dataset/commit.py); every
failure is one line on stderr (``--debug``: with its traceback) and one of these exit codes:

0 done (rejects are results, not failures); 1 the manifest does not balance (an input is
unaccounted for: a bug to report; nothing committed), or ``--audit-against`` found a regression
(the run is committed); 2 a usage error (the previous run given to ``--audit-against`` is checked
before the run starts); 3 an input does not exist, matched no file (without ``--allow-empty``) or
could not be listed (nothing written); 4 the run failed (the output cannot be written, a store
error, a worker crashed; nothing committed); 130 interrupted (Ctrl-C), 143 terminated (SIGTERM); either leaves the output as it was.

With ``--audit-against PREVIOUS_OUTPUT`` the run, once written, is audited against a previous run
(``jobs/audit.py``: the same gate as ``bunzai audit``) and the audit's result is printed after the
summary.
"""

from __future__ import annotations

import contextlib
import logging
import re
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import apache_beam as beam
import orjson
from apache_beam.options.pipeline_options import GoogleCloudOptions, PipelineOptions
from apache_beam.runners.runner import PipelineResult

from bunzai_codecs.core.stop import interrupt_of, interrupted_exit
from bunzai_codecs.progress import Progress
from pipeline.dataset.commit import EMPTY, LISTING, STAGING, staging_parent
from pipeline.dataset.manifest import MANIFEST, now
from pipeline.normalize.graph import Built, build
from pipeline.normalize.summary import summary
from pipeline.runtime import fixed_cost
from pipeline.runtime.errors import UsageError
from pipeline.runtime.options import (
    NormalizeConfig,
    help_text,
    is_remote,
    parse,
    runner_name,
    submits_only,
)
from pipeline.runtime.progress import watching
from pipeline.runtime.storage import Output, list_files, staged_path, write_bytes

EXIT_OK, EXIT_UNBALANCED, EXIT_USAGE, EXIT_INPUT, EXIT_FAILED, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130
PROG = "bunzai normalize"


class InputProblem(Exception):
    """An input does not exist, matched nothing or cannot be listed: exit 3."""


class OutputProblem(Exception):
    """The output folder cannot be written: exit 4."""


def prepare(cfg: NormalizeConfig, options: PipelineOptions) -> tuple[beam.Pipeline, Built]:
    fixed_cost.install()  # Beam's fixed cost per run (pipeline/runtime/fixed_cost.py): before the graph is built
    p = beam.Pipeline(options=options)
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


def _job_id(result: PipelineResult) -> str | None:
    job_id = getattr(result, "job_id", None)
    ident = job_id() if callable(job_id) and getattr(result, "has_job", False) else None
    return str(ident) if ident else None


def console_url(result: PipelineResult, options: PipelineOptions) -> str | None:
    """The Dataflow console page of the submitted job, if there is one."""
    ident = _job_id(result)
    gcp = options.view_as(GoogleCloudOptions)
    if not ident or not gcp.region or not gcp.project:
        return None
    return f"https://console.cloud.google.com/dataflow/jobs/{gcp.region}/{ident}?project={gcp.project}"


def submitted(result: PipelineResult, output: str, url: str | None = None, *, prog: str = PROG) -> str:
    """What a run that only hands the job over prints (``output``: where the results will be)."""
    ident = _job_id(result)
    what = f"submitted Dataflow job {ident}" if ident else "translated the job (not submitted here)"
    where = f" ({url})" if url else ""
    return f"{prog}: {what}{where}; results go to {output} (manifest.json appears last)\n"


def run_and_wait(
    p: beam.Pipeline,
    options: PipelineOptions,
    display: Progress | None,
    *,
    prog: str,
    announce: Callable[[PipelineResult, str | None], str],
    show: Callable[[Progress, dict[str, int]], None] | None = None,
) -> bool:
    """Run ``p`` with ``display`` watching its counters (closed however the run ends). A run that
    only hands the job over (``submits_only``) writes ``announce(result, console_url)`` to stdout and
    returns False; otherwise the console URL, if any, goes to stderr, the run is waited for and
    True is returned. Exceptions (a failed run, ``KeyboardInterrupt``) are the caller's: a Ctrl-C or
    SIGTERM that landed inside a step, which the runner wraps in its own error, is raised as itself."""
    with watching(display, show=show):
        try:
            result = p.run()
            url = console_url(result, options)
            if submits_only(options):
                sys.stdout.write(announce(result, url))
                return False
            if url:
                print(f"{prog}: Dataflow job {_job_id(result)}: {url}", file=sys.stderr)
            result.wait_until_finish()
            return True
        except Exception as exc:
            stop = interrupt_of(exc)
            if stop is not None:
                raise stop from None
            raise
        finally:
            if display is not None:
                display.close()


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


def refused_manifest(built: Built) -> dict[str, Any] | None:
    """The manifest a refused run wrote into its staging folder, if it got that far."""
    try:
        fs, root = built.output.open()
        data = fs.cat_file(f"{root}/{staged_path(built.staging, MANIFEST)}")
    except Exception:
        return None
    manifest: dict[str, Any] = orjson.loads(data)
    return manifest


# -- before the run: what can be checked here, fast -----------------------------------------------


def check_output(output: Output) -> bool:
    """The output folder can be written (a probe file in the staging folder, removed at once);
    returns whether it existed. ``OutputProblem`` otherwise."""
    try:
        fs, root = output.open()
        if fs.isfile(root):
            raise OutputProblem(f"--output {output.url} is a file, not a folder")
        existed = bool(fs.exists(root))
        probe = f"{root}/{STAGING}/probe"
        write_bytes(fs, probe, b"")
        fs.rm_file(probe)
    except OutputProblem:
        raise
    except Exception as exc:
        raise OutputProblem(f"cannot write to --output {output.url}: {_reason(exc)}") from exc
    remove_if_empty(output, STAGING)
    if not existed:
        remove_if_empty(output, "")
    return existed


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
            raise InputProblem(f"cannot list {url}: {_reason(exc)}") from exc
        if first is None and not cfg.allow_empty:
            raise InputProblem(f"{url} matched no file (--allow-empty runs anyway)")


# -- after the run ----------------------------------------------------------------------------------


def remove_if_empty(output: Output, rel: str) -> None:
    """Remove the folder ``rel`` of the output (``""``: the output itself) when it is empty."""
    with contextlib.suppress(Exception):
        fs, root = output.open()
        path = f"{root}/{rel}".rstrip("/") if rel else root
        if fs.isdir(path) and not fs.ls(path):
            fs.rmdir(path)


def clean_up(built: Built, existed: bool | None) -> None:
    """Remove this run's staging folder, and what it created to hold it."""
    with contextlib.suppress(Exception):
        fs, root = built.output.open()
        path = f"{root}/{built.staging}"
        if fs.exists(path):
            fs.rm(path, recursive=True)
    remove_if_empty(built.output, staging_parent(built.staging))
    if existed is False:
        remove_if_empty(built.output, "")


_ERROR_LINE = re.compile(
    r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Refused|Exceeded)\b(?::.*)?$"
)
_WHILE = re.compile(r"\s*\[while running '[^']*'\]")


def _reason(exc: BaseException) -> str:
    """``Type: message`` of ``exc``, on one line."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def failure_line(exc: BaseException) -> str:
    """One line for a failed run: the innermost ``SomeError: message`` line of what the runner
    raised (a worker's error often arrives wrapped, its traceback in the message)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    errors = [ln for ln in lines if _ERROR_LINE.match(ln)]
    line = errors[-1] if errors else (_reason(exc) if lines else type(exc).__name__)
    line = _WHILE.sub("", line)
    return line if len(line) <= 300 else line[:299] + "…"


def _err(message: str) -> None:
    print(f"{PROG}: error: {message}", file=sys.stderr)


@contextlib.contextmanager
def beam_logs(debug: bool) -> Iterator[None]:
    """Beam's own log lines (a worker error's traceback, three times over) are not for the user of
    a command line: the job says what failed in one line. ``--debug`` keeps them."""
    log = logging.getLogger("apache_beam")
    level = log.level
    if not debug:
        log.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        log.setLevel(level)


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
    refused = refused_manifest(built)
    if refused is not None:
        verdict = refused.get("commit") or {}
        if verdict.get("reason") in (LISTING, EMPTY):
            clean_up(built, run.existed)
            _err(f"{verdict.get('message')}; nothing was written: {built.output.url} is as it was")
            return EXIT_INPUT
        staged = Output(
            built.output.display(staged_path(built.staging, "")).rstrip("/"), built.output.storage
        )
        sys.stdout.write(summary(refused, staged))
        _err(
            f"{verdict.get('message', 'the manifest does not balance')}; nothing was committed: "
            f"{built.output.url} is as it was, and this run's results are in {staged.url}/"
        )
        return EXIT_UNBALANCED
    clean_up(built, run.existed)
    if run.cfg.bigquery_table:  # the load runs after the commit: was this run committed?
        now_there = _manifest_bytes(built.output)
        if now_there is not None and now_there != run.manifest_before:
            _err(
                f"the run is committed ({built.output.display(MANIFEST)}), but loading its entity index "
                f"into BigQuery {run.cfg.bigquery_table} failed: {failure_line(exc)}"
            )
            return EXIT_FAILED
    if run.had_manifest and _has_manifest(built.output) is False:
        # the window pipeline/dataset/commit.py leaves: it failed while moving its files into place
        _err(
            f"the run failed while committing: {failure_line(exc)}; {built.output.url} has no "
            "manifest.json now (incomplete): run again into it to rewrite it whole"
        )
        return EXIT_FAILED
    _err(f"the run failed: {failure_line(exc)}; nothing was committed: {built.output.url} is as it was")
    return EXIT_FAILED


def _interrupted(run: _Run, built: Built, stop: KeyboardInterrupt) -> int:
    """Ctrl-C or SIGTERM during the run: its staged files are removed and one line says where the
    output stands (as it was, unless the stop came while the commit moved files into place)."""
    clean_up(built, run.existed)
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
            return EXIT_INPUT
        except OutputProblem as exc:
            _err(str(exc))
            return EXIT_FAILED
    if cfg.bigquery_table:
        run.manifest_before = _manifest_bytes(Output(cfg.output, cfg.storage))
    p, built = prepare(cfg, options)
    for note in notes(cfg, built):
        print(f"{PROG}: note: {note}", file=sys.stderr)
    display = None if cfg.quiet or remote else Progress(PROG, unit="inputs")
    try:

        def announce(result: PipelineResult, url: str | None) -> str:
            return submitted(result, built.output.url, url)

        if not run_and_wait(p, options, display, prog=PROG, announce=announce):
            return EXIT_OK
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (bunzai_codecs.core.stop)
        return _interrupted(run, built, exc)
    except Exception as exc:
        if cfg.debug:
            traceback.print_exc()
        return _failed(run, built, exc)
    manifest = read_manifest(built)
    sys.stdout.write(summary(manifest, built.output))
    sys.stdout.flush()
    code = EXIT_OK if manifest["balance"]["ok"] else EXIT_UNBALANCED
    if cfg.audit_against is not None:
        code = code or audit_run(cfg, built)
    return code


def run(argv: Sequence[str] | None = None) -> int:
    from jobs.commands import run_job

    return run_job(argv, prog=PROG, help_text=help_text, start=lambda args: _execute(_Run(*parse(args))))


def main() -> None:
    raise SystemExit(run())


if __name__ == "__main__":
    main()
