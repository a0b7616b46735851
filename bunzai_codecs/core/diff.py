"""Structural diff of JSON trees, reporting changes as paths (``entries[3].content``).

Used by the fidelity checks (what a round trip lost or changed) and by tests. Numbers compare by
value (``1 == 1.0``, as JSON readers see them). With ``empty_is_absent`` an empty string, list or
object counts as absent — the right view when comparing across formats, where one app writes
``"alternate_greetings": []`` and another leaves the key out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import orjson

ChangeKind = Literal["added", "removed", "changed"]


@dataclass(frozen=True, slots=True)
class Change:
    path: str
    kind: ChangeKind
    before: Any = None
    after: Any = None

    def __str__(self) -> str:
        if self.kind == "added":
            return f"{self.path}: added"
        if self.kind == "removed":
            return f"{self.path}: removed"
        return f"{self.path}: {_short(self.before)} -> {_short(self.after)}"


def _short(v: Any, n: int = 60) -> str:
    s = repr(v)
    return s if len(s) <= n else s[: n - 3] + "..."


def join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if key.isidentifier():
        return f"{path}.{key}" if path else key
    return f"{path}[{key!r}]"


def _empty(v: Any) -> bool:
    return v is None or v == "" or v == [] or v == {}


def diff(
    a: Any,
    b: Any,
    *,
    path: str = "",
    empty_is_absent: bool = False,
    limit: int | None = None,
) -> list[Change]:
    """Every difference between ``a`` (before) and ``b`` (after), depth first, keys sorted."""
    out: list[Change] = []
    _walk(a, b, path, empty_is_absent, out, limit)
    return out


#: JSON text of a tree for the identity test of ``_same_tree``: keys sorted (the walk's order: two
#: objects that differ only in key order are the same to it); any value that is not plain JSON (a
#: str or int subclass, a datetime, a dataclass, bytes, a non-string key) raises instead
_STRICT = (
    orjson.OPT_SORT_KEYS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
)


def _same_tree(a: Any, b: Any) -> bool:
    """Whether two containers hold the same values as the walk compares them, found at C speed:
    Python's ``==`` (which would take ``True`` for ``1``) confirmed by identical JSON text (which
    tells them apart). False also when either is not plain JSON: the walk then decides."""
    try:
        return bool(a == b) and orjson.dumps(a, option=_STRICT) == orjson.dumps(b, option=_STRICT)
    except Exception:
        return False


def _child(
    x: Any, y: Any, path: str, key: str | int, eia: bool, out: list[Change], limit: int | None
) -> None:
    """The walk of the child ``key`` of two containers at ``path``: a dict or list is asked whether
    it is the same first, so its path is spelled only when something there differs."""
    c = x.__class__
    if (c is dict or c is list) and y.__class__ is c:
        if not _same_tree(x, y):
            _walk(x, y, join(path, key), eia, out, limit, True)
    else:
        _walk(x, y, join(path, key), eia, out, limit)


def _walk(
    a: Any, b: Any, path: str, eia: bool, out: list[Change], limit: int | None, differ: bool = False
) -> None:
    """``diff``'s walk. ``differ``: the caller found ``_same_tree(a, b)`` false already (it asks
    before spelling a child's path, which is only spelled where something differs)."""
    if limit is not None and len(out) >= limit:
        return
    if a is b:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        if not differ and _same_tree(a, b):
            return
        # the keys whose values may differ, in the walk's order (keys sorted); a key both sides
        # hold with the same plain value is passed over before the sort
        keys = []
        for k, x in a.items():
            if k in b:
                y = b[k]
                if x is y or (type(x) is type(y) and type(x) in _PLAIN and x == y):
                    continue
            keys.append(k)
        keys += [k for k in b if k not in a]
        keys.sort(key=str)
        for k in keys:
            if k not in b:
                if not (eia and _empty(a[k])):
                    out.append(Change(join(path, k), "removed", a[k], None))
            elif k not in a:
                if not (eia and _empty(b[k])):
                    out.append(Change(join(path, k), "added", None, b[k]))
            else:
                _child(a[k], b[k], path, k, eia, out, limit)
        return
    if isinstance(a, list) and isinstance(b, list):
        if not differ and _same_tree(a, b):
            return
        for i in range(max(len(a), len(b))):
            if i >= len(b):
                out.append(Change(join(path, i), "removed", a[i], None))
            elif i >= len(a):
                out.append(Change(join(path, i), "added", None, b[i]))
            else:
                x, y = a[i], b[i]
                if x is y or (type(x) is type(y) and type(x) in _PLAIN and x == y):
                    continue
                _child(x, y, path, i, eia, out, limit)
        return
    if _same_scalar(a, b):
        return
    if eia and _empty(a) and _empty(b):
        return
    if eia and _empty(a):
        out.append(Change(path, "added", a, b))
    elif eia and _empty(b):
        out.append(Change(path, "removed", a, b))
    else:
        out.append(Change(path, "changed", a, b))


#: scalar types whose equal values of the same type the walk always takes as the same
_PLAIN = frozenset({str, int, float, bool, type(None)})


def _same_scalar(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b
