"""We detect what we write: for every format in the registry and every sample entity of its kind
(``samples/`` and, when present, the shared corpus), the bytes ``write(entity, format)`` gives are
detected as that format, and detection names the entity's kind.

A read-only format (``novelai-story``) writes only entities read from one of its files: it is
checked on those, and every other entity of its kind must be refused with ``Unsupported``.

The registry is iterated, never a hand list, so a new codec is covered the day it is registered. The
one allowance is structural: the Tavern card readers (``sillytavern`` and the app readers built on
it, ``lumiverse`` and ``rolecall``) share one wire shape, and an app reader claims any card carrying
its app's extension namespace. A SillyTavern export keeps every namespace a card carried (dropping
one would lose it), so a card that carries RoleCall's block is RoleCall's card too; and an app
reader's export of a card with nothing of its app is a plain Tavern card. There the detected reader
must read the bytes to the very entities the written format does: a different label, never a
different reading.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from conftest import ROOT, corpus_root

from bunzai_codecs import read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import Codec
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.errors import BunzaiError, Unsupported
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.formats.tavern.card import TavernCard
from tests.formats.helpers import inputs_below

_SKIP_NAMES = ("EXPECT.tsv",)


def _inputs() -> Iterator[tuple[str, str, bytes]]:
    """``(key, name, bytes)`` of every input, grouped as bunzai reads a folder (a card folder, a
    character YAML with its picture)."""
    roots = [("samples", ROOT / "samples")]
    corpus = corpus_root()
    if corpus is not None:
        roots.append(("corpus", corpus))
    for label, root in roots:
        for f, name, data in inputs_below(root):
            if f.name not in _SKIP_NAMES:
                yield f"{label}/{f.relative_to(root).as_posix()}", name, data


def _decoded() -> list[tuple[str, CanonicalEntity, list[CanonicalEntity]]]:
    """(input key, entity, the entities decoded beside it) for every entity of every input that
    decodes; inputs that do not (the corpus keeps a few on purpose) are not samples of any kind."""
    out = []
    for key, name, data in _inputs():
        try:
            d = read(data, name)
        except BunzaiError:
            continue
        out += [(key, e, d.entities) for e in d.entities]
    return out


ENTITIES = _decoded()
FORMATS = [c.id for c in registry.all_codecs()]


def _tavern(c: Codec) -> bool:
    return isinstance(c, TavernCard)


def _same_reading(s: Sniff, wrote: Codec, detected: Codec) -> bool:
    a, b = wrote.decode(s), detected.decode(s)
    return [(e.kind, e.body.dump()) for e in a.entities] == [(e.kind, e.body.dump()) for e in b.entities]


@pytest.mark.parametrize("format_id", FORMATS)
def test_we_detect_what_we_write(format_id: str) -> None:
    codec = registry.get(format_id)
    mine = [(k, e, pool) for k, e, pool in ENTITIES if format_id == "vaud-json" or e.kind == codec.kind]
    if codec.read_only:
        others = [e for _, e, _ in mine if e.twin(format_id) is None]
        mine = [(k, e, pool) for k, e, pool in mine if e.twin(format_id) is not None]
        assert others, f"{format_id} is read-only: some entity of kind {codec.kind} must be refused"
        for e in others:
            with pytest.raises(Unsupported, match="read-only"):
                write(e, format_id)
    assert mine, f"no sample entity of kind {codec.kind}: {format_id} is never checked"
    wrong = []
    for key, e, pool in mine:
        export = write(e, format_id, linked=pool)
        s = Sniff(export.data, "export" + export.extension)
        got = registry.detect(s)
        where = f"{key} ({e.kind} {e.id})"
        if got is None:
            wrong.append(f"{where}: not recognised")
            continue
        detected = registry.get(got.id)
        if got.id != format_id and not (
            _tavern(codec) and _tavern(detected) and _same_reading(s, codec, detected)
        ):
            wrong.append(f"{where}: detected as {got.id} ({got.score:.2f})")
            continue
        if detected.kind_of(s) != e.kind:
            wrong.append(f"{where}: detected kind {detected.kind_of(s)}")
    assert wrong == []
