"""``overlay.holds_mapped`` answers "does this body equal its twin's mapped dict, validated?" without
validating (docs/perf-notes/2026-12-02-codec-and-fidelity-second-pass.md: the re-validation was a third of a conversion). These tests hold
it to the question it short-cuts: over the bodies of every sample and corpus file, unedited and after
in-place edits of every kind, its answer is ``model_validate(mapped) == body`` whenever it says yes;
and ``overlay_twin`` with ``basecache.CHECK`` on raises where the two would differ."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from bunzai_codecs.core import basecache, overlay
from bunzai_codecs.core.overlay import holds_mapped, overlay_twin, unedited
from bunzai_codecs.entities.base import Body
from bunzai_codecs.entities.character import CharacterBody
from bunzai_codecs.entities.lorebook import LorebookBody, LoreEntry, Trigger
from tests.fidelity.test_shared_work import _inputs


@pytest.fixture(autouse=True)
def _fresh_plans(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test plans every model it meets afresh (``holds_mapped`` memoises a plan per model class
    for the process: without this, a test would check the plans earlier tests made)."""
    monkeypatch.setattr(overlay, "_PLANS", {})


def _pairs() -> Iterator[tuple[Body, dict[str, Any]]]:
    """``(body, the dict it was validated from)`` of every entity of every sample and corpus file:
    the dict is the body's own dump read back (the shape a mapper gives, defaults left out)."""
    for _, _, _, decoded in _inputs():
        for e in decoded.entities:
            yield e.body, e.body.model_dump(exclude_unset=True)


def _edits(body: Body) -> Iterator[tuple[str, Callable[[Body], None]]]:
    """In-place edits a user of the library may make, each applied to a fresh copy."""
    yield "nothing", lambda b: None
    if isinstance(body, LorebookBody) and body.entries:
        yield "an entry appended", lambda b: b.entries.append(LoreEntry(id="new", title="t", content="c"))  # type: ignore[attr-defined]
        yield "an entry removed", lambda b: b.entries.pop()  # type: ignore[attr-defined]
        yield "content edited", lambda b: setattr(b.entries[0], "content", "edited")  # type: ignore[attr-defined]
        yield "a bool set to 1", lambda b: setattr(b.entries[0], "enabled", 1 if b.entries[0].enabled else 0)  # type: ignore[attr-defined]
        yield "a bool set to 2", lambda b: setattr(b.entries[0], "enabled", 2)  # type: ignore[attr-defined]
        yield "depth set to a float", lambda b: setattr(b.entries[0], "depth", float(b.entries[0].depth))  # type: ignore[attr-defined]
        yield "triggers emptied", lambda b: setattr(b.entries[0], "triggers", [])  # type: ignore[attr-defined]
        yield "triggers set to None", lambda b: setattr(b.entries[0], "triggers", None)  # type: ignore[attr-defined]
        yield "a trigger added", lambda b: (b.entries[0].triggers or []).append(Trigger(text="x"))  # type: ignore[attr-defined]
        yield "a trigger as a dict", lambda b: setattr(b.entries[0], "triggers", [{"text": "x"}])  # type: ignore[attr-defined]
        yield "extensions edited in place", lambda b: setattr(b.entries[0], "extensions", {"k": [1]})  # type: ignore[attr-defined]
    for name in type(body).model_fields:
        v = getattr(body, name)
        if isinstance(v, str):
            yield f"{name} edited", _set(name, v + "!")
        elif v is not None:
            yield f"{name} cleared", _set(name, None)


def _set(name: str, value: Any) -> Callable[[Body], None]:
    return lambda b: setattr(b, name, value)


def test_an_unedited_body_holds_its_mapped_dict() -> None:
    books = 0
    for body, mapped in _pairs():
        assert type(body).model_validate(mapped) == body
        # "no" would be safe (the caller validates) but slow: every canonical model says yes
        assert holds_mapped(body, mapped), type(body).__name__
        assert unedited(body, mapped), type(body).__name__  # the short-cut a same-format write takes
        books += isinstance(body, LorebookBody)
    assert books > 20


def test_after_any_edit_a_yes_is_the_validated_answer() -> None:
    yes = no = 0
    for body, mapped in _pairs():
        for label, edit in _edits(body):
            b = body.model_copy(deep=True)
            edit(b)
            try:
                want = type(b).model_validate(mapped) == b
            except Exception:  # the mapped dict itself does not validate: no answer to compare
                continue
            got = holds_mapped(b, mapped)
            assert not got or want, (type(b).__name__, label)
            yes, no = yes + got, no + (not got)
    assert yes > 100 and no > 100


