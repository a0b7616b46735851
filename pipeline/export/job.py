"""``bunzai export``: entities of a canonical dataset written in app formats, from the dataset alone.

    DATASET/manifest.json -> canonical shards -> ReadShards -> Select (--kind, --format, --id)
      -> BySource (the lines of one source file together: a card and the lorebook it embeds)
      -> Write (each selected entity in each --to format of its kind; blobs from DATASET/blobs/)
      -> CommitExports (identical source files give one id: the smallest uri wins)
      -> staged in OUT/.bunzai-staging/<run>/out/ -> Commit: nothing selected = refused (exit 3);
         else the previous manifest.json removed, the files moved into place, earlier files in
         the written folders pruned, manifest.json last

Output: ``OUT/<format>/<entity-id><ext>`` (the extension of the container the bytes are, as
``normalize --export`` names them), ``OUT/rejects/part-*.jsonl`` (entities a format refused) and
``OUT/manifest.json``. The original input files are never read: a same-format export is made from
the entity's escrow twin and media, which the dataset's lines and blob store hold.
"""

from __future__ import annotations

import argparse
import sys
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import apache_beam as beam
import orjson
from apache_beam.options.pipeline_options import PipelineOptions, SetupOptions, WorkerOptions
from apache_beam.pvalue import TaggedOutput

from bunzai_codecs.bundle import codec_for_export, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.entity import ENTITY_KINDS, CanonicalEntity
from bunzai_codecs.core.errors import BunzaiError
from bunzai_codecs.exitcodes import Exit, describe
from bunzai_codecs.formats.vaud.codec import from_tree
from bunzai_codecs.lint import ID_PATTERN
from pipeline.dataset.blobs import blob_rel
from pipeline.dataset.commit import STAGING, RunRefused
from pipeline.dataset.datasets import CANONICAL, reject_record
from pipeline.dataset.lines import LineMeta, ReadShards, line_meta
from pipeline.dataset.manifest import MANIFEST, ManifestError, read_manifest, shard_paths
from pipeline.export.files import CommitExports, ExportCandidate
from pipeline.normalize.elements import reject
from pipeline.runtime.counters import count
from pipeline.runtime.errors import UsageError
from pipeline.runtime.options import (
    _add_local_args,
    _Parser,
    beam_options,
    export_formats,
    is_local_url,
    is_remote,
)
from pipeline.runtime.secrets import literal_secrets, parse_storage_options, split_secrets
from pipeline.runtime.storage import (
    Output,
    Storage,
    is_local,
    join,
    list_files,
    move_file,
    remove_file,
    remove_tree,
    staged_path,
    write_bytes,
)

PROG = "bunzai export"
REJECTS_DIR = "rejects"


class DatasetProblem(Exception):
    """The dataset is missing, incomplete or not a bunzai dataset: exit 3."""


# -- options ------------------------------------------------------------------------------------


def _own_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "dataset", metavar="DATASET_URL", help="a normalize output folder (or its manifest.json)"
    )
    parser.add_argument(
        "--to",
        required=True,
        metavar="FMT[,FMT]",
        help="format ids or app names from `bunzai formats` (an app: its format for each kind), or all",
    )
    parser.add_argument("-o", "--output", required=True, metavar="OUT_URL", help="the output folder URL")
    parser.add_argument(
        "--kind",
        dest="kinds",
        action="append",
        default=None,
        choices=ENTITY_KINDS,
        help="only entities of this kind (repeatable)",
    )
    parser.add_argument(
        "--from",
        dest="source_formats",
        action="append",
        default=None,
        metavar="FMT",
        help="only entities read from files of this format (repeatable)",
    )
    parser.add_argument(
        "--format",
        dest="old_formats",
        action="append",
        default=None,
        metavar="FMT",
        help="deprecated: --from (the same option's old name, until the next release)",
    )
    parser.add_argument(
        "--id", dest="ids", action="append", default=None, metavar="ID", help="only this entity (repeatable)"
    )
    parser.add_argument(
        "--storage-options",
        "--storage_options",
        dest="storage_options",
        default=None,
        metavar="JSON",
        help="fsspec options, as for normalize; never written to any output or log",
    )


