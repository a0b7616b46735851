"""Render an HTML file in headless Chromium: a PNG screenshot, or the DOM after parsing.

    python -m jobs.screenshot out/audit/report.html docs/img/fidelity-report.png [--width 1280 --height 900]
        [--code-digest docs/img/fidelity-report.code.sha256]

Used by the browser tests of report.html and by `make report-screenshot` (the README's picture).
``--code-digest`` records, beside the picture, the sha256 of the code that renders the report
(``REPORT_CODE``, in ``sha256sum`` format): a test fails when that code changes and the picture
was not made again.
The browser runs offline and throw-away: no sandbox (CI runs as root in a container), no GPU, no
network services, a fresh profile directory per run.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)
TIMEOUT = 90
ROOT = Path(__file__).resolve().parents[1]
#: the code a picture of report.html depicts (paths from the project root): the report's data and
#: its rendering
REPORT_CODE = ("bunzai_codecs/fidelity/report.py", "bunzai_codecs/fidelity/html.py")


def find_browser() -> str | None:
    """The Chromium binary: ``$BUNZAI_CHROMIUM``, else the first of ``BROWSERS`` on PATH."""
    env = os.environ.get("BUNZAI_CHROMIUM")
    if env:
        return env if Path(env).exists() else None
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    return None


def _run(browser: str, args: Sequence[str], page: Path) -> subprocess.CompletedProcess[bytes]:
    with tempfile.TemporaryDirectory(prefix="bunzai-chromium-") as profile:
        cmd = [browser, *FLAGS, f"--user-data-dir={profile}", *args, page.resolve().as_uri()]
        return subprocess.run(cmd, capture_output=True, timeout=TIMEOUT, check=False)


def screenshot(
    page: Path, png: Path, *, width: int = 1280, height: int = 900, browser: str | None = None
) -> Path:
    """Save a ``width`` x ``height`` screenshot of ``page`` to ``png``."""
    exe = browser or find_browser()
    if exe is None:
        raise FileNotFoundError("no Chromium found (apt-get install chromium, or set BUNZAI_CHROMIUM)")
    png.parent.mkdir(parents=True, exist_ok=True)
    out = _run(exe, [f"--screenshot={png.resolve()}", f"--window-size={width},{height}"], page)
    if not png.is_file() or png.stat().st_size == 0:
        raise RuntimeError(
            f"chromium wrote no screenshot (exit {out.returncode}): {out.stderr.decode()[-800:]}"
        )
    return png


def dump_dom(page: Path, *, browser: str | None = None) -> str:
    """The page's DOM as Chromium serialises it after parsing (``--dump-dom``)."""
    exe = browser or find_browser()
    if exe is None:
        raise FileNotFoundError("no Chromium found (apt-get install chromium, or set BUNZAI_CHROMIUM)")
    out = _run(exe, ["--dump-dom"], page)
    if out.returncode != 0 or not out.stdout:
        raise RuntimeError(
            f"chromium --dump-dom failed (exit {out.returncode}): {out.stderr.decode()[-800:]}"
        )
    return out.stdout.decode("utf-8")


def code_digest(paths: Sequence[str] = REPORT_CODE, root: Path = ROOT) -> str:
    """``sha256sum`` lines for ``paths`` (read from ``root``): what a picture was made from."""
    return "".join(f"{hashlib.sha256((root / p).read_bytes()).hexdigest()}  {p}\n" for p in paths)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m jobs.screenshot", description=__doc__.split("\n\n")[0])
    p.add_argument("page", type=Path)
    p.add_argument("png", type=Path)
    p.add_argument("--width", type=int, default=1280)
    p.add_argument("--height", type=int, default=900)
    p.add_argument(
        "--code-digest",
        type=Path,
        metavar="FILE",
        help="after the screenshot, record the sha256 of the report's code (REPORT_CODE) in FILE",
    )
    args = p.parse_args(argv)
    print(screenshot(args.page, args.png, width=args.width, height=args.height))
    if args.code_digest is not None:
        args.code_digest.write_text(code_digest(), encoding="utf-8")
        print(args.code_digest)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
