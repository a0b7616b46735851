"""Byte-exact writers for the two serialisations RisuAI's JavaScript produces: ``JSON.stringify``
(a ``.risum`` main block) and msgpackr's default ``pack`` (a ``.risup`` preset).

Re-encoding an unedited Risu file must give its bytes back, so these follow JavaScript, not Python:

- ``JSON.stringify``: numbers print as ``Number.prototype.toString`` does (``100`` for ``100.0``,
  exponent only from ``1e21`` and below ``1e-6``); strings escape only ``"``, ``\\`` and control
  characters (lower-case ``\\u00xx``), never non-ASCII; an indent gives ``"k": v`` and ``[]``/``{}``
  for empty containers.
- msgpackr (``useRecords: false``, its default export): every object is a map16 (``de``) whatever its
  size; integers in [-2^31, 2^32) take the smallest int encoding, every other number is a float64;
  ``undefined`` is fixext1 type 0 (``d4 00 00``).

msgpack values JSON cannot hold (``undefined``, binary, other ext types) are swapped for JSON
placeholders by ``jsonable`` and put back by ``restore``, so a decoded tree can ride escrow as JSON.
"""

from __future__ import annotations

import base64
import json
import math
import struct
from decimal import Decimal
from typing import Any

import orjson

from bunzai_codecs.core.seal import TrackedDict, TrackedList

# the C-accelerated string escaper of json.dumps(ensure_ascii=False): same escapes as JSON.stringify
_escape: Any = getattr(json.encoder, "c_encode_basestring", None) or json.encoder.py_encode_basestring


# -- JSON.stringify ------------------------------------------------------------------------------


def js_number(x: int | float) -> str:
    """``String(x)`` in JavaScript, for a number parsed from JSON."""
    if isinstance(x, bool):
        raise TypeError("a bool is not a number")
    if isinstance(x, int):
        if abs(x) < 10**21:
            return str(x)
        x = float(x)
    if not math.isfinite(x):
        return "null"  # JSON.stringify(NaN) is null
    if x == 0:
        return "0"  # -0 prints as 0
    sign = "-" if x < 0 else ""
    t = Decimal(repr(abs(x))).as_tuple()  # repr: the shortest digits that round-trip, as JS picks
    digits = "".join(map(str, t.digits)).rstrip("0") or "0"
    exp = int(t.exponent) + len(t.digits) - len(digits)  # value = digits * 10**exp
    k = len(digits)
    n = k + exp  # the position of the decimal point, as ECMA-262 Number::toString names it
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    mant = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{mant}e{'+' if e >= 0 else '-'}{abs(e)}"


def stringify(value: Any, indent: int | str = 0) -> str:
    """``JSON.stringify(value, null, indent)`` for a tree parsed from JSON."""
    gap = " " * indent if isinstance(indent, int) else indent
    fast = _fast_stringify(value, gap)
    if fast is not None:
        return fast
    parts: list[str] = []
    _emit(value, gap, "", parts)
    return "".join(parts)


#: gaps orjson's text can be laid out in (its own indent is two spaces; see ``_fast_stringify``)
_FAST_GAPS = frozenset({"", "  ", "    ", "\t"})
#: value classes whose orjson text is JSON.stringify's (strings escape the same characters; the
#: containers are walked; a float is checked one by one, see ``_float_same``)
_PLAIN = frozenset({str, int, bool, type(None)})
#: the containers orjson writes as JSON does: a body's lists and dicts are tracked ones (``core.seal``)
_CONTAINERS = frozenset({dict, list, TrackedDict, TrackedList})
_FLOAT_SAME: dict[float, bool] = {}


def _float_same(x: float) -> bool:
    """Whether orjson writes ``x`` as JavaScript's ``String(x)`` does (``0.5`` yes; ``1.0``, ``1e-7``
    no): cached per value, as files repeat a few settings values."""
    same = _FLOAT_SAME.get(x)
    if same is None:
        same = orjson.dumps(x).decode("ascii") == js_number(x)
        if len(_FLOAT_SAME) > 4096:
            _FLOAT_SAME.clear()
        _FLOAT_SAME[x] = same
    return same


def _fast_stringify(value: Any, gap: str) -> str | None:
    """``stringify`` through orjson when its text is provably ``_emit``'s: plain JSON value classes
    only, every float one orjson prints as JavaScript does, a gap of 0/2/4 spaces or a tab; ``None``
    otherwise (and on anything orjson refuses: non-string keys, big integers, lone surrogates, deep
    nesting), so the exact writer below decides."""
    if gap not in _FAST_GAPS:
        return None
    c = value.__class__
    if c in _CONTAINERS:
        stack = [value]
        pop, push = stack.pop, stack.append
        while stack:
            v = pop()
            for x in v.values() if isinstance(v, dict) else v:
                xc = x.__class__
                if xc is str or xc is int or xc is bool or x is None:
                    continue
                if xc in _CONTAINERS:
                    push(x)
                elif xc is not float or not _float_same(x):
                    return None
    elif c not in _PLAIN and not (c is float and _float_same(value)):
        return None
    try:
        if not gap:
            return orjson.dumps(value).decode("utf-8")
        if gap == "  ":
            return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode("utf-8")
        # another gap: orjson indents by two spaces; when no string holds two spaces in a row (its
        # compact text has none) every "  " of the indented text is one indent level, and each
        # becomes the gap
        if b"  " in orjson.dumps(value):
            return None
        out = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except (TypeError, ValueError):  # orjson.JSONEncodeError is a TypeError
        return None
    return out.replace(b"  ", gap.encode("ascii")).decode("utf-8")


