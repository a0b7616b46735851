"""The byte-identity guard, as golden text a reviewer can read: ``normalize`` over the bundled
samples with fixed options, every output file against ``tests/pipeline/goldens/``.

The run: ``bunzai normalize --runner=FnApiRunner --input samples --output OUT --fidelity full
--export all``, from the repository root (so every input uri is the relative ``samples/...`` and no
output holds an absolute path of this checkout). A change that *means* to change outputs (a codec
fix, a new canonical field) rewrites the goldens on purpose and its commit explains their diff:

    make goldens                                          # = python -m tests.pipeline.goldens --update
    pytest tests/pipeline/test_goldens.py --update-goldens   # the same, from the test

Speed work must leave them as they are.

**What the goldens hold.** One run writes ~13 MB in 1,103 files (most of it the 2.7 MB fidelity
report, its 2.7 MB HTML page, 2.1 MB of fidelity rows and 1,093 exports). All of that as text would
be unreviewable, so each output is kept in the form a reviewer can read, and every byte stays
guarded:

- ``canonical/*.jsonl`` -> ``canonical/*.txt``: **the whole dataset**, each canonical line
  pretty-printed under a header line naming its entity; rebuilt byte for byte.
- ``manifest.json``: the whole manifest as written; what varies between runs of the same code is
  named, e.g. ``"started": "<varies: run time>"``.
- ``inventory/``, ``rejects/``: verbatim, one row a line.
- ``index/*.parquet`` -> ``index/*.txt``: its schema and every row as text, and the file's sha256
  (the parquet encoding itself is binary).
- ``fidelity/rows-*.jsonl`` -> ``fidelity/rows-*.txt``: one line per row (entity, source ->
  target, check, status, weights, how it was obtained: its ``basis``) with the paths it lost,
  changed and added, and the file's sha256. Each finding's count and weight are guarded by the
  digest only: the rows in full are 2 MB, and ``make audit``'s baseline (audit/baseline.tsv) is
  their readable gate.
- ``fidelity/report.json`` and ``report.html`` -> ``fidelity/report.txt``: the report's tables
  with the long lists elided, and both files' sha256 (they are folded from the rows; the page
  renders the JSON).
- ``exports/`` -> ``exports.txt``: one line per export, its size and sha256. Each is an encoding
  of an entity that ``canonical/`` shows in full; the encoders' output is reviewed by the
  per-format tests under tests/formats/.
- ``blobs/`` -> ``blobs.txt``: one line per blob, its size, media type and first bytes (the name
  is the content's sha256, so the name is the digest).

**Why that is as strict as a digest of every file.** The test derives, from the golden text alone,
one sha256 per output file (:func:`digests_from_goldens`): the text goldens are rebuilt to the
exact bytes they stand for (pretty-printed JSON dumped back compact, ``orjson`` as the pipeline
writes it) and hashed; the others carry their sha256. Those digests must equal the run's own
(:func:`digests`), file for file, and no file may be missing or extra. The readable comparison
runs first, so a change fails with a text diff; the digest comparison then proves the text left
nothing out (``test_goldens.py`` also flips one byte of every output file and sees the check fail).

What legitimately varies between two runs of the same code on other machines is named instead, in
the text as written, and only that (:data:`VARIES`, :func:`normalised`):

- ``manifest.json``: ``started``, ``finished`` (times), ``runner``, ``python``, ``beam``,
  ``bunzai.version`` and ``bunzai.codecFingerprint`` (versions; the fingerprint is a digest of the
  codec library's source, which changes with any edit, outputs equal or not) and
  ``options.output`` (the absolute output folder).
- ``fidelity/report.json``: its ``bunzai`` version field.
- ``fidelity/report.html``: the version in its ``bunzai X.Y.Z ·`` subtitle.

These goldens replaced a list of 1,104 sha256 lines (``output-digests.tsv``, up to commit
"goldens: readable text ..." of issue 33). When they were written, the digests derived from them
equalled that list's for every file; the list hashed the manifest and report.json re-serialised
with sorted keys (so their layout went unguarded), the goldens hash them as written.

Size: ~1.6 MB of text in 9 files, the two largest the dataset (canonical, 0.58 MB) and the fidelity
rows (0.51 MB); a reviewer reads the diff a change makes, each hunk headed by the entity it is in.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[2]
GOLDENS = Path(__file__).resolve().parent / "goldens"
#: the options of the guarded run (``--output`` is added)
ARGS = ("--runner=FnApiRunner", "--input", "samples", "--fidelity", "full", "--export", "all")
VERSION = "<version>"
UPDATE = "make goldens (or pytest tests/pipeline/test_goldens.py --update-goldens)"

#: manifest fields that vary between runs of the same code: (path, why)
VARIES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("bunzai", "version"), "bunzai version"),
    (("bunzai", "codecFingerprint"), "digest of the codec source"),
    (("beam",), "beam version"),
    (("python",), "python version"),
    (("runner",), "runner name"),
    (("started",), "run time"),
    (("finished",), "run time"),
    (("options", "output"), "output folder"),
)


# -- the run and its digests ---------------------------------------------------------------------


def normalised(rel: str, data: bytes) -> bytes:
    """``data`` of output file ``rel`` with what varies between runs of the same code named instead:
    the bytes whose sha256 the guard compares. Only those values are replaced, in the text as
    written, so every other byte (layout included) stays guarded."""
    import bunzai_codecs

    if rel == "manifest.json":
        return manifest_text(rel, data).encode()
    if rel == "fidelity/report.json":
        return _name_values(rel, data, ((("bunzai",), VERSION),))
    if rel == "fidelity/report.html":
        return data.replace(f"bunzai {bunzai_codecs.__version__} ·".encode(), f"bunzai {VERSION} ·".encode())
    return data


def _name_values(rel: str, data: bytes, names: Sequence[tuple[tuple[str, ...], str]]) -> bytes:
    """``data`` (JSON written with ``orjson.OPT_INDENT_2``) with the value at each path replaced
    by its name, in place; an error when a value cannot be found once, unambiguously."""
    doc = orjson.loads(data)
    want = orjson.loads(data)
    for path, name in names:
        *parents, leaf = path
        node, expect = doc, want
        for p in parents:
            node, expect = node.get(p, {}), expect.get(p, {})
        if leaf not in node:
            continue
        expect[leaf] = name
        indent = b"  " * len(path)
        needle = b"\n" + indent + orjson.dumps(leaf) + b": " + orjson.dumps(node[leaf])
        if data.count(needle) != 1:
            raise ValueError(f"{rel}: {'.'.join(path)} is not found once as written")
        data = data.replace(needle, b"\n" + indent + orjson.dumps(leaf) + b": " + orjson.dumps(name))
    if orjson.loads(data) != want:
        raise ValueError(f"{rel}: naming {[n for _, n in names]} changed more than those values")
    return data


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_outputs(out: str | os.PathLike[str]) -> dict[str, bytes]:
    """Relative path -> bytes, for every file under ``out``."""
    root = Path(out)
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def digests(files: Mapping[str, bytes]) -> dict[str, str]:
    """Relative path -> sha256 of the normalised bytes."""
    return {rel: sha256(normalised(rel, data)) for rel, data in sorted(files.items())}


def run(out: str | os.PathLike[str]) -> dict[str, bytes]:
    """The guarded run into ``out`` (from the repository root); its output files."""
    from jobs.normalize import run as run_job

    here = os.getcwd()
    os.chdir(ROOT)
    try:
        code = run_job([*ARGS, "--output", str(out), "-q"])
    finally:
        os.chdir(here)
    if code != 0:
        raise RuntimeError(f"normalize exited {code}")
    return read_outputs(out)


# -- projections: output files -> golden text ----------------------------------------------------


def _header(what: str) -> str:
    return f"# golden of `bunzai normalize {' '.join(ARGS)}`: {what} (tests/pipeline/goldens.py; update: make goldens)\n"


def _digest_line(rel: str, data: bytes) -> str:
    return f"sha256 {sha256(normalised(rel, data))} {len(data)} bytes {rel}\n"


def _jsonl(data: bytes) -> list[Any]:
    return [orjson.loads(line) for line in data.split(b"\n") if line]


def _readable(value: Any, indent: str = "") -> str:
    """JSON a person reads down the page: objects one key a line, a list of scalars and each
    object inside a list on one line."""
    if isinstance(value, dict) and value:
        inner = indent + "  "
        body = ",\n".join(
            f"{inner}{orjson.dumps(k).decode()}: {_readable(v, inner)}" for k, v in value.items()
        )
        return "{\n" + body + "\n" + indent + "}"
    if isinstance(value, list) and value and any(isinstance(v, dict | list) for v in value):
        inner = indent + "  "
        items = (_readable(v, inner) if _nests(v) else orjson.dumps(v).decode() for v in value)
        return "[\n" + ",\n".join(inner + item for item in items) + "\n" + indent + "]"
    return orjson.dumps(value).decode()


def _nests(value: Any) -> bool:
    """Whether ``value`` holds a list of objects (printed one item a line rather than inline)."""
    if isinstance(value, dict):
        return any(_nests(v) for v in value.values())
    return isinstance(value, list) and any(isinstance(v, dict) for v in value)


def canonical_text(rel: str, data: bytes) -> str:
    """Every canonical line, pretty-printed (keys in the order written) under a line naming its
    entity; :func:`canonical_bytes` rebuilds the shard from it."""
    parts = [_header(f"{rel}, one entity per block, rebuilt byte for byte")]
    for line in data.split(b"\n")[:-1]:  # every line ends with a newline (else the rebuild differs)
        e = orjson.loads(line)
        src = e.get("source", {}) if isinstance(e, dict) else {}
        name = orjson.dumps(e.get("body", {}).get("name")).decode() if isinstance(e, dict) else "?"
        parts.append(f"\nentity {e.get('id')} · {e.get('kind')} {name} · {src.get('uri')}\n")
        parts.append(orjson.dumps(e, option=orjson.OPT_INDENT_2).decode() + "\n")
    return "".join(parts)


def canonical_bytes(text: str) -> bytes:
    lines, block = [], []
    for line in text.split("\n"):
        if line.startswith("entity ") or line.startswith("#") or not line:
            if block:
                lines.append(orjson.dumps(orjson.loads("\n".join(block))) + b"\n")
                block = []
            continue
        block.append(line)
    if block:
        lines.append(orjson.dumps(orjson.loads("\n".join(block))) + b"\n")
    return b"".join(lines)


def manifest_text(rel: str, data: bytes) -> str:
    """The manifest as written, with each field of :data:`VARIES` replaced by ``<varies: why>``."""
    return _name_values(rel, data, [(path, f"<varies: {why}>") for path, why in VARIES]).decode()


def verbatim_text(rel: str, data: bytes) -> str:
    return data.decode("utf-8")


def index_text(rel: str, data: bytes) -> str:
    """The parquet index's schema, key-value metadata and every row as one JSON line."""
    import io

    import pyarrow.parquet as pq

    table = pq.read_table(io.BytesIO(data))
    meta = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
    out = [_header(f"{rel}, its schema and rows as text; the parquet bytes by their digest")]
    out.append(f"\nschema ({table.num_rows} rows, metadata {orjson.dumps(meta).decode()})\n")
    out.extend(f"  {f.name}: {f.type}{'' if f.nullable else ' not null'}\n" for f in table.schema)
    out.append("\nrows\n")
    out.extend(orjson.dumps(row).decode() + "\n" for row in table.to_pylist())
    out.append("\n" + _digest_line(rel, data))
    return "".join(out)