@dataclass(frozen=True)
class ExportConfig:
    dataset: str
    output: str
    to: tuple[str, ...]
    kinds: tuple[str, ...] = ()
    source_formats: tuple[str, ...] = ()
    ids: tuple[str, ...] = ()
    storage: Storage = field(default_factory=Storage)
    quiet: bool = field(default=False, compare=False)
    debug: bool = field(default=False, compare=False)

    @property
    def manifest_url(self) -> str:
        return self.dataset if self.dataset.endswith(f"/{MANIFEST}") else join(self.dataset, MANIFEST)

    @property
    def root(self) -> str:
        return self.manifest_url.rsplit("/", 1)[0]

    def public(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "output": self.output,
            "to": list(self.to),
            "kind": list(self.kinds),
            "format": list(self.source_formats),
            "id": list(self.ids),
            "storageOptions": "given (not recorded)" if self.storage.options else None,
        }


def own_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, add_help=False, allow_abbrev=False)
    _own_args(parser)
    _add_local_args(parser)
    return parser


def help_text() -> str:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Write the entities of a canonical dataset (a normalize output folder: lines and "
        "blobs, no original files) in app formats (an Apache Beam pipeline; any Beam option is "
        "accepted, e.g. --runner).",
        epilog=describe(
            (Exit.OK, Exit.USAGE, Exit.INPUT, Exit.FAILED, Exit.INTERRUPTED, Exit.TERMINATED),
            {
                Exit.OK: "formats that refuse an entity are rejects, listed",
                Exit.INPUT: "the dataset is missing or incomplete, or nothing matches the filters; nothing written",
                Exit.FAILED: "nothing committed",
            },
        ),
    )
    _own_args(parser)
    _add_local_args(parser)
    return parser.format_help()


def parse(argv: Sequence[str]) -> tuple[ExportConfig, PipelineOptions]:
    """The config and Beam's options; an argument that is neither ours nor Beam's is refused."""
    rest, secret = split_secrets(list(argv))
    parser = own_parser()
    o, beam_args = parser.parse_known_args(rest)
    options = beam_options(beam_args, parser, prog=PROG, positional="one DATASET_URL only")
    storage_options = parse_storage_options(secret)
    to = export_targets(o.to)
    if not to:
        raise UsageError("--to needs at least one format id or app name")
    if o.old_formats:
        if not o.quiet:
            print(
                f"{PROG}: note: --format is deprecated (it goes in the next release): use --from",
                file=sys.stderr,
            )
        o.source_formats = [*(o.source_formats or ()), *o.old_formats]
    for f in o.source_formats or ():
        if f not in registry.CODECS:
            raise UsageError(f"--from: unknown format {f!r} (see bunzai formats)")
    if "::" in o.output:
        raise UsageError("--output must be a folder URL, not a chain")
    if is_remote(options):
        for flag, url in (("DATASET_URL", o.dataset), ("--output", o.output)):
            if is_local_url(url):
                raise UsageError(
                    f"{flag} {url} is on this machine's disk, which Dataflow workers cannot read"
                )
        if literal_secrets(storage_options):
            raise UsageError("--storage-options: credentials on Dataflow must be gcp-secret: references")
        if not options.view_as(WorkerOptions).sdk_container_image:
            raise UsageError(
                "--sdk_container_image is required on Dataflow: the bunzai image (deploy/README.md)"
            )
        setup = options.view_as(SetupOptions)
        if setup.sdk_location in (None, "default"):
            setup.sdk_location = "container"  # the image's own Beam: nothing is staged or installed
    cfg = ExportConfig(
        dataset=o.dataset.rstrip("/") or "/",
        output=o.output.rstrip("/") or "/",
        to=to,
        kinds=tuple(dict.fromkeys(o.kinds or ())),
        source_formats=tuple(dict.fromkeys(o.source_formats or ())),
        ids=tuple(dict.fromkeys(o.ids or ())),
        storage=Storage(storage_options),
        quiet=bool(o.quiet),
        debug=bool(o.debug),
    )
    return cfg, options


