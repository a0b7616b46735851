"""One policy for a value of the wrong-but-coercible type, in every codec that reads that kind of field.

Each row puts one lenient value into a bundled sample (``"0.5"`` where a number belongs, ``7`` where a
string belongs, ``1``/``"true"`` where a boolean belongs) and checks the same three outcomes whatever
the codec: the value is read as JavaScript would read it, the entity carries exactly one note in the
reader's one style (``<json path>: expected <what>, found <what>; read as <value>``), and a
same-format export of the unedited entity writes the raw value back (the escrow twin keeps it).
"""

from __future__ import annotations

import copy
import io
import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from bunzai_codecs import read, write
from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.formats._shared import wire
from tests.formats.helpers import png_chunk, sample, tiny_png
from tests.formats.make_samples import exif_block

Key = str | int


@dataclass(frozen=True)
class Case:
    sample: str
    fmt: str
    at: tuple[Key, ...]  # where the value goes in the native tree
    value: Any  # the lenient value written there
    path: str  # the JSON path the note names
    expected: str  # the reader's "expected ..." words
    found: str  # the reader's "found ..." words
    read_as: Any  # the canonical value
    got: Callable[[dict[str, Any]], Any]  # the canonical value, from the body's JSON form
    kinds: tuple[str, ...] = ("lorebook", "regex")  # the kinds of the entity that carries the note


def _entry(i: int, field: str) -> Callable[[dict[str, Any]], Any]:
    return lambda b: b["entries"][i].get(field)


def _rule(i: int, field: str) -> Callable[[dict[str, Any]], Any]:
    return lambda b: b["rules"][i].get(field)


NUM, STR, BOOL = "a number", "a string", "a boolean"

CASES = [
    # a numeric string where a number belongs
    Case(
        "sillytavern/world-harbor-town.json",
        "sillytavern-lorebook",
        ("entries", "0", "order"),
        "0.5",
        "$.entries['0'].order",
        NUM,
        "the string '0.5'",
        0.5,
        _entry(0, "sortOrder"),
    ),
    Case(
        "sillytavern/lighthouse-keeper.v2.json",
        "sillytavern",
        ("data", "character_book", "entries", 0, "insertion_order"),
        "0.5",
        "$.data.character_book.entries[0].insertion_order",
        NUM,
        "the string '0.5'",
        0.5,
        _entry(0, "sortOrder"),
    ),
    Case(
        "risu/harbor_lorebook_export.json",
        "risu-lorebook",
        ("data", 1, "insertorder"),
        "0.5",
        "$.data[1].insertorder",
        NUM,
        "the string '0.5'",
        0.5,
        _entry(0, "sortOrder"),
    ),
    Case(
        "novelai/hollin.lorebook",
        "novelai-lorebook",
        ("entries", 0, "contextConfig", "budgetPriority"),
        "0.5",
        "$.entries[0].contextConfig.budgetPriority",
        NUM,
        "the string '0.5'",
        0.5,
        _entry(0, "sortOrder"),
    ),
    Case(
        "agnai/book-3f90-Harbor-Ward.json",
        "agnai-lorebook",
        ("entries", 0, "weight"),
        "0.5",
        "$.entries[0].weight",
        NUM,
        "the string '0.5'",
        0.5,
        _entry(0, "sortOrder"),
    ),
    Case(
        "marinara/lorebook.saltmarsh.marinara.json",
        "marinara-lorebook",
        ("data", "entries", 0, "order"),
        "0.5",
        "$.data.entries[0].order",
        NUM,
        "the string '0.5'",
        0.5,
        _entry(0, "sortOrder"),
    ),
    # a number where a string belongs
    Case(
        "sillytavern/world-harbor-town.json",
        "sillytavern-lorebook",
        ("entries", "0", "comment"),
        7,
        "$.entries['0'].comment",
        STR,
        "the number 7",
        "7",
        _entry(0, "title"),
    ),
    Case(
        "sillytavern/lighthouse-keeper.v2.json",
        "sillytavern",
        ("data", "character_book", "entries", 0, "content"),
        7,
        "$.data.character_book.entries[0].content",
        STR,
        "the number 7",
        "7",
        _entry(0, "content"),
    ),
    Case(
        "risu/harbor_lorebook_export.json",
        "risu-lorebook",
        ("data", 1, "content"),
        7,
        "$.data[1].content",
        STR,
        "the number 7",
        "7",
        _entry(0, "content"),
    ),
    Case(
        "risu/harbor_regexscript_export.json",
        "risu-regex",
        ("data", 0, "comment"),
        7,
        "$.data[0].comment",
        STR,
        "the number 7",
        "7",
        _rule(0, "label"),
    ),
    Case(
        "novelai/hollin.lorebook",
        "novelai-lorebook",
        ("entries", 0, "text"),
        7,
        "$.entries[0].text",
        STR,
        "the number 7",
        "7",
        _entry(0, "content"),
    ),
    Case(
        "agnai/book-3f90-Harbor-Ward.json",
        "agnai-lorebook",
        ("entries", 0, "entry"),
        7,
        "$.entries[0].entry",
        STR,
        "the number 7",
        "7",
        _entry(0, "content"),
    ),
    Case(
        "marinara/lorebook.saltmarsh.marinara.json",
        "marinara-lorebook",
        ("data", "entries", 0, "content"),
        7,
        "$.data.entries[0].content",
        STR,
        "the number 7",
        "7",
        _entry(0, "content"),
    ),
    Case(
        "pygmalion/oskar.pygmalion.json",
        "pygmalion",
        ("char_persona",),
        7,
        "$.char_persona",
        STR,
        "the number 7",
        "7",
        lambda b: b["identity"]["description"],
        ("character",),
    ),
    # 1 / "true" where a boolean belongs
    Case(
        "sillytavern/lighthouse-keeper.v2.json",
        "sillytavern",
        ("data", "character_book", "entries", 0, "constant"),
        1,
        "$.data.character_book.entries[0].constant",
        BOOL,
        "the number 1",
        True,
        _entry(0, "constant"),
    ),
    Case(
        "sillytavern/world-harbor-town.json",
        "sillytavern-lorebook",
        ("entries", "0", "constant"),
        1,
        "$.entries['0'].constant",
        BOOL,
        "the number 1",
        True,
        _entry(0, "constant"),
    ),
    Case(
        "novelai/hollin.lorebook",
        "novelai-lorebook",
        ("entries", 0, "forceActivation"),
        "true",
        "$.entries[0].forceActivation",
        BOOL,
        "the string 'true'",
        True,
        _entry(0, "constant"),
    ),
    Case(
        "agnai/book-3f90-Harbor-Ward.json",
        "agnai-lorebook",
        ("entries", 0, "enabled"),
        0,
        "$.entries[0].enabled",
        BOOL,
        "the number 0",
        False,
        _entry(0, "enabled"),
    ),
    Case(
        "marinara/lorebook.saltmarsh.marinara.json",
        "marinara-lorebook",
        ("data", "entries", 0, "constant"),
        1,
        "$.data.entries[0].constant",
        BOOL,
        "the number 1",
        True,
        _entry(0, "constant"),
    ),
]


