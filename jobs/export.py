"""``bunzai export DATASET_URL --to FORMAT[,FORMAT] -o OUT_URL``: entities of a canonical dataset in
app formats, from the dataset alone (pipeline/export/job.py). Also ``python -m jobs.export``.

Same conventions as ``bunzai normalize``: an unknown argument is refused (exit 2), any Beam option
is accepted (``--runner=DataflowRunner`` with the bunzai image runs it on Dataflow), progress on
stderr, and the output folder changes only when the run is complete: everything is staged in
``OUT/.bunzai-staging/<run>/`` first. Exit codes: ``bunzai_codecs.exitcodes.Exit`` (the job's
``--help`` says what each means for it).
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Sequence
from typing import Any

from bunzai_codecs.core.stop import interrupted_exit
from bunzai_codecs.exitcodes import Exit
from bunzai_codecs.progress import Progress
from jobs.runner import (
    OutputProblem,
    check_output,
    clean_up,
    failure_line,
    new_pipeline,
    refused_manifest,
    run_and_wait,
    run_job,
    submitted,
    written_manifest,
)
from pipeline.dataset.manifest import MANIFEST
from pipeline.export.job import (
    PROG,
    DatasetProblem,
    ExportConfig,
    build_export,
    canonical_shards,
    help_text,
    parse,
)
from pipeline.runtime.options import is_remote
from pipeline.runtime.storage import Output


def _err(message: str) -> None:
    print(f"{PROG}: error: {message}", file=sys.stderr)


def show(display: Progress, counts: dict[str, int]) -> None:
    """The export's counters as the display shows them."""
    display.set(
        done=counts.get("export_lines", 0),
        total=None,
        status="",
        selected=counts.get("entities_selected", 0),
        written=counts.get("exports_written", 0),
        rejects=counts.get("rejects", 0),
    )


def summary(manifest: dict[str, Any], output: Output) -> str:
    lines = [f"{PROG}: {manifest['selected']} entities selected from {manifest['options']['dataset']}"]
    for fmt, n in manifest["exports"]["byFormat"].items():
        lines.append(f"  {fmt:<28} {n:>7} files  {output.display(fmt)}/")
    rej = manifest["rejects"]
    if rej["total"]:
        lines.append(f"  rejects: {rej['total']} ({output.display('rejects')}/)")
        for stage, errors in rej["byStageError"].items():
            for error, n in errors.items():
                lines.append(f"    {stage:<10} {error:<22} {n:>7}")
        for uri, stage, error, message in rej["examples"]:
            lines.append(f"    e.g. {uri}: {stage} {error}: {message.splitlines()[0] if message else ''}")
    pruned = manifest["outputs"].get("pruned", 0)
    if pruned:
        lines.append(f"  pruned: {pruned} files an earlier export wrote in {output.url} and this one did not")
    lines.append(f"  manifest: {output.display(MANIFEST)}")
    return "\n".join(lines) + "\n"


def _execute(cfg: ExportConfig, options: Any) -> int:
    remote = is_remote(options)
    existed: bool | None = None
    try:
        shards = canonical_shards(cfg)
    except DatasetProblem as exc:
        _err(str(exc))
        return Exit.INPUT
    if not shards:
        _err(f"{cfg.dataset} holds no canonical lines: nothing to export")
        return Exit.INPUT
    if not remote:
        try:
            existed = check_output(Output(cfg.output, cfg.storage))
        except OutputProblem as exc:
            _err(str(exc).replace("--output", "-o"))
            return Exit.FAILED
    p = new_pipeline(options)
    built = build_export(p, cfg, shards)
    display = None if cfg.quiet or remote else Progress(PROG, unit="lines")

    def announce(result: Any, url: str | None) -> str:
        return submitted(result, cfg.output, url, prog=PROG)

    try:
        if not run_and_wait(p, options, display, prog=PROG, announce=announce, show=show):
            return Exit.OK
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (bunzai_codecs.core.stop)
        clean_up(built.output, built.staging, existed)
        _err(f"interrupted; nothing was committed: {cfg.output} is as it was")
        return interrupted_exit(exc)
    except Exception as exc:
        if cfg.debug:
            traceback.print_exc()
        refused = refused_manifest(built.output, built.staging)
        clean_up(built.output, built.staging, existed)
        if refused is not None:
            _err(f"{refused['commit']['message']}; nothing was written: {cfg.output} is as it was")
            return Exit.INPUT
        _err(f"the run failed: {failure_line(exc)}; nothing was committed: {cfg.output} is as it was")
        return Exit.FAILED
    manifest = written_manifest(built.output)
    sys.stdout.write(summary(manifest, built.output))
    return Exit.OK


def run(argv: Sequence[str] | None = None) -> int:
    return run_job(
        argv,
        prog=PROG,
        help_text=help_text,
        start=lambda args: _execute(*parse(args)),
        usage=f"usage: {PROG} DATASET_URL --to FMT[,FMT] -o OUT_URL [--kind K] [--format F] [--id ID]\n",
    )


def main() -> None:
    raise SystemExit(run())


if __name__ == "__main__":
    main()
