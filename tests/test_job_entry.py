"""The entry point ``bunzai normalize`` and ``bunzai export`` share (``jobs.commands.run_job``)."""

from __future__ import annotations

import pytest

from jobs.commands import run_job
from pipeline.options import UsageError


def _never(args: list[str]) -> int:
    raise AssertionError(f"the job ran: {args}")


@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help_prints_the_jobs_help_and_runs_nothing(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_job(["in", flag], prog="bunzai x", help_text=lambda: "the help\n", start=_never) == 0
    out = capsys.readouterr()
    assert (out.out, out.err) == ("the help\n", "")


def test_the_job_gets_every_argument_and_its_exit_code_is_returned() -> None:
    seen: list[list[str]] = []

    def start(args: list[str]) -> int:
        seen.append(args)
        return 3

    assert run_job(("a", "--debug", "b"), prog="bunzai x", help_text=str, start=start) == 3
    assert seen == [["a", "--debug", "b"]]


def test_a_usage_error_is_one_line_then_the_usage_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    def start(args: list[str]) -> int:
        raise UsageError("unknown argument --kid (did you mean --kind?)")

    assert run_job(["--kid"], prog="bunzai x", help_text=str, start=start, usage="usage: bunzai x IN\n") == 2
    assert (
        capsys.readouterr().err
        == "bunzai x: error: unknown argument --kid (did you mean --kind?)\nusage: bunzai x IN\n"
    )
    assert run_job(["--kid"], prog="bunzai x", help_text=str, start=start) == 2
    assert capsys.readouterr().err == "bunzai x: error: unknown argument --kid (did you mean --kind?)\n"


def test_export_prints_its_usage_line_after_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    from jobs.export import run

    assert run(["somewhere", "--to", "nope", "-o", "out"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("bunzai export: error: ")
    assert err[1].startswith("usage: bunzai export DATASET_URL --to FMT[,FMT] -o OUT_URL")
