"""The byte-identity guard: ``normalize`` over the bundled samples with fixed options, every output
file's sha256 against a stored list (``tests/pipeline/output-digests.tsv``).

Speed work (issue 21) must not change one byte of what a run writes; this list was made from the
code before that work. A change that *means* to change outputs (a new canonical line, a codec fix,
issue 22's canonical lines) regenerates the list on purpose, and the diff of the list shows which
files moved:

    make output-digests          # = python -m tests.pipeline.output_digests --write

The run: ``bunzai normalize --runner=FnApiRunner --input samples --output OUT --fidelity full
--export all``, from the repository root (so every input uri is the relative ``samples/...`` and no
output holds an absolute path of this checkout).

What legitimately varies between two runs of the same code on other machines is taken out before
hashing, and only that:

- ``manifest.json``: ``started``, ``finished`` (times), ``runner``, ``python``, ``beam``,
  ``bunzai.version`` and ``bunzai.codecFingerprint`` (versions; the fingerprint is a digest of the
  codec library's source, which changes with any edit, outputs equal or not) and
  ``options.output`` (the absolute output folder). The rest is re-serialised with sorted keys
  before hashing.
- ``fidelity/report.json``: its ``bunzai`` version field.
- ``fidelity/report.html``: the version in its ``bunzai X.Y.Z ·`` subtitle.

Every other file (canonical, fidelity rows, rejects and inventory shards, every export) is hashed
as written. The manifest's shard list keeps its per-shard sha256, so it checks the shards twice.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[2]
DIGESTS = Path(__file__).resolve().parent / "output-digests.tsv"
#: the options of the guarded run (``--output`` is added)
ARGS = ("--runner=FnApiRunner", "--input", "samples", "--fidelity", "full", "--export", "all")
VERSION = "<version>"


def normalised(rel: str, data: bytes) -> bytes:
    """``data`` of output file ``rel`` with what varies between runs of the same code replaced."""
    import bunzai_codecs

    if rel == "manifest.json":
        m = orjson.loads(data)
        for k in ("started", "finished", "runner", "python", "beam"):
            m.pop(k, None)
        m.get("bunzai", {}).pop("version", None)
        m.get("bunzai", {}).pop("codecFingerprint", None)
        m.get("options", {}).pop("output", None)
        return orjson.dumps(m, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2)
    if rel == "fidelity/report.json":
        r = orjson.loads(data)
        if isinstance(r, dict) and "bunzai" in r:
            r["bunzai"] = VERSION
        return orjson.dumps(r, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2)
    if rel == "fidelity/report.html":
        return data.replace(f"bunzai {bunzai_codecs.__version__} ·".encode(), f"bunzai {VERSION} ·".encode())
    return data


def digests(out: str | os.PathLike[str]) -> dict[str, str]:
    """Relative path -> sha256 of the normalised bytes, for every file under ``out``."""
    root = Path(out)
    found = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            rel = p.relative_to(root).as_posix()
            found[rel] = hashlib.sha256(normalised(rel, p.read_bytes())).hexdigest()
    return found


def run(out: str | os.PathLike[str]) -> dict[str, str]:
    """The guarded run into ``out`` (from the repository root), then its digests."""
    from jobs.normalize import run as run_job

    here = os.getcwd()
    os.chdir(ROOT)
    try:
        code = run_job([*ARGS, "--output", str(out), "-q"])
    finally:
        os.chdir(here)
    if code != 0:
        raise RuntimeError(f"normalize exited {code}")
    return digests(out)


def load(path: Path = DIGESTS) -> dict[str, str]:
    rows = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            sha, rel = line.split("\t", 1)
            rows[rel] = sha
    return rows


def dump(found: dict[str, str], path: Path = DIGESTS) -> None:
    head = (
        "# sha256<TAB>output file of `bunzai normalize "
        + " ".join(ARGS)
        + "` over samples/ (normalised: tests/pipeline/output_digests.py). Regenerate: make output-digests\n"
    )
    path.write_text(head + "".join(f"{sha}\t{rel}\n" for rel, sha in sorted(found.items())), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    import tempfile

    ap = argparse.ArgumentParser(prog="python -m tests.pipeline.output_digests", description=__doc__)
    ap.add_argument("--write", action="store_true", help=f"rewrite {DIGESTS.relative_to(ROOT)}")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        found = run(Path(tmp) / "out")
    if a.write:
        dump(found)
        print(f"{len(found)} digests written to {DIGESTS.relative_to(ROOT)}")
        return 0
    want = load()
    bad = sorted(k for k in want.keys() | found.keys() if want.get(k) != found.get(k))
    for k in bad:
        print(f"{k}: stored {want.get(k, 'absent')}, now {found.get(k, 'absent')}")
    print(f"{len(found)} files, {len(bad)} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
