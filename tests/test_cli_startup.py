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


LOREBOOK = ROOT / "samples" / "sillytavern" / "world-harbor-town.json"
ZIP = ROOT / "samples" / "lumiverse" / "quill.lumiverse.zip"


def _codec_modules() -> set[str]:
    from bunzai_codecs.core import registry

    return {str(t).partition(":")[0] for t in registry.CODECS.values()}


def test_detect_loads_no_canonical_model_nor_pydantic() -> None:
    """Detection runs on the format declarations and their model-free detectors: neither pydantic,
    the canonical models nor any codec module is imported, in text or JSON output (whose ``kind``
    column asks the format too)."""
    files = (str(PNG), str(LOREBOOK), str(ZIP))
    for args in (("detect", *files), ("detect", "--json", *files)):
        code, mods, out = _modules_after(*args)
        assert code == 0, out
        assert "sillytavern" in out and "character" in out  # the card, and its kind
        assert "sillytavern-lorebook" in out and "lorebook" in out  # the world info book
        assert "lumiverse" in out  # the zip, its listing read
        loaded = {m for m in mods if m == "pydantic" or m.startswith(("pydantic.", "bunzai_codecs.entities"))}
        assert not loaded, sorted(loaded)[:5]
        assert not mods & _codec_modules(), sorted(mods & _codec_modules())
        assert "bunzai_codecs.core.registry" in mods


def test_formats_lists_every_format_without_loading_a_codec() -> None:
    from bunzai_codecs.core import registry

    code, mods, out = _modules_after("formats")
    assert code == 0, out
    listed = {line.split()[0] for line in out.splitlines()[1:] if line.strip()}
    assert listed == set(registry.CODECS)
    assert "pydantic" not in mods and "bunzai_codecs.entities" not in mods
    assert not mods & _codec_modules(), sorted(mods & _codec_modules())


def test_every_detector_imports_no_model() -> None:
    """Each format's detector module, with what it imports, loads no canonical model nor pydantic,
    asked in a fresh interpreter. Each row's detector runs once, so a detector object's own parts
    (the Tavern lineage's ``CardDetector`` loads an app's file scorer on first use) load too."""
    probe = (
        "import sys\n"
        "from bunzai_codecs.core.format import DETECT_ERRORS, resolve\n"
        "from bunzai_codecs.core.sniff import Sniff\n"
        "from bunzai_codecs.formats.table import FORMATS\n"
        "for f in FORMATS:\n"
        "    f.detect(Sniff(b'{}', 'probe.json'))\n"
        "    if f.kind_reader: resolve(f.kind_reader)\n"
        "assert not DETECT_ERRORS, DETECT_ERRORS\n"
        "print(sorted(m for m in sys.modules if m == 'pydantic' or m.startswith('bunzai_codecs.entities')))\n"
    )
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"
