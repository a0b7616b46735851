"""Detection ranking: thresholds, the certainty short-cut, deterministic tie-breaks."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import Codec
from bunzai_codecs.core.entity import Decoded
from bunzai_codecs.core.errors import NotRecognized
from bunzai_codecs.core.sniff import Sniff


class _Detector(Codec):
    """A codec that only detects (these tests rank scores): decoding is refused."""

    def decode(self, s: Sniff) -> Decoded:
        raise NotRecognized("a detection stand-in decodes nothing")


def _codec(cid: str, score: float, prio: int = 0, *, boom: bool = False) -> type[Codec]:
    def detect(self: Codec, s: Sniff) -> float:
        if boom:
            raise KeyError("detector bug")
        return score

    return type(
        f"C_{cid.replace('-', '_')}",
        (_Detector,),
        {"id": cid, "kind": "character", "priority": prio, "detect": detect},
    )


def test_ties_break_by_priority_then_id_whatever_the_table_order() -> None:
    codecs = [_codec("zeta", 0.9), _codec("alpha", 0.9), _codec("mid", 0.9, prio=1), _codec("low", 0.6)]
    winners = set()
    for seed in range(10):
        order = codecs[:]
        random.Random(seed).shuffle(order)
        with registry.using({c.id: c for c in order}):
            s = Sniff(b"{}", "x.json")
            winners.add(registry.detect(s).id)  # type: ignore[union-attr]
            ranked = [c.id for c in registry.detect_all(s).candidates]
            assert ranked == ["mid", "alpha", "zeta", "low"]
    assert winners == {"mid"}


def test_equal_priority_breaks_by_id() -> None:
    with registry.using({"b": _codec("b", 0.7), "a": _codec("a", 0.7)}):
        assert registry.detect(Sniff(b"x")).id == "a"  # type: ignore[union-attr]


def test_certainty_short_cut_agrees_with_the_full_ranking() -> None:
    with registry.using({"b": _codec("b", 1.0), "a": _codec("a", 1.0), "c": _codec("c", 0.99, prio=5)}):
        s = Sniff(b"x")
        assert registry.detect(s).id == registry.detect_all(s).best.id == "a"  # type: ignore[union-attr]


def test_below_accept_is_no_match_but_still_ranked() -> None:
    with registry.using({"weak": _codec("weak", 0.49)}):
        s = Sniff(b"x")
        assert registry.detect(s) is None
        d = registry.detect_all(s)
        assert d.best is None and d.candidates[0].id == "weak"


def test_a_crashing_or_out_of_range_detector_scores_zero_or_is_clamped() -> None:
    Codec.detect_errors.clear()
    table = {"boom": _codec("boom", 1.0, boom=True), "big": _codec("big", 7.0), "neg": _codec("neg", -1.0)}
    with registry.using(table):
        d = registry.detect_all(Sniff(b"x"))
        assert [(c.id, c.score) for c in d.candidates] == [("big", 1.0)]
    assert Codec.detect_errors and Codec.detect_errors[0][0] == "boom"
    Codec.detect_errors.clear()


def test_unknown_format_is_a_typed_error_naming_the_known_ones() -> None:
    import pytest

    from bunzai_codecs.core.errors import Unsupported

    with pytest.raises(Unsupported, match="vaud-json"):
        registry.get("no-such-format")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2048), st.sampled_from(["", "a.json", "b.png", "c.charx", "d.risum", "e.risup"]))
def test_detect_never_raises_on_random_bytes(data: bytes, name: str) -> None:
    Codec.detect_errors.clear()
    s = Sniff(data, name)
    d = registry.detect_all(s)
    assert all(0.0 < c.score <= 1.0 for c in d.candidates)
    assert Codec.detect_errors == []  # no real detector crashed on it


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers(-10, 10) | st.text(max_size=8),
        lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=6), c, max_size=4),
        max_leaves=30,
    )
)
def test_detect_never_raises_on_random_json(tree: object) -> None:
    import orjson

    Codec.detect_errors.clear()
    s = Sniff(orjson.dumps(tree), "x.json")
    d = registry.detect_all(s)
    assert all(0.0 < c.score <= 1.0 for c in d.candidates)
    assert Codec.detect_errors == []


def test_sniff_parses_json_once_however_many_codecs_look() -> None:
    before = Sniff.parse_counts["json"]
    table = {}
    for i in range(25):

        def detect(self: Codec, s: Sniff) -> float:
            return 0.6 if isinstance(s.json, dict) else 0.0

        table[f"c{i:02d}"] = type(
            f"J{i}", (_Detector,), {"id": f"c{i:02d}", "kind": "character", "detect": detect}
        )
    with registry.using(table):
        s = Sniff(b'{"name": "x"}', "x.json")
        assert len(registry.detect_all(s).candidates) == 25
        registry.detect(s)
    assert Sniff.parse_counts["json"] - before == 1


# -- format declarations (formats/table.py) -----------------------------------------------------------


def test_every_codec_takes_its_row_and_detects_through_its_detector() -> None:
    from bunzai_codecs.core.format import DECLARED
    from bunzai_codecs.formats.table import FORMATS

    assert [f.id for f in FORMATS] == list(registry.CODECS)
    s = Sniff(b'{"spec": "chara_card_v2", "data": {"name": "Nim"}}', "nim.json")
    for f in FORMATS:
        codec = registry.get(f.id)
        assert codec.format is f and registry.declaration(f.id) is f
        assert {a: getattr(codec, a) for a in DECLARED} == {a: getattr(f, a) for a in DECLARED}
        assert codec.detect(s) == f.detect(s) and codec.kind_of(s) == f.kind_of(s)


def test_a_declared_codec_that_declares_again_is_refused() -> None:
    import pytest

    with pytest.raises(TypeError, match="sets label: format 'sillytavern-regex' declares them"):
        type(
            "SillyTavernRegex",
            (Codec,),
            {
                "__module__": "bunzai_codecs.formats.sillytavern.regex",
                "id": "sillytavern-regex",
                "label": "x",
            },
        )


def test_a_class_in_the_table_is_listed_and_detected_through_itself() -> None:
    stand_in = _codec("sillytavern", 0.3, prio=5)  # same id, not the declared class: undeclared
    assert stand_in.format is None and stand_in.priority == 5
    with registry.using({**registry.CODECS, "sillytavern": stand_in}):
        assert isinstance(registry.declaration("sillytavern"), stand_in)
        card = Sniff(b'{"spec": "chara_card_v2", "data": {"name": "Nim"}}', "nim.json")
        assert [c.score for c in registry.detect_all(card).candidates if c.id == "sillytavern"] == [0.3]
    assert registry.declaration("sillytavern") is not stand_in  # the table is back
