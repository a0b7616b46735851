"""Hypothesis strategies for canonical bodies, derived from the pydantic models themselves.

``body(kind)`` draws the JSON form of a valid body of that kind (then validated by the model), so a
field added to ``bunzai_codecs/entities/`` is generated without touching this file. Each field's
annotation picks its strategy:

- ``str`` -> short text (letters, digits, punctuation, symbols, spaces); open vocabularies
  (``known(...)``) -> their known values (that an unknown value is kept is the model's promise,
  tested with the entities; no file format can hold an arbitrary one); ``Literal`` -> its values;
- ``Num`` -> integers and short decimals (what apps store), never NaN or infinities;
- ``bool``; ``list[T]`` -> up to three items (distinct ones for a list of vocabulary values:
  phases, targets, scan sources are sets the apps store as flags); ``dict[str, Any]`` (opaque bags) -> small JSON objects;
- ``T | None`` -> absent or a ``T``; a sub-model -> its own fields, each present or absent.

``FIELD_OVERRIDES`` narrows fields whose meaning a plain type does not carry (dates are unix seconds
an app stores in milliseconds or ISO text; a greeting's text is never empty). ``_fix_refs`` makes
ids unique and points ``categoryId`` / ``groupId`` at categories and groups that exist, as the model
documents. The strategies generate *canonical* bodies: what a codec may produce, not what a hostile
file holds (that is ``tests/hostile``).
"""

from __future__ import annotations

import types
import typing
from functools import cache
from typing import Any

from hypothesis import strategies as st
from pydantic.fields import FieldInfo

from bunzai_codecs.entities import BODY_TYPES
from bunzai_codecs.entities.base import Body

#: a short, printable-ish text: any letter, digit, punctuation, symbol or space (no control
#: characters, no surrogates) — what people type into a card
TEXT = st.text(
    alphabet=st.characters(categories=("L", "N", "P", "S", "Zs"), exclude_characters="\u2028\u2029"),
    max_size=12,
)
NONEMPTY_TEXT = TEXT.filter(lambda s: s.strip() != "" and s == s.strip())
#: JavaScript numbers as apps store them: integers and decimals with at most two places
NUM = st.one_of(
    st.integers(-100_000, 100_000),
    st.integers(-100_000, 100_000).map(lambda n: n / 100),
)


def decimal(lo: float, hi: float) -> st.SearchStrategy[float]:
    """A decimal in [lo, hi] with at most two places (a slider value)."""
    return st.integers(round(lo * 100), round(hi * 100)).map(lambda n: n / 100)


#: opaque JSON values (extension bags, script rows)
JSON_LEAF = st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), TEXT)
JSON = st.recursive(
    JSON_LEAF,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)),
    max_leaves=6,
)
OPAQUE = st.dictionaries(NONEMPTY_TEXT, JSON, max_size=3)
#: unix seconds between 2000 and 2100, whole (apps store milliseconds or ISO seconds)
DATE = st.integers(946_684_800, 4_102_444_800)
#: message counts, depths, orders: apps store whole numbers
COUNT = st.integers(0, 1000)
ORDER = st.integers(-1000, 1000)
PERCENT = st.one_of(st.integers(0, 100), decimal(0, 100))
#: regex flags as JavaScript accepts them, in the order apps print them
FLAGS = st.sets(st.sampled_from("gimsuy")).map(lambda fl: "".join(c for c in "gimsuy" if c in fl))

#: a whole 1x1 PNG as a data: URL (a portrait whose bytes every image format can hold)
TINY_PNG_URL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGM4UaEBAAN0AWnL+tDXAAAAAElFTkSuQmCC"

