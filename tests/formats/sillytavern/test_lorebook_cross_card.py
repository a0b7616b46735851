"""Cross-format: a card's embedded ``character_book`` -> SillyTavern world info -> a card again keeps
every entry field world info can hold (issue 3, "Done means")."""

from __future__ import annotations

from typing import Any

import orjson

from bunzai_codecs import read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.diff import diff
from bunzai_codecs.core.entity import CanonicalEntity

WI = "sillytavern-lorebook"


def _entry(i: int, position: int, **ext: Any) -> dict[str, Any]:
    return {
        "id": i,
        "keys": [f"key{i}", f"/pat{i}+/i"],
        "secondary_keys": [f"second{i}"],
        "comment": f"Entry title {i}",
        "content": f"Content {i}.",
        "constant": i % 2 == 0,
        "selective": True,
        "insertion_order": 100 - i,
        "enabled": i != 3,
        "position": "before_char" if position == 0 else "after_char",
        "use_regex": True,
        "extensions": {
            "position": position,
            "depth": i,
            "role": i % 3,
            "selectiveLogic": i % 4,
            "probability": 10 * i,
            "useProbability": True,
            "exclude_recursion": i % 2 == 1,
            "prevent_recursion": i % 3 == 1,
            "delay_until_recursion": i,
            "group": f"g{i % 2}",
            "group_override": i == 5,
            "group_weight": 50 + i,
            "scan_depth": i + 1,
            "case_sensitive": i % 2 == 0,
            "match_whole_words": i % 2 == 1,
            "use_group_scoring": i == 2,
            "automation_id": f"auto{i}",
            "vectorized": i == 4,
            "sticky": i,
            "cooldown": i + 1,
            "delay": i + 2,
            "outlet_name": "Panel" if position == 7 else "",
            "display_index": 10 + i,
            "ignore_budget": i == 6,
            "triggers": ["normal", "swipe"] if i == 1 else [],
            "match_persona_description": i == 1,
            "match_character_description": i == 2,
            "match_character_personality": i == 3,
            "match_character_depth_prompt": i == 4,
            "match_scenario": i == 5,
            "match_creator_notes": i == 6,
            "my_tool": {"entry": i},
            **ext,
        },
    }


def _card() -> bytes:
    book = {
        "name": "Tidewater",
        "description": "book description",
        "scan_depth": 8,
        "token_budget": 500,
        "recursive_scanning": True,
        "extensions": {},
        "entries": [_entry(i, i) for i in range(8)],
    }
    data = {
        "name": "Brenna",
        "description": "A lighthouse keeper.",
        "personality": "",
        "scenario": "",
        "first_mes": "Hello.",
        "mes_example": "",
        "creator_notes": "",
        "system_prompt": "",
        "post_history_instructions": "",
        "alternate_greetings": [],
        "tags": [],
        "creator": "",
        "character_version": "",
        "extensions": {},
        "character_book": book,
    }
    return orjson.dumps({"spec": "chara_card_v2", "spec_version": "2.0", "data": data})


def _book_of(entities: list[CanonicalEntity]) -> CanonicalEntity:
    (book,) = [e for e in entities if e.kind == "lorebook"]
    return book


def test_card_book_to_world_info_to_card_keeps_what_world_info_holds() -> None:
    cov = registry.get(WI).coverage
    card_in = read(_card(), "Brenna.json")
    book = _book_of(card_in.entities)

    # card book -> world info (a fresh world: the book's twin belongs to the card format)
    wi_bytes = write(book, WI).data
    wi_tree = orjson.loads(wi_bytes)
    assert list(wi_tree["entries"]) == [str(i) for i in range(8)]
    assert [wi_tree["entries"][str(i)]["position"] for i in range(8)] == list(range(8))
    assert [wi_tree["entries"][str(i)]["role"] for i in range(8)] == [i % 3 for i in range(8)]
    assert [wi_tree["entries"][str(i)]["selectiveLogic"] for i in range(8)] == [i % 4 for i in range(8)]
    assert wi_tree["entries"]["1"]["key"] == ["key1", "/pat1+/i"]
    assert wi_tree["entries"]["7"]["outletName"] == "Panel"
    assert wi_tree["entries"]["5"]["matchScenario"] is True
    assert wi_tree["entries"]["3"]["disable"] is True
    world = read(wi_bytes, "Tidewater.json")
    assert world.primary.source is not None and world.primary.source.format == WI
    lost = [c for c in diff(book.body.dump(), world.primary.body.dump(), empty_is_absent=True)]
    assert lost, "the book-level scan settings cannot live in a world file"
    assert [c.path for c in lost if cov.covers(c.path)] == []

    # world info -> card: the world replaces the card's book
    card = card_in.primary
    card.links = {"knowledgeRefs": [world.primary.id]}
    out = write(card, "sillytavern", linked=[world.primary])
    card_out = read(out.data, "Brenna.json")
    book_out = _book_of(card_out.entities)
    changed = diff(book.body.dump(), book_out.body.dump(), empty_is_absent=True)
    assert [c.path for c in changed if cov.covers(c.path)] == []
    assert {c.path for c in changed} <= {"description", "globalScanDepth", "tokenBudget", "globalRecursion"}
    assert [e.model_dump() for e in book_out.body.entries] == [e.model_dump() for e in book.body.entries]

    # the ST fields travel in the card entry's extensions, snake_case, as SillyTavern writes them
    native = orjson.loads(out.data)["data"]["character_book"]["entries"]
    src = orjson.loads(_card())["data"]["character_book"]["entries"]
    for got, want in zip(native, src, strict=True):
        for k, v in want["extensions"].items():
            assert got["extensions"].get(k, v) == v, (want["id"], k)
