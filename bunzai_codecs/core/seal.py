"""Unedited since decode: a mark a decoder puts on the body it validated, that a same-format writer
trusts instead of comparing the body with its twin's mapping again.

A same-format export asks "did the body change since decode?" (``core.overlay``): the answer was a
walk comparing the body with the dict the decoder's mapper made of the twin (``holds_mapped``: 29k
recursive calls for the 94 books of 300 benchmark cards), or validating that dict again. A decoder
that validates the body from exactly the dict the writer would compare it with (the dict
``core.basecache`` keeps for the writer, under the same tag) marks the body: :func:`mark` records
that this very body object is what validating ``tag``'s mapping of ``raw`` gave. :func:`holds`
says whether the mark still stands, in constant time.

What breaks a mark. A body is a tree of models, lists and dicts; it changes when

- a field of any model in it is assigned or deleted: ``Body.__setattr__``/``__delattr__`` count an
  edit (``entities.base``);
- a list or dict validation built is changed in place (``body.tags.append(...)``,
  ``entry.extensions["k"] = v``, ``del book.entries[3]``, ``rules.sort()``...): every list and dict
  a body's validation builds is a :class:`TrackedList`/:class:`TrackedDict` (``Body`` validates
  through :func:`tracking_validator`; defaults too), a ``list``/``dict`` whose every in-place change
  counts an edit;
- the entity gets another body (``entity.body = ...``, ``model_copy``): another object, which no
  mark names.

Edits are counted for the whole process (:data:`_EDITS`), not per body: a mark holds the count at
decode and stands while no body anywhere was edited since. That is conservative (an edit to one
body makes every earlier mark fall back to the slow path), never wrong. What it does not see:
values *inside* an opaque bag (an object nested in ``extensions``) are the very objects the
mapper's dict (and usually the twin) holds, so an in-place change there is seen by neither the
mark nor the slow path; replace the bag to edit it.

A body built any other way (by hand, ``model_construct``, ``model_copy(update=...)``, a decoder that
changes its body after validating it) has no mark: the writer takes the slow path. The mark is
checked, not trusted, in the test suite: with ``basecache.CHECK`` on, ``overlay.unedited`` compares a
marked body with the full validation of the twin's mapping (equality and the JSON dump) and raises
``RuleBroken`` where they differ.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

#: the process's edit count: ``[n]`` (a list so the tracked containers bump it without a global)
_EDITS = [0]

#: ``id(body)`` -> (a weak reference to it, the mapper tag, the twin tree, the edit count at decode)
_MARKS: dict[int, tuple[weakref.ref[Any], str, Any, int]] = {}


def edited() -> None:
    """Count an edit of a body (any body: every mark made before it stops standing)."""
    _EDITS[0] += 1


def mark(body: Any, tag: str, raw: Any) -> None:
    """Mark ``body`` as what validating ``tag``'s mapping of the twin tree ``raw`` gave, now."""
    key = id(body)

    def gone(ref: weakref.ref[Any], key: int = key) -> None:
        got = _MARKS.get(key)
        if got is not None and got[0] is ref:
            _MARKS.pop(key, None)

    _MARKS[key] = (weakref.ref(body, gone), tag, raw, _EDITS[0])


def holds(body: Any, tag: str, raw: Any) -> bool:
    """Whether ``body`` is marked as ``tag``'s validated mapping of this very ``raw`` and nothing was
    edited since."""
    got = _MARKS.get(id(body))
    return got is not None and got[3] == _EDITS[0] and got[0]() is body and got[2] is raw and got[1] == tag


def keep_unless_marked(body: Any, tag: str, raw: Any, mapped: Any, *, input_bytes: int) -> None:
    """For a decoder whose writer asks ``core.basecache`` for the dict ``tag``'s mapper made of
    ``raw`` when a body has no mark: keep ``mapped`` there unless ``body`` is marked (its writer then
    needs no dict, unless the body is edited, and keeping every decoded tree alive for a while costs
    the reads: ~2-7 % of a card read, in the notes)."""
    if not holds(body, tag, raw):
        from bunzai_codecs.core import basecache

        basecache.remember(tag, raw, mapped, input_bytes=input_bytes)


def forget(body: Any) -> None:
    """Drop ``body``'s mark (tests)."""
    _MARKS.pop(id(body), None)


# -- containers whose in-place changes count -------------------------------------------------------


class TrackedList(list[Any]):
    """A ``list`` that counts every in-place change as an edit (see the module docstring)."""

    __slots__ = ()


class TrackedDict(dict[Any, Any]):
    """A ``dict`` that counts every in-place change as an edit (see the module docstring)."""

    __slots__ = ()


