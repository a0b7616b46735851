"""Cross-format comparison of values that a format spells differently but every app reads the same
way (fidelity.SEMANTIC; docs/fidelity.md "Values compared as the apps read them")."""

from __future__ import annotations

import orjson

from bunzai_codecs import read
from bunzai_codecs.core import registry
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.fidelity import cross_format, example_blocks
from bunzai_codecs.fidelity.checks import _compare_bodies


def _card(mes_example: str, name: str = "Mira") -> CanonicalEntity:
    card = {
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {
            "name": name,
            "description": "a cartographer",
            "first_mes": "Hi.",
            "mes_example": mes_example,
        },
    }
    return read(orjson.dumps(card), "mira.json").primary


def test_example_blocks_split_like_sillytavern() -> None:
    # a missing leading <START> is implied; blocks are trimmed; the marker is case-insensitive
    assert example_blocks("{{user}}: hi\n{{char}}: hm.") == ["{{user}}: hi\n{{char}}: hm."]
    assert example_blocks("<START>\r\n{{char}}: a\r\n<start>\n{{char}}: b\n") == [
        "{{char}}: a",
        "{{char}}: b",
    ]
    assert example_blocks("  \n<START>\nx") == ["x"]
    # text before the first <START> is a block of its own, and an empty block stays a block
    assert example_blocks("a\n<START>\n<START>\nb") == ["a", "", "b"]


def test_an_implied_start_and_a_crlf_after_it_are_not_a_change() -> None:
    before = _card("{{user}}: Do you ever leave?\n{{char}}: Only when the ink runs out.")
    after = _card("<START>\n{{user}}: Do you ever leave?\n{{char}}: Only when the ink runs out.")
    cov = registry.get("byaf").coverage
    changes = _compare_bodies(before, after, cov).changes
    assert [c.path for c in changes if c.path.startswith("examples")] == []
    crlf = _card("<START>\r\n{{char}}: a\r\n<START>\r\n{{char}}: b")
    lf = _card("<START>\n{{char}}: a\n<START>\n{{char}}: b")
    assert [c.path for c in _compare_bodies(crlf, lf, cov).changes if c.path.startswith("examples")] == []


def test_different_examples_are_still_a_change_and_same_format_checks_stay_exact() -> None:
    before = _card("<START>\n{{char}}: a\n<START>\n{{char}}: b")
    merged = _card("<START>\n{{char}}: a\n{{char}}: b")  # two blocks became one
    cov = registry.get("byaf").coverage
    assert [c.path for c in _compare_bodies(before, merged, cov).changes] == ["examples.exampleMessages"]
    # stability and native checks (coverage None) compare the text exactly
    implied = _card("{{char}}: a")
    explicit = _card("<START>\n{{char}}: a")
    assert [c.path for c in _compare_bodies(implied, explicit, None).changes] == ["examples.exampleMessages"]


def test_byaf_round_trip_of_examples_without_a_leading_start_is_lossless_for_examples() -> None:
    e = _card("{{user}}: ready?\n{{char}}: Board when I say.")
    row = cross_format(e, registry.get("byaf"), pool=[e], input="mira.json", source="sillytavern")
    assert not [x for x in row.lost + row.changed if x.path.startswith("examples")]
    assert row.status != "unexpected", row


def test_a_nickname_equal_to_the_name_is_no_nickname_across_formats() -> None:
    """Backyard keeps a nickname only when it differs from the display name; a card's nickname equal
    to its name means the same as none (the name is used), so losing it is no loss."""

    def card(nickname: str | None = None, name: str = "Mira") -> CanonicalEntity:
        e = _card("<START>\n{{char}}: a", name=name)
        e.body.identity.nickname = nickname  # type: ignore[union-attr]
        return e

    cov = registry.get("byaf").coverage
    assert [c.path for c in _compare_bodies(card("Mira"), card(), cov).changes] == []
    assert [c.path for c in _compare_bodies(card(), card("Mira"), cov).changes] == []
    assert [c.path for c in _compare_bodies(card("Mi"), card(), cov).changes] == ["identity.nickname"]
    # a renamed card keeps its nickname compared; the same-format checks stay exact
    renamed = [c.path for c in _compare_bodies(card("Mira"), card(name="Mira Vell"), cov).changes]
    assert "identity.nickname" in renamed
    assert [c.path for c in _compare_bodies(card("Mira"), card(), None).changes] == ["identity.nickname"]
