"""Every real file EXPECT.tsv names as `sillytavern` or `sillytavern-regex` detects, round-trips and is
canonically stable; the cards also survive a fresh CCv3 JSON export (no escrow) with their meaning."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import corpus_root, expect_rows
from st_helpers import rt_compare

from bunzai_codecs import read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import EmitContext
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.sniff import Sniff

ROWS = [r for r in expect_rows("sillytavern") if r[1] in ("sillytavern", "sillytavern-regex")]
IDS = [r[0] for r in ROWS]


def _path(rel: str) -> Path:
    root = corpus_root()
    if root is None:
        pytest.skip("shared corpus not present")
    return root / rel


def test_the_corpus_has_the_rows_this_suite_expects() -> None:
    if corpus_root() is None:
        pytest.skip("shared corpus not present")
    fmts = {f for _, f in ROWS}
    assert fmts == {"sillytavern", "sillytavern-regex"}
    assert len(ROWS) >= 17


@pytest.mark.parametrize(("rel", "fmt"), ROWS, ids=IDS)
def test_corpus_file_detects_as_expected(rel: str, fmt: str) -> None:
    s = Sniff(_path(rel).read_bytes(), rel)
    d = registry.detect_all(s)
    assert d.best is not None and d.best.id == fmt, d.candidates


@pytest.mark.parametrize(("rel", "fmt"), ROWS, ids=IDS)
def test_corpus_file_round_trips_and_is_canonically_stable(rel: str, fmt: str) -> None:
    data = _path(rel).read_bytes()
    decoded = read(data, rel)
    assert all(not e.warnings for e in decoded.entities), [e.warnings for e in decoded.entities]
    out = write(decoded.primary, fmt, linked=decoded.entities)
    assert rt_compare(data, out.data) == []
    again = read(out.data, rel)
    assert [e.kind for e in again.entities] == [e.kind for e in decoded.entities]
    assert [e.body for e in again.entities] == [e.body for e in decoded.entities]
    # every linked entity went back into the file: nothing is written beside it
    assert out.beside == []


@pytest.mark.parametrize(("rel", "fmt"), ROWS, ids=IDS)
def test_corpus_file_survives_vaud_json_and_back(rel: str, fmt: str) -> None:
    """The escrow twin (PNG bytes included) survives the canonical JSONL form."""
    data = _path(rel).read_bytes()
    decoded = read(data, rel)
    line = write(decoded.primary, "vaud-json", linked=decoded.entities).data
    back = read(line, "x.vaud.json")
    out = write(back.primary, fmt, linked=back.entities).data
    assert rt_compare(data, out) == []


def _fresh(e: CanonicalEntity) -> CanonicalEntity:
    """The same body with no escrow: what another app's codec hands to this one."""
    return CanonicalEntity(kind=e.kind, id=e.id, body=e.body, links=dict(e.links), media=e.media)


CARD_ROWS = [r for r in ROWS if r[1] == "sillytavern"]


def _media_items(body: dict[str, Any]) -> list[dict[str, Any]]:
    m = body.get("media") or {}
    return [x for x in [m.get("portrait"), *(m.get("assets") or [])] if x is not None]


@pytest.mark.parametrize(("rel", "fmt"), CARD_ROWS, ids=[r[0] for r in CARD_ROWS])
def test_card_to_fresh_ccv3_json_to_card_keeps_the_meaning(rel: str, fmt: str) -> None:
    """Cross-format: card -> CCv3 JSON written without any escrow -> card. Every mapped field and
    every linked entity comes back; the only normalisation is the one named in the docs (a fresh
    V2/V3 card writes every spec-required text, so an absent one reads back as "")."""
    decoded = read(_path(rel).read_bytes(), rel)
    fresh = [_fresh(e) for e in decoded.entities]
    ctx = EmitContext.for_entities(fresh, container="json")
    out = registry.get("sillytavern").encode(fresh[0], ctx)
    assert out.lstrip().startswith(b"{")
    assert ctx.embedded == {e.id for e in fresh[1:]}
    back = read(out, "card.json")
    assert back.primary.source is not None and back.primary.source.format == "sillytavern"
    got = back.primary.body.dump()
    want = decoded.primary.body.dump()
    for section, key in [
        ("prompts", "systemPrompt"),
        ("prompts", "postHistoryInstructions"),
        ("attribution", "creator"),
        ("attribution", "creatorNotes"),
        ("identity", "characterVersion"),
        ("persona", "personality"),
        ("persona", "scenario"),
        ("examples", "exampleMessages"),
        ("identity", "description"),
        ("greetings", "firstMessage"),
    ]:
        if key not in want[section]:
            assert got[section].pop(key) == ""  # the named normalisation
    for section, key in [("greetings", "alternateGreetings"), ("discovery", "tags")]:
        if key not in want[section]:
            assert got[section].pop(key) == []
    if "groupOnlyGreetings" not in want["greetings"]:
        assert got["greetings"].pop("groupOnlyGreetings") == []
    # a JSON card holds a PNG card's picture as a data: URL: the same bytes under another ref
    for g, w in zip(_media_items(got), _media_items(want), strict=True):
        if w.get("sha256") is not None:
            assert g.pop("ref").startswith("data:") and g["sha256"] == w["sha256"]
            w.pop("ref")
    assert got == want
    assert [e.body for e in back.entities[1:]] == [e.body for e in decoded.entities[1:]]