# -- the dataset -------------------------------------------------------------------------------


def canonical_shards(cfg: ExportConfig) -> list[str]:
    """The URLs of the dataset's canonical shards, from its manifest (a folder without one is not a
    complete dataset)."""
    url = cfg.manifest_url
    try:
        m = read_manifest(cfg.storage, url, committed=True)
    except FileNotFoundError:
        raise DatasetProblem(f"{cfg.dataset} is not a complete dataset: no {MANIFEST}") from None
    except ManifestError as exc:
        raise DatasetProblem(str(exc)) from None
    return [join(cfg.root, rel) for rel in shard_paths(m).get(CANONICAL, ())]


def export_targets(text: str) -> tuple[str, ...]:
    """``--to``: format ids (as ``normalize --export`` takes them) and app names (an app: its
    format for each entity's kind, ``bundle.codec_for_export``), or ``all``."""
    names = [x.strip() for x in text.split(",") if x.strip()]
    apps = [n for n in names if n in registry.apps() and n not in registry.CODECS]
    try:
        ids = export_formats(",".join(n for n in names if n not in apps))
    except UsageError as exc:
        raise UsageError(
            f"{str(exc).replace('--export', '--to')}; or an app: {', '.join(registry.apps())}"
        ) from None
    return tuple(dict.fromkeys(n for n in names if n in apps or n in ids)) if names != ["all"] else ids


def targets_for(kind: str, to: tuple[str, ...], entity: CanonicalEntity | None = None) -> list[str]:
    """The ``--to`` targets that write entities of ``kind``: a format of that kind (vaud-json holds
    every kind), or an app with a format for it; given the ``entity``, a read-only format only when
    it writes that one (an entity read from one of its files)."""
    return [
        t
        for t in to
        if (
            t in registry.CODECS
            and registry.get(t).holds(kind)
            and (entity is None or registry.get(t).writes(entity))
        )
        or kind in registry.app_kinds(t)
    ]


def selected(meta: LineMeta, cfg: ExportConfig) -> bool:
    """Whether the filters pick this entity (each given filter must match)."""
    return (
        (not cfg.kinds or meta.kind in cfg.kinds)
        and (not cfg.source_formats or meta.format in cfg.source_formats)
        and (not cfg.ids or meta.id in cfg.ids)
        and bool(targets_for(meta.kind, cfg.to))
    )


# -- the stages ---------------------------------------------------------------------------------


def _keyed(line: bytes, cfg: ExportConfig) -> Iterator[Any]:
    meta = line_meta(line)
    count("export_lines")
    yield meta.uri, line
    if selected(meta, cfg):
        yield TaggedOutput("picked", meta.uri)


class _Write(beam.DoFn):
    """The lines of one source -> each selected entity in each requested format of its kind, staged
    as an ``ExportCandidate`` (``rejects`` for what a format refuses)."""

    def __init__(self, cfg: ExportConfig, output: Output, staging: str) -> None:
        self.cfg = cfg
        self.output = output
        self.staging = staging

    def setup(self) -> None:
        self.fs, self.root = self.output.open()
        self.dfs, self.droot = self.cfg.storage.fs(self.cfg.root)
        self.droot = self.droot.rstrip("/") or self.droot

    def _fetch(self, key: str) -> bytes:
        data: bytes = self.dfs.cat_file(f"{self.droot}/{blob_rel(key)}")
        return data

    def process(self, item: tuple[str, Any]) -> Iterator[Any]:
        uri, lines = item
        entities = []
        for line in sorted(lines):
            try:
                entities.append(from_tree(orjson.loads(line), uri=uri, fetch=self._fetch))
            except (BunzaiError, orjson.JSONDecodeError) as exc:
                yield TaggedOutput("rejects", reject(uri, "read", exc))
        for e in entities:
            src = e.source.format if e.source is not None else ""
            if not selected(LineMeta(e.id, e.kind, uri, src), self.cfg):
                continue
            count("entities_selected")
            written: set[str] = set()
            for fmt in targets_for(e.kind, self.cfg.to, e):
                try:
                    codec = codec_for_export(e, fmt)  # an app name: its format for the kind
                    if codec.id in written:
                        continue  # --to sillytavern,sillytavern-lorebook: one file per format
                    written.add(codec.id)
                    ex = write(e, codec.id, linked=entities)
                except Exception as exc:
                    yield TaggedOutput(
                        "rejects", reject(uri, "export", exc, prefix=f"{fmt}: {e.kind} {e.id}: ")
                    )
                    continue
                if not ID_PATTERN.match(e.id):  # ids become file names
                    bad = ValueError(f"not an entity id: {e.id!r}")
                    yield TaggedOutput("rejects", reject(uri, "export", bad, prefix=f"{fmt}: "))
                    continue
                staged = f"{self.root}/{self.staging}/exports/{uuid.uuid4().hex}"
                write_bytes(self.fs, staged, ex.data)
                count("exports_written")
                yield ExportCandidate(f"{ex.format}/{e.id}{ex.extension}", uri, staged=staged)


