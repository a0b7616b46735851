"""Fidelity by pattern (``bunzai_codecs.fidelity.patterns``, docs/fidelity.md): a cross row
predicted from the observed rows of its pattern must be the row a write, a read back and a diff
give, over every sample and corpus file; the book the sample teaches is the same whatever order
its rows come in; a sample of 1 observes every row, as ``bunzai fidelity`` always did."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from bunzai_codecs.bundle import read_sniff
from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import sniff_kind
from bunzai_codecs.core.entity import Decoded
from bunzai_codecs.core.errors import BunzaiError
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.fidelity import (
    PatternBook,
    Patterns,
    check_decoded,
    learn_patterns,
    sample_of,
    sampled,
)
from bunzai_codecs.fidelity.checks import _cross, _cross_work, _Input
from bunzai_codecs.fidelity.patterns import Broken, Template, pattern_key
from bunzai_codecs.fidelity.rows import FidelityRow
from bunzai_codecs.fidelity.weights import _Dumps
from tests.conftest import ROOT, corpus_root


def _inputs() -> Iterator[tuple[str, bytes, str, Decoded]]:
    """``(key, bytes, format, decoded)`` of every sample and corpus file that decodes."""
    roots = [ROOT / "samples"] + ([corpus_root()] if corpus_root() is not None else [])
    for root in roots:
        assert root is not None
        for f in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix not in (".md", ".tsv")):
            data = f.read_bytes()
            s = Sniff(data, f.name, uri=str(f.relative_to(root.parent)))
            try:
                cand = registry.require(s)
                decoded = read_sniff(s, format=cand.id, score=cand.score)
            except BunzaiError:
                continue
            yield str(f.relative_to(root.parent)), data, cand.id, decoded


def _plain(row: FidelityRow) -> dict[str, object]:
    """A row's JSON form without how it was obtained."""
    d = row.to_json()
    d.pop("basis")
    return d


def _observed() -> list[tuple[str, str, FidelityRow, Template | None, object]]:
    """``(input, pattern key, observed row, its template or None, shape)`` of every cross row."""
    out = []
    for key, data, fmt, decoded in _inputs():
        inp = _Input(key, "", "", Path(key).name)
        dumps = _Dumps(keep=True)
        for e, shape, t in _cross_work(decoded, fmt, None, dumps, sniff_kind(data), order=True):
            row, parts = _cross(e, t, decoded.entities, inp, fmt, shape.units, dumps)
            out.append((key, pattern_key(shape, fmt, t), row, Template.learn(row, parts, shape), shape))
    return out


@pytest.mark.slow
def test_every_prediction_equals_the_observed_row() -> None:
    """Every observed cross row of samples + corpus is given back by its own template, and by the
    template the other rows of its pattern teach (leave one out) wherever that template claims to
    know the row: a prediction is never wrong on a real file."""
    rows = _observed()
    by_key: dict[str, list[int]] = {}
    for i, (_, key, _, _, _) in enumerate(rows):
        by_key.setdefault(key, []).append(i)
    own = cross = 0
    for i, (inp, key, row, template, shape) in enumerate(rows):
        if template is not None:
            made = template.predict(shape, row)  # type: ignore[arg-type]
            assert made is not None and made.to_json() == row.to_json(), (inp, row.target)
            own += 1
        others: Template | None = None
        for j in by_key[key]:
            if j == i:
                continue
            t = rows[j][3]
            if t is None:
                others = None
                break
            merged = t if others is None else others.merge(t)
            if isinstance(merged, str):
                others = None
                break
            others = merged
        if others is None:
            continue
        made = others.predict(shape, row)  # type: ignore[arg-type]
        if made is not None:
            assert _plain(made) == _plain(row), (inp, row.source, row.target, made.to_json(), row.to_json())
            cross += 1
    assert own > 1000  # the samples alone give about 1,800 cross rows, most of them learnable
    assert cross > 100, cross  # predictions from other inputs' rows were made, and checked


def _book(inputs: list[tuple[str, bytes, str, Decoded]]) -> PatternBook:
    book = PatternBook()
    for key, data, fmt, decoded in inputs:
        learn_patterns(data, decoded, book, source=fmt, input=key, name=Path(key).name)
    return book


@pytest.mark.slow
def test_the_plan_predicts_what_observing_gives_and_says_so() -> None:
    """``check_decoded`` under a plan: rows outside the sample predicted from a book of every
    sample file are the rows observing gives (their basis aside), each naming its pattern; an input
    the book was made from keeps ``observed``; the same-format rows are always observed."""
    inputs = [x for x in _inputs() if x[0].startswith("samples/")]
    book = _book(inputs)
    outside = Patterns(sample=1 << 62, book=book)  # no input in the sample: predict wherever known
    inside = Patterns(sample=1, book=book)
    predicted = 0
    for key, data, fmt, decoded in inputs:
        kw = {"source": fmt, "input": key, "name": Path(key).name}
        plain = check_decoded(data, decoded, **kw)
        made = check_decoded(data, decoded, patterns=outside, **kw)
        assert [_plain(r) for r in made] == [_plain(r) for r in plain], key
        for r in made:
            if r.check != "cross":
                assert r.basis == "observed" and not r.pattern
            else:
                assert len(r.pattern) == 16
                predicted += r.basis == "predicted"
        assert [r.to_json() for r in check_decoded(data, decoded, patterns=inside, **kw)] == [
            r.to_json() for r in plain
        ]
    assert predicted > 300, predicted


