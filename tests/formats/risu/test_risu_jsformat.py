"""JSON.stringify and msgpackr byte layouts, written from the JavaScript rules (not from our output)."""

from __future__ import annotations

import pytest

from bunzai_codecs.formats.risu import jsformat


@pytest.mark.parametrize(
    ("value", "js"),
    [
        (0, "0"),
        (-0.0, "0"),
        (100.0, "100"),
        (0.1, "0.1"),
        (1.5, "1.5"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1.2345678901234568e20, "123456789012345680000"),
        (0.000001, "0.000001"),
        (1.5e-6, "0.0000015"),
        (1e-7, "1e-7"),
        (1.25e-7, "1.25e-7"),
        (-2.5e30, "-2.5e+30"),
        (1745411957356, "1745411957356"),
    ],
)
def test_numbers_print_as_javascript_does(value: float, js: str) -> None:
    assert jsformat.js_number(value) == js


def test_stringify_compact_and_indented() -> None:
    tree = {"a": [1, {"b": None}], "c": {}, "d": [], "e": 'é\n"\\\x01', "f": True}
    assert jsformat.stringify(tree) == '{"a":[1,{"b":null}],"c":{},"d":[],"e":"é\\n\\"\\\\\\u0001","f":true}'
    assert jsformat.stringify({"a": [1, {}], "b": []}, 2) == '{\n  "a": [\n    1,\n    {}\n  ],\n  "b": []\n}'


def test_detect_style_names_the_layout() -> None:
    tree = {"module": {"x": 1}, "type": "risuModule"}
    assert jsformat.detect_style(jsformat.stringify(tree).encode(), tree) == "compact"
    assert jsformat.detect_style(jsformat.stringify(tree, 2).encode(), tree) == "indent2"
    assert jsformat.detect_style(b'{ "module": {"x": 1}, "type": "risuModule" }', tree) is None


def test_msgpackr_writes_every_object_as_map16() -> None:
    assert jsformat.pack({"a": 1}) == b"\xde\x00\x01\xa1a\x01"
    assert jsformat.pack({}) == b"\xde\x00\x00"


def test_msgpackr_integer_and_float_rules() -> None:
    assert jsformat.pack(127) == b"\x7f"  # positive fixint up to 127 (useRecords: false)
    assert jsformat.pack(128) == b"\xcc\x80"
    assert jsformat.pack(-32) == b"\xe0"
    assert jsformat.pack(-1000) == b"\xd1\xfc\x18"
    assert jsformat.pack(0xFFFFFFFF) == b"\xce\xff\xff\xff\xff"
    # a JS number outside 32 bits is a double, even when integral
    assert jsformat.pack(2**32) == bytes.fromhex("cb41f0000000000000")
    assert jsformat.pack(3.0) == b"\x03"
    assert jsformat.pack(0.5) == bytes.fromhex("cb3fe0000000000000")


def test_msgpackr_strings_arrays_bins_and_undefined() -> None:
    assert jsformat.pack("a" * 31)[:1] == b"\xbf"
    assert jsformat.pack("a" * 32)[:2] == b"\xd9\x20"
    assert jsformat.pack(list(range(16)))[:3] == b"\xdc\x00\x10"
    assert jsformat.pack(b"\x00\x01") == b"\xc4\x02\x00\x01"
    assert jsformat.pack(jsformat.UNDEFINED) == b"\xd4\x00\x00"
    assert jsformat.unpack(b"\xd4\x00\x00") is jsformat.UNDEFINED


def test_jsonable_and_restore_round_trip_msgpack_only_values() -> None:
    tree = {"u": jsformat.UNDEFINED, "b": b"\x01", "l": [jsformat.UNDEFINED, 1]}
    safe, specials = jsformat.jsonable(tree)
    assert safe == {"u": None, "b": "AQ==", "l": [None, 1]}
    assert jsformat.pack(jsformat.restore(safe, specials)) == jsformat.pack(tree)
    # a placeholder an edit replaced stays as the edit made it
    edited = {**safe, "u": "set"}
    assert jsformat.restore(edited, specials)["u"] == "set"


# -- the orjson fast path of stringify must give the exact writer's text, or step aside ------------


def _exact(value: object, indent: int | str) -> str:
    gap = " " * indent if isinstance(indent, int) else indent
    parts: list[str] = []
    jsformat._emit(value, gap, "", parts)
    return "".join(parts)


@pytest.mark.parametrize("indent", [0, 2, 4, "\t", 3])
@pytest.mark.parametrize(
    "value",
    [
        {"a": [], "b": {}, "c": [1, {"x": None, "y": True}], "d": 'é\u2028\n"\\\x01\x7f'},
        {"f": 0.5, "g": [0.25, -3.75]},
        {"f": 1.0},  # JS prints 1: the exact writer decides
        {"f": 1e-7, "g": 1e21, "h": -0.0},
        {"i": 2**64},  # beyond orjson: the exact writer decides
        {"s": "\ud800"},  # lone surrogate: same text as the exact writer
        {"two  spaces": ["a  b", " x ", {"k": "  "}]},  # a 4-space or tab gap: the exact writer decides
        [[[[{"deep": [1, 2, [3]]}]]]],
        "plain",
        [],
    ],
)
def test_stringify_fast_path_matches_the_exact_writer(value: object, indent: int | str) -> None:
    assert jsformat.stringify(value, indent) == _exact(value, indent)


def test_stringify_fast_path_steps_aside_for_non_string_keys() -> None:
    assert jsformat._fast_stringify({1: "x"}, "  ") is None
    assert jsformat.stringify({1: "x"}, 2) == _exact({1: "x"}, 2) == '{\n  "1": "x"\n}'
