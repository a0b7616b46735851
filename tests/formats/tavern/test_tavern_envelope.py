"""An app whose file wraps a Tavern card in an object of its own declares that envelope (a
``CardEnvelope``) and nothing else: where the card is, how the file is recognised, and the
envelope's own fields. Mapping, the linked lorebook, the overlay on the twin and a fresh export
come from ``TavernCard`` (Marinara's character export is the real case)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from bunzai_codecs import Malformed, read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import EmitContext
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import CharacterBody, LorebookBody
from bunzai_codecs.formats._shared.wire import MapContext, wrong
from bunzai_codecs.formats.tavern.card import CardEnvelope, CardWriter, TavernCard

# -- the whole app: one envelope and one declaration ------------------------------------------------


class CrateEnvelope(CardEnvelope):
    """``{"crate": 1, "note": <appearance>, "card": <CCv3 card>}``."""

    at = ("card",)

    def score(self, s: Sniff) -> float:
        t = s.json_object
        return 1.0 if t is not None and t.get("crate") == 1 else 0.0

    def card(self, tree: Any) -> dict[str, Any]:
        card = tree.get("card") if isinstance(tree, dict) else None
        if not isinstance(card, dict):
            raise wrong("$.card", "a card object", card)
        return card

    def read(self, tree: dict[str, Any], body: dict[str, Any], ctx: MapContext) -> None:
        note = tree.get("note")
        if note is not None:
            if not isinstance(note, str):
                raise wrong(ctx.at("note"), "a string", note)
            body["persona"]["appearance"] = note

    def write(
        self, body: CharacterBody, card_of: CardWriter, twin: dict[str, Any] | None, ctx: EmitContext | None
    ) -> dict[str, Any]:
        out: dict[str, Any] = {"crate": 1}
        if body.persona.appearance:
            out["note"] = body.persona.appearance
        out["card"] = card_of(body)
        return out


class CrateCard(TavernCard):
    id = "crate"
    family = "crate"
    label = "Crate character (a CCv3 card in a crate object)"
    suffixes = (".json",)
    containers = ()
    envelope = CrateEnvelope()


# -- what that gives --------------------------------------------------------------------------------

TABLE = {**registry.CODECS, "crate": CrateCard}

BOOK = {
    "name": "lamps",
    "entries": [{"keys": ["lamp"], "content": "Lamps are lit at dusk.", "extensions": {}}],
}


def _crate(**extra: Any) -> bytes:
    card = {
        "spec": "chara_card_v3",
        "spec_version": "3.0",
        "data": {"name": "Nim", "first_mes": "Hello.", "character_book": BOOK, "extensions": {}},
    }
    tree = {"crate": 1, "note": "soot-streaked coat", "card": card, **extra}
    return orjson.dumps(tree, option=orjson.OPT_INDENT_2) + b"\n"


def test_the_envelope_is_recognised_and_its_card_and_fields_are_read() -> None:
    with registry.using(TABLE):
        d = read(_crate(), "nim.json")
        bare = read(orjson.dumps(orjson.loads(_crate())["card"]), "nim.json")
    assert d.primary.source is not None and d.primary.source.format == "crate"
    assert bare.primary.source is not None and bare.primary.source.format == "sillytavern"
    card, book = d.entities
    assert isinstance(card.body, CharacterBody) and isinstance(book.body, LorebookBody)
    assert card.body.identity.name == "Nim" and card.body.persona.appearance == "soot-streaked coat"
    assert book.body.entries[0].content == "Lamps are lit at dusk."


def test_errors_inside_the_card_name_the_path_below_the_envelope() -> None:
    tree = orjson.loads(_crate())
    tree["card"]["data"]["character_book"] = "lamps"
    with registry.using(TABLE), pytest.raises(Malformed) as err:
        read(orjson.dumps(tree), "nim.json")
    assert err.value.path == "$.card.data.character_book"


def test_the_file_round_trips_and_an_edit_keeps_the_envelopes_own_keys() -> None:
    data = _crate(stamp="2024-01-01")
    with registry.using(TABLE):
        d = read(data, "nim.json")
        assert write(d.primary, "crate", linked=d.entities).data == data
        card, book = d.entities
        assert isinstance(card.body, CharacterBody) and isinstance(book.body, LorebookBody)
        card.body.persona.appearance = "a clean coat"
        book.body.entries[0].content = "Lamps are lit at dawn."
        out = orjson.loads(write(card, "crate", linked=d.entities).data)
    assert out["note"] == "a clean coat" and out["stamp"] == "2024-01-01"
    assert out["card"]["data"]["character_book"]["entries"][0]["content"] == "Lamps are lit at dawn."


def test_a_fresh_file_is_the_envelope_around_a_card_with_its_links() -> None:
    with registry.using(TABLE):
        st = read(orjson.dumps(orjson.loads(_crate())["card"]), "nim.json")
        st_card = st.primary
        assert isinstance(st_card.body, CharacterBody)
        st_card.body.persona.appearance = "a lantern at the hip"
        out = orjson.loads(write(st_card, "crate", linked=st.entities).data)
    assert out["crate"] == 1 and out["note"] == "a lantern at the hip"
    assert out["card"]["spec"] == "chara_card_v3"
    assert out["card"]["data"]["character_book"]["name"] == "lamps"