def test_a_sample_of_one_observes_every_row_as_before() -> None:
    key, data, fmt, decoded = next(
        x for x in _inputs() if x[0].endswith("Eldoria.json") or "lorebook" in x[0]
    )
    kw = {"source": fmt, "input": key, "name": Path(key).name}
    plain = check_decoded(data, decoded, **kw)
    assert all(r.basis == "observed" and not r.pattern for r in plain)
    assert [r.to_json() for r in check_decoded(data, decoded, patterns=Patterns(1), **kw)] == [
        r.to_json() for r in plain
    ]
    assert all(r.to_json()["basis"] == {"how": "observed"} for r in plain)


@pytest.mark.slow
def test_the_book_is_the_same_in_any_order() -> None:
    """A book folded from the same rows in another order, or merged from other partial books, has
    the same templates and the same broken patterns (the pipeline's combine may fold in any order)."""
    rows = _observed()

    def fold(order: list[int], parts: int) -> PatternBook:
        books = [PatternBook() for _ in range(parts)]
        for n, i in enumerate(order):
            inp, key, row, template, _ = rows[i]
            books[n % parts].add(key, template, input=inp, source=row.source, target=row.target)
        out = books[0]
        for b in books[1:]:
            out.merge(b)
        return out

    def view(book: PatternBook) -> dict[str, object]:
        out: dict[str, object] = {}
        for k, e in book.entries.items():
            t = e.template
            if isinstance(t, Broken):
                out[k] = ("broken", t.disagreed, t.inputs, e.members)
            else:
                out[k] = (sorted(t.fates.items(), key=repr), sorted(t.added, key=repr), t.states, e.members)
        return out

    first = view(fold(list(range(len(rows))), 1))
    rng = random.Random(7)
    for parts in (1, 3, 7):
        order = list(range(len(rows)))
        rng.shuffle(order)
        assert view(fold(order, parts)) == first
    assert any(v[0] == "broken" for v in first.values())  # the data has patterns that do not predict


def test_the_sample_is_one_in_k_by_the_digest_of_the_key() -> None:
    keys = [f"s3://bucket/cards/{i}.png" for i in range(20_000)]
    picked = [k for k in keys if sampled(k, 16)]
    assert 0.8 / 16 < len(picked) / len(keys) < 1.2 / 16
    assert picked == [k for k in keys if sampled(k, 16)]  # the same every time
    assert all(sampled(k, 1) for k in keys[:100])
    assert sample_of("1/16") == 16 and sample_of(" 1/1 ") == 1
    for bad in ("16", "2/16", "1/0", "1/x", ""):
        with pytest.raises(ValueError, match="1/K"):
            sample_of(bad)


def test_a_pattern_whose_rows_disagree_is_broken_and_its_rows_observed() -> None:
    """Two rows of one pattern a single template cannot both give: the book marks the pattern
    broken (disagreed, with its inputs by key), and ``check_decoded`` observes its rows and says so."""
    key, data, fmt, decoded = next(x for x in _inputs() if x[0] == "samples/sillytavern/regex-Censor.json")
    inp = _Input(key, "", "", Path(key).name)
    dumps = _Dumps(keep=True)
    e, shape, t = next(iter(_cross_work(decoded, fmt, None, dumps, sniff_kind(data))))
    row, parts = _cross(e, t, decoded.entities, inp, fmt, shape.units, dumps)
    good = Template.learn(row, parts, shape)
    assert good is not None
    # the same pattern where another source lost a path this one kept: a disagreement
    kept = next(k for k, f in good.fates.items() if f is None)
    bad = Template({**good.fates, kept: ("lost", "unexpected", True, None)}, good.added, good.states)
    assert isinstance(good.merge(bad), str)
    pkey = pattern_key(shape, fmt, t)
    book = PatternBook()
    book.add(pkey, good, input="b-input", source=fmt, target=t.id)
    book.add(pkey, bad, input="a-input", source=fmt, target=t.id)
    broken = book.get(pkey)
    assert isinstance(broken, Broken) and broken.disagreed and broken.inputs == ("a-input", "b-input")
    assert book.disagreements() == {pkey: broken}
    # a row no template gives back, beside a learnable one: a disagreement too
    other = PatternBook()
    other.add(pkey, None, input="c", source=fmt, target=t.id)
    assert isinstance(other.get(pkey), Broken) and not other.disagreements()  # alone: unpredictable
    other.add(pkey, good, input="d", source=fmt, target=t.id)
    assert list(other.disagreements()) == [pkey]
    rows = check_decoded(data, decoded, source=fmt, input=key, patterns=Patterns(1 << 62, book))
    row_of = next(r for r in rows if r.check == "cross" and r.target == t.id)
    assert row_of.basis == "observed" and row_of.disagreed and row_of.pattern == pkey
    assert row_of.to_json()["basis"] == {"how": "observed", "pattern": pkey, "disagreed": True}
