"""Generated documentation: docs/canonical-model.md, the canonical model from its own code.

Every entity kind's body model, each sub-model it uses, and each field with its type, default and
meaning, read from the pydantic models (their docstrings and field descriptions) and from the
docstrings of ``core/entity.py`` (the entity envelope), ``core/overlay.py`` (the escrow twin) and
``core/media.py``. The committed file is checked by a test (tests/test_generated_docs.py), so it cannot drift;
regenerate it with ``make schema``. Code and docs cite its headings as
``docs/canonical-model.md#<anchor>`` (:func:`anchor`).
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from typing import Any, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from bunzai_codecs.core.entity import ENTITY_KINDS


def anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to ``-``."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _rst_to_md(doc: str) -> str:
    """A docstring as Markdown: ``x`` -> `x`, :func:`f` -> `f`, a ``::`` block -> a code fence."""
    doc = inspect.cleandoc(doc)
    doc = re.sub(r":(?:func|data|class|meth|attr):`~?([^`]+)`", r"`\1`", doc)
    doc = doc.replace("``", "`")
    out: list[str] = []
    lines = doc.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.endswith("::"):
            out.append(line[:-1])
            i += 1
            while i < len(lines) and not lines[i].strip():
                i += 1
            out += ["", "```"]
            while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
                out.append(lines[i][4:])
                i += 1
            while out and not out[-1].strip():
                out.pop()
            out += ["```", ""]
            continue
        out.append(line)
        i += 1
    return "\n".join(out).strip()


def _cell(text: str) -> str:
    """One table cell: a single line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _known_values(meta: list[Any]) -> list[str] | None:
    for m in meta:
        extra = getattr(m, "json_schema_extra", None)
        if isinstance(extra, dict) and extra.get("x-open-enum"):
            return [str(v) for v in extra.get("x-known-values", [])]
    return None


def _open_text(values: list[str]) -> str:
    return "text, open: " + ", ".join(f"`{v}`" if v else '`""`' for v in values) + ", or any other"


def _type_text(ann: Any, models: list[type[BaseModel]]) -> str:
    """An annotation in words, sub-models linked to their section (and queued in ``models``)."""
    origin = get_origin(ann)
    if origin is typing.Annotated:
        base, *meta = get_args(ann)
        values = _known_values(meta)
        if values is not None:
            return _open_text(values)
        return _type_text(base, models)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in get_args(ann) if a is not type(None)]
        strict_num = {_type_text(a, models) for a in args} == {"integer", "number"}
        if strict_num:
            return "number"
        return " or ".join(_type_text(a, models) for a in args)
    if origin is typing.Literal:
        return "one of " + ", ".join(f"`{v}`" for v in get_args(ann))
    if origin is list:
        (item,) = get_args(ann) or (Any,)
        return f"list of {_type_text(item, models)}"
    if origin is dict:
        _, value = get_args(ann) or (str, Any)
        if value is Any:
            return "object (carried as written)"
        return f"object of {_type_text(value, models)}, keyed by text"
    if ann is Any:
        return "any JSON value (carried as written)"
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        if ann not in models:
            models.append(ann)
        return f"[{ann.__name__}](#{anchor(ann.__name__)})"
    names = {str: "text", bool: "boolean", int: "integer", float: "number"}
    if ann in names:
        return names[ann]
    return getattr(ann, "__name__", str(ann))


def _default_text(f: FieldInfo) -> str:
    if f.default_factory is not None:
        value = f.default_factory()  # type: ignore[call-arg]
        if isinstance(value, BaseModel):
            return "always present (may be empty)"
        return f"`{value!r}`".replace("'", '"') if value != [] else "`[]`"
    if f.default is PydanticUndefined:
        return "required"
    if f.default is None:
        return "absent"
    if isinstance(f.default, bool):
        return f"`{str(f.default).lower()}`"
    return f"`{f.default!r}`".replace("'", '"')


