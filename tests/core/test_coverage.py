"""Coverage declarations: prefix patterns, list indices, and exclusions that carve a part out."""

from __future__ import annotations

from bunzai_codecs.core.codec import Coverage


def test_a_prefix_covers_everything_below_it_and_indices_do_not_matter() -> None:
    cov = Coverage.of("entries[].triggers", "name")
    assert cov.covers("entries[4].triggers[0].isRegex")
    assert cov.covers("$.name")
    assert not cov.covers("entries[1].content")
    assert not cov.covers("names")


def test_an_exclusion_carves_a_key_out_of_a_covered_bag() -> None:
    cov = Coverage.of("extensions", excludes=["extensions.risuai"])
    assert cov.covers("extensions.chub.id")
    assert not cov.covers("extensions.risuai")
    assert not cov.covers("extensions.risuai.sdData[0][1]")
    # a sibling key that merely starts with the same letters is still covered
    assert cov.covers("extensions.risuai2")


def test_an_exclusion_wins_over_a_more_specific_covered_pattern_and_survives_or() -> None:
    tavern = Coverage.of("media.portrait.ref", "media.assets[].ref", "identity.name")
    narrowed = tavern | Coverage.of(excludes=["media.portrait", "media.assets"])
    assert not narrowed.covers("media.portrait.ref")
    assert not narrowed.covers("media.assets[2].ref")
    assert narrowed.covers("identity.name")
    # the other operand's order does not matter
    assert not (Coverage.of(excludes=["media.portrait"]) | tavern).covers("media.portrait.ref")


def test_a_reshape_narrows_a_covered_path_for_a_body_with_such_a_value() -> None:
    """``Coverage.reshapes``: a format that holds a value only in another shape (Risu splits a key
    holding a comma) still covers the path, but not for a body whose value there is of that kind."""
    from bunzai_codecs.core.codec import Reshape

    comma = Reshape("entries[].triggers", lambda ts: any("," in t["text"] for t in ts), "split on commas")
    cov = Coverage.of("entries[].triggers", reshapes=[comma])
    body = {"entries": [{"triggers": [{"text": "a"}]}, {"triggers": [{"text": "b, c"}, {"text": "d"}]}]}
    assert cov.covers("entries[1].triggers[1].text")  # the format in general
    bound = cov.for_body(body)
    assert not bound.covers("entries[1].triggers[1].text")  # every path below the reshaped value
    assert not bound.covers("$.entries[1].triggers[0]")
    assert bound.covers("entries[0].triggers[0].text")  # another entry's keys: still a loss by mistake
    assert not bound.covers("name")  # not covered at all stays not covered
    assert cov.expects("entries[1].triggers", body) and not cov.expects("entries[0].triggers", body)
    assert not cov.expects("entries[5].triggers[0].text", body)  # no such value
    assert Coverage.of("x").for_body(body) == Coverage.of("x")  # nothing to narrow: unchanged
    assert (Coverage.of("a") | cov).reshapes == (comma,)
    keyed = Coverage.of("extensions", reshapes=[Reshape("extensions.*", lambda v: v == 1, "one")])
    assert not keyed.for_body({"extensions": {"a b": 1}}).covers("extensions['a b']")
