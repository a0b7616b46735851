"""Exports: ``Export`` writes each valid entity in the requested formats of its kind, and
``CommitExports`` settles the exports that may compete for one path.

Identical input files give entities with the same id, so their exports share a path. An input
whose size no other listed file has cannot collide: its exports are staged straight to their
paths. The others are staged under a unique name as an ``ExportCandidate``; ``CommitExports``
groups them by path and the smallest uri wins, so the file's bytes never depend on which worker
finished last. Under ``--since`` an unchanged input's exports are candidates too: the previous
run's files, copied (or kept where they are when the output folder is the same).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import apache_beam as beam
from apache_beam.pvalue import TaggedOutput

from bunzai_codecs import lint as lint_rules
from bunzai_codecs.bundle import write
from bunzai_codecs.core import registry
from bunzai_codecs.core.entity import CanonicalEntity
from pipeline.normalize.elements import REJECTS, ValidInput, reject
from pipeline.runtime.counters import count
from pipeline.runtime.storage import Output, copy_file, move_file, remove_file, staged_path, write_bytes

#: tagged output of ``Export``: paths staged straight to their place
WRITTEN = "written"
#: ``CommitExports``' output of exports the previous run left in place (``--since`` into its own folder)
KEPT = "kept"


@dataclass(frozen=True, slots=True)
class ExportCandidate:
    """An export ready to be committed to ``exports/<format>/<entity-id><ext>``.

    Identical input files give entities with the same id; their exports compete for one path and
    the smallest uri wins, so the file's bytes never depend on which worker finished last.
    """

    rel: str
    uri: str
    #: the staged bytes (a fresh export), or
    staged: str | None = None
    #: the previous run's file to copy (an unchanged input under ``--since``)
    previous: str | None = None


def export_formats_for(
    kind: str, formats: tuple[str, ...], entity: CanonicalEntity | None = None
) -> list[str]:
    """The requested formats that hold entities of ``kind`` (vaud-json holds every kind); given the
    ``entity``, those that write it (a read-only format writes only an entity read from it)."""
    return [
        f
        for f in formats
        if registry.get(f).holds(kind) and (entity is None or registry.get(f).writes(entity))
    ]


def export_rel(fmt: str, entity_id: str, extension: str) -> str:
    """``exports/<format>/<entity-id><ext>``; an id that is not a plain name never gets this far
    (lint rule ``entity.id``), and is refused here too: ids come from input files."""
    if not lint_rules.ID_PATTERN.match(entity_id):
        raise ValueError(f"not an entity id: {entity_id!r}")
    return f"exports/{fmt}/{entity_id}{extension}"


# -- Export --------------------------------------------------------------------------------------


class _Export(beam.DoFn):
    def __init__(self, formats: tuple[str, ...], output: Output, staging: str) -> None:
        self.formats = formats
        self.output = output
        self.staging = staging

    def setup(self) -> None:
        self.fs, self.root = self.output.open()

    def process(self, v: ValidInput) -> Iterator[Any]:
        linked = [ve.entity for ve in v.accepted]
        for ve in v.accepted:
            e = ve.entity
            for fmt in export_formats_for(e.kind, self.formats, e):
                try:
                    ex = write(e, fmt, linked=linked)
                except Exception as exc:
                    yield TaggedOutput(
                        REJECTS, reject(v.uri, "export", exc, prefix=f"{fmt}: {e.kind} {e.id}: ")
                    )
                    continue
                rel = export_rel(fmt, e.id, ex.extension)
                count("exports_written")
                if not v.file.shared:  # nobody else can write this path: straight to it (staged)
                    write_bytes(self.fs, f"{self.root}/{staged_path(self.staging, rel)}", ex.data)
                    yield TaggedOutput(WRITTEN, rel)
                    continue
                staged = f"{self.root}/{self.staging}/exports/{uuid.uuid4().hex}"
                write_bytes(self.fs, staged, ex.data)
                yield ExportCandidate(rel, v.uri, staged=staged)


@dataclass
class Export(beam.PTransform):
    """``ValidInput`` -> per (entity, requested format of its kind): the path written (``written``)
    when the input is not ``shared``, else an ``ExportCandidate`` staged under the output's staging
    folder (main); ``rejects`` for exports a codec refused. Linked entities a format embeds are
    embedded; each entity also gets its own files in the formats of its kind."""

    formats: tuple[str, ...]
    output: Output
    staging: str

    def expand(self, valid: Any) -> Any:
        dofn = _Export(self.formats, self.output, self.staging)
        return valid | beam.ParDo(dofn).with_outputs(REJECTS, WRITTEN, main="candidates")


# -- CommitExports -------------------------------------------------------------------------------


class _Commit(beam.DoFn):
    def __init__(self, output: Output, staging: str) -> None:
        self.output = output
        self.staging = staging

    def setup(self) -> None:
        self.fs, self.root = self.output.open()

    def process(self, item: tuple[str, Iterable[ExportCandidate]]) -> Iterator[Any]:
        rel, cands = item
        ordered = sorted(cands, key=lambda c: (c.uri, c.staged or "", c.previous or ""))
        winner, losers = ordered[0], ordered[1:]
        final = f"{self.root}/{staged_path(self.staging, rel)}"
        for c in losers:
            if c.staged:
                remove_file(self.fs, c.staged)
        if winner.staged:
            move_file(self.fs, winner.staged, final)
            yield rel
            return
        assert winner.previous is not None
        src_fs, src = self.output.storage.fs(winner.previous)
        if src_fs is self.fs and src == f"{self.root}/{rel}":
            # same output folder: the file is already where it goes; it stays there (the commit
            # keeps it rather than pruning it)
            if self.fs.exists(src):
                yield beam.pvalue.TaggedOutput(KEPT, rel)
            return
        try:
            copy_file(src_fs, src, self.fs, final)
        except FileNotFoundError:  # the previous run could not export it (its reject is carried)
            return
        yield rel


@dataclass
class CommitExports(beam.PTransform):
    """``ExportCandidate``s -> export paths (relative to the output): one winner per path, staged
    (main) or, for a ``--since`` run into the previous run's own folder, ``kept`` where it is."""

    output: Output
    staging: str

    def expand(self, candidates: Any) -> Any:
        return (
            candidates
            | "ByPath" >> beam.Map(lambda c: (c.rel, c))
            | "Group" >> beam.GroupByKey()
            | "Commit" >> beam.ParDo(_Commit(self.output, self.staging)).with_outputs(KEPT, main="staged")
        )


__all__ = [
    "KEPT",
    "WRITTEN",
    "CommitExports",
    "Export",
    "ExportCandidate",
    "export_formats_for",
    "export_rel",
]
