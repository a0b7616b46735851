"""Every hostile input ends as a decoded entity or a typed error — never a crash."""

from __future__ import annotations

import pytest

from .generate import Case, cases
from .harness import Outcome, run

CASES = list(cases())
BY_NAME = {(c.category, c.name): c for c in CASES}
_SEEN: dict[tuple[str, str], Outcome] = {}


def outcome(case: Case) -> Outcome:
    """Each case runs once per session (bombs with memory measured); later tests reuse the result."""
    key = (case.category, case.name)
    if key not in _SEEN:
        _SEEN[key] = run(case, measure="bomb" in case.name)
    return _SEEN[key]


@pytest.mark.parametrize("case", CASES, ids=[f"{c.category}:{c.name}" for c in CASES])
def test_no_crash(case: Case) -> None:
    out = outcome(case)
    assert not out.crashes, "\n".join(out.crashes)


def test_the_generator_covers_every_category() -> None:
    cats = {c.category for c in CASES}
    assert {
        "zip",
        "png",
        "json",
        "random",
        "risum",
        "risup",
        "charx",
        "byaf",
        "voxta",
        "exif",
        "naidata",
        "preset",
        "kobold",
        "story",
        "yaml",
        "folder",
    } <= cats
    assert any(c.startswith("shape:") for c in cats)
    # wrong-shaped JSON inside every kind of container, not only in plain JSON files
    inside = {c.name.split("[", 1)[1].split("]", 1)[0].split()[0] for c in CASES if "] " in c.name}
    assert {"tEXt", "eXIf", "zip", "risum", "risup"} <= inside


def test_bombs_and_traversal_are_rejected_not_decoded() -> None:
    by_name = {c.name: c for c in CASES}
    for name in [
        "high-ratio bomb (200 MiB of zeros)",
        "zTXt bomb",
        "iTXt bomb",
        "dot-dot name",
        "symlink entry",
        "nesting 100k deep (arrays)",
        "chara: invalid base64",
        "billion laughs",
        "merge-key bomb",
        "recursive alias",
        "python object tag",
        "card.yaml names ../../etc/passwd",
        "member named ../escape.md",
        "symlink member",
        "card.yaml a billion laughs",
        "20001 entries",
    ]:
        out = outcome(by_name[name])
        assert out.status == "rejected", (name, out)


@pytest.mark.parametrize(
    "category",
    [
        "risum",
        "risup",
        "charx",
        "byaf",
        "voxta",
        "exif",
        "naidata",
        "preset",
        "kobold",
        "story",
        "yaml",
        "folder",
    ],
    ids=lambda c: f"{c}-controls",
)
def test_the_controls_decode(category: str) -> None:
    """Each container family starts from a valid file built with the codec's own writer: the broken
    variants are broken in the one way their name says, not everywhere."""
    controls = [c for c in CASES if c.category == category and "(control)" in c.name]
    assert controls
    for c in controls:
        out = outcome(c)
        assert out.status == "decoded", (c.name, out)


@pytest.mark.parametrize(
    ("category", "name"),
    [
        ("risum", "main length past the end"),
        ("risum", "bad block marker 0x02"),
        ("risum", "asset-count mismatch: table 2, blocks 1"),
        ("risum", "asset-count mismatch: table 1, blocks 3"),
        ("risum", "no final 0x00 marker"),
        ("risup", "GCM tag mismatch (tag byte flipped)"),
        ("risup", "GCM tag mismatch (ciphertext flipped)"),
        ("risup", "bad tag: wrapper type 'module'"),
        ("risup", "truncated gzip at 135"),
        ("risup", "gzip bomb (120 MiB of zeros)"),
        ("charx", "card.json not JSON"),
        ("charx", "module.risum bad marker"),
        ("charx", "asset member a 90 MiB bomb"),
        ("charx", "card.json declares 40 bytes, inflates to 8 MiB"),
        ("byaf", "manifest names a missing character file"),
        ("byaf", "manifest names a missing scenario"),
        ("byaf", "character: image path escapes"),
        ("byaf", "scenario: backgroundImage escapes"),
        ("byaf", "character.json a bomb"),
        ("voxta", "no character"),
        ("voxta", "character.json not JSON"),
        ("voxta", "character: MemoryBooks a string"),
        ("voxta", "book: Items a string"),
        ("voxta", "name escapes the character folder"),
        ("voxta", "character.json a bomb"),
        ("voxta", "thumbnail declares 10 bytes, inflates to 4 MiB"),
        ("exif", "UserComment offset past the end"),
        ("exif", "IFD0 declares 65535 entries"),
        ("exif", "comment: invalid base64"),
        ("naidata", "bad base64: punctuation"),
        ("naidata", "naidata in a zTXt bomb"),
        ("png", "chara: v2 data a list"),
        ("preset", "master: preset sampler_order a string"),
        ("preset", "master: preset sampler_order of nulls"),
        ("preset", "NovelAI: order item id a number"),
        ("preset", "NovelAI: order an object"),
        ("preset", "kobold: sampler_order an object"),
        ("kobold", "worldinfo a string"),
        ("kobold", "key a list"),
        ("kobold", "probability a boolean"),
        ("kobold", "folder an object"),
        ("kobold", "wifolders_d a list"),
        ("kobold", "KoboldAI United's file_version (not claimed)"),
        ("kobold", "world info export with a keys list (AI Dungeon-like)"),
        ("kobold", "savedsettings nested 100k deep"),
        ("story", "lorebook an array"),
        ("story", "lorebook entry keys a string"),
        ("story", "context a string"),
        ("story", "ephemeral text a list"),
        ("story", "metadata a list"),
    ],
)
def test_named_hostile_inputs_are_rejected(category: str, name: str) -> None:
    out = outcome(BY_NAME[(category, name)])
    assert out.status == "rejected", out


def test_bombs_stay_within_bounded_memory() -> None:
    """The inflate bounds hold: a bomb costs about its bound (64 MiB for a PNG text chunk, 96 MiB for
    a .risup), never its inflated size. (How long each takes is in the hostile report, not asserted
    here: tests never assert wall-clock time, and a loaded machine made a 20 s limit flaky.)"""
    bombs = [c for c in CASES if "bomb" in c.name]
    assert len(bombs) >= 8
    for c in bombs:
        out = outcome(c)
        assert out.status == "rejected", (c.name, out)
        assert out.peak_bytes < 128 * 2**20, (c.name, out.peak_bytes)


def test_a_story_document_is_carried_never_inflated() -> None:
    """A ``.story``'s ``content.document`` (base64 of msgpack in NovelAI's files) is kept as the
    string it is: 100 MiB of deflated zeros inside it cost their compressed size, and the story
    round-trips; so do a huge or non-base64 document."""
    for name in (
        "document holds 100 MiB of deflated zeros (carried, never inflated)",
        "document not base64 (never decoded)",
        "document a 24 MiB string",
    ):
        case = BY_NAME[("story", name)]
        out = run(case, measure=True)
        assert (out.status, out.detected) == ("decoded", "novelai-story"), (name, out)
        if "zeros" in name:
            assert out.peak_bytes < 16 * 2**20, out.peak_bytes


def test_large_kobold_saves_decode() -> None:
    for name in ("5k world info entries", "memory a 24 MiB string"):
        out = outcome(BY_NAME[("kobold", name)])
        assert (out.status, out.detected) == ("decoded", "kobold-save"), (name, out)
