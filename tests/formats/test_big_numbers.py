"""Issue 37: a number that does not fit is data, never an internal error.

A public NovelAI lorebook generator writes entry ids as 39-digit numeric strings. Converted to
``sillytavern-lorebook`` or ``agnai-lorebook`` such a book crashed with ``TypeError: Integer
exceeds 64-bit range``: the writers turned every numeric id into an ``int`` and orjson holds 64 bits.
Numeric text read where a number belongs (``"order": "1234…"``) crashed the same way in every writer
and in the canonical vaud-json line, and a date no calendar holds crashed the date writers.

The rule now: numeric text beyond 64 bits reads as the float a JSON integer of those digits reads as
(``core.sniff.json_integer``, noted on the entity); an id, position or placement text is written as
a number only when the app holds it exactly (``wire.int_text``: JavaScript's safe integers), else
kept as text, or renumbered where only a number will do (a SillyTavern uid) — a change the fidelity
report names. The sample-wide sweep (every id and order field of every sample as a 39-digit number,
converted to every format of its kind) is the hostile ``bignum`` category (tests/hostile/).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from bunzai_codecs import read
from bunzai_codecs.convert import Options, losses, plan
from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import EmitContext
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.sniff import Sniff, json_integer, parse_json
from bunzai_codecs.entities import BODY_TYPES
from bunzai_codecs.formats._shared.wire import MAX_SAFE_INT, MapContext, int_text, utc_from_us

BIG = "123456789012345678901234567890123456789"

#: the numbers a canonical body can hold where an app stores an integer: the float a 39-digit JSON
#: integer (or numeric text) reads as, its negative, the largest integer the canonical writer holds
#: (orjson: 64 bits; no JavaScript app holds it exactly), and a whole float beyond JavaScript's safe
#: integers
NUMBERS = [float(BIG), -float(BIG), 2**64 - 1, float(2**60)]

BODIES: dict[str, Any] = {
    "lorebook": lambda t, n: {
        "entries": [
            {
                "id": t,
                "title": "t",
                "content": "c",
                "position": t,
                "categoryId": t,
                "sortOrder": n,
                "priority": n,
                "depth": n,
                "displayIndex": n,
                "scanDepth": n,
                "delayUntilRecursion": n,
                "groupWeight": n,
            }
        ],
        "categories": [{"id": t, "name": "c", "sortOrder": n}],
    },
    "regex": lambda t, n: {
        "rules": [
            {
                "id": t,
                "find": "a",
                "phases": [t],
                "substituteFind": t,
                "minDepth": n,
                "maxDepth": n,
                "sortOrder": n,
            }
        ]
    },
    "preset": lambda t, n: {
        "prompts": [
            {"id": t, "name": "p", "content": "c", "placement": t, "injectionDepth": n, "injectionOrder": n}
        ],
        "samplers": {"samplerOrder": [t], "maxContext": n, "topK": n},
        "generation": {"seed": n},
        "groups": [{"id": t, "name": "g", "order": n}],
    },
    "persona": lambda t, n: {"name": "p", "content": "c", "chatInjection": {"position": t, "depth": n}},
    "character": lambda t, n: {
        "identity": {"name": "c"},
        "prompts": {"depthInjections": [{"text": "x", "depth": n}]},
        "attribution": {"createdAt": n, "updatedAt": n},
    },
}


def _body(kind: str, text: str, number: int | float) -> Any:
    return BODY_TYPES[kind].model_validate(BODIES[kind](text, number))


@pytest.mark.parametrize("number", NUMBERS, ids=["float", "negative-float", "u64", "float-2^60"])
@pytest.mark.parametrize("text", [BIG, f"-{BIG}"], ids=["digits", "negative"])
#: a read-only format (a NovelAI story) writes back only what it read: its round trip of a read file
#: is in its own tests, and its lorebook is read by the novelai-lorebook mapping tested below
@pytest.mark.parametrize("codec_id", sorted(c.id for c in registry.all_codecs() if not c.read_only))
def test_every_codec_writes_and_reads_back_numbers_that_do_not_fit(
    codec_id: str, text: str, number: int | float
) -> None:
    """Every id, position and placement a 39-digit text, every order, depth and date a number no
    app holds exactly: every codec encodes the body and decodes what it wrote (no error at all)."""
    codec = registry.get(codec_id)
    body = _body(codec.kind, text, number)
    data = codec.encode(CanonicalEntity(kind=codec.kind, id=f"{codec.kind}-x", body=body), EmitContext())
    back = codec.decode(Sniff(data, "x" + codec.extension))
    if codec.lossless:  # the canonical vaud-json line holds all of it, exactly
        assert back.primary.body == body


def _novelai_book(eid: str = BIG) -> bytes:
    """A NovelAI lorebook as the generator writes it (built here, not copied from the corpus): one
    entry whose ``id`` is a 39-digit numeric string."""
    entry = {
        "text": "Galena, the witch of the tower.",
        "contextConfig": {"prefix": "", "suffix": "\n", "budgetPriority": 400, "insertionPosition": -1},
        "lastUpdatedAt": 1638423588371,
        "displayName": "Galena",
        "id": eid,
        "keys": ["Galena", "witch"],
        "searchRange": 1000,
        "enabled": True,
        "forceActivation": False,
        "category": "",
    }
    return orjson.dumps({"lorebookVersion": 6, "entries": [entry], "settings": {}, "categories": []})


#: every lorebook format that holds entries (a Marinara story bundle holds references only) and
#: writes a new file (a NovelAI story is read-only)
LORE_TARGETS = sorted(
    c.id for c in registry.for_kind("lorebook") if c.coverage.covers("entries[].content") and not c.read_only
)


@pytest.mark.parametrize("target", LORE_TARGETS)
def test_a_39_digit_novelai_id_converts_to_every_lorebook_format(tmp_path: Path, target: str) -> None:
    """The real-file crash: the id is kept (as text where the target's ids are numbers it cannot
    hold), or where only a number will do (a SillyTavern uid) renumbered and reported as a change."""
    src = tmp_path / "generated.lorebook"
    src.write_bytes(_novelai_book())
    p = plan(src, src.read_bytes(), Options(to=target, output=str(tmp_path / "out") + "/"))
    (row,) = losses(p)
    assert row.error is None, row.error
    back = read(p.files[0].export.data, p.files[0].path.name, format=target).primary
    (entry,) = back.body.entries
    assert entry.content == "Galena, the witch of the tower."
    if entry.id != BIG:
        changed = [
            loss for change, loss in row.losses() if change == "changed" and loss.path == "entries[].id"
        ]
        assert changed and changed[0].cls == "expected", list(row.losses())
        # renumbered only where the format keeps no id of ours: a SillyTavern uid is a number it
        # makes, a KoboldAI world info entry is its position
        assert not registry.get(target).coverage.covers("entries[].id"), target


def test_agnai_keeps_the_id_as_text_and_sillytavern_renumbers_it(tmp_path: Path) -> None:
    e = read(_novelai_book(), "generated.lorebook").primary
    agnai = orjson.loads(registry.get("agnai-lorebook").encode(e, EmitContext()))
    assert agnai["entries"][0]["id"] == BIG
    world = orjson.loads(registry.get("sillytavern-lorebook").encode(e, EmitContext()))
    assert world["entries"] == {"0": world["entries"]["0"]} and world["entries"]["0"]["uid"] == 0
    # an id an app holds exactly is still written as the number it is
    small = read(_novelai_book(str(MAX_SAFE_INT)), "generated.lorebook").primary
    assert orjson.loads(registry.get("agnai-lorebook").encode(small, EmitContext()))["entries"][0]["id"] == (
        MAX_SAFE_INT
    )
    world = orjson.loads(registry.get("sillytavern-lorebook").encode(small, EmitContext()))
    assert world["entries"][str(MAX_SAFE_INT)]["uid"] == MAX_SAFE_INT


def test_numeric_text_beyond_64_bits_reads_as_its_json_number_and_says_so() -> None:
    world = {"entries": {"0": {"uid": 0, "key": ["k"], "content": "c", "order": BIG, "depth": f"-{BIG}"}}}
    e = read(orjson.dumps(world), "w.json", format="sillytavern-lorebook").primary
    entry = e.body.entries[0]
    assert entry.sortOrder == float(BIG) == parse_json(BIG.encode())
    assert entry.depth == -float(BIG)
    assert any("$.entries['0'].order" in w and "read as 1.2345678901234568e+38" in w for w in e.warnings), (
        e.warnings
    )
    # the same-format export writes the text back as it was (the twin)
    again = orjson.loads(registry.get("sillytavern-lorebook").encode(e, EmitContext()))
    assert again["entries"]["0"]["order"] == BIG


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("0", 0),
        ("007", 7),
        ("-3", -3),
        (str(MAX_SAFE_INT), MAX_SAFE_INT),
        (f"-{MAX_SAFE_INT}", -MAX_SAFE_INT),
        ("0" * 30 + "5", 5),
        (str(MAX_SAFE_INT + 1), None),
        (BIG, None),
        (f"-{BIG}", None),
        ("²", None),
        ("--5", None),
        ("+5", None),
        ("1_000", None),
        (" 5", None),
        ("", None),
        ("-", None),
        ("9" * 5000, None),
    ],
)
def test_int_text(text: str, want: int | None) -> None:
    assert int_text(text) == want


def test_json_integer_and_dates_that_do_not_fit() -> None:
    assert json_integer(str(2**64 - 1)) == 2**64 - 1
    assert json_integer(str(-(2**63))) == -(2**63)
    assert json_integer(str(2**64)) == float(2**64)
    assert json_integer(str(-(2**63) - 1)) == float(-(2**63) - 1)
    assert MapContext().num(BIG) == float(BIG)
    assert utc_from_us(0) is not None and utc_from_us(0).year == 1970  # type: ignore[union-attr]
    assert utc_from_us(int(float(BIG))) is None
    assert utc_from_us(-(10**18)) is None
