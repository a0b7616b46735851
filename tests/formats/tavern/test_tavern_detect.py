"""The Tavern card lineage detects one way: every app's row names the lineage's ``CardDetector``,
built from the app's data (the mark its dialect leaves on a card, the scorer of its own file), and
a card codec with no row detects through one built from its dialect and envelope. A new Tavern card
app is its dialect and codec class plus a table row."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from bunzai_codecs import read
from bunzai_codecs.core import registry
from bunzai_codecs.core.format import Format
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.formats import table
from bunzai_codecs.formats.tavern.card import TavernCard
from bunzai_codecs.formats.tavern.detect import MARKED, CardDetector, CardMark
from tests.formats.helpers import text_chunk, tiny_png

CARD_APPS = ("sillytavern", "rolecall", "lumiverse", "marinara-character")


def _card(ext: dict[str, Any]) -> bytes:
    data = {"name": "Nim", "first_mes": "Hello.", "extensions": ext}
    return orjson.dumps({"spec": "chara_card_v3", "spec_version": "3.0", "data": data})


def _scores(data: bytes, name: str = "nim.json") -> dict[str, float]:
    return {c.id: c.score for c in registry.detect_all(Sniff(data, name)).candidates}


def test_every_tavern_card_app_detects_through_the_lineages_detector() -> None:
    for fid in CARD_APPS:
        row = table.BY_ID[fid]
        codec = registry.get(fid)
        assert isinstance(codec, TavernCard)
        assert isinstance(row.detector, CardDetector), fid
    # and no other format's codec is a Tavern card
    others = [f.id for f in table.FORMATS if f.id not in CARD_APPS]
    assert not [i for i in others if isinstance(registry.get(i), TavernCard)]


@pytest.mark.parametrize(
    ("ext", "winner", "score"),
    [
        ({}, "sillytavern", 0.9),
        ({"rolecall": {}}, "rolecall", 1.0),
        ({"rolecall": {"tagline": "x"}}, "rolecall", 1.0),
        ({"rolecall": "not an object"}, "sillytavern", 0.9),
        ({"expressions": {}}, "lumiverse", MARKED),
        ({"expressions": "not an object"}, "sillytavern", 0.9),
        ({"world_book_ids": []}, "lumiverse", MARKED),
        ({"alternate_character_name": "N"}, "lumiverse", MARKED),
        ({"alternate_character_name": 7}, "sillytavern", 0.9),
        ({"ttsVoice": None}, "lumiverse", MARKED),  # the key alone marks
        # only RoleCall writes `extensions.rolecall`: its certain mark wins over Lumiverse's keys
        ({"rolecall": {}, "expressions": {}}, "rolecall", 1.0),
    ],
)
def test_a_card_is_the_app_whose_mark_it_carries(ext: dict[str, Any], winner: str, score: float) -> None:
    best = registry.detect(Sniff(_card(ext), "nim.json"))
    assert best is not None and (best.id, best.score) == (winner, score)


def test_rolecalls_persona_card_is_not_its_character_card() -> None:
    persona = _card({"rolecall": {"type": "persona"}})
    scores = _scores(persona)
    assert "rolecall" not in scores and scores["rolecall-persona"] == 1.0


def test_a_png_is_marked_by_either_card_chunk() -> None:
    plain = base64.b64encode(_card({}))
    marked = base64.b64encode(_card({"rolecall": {}}))
    for chunks in ((("ccv3", marked), ("chara", plain)), (("ccv3", plain), ("chara", marked))):
        png = tiny_png(*(text_chunk(k, v) for k, v in chunks))
        assert registry.detect(Sniff(png, "nim.png")).id == "rolecall"  # type: ignore[union-attr]
    plain_png = tiny_png(text_chunk("chara", plain))
    assert registry.detect(Sniff(plain_png, "nim.png")).id == "sillytavern"  # type: ignore[union-attr]


def test_an_app_whose_file_is_its_own_scores_that_file_first() -> None:
    envelope = orjson.dumps({"type": "marinara_character", "data": orjson.loads(_card({"rolecall": {}}))})
    scores = _scores(envelope)
    assert scores["marinara-character"] == 1.0 and "rolecall" not in scores
    # Marinara's file scorer never hands over to a mark: a bare card is not its
    assert "marinara-character" not in _scores(_card({"appearance": "tall"}))


def test_a_mark_is_data_that_compares_and_hashes() -> None:
    a = CardMark.of({"x": dict}, unless={"type": "persona"}, score=1.0)
    assert a == CardMark.of({"x": dict}, unless={"type": "persona"}, score=1.0) and hash(a) == hash(
        CardMark.of({"x": dict}, unless={"type": "persona"}, score=1.0)
    )
    assert CardMark.claiming(frozenset({"b", "a"})) == CardMark.of({"a": object, "b": object})
    assert CardDetector(a, "lumiverse.detect:archive") == CardDetector(a, "lumiverse.detect:archive")


# -- a new app: a dialect class plus a table row ------------------------------------------------------

ROW = Format(
    "rowapp",
    "character",
    "rowapp",
    "Row app character (CCv3 + extensions.rowapp)",
    f"{__name__}:RowAppCard",
    CardDetector(CardMark.of({"rowapp": dict})),
    (".json", ".png"),
)


@pytest.fixture
def row_app(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[TavernCard]]:
    """The app's codec class, created while its row is in the table (as it is for an app of
    this package): it takes the row's declaration and detects through the row's detector."""
    monkeypatch.setitem(table.BY_ID, ROW.id, ROW)
    cls = type("RowAppCard", (TavernCard,), {"__module__": __name__, "id": "rowapp"})
    with registry.using({**registry.CODECS, "rowapp": cls}):
        yield cls


def test_a_new_app_is_a_codec_class_and_a_row(row_app: type[TavernCard]) -> None:
    assert row_app.format is ROW and row_app.family == "rowapp" and row_app.label == ROW.label
    assert registry.get("rowapp").detect(Sniff(_card({"rowapp": {}}), "n.json")) == MARKED
    d = read(_card({"rowapp": {"a": 1}}), "nim.json")
    assert d.primary.source is not None and d.primary.source.format == "rowapp"
    plain = read(_card({}), "nim.json")
    assert plain.primary.source is not None and plain.primary.source.format == "sillytavern"


def test_a_card_apps_row_must_name_the_lineages_detector(monkeypatch: pytest.MonkeyPatch) -> None:
    own = Format(
        "rowapp", "character", "rowapp", "Row app", f"{__name__}:RowAppCard", "rolecall.detect:persona"
    )
    monkeypatch.setitem(table.BY_ID, own.id, own)
    with pytest.raises(TypeError, match="detects through the lineage's detector"):
        type("RowAppCard", (TavernCard,), {"__module__": __name__, "id": "rowapp"})
