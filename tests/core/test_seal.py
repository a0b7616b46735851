"""``core.seal``: a decoded body is marked "unedited since decode", any edit of any body breaks the
mark, and a same-format write trusts it (checked against full validation in the test suite)."""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from pydantic import BaseModel

from bunzai_codecs import read, write
from bunzai_codecs.core import basecache, seal
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.errors import BunzaiError
from bunzai_codecs.entities import BODY_TYPES, LorebookBody
from bunzai_codecs.entities.lorebook import LoreEntry, Trigger
from bunzai_codecs.formats.tavern.character_book import BOOK_TAG

ROOT = Path(__file__).resolve().parents[2]
CARD = ROOT / "samples" / "sillytavern" / "lighthouse-keeper.v2.json"


def _card() -> tuple[CanonicalEntity, list[CanonicalEntity]]:
    d = read(CARD.read_bytes(), CARD.name)
    return d.primary, d.entities


def _book(entities: list[CanonicalEntity]) -> CanonicalEntity:
    return next(e for e in entities if e.kind == "lorebook")


def _marked(e: CanonicalEntity, tag: str = BOOK_TAG) -> bool:
    return seal.holds(e.body, tag, e.original["sillytavern"].raw)


def test_a_decoded_card_book_is_marked_and_a_write_of_it_is_the_file() -> None:
    card, entities = _card()
    book = _book(entities)
    assert _marked(book)
    assert _marked(card, "tavern-card:sillytavern")
    out = write(card, "sillytavern", linked=entities).data
    assert orjson.loads(out) == orjson.loads(CARD.read_bytes())


