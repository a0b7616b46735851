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
