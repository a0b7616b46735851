"""The normalize job's arguments: its own options, Beam's, and nothing else (exit 2, one line, the
closest option); Beam never sees the job's options, so no worker reports them as discarded."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pipeline.runtime.errors import UsageError
from pipeline.runtime.options import parse


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--inputs", "cards/"], "unknown option --inputs (did you mean --input?)"),
        (["--inptu", "x"], "unknown option --inptu (did you mean --input?)"),
        (["--exports", "all"], "unknown option --exports (did you mean --export?)"),
        (["--outptu=x"], "unknown option --outptu (did you mean --output?)"),
        (["--fidelty", "off"], "unknown option --fidelty (did you mean --fidelity?)"),
        (
            ["--direct_num_worker=2"],
            "unknown option --direct_num_worker (did you mean --direct_num_workers?)",
        ),
        (["--inp", "x"], "unknown option --inp"),  # no abbreviations: --inp is not --input
        (["cards/"], "unexpected argument 'cards/': inputs are given with --input URL"),
        (["--runner=NoSuchRunner"], "--runner: unknown runner 'NoSuchRunner'"),
        (["--max-file-bytes", "many"], "invalid int value: 'many'"),
        (["--allow-empty=maybe"], "expected true or false"),
    ],
)
def test_anything_that_is_neither_ours_nor_beams_is_refused(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError) as e:
        parse(["--runner=FnApiRunner", *argv] if not argv[0].startswith("--runner") else argv)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_beams_own_options_pass_in_either_form() -> None:
    cfg, options = parse(
        ["--runner", "FnApiRunner", "--direct_num_workers=2", "--experiments", "x", "--input", "samples"]
    )
    got = options.get_all_options()
    assert got["runner"] == "FnApiRunner" and got["direct_num_workers"] == 2 and "x" in got["experiments"]
    assert cfg.inputs == ("samples",)
    cfg, _ = parse(["--allow_empty=true"])
    assert cfg.allow_empty is True
    cfg, _ = parse(["--allow-empty"])
    assert cfg.allow_empty is True and parse([])[0].allow_empty is False


#: what a worker does with the options it is shipped, in an interpreter that never loaded bunzai
WORKER = """
import json, logging, sys
logging.basicConfig(level=logging.WARNING, stream=sys.stdout, format="%(message)s")
from apache_beam.options.pipeline_options import PipelineOptions
PipelineOptions.from_dictionary(json.loads(sys.argv[1])).get_all_options()
"""


def test_no_worker_discards_the_jobs_options() -> None:
    """``--direct_running_mode=multi_processing`` printed "Discarding unparseable args:
    ['--fidelity=full', ...]": the workers parse the options they are shipped without bunzai's
    options class. Beam gets none of the job's options now, so none can be discarded."""
    _, options = parse(
        [
            "--direct_running_mode=multi_processing",
            "--direct_num_workers=2",
            "--export",
            "all",
            "--fidelity=off",
        ]
    )
    shipped = options.get_all_options()
    assert shipped["direct_num_workers"] == 2
    ours = ("inputs", "output", "export", "fidelity", "max_file_bytes", "shard_bytes", "since", "allow_empty")
    assert not set(ours) & set(shipped)
    worker = subprocess.run(
        [sys.executable, "-I", "-c", WORKER, json.dumps(shipped, default=str)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert worker.returncode == 0, worker.stderr
    discarded = [ln for ln in worker.stdout.splitlines() if "Discarding" in ln]
    assert not any(f"--{name}=" in ln for ln in discarded for name in ours), discarded