def _get(tree: Any, at: tuple[Key, ...]) -> Any:
    for k in at:
        tree = tree[k]
    return tree


def legacy_png(comment: bytes) -> bytes:
    """A PNG whose EXIF UserComment is ``comment`` (Backyard's legacy container)."""
    return tiny_png(after_ihdr=png_chunk(b"eXIf", exif_block(comment)))


def _put(tree: Any, at: tuple[Key, ...], value: Any) -> Any:
    out = copy.deepcopy(tree)
    node = out
    for k in at[:-1]:
        node = node[k]
    node[at[-1]] = value
    return out


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.fmt}:{c.path}")
def test_a_coercible_value_is_read_noted_once_and_written_back(case: Case) -> None:
    tree = _put(json.loads(sample(case.sample)), case.at, case.value)
    data = json.dumps(tree, ensure_ascii=False).encode()
    name = case.sample.rsplit("/", 1)[-1]
    decoded = read(data, name, format=case.fmt)
    e = next(x for x in decoded.entities if x.kind in case.kinds)
    assert case.got(e.body.dump()) == case.read_as
    note = f"{case.path}: expected {case.expected}, found {case.found}; read as {case.read_as!r}"
    assert [w for w in e.warnings if w.startswith(case.path + ":")] == [note]
    # the raw value stays in the escrow twin: an unedited same-format export writes the input's tree
    # again, with the lenient value as it was (its type too: JSON's 1 is not true, though Python says so)
    out = json.loads(write(decoded.entities[0], case.fmt, linked=decoded.entities).data)
    assert out == tree
    back = _get(out, case.at)
    assert (type(back), back) == (type(case.value), case.value)


def test_the_reader_notes_a_value_once_however_often_it_is_read() -> None:
    ctx = wire.MapContext("$.x")
    for _ in range(3):
        assert wire.num_at("2", ctx, "n") == 2
        assert wire.opt_num("2", "$.x.n", ctx) == 2
    assert ctx.warnings == ["$.x.n: expected a number, found the string '2'; read as 2"]