def fidelity_rows_text(rel: str, data: bytes) -> str:
    """Each fidelity row on a line under its entity, with the paths it lost, changed and added."""
    out = [_header(f"{rel}, one line per row (findings by path; class, count and weight by the digest)")]
    entity = None
    for r in _jsonl(data):
        if r.get("entity") != entity:
            entity = r.get("entity")
            out.append(
                f"\nentity {entity} · {r.get('kind')} {orjson.dumps(r.get('name')).decode()}"
                f" · {r.get('source')} · {r.get('uri')}\n"
            )
        weights = f" weight {r['weight']} lost {r['lost_weight']}" if "weight" in r else ""
        error = f" error {orjson.dumps(r['error']).decode()}" if r.get("error") is not None else ""
        basis = r.get("basis") or {}
        how = f" basis {basis.get('how')}" if basis else ""
        how += f" pattern {basis['pattern']}" if basis.get("pattern") else ""
        how += " disagreed" if basis.get("disagreed") else ""
        out.append(f"  -> {r.get('target')} {r.get('check')} {r.get('status')}{weights}{error}{how}\n")
        for change in ("lost", "changed", "added"):
            if r.get(change):
                paths = ", ".join(
                    f["path"] + ("" if f.get("class") == "expected" else f" [{f.get('class')}]")
                    for f in r[change]
                )
                out.append(f"       {change}: {paths}\n")
    out.append("\n" + _digest_line(rel, data))
    return "".join(out)