def _export_counts(rel: str) -> Iterator[tuple[tuple[str, ...], int]]:
    yield ("exports", rel.split("/", 1)[0]), 1


def _reject_counts(rec: dict[str, Any]) -> Iterator[tuple[tuple[str, ...], int]]:
    yield ("rejects", rec["stage"], rec["error"]), 1


class _Commit(beam.DoFn):
    """Once every file is staged: refused when nothing was selected, else move every staged file
    into place, remove files of the written folders this run did not write, write the manifest."""

    def __init__(self, cfg: ExportConfig, output: Output, staging: str) -> None:
        self.cfg = cfg
        self.output = output
        self.staging = staging

    def process(
        self, _: Any, rels: list[str], counts: list[Any], shards: list[Any], examples: list[Any]
    ) -> Any:
        c: dict[tuple[str, ...], int] = {}
        for k, n in counts:
            c[tuple(k)] = c.get(tuple(k), 0) + n
        exports = {k[1]: n for k, n in sorted(c.items()) if k[0] == "exports"}
        rejects: dict[str, dict[str, int]] = {}
        for k, n in sorted(c.items()):
            if k[0] == "rejects":
                rejects.setdefault(k[1], {})[k[2]] = n
        selected_n = c.get(("selected",), 0)
        fs, root = self.output.open()
        manifest: dict[str, Any] = {
            "exportVersion": 1,
            "options": self.cfg.public(),
            "selected": selected_n,
            "exports": {"total": sum(exports.values()), "byFormat": exports},
            "rejects": {
                "total": sum(sum(v.values()) for v in rejects.values()),
                "byStageError": rejects,
                "examples": sorted(examples)[:5],
            },
            "outputs": {
                "exports": "<format>/<entity-id><extension>",
                "rejects": [s for s in sorted(shards)],
            },
        }
        if selected_n == 0:
            message = "no entity of the dataset matches the filters and a --to format of its kind"
            manifest["commit"] = {"ok": False, "reason": "empty", "message": message}
            data = orjson.dumps(manifest, option=orjson.OPT_INDENT_2) + b"\n"
            write_bytes(fs, f"{root}/{staged_path(self.staging, MANIFEST)}", data)
            raise RunRefused(message)
        earlier = _earlier_exports(fs, root)
        # the previous manifest goes first: from here on the folder does not claim to be complete
        remove_file(fs, f"{root}/{MANIFEST}")
        placed = set()
        for rel in [*rels, *shards]:
            move_file(fs, f"{root}/{staged_path(self.staging, rel)}", f"{root}/{rel}")
            placed.add(rel)
        pruned = 0
        for top in sorted({r.split("/", 1)[0] for r in placed} | {REJECTS_DIR, *self.cfg.to} | earlier):
            base = f"{root}/{top}"
            if not fs.exists(base):
                continue
            for path, _info in list_files(fs, base, hidden=True):
                if path[len(root) + 1 :] not in placed:
                    remove_file(fs, path)
                    pruned += 1
            if is_local(fs) and not any(fs.find(base)):  # no empty folder left behind
                fs.rm(base, recursive=True)
        manifest["outputs"]["pruned"] = pruned
        manifest["commit"] = {"ok": True}
        remove_tree(fs, f"{root}/{STAGING}")
        write_bytes(fs, f"{root}/{MANIFEST}", orjson.dumps(manifest, option=orjson.OPT_INDENT_2) + b"\n")
        yield manifest


