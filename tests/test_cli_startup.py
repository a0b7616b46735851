"""CLI start-up: a one-file ``bunzai detect`` loads what detection needs, not the pipeline's stack
(Beam, gRPC, pyarrow) nor the fidelity machinery. Checked by the modules a fresh interpreter holds
after the command, never by a time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
PNG = ROOT / "samples" / "sillytavern" / "tidepool.png"

_PROBE = """
import sys
sys.argv = ["bunzai", *sys.argv[1:]]
from bunzai_codecs.cli import main
try:
    code = main()
except SystemExit as exc:
    code = exc.code
import orjson
sys.stdout.write("\\n" + orjson.dumps({"code": code, "modules": sorted(sys.modules)}).decode())
"""


def _modules_after(*args: str) -> tuple[int, set[str], str]:
    p = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    head, _, last = p.stdout.rpartition("\n")
    found = orjson.loads(last)
    return int(found["code"] or 0), set(found["modules"]), head


def test_detect_of_one_png_imports_no_beam_grpc_pyarrow_or_fidelity() -> None:
    code, mods, out = _modules_after("detect", str(PNG))
    assert code == 0 and "sillytavern" in out  # the command ran and named the format
    tops = {m.split(".")[0] for m in mods}
    assert not tops & {"apache_beam", "grpc", "pyarrow", "pipeline"}, sorted(tops & {"apache_beam", "grpc"})
    # the fidelity checks (and the audit that reads their rows) load when a command needs them
    assert "bunzai_codecs.fidelity" not in mods
    assert "bunzai_codecs.core.registry" in mods  # the probe saw a real run's modules
