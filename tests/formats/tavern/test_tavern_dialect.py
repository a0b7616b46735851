"""Adding an app that writes Tavern cards takes one module: its dialect (the ``extensions`` keys it
owns) and a ``TavernCard`` subclass that declares it. Detection, decode, the escrow overlay, the PNG
container and the re-embedded lorebook all come from ``formats/tavern/``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from bunzai_codecs import read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import Coverage
from bunzai_codecs.entities import CharacterBody, LorebookBody
from bunzai_codecs.formats._shared.wire import MapContext, wrong
from bunzai_codecs.formats.tavern.card import TavernCard
from bunzai_codecs.formats.tavern.fields import TavernDialect
from tests.formats.helpers import tiny_png

# -- the whole app: one dialect and one declaration ------------------------------------------------


class ToyDialect(TavernDialect):
    """``data.extensions.toyapp.look`` is the character's appearance."""

    name = "toyapp"
    claims = frozenset({"toyapp"})
    coverage = Coverage.of("persona.appearance")

    def read(self, data: Mapping[str, Any], body: dict[str, Any], ctx: MapContext) -> None:
        ext = data.get("extensions")
        bag = ext.get("toyapp") if isinstance(ext, Mapping) else None
        if bag is None:
            return
        if not isinstance(bag, dict) or not isinstance(bag.get("look"), str):
            raise wrong(ctx.at("extensions", "toyapp"), "an object with a string look", bag)
        body["persona"]["appearance"] = bag["look"]

    def write(self, body: CharacterBody, data: dict[str, Any]) -> None:
        if body.persona.appearance:
            data.setdefault("extensions", {})["toyapp"] = {"look": body.persona.appearance}


class ToyCard(TavernCard):
    id = "toyapp"
    family = "toyapp"
    label = "Toy app character (CCv3 + extensions.toyapp)"
    dialect = ToyDialect()


# -- what that gives --------------------------------------------------------------------------------

TABLE = {**registry.CODECS, "toyapp": ToyCard}


def _card(ext: dict[str, Any], book: dict[str, Any] | None = None) -> bytes:
    data: dict[str, Any] = {
        "name": "Nim",
        "description": "a lamplighter",
        "first_mes": "Hello.",
        "extensions": ext,
    }
    if book is not None:
        data["character_book"] = book
    tree = {"spec": "chara_card_v3", "spec_version": "3.0", "data": data}
    return orjson.dumps(tree, option=orjson.OPT_INDENT_2) + b"\n"


BOOK = {
    "name": "lamps",
    "entries": [{"keys": ["lamp"], "content": "Lamps are lit at dusk.", "extensions": {}}],
}


def test_a_card_with_the_dialects_keys_is_the_apps_and_maps_through_it() -> None:
    with registry.using(TABLE):
        d = read(_card({"toyapp": {"look": "soot-streaked coat"}, "other": 1}), "nim.json")
        plain = read(_card({"other": 1}), "nim.json")
    assert d.primary.source is not None and d.primary.source.format == "toyapp"
    body = d.primary.body
    assert isinstance(body, CharacterBody)
    assert body.persona.appearance == "soot-streaked coat"
    assert "toyapp" not in (body.extensions or {})  # claimed by the dialect, not an opaque bag
    assert plain.primary.source is not None and plain.primary.source.format == "sillytavern"


def test_the_apps_card_round_trips_byte_for_byte_and_keeps_an_edit() -> None:
    data = _card({"toyapp": {"look": "soot-streaked coat"}, "other": 1}, BOOK)
    with registry.using(TABLE):
        d = read(data, "nim.json")
        assert [e.kind for e in d.entities] == ["character", "lorebook"]
        assert write(d.primary, "toyapp", linked=d.entities).data == data
        card, book = d.entities
        assert isinstance(card.body, CharacterBody) and isinstance(book.body, LorebookBody)
        card.body.persona.appearance = "a clean coat"
        book.body.entries[0].content = "Lamps are lit at dawn."
        out = orjson.loads(write(card, "toyapp", linked=d.entities).data)
    assert out["data"]["extensions"] == {"toyapp": {"look": "a clean coat"}, "other": 1}
    assert out["data"]["character_book"]["entries"][0]["content"] == "Lamps are lit at dawn."
    assert out["data"]["character_book"]["name"] == "lamps"


def test_a_fresh_png_of_the_app_is_read_back_as_the_app() -> None:
    with registry.using(TABLE):
        st = read(_card({}), "nim.json").primary
        assert isinstance(st.body, CharacterBody)
        st.body.persona.appearance = "a lantern at the hip"
        png = write(st, "toyapp", container="png", image=tiny_png()).data
        back = read(png, "nim.png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert back.primary.source is not None and back.primary.source.format == "toyapp"
    assert isinstance(back.primary.body, CharacterBody)
    assert back.primary.body.persona.appearance == "a lantern at the hip"


def test_the_apps_coverage_is_the_tavern_coverage_plus_its_dialects() -> None:
    toy, st = ToyCard(), registry.get("sillytavern")
    assert toy.coverage.covers("persona.appearance") and not st.coverage.covers("persona.appearance")
    assert st.coverage.paths <= toy.coverage.paths
    assert toy.dialects[-1] is ToyCard.dialect and toy.dialects[:-1] == st.dialects
