"""Reading SillyTavern's loosely typed JSON values into canonical ones, and writing them back.

SillyTavern stores what its UI hands it, so real files mix ``100`` and ``"100"``, ``null`` and
``0``, ``false`` and ``0``. The rule used by the world info, preset and persona codecs:

- a **structure** of the wrong type (``entries`` that is not an object, a prompt that is not an
  object, keys that are not a list) is a ``Malformed`` error naming the JSON path: nothing sensible
  can be read from it;
- a **scalar** of the wrong type (a string where a number belongs) is read as the field's default
  and noted in the entity's warnings; the escrow twin keeps the raw value, so a same-format export
  still writes it back. A numeric string (``"0.5"``) is read as its number, silently, as the app does.
"""

from __future__ import annotations

import math
from typing import Any

import orjson

from bunzai_codecs.core.errors import Malformed, json_path
from bunzai_codecs.formats._shared.wire import js_number_text, parse_number, type_name

Path = tuple[str | int, ...]


class Reader:
    """Typed access to one native tree; collects the warnings of tolerated scalar mismatches."""

    def __init__(self, warnings: list[str] | None = None) -> None:
        self.warnings: list[str] = warnings if warnings is not None else []

    def warn(self, path: Path, message: str) -> None:
        self.warnings.append(f"{json_path(path)}: {message}")

    # -- structures: wrong type is an error ------------------------------------------------------

    def obj(self, v: Any, path: Path, what: str = "an object") -> dict[str, Any]:
        if not isinstance(v, dict):
            raise Malformed(f"expected {what}, found {type_name(v)}", path=json_path(path))
        return v

    def arr(self, v: Any, path: Path, what: str = "an array") -> list[Any]:
        if not isinstance(v, list):
            raise Malformed(f"expected {what}, found {type_name(v)}", path=json_path(path))
        return v

    def str_list(self, v: Any, path: Path) -> list[str]:
        """A list of strings; numbers inside are read as their text (noted), anything else fails."""
        items = self.arr(v, path, "an array of strings")
        out: list[str] = []
        for i, x in enumerate(items):
            if isinstance(x, str):
                out.append(x)
            elif isinstance(x, int | float) and not isinstance(x, bool):
                self.warn((*path, i), f"number {x!r} read as text")
                out.append(js_number_text(x))
            else:
                raise Malformed(f"expected a string, found {type_name(x)}", path=json_path((*path, i)))
        return out

    # -- scalars: wrong type is a warning and the default --------------------------------------

    def num(self, v: Any, path: Path, default: Any = None) -> Any:
        """A JavaScript number (int or float); ``None`` -> ``default``; numeric text -> its number."""
        if v is None:
            return default
        if isinstance(v, bool):
            self.warn(path, f"boolean {v!r} where a number belongs; read as {default!r}")
            return default
        if isinstance(v, int):
            return v
        if isinstance(v, float):
            if math.isfinite(v):
                return v
            self.warn(path, f"{v!r} is not a finite number; read as {default!r}")
            return default
        if isinstance(v, str):
            n = parse_number(v)
            if n is not None:
                return n
        self.warn(path, f"{type_name(v)} where a number belongs; read as {default!r}")
        return default

    def boolean(self, v: Any, path: Path, default: Any = False) -> Any:
        if v is None:
            return default
        if isinstance(v, bool):
            return v
        if v in (0, 1) and not isinstance(v, float):
            return bool(v)
        if v in ("true", "false"):
            return v == "true"
        self.warn(path, f"{type_name(v)} where a boolean belongs; read as {default!r}")
        return default

    def text(self, v: Any, path: Path, default: Any = None) -> Any:
        if v is None:
            return default
        if isinstance(v, str):
            return v
        if isinstance(v, int | float) and not isinstance(v, bool):
            return js_number_text(v)
        self.warn(path, f"{type_name(v)} where a string belongs; read as {default!r}")
        return default

    def opaque(self, v: Any, path: Path) -> dict[str, Any] | None:
        if v is None:
            return None
        if isinstance(v, dict):
            return v
        self.warn(path, f"{type_name(v)} where an object belongs; left in escrow")
        return None


def int_like(v: Any) -> int | None:
    """``4`` and ``4.0`` -> 4; anything else (bools included) -> None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return None


def none_if_empty(s: str | None) -> str | None:
    """SillyTavern writes ``""`` for "not set" in many string fields."""
    return s if s else None


def dumps(tree: Any) -> bytes:
    """Deterministic, human-readable JSON (2-space indent, keys in tree order, trailing newline)."""
    return orjson.dumps(tree, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)


def keyed_items(item: Any) -> Any:
    """``merge3`` list key for SillyTavern lists of records: prompts by ``identifier``,
    ``prompt_order`` slots by ``character_id``; ``None`` (pair by position) for anything else."""
    if isinstance(item, dict):
        if "identifier" in item:
            return ("identifier", _hashable(item["identifier"]))
        if "character_id" in item:
            return ("character_id", _hashable(item["character_id"]))
    return None


def _hashable(v: Any) -> Any:
    return v if isinstance(v, str | int | float | bool) or v is None else orjson.dumps(v)