def _containers(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """Every list and dict a body's fields hold, model by model (not the values inside opaque bags)."""
    if isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield from _containers(getattr(value, name), f"{path}.{name}")
    elif isinstance(value, list | dict):
        yield path, value
        for i, x in enumerate(value.values() if isinstance(value, dict) else value):
            if isinstance(x, BaseModel):
                yield from _containers(x, f"{path}[{i}]")


def _samples() -> list[Path]:
    return sorted(p for p in (ROOT / "samples").rglob("*") if p.is_file() and p.suffix != ".md")


def test_every_list_and_dict_of_a_decoded_body_counts_its_edits() -> None:
    """Whatever built them (the mapper's dict, a default factory, a nested model's validator), the
    containers of every body decoded from samples/ are tracked ones."""
    seen = 0
    for p in _samples():
        try:
            d = read(p.read_bytes(), p.name)
        except BunzaiError:
            continue
        for e in d.entities:
            for path, c in _containers(e.body, e.kind):
                seen += 1
                assert isinstance(c, seal.TrackedList | seal.TrackedDict), f"{p.name}: {path} is a {type(c)}"
    assert seen > 500


EDITS: list[tuple[str, Callable[[LorebookBody], Any]]] = [
    ("field", lambda b: setattr(b, "name", "other")),
    ("nested field", lambda b: setattr(b.entries[0], "content", "x")),
    ("nested delattr", lambda b: delattr(b.entries[0], "comment")),
    ("append", lambda b: b.entries.append(b.entries[0])),
    ("extend", lambda b: b.entries.extend([])),
    ("insert", lambda b: b.entries.insert(0, b.entries[0])),
    ("pop", lambda b: b.entries.pop()),
    ("remove", lambda b: b.entries.remove(b.entries[0])),
    ("clear", lambda b: b.entries.clear()),
    ("sort", lambda b: b.entries.sort(key=lambda e: e.id)),
    ("reverse", lambda b: b.entries.reverse()),
    ("setitem", lambda b: b.entries.__setitem__(0, b.entries[-1])),
    ("delitem", lambda b: b.entries.__delitem__(0)),
    ("iadd", lambda b: b.entries.__iadd__([])),
    ("imul", lambda b: b.entries.__imul__(1)),
    ("nested list", lambda b: (b.entries[0].triggers or []).append(Trigger(text="new"))),
    ("default list", lambda b: b.categories.append(b.categories[0] if b.categories else None)),
    ("dict setitem", lambda b: b.extensions.__setitem__("k", 1)),
    ("dict delitem", lambda b: b.extensions.__delitem__(next(iter(b.extensions)))),
    ("dict pop", lambda b: b.extensions.pop("nope", None)),
    ("dict popitem", lambda b: b.extensions.popitem()),
    ("dict clear", lambda b: b.extensions.clear()),
    ("dict update", lambda b: b.extensions.update({})),
    ("dict setdefault", lambda b: b.extensions.setdefault("k", 1)),
    ("dict ior", lambda b: b.extensions.__ior__({})),
]


@pytest.mark.parametrize(("what", "edit"), EDITS, ids=[w for w, _ in EDITS])
def test_any_edit_breaks_the_mark(what: str, edit: Callable[[Any], Any]) -> None:
    card, entities = _card()
    if what.startswith("dict"):  # the card's extensions: a dict every character body has
        entity, tag = card, "tavern-card:sillytavern"
        assert card.body.extensions  # type: ignore[attr-defined]
    else:
        entity, tag = _book(entities), BOOK_TAG
    assert _marked(entity, tag)
    edit(entity.body)
    assert not _marked(entity, tag), what


def test_an_edit_to_another_body_breaks_every_earlier_mark() -> None:
    _, entities = _card()
    book = _book(entities)
    LorebookBody().tags = ["x"]  # any body, anywhere
    assert not _marked(book)


@pytest.mark.parametrize(
    "edit",
    [
        lambda b: b.entries[0].triggers.append(Trigger(text="added-key")),
        lambda b: b.entries[0].__setattr__("content", "added-key"),
        lambda b: b.entries.append(LoreEntry(id="99", content="added-key")),
        lambda b: b.entries[0].extensions.__setitem__("added-key", True),
    ],
)
def test_an_edit_in_place_is_written(edit: Callable[[Any], Any]) -> None:
    """The edit the mark must not hide: a write after it carries it."""
    card, entities = _card()
    book = _book(entities)
    if book.body.entries[0].extensions is None:  # type: ignore[attr-defined]
        book.body.entries[0].extensions = {}  # type: ignore[attr-defined]
    edit(book.body)
    out = write(card, "sillytavern", linked=entities).data
    assert b"added-key" in out


def test_bodies_built_otherwise_have_no_mark() -> None:
    _, entities = _card()
    book = _book(entities)
    raw = book.original["sillytavern"].raw
    body = book.body
    assert isinstance(body, LorebookBody)
    assert not seal.holds(body.model_copy(), BOOK_TAG, raw)
    assert not seal.holds(LorebookBody.model_validate(body.model_dump()), BOOK_TAG, raw)
    assert not seal.holds(body, BOOK_TAG, {**raw})  # another twin tree
    assert not seal.holds(body, "another-mapper", raw)
    again = pickle.loads(pickle.dumps(book))
    assert again.body == body
    assert not seal.holds(again.body, BOOK_TAG, again.original["sillytavern"].raw)


def test_the_suite_checks_a_mark_against_validation() -> None:
    """A mark on a body that is not its twin's validated mapping (an edit no hook saw: ``__dict__``
    written directly) is caught by the check the test suite runs, not written as the twin."""
    assert basecache.CHECK
    card, entities = _card()
    book = _book(entities)
    book.body.__dict__["name"] = "changed behind the hooks"
    seal.mark(book.body, BOOK_TAG, book.original["sillytavern"].raw)
    with pytest.raises(basecache.RuleBroken, match="mark"):
        write(card, "sillytavern", linked=entities)


def test_tracked_validation_gives_what_plain_validation_does() -> None:
    """Same values, same errors: only the container classes differ (the JSON schema and the
    serializer are built from the model's own core schema, untouched: docs/schema/ is checked)."""
    from pydantic import ValidationError
    from pydantic_core import SchemaValidator

    for kind, model in BODY_TYPES.items():
        plain = SchemaValidator(model.__pydantic_core_schema__, _use_prebuilt=False)
        for good in ({}, {"extensions": {"a": [1, {"b": 2}]}} if "extensions" in model.model_fields else {}):
            a, b = model.model_validate(good), plain.validate_python(good)
            assert a == b and a.model_dump_json() == b.model_dump_json(), kind
        bad = {"nope": 1}
        with pytest.raises(ValidationError) as tracked_err:
            model.model_validate(bad)
        with pytest.raises(ValidationError) as plain_err:
            plain.validate_python(bad)
        assert tracked_err.value.errors() == plain_err.value.errors()
