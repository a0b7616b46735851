"""Committing a run: a previous run's files change only once this run is complete and sound.

Everything a run writes goes to its own staging folder inside the output,
``.bunzai-staging/<run>/``: the sorted runs of the shards, staged exports, and, under ``out/``,
every finished file under its final relative path (shards, exports, the fidelity report). The
previous run's files stay where they are, untouched, while this run reads them (``--since``).

When every file is staged and the counts are in, ``Commit`` decides (``verdict``):

- ``listing``: an input could not be listed (a store error, credentials, permissions), or a
  folder below it (refused, or gone while it was listed): the run does not know what it missed,
  so it must not replace or prune anything;
- ``empty``: an input does not exist or matched no file (unless ``--allow-empty``): most often a
  typo, which would otherwise replace last night's results with an empty run;
- ``unbalanced``: a listed input is neither an entity's source nor a reject (a bug);
- otherwise ``ok``, and the commit runs: the previous ``manifest.json`` is removed (the folder
  says it is incomplete from here on), staged files are moved into place, files of the managed
  folders this run did not write are removed, then the new manifest is written and every staging
  folder removed.

A run that is refused touches nothing outside its staging folder: its manifest, with the verdict,
is written beside its staged files (``.bunzai-staging/<run>/out/manifest.json``) and the run fails
with ``RunRefused``,
so a scheduler sees a failed job on every runner. The job (jobs/normalize.py) reads that manifest,
says why in one line, and removes the staging folder (an unbalanced run's is kept, to inspect).

What is left: a run killed between the removal of the previous manifest and the writing of its
own leaves a folder without ``manifest.json`` (incomplete, and saying so) with some files moved
and the rest still staged. A re-run into the folder rewrites it whole; ``--since`` cannot use it.
On S3 and GCS a move is a copy then a delete (``storage.move_file``); docs/architecture.md, "The
commit on object stores", says what a reader sees and what a kill leaves at each step.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import apache_beam as beam
import orjson

from pipeline.dataset.manifest import MANIFEST, build_manifest, now
from pipeline.dataset.prune import Prune
from pipeline.runtime.bundles import counted
from pipeline.runtime.storage import Output, move_file, remove_file, remove_tree, staged_path, write_bytes

#: the parent of every run's staging folder, inside the output
STAGING = ".bunzai-staging"

#: verdict reasons, and what they mean to the job's exit code (jobs/normalize.py)
LISTING, EMPTY, UNBALANCED = "listing", "empty", "unbalanced"


class RunRefused(RuntimeError):
    """The run finished but is not committed (the verdict's message says why)."""


def staging_parent(staging: str) -> str:
    """``.bunzai-staging`` of ``.bunzai-staging/<run>``."""
    return staging.rsplit("/", 1)[0]


def _more(n: int) -> str:
    return f" (and {n} more)" if n > 0 else ""


def verdict_of(
    manifest: dict[str, Any],
    list_rejects: Sequence[dict[str, Any]],
    inputs: Sequence[str],
    allow_empty: bool,
) -> dict[str, Any]:
    """``{"ok": True}`` or ``{"ok": False, "reason": ..., "message": one line}``.

    ``list_rejects``: the listing's rejects. One whose uri is an input itself, whose error is
    ``FileNotFoundError`` and whose input listed no file says the input does not exist: like an
    input that matched nothing, that is refused unless ``allow_empty``. Any other is a listing that
    failed part-way (a folder below an input that vanished or was refused, an input that vanished
    after some of its files were listed): the run does not know what it missed."""
    listed_some = {p["input"] for p in manifest["inputs"]["patterns"] if p["matched"]}
    missing = {
        r["uri"]
        for r in list_rejects
        if r["error"] == "FileNotFoundError" and r["uri"] in inputs and r["uri"] not in listed_some
    }
    failed = sorted(
        (r for r in list_rejects if r["uri"] not in missing),
        key=lambda r: (r["uri"], r["error"], r["message"]),
    )
    if failed:
        r = failed[0]
        message = f"cannot list {r['uri']}: {r['error']}: {r['message']}".rstrip(": ")
        return {"ok": False, "reason": LISTING, "message": message + _more(len(failed) - 1)}
    if not allow_empty:
        empty = [
            f"{p['input']} does not exist" if p["input"] in missing else f"{p['input']} matched no file"
            for p in manifest["inputs"]["patterns"]
            if not p["matched"]
        ]
        if empty:
            return {
                "ok": False,
                "reason": EMPTY,
                "message": empty[0] + _more(len(empty) - 1) + " (--allow-empty runs anyway)",
            }
    bal = manifest["balance"]
    if not bal["ok"]:
        return {
            "ok": False,
            "reason": UNBALANCED,
            "message": f"the manifest does not balance: {bal['unaccounted']} listed input(s) unaccounted "
            f"for, {bal['unlisted']} unlisted, {bal['inventoryRows']} inventory rows for "
            f"{bal['listed']} listed (a bug: please report it)",
        }
    return {"ok": True}


#: ``_Decide``'s tagged output: the verdict
VERDICT = "verdict"


class _Decide(beam.DoFn):
    """The manifest but for the commit's own fields (``finished``, ``pruned``, ``commit``; main)
    and the verdict (``VERDICT``), once every file is staged; on ``ok`` removes the previous
    manifest first."""

    def __init__(
        self, header: dict[str, Any], output: Output, inputs: Sequence[str], allow_empty: bool
    ) -> None:
        self.header = header
        self.output = output
        self.inputs = list(inputs)
        self.allow_empty = allow_empty

    def process(
        self,
        _: Any,
        counts: Any,
        patterns: Any,
        shards: Any,
        balance: Any,
        examples: Any,
        list_rejects: Any,
        staged: Any,
    ) -> Any:
        # ``staged`` (partial counts of the staged files) is only a barrier: every file of the
        # run is staged when this runs
        draft = build_manifest(
            **self.header,
            finished="",
            counts=counts,
            patterns=patterns,
            shards=shards,
            balance=balance,
            pruned=0,
            reject_examples=examples,
        )
        verdict = verdict_of(draft, list_rejects, self.inputs, self.allow_empty)
        if verdict["ok"]:
            fs, root = self.output.open()
            remove_file(fs, f"{root}/{MANIFEST}")
        yield draft
        yield beam.pvalue.TaggedOutput(VERDICT, verdict)


class _Publish(beam.DoFn):
    """A staged file -> moved to its place, when the verdict is ok."""

    def __init__(self, output: Output, staging: str) -> None:
        self.output = output
        self.staging = staging

    def setup(self) -> None:
        self.fs, self.root = self.output.open()

    def process(self, rel: str, verdict: dict[str, Any]) -> Iterator[str]:
        if verdict["ok"]:
            move_file(self.fs, f"{self.root}/{staged_path(self.staging, rel)}", f"{self.root}/{rel}")
            yield rel


class _WriteManifest(beam.DoFn):
    def __init__(self, output: Output, staging: str, options: dict[str, Any] | None = None) -> None:
        self.output = output
        self.staging = staging
        self.options = options or {}

    def display_data(self) -> dict[str, Any]:  # the job page (Dataflow) shows what is written
        return {
            "output": self.output.url,
            "export": ",".join(self.options.get("export") or ()),
            "fidelity": str(self.options.get("fidelity", "")),
        }

    def process(self, _: Any, draft: dict[str, Any], verdict: dict[str, Any], pruned: Any) -> Iterator[str]:
        manifest = dict(draft, finished=now(), commit=verdict)
        manifest["outputs"] = dict(manifest["outputs"], pruned=sum(pruned))
        data = orjson.dumps(manifest, option=orjson.OPT_INDENT_2) + b"\n"
        fs, root = self.output.open()
        if not verdict["ok"]:  # beside the staged files: a folder to inspect, as it would have been
            write_bytes(fs, f"{root}/{staged_path(self.staging, MANIFEST)}", data)
            raise RunRefused(verdict["message"])
        # the whole staging folder: this run's, and whatever a run that was interrupted (or
        # refused) left there: a re-run must leave exactly what an uninterrupted run leaves
        remove_tree(fs, f"{root}/{staging_parent(self.staging)}")
        write_bytes(fs, f"{root}/{MANIFEST}", data)
        yield self.output.display(MANIFEST)


@dataclass
class Commit(beam.PTransform):
    """The run's numbers and files -> the verdict, then (when ok) the commit; yields the manifest's
    URL. Takes a dict: ``counts``, ``patterns``, ``shards``, ``balance`` and ``reject_examples``
    (the manifest's parts), ``list_rejects`` (the listing's rejects), ``staged`` (paths of staged
    files, relative to the output) and ``kept`` (paths left in place; None: none).

    Barriers (everything staged before the verdict, everything in place before the prune, the
    prune done before the manifest) are side inputs of partial counts made per bundle
    (pipeline/runtime/bundles.py): no step of their own."""

    output: Output
    staging: str
    header: dict[str, Any]
    inputs: Sequence[str]
    allow_empty: bool

    def expand(self, parts: dict[str, Any]) -> Any:
        p = parts["counts"].pipeline
        staged, kept = parts["staged"], parts.get("kept")
        once = p | "Once" >> beam.Create([None])
        files = [counted(staged, "CountStaged")]
        if kept is not None:
            files.append(counted(kept, "CountKept"))
        decided = once | "Verdict" >> beam.ParDo(
            _Decide(self.header, self.output, tuple(self.inputs), self.allow_empty),
            beam.pvalue.AsList(parts["counts"]),
            beam.pvalue.AsList(parts["patterns"]),
            beam.pvalue.AsList(parts["shards"]),
            beam.pvalue.AsList(parts["balance"]),
            beam.pvalue.AsList(parts["reject_examples"]),
            beam.pvalue.AsList(parts["list_rejects"]),
            beam.pvalue.AsList(tuple(files) | "Staged" >> beam.Flatten()),
        ).with_outputs(VERDICT, main="draft")
        verdict = decided[VERDICT]
        gate = beam.pvalue.AsSingleton(verdict)
        placed = staged | "Publish" >> beam.ParDo(_Publish(self.output, self.staging), gate)
        if kept is not None:
            placed = (
                placed,
                kept | "Keep" >> beam.Filter(lambda _rel, v: v["ok"], gate),
            ) | "Placed" >> beam.Flatten()
        pruned = counted(placed | "Prune" >> Prune(self.output, verdict), "CountPruned")
        return once | "Manifest" >> beam.ParDo(
            _WriteManifest(self.output, self.staging, self.header.get("options")),
            beam.pvalue.AsSingleton(decided.draft),
            gate,
            beam.pvalue.AsList(pruned),
        )


__all__ = [
    "EMPTY",
    "LISTING",
    "STAGING",
    "UNBALANCED",
    "Commit",
    "RunRefused",
    "staging_parent",
    "verdict_of",
]