def report_text(files: Mapping[str, bytes]) -> str:
    """The fidelity report's tables (per-cell path lists and examples elided) and the digests of
    report.json and report.html."""
    r = orjson.loads(files["fidelity/report.json"])
    if isinstance(r, dict):
        r["bunzai"] = VERSION
        r["entities"] = f"<{len(r.get('entities', {}))} entities: canonical/ names them>"
        for kind in r.get("kinds", {}).values():
            for cell in kind.get("matrix", []):
                cell["paths"] = f"<{len(cell.get('paths', []))} paths: fidelity rows golden>"
            for p in kind.get("lost_paths", []):
                for k in ("examples", "pairs"):
                    if k in p:
                        p[k] = f"<{len(p[k])}>"
    out = [_header("fidelity/report.json's tables, long lists elided; report.json and report.html by digest")]
    out.append("\n" + _readable(r) + "\n\n")
    out.extend(
        _digest_line(rel, files[rel])
        for rel in ("fidelity/report.json", "fidelity/report.html")
        if rel in files
    )
    return "".join(out)


def exports_text(files: Mapping[str, bytes]) -> str:
    out = [_header("every export with its size and sha256, by format")]
    fmt = None
    for rel in sorted(files):
        this = rel.split("/")[1]
        if this != fmt:
            fmt = this
            out.append(f"\n{fmt}\n")
        out.append(f"  {rel.split('/', 2)[2]}  {len(files[rel])} bytes  sha256 {sha256(files[rel])}\n")
    return "".join(out)


