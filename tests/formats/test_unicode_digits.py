"""Regression (property and hostile suites): ``"²".isdigit()`` is True but ``int("²")`` raises.

Several mappers guarded ``int(text)`` with ``text.isdigit()``: a canonical id, position, phase or
substitution setting of ``"²"`` (or ``"٣"``, ``"①"``) crashed the encoders with a bare ValueError
(chub-lorebook entry ids, the shared CCv3 book, SillyTavern lore positions and regex placements),
and a Marinara lorebook whose ``position`` is such a string crashed its decoder. Every codec now
treats them as the text they are.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import EmitContext
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import BODY_TYPES

ODD = ["²", "٣", "①", "-²"]

BODIES = {
    "lorebook": lambda d: {"entries": [{"id": d, "title": "t", "content": "c", "position": d}]},
    "regex": lambda d: {"rules": [{"id": d, "find": "a", "phases": [d], "substituteFind": d}]},
    "preset": lambda d: {"prompts": [{"id": d, "name": "p", "content": "c"}]},
    "persona": lambda d: {"name": d, "content": "c"},
    "character": lambda d: {
        "identity": {"name": d},
        "prompts": {"depthInjections": [{"text": "x", "depth": 1}]},
    },
}


#: every codec that writes an entity it did not read (vaud-json aside); a read-only format writes only
#: over its own twin, and its tests edit its samples with such values
WRITERS = sorted(c.id for c in registry.all_codecs() if c.id != "vaud-json" and not c.read_only)


@pytest.mark.parametrize("digit", ODD)
@pytest.mark.parametrize("codec_id", WRITERS)
def test_unicode_digit_strings_encode_and_decode(codec_id: str, digit: str) -> None:
    codec = registry.get(codec_id)
    body = BODY_TYPES[codec.kind].model_validate(BODIES[codec.kind](digit))
    data = codec.encode(CanonicalEntity(kind=codec.kind, id=f"{codec.kind}-x", body=body), EmitContext())
    decoded = codec.decode(Sniff(data, "x" + codec.extension))  # a typed error would raise: none expected
    assert decoded.primary.kind == codec.kind
    # read back as the text it is: encoding what was decoded writes the same bytes again
    assert codec.encode(decoded.primary, EmitContext()) == data
    # and kept as text wherever the file holds it (a name always; an id, a position where the format has one)
    escaped = digit.encode("ascii", "backslashreplace").decode().replace("\\x", "\\u00").encode()
    if codec.kind in ("character", "persona") or digit.encode() in data or escaped in data:
        assert digit in _strings(decoded.primary.body.model_dump(mode="json"))


def _strings(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value}
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return {s for item in items for s in _strings(item)}


@pytest.mark.parametrize("digit", ODD)
def test_a_marinara_lorebook_position_of_unicode_digits_reads_as_world(digit: str) -> None:
    tree = {
        "type": "marinara_lorebook",
        "version": 1,
        "data": {
            "lorebook": {"name": "b"},
            "entries": [{"id": "e1", "name": "e", "content": "c", "position": digit}],
        },
    }
    decoded = registry.get("marinara-lorebook").decode(Sniff(orjson.dumps(tree), "b.json"))
    assert decoded.primary.body.entries[0].position == "world"
