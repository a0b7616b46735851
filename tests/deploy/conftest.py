"""What the deploy tests read: the repository's deploy/ folder, pyproject.toml and the lock."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


def pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def lock_pins() -> dict[str, tuple[str, list[str]]]:
    """deploy/requirements.txt: canonical name -> (version, sha256 hashes)."""
    pins: dict[str, tuple[str, list[str]]] = {}
    text = (DEPLOY / "requirements.txt").read_text(encoding="utf-8")
    for entry in re.sub(r"\\\n", " ", text).splitlines():
        entry = entry.split("#", 1)[0].strip()
        if not entry:
            continue
        head, *opts = entry.split(" --hash=")
        req = Requirement(head.strip())
        spec = str(req.specifier)
        assert spec.startswith("=="), f"not pinned: {entry[:80]}"
        pins[canonicalize_name(req.name)] = (spec[2:], [o.strip() for o in opts])
    return pins


def beam_version() -> str:
    return lock_pins()["apache-beam"][0]