def blobs_text(files: Mapping[str, bytes]) -> str:
    """One line per blob (its name is its content's sha256): size, media type and first bytes."""
    from bunzai_codecs.core.media import sniff_mime

    out = [_header("every blob, named by its content's sha256: size, media type, first bytes")]
    out.extend(
        f"{rel}  {len(data)} bytes  {sniff_mime(data) or 'no media type'}  starts {data[:24]!r}\n"
        for rel, data in sorted(files.items())
    )
    return "".join(out)


PerFile = Callable[[str, bytes], str]
#: (output prefix, golden suffix, one golden per file) for the per-file views
PER_FILE: tuple[tuple[str, str, PerFile], ...] = (
    ("canonical/", ".txt", canonical_text),
    ("inventory/", "", verbatim_text),
    ("rejects/", "", verbatim_text),
    ("index/", ".txt", index_text),
    ("fidelity/rows-", ".txt", fidelity_rows_text),
)


def _golden_name(rel: str, suffix: str) -> str:
    stem = rel.rsplit(".", 1)[0] if suffix else rel
    return stem + suffix


def project(files: Mapping[str, bytes]) -> dict[str, str]:
    """Golden file name -> text, for a run's output files. Every file lands in exactly one golden;
    one that none claims is an error (a new kind of output needs a view here)."""
    goldens: dict[str, str] = {}
    grouped: dict[str, dict[str, bytes]] = {"exports": {}, "blobs": {}, "report": {}}
    for rel, data in sorted(files.items()):
        if rel == "manifest.json":
            goldens["manifest.json"] = manifest_text(rel, data)
        elif rel.startswith(("exports/", "blobs/")):
            grouped[rel.split("/")[0]][rel] = data
        elif rel in ("fidelity/report.json", "fidelity/report.html"):
            grouped["report"][rel] = data
        else:
            for prefix, suffix, view in PER_FILE:
                if rel.startswith(prefix):
                    goldens[_golden_name(rel, suffix)] = view(rel, data)
                    break
            else:
                raise ValueError(f"{rel}: no golden view claims this output (add one in {__name__})")
    if grouped["exports"]:
        goldens["exports.txt"] = exports_text(grouped["exports"])
    if grouped["blobs"]:
        goldens["blobs.txt"] = blobs_text(grouped["blobs"])
    if grouped["report"]:
        goldens["fidelity/report.txt"] = report_text(grouped["report"])
    return goldens


# -- goldens -> one digest per output file -------------------------------------------------------