def _emit(v: Any, gap: str, cur: str, out: list[str]) -> None:
    if isinstance(v, str):
        out.append(_escape(v))
    elif v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif isinstance(v, int | float):
        out.append(js_number(v))
    elif isinstance(v, dict | list | tuple):
        # JSON.stringify's object and array: the same layout, members with their keys
        keyed = isinstance(v, dict)
        opening, closing = ("{", "}") if keyed else ("[", "]")
        if not v:
            out.append(opening + closing)
            return
        inner = cur + gap
        sep = ",\n" + inner if gap else ","
        out.append(opening + "\n" + inner if gap else opening)
        for i, (k, x) in enumerate(v.items() if isinstance(v, dict) else enumerate(v)):
            if i:
                out.append(sep)
            if keyed:
                out.append(_escape(str(k)))
                out.append(": " if gap else ":")
            _emit(x, gap, inner, out)
        out.append("\n" + cur + closing if gap else closing)
    else:
        raise TypeError(f"not a JSON value: {type(v).__name__}")


#: the JSON layouts Risu-side writers are known to use: Risu's 2-space, RisuToki's compact
JSON_STYLES: dict[str, int | str] = {"indent2": 2, "compact": 0, "indent4": 4, "tab": "\t"}


def detect_style(text: bytes, tree: Any) -> str | None:
    """The ``JSON_STYLES`` name whose ``stringify`` of ``tree`` gives ``text`` exactly, else None."""
    head = text[:2]
    order = ("compact", "indent2", "indent4", "tab") if head != b"{\n" else ("indent2", "indent4", "tab")
    for name in order:
        try:
            if stringify(tree, JSON_STYLES[name]).encode("utf-8") == text:
                return name
        except (TypeError, ValueError):
            return None
    return None


# -- msgpack, as msgpackr writes it --------------------------------------------------------------


class JsUndefined:
    """JavaScript ``undefined`` read from msgpack (fixext1 type 0); packs back to ``d4 00 00``."""

    _instance: JsUndefined | None = None

    def __new__(cls) -> JsUndefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "undefined"


UNDEFINED = JsUndefined()


def _ext_hook(code: int, data: bytes) -> Any:
    import msgpack

    if code == 0 and data == b"\x00":
        return UNDEFINED
    return msgpack.ExtType(code, data)


def unpack(data: bytes) -> Any:
    """Decode msgpack as Risu wrote it (``undefined`` kept; other ext types kept as ``ExtType``).

    Raises ``ValueError`` subclasses from the msgpack library on bad input; callers type them.
    """
    import msgpack

    return msgpack.unpackb(
        data, raw=False, strict_map_key=False, ext_hook=_ext_hook, timestamp=0, use_list=True
    )


def pack(value: Any) -> bytes:
    """msgpackr ``pack(value)`` with its default options (see the module docstring)."""
    out: list[bytes] = []
    _pack(value, out)
    return b"".join(out)


def _pack(v: Any, out: list[bytes]) -> None:
    import msgpack

    if v is None:
        out.append(b"\xc0")
    elif v is True:
        out.append(b"\xc3")
    elif v is False:
        out.append(b"\xc2")
    elif v is UNDEFINED:
        out.append(b"\xd4\x00\x00")
    elif isinstance(v, int):
        if 0 <= v < 0x1_0000_0000:
            if v < 0x80:
                out.append(bytes([v]))
            elif v < 0x100:
                out.append(b"\xcc" + bytes([v]))
            elif v < 0x10000:
                out.append(struct.pack(">BH", 0xCD, v))
            else:
                out.append(struct.pack(">BI", 0xCE, v))
        elif -0x8000_0000 <= v < 0:
            if v >= -0x20:
                out.append(struct.pack(">b", v))
            elif v >= -0x80:
                out.append(struct.pack(">Bb", 0xD0, v))
            elif v >= -0x8000:
                out.append(struct.pack(">Bh", 0xD1, v))
            else:
                out.append(struct.pack(">Bi", 0xD2, v))
        else:  # a JS number outside 32 bits is a double
            out.append(struct.pack(">Bd", 0xCB, float(v)))
    elif isinstance(v, float):
        if v.is_integer() and -0x8000_0000 <= v < 0x1_0000_0000 and not (v == 0 and math.copysign(1, v) < 0):
            _pack(int(v), out)  # JS has one number type: 3.0 is 3
        else:
            out.append(struct.pack(">Bd", 0xCB, v))
    elif isinstance(v, str):
        b = v.encode("utf-8", "surrogatepass")
        if len(b) < 0x20:
            out.append(bytes([0xA0 | len(b)]))
        else:
            _length(len(b), 0xD9, 0xDA, 0xDB, out)
        out.append(b)
    elif isinstance(v, bytes | bytearray | memoryview):
        b = bytes(v)
        _length(len(b), 0xC4, 0xC5, 0xC6, out)
        out.append(b)
    elif isinstance(v, dict):
        _length(len(v), None, 0xDE, 0xDF, out)
        for k, x in v.items():
            _pack(k, out)
            _pack(x, out)
    elif isinstance(v, list | tuple):
        if len(v) < 0x10:
            out.append(bytes([0x90 | len(v)]))
        else:
            _length(len(v), None, 0xDC, 0xDD, out)
        for x in v:
            _pack(x, out)
    elif isinstance(v, msgpack.ExtType | msgpack.Timestamp):
        out.append(msgpack.packb(v))
    else:
        raise TypeError(f"cannot pack {type(v).__name__}")


