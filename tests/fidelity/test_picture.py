"""The README's picture of report.html (docs/img/fidelity-report.png) shows the report code as it
is: `make report-screenshot` records the sha256 of that code beside the picture, and this test
fails when the code changed after the picture was made."""

from __future__ import annotations

import hashlib

from jobs.screenshot import REPORT_CODE, ROOT, code_digest

PICTURE = ROOT / "docs" / "img" / "fidelity-report.png"
DIGEST = ROOT / "docs" / "img" / "fidelity-report.code.sha256"


def test_the_readme_shows_the_picture() -> None:
    assert PICTURE.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(docs/img/fidelity-report.png)" in readme and "make report-screenshot" in readme


def test_the_picture_is_not_older_than_the_report_code() -> None:
    recorded = {}
    for line in DIGEST.read_text(encoding="utf-8").splitlines():
        digest, path = line.split("  ", 1)
        recorded[path] = digest
    assert sorted(recorded) == sorted(REPORT_CODE)
    stale = [p for p, d in recorded.items() if hashlib.sha256((ROOT / p).read_bytes()).hexdigest() != d]
    assert not stale, (
        f"{PICTURE.relative_to(ROOT)} was made from an older {', '.join(stale)}: "
        "run `make report-screenshot` (needs chromium) and commit the picture with its digest"
    )


def test_the_digest_is_sha256sum_lines() -> None:
    assert len(REPORT_CODE) == len(set(REPORT_CODE)) >= 1
    want = "".join(f"{hashlib.sha256((ROOT / p).read_bytes()).hexdigest()}  {p}\n" for p in REPORT_CODE)
    assert code_digest() == want


def test_the_digest_covers_every_module_of_the_report() -> None:
    """The report is made by bunzai_codecs/fidelity/report.py (report.json) and html.py (the page):
    a picture is stale when either changes, so both are digested."""
    assert set(REPORT_CODE) == {"bunzai_codecs/fidelity/report.py", "bunzai_codecs/fidelity/html.py"}
    assert all((ROOT / p).is_file() for p in REPORT_CODE)