def test_strict_and_lenient_contexts_differ_only_on_values_that_cannot_be_read() -> None:
    strict, lenient = wire.MapContext("$"), wire.MapContext("$", lenient=True)
    for ctx in (strict, lenient):  # coercible: the same outcome in both modes
        assert wire.str_at(5, ctx, "s") == "5"
        assert wire.read_bool("false", ctx, ("b",)) is False
    assert strict.warnings == lenient.warnings
    assert lenient.num([1], ("n",), 3) == 3
    assert lenient.warnings[-1] == "$.n: expected a number, found an array; read as 3"
    with pytest.raises(Malformed) as err:
        strict.num([1], ("n",), 3)
    assert (err.value.path, err.value.message) == ("$.n", "expected a number, found an array")


# -- Backyard: the values live in a PNG's EXIF comment or in a zip's JSON members -------------------

BY_PNG, BY_ZIP = "backyard/maelis.v4.backyard.png", "backyard/maelis.byaf"
BY_CHARACTER = "characters/maelis01/character.json"


def _legacy_with(at: tuple[Key, ...], value: Any) -> bytes:
    """The legacy sample's ``{character, version}`` tree, with ``value`` at ``at``, in a fresh PNG."""
    tree = read(sample(BY_PNG), "m.png").primary.original["backyard"].raw
    return legacy_png(json.dumps(_put(tree, at, value)).encode())


def _archive_with(member: str, at: tuple[Key, ...], value: Any) -> bytes:
    """The .byaf sample with ``value`` at ``at`` in its JSON ``member``."""
    with zipfile.ZipFile(io.BytesIO(sample(BY_ZIP))) as z:
        files = {n: z.read(n) for n in z.namelist()}
    files[member] = json.dumps(_put(json.loads(files[member]), at, value)).encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for n, d in files.items():
            z.writestr(n, d)
    return buf.getvalue()


def _first_scenario() -> str:
    with zipfile.ZipFile(io.BytesIO(sample(BY_ZIP))) as z:
        return json.loads(z.read("manifest.json"))["scenarios"][0]


@dataclass(frozen=True)
class BackyardCase:
    fmt: str
    data: Callable[[], bytes]
    kind: str  # the entity that carries the note
    path: str
    got: Callable[[dict[str, Any]], Any]


BACKYARD = [
    BackyardCase(
        "backyard",
        lambda: _legacy_with(("character", "aiPersona"), 7),
        "character",
        "$.character.aiPersona",
        lambda b: b["identity"]["description"],
    ),
    BackyardCase(
        "backyard",
        lambda: _legacy_with(("character", "loreItems", 0, "value"), 7),
        "lorebook",
        "$.character.loreItems[0].value",
        lambda b: b["entries"][0]["content"],
    ),
    BackyardCase(
        "byaf",
        lambda: _archive_with(BY_CHARACTER, ("persona",), 7),
        "character",
        "$.persona",
        lambda b: b["identity"]["description"],
    ),
    BackyardCase(
        "byaf",
        lambda: _archive_with(_first_scenario(), ("narrative",), 7),
        "character",
        "$.narrative",
        lambda b: b["persona"]["scenario"],
    ),
    BackyardCase(
        "byaf",
        lambda: _archive_with(BY_CHARACTER, ("loreItems", 0, "key"), 7),
        "lorebook",
        "$.loreItems[0].key",
        lambda b: b["entries"][0]["title"],
    ),
]


@pytest.mark.parametrize("case", BACKYARD, ids=lambda c: f"{c.fmt}:{c.path}")
def test_backyard_reads_a_number_where_text_belongs_by_the_same_policy(case: BackyardCase) -> None:
    data = case.data()
    decoded = read(data, "m.byaf" if case.fmt == "byaf" else "m.png", format=case.fmt)
    e = next(x for x in decoded.entities if x.kind == case.kind)
    assert case.got(e.body.dump()) == "7"
    assert [w for w in e.warnings if w.startswith(case.path + ":")] == [
        f"{case.path}: expected a string, found the number 7; read as '7'"
    ]
    # an unedited same-format export writes the number back: read again, it is noted again
    again = read(write(decoded.primary, case.fmt, linked=decoded.entities).data, "again", format=case.fmt)
    twin = next(x for x in again.entities if x.kind == case.kind)
    assert twin.original[case.fmt].raw == e.original[case.fmt].raw
    assert [w for w in twin.warnings if w.startswith(case.path + ":")] == [
        f"{case.path}: expected a string, found the number 7; read as '7'"
    ]