def _model_section(model: type[BaseModel], models: list[type[BaseModel]]) -> list[str]:
    lines = [f"### {model.__name__}", ""]
    doc = model.__doc__
    if doc and not doc.startswith(model.__name__ + "("):
        lines += [_rst_to_md(doc), ""]
    lines += ["| field | type | default | meaning |", "|---|---|---|---|"]
    for name, f in model.model_fields.items():
        # pydantic moves a top-level ``Annotated[str, known(...)]`` into the field's own metadata
        typ = _type_text(f.annotation, models)
        values = _known_values([f])
        if values is not None and typ.startswith("text"):
            typ = _open_text(values) + typ[len("text") :]
        meaning = _rst_to_md(f.description or "")
        lines.append(f"| `{name}` | {_cell(typ)} | {_default_text(f)} | {_cell(meaning)} |")
    return [*lines, ""]


def _module_doc(module: types.ModuleType) -> str:
    return _rst_to_md(module.__doc__ or "")


def canonical_model_markdown() -> str:
    from bunzai_codecs.core import entity, media, overlay
    from bunzai_codecs.entities import BODY_TYPES, base

    lines = [
        "# Canonical model",
        "",
        "Generated by `bunzai schema --markdown` (`make schema`) from the pydantic models in",
        "`bunzai_codecs/entities/` and the docstrings of `bunzai_codecs/core/entity.py`,",
        "`core/overlay.py` and `core/media.py`; a test fails when this file is out of date. It is the",
        "reference the code and the format pages cite. For a guided tour of what the sections mean, read",
        "[entities/README.md](entities/README.md); the same models as JSON Schema are in",
        "[schema/](schema/); which format carries which field is in",
        "[FORMAT-SUPPORT.md](FORMAT-SUPPORT.md).",
        "",
        "## Entity",
        "",
        _module_doc(entity),
        "",
        "## Escrow twin",
        "",
        _module_doc(overlay),
        "",
        "## Conventions",
        "",
        _module_doc(base),
        "",
        "In the tables below, *absent* means an optional field that is left out when the source has no",
        "value; *always present* is a section (an empty one and a missing one are the same body); a",
        "*number* keeps its JSON form (`100` stays an integer, `0.5` a number); an *open* vocabulary",
        "keeps any value it does not know, as written.",
        "",
        "## Media",
        "",
        _module_doc(media),
        "",
        "Each media item of a body is a [MediaAsset](#mediaasset).",
        "",
        "## Kinds",
        "",
        "| kind | body model | what it is |",
        "|---|---|---|",
    ]
    for kind in ENTITY_KINDS:
        model = BODY_TYPES[kind]
        summary = (model.__doc__ or "").strip().splitlines()[0]
        lines.append(
            f"| `{kind}` | [{model.__name__}](#{anchor(model.__name__)}) | {_cell(_rst_to_md(summary))} |"
        )
    lines.append("")
    for kind in ENTITY_KINDS:
        model = BODY_TYPES[kind]
        module = inspect.getmodule(model)
        lines += [f"## {kind}", ""]
        if module is not None and module.__doc__:
            lines += [_module_doc(module), ""]
        queue: list[type[BaseModel]] = [model]
        done: set[type[BaseModel]] = set()
        i = 0
        while i < len(queue):
            m = queue[i]
            i += 1
            if m in done or (m is not model and _owner(m, BODY_TYPES) not in (None, kind)):
                continue
            done.add(m)
            lines += _model_section(m, queue)
        shared = [m for m in queue if m not in done]
        if shared:
            lines += [
                "Also used here: "
                + ", ".join(f"[{m.__name__}](#{anchor(m.__name__)})" for m in dict.fromkeys(shared))
                + ".",
                "",
            ]
    return "\n".join(lines).rstrip() + "\n"


def _owner(model: type[BaseModel], body_types: dict[str, type[Any]]) -> str | None:
    """The kind whose module defines ``model`` (a sub-model is documented under its own kind)."""
    for kind, body in body_types.items():
        if model.__module__ == body.__module__:
            return kind
    return None