#: ``Model.field`` -> strategy, where the annotation alone says too little (the ranges are the
#: ones the models' docstrings give)
FIELD_OVERRIDES: dict[str, st.SearchStrategy[Any]] = {
    "CharacterAttribution.createdAt": DATE,
    "CharacterAttribution.updatedAt": DATE,
    "CharacterSettings.talkativeness": decimal(0, 1),
    "DepthInjection.depth": st.integers(0, 100),
    "Greeting.text": NONEMPTY_TEXT,
    "MediaAsset.ref": st.one_of(
        st.sampled_from(
            [
                "https://example.com/a.png",
                "https://example.com/b",
                TINY_PNG_URL,
                "embeded://assets/icon/image/main.png",
                "ccdefault:",
                "__asset:0",
                "avatars/x.webp",
            ]
        ),
        NONEMPTY_TEXT,
    ),
    "MediaAsset.mime": st.sampled_from(["image/png", "image/jpeg", "image/webp"]),
    # digests are made by binding the body (``entity``): a generated one would name no bytes
    "MediaAsset.sha256": st.none(),
    "MediaAsset.size": st.none(),
    # only a lorebook that is an image (a NovelAI PNG) has a picture; its codec adds one on write
    "LorebookBody.media": st.none(),
    "PhraseBias.weight": decimal(-100, 100),
    "Voice.rate": decimal(0, 4),
    "Voice.pitch": decimal(-2, 2),
    "Trigger.text": NONEMPTY_TEXT,
    "Trigger.probability": PERCENT,
    "Trigger.flags": FLAGS,
    "LoreEntry.id": NONEMPTY_TEXT,
    "LoreEntry.probability": PERCENT,
    "LoreEntry.depth": COUNT,
    "LoreEntry.scanDepth": COUNT,
    "LoreEntry.sticky": COUNT,
    "LoreEntry.cooldown": COUNT,
    "LoreEntry.delay": COUNT,
    "LoreEntry.delayUntilRecursion": COUNT,
    "LoreEntry.sortOrder": ORDER,
    "LoreEntry.priority": ORDER,
    "LoreEntry.groupWeight": COUNT,
    "LoreEntry.displayIndex": COUNT,
    "LoreCategory.id": NONEMPTY_TEXT,
    "LoreCategory.sortOrder": ORDER,
    "LorebookBody.globalScanDepth": st.integers(1, 1000),
    "LorebookBody.tokenBudget": st.integers(1, 100_000),
    "LorebookBody.maxRecursionDepth": COUNT,
    "LorebookBody.entryBudget": COUNT,
    "RegexRule.id": NONEMPTY_TEXT,
    "RegexRule.flags": FLAGS,
    "RegexRule.minDepth": st.integers(0, 100),
    "RegexRule.maxDepth": st.integers(0, 100),
    "RegexRule.sortOrder": ORDER,
    "ChatInjection.depth": st.integers(0, 100),
    "PresetPrompt.id": NONEMPTY_TEXT,
    "PresetPrompt.injectionDepth": st.integers(0, 100),
    "PresetPrompt.injectionOrder": ORDER,
    "PresetGroup.id": NONEMPTY_TEXT,
    "PresetGroup.order": ORDER,
    "PresetChoice.id": NONEMPTY_TEXT,
    "PresetChoice.sortOrder": ORDER,
    "ChoiceOption.id": NONEMPTY_TEXT,
    "PresetSamplers.temperature": decimal(0, 2),
    "PresetSamplers.topP": decimal(0, 1),
    "PresetSamplers.minP": decimal(0, 1),
    "PresetSamplers.topA": decimal(0, 1),
    "PresetSamplers.topK": st.integers(0, 200),
    "PresetSamplers.repetitionPenalty": decimal(1, 2),
    "PresetSamplers.frequencyPenalty": decimal(-2, 2),
    "PresetSamplers.presencePenalty": decimal(-2, 2),
    "PresetSamplers.maxContext": st.integers(512, 200_000),
    "PresetSamplers.maxTokens": st.integers(1, 8192),
    "PresetGeneration.seed": st.integers(-1, 2**31 - 1),
    "PresetGeneration.completions": st.integers(1, 8),
    "PresetBehavior.namesBehavior": st.integers(-1, 2),
    "PresetApiOptions.thinkingTokens": st.integers(0, 100_000),
}


def _known_values(info: FieldInfo | None, metadata: tuple[Any, ...] = ()) -> list[str] | None:
    for m in (*metadata, *((info.metadata if info else []) or [])):
        extra = getattr(m, "json_schema_extra", None)
        if isinstance(extra, dict) and "x-known-values" in extra:
            return list(extra["x-known-values"])
    if info is not None and isinstance(info.json_schema_extra, dict):
        known = info.json_schema_extra.get("x-known-values")
        if isinstance(known, list):
            return known
    return None