def test_backyard_refuses_a_value_that_cannot_be_read_as_text_in_the_one_style() -> None:
    with pytest.raises(Malformed) as err:
        read(_legacy_with(("character", "aiPersona"), True), "m.png", format="backyard")
    assert (err.value.path, err.value.message) == (
        "$.character.aiPersona",
        "expected a string, found a boolean",
    )
    with pytest.raises(Malformed) as err:
        read(_archive_with(BY_CHARACTER, ("loreItems",), {"key": "x"}), "m.byaf", format="byaf")
    assert (err.value.path, err.value.message) == (
        "$.loreItems",
        f"{BY_CHARACTER}: expected an array, found an object",
    )


# -- a wrong structure: Malformed at its path, in the reader's words, in every codec -----------------


@dataclass(frozen=True)
class Shape:
    sample: str
    fmt: str
    at: tuple[Key, ...]
    value: Any
    path: str
    message: str


SHAPES = [
    Shape(
        "risu/harbor_lorebook_export.json",
        "risu-lorebook",
        ("data", 1),
        "x",
        "$.data[1]",
        "expected an object, found a string",
    ),
    Shape(
        "risu/harbor_regexscript_export.json",
        "risu-regex",
        ("data", 0),
        5,
        "$.data[0]",
        "expected an object, found a number",
    ),
    Shape(
        "risu/harbor_night_shift_preset.json",
        "risu-preset",
        ("promptTemplate",),
        {},
        "$.promptTemplate",
        "expected an array, found an object",
    ),
    Shape(
        "novelai/hollin.lorebook",
        "novelai-lorebook",
        ("entries", 0),
        [],
        "$.entries[0]",
        "expected an object, found an array",
    ),
    Shape(
        "novelai/hollin.lorebook",
        "novelai-lorebook",
        ("categories",),
        {},
        "$.categories",
        "expected an array, found an object",
    ),
    Shape(
        "agnai/book-3f90-Harbor-Ward.json",
        "agnai-lorebook",
        ("entries", 0),
        "x",
        "$.entries[0]",
        "expected an object, found a string",
    ),
    Shape(
        "agnai/book-3f90-Harbor-Ward.json",
        "agnai-lorebook",
        ("entries", 0, "position"),
        [],
        "$.entries[0].position",
        "expected a string or a number, found an array",
    ),
    Shape(
        "agnai/Pip.json",
        "agnai",
        ("persona", "kind"),
        3,
        "$.persona.kind",
        "expected a string, found a number",
    ),
    Shape("agnai/Pip.json", "agnai", ("voice",), "x", "$.voice", "expected an object, found a string"),
    Shape(
        "marinara/lorebook.saltmarsh.marinara.json",
        "marinara-lorebook",
        ("data", "entries", 0, "selectiveLogic"),
        [],
        "$.data.entries[0].selectiveLogic",
        "expected a string, found an array",
    ),
    Shape(
        "marinara/regex.single.json",
        "marinara-regex",
        ("findRegex",),
        None,
        "$.findRegex",
        "expected a string, found null",
    ),
    Shape(
        "marinara/story-bundle.lanternfall.marinara.json",
        "marinara-story-bundle",
        ("data", "characterIds"),
        "c1",
        "$.data.characterIds",
        "expected an array of ids, found a string",
    ),
]


@pytest.mark.parametrize("case", SHAPES, ids=lambda c: f"{c.fmt}:{c.path}")
def test_a_wrong_structure_is_malformed_at_its_path_in_the_readers_words(case: Shape) -> None:
    tree = _put(json.loads(sample(case.sample)), case.at, case.value)
    with pytest.raises(Malformed) as err:
        read(json.dumps(tree).encode(), case.sample.rsplit("/", 1)[-1], format=case.fmt)
    assert (err.value.path, err.value.message) == (case.path, case.message)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("id", 5, "expected a string, found a number"),
        ("links", [], "expected an object, found an array"),
        ("warnings", {}, "expected an array, found an object"),
        ("media", "x", "expected an object, found a string"),
    ],
)
def test_a_vaud_json_entity_of_the_wrong_shape_is_malformed_in_the_readers_words(
    key: str, value: Any, message: str
) -> None:
    primary = read(sample("agnai/Pip.json"), "Pip.json").primary
    tree = _put(json.loads(write(primary, "vaud-json").data), (key,), value)
    with pytest.raises(Malformed) as err:
        read(json.dumps(tree).encode(), "pip.vaud.json", format="vaud-json")
    assert (err.value.path, err.value.message) == (f"$.{key}", message)