def _length(n: int, code8: int | None, code16: int, code32: int, out: list[bytes]) -> None:
    """A msgpack length header: ``code8`` and one byte (for the types that have that form), else
    ``code16`` and two bytes, else ``code32`` and four."""
    if code8 is not None and n < 0x100:
        out.append(bytes([code8, n]))
    elif n < 0x10000:
        out.append(struct.pack(">BH", code16, n))
    else:
        out.append(struct.pack(">BI", code32, n))


# -- msgpack values in a JSON tree ----------------------------------------------------------------

Path = list[str | int]


def jsonable(tree: Any) -> tuple[Any, list[dict[str, Any]]]:
    """A JSON-safe copy of a msgpack tree and the list of placeholders it needed.

    ``undefined`` becomes ``null``, binary and ext values become base64 strings; each is recorded
    as ``{"path": [...], "type": "undefined" | "bin" | "ext", "code"?: n, "value": placeholder}``.
    Map keys that are not strings become strings, as msgpackr's JavaScript objects have them.
    """
    specials: list[dict[str, Any]] = []
    return _jsonable(tree, [], specials), specials


def _jsonable(v: Any, path: Path, specials: list[dict[str, Any]]) -> Any:
    import msgpack

    if isinstance(v, dict):
        return {
            (k if isinstance(k, str) else _key(k)): _jsonable(x, [*path, _key(k)], specials)
            for k, x in v.items()
        }
    if isinstance(v, list):
        return [_jsonable(x, [*path, i], specials) for i, x in enumerate(v)]
    if v is UNDEFINED:
        specials.append({"path": path, "type": "undefined", "value": None})
        return None
    if isinstance(v, bytes):
        b64 = base64.b64encode(v).decode("ascii")
        specials.append({"path": path, "type": "bin", "value": b64})
        return b64
    if isinstance(v, msgpack.Timestamp):
        v = msgpack.ExtType(-1, v.to_bytes())
    if isinstance(v, msgpack.ExtType):
        b64 = base64.b64encode(v.data).decode("ascii")
        specials.append({"path": path, "type": "ext", "code": v.code, "value": b64})
        return b64
    if isinstance(v, float) and not math.isfinite(v):
        specials.append({"path": path, "type": "float", "value": None, "repr": repr(v)})
        return None
    return v


def _key(k: Any) -> str:
    if isinstance(k, str):
        return k
    if isinstance(k, bool):
        return "true" if k else "false"
    if k is None:
        return "null"
    if isinstance(k, int | float):
        return js_number(k)
    if isinstance(k, bytes):
        return k.decode("utf-8", "replace")
    return str(k)


def restore(tree: Any, specials: list[dict[str, Any]]) -> Any:
    """``tree`` with every placeholder of ``specials`` that is still in place swapped back.

    Returns a new tree where something was swapped (containers on the way are copied) and ``tree``
    itself otherwise; a placeholder an edit replaced is left as the edit made it.
    """
    import msgpack

    for sp in specials:
        path = sp.get("path")
        if not isinstance(path, list) or not path:
            continue
        if _get(tree, path) != (True, sp.get("value")):
            continue
        kind = sp.get("type")
        value: Any
        if kind == "undefined":
            value = UNDEFINED
        elif kind == "bin":
            value = base64.b64decode(str(sp["value"]))
        elif kind == "ext":
            value = msgpack.ExtType(int(sp["code"]), base64.b64decode(str(sp["value"])))
        elif kind == "float":
            value = float(str(sp.get("repr", "nan")))
        else:
            continue
        tree = _set(tree, path, value)
    return tree


def _get(tree: Any, path: Path) -> tuple[bool, Any]:
    cur = tree
    for p in path:
        if isinstance(cur, dict):
            if not (isinstance(p, str) and p in cur):
                return False, None
            cur = cur[p]
        elif isinstance(cur, list):
            if not (isinstance(p, int) and 0 <= p < len(cur)):
                return False, None
            cur = cur[p]
        else:
            return False, None
    return True, cur


def _set(tree: Any, path: Path, value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(tree, dict):
        out = dict(tree)
        out[head] = _set(tree[head], rest, value)
        return out
    assert isinstance(head, int)
    lst = list(tree)
    lst[head] = _set(tree[head], rest, value)
    return lst
