"""report.html in a real headless Chromium: it renders (a screenshot), the parsed DOM holds the
matrix cells, and card text that looks like markup stays text. Skips when no Chromium is installed
(`.ci/run` installs Debian's `chromium`)."""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from bunzai_codecs import cli
from bunzai_codecs.core import registry
from jobs.screenshot import dump_dom, find_browser, screenshot

from . import toys

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(find_browser() is None, reason="no Chromium (apt-get install chromium)"),
]

EVIL = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A report over toy inputs, one of them a card named like a script."""
    src = tmp_path_factory.mktemp("inputs")
    (src / "book.toylore.json").write_bytes(toys.book())
    (src / "card.toycard.json").write_bytes(toys.card())
    evil = orjson.loads(toys.card())
    evil["name"] = EVIL
    evil["book"]["title"] = f'<img src=x onerror="alert(2)">{EVIL}'
    (src / "evil.toycard.json").write_bytes(orjson.dumps(evil))
    (src / f"{'<b>'}rejected.bin").write_bytes(b"\x00 not a card")
    out = tmp_path_factory.mktemp("report")
    with registry.using(toys.TOYS):
        assert cli.main(["fidelity", f"toys={src}", "-o", str(out), "-q"]) == 0
    yield out / "report.html"


def test_screenshot_renders_the_report(report: Path, tmp_path: Path) -> None:
    png = screenshot(report, tmp_path / "report.png", width=1200, height=900)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])  # IHDR
    assert (width, height) == (1200, 900)
    assert len(data) > 20_000  # a blank page compresses to a few KB; the table and colours do not


def test_dom_holds_every_matrix_cell(report: Path) -> None:
    rep = orjson.loads((report.parent / "report.json").read_bytes())
    dom = dump_dom(report)
    cells = re.findall(
        r'<td class="cell[^"]*" data-kind="([^"]+)" data-source="([^"]+)" data-target="([^"]+)" data-lossless="([^"]+)"',
        dom,
    )
    got = {(k, s, t): float(p) for k, s, t, p in cells}
    want = {
        (kind, c["source"], c["target"]): c["lossless_pct"]
        for kind, k in rep["kinds"].items()
        for c in k["matrix"]
    }
    assert want and set(want) <= set(got)
    for key, pct in want.items():
        assert got[key] == pct
    assert got[("lorebook", "toy-card", "toy-lore")] == 100.0
    assert got[("lorebook", "toy-card", "toy-narrow")] == 0.0
    # the per-format bars are drawn (inline SVG)
    assert '<svg class="bars"' in dom and 'class="bar" data-format="toy-card"' in dom


def test_a_card_named_like_a_script_renders_as_text(report: Path) -> None:
    dom = dump_dom(report)
    # Chromium serialises the parsed DOM: a real element would appear as a tag, text stays escaped
    assert "<script" not in dom.lower()
    assert "<img" not in dom.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    assert "onerror=" not in dom.replace("&lt;img src=x onerror=", "")


def test_the_screenshot_command_records_the_report_code_digest(report: Path, tmp_path: Path) -> None:
    from jobs.screenshot import code_digest, main

    png, digest = tmp_path / "r.png", tmp_path / "r.code.sha256"
    assert (
        main([str(report), str(png), "--width", "800", "--height", "600", "--code-digest", str(digest)]) == 0
    )
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and digest.read_text() == code_digest()