def _counting(cls: type, names: tuple[str, ...]) -> None:
    """Give ``cls`` each of its base's mutators ``names``, counting an edit before it runs (what it
    returns is the base's: ``+=`` and ``|=`` still give the container itself)."""
    for name in names:
        setattr(cls, name, _counted(getattr(cls.__mro__[1], name), name))


def _counted(base: Callable[..., Any], name: str) -> Callable[..., Any]:
    def mutator(self: Any, *args: Any, **kwargs: Any) -> Any:
        _EDITS[0] += 1
        return base(self, *args, **kwargs)

    mutator.__name__ = mutator.__qualname__ = name
    return mutator


_counting(
    TrackedList,
    (
        "append",
        "extend",
        "insert",
        "remove",
        "pop",
        "clear",
        "sort",
        "reverse",
        "__setitem__",
        "__delitem__",
        "__iadd__",
        "__imul__",
    ),
)
_counting(
    TrackedDict,
    ("__setitem__", "__delitem__", "pop", "popitem", "clear", "update", "setdefault", "__ior__"),
)


def _track(v: Any) -> Any:
    """``v`` as a tracked container when it is a plain list or dict (a default factory's value)."""
    if v.__class__ is list:
        return TrackedList(v)
    if v.__class__ is dict:
        return TrackedDict(v)
    return v


# -- the validator that builds them ------------------------------------------------------------------

#: the keys of a core schema that hold schemas (one, a list or a name -> schema mapping)
_SCHEMA_KEYS = (
    "schema",
    "items_schema",
    "keys_schema",
    "values_schema",
    "lax_schema",
    "strict_schema",
    "json_schema",
    "python_schema",
    "choices",
    "fields",
    "definitions",
    "steps",
)


#: the keys of those that hold a name -> schema mapping (whatever the names: a field may be `type`)
_BY_NAME = frozenset({"fields", "choices"})


def tracked_schema(schema: Any) -> Any:
    """A copy of pydantic-core ``schema`` whose ``list`` and ``dict`` validators give
    :class:`TrackedList`/:class:`TrackedDict` (an after-validator that copies the container pydantic
    built: the same items, errors and JSON schema), and whose list and dict defaults are tracked
    too. Serialization schemas are left alone (a dump is plain JSON either way)."""
    if isinstance(schema, list):
        return [tracked_schema(x) for x in schema]
    if isinstance(schema, tuple):  # a union choice with its label
        return tuple(tracked_schema(x) if isinstance(x, dict) else x for x in schema)
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    for key in _SCHEMA_KEYS:
        v = out.get(key)
        if key in _BY_NAME and isinstance(v, dict):  # a model's fields, a tagged union's choices
            out[key] = {k: tracked_schema(x) for k, x in v.items()}
        elif isinstance(v, dict | list):
            out[key] = tracked_schema(v)
    kind = out.get("type")
    if kind == "list":
        return _after(TrackedList, out)
    if kind == "dict":
        return _after(TrackedDict, out)
    if kind == "default" and _holds_container(schema.get("schema")):
        if "default_factory" in out:
            out["default_factory"] = _tracking_factory(
                out["default_factory"], out.get("default_factory_takes_data")
            )
        elif isinstance(out.get("default"), list | dict):
            value = out.pop("default")
            out["default_factory"] = _tracking_factory(lambda: _copy(value), False)
    return out


def _holds_container(schema: Any) -> bool:
    """Whether a default's value may be a list or dict (its schema, ``nullable`` or not, is one): a
    model's default is built by its own tracking validator."""
    while isinstance(schema, dict) and schema.get("type") == "nullable":
        schema = schema.get("schema")
    return isinstance(schema, dict) and schema.get("type") in ("list", "dict")


def _after(fn: Callable[[Any], Any], schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function-after", "function": {"type": "no-info", "function": fn}, "schema": schema}


def _copy(v: Any) -> Any:
    import copy

    return copy.deepcopy(v)


def _tracking_factory(factory: Callable[..., Any], takes_data: Any) -> Callable[..., Any]:
    if takes_data:
        return lambda data: _track(factory(data))
    return lambda: _track(factory())


def tracking_validator(cls: Any) -> Any:
    """The validator of model class ``cls`` built from :func:`tracked_schema` of its core schema (the
    model's own config rides in its schema). Not from the validators pydantic built (``_use_prebuilt``
    would take the class's own, untracked, in place of its schema)."""
    from pydantic_core import SchemaValidator

    return SchemaValidator(tracked_schema(cls.__pydantic_core_schema__), _use_prebuilt=False)


__all__ = [
    "TrackedDict",
    "TrackedList",
    "edited",
    "forget",
    "holds",
    "mark",
    "tracked_schema",
    "tracking_validator",
]
