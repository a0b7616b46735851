"""The escrow twin's own rules (core/escrow.py), each pinned directly: mutation testing found them
exercised only through codecs that never hit them (a facet set after the twin was made, a blob
that is not bytes, a JSON boolean where a facet holds text or a number)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.core.escrow import Twin, facet


@dataclass(eq=False)
class _Twin(Twin):
    at: int | None = facet(int)
    flag: bool | str | None = facet((bool, str))
    anything: Any = facet()
    spelled: str | None = facet(str, wire="spelledOnTheWire")


def test_a_facet_set_later_is_written_after_the_others_once() -> None:
    t = _Twin.of({"a": 1}, shape="world")
    t.put("at", 3)
    t.put("spelled", "x")
    t.put("at", 4)  # again: the value changes, its key is not written twice
    assert (t.at, t.spelled) == (4, "x")
    assert t.keys == ("raw", "shape", "at", "spelledOnTheWire")
    assert t.to_json() == {"raw": {"a": 1}, "shape": "world", "at": 4, "spelledOnTheWire": "x"}
    back = _Twin.from_json(t.to_json(), "$.original.x")
    assert (back.at, back.spelled, back.shape, back.keys) == (4, "x", "world", t.keys)


def test_only_a_facet_can_be_set() -> None:
    t = _Twin.of(None)
    for bad in ("raw", "nope", "spelledOnTheWire"):
        with pytest.raises(TypeError, match=f"_Twin has no facet '{bad}'"):
            t.put(bad, 1)
    assert t.keys == ("raw",)
    with pytest.raises(TypeError, match="_Twin has no facet 'nope'"):
        _Twin.of(None, nope=1)


def test_a_blob_is_bytes_or_nothing() -> None:
    t = Twin.of(None, blobs={"png": b"\x89PNG", "odd": "not bytes", "none": None})
    assert t.blob("png") == b"\x89PNG"
    assert t.blob("odd") is None and t.blob("none") is None and t.blob("missing") is None
    assert Twin.of(None).blob("png") is None


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("shape", True, "a string"),
        ("at", True, "a number"),
        ("at", "3", "a number"),
        ("spelledOnTheWire", False, "a string"),
        ("flag", 3, "a boolean or a string"),
    ],
)
def test_a_facet_of_the_wrong_json_type_is_malformed_at_its_path(key: str, value: Any, expected: str) -> None:
    """A JSON boolean is never a number or a string here (Python's bool is an int)."""
    with pytest.raises(Malformed) as e:
        _Twin.from_json({"raw": None, key: value}, "$.original.x")
    assert e.value.path == f"$.original.x.{key}"
    assert e.value.message == f"expected {expected} in the escrow twin"


def test_a_facet_that_holds_booleans_or_anything_takes_one() -> None:
    t = _Twin.from_json({"raw": None, "flag": True, "anything": False, "at": 2, "other": True}, "$")
    assert (t.flag, t.anything, t.at, t.extra) == (True, False, 2, {"other": True})
    assert _Twin.from_json({"raw": None, "flag": "yes", "anything": [1]}, "$").flag == "yes"