def test_a_mapped_dict_validation_converts_is_left_to_validation() -> None:
    entry = LoreEntry(id="1", title="t", content="c", depth=4)
    assert holds_mapped(entry, {"id": "1", "title": "t", "content": "c", "depth": 4})
    # a dict to a model, a tuple to a list, an unknown key, a string number: not taken
    assert not holds_mapped(entry, {"id": "1", "title": "t", "content": "c", "depth": "4"})
    assert not holds_mapped(entry, {"id": "1", "title": "t", "content": "c", "nope": 1})
    assert not holds_mapped(entry, {"id": "1", "title": "t"})  # content lacks a default
    e2 = LoreEntry.model_validate({"id": "1", "title": "t", "content": "c", "triggers": [{"text": "a"}]})
    assert holds_mapped(e2, {"id": "1", "title": "t", "content": "c", "triggers": [{"text": "a"}]})
    assert not holds_mapped(e2, {"id": "1", "title": "t", "content": "c", "triggers": ({"text": "a"},)})
    assert not holds_mapped(e2, {"id": "1", "title": "t", "content": "c", "triggers": ["a"]})  # not a dict
    assert not holds_mapped(entry, None)


def test_an_edit_inside_a_nested_model_is_seen() -> None:
    """A card's name edited in place (``identity``, a nested model the mapped dict holds) or a field
    of a nested model the dict left to its default (``persona``): not the validated answer."""
    mapped = {"identity": {"name": "Ann"}}
    body = CharacterBody.model_validate(mapped)
    assert holds_mapped(body, mapped)
    body.identity.name = "Bea"
    assert not holds_mapped(body, mapped)
    body = CharacterBody.model_validate(mapped)
    body.persona.personality = "shy"
    assert not holds_mapped(body, mapped)
    assert not unedited(body, mapped)


def test_a_model_with_a_validator_is_left_to_validation() -> None:
    from typing import Annotated

    from pydantic import AfterValidator, field_validator

    class Stripped(Body):
        name: Annotated[str, AfterValidator(str.strip)] = ""

    class Checked(Body):
        name: str = ""

        @field_validator("name")
        @classmethod
        def _lower(cls, v: str) -> str:
            return v.lower()

    for model in (Stripped, Checked):
        body = model.model_validate({"name": "X"})
        assert not holds_mapped(body, {"name": body.name})  # never answered without validating


def test_a_model_with_an_alias_or_a_nested_shape_it_does_not_plan_is_left_to_validation() -> None:
    """A field read from another key (an alias), or holding models in another shape than ``M`` or
    ``list[M]`` (a dict of them): never answered without validating, never an error."""
    from pydantic import Field

    class Aliased(Body):
        name: str = Field("", alias="Name")

    class ReadAs(Body):
        name: str = Field("", validation_alias="Name")

    class Keyed(Body):
        rows: dict[str, Trigger] = Field(default_factory=dict)

    aliased = Aliased.model_validate({"Name": "x"})
    assert not holds_mapped(aliased, {"name": "x"})  # validation would reject this dict
    assert not holds_mapped(aliased, {"Name": "x"})
    read_as = ReadAs.model_validate({"Name": "x"})
    assert not holds_mapped(read_as, {"name": "x"})  # validation would reject this dict
    keyed = Keyed.model_validate({"rows": {"a": {"text": "t"}}})
    assert not holds_mapped(keyed, {"rows": {"a": {"text": "t"}}})


def test_overlay_twin_checks_the_short_cut_under_check(monkeypatch: pytest.MonkeyPatch) -> None:
    body = LorebookBody.model_validate({"name": "b", "entries": [{"id": "1", "title": "t", "content": "c"}]})
    mapped = {"name": "b", "entries": [{"id": "1", "title": "t", "content": "c"}]}
    raw = {"tree": True}
    assert overlay_twin(raw, body, mapped, lambda b: {}) is raw
    edited = copy.deepcopy(body)
    edited.entries[0].content = "changed"
    monkeypatch.setattr(basecache, "CHECK", True)
    monkeypatch.setattr(overlay, "holds_mapped", lambda b, m: True)  # a short-cut that lies
    with pytest.raises(basecache.RuleBroken):
        overlay_twin(raw, edited, mapped, lambda b: {})
