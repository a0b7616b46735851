"""What the pipeline's jobs (``bunzai normalize``, ``bunzai export``) share around their runs: the
entry point (``run_job``: help, process settings, quiet Beam logs, a usage error as one line and
``Exit.USAGE``, SIGTERM as Ctrl-C), the pipeline (``new_pipeline``), running it and waiting
(``run_and_wait``: progress, the Dataflow console URL, a job that is only handed over), the checks
before a run (``check_output``), the clean-up after one (``clean_up``), and a failure in one line
(``failure_line``). Every exit code is ``bunzai_codecs.exitcodes.Exit``.
"""

from __future__ import annotations

import contextlib
import logging
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import apache_beam as beam
import orjson
from apache_beam.options.pipeline_options import GoogleCloudOptions, PipelineOptions
from apache_beam.runners.runner import PipelineResult

from bunzai_codecs.core.stop import interrupt_of, interrupted_exit, terminate_as_interrupt
from bunzai_codecs.exitcodes import Exit
from bunzai_codecs.progress import Progress
from pipeline.dataset.commit import STAGING, staging_parent
from pipeline.dataset.manifest import MANIFEST
from pipeline.runtime import fixed_cost
from pipeline.runtime.errors import MissingInput, UsageError
from pipeline.runtime.memory import tune_malloc
from pipeline.runtime.options import submits_only
from pipeline.runtime.progress import watching
from pipeline.runtime.storage import Output, staged_path, write_bytes


def run_job(
    argv: Sequence[str] | None,
    *,
    prog: str,
    help_text: Callable[[], str],
    start: Callable[[list[str]], int],
    usage: str = "",
) -> int:
    """The entry point ``bunzai normalize`` and ``bunzai export`` share (``argv``: the arguments,
    default ``sys.argv[1:]``): ``-h``/``--help`` prints ``help_text()`` and exits 0; otherwise
    malloc is tuned before the runner starts its workers (they inherit the settings), Beam's logs
    stay quiet unless ``--debug``, and ``start(args)`` parses and runs the job, its exit code
    returned. A ``UsageError`` from it is one line ``PROG: error: ...`` on stderr (then ``usage``,
    if given) and ``Exit.USAGE``, a ``MissingInput`` one line and ``Exit.INPUT``; SIGTERM is handled as Ctrl-C (:mod:`bunzai_codecs.core.stop`)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "-h" in args or "--help" in args:
        sys.stdout.write(help_text())
        return Exit.OK
    tune_malloc()  # before the runner starts its workers: they inherit the settings
    with beam_logs("--debug" in args):
        try:
            with terminate_as_interrupt():  # SIGTERM takes the Ctrl-C path: the staged run is removed
                return start(args)
        except UsageError as exc:
            print(f"{prog}: error: {exc}", file=sys.stderr)
            sys.stderr.write(usage)
            return Exit.USAGE
        except MissingInput as exc:
            print(f"{prog}: error: {exc}", file=sys.stderr)
            return Exit.INPUT
        except KeyboardInterrupt as exc:  # before or after the run's own interrupt handling
            print(f"{prog}: interrupted", file=sys.stderr)
            return interrupted_exit(exc)


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


def new_pipeline(options: PipelineOptions) -> beam.Pipeline:
    """The job's pipeline, with Beam's fixed cost per run cut first (pipeline/runtime/fixed_cost.py:
    installed here, where a job starts, before the graph is built)."""
    fixed_cost.install()
    return beam.Pipeline(options=options)


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


def submitted(result: PipelineResult, output: str, url: str | None = None, *, prog: str) -> str:
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
    try:
        with watching(display, show=show):  # its exit shows the run's last counts
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
            display.close()  # after the last counts: its line is the run's, never a line of zeros


# -- before the run ---------------------------------------------------------------------------------


class OutputProblem(Exception):
    """The output folder cannot be written: ``Exit.FAILED``."""


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
        raise OutputProblem(f"cannot write to --output {output.url}: {reason(exc)}") from exc
    remove_if_empty(output, STAGING)
    if not existed:
        remove_if_empty(output, "")
    return existed


# -- after the run ----------------------------------------------------------------------------------


def remove_if_empty(output: Output, rel: str) -> None:
    """Remove the folder ``rel`` of the output (``""``: the output itself) when it is empty."""
    with contextlib.suppress(Exception):
        fs, root = output.open()
        path = f"{root}/{rel}".rstrip("/") if rel else root
        if fs.isdir(path) and not fs.ls(path):
            fs.rmdir(path)


def clean_up(output: Output, staging: str, existed: bool | None) -> None:
    """Remove a run's staging folder (``staging``, relative to ``output``), the staging parent when
    it is left empty, and the output folder itself when the run created it (``existed`` False) and
    it is empty."""
    with contextlib.suppress(Exception):
        fs, root = output.open()
        path = f"{root}/{staging}"
        if fs.exists(path):
            fs.rm(path, recursive=True)
    remove_if_empty(output, staging_parent(staging))
    if existed is False:
        remove_if_empty(output, "")


def refused_manifest(output: Output, staging: str) -> dict[str, Any] | None:
    """The manifest a refused run wrote into its staging folder, if it got that far."""
    try:
        fs, root = output.open()
        data = fs.cat_file(f"{root}/{staged_path(staging, MANIFEST)}")
    except Exception:
        return None
    manifest: dict[str, Any] = orjson.loads(data)
    return manifest


def written_manifest(output: Output) -> dict[str, Any]:
    """The manifest a finished run wrote (last) into ``output``."""
    fs, root = output.open()
    manifest: dict[str, Any] = orjson.loads(fs.cat_file(f"{root}/{MANIFEST}"))
    return manifest


_ERROR_LINE = re.compile(
    r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Refused|Exceeded)\b(?::.*)?$"
)
_WHILE = re.compile(r"\s*\[while running '[^']*'\]")


def reason(exc: BaseException) -> str:
    """``Type: message`` of ``exc``, on one line."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def failure_line(exc: BaseException) -> str:
    """One line for a failed run: the innermost ``SomeError: message`` line of what the runner
    raised (a worker's error often arrives wrapped, its traceback in the message)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    errors = [ln for ln in lines if _ERROR_LINE.match(ln)]
    line = errors[-1] if errors else (reason(exc) if lines else type(exc).__name__)
    line = _WHILE.sub("", line)
    return line if len(line) <= 300 else line[:299] + "…"


__all__ = [
    "OutputProblem",
    "beam_logs",
    "check_output",
    "clean_up",
    "console_url",
    "failure_line",
    "new_pipeline",
    "reason",
    "refused_manifest",
    "remove_if_empty",
    "run_and_wait",
    "run_job",
    "submitted",
    "written_manifest",
]
