"""The Makefile targets a new user runs on a fresh clone: ``make bench`` (no ``.bench/`` yet) and
``make fidelity`` / ``make audit`` (their own folder, not the one ``make run`` writes)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import bench.__main__ as bench_main
from pipeline.dataset.prune import MANAGED

ROOT = Path(__file__).resolve().parents[2]


class Reached(Exception):
    pass


def test_bench_starts_without_a_bench_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def ensure(*_args: object, **_kwargs: object) -> None:
        raise Reached  # past the disk-space check: where the corpus would be generated

    monkeypatch.setattr(bench_main.gen, "ensure", ensure)
    data = tmp_path / "fresh-clone" / ".bench"
    with pytest.raises(Reached):
        bench_main.main(["--quick", "--data", str(data)])
    assert data.is_dir()


def test_make_fidelity_and_audit_write_their_own_folder() -> None:
    """``make run`` writes out/ (normalize), whose manifest lists out/fidelity/ with sha256s: the
    audit's report must go elsewhere, and the audit must read what the fidelity target wrote."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    variables = dict(re.findall(r"^([A-Z_]+) :?= (.*)$", text, re.M))

    def expand(s: str) -> str:
        return re.sub(r"\$\(([A-Z_]+)\)", lambda m: variables.get(m.group(1), m.group(0)), s)

    def recipe(target: str) -> str:
        m = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", text, re.M)
        assert m, target
        return expand(m.group(1))

    out = re.search(r"\bfidelity\b.* -o (\S+)", recipe("fidelity"))
    assert out, recipe("fidelity")
    folder = out.group(1).rstrip("/")
    run_output = "out"  # `make run`: bunzai normalize's default --output
    assert not any(folder == f"{run_output}/{m}" or folder.startswith(f"{run_output}/{m}/") for m in MANAGED)
    for target in ("audit", "baseline"):
        assert f"--report {folder}/report.json" in recipe(target), target