def for_annotation(annotation: Any, info: FieldInfo | None = None) -> st.SearchStrategy[Any]:
    """The strategy for one field annotation (JSON form)."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        base, *meta = args
        known = _known_values(None, tuple(meta))
        if known is not None:
            return st.sampled_from(known) if known else TEXT
        if base in (int, float):  # one half of Num (Strict)
            return NUM
        return for_annotation(base)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        nums = [
            a
            for a in options
            if typing.get_origin(a) is typing.Annotated and typing.get_args(a)[0] in (int, float)
        ]
        rest = [a for a in options if a not in nums]
        inner = [NUM] if nums else []
        inner += [for_annotation(a, info) for a in rest]
        return st.one_of(*inner) if type(None) not in args else st.one_of(st.none(), *inner)
    if origin is typing.Literal:
        return st.sampled_from(args)
    if origin is list:
        if _vocabulary(args[0]):
            # phases, targets, scan sources, generation types: sets written as lists
            return st.lists(for_annotation(args[0]), max_size=3, unique=True)
        return st.lists(for_annotation(args[0]), max_size=3)
    if origin is dict:
        if args and args[1] is Any:
            return OPAQUE
        return st.dictionaries(NONEMPTY_TEXT, for_annotation(args[1]), max_size=3)
    if isinstance(annotation, type) and issubclass(annotation, Body):
        return model_dict(annotation)
    if annotation is str:
        known = _known_values(info)
        return st.sampled_from(known) if known else TEXT
    if annotation is bool:
        return st.booleans()
    if annotation is int or annotation is float:
        return NUM
    if annotation is Any:
        return JSON
    raise NotImplementedError(f"no strategy for {annotation!r}")


def _vocabulary(annotation: Any) -> bool:
    return (
        typing.get_origin(annotation) is typing.Annotated
        and _known_values(None, typing.get_args(annotation)[1:]) is not None
    )


@cache
def model_dict(model: type[Body]) -> st.SearchStrategy[dict[str, Any]]:
    """A dict of the model's JSON form: required fields always, optional ones sometimes."""
    required: dict[str, st.SearchStrategy[Any]] = {}
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for name, info in model.model_fields.items():
        strat = FIELD_OVERRIDES.get(f"{model.__name__}.{name}")
        if strat is None:
            strat = st.deferred(lambda a=info.annotation, i=info: for_annotation(a, i))
        (required if info.is_required() else optional)[name] = strat
    return st.fixed_dictionaries(required, optional=optional)


def _fix_refs(kind: str, tree: dict[str, Any]) -> dict[str, Any]:
    """Unique ids per list (as the model promises) and references that resolve."""

    def unique(items: list[dict[str, Any]]) -> None:
        seen: set[str] = set()
        for i, it in enumerate(items):
            if it["id"] in seen:
                it["id"] = f"{it['id']}~{i}"
            seen.add(it["id"])
            if isinstance(it.get("options"), list):
                unique(it["options"])

    portrait = (tree.get("media") or {}).get("portrait")
    if portrait:
        portrait["role"] = "portrait"  # the main image (entities/character.py, persona.py)
    if kind == "character":
        structured = tree.get("persona", {}).get("structured")
        if structured and structured["kind"] == "text":
            structured.pop("attributes", None)  # absent for the text kind (entities/character.py)
    if kind == "lorebook":
        for e in tree.get("entries", []):
            for t in (e.get("triggers") or []) + (e.get("secondaryTriggers") or []):
                if not t.get("isRegex"):
                    t.pop("flags", None)  # flags are for regex keys only (entities/lorebook.py)
    for key in ("entries", "categories", "rules", "prompts", "groups", "choices"):
        if isinstance(tree.get(key), list):
            unique(tree[key])
    if kind == "lorebook":
        cats = [c["id"] for c in tree.get("categories", [])]
        for i, e in enumerate(tree.get("entries", [])):
            if "categoryId" in e:
                if cats:
                    e["categoryId"] = cats[i % len(cats)]
                else:
                    del e["categoryId"]
    if kind == "preset":
        slots: set[str] = set()
        for p in tree.get("prompts", []):
            # a marker is a prompt the app fills: it has a slot, only a marker has one, and the app
            # fills each slot once
            if p.get("markerSlot") in slots:
                p.pop("markerSlot")
            p["marker"] = p.get("markerSlot") is not None
            if p["marker"]:
                slots.add(p["markerSlot"])
        groups = [g["id"] for g in tree.get("groups", [])]
        for i, g in enumerate(tree.get("groups", [])):
            if "parentGroupId" in g:
                if i and groups[i - 1] != g["id"]:
                    g["parentGroupId"] = groups[i - 1]
                else:
                    del g["parentGroupId"]
        for i, p in enumerate(tree.get("prompts", [])):
            if "groupId" in p:
                if groups:
                    p["groupId"] = groups[i % len(groups)]
                else:
                    del p["groupId"]
    return tree


def body(kind: str) -> st.SearchStrategy[Body]:
    """A valid canonical body of ``kind``."""
    model = BODY_TYPES[kind]
    return model_dict(model).map(lambda t: model.model_validate(_fix_refs(kind, t)))


def entity(kind: str) -> st.SearchStrategy[Any]:
    """A fresh ``CanonicalEntity`` (no twin, no links) holding a generated body; an inline
    ``data:`` image is in its media store, as for a decoded entity (``core.media.bind``)."""
    from bunzai_codecs.core.entity import CanonicalEntity
    from bunzai_codecs.core.media import bind

    def make(b: Body) -> Any:
        store: dict[str, bytes] = {}
        return CanonicalEntity(kind=kind, id=f"{kind}-generated", body=bind(b, store), media=store)  # type: ignore[arg-type]

    return body(kind).map(make)
