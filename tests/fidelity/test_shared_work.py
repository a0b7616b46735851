"""``check_decoded`` computes its cross rows from work shared across targets: the source bodies are
dumped once per input (``_Dumps``) and each path pattern is classed once per row (``_classer``).
These tests hold the shared path to the single check over every sample and corpus file: each cross
row ``check_decoded`` gives equals ``cross_format`` on that entity and target alone (nothing
shared), and each classing equals ``Coverage.covers`` asked for that very path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bunzai_codecs.bundle import read_sniff
from bunzai_codecs.core import basecache, registry
from bunzai_codecs.core.entity import Decoded
from bunzai_codecs.core.errors import BunzaiError
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.fidelity import check_decoded, content_units, cross_format, cross_targets, media_changes
from bunzai_codecs.fidelity.paths import _classer, _pattern_of
from bunzai_codecs.fidelity.weights import _Dumps
from tests.conftest import ROOT, corpus_root
from tests.formats.helpers import inputs_below


def _inputs() -> Iterator[tuple[str, bytes, str, Decoded]]:
    """``(key, bytes, format, decoded)`` of every sample and corpus file that decodes."""
    roots = [ROOT / "samples"] + ([corpus_root()] if corpus_root() is not None else [])
    for root in roots:
        assert root is not None
        for f, name, data in inputs_below(root):
            s = Sniff(data, name)
            try:
                cand = registry.require(s)
                decoded = read_sniff(s, format=cand.id, score=cand.score)
            except BunzaiError:
                continue
            yield str(f.relative_to(root.parent)), data, cand.id, decoded


@pytest.mark.slow
def test_the_shared_cross_rows_equal_each_check_alone() -> None:
    seen = 0
    for key, data, fmt, decoded in _inputs():
        name = Path(key).name
        shared = [
            r for r in check_decoded(data, decoded, source=fmt, input=key, name=name) if r.check == "cross"
        ]
        alone = [
            cross_format(e, t, pool=decoded.entities, input=key, source=fmt, name=name)
            for e in decoded.entities
            for t in cross_targets(e.kind, fmt)
        ]
        assert [r.to_json() for r in shared] == [r.to_json() for r in alone], key
        seen += len(shared)
    assert seen > 100  # the samples alone give several hundred cross rows


def test_a_shared_dump_is_a_separate_copy_equal_to_a_new_dump() -> None:
    for _, _, _, decoded in _inputs():
        dumps = _Dumps(keep=True)
        for e in decoded.entities:
            a, b = dumps.fresh(e), dumps.fresh(e)
            assert a == b == e.body.dump() and a is not b
            a.clear()  # a comparison edits its copy: the next one is whole
            assert dumps.fresh(e) == e.body.dump() == dumps.shared(e)


def test_a_fresh_dump_shares_only_what_no_comparison_edits() -> None:
    """``fresh`` copies the top level and ``media`` only (a comparison takes the media items out of
    ``media``; it edits nothing else of the source side): the rest is the kept dump's. ``verify``
    (run on every ``fresh`` and after ``check_decoded`` with ``basecache.CHECK`` on) holds each
    kept dump to its JSON text, so an edit of a shared value is caught, not trusted."""
    assert basecache.CHECK  # tests/conftest.py: the suite runs with the checks on
    with_media = nested = 0
    for _, _, _, decoded in _inputs():
        for e in decoded.entities:
            dumps = _Dumps(keep=True)
            a = dumps.fresh(e)
            media = a.get("media")
            if isinstance(media, dict) and (media.get("portrait") or media.get("assets")):
                media_changes(a, e.body.dump(), e.media, e.media, None)  # takes them out of ``a``
                assert "portrait" not in a["media"] and "assets" not in a["media"]
                with_media += 1
            dumps.verify()  # the kept dump is whole
            assert dumps.fresh(e) == e.body.dump() == dumps.shared(e)
            inner = next((k for k, v in a.items() if isinstance(v, dict) and k != "media"), None)
            if inner is None:
                continue
            a[inner]["x-edited"] = 1  # a value the copy shares with the kept dump
            with pytest.raises(basecache.RuleBroken):
                dumps.verify()
            with pytest.raises(basecache.RuleBroken):
                dumps.fresh(e)
            nested += 1
    assert with_media > 0 and nested > 10


def test_each_pattern_classed_once_is_classed_as_each_path() -> None:
    checked = 0
    for _, _, fmt, decoded in _inputs():
        for e in decoded.entities:
            dump = e.body.dump()
            paths = [p for p, _ in content_units(dump)]
            for t in cross_targets(e.kind, fmt):
                cov = t.coverage.for_body(dump)
                classed = _classer(cov)
                for p in paths:
                    want = "unexpected" if cov.covers(p) else "expected"
                    assert classed(p) == (_pattern_of(p), want), (t.id, p)
                    checked += 1
    assert checked > 1000


def test_a_coverage_answering_per_body_is_asked_per_path() -> None:
    """A reshape depends on the value at the concrete path (Risu splits a key holding a comma): the
    same pattern is covered for one entry and not for the next, so no pattern is classed once."""
    body = {"entries": [{"triggers": [{"text": "plain"}]}, {"triggers": [{"text": "a, b"}]}]}
    cov = registry.get("risu-lorebook").coverage.for_body(body)
    classed = _classer(cov)
    first, second = "entries[0].triggers[0].text", "entries[1].triggers[0].text"
    assert classed(first) == ("entries[].triggers[].text", "unexpected")
    assert classed(second) == ("entries[].triggers[].text", "expected")