def _earlier_exports(fs: Any, root: str) -> set[str]:
    """The format folders an earlier export committed into this output folder (its manifest's
    ``exports.byFormat``): this run prunes them as its own, as ``normalize`` prunes its managed
    folders, so an export with other ``--to`` formats leaves none of the earlier files behind."""
    try:
        m = orjson.loads(fs.cat_file(f"{root}/{MANIFEST}"))
    except (FileNotFoundError, orjson.JSONDecodeError):
        return set()
    if not isinstance(m, dict) or "exportVersion" not in m or not m.get("commit", {}).get("ok"):
        return set()  # not an export's (a normalize output, a refused run): nothing of ours
    by_format = m.get("exports", {}).get("byFormat", {})
    return {f for f in by_format if isinstance(f, str) and f in registry.CODECS}


@dataclass(frozen=True)
class ExportBuilt:
    output: Output
    staging: str
    result: Any


def build_export(p: beam.Pipeline, cfg: ExportConfig, shard_urls: list[str]) -> ExportBuilt:
    from pipeline.dataset.shards import ShardSpec, WriteShards

    output = Output(cfg.output, cfg.storage)
    staging = f"{STAGING}/{uuid.uuid4().hex}"
    lines = p | "ReadCanonical" >> ReadShards(shard_urls, cfg.storage)
    keyed = lines | "Select" >> beam.FlatMap(_keyed, cfg).with_outputs("picked", main="lines")
    picked = beam.pvalue.AsDict(keyed.picked | "PickedSources" >> beam.Map(lambda u: (u, True)))
    groups = (
        keyed.lines
        | "OfPicked" >> beam.Filter(lambda kv, want: kv[0] in want, picked)
        | "BySource" >> beam.GroupByKey()
    )
    written = groups | "Write" >> beam.ParDo(_Write(cfg, output, staging)).with_outputs(
        "rejects", main="candidates"
    )
    settled = written.candidates | "CommitExports" >> CommitExports(output, staging)
    rejects = written.rejects
    shards = (
        rejects
        | "RejectRecords" >> beam.Map(reject_record)
        | "WriteRejects"
        >> WriteShards(REJECTS_DIR, ShardSpec(REJECTS_DIR), output, staging, target_bytes=128 << 20)
    )
    counts = [
        settled.staged | "CountExports" >> beam.FlatMap(_export_counts),
        rejects | "CountRejects" >> beam.FlatMap(_reject_counts),
        keyed.picked | "CountSelected" >> beam.Map(lambda _u: (("selected",), 1)),
    ]
    summed = tuple(counts) | "AllCounts" >> beam.Flatten() | "Sum" >> beam.CombinePerKey(sum)
    examples = (
        rejects
        | "Examples" >> beam.Map(lambda r: (r["uri"], r["stage"], r["error"], r["message"]))
        | "Some" >> beam.combiners.Top.Smallest(5)
        | "Flat" >> beam.FlatMap(lambda xs: xs)
    )
    result = (
        p
        | "Once" >> beam.Create([None])
        | "Commit"
        >> beam.ParDo(
            _Commit(cfg, output, staging),
            beam.pvalue.AsList(settled.staged),
            beam.pvalue.AsList(summed),
            beam.pvalue.AsList(shards | "ShardPaths" >> beam.Map(lambda s: s.rel)),
            beam.pvalue.AsList(examples),
        )
    )
    return ExportBuilt(output, staging, result)


__all__ = [
    "DatasetProblem",
    "ExportConfig",
    "build_export",
    "canonical_shards",
    "help_text",
    "parse",
    "selected",
]
