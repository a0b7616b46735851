"""The entry point ``bunzai normalize`` and ``bunzai export`` share (``jobs.runner.run_job``)."""

from __future__ import annotations

import pytest

from jobs.runner import run_job
from pipeline.runtime.errors import UsageError


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


class _Result:
    def __init__(self) -> None:
        self.waited = False

    def wait_until_finish(self) -> None:
        self.waited = True


class _Pipeline:
    def __init__(self) -> None:
        self.result = _Result()

    def run(self) -> _Result:
        return self.result


class _Display:
    closed = False

    def close(self) -> None:
        self.closed = True


@pytest.mark.parametrize("hands_over", [True, False])
def test_run_and_wait_hands_over_or_waits_and_always_closes_the_display(
    hands_over: bool, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run step both jobs share: a hand-over (Dataflow dry run, template) announces on stdout
    and does not wait; any other run waits for the end. The display is closed either way."""
    from jobs import runner

    monkeypatch.setattr(runner, "submits_only", lambda options: hands_over)
    monkeypatch.setattr(runner, "watching", lambda display, show=None: _Nothing())
    monkeypatch.setattr(runner, "console_url", lambda result, options: None)
    p, display = _Pipeline(), _Display()
    seen: list[object] = []

    def announce(result: object, url: str | None) -> str:
        seen.append(result)
        return "handed over\n"

    waited = runner.run_and_wait(p, None, display, prog="bunzai x", announce=announce)  # type: ignore[arg-type]
    assert waited is (not hands_over)
    assert p.result.waited is (not hands_over)
    assert seen == ([p.result] if hands_over else [])
    assert capsys.readouterr().out == ("handed over\n" if hands_over else "")
    assert display.closed


def test_the_hand_over_line_names_the_job_and_where_results_go() -> None:
    from jobs.runner import submitted

    line = submitted(_Result(), "gs://bucket/out", None, prog="bunzai export")  # type: ignore[arg-type]
    assert line == (
        "bunzai export: translated the job (not submitted here); "
        "results go to gs://bucket/out (manifest.json appears last)\n"
    )


class _Nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