def digests_from_goldens(goldens: Mapping[str, str]) -> dict[str, str]:
    """Output file -> sha256, from the golden text alone: text goldens rebuilt to the bytes they
    stand for and hashed, the others' recorded digests. Equal to :func:`digests` of a run exactly
    when every output byte is what the goldens say."""
    found: dict[str, str] = {}
    for name, text in goldens.items():
        if name == "manifest.json":
            found[name] = sha256(text.encode())
        elif name.startswith("canonical/"):
            found[name[: -len(".txt")] + ".jsonl"] = sha256(canonical_bytes(text))
        elif name.startswith(("inventory/", "rejects/")):
            found[name] = sha256(text.encode())
        elif name == "exports.txt":
            fmt = ""
            for line in text.split("\n"):
                if line and not line.startswith(("#", " ")):
                    fmt = line
                elif line.startswith("  "):
                    file, _, rest = line.strip().partition("  ")
                    found[f"exports/{fmt}/{file}"] = rest.rsplit(" ", 1)[1]
        elif name == "blobs.txt":
            for line in text.split("\n"):
                if line and not line.startswith("#"):
                    rel = line.split("  ", 1)[0]
                    found[rel] = rel.rsplit("/", 1)[1]
        else:  # index, fidelity rows, report: their digest lines
            for line in text.split("\n"):
                if line.startswith("sha256 "):
                    _, sha, _, _, rel = line.split(" ", 4)
                    found[rel] = sha
    return dict(sorted(found.items()))


def load(root: Path = GOLDENS) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != "README.md"
    }


def write(goldens: Mapping[str, str], root: Path = GOLDENS) -> list[str]:
    """Rewrite the golden folder to ``goldens``; the names written or removed."""
    changed = []
    old = load(root)
    for name in sorted(old.keys() - goldens.keys()):
        (root / name).unlink()
        changed.append(name)
    for name, text in sorted(goldens.items()):
        if old.get(name) != text:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text, encoding="utf-8")
            changed.append(name)
    return changed


def check_complete(files: Mapping[str, bytes], goldens: Mapping[str, str]) -> None:
    """Raise unless the digests derived from ``goldens`` (the projection of ``files``) equal the
    files' own: the projection left no byte unguarded."""
    want, got = digests(files), digests_from_goldens(goldens)
    bad = sorted(k for k in want.keys() | got.keys() if want.get(k) != got.get(k))
    if bad:
        raise ValueError(f"the golden text does not stand for every byte of {len(bad)} files: {bad[:5]}")


def differences(
    want: Mapping[str, str], got: Mapping[str, str], context: int = 2, limit: int = 120
) -> list[str]:
    """A unified diff (stored -> now) of each golden that differs, at most ``limit`` lines; each
    hunk names the entity (or export format) it falls in, as ``git diff`` does."""
    out: list[str] = []
    for name in sorted(want.keys() | got.keys()):
        a, b = want.get(name), got.get(name)
        if a == b:
            continue
        old = (a or "").split("\n")
        for line in difflib.unified_diff(
            old,
            (b or "").split("\n"),
            f"stored/{name}" if a is not None else "/dev/null",
            f"now/{name}" if b is not None else "/dev/null",
            n=context,
            lineterm="",
        ):
            if line.startswith("@@ -"):
                start = int(line[4:].split(",")[0].split(" ")[0])
                above = [x for x in old[: max(start - 1, 0)] if x[:1].isalpha()]
                line += f" {above[-1]}" if above else ""
            out.append(line)
    return out if len(out) <= limit else [*out[:limit], f"... {len(out) - limit} more diff lines"]


def compare(files: Mapping[str, bytes], stored: Mapping[str, str]) -> list[str]:
    """What differs between a run's ``files`` and the ``stored`` goldens: the text diff first, then
    (when the text agrees) any byte the digests see; empty when they agree."""
    now = project(files)
    diff = differences(stored, now)
    if diff:
        return diff
    want, got = digests_from_goldens(stored), digests(files)
    return [
        f"{rel}: goldens say sha256 {want.get(rel, 'absent')}, run wrote {got.get(rel, 'absent')}"
        for rel in sorted(want.keys() | got.keys())
        if want.get(rel) != got.get(rel)
    ]


def main(argv: Sequence[str] | None = None) -> int:
    import tempfile

    ap = argparse.ArgumentParser(
        prog="python -m tests.pipeline.goldens", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--update", action="store_true", help=f"rewrite {GOLDENS.relative_to(ROOT)}/ from a run")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        files = run(Path(tmp) / "out")
    if a.update:
        goldens = project(files)
        check_complete(files, goldens)
        changed = write(goldens)
        print(f"{len(changed)} golden files rewritten in {GOLDENS.relative_to(ROOT)}/: review `git diff`")
        for name in changed:
            print(f"  {name}")
        return 0
    problems = compare(files, load())
    print("\n".join(problems) if problems else f"{len(files)} output files match the goldens")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
