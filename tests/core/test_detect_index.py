"""Detection by the formats' claims (``core.claims``) ranks every input exactly as asking every format
does: the same winner, the same ranked candidates with the same scores, over the samples, the shared
corpus, the hostile inputs and the fuzz seeds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bunzai_codecs.core import basecache, registry
from bunzai_codecs.core.claims import Claims, features
from bunzai_codecs.core.format import Format
from bunzai_codecs.core.sniff import Sniff

ROOT = Path(__file__).resolve().parents[2]


def _files(root: Path) -> Iterator[tuple[str, bytes]]:
    for p in sorted(root.rglob("*")):
        if p.is_file() and p.suffix != ".md" and p.name != "EXPECT.tsv":
            yield str(p.relative_to(ROOT.parent)), p.read_bytes()


def _same_by_claims_as_by_every_format(name: str, data: bytes) -> None:
    every = registry.declarations()
    asked = registry.candidates(Sniff(data, name))
    by_claims = registry._detect_all(Sniff(data, name), asked)
    by_all = registry._detect_all(Sniff(data, name), every)
    assert by_claims == by_all, f"{name}: not asked {sorted({d.id for d in every} - {d.id for d in asked})}"
    assert registry._detect(Sniff(data, name), asked) == registry._detect(Sniff(data, name), every), name


def test_samples_rank_alike() -> None:
    """Every sample under its own name, and renamed with every suffix a format is saved with (a
    detector may read the name: a ``.voxpkg`` zip without characters is still Voxta's, weakly)."""
    suffixes = sorted({x for d in registry.declarations() for x in d.suffixes} | {""})
    n = 0
    for name, data in _files(ROOT / "samples"):
        _same_by_claims_as_by_every_format(name.rsplit("/", 1)[-1], data)
        for x in suffixes:
            _same_by_claims_as_by_every_format(f"renamed{x}", data)
        n += 1
    assert n > 40


def test_the_shared_corpus_ranks_alike(corpus: Path) -> None:
    n = 0
    for name, data in _files(corpus):
        _same_by_claims_as_by_every_format(name.rsplit("/", 1)[-1], data)
        n += 1
    assert n > 50


def test_fuzz_seeds_rank_alike() -> None:
    seeds = sorted((ROOT / "tests" / "fuzz" / "corpus").rglob("*"))
    files = [p for p in seeds if p.is_file()]
    assert len(files) > 50
    for p in files:
        for name in (p.name, f"{p.name}.png", f"{p.name}.json", f"{p.name}.zip"):
            _same_by_claims_as_by_every_format(name, p.read_bytes())


@pytest.mark.slow  # the 3000 hostile inputs, each detected twice
def test_hostile_inputs_rank_alike() -> None:
    from tests.hostile.generate import cases

    n = 0
    for case in cases():
        _same_by_claims_as_by_every_format(case.filename, case.data)
        n += 1
    assert n > 1000


def _unclaimed() -> set[str]:
    """The rows stating no claims: asked about every input."""
    return {d.id for d in registry.declarations() if not isinstance(d, Format) or d.claims is None}


def test_a_card_png_asks_only_the_formats_that_read_card_chunks() -> None:
    """A SillyTavern PNG card is asked of the Tavern card formats (and Pygmalion's, whose payload
    rides in ``chara``) and of any row without claims, not of every JSON, zip and preset format."""
    from bunzai_codecs.formats.tavern.png import write_png
    from tests.formats.helpers import tiny_png

    data = write_png(tiny_png(), {"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "M"}})
    asked = {d.id for d in registry.candidates(Sniff(data, "m.png"))}
    cards = {"sillytavern", "lumiverse", "rolecall", "rolecall-persona", "pygmalion"}
    assert asked - _unclaimed() == cards
    assert len(registry.declarations()) > 3 * len(cards)


def test_a_row_without_claims_is_asked_about_every_input(monkeypatch: pytest.MonkeyPatch) -> None:
    """A format added without claims (a new one, a plugin's) slots in: every input asks it."""
    import dataclasses

    inputs = ((b"[1]", "a.json"), (b"\x89PNG\r\n\x1a\n", "a.png"), (b"PK\x03\x04", "a.zip"))
    assert all("agnai" not in {d.id for d in registry.candidates(Sniff(d, n))} for d, n in inputs)
    table = dict(registry.CODECS)
    bare = dataclasses.replace(registry.BY_ID["agnai"], claims=None)
    monkeypatch.setitem(registry.BY_ID, "agnai", bare)
    with registry.using(table):
        for data, name in inputs:
            assert "agnai" in {d.id for d in registry.candidates(Sniff(data, name))}


def test_a_row_whose_claims_miss_an_input_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """With basecache.CHECK on (the test suite), a detection that asking every format contradicts
    raises, naming the formats left out."""
    import dataclasses

    assert basecache.CHECK
    data = (ROOT / "samples" / "sillytavern" / "lighthouse-keeper.v2.json").read_bytes()
    table = dict(registry.CODECS)
    wrong = dataclasses.replace(registry.BY_ID["sillytavern"], claims=Claims.of(json_keys=("nope",)))
    monkeypatch.setitem(registry.BY_ID, "sillytavern", wrong)
    with registry.using(table), pytest.raises(basecache.RuleBroken, match="sillytavern"):
        registry.detect_all(Sniff(data, "card.json"))


def test_features_are_what_claims_name() -> None:
    from bunzai_codecs.core import claims

    assert features(Sniff(b'{"spec": 1, "data": {}}', "x.json")) == {
        ("key", "spec"),
        ("key", "data"),
        ("suffix", ".json"),
    }
    assert features(Sniff(b"[1]", "")) == {claims.JSON_ARRAY}
    assert features(Sniff(b"{nope", "x")) == {claims.JSON_UNPARSED}
    assert features(Sniff(b"PK\x03\x04broken", "x.ZIP")) == {claims.ZIP_UNREADABLE, ("suffix", ".zip")}
    assert features(Sniff(b"\x6f\x00abc", "")) == {claims.OTHER_BYTES}
    assert features(Sniff(b"\x89PNG\r\n\x1a\nbroken", "")) == set()
