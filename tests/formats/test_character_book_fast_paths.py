"""``tavern/character_book.entry_to_body`` maps the value classes each field reader would store
unchanged, and the known ST ints of position/role/selectiveLogic, without calling the reader (the
hot loop of every card book: 7.7 -> 7.1 us per entry, docs/perf-notes/2026-11-30-codec-optimisations.md). The rule that makes that
right — the fast path gives exactly what the reader gives — is checked here, field by field and
over every sample book."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bunzai_codecs.core.errors import BunzaiError
from bunzai_codecs.formats._shared.wire import MapContext
from bunzai_codecs.formats.tavern import character_book as cb

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
_VALUES: dict[type, list[Any]] = {
    int: [0, 1, 2, 3, 4, 5, 7, 9, -1, 100, 10**12],
    type(None): [None],
    bool: [True, False],
    str: ["", "x", "0"],
}
_MISSING = object()


def test_every_fast_path_stores_what_its_reader_stores() -> None:
    ctx = MapContext("$")
    checked = 0
    for key, (field, reader, _rank, verbatim, names) in cb._X.items():
        for cls in verbatim:
            for v in _VALUES[cls]:
                row: dict[str, Any] = {}
                reader(row, field, v, ctx, key, False)
                got = row.get(field, _MISSING)
                assert got is not _MISSING and got == v and type(got) is type(v), (key, v, got)
                checked += 1
        for n, name in (names or {}).items():
            row = {}
            reader(row, field, n, ctx, key, False)
            assert row.get(field) == name, (key, n, row)
            checked += 1
    assert checked > 50 and not ctx.warnings


def _books() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for p in sorted(SAMPLES.rglob("*.json")):
        try:
            tree = json.loads(p.read_bytes())
        except ValueError:
            continue
        stack = [tree]
        while stack:
            t = stack.pop()
            if isinstance(t, dict):
                if cb.is_character_book(t):
                    out.append((str(p.relative_to(SAMPLES)), t))
                stack.extend(t.values())
            elif isinstance(t, list):
                stack.extend(t)
    return out


def _map(book: dict[str, Any]) -> Any:
    ctx = MapContext("$")
    try:
        entries = [cb.entry_to_body(e, i, ctx) for i, e in enumerate(book["entries"])]
    except BunzaiError as exc:
        return ("error", type(exc).__name__, str(exc))
    return entries, ctx.warnings


def test_sample_books_map_the_same_without_the_fast_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    books = _books()
    assert len(books) >= 5
    fast = [_map(b) for _, b in books]
    slow_table = {k: (f, r, rank, frozenset(), None) for k, (f, r, rank, _v, _n) in cb._X.items()}
    monkeypatch.setattr(cb, "_X", slow_table)
    slow = [_map(b) for _, b in books]
    for (name, _), a, b in zip(books, fast, slow, strict=True):
        assert a == b, name
