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


def check_parameter(
    param: dict[str, Any], value: str, field: str | None, want: Any, parse: Any, argv: list[str]
) -> None:
    """A template parameter's sample ``value`` passes its regexes, and the job's ``parse`` of the
    launcher's ``argv`` (which carries it as ``--name=value``) puts ``want`` in the config's
    ``field`` (``None``: a Beam option of that name; ``"storage"``: the storage options)."""
    for rx in param.get("regexes", []):
        assert re.fullmatch(rx, value), (param["name"], rx, value)
    cfg, options = parse(argv)
    if field is None:
        assert options.get_all_options()[param["name"]] == value
    elif field == "storage":
        assert dict(cfg.storage.options) == want
    else:
        assert getattr(cfg, field) == want


def check_refused(param: dict[str, Any], values: list[str]) -> None:
    """Every one of ``values`` fails one of the parameter's regexes (which it must have)."""
    regexes = param.get("regexes", [])
    assert regexes, f"{param['name']} has no regexes"
    for value in values:
        assert not all(re.fullmatch(rx, value) for rx in regexes), (param["name"], value)
