"""Escrow overlay: write a native tree that keeps the twin wherever the canonical body is unchanged.

A same-format export must reproduce the file it came from, including everything the canonical
model does not map (unknown keys, odd spellings like a ``"0.5"`` string for a number) — and still
carry the edits a user made to the canonical body. ``merge3`` is the three-way merge that does it:

- ``raw``  — the native tree stored in escrow (what the file said);
- ``base`` — what the codec's fresh writer makes of the body decoded from ``raw``;
- ``new``  — what the same writer makes of the entity's current body.

Wherever ``new`` equals ``base`` the body did not change there, so ``raw`` is kept verbatim;
elsewhere ``new`` wins. A key the writer produces but ``raw`` never had stays absent while its value
is unchanged (an edit elsewhere in the same object does not spell out the twin's defaults). Keys only ``raw`` has (unmapped) survive; keys the writer produced for the
old body but not for the new one are removed. Unchanged subtrees are shared with ``raw``, never
copied, and ``raw`` is never mutated.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Callable, Hashable
from typing import Any

import orjson
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from bunzai_codecs.core import basecache, seal

ListKey = Callable[[Any], Hashable | None]

#: a body dict, or a function that makes it (called only when it is needed)
Mapped = Any


def overlay_twin(
    raw: Any,
    body: Any,
    mapped: Mapped,
    to_native: Callable[[Any], Any],
    *,
    list_key: ListKey | None = None,
    tag: str | None = None,
) -> Any:
    """A same-format export through an escrow twin: ``raw`` itself when the body the twin decodes to
    (``mapped``: the codec's body dict for ``raw``, or a function that makes it, validated here as
    ``body``'s model) equals ``body``; else ``merge3`` over ``raw`` of the codec's writer
    (``to_native``) applied to both. ``tag``: the mapper's tag a decoder marked the body with
    (``core.seal``)."""
    mapped = _once(mapped)
    if unedited(body, mapped, tag=tag, raw=raw):
        return raw
    base = type(body).model_validate(_dict(mapped))
    if base == body:
        return raw
    return merge3(raw, to_native(base), to_native(body), list_key=list_key)


def unedited(body: Any, mapped: Mapped, *, tag: str | None = None, raw: Any = None) -> bool:
    """Whether ``body`` is what validating ``mapped`` (the codec's body dict for the twin tree
    ``raw``, or a function that makes it) gives, found without validating: the decoder's mark
    (``core.seal.holds(body, tag, raw)``: the body as decoded from this very tree, nothing edited
    since), else ``holds_mapped``. False means "validate and compare", not "edited". With
    ``basecache.CHECK`` on (the test suite) a True is checked against the full validation of
    ``mapped`` (equal, and the same JSON dump), and a disagreement raises ``RuleBroken``."""
    if tag is not None and seal.holds(body, tag, raw):
        if basecache.CHECK:
            check_base(body, _dict(mapped), f"the {tag} mark")
        return True
    m = _dict(mapped)
    if m is None or not holds_mapped(body, m):
        return False
    if basecache.CHECK:
        check_base(body, m, "holds_mapped")
    return True


def check_base(body: Any, mapped: Any, who: str) -> None:
    """Raise ``basecache.RuleBroken`` unless ``body`` equals the full validation of ``mapped`` as its
    model, field by field and by the JSON dump (an ``int`` where validation gives a ``float`` dumps
    otherwise)."""
    base = type(body).model_validate(mapped)
    if base != body or _dump(base) != _dump(body):
        raise basecache.RuleBroken(f"{who}: a {type(body).__name__} differs from its validated base")


def _dump(body: Any) -> bytes:
    return orjson.dumps(body.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS)


def _dict(mapped: Mapped) -> Any:
    return mapped() if callable(mapped) else mapped


def _once(mapped: Mapped) -> Mapped:
    """``mapped``, a function made to run at most once."""
    if not callable(mapped):
        return mapped
    kept: list[Any] = []

    def once() -> Any:
        if not kept:
            kept.append(mapped())
        return kept[0]

    return once


def holds_mapped(body: Any, mapped: Any) -> bool:
    """Whether ``body`` equals what validating ``mapped`` (a body dict a mapper made) into its
    model would give, found without validating: every field's value equals the dict's value, or the
    field's default where the dict has none; nested models are compared with their dicts the same
    way. ``False`` whenever that is not plainly so (a value validation would convert, an unknown
    key, a field without a default missing): the caller then validates and compares.

    Why it gives the validation's answer: the canonical models have no validators, and every
    conversion validation makes of a value it accepts gives a value equal to it (an ``int`` for a
    ``float`` field, ``1`` for ``True``, a ``str`` subclass as ``str``); a conversion to a value
    that is not equal to the input (a string to a number, a tuple to a list, a dict to a model)
    fails the comparison here. With ``basecache.CHECK`` on (the test suite) ``overlay_twin``
    validates anyway and raises ``RuleBroken`` where the two answers differ."""
    if mapped.__class__ is not dict:
        return False
    plan = _PLANS.get(body.__class__)
    if plan is None:
        plan = _PLANS[body.__class__] = _plan(body.__class__)
    if plan is False:
        return False
    defaults, nested = plan
    d = body.__dict__
    # every field, from the dict or its default (a key the model does not have, or a field without
    # a default the dict lacks, makes the key sets differ: not equal)
    want = {**defaults, **mapped}
    for k, many in nested:
        v, m = d.get(k), want.get(k)
        if v is None or m is None:
            if v is not m:
                return False
        elif many:
            if not isinstance(v, list) or m.__class__ is not list or len(v) != len(m):
                return False
            for x, y in zip(v, m, strict=True):
                if not holds_mapped(x, y):
                    return False
        elif m.__class__ is not dict:  # the field's default (a model), the dict having none
            if v.__class__ is not m.__class__ or v != m:
                return False
        elif not holds_mapped(v, m):
            return False
        want[k] = v  # compared: the whole-dict comparison below takes it as is
    return bool(d == want)


#: model class -> (each field's default, ``(field, a list of them?)`` of the fields that hold
#: nested bodies), or False for a model this check does not take (a field without a default: the
#: dict must hold it; a nested field of another shape)
_PLANS: dict[type, Any] = {}


def _plan(cls: type) -> Any:
    if not issubclass(cls, BaseModel) or cls.model_config.get("extra") != "forbid":
        return False
    defaults: dict[str, Any] = {}
    nested: list[tuple[str, bool]] = []
    for name, f in cls.model_fields.items():
        if f.alias not in (None, name) or f.validation_alias is not None:
            return False
        ann = f.annotation
        inner = _models_in(ann)
        if inner in ("model", "models"):
            nested.append((name, inner == "models"))
        elif inner is not None:
            return False
        if f.default is not PydanticUndefined:
            defaults[name] = f.default
        elif f.default_factory is not None:
            defaults[name] = f.default_factory()  # type: ignore[call-arg]
    if _TRANSFORMS & {k for k, v in cls.model_config.items() if v} or _FUNCTION.search(
        repr(cls.__pydantic_core_schema__)
    ):
        return False  # a validator of any kind, or a config that rewrites strings: validate instead
    return defaults, tuple(nested)


#: config flags under which validation rewrites an accepted value
_TRANSFORMS = frozenset({"str_strip_whitespace", "str_to_lower", "str_to_upper", "coerce_numbers_to_str"})
#: a function in a core schema: a field or model validator, an ``Annotated`` before/after/wrap/plain
#: validator anywhere in the model's fields (nested models' schemas are part of it)
_FUNCTION = re.compile(r"'type': 'function-")


def _models_in(ann: Any) -> str | None:
    """``"model"`` for ``M`` / ``M | None``, ``"models"`` for ``list[M]`` / ``list[M] | None``
    (``M`` a pydantic model), ``"other"`` for any other annotation naming a model, else None."""

    def is_model(t: Any) -> bool:
        return isinstance(t, type) and issubclass(t, BaseModel)

    def mentions(t: Any) -> bool:
        return is_model(t) or any(mentions(a) for a in typing.get_args(t))

    union = typing.get_origin(ann) in (typing.Union, types.UnionType)
    args = [a for a in typing.get_args(ann) if a is not type(None)] if union else [ann]
    if len(args) == 1:
        t = args[0]
        if is_model(t):
            return "model"
        if typing.get_origin(t) is list and len(typing.get_args(t)) == 1 and is_model(typing.get_args(t)[0]):
            return "models"
    return "other" if mentions(ann) else None


def by_id(item: Any) -> Any:
    """The common ``list_key``: list items (lore entries, categories, regex rules) paired by their
    ``id``; an item without one (or not an object) pairs by position."""
    return item.get("id") if isinstance(item, dict) else None


def merge3(raw: Any, base: Any, new: Any, *, list_key: ListKey | None = None) -> Any:
    """Three-way merge of native trees (see module docstring).

    ``list_key``, when given, pairs list items by identity (e.g. a lore entry's ``uid``) instead of
    by position, so deleting or reordering entries keeps every other entry's twin.
    """
    if new == base:
        return raw
    if isinstance(new, dict) and isinstance(base, dict) and isinstance(raw, dict):
        out: dict[Any, Any] = {}
        for k, v in raw.items():
            if k in new:
                out[k] = merge3(v, base[k], new[k], list_key=list_key) if k in base else new[k]
            elif k not in base:
                out[k] = v  # never mapped: carried through
            # else: the writer made it for the old body, not the new one: removed
        for k, v in new.items():
            if k not in raw and not (k in base and base[k] == v):
                out[k] = v  # new, or changed; a default the twin never spelled out stays unwritten
        return out
    if isinstance(new, list) and isinstance(base, list) and isinstance(raw, list) and len(raw) == len(base):
        if list_key is not None:
            keyed = _merge_keyed(raw, base, new, list_key)
            if keyed is not None:
                return keyed
        m = min(len(new), len(base))
        head = [
            merge3(r, b, n, list_key=list_key) for r, b, n in zip(raw[:m], base[:m], new[:m], strict=True)
        ]
        return head + new[m:]
    return new


def _merge_keyed(raw: list[Any], base: list[Any], new: list[Any], key: ListKey) -> list[Any] | None:
    """Pair items by ``key``; ``None`` when keys are missing or repeat (fall back to positions)."""
    try:
        bkeys = [key(b) for b in base]
        nkeys = [key(n) for n in new]
    except Exception:
        return None
    if None in bkeys or None in nkeys or len(set(bkeys)) != len(bkeys) or len(set(nkeys)) != len(nkeys):
        return None
    where = {k: i for i, k in enumerate(bkeys)}
    out = []
    for k, n in zip(nkeys, new, strict=True):
        i = where.get(k)
        out.append(n if i is None else merge3(raw[i], base[i], n, list_key=key))
    return out
