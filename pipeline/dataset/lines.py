"""Reading a dataset's JSONL shards: ``ReadShards`` (shard URLs -> their lines), the one reader that
``--since`` (the previous run's canonical lines, rows and inventory) and ``bunzai export`` (the
canonical lines) share, and ``line_meta``: what a canonical line is, without parsing it whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import apache_beam as beam
import orjson

from pipeline.runtime.storage import Storage, read_lines


class _ReadLines(beam.DoFn):
    """A shard's lines, streamed."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    def process(self, url: str) -> Iterator[bytes]:
        fs, path = self.storage.fs(url)
        for line in read_lines(fs, path):  # not fs.open: a transient error must not end the shard early
            line = line.rstrip(b"\n")
            if line:
                yield line


@dataclass
class ReadShards(beam.PTransform):
    """Shard URLs -> their lines (without newlines)."""

    urls: list[str]
    storage: Storage

    def expand(self, pbegin: Any) -> Any:
        return (
            pbegin
            | "Shards" >> beam.Create(self.urls)
            | "Spread" >> beam.Reshuffle()
            | "Lines" >> beam.ParDo(_ReadLines(self.storage))
        )


@dataclass(frozen=True, slots=True)
class LineMeta:
    """What a canonical line is: its entity's id and kind, and the source file's uri and format."""

    id: str
    kind: str
    uri: str
    format: str


def line_meta(line: bytes) -> LineMeta:
    """Id, kind and source (uri, format) of a canonical line without parsing its body and escrow.

    ``vaud-json`` writes ``schemaVersion``, ``kind``, ``id`` first and ``source`` after
    ``original`` (only ``warnings``, a list of strings, may follow), so the first ``"id"`` key and
    the last ``"source"`` object are the entity's own; orjson escapes every quote inside strings.
    A line that does not start so is parsed whole.
    """
    k = line.rfind(b',"source":{"uri":')
    i = line.find(b',"id":"')
    if line.startswith(b'{"schemaVersion":1,"kind":"') and k > i >= 0:
        kind = line[27 : line.index(b'"', 27)].decode()
        j = line.find(b'"', i + 7)
        try:
            src, _ = json.JSONDecoder().raw_decode(line[k + 10 :].decode("utf-8"))
            return LineMeta(line[i + 7 : j].decode(), kind, str(src["uri"]), str(src["format"]))
        except (ValueError, KeyError, TypeError):
            pass
    t = orjson.loads(line)
    return LineMeta(str(t["id"]), str(t["kind"]), str(t["source"]["uri"]), str(t["source"]["format"]))


__all__ = ["LineMeta", "ReadShards", "line_meta"]
