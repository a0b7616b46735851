"""The "kept" measure: each cross row weighs its source's content and what the conversion lost, and
the report turns that into each cell's kept share. The expected figures below are worked out by hand
from the input files, the canonical model's defaults and the targets' declared coverage (see
docs/FORMAT-SUPPORT.md); each test shows the sum."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bunzai_codecs.core import registry
from bunzai_codecs.core.diff import Change
from bunzai_codecs.fidelity import FidelityRow, PathLoss, check_file, content_units, content_weight
from bunzai_codecs.fidelity.html import render_html
from bunzai_codecs.fidelity.paths import _Part
from bunzai_codecs.fidelity.report import build_report
from bunzai_codecs.fidelity.weights import _Units, _weigh
from tests.conftest import ROOT, corpus_root
from tests.formats.helpers import inputs_below

from . import toys

SAMPLES = ROOT / "samples"


def _cross(data: bytes, name: str, target: str, kind: str | None = None) -> FidelityRow:
    rows = [r for r in check_file(data, name, input=name) if r.check == "cross" and r.target == target]
    rows = [r for r in rows if kind is None or r.kind == kind]
    assert len(rows) == 1, rows
    return rows[0]


def _lost(row: FidelityRow) -> dict[str, int | None]:
    return {x.path: x.weight for x in (*row.lost, *row.changed)}


def _cell(rows: list[FidelityRow], kind: str, source: str, target: str) -> dict[str, object]:
    rep = build_report(rows)
    (cell,) = [c for c in rep["kinds"][kind]["matrix"] if (c["source"], c["target"]) == (source, target)]
    return cell


# -- the weights of values ----------------------------------------------------------------------------


def test_values_weigh_their_size() -> None:
    assert content_weight("identity.description", "Keeps the lanterns lit.") == 23
    assert content_weight("identity.name", "Zoë") == 3  # characters, not bytes
    assert content_weight("entries[0].enabled", False) == 1
    assert content_weight("entries[0].depth", 0) == 1
    assert content_weight("identity.nickname", "") == 0 and content_weight("x", None) == 0
    assert content_weight("discovery.tags", ["a", "b"]) is None  # a container: its items are units
    body = {"discovery": {"tags": ["sea", "rain", ""]}, "empty": {}, "n": [1, 2.5, True]}
    # a list weighs the sum of its items: 3 + 4 (the empty tag is not content), and 1 per other value
    assert list(content_units(body)) == [
        ("discovery.tags[0]", 3),
        ("discovery.tags[1]", 4),
        ("n[0]", 1),
        ("n[1]", 1),
        ("n[2]", 1),
    ]


def test_a_media_asset_with_a_size_weighs_its_bytes_as_one_unit() -> None:
    portrait = {"role": "portrait", "sha256": "ab" * 32, "size": 48_213, "mime": "image/png"}
    asset = {"role": "emotion", "name": "joy", "size": 1_000}
    assert content_weight("media.portrait", portrait) == 48_213
    assert content_weight("media.assets[3]", asset) == 1_000
    # a size elsewhere is just a number, and an asset without one is weighed by its fields
    assert content_weight("extensions.box", {"size": 9}) is None
    assert content_weight("media.portrait", {"role": "portrait", "ref": "x.png"}) is None
    body = {"identity": {"name": "Aria"}, "media": {"portrait": portrait, "assets": [asset]}}
    assert sorted(content_units(body)) == [
        ("identity.name", 4),
        ("media.assets[0]", 1_000),
        ("media.portrait", 48_213),
    ]


def test_a_lost_or_changed_media_asset_counts_its_bytes_once() -> None:
    portrait = {"role": "portrait", "sha256": "ab" * 32, "size": 5_000}
    body = {"identity": {"name": "Aria"}, "media": {"portrait": portrait, "assets": [{"size": 700}]}}
    units = _Units.of_bodies([("", body)])
    # two fields of the portrait changed (reported one by one, or the asset as a whole), the asset list lost
    changes = [
        Change("media.portrait.sha256", "changed", "ab" * 32, "cd" * 32),
        Change("media.portrait.size", "changed", 5_000, 4_000),
        Change("media.assets", "removed", [{"size": 700}], None),
    ]
    row = FidelityRow(
        input="i",
        sha256="",
        entity="e",
        kind="character",
        source="a",
        target="b",
        check="cross",
        status="expected",
        lost=[PathLoss("media.assets[]", "expected", 1, "media.assets[0]")],
        changed=[
            PathLoss("media.portrait.sha256", "expected", 1, "media.portrait.sha256"),
            PathLoss("media.portrait.size", "expected", 1, "media.portrait.size"),
        ],
    )
    _weigh(row, units, [_Part(changes, None, "")])
    # 4 (name) + 5000 + 700; lost: the portrait once (5000) and the asset (700)
    assert (row.weight, row.lost_weight) == (5_704, 5_700)
    assert _lost(row) == {"media.assets[]": 700, "media.portrait.sha256": 5_000, "media.portrait.size": 0}


# -- toy conversions, by hand -------------------------------------------------------------------------


@pytest.fixture
def toy_registry() -> Iterator[None]:
    with registry.using(toys.TOYS):
        yield


# toys.book() as a canonical lorebook: the file's values plus the model's defaults for every entry
# (enabled true, constant false, selectiveLogic "and_any", position "world", depth 4, role "system",
# sortOrder 100, priority 100, probability 100, excludeRecursion/preventRecursion false,
# delayUntilRecursion 0; each trigger isRegex false). Weights: a text its characters, else 1.
#   name "Lanternfall" 11 + description "A rainy city." 13                                  = 24
#   entry a: id "a" 1, title "Market" 6, comment "opens in rain" 13, content "Lanterns." 9,
#            trigger "market" 6 + isRegex 1, enabled 1, constant 1, selectiveLogic 7,
#            position 5, depth 1, role 6, sortOrder 1, priority 1, probability 1,
#            the three recursion values 3                                                  = 63
#   entry b: id "b" 1, title "Bridge" 6, content "Old stone." 10, triggers "bridge" 6 + 1 and
#            "river" 5 + 1, probability 50 1, and the same eleven defaults 1+1+7+5+1+6+1+1+3 = 57
BOOK_WEIGHT = 24 + 63 + 57  # 144


def test_toy_lorebook_to_a_narrow_target(toy_registry: None) -> None:
    # toy-narrow holds name, entries[].content and entries[].triggers[].text. Back come: no
    # description (13), no titles (6 + 6), no comment (13), ids "0"/"1" for "a"/"b" (1 + 1) and
    # entry b's probability 50 read as the default 100 (1). Enabled (true) and the other defaults
    # come back as the same defaults.
    row = _cross(toys.book(), "b.toylore.json", "toy-narrow")
    assert (row.weight, row.lost_weight) == (BOOK_WEIGHT, 13 + 12 + 13 + 2 + 1)
    assert _lost(row) == {
        "description": 13,
        "entries[].title": 12,
        "entries[].comment": 13,
        "entries[].id": 2,
        "entries[].probability": 1,
    }
    cell = _cell(check_file(toys.book(), "b.toylore.json", input="b"), "lorebook", "toy-lore", "toy-narrow")
    # kept (144 - 41) / 144 = 71.52...% (shown rounded down); comment: 13 of the 41 lost
    assert cell["kept_pct"] == 71.5 and (cell["weight"], cell["lost_weight"]) == (144, 41)
    shares = {p["path"]: p["loss_share"] for p in cell["paths"]}  # type: ignore[attr-defined]
    assert shares["entries[].comment"] == 31.7 and shares["entries[].probability"] == 2.4


def test_toy_card_and_its_book(toy_registry: None) -> None:
    # the card: name "Aria" 4 + description "Keeps the lanterns lit." 23 = 27; its row also weighs
    # its embedded book (144): 171.
    card = toys.card()
    lite = _cross(card, "c.toycard.json", "toy-lite", "character")
    # toy-lite keeps the name only; the book goes beside it as vaud-json, lossless
    assert (lite.weight, lite.lost_weight) == (27 + BOOK_WEIGHT, 23)
    swallow = _cross(card, "c.toycard.json", "toy-swallow", "character")
    # toy-swallow keeps the card but drops the whole book
    assert (swallow.weight, swallow.lost_weight) == (171, BOOK_WEIGHT)
    assert sum(x.weight or 0 for x in swallow.lost) == BOOK_WEIGHT
    crash = _cross(toys.book(), "b.toylore.json", "toy-crash")
    # a conversion that fails keeps nothing
    assert crash.status == "error" and (crash.weight, crash.lost_weight) == (BOOK_WEIGHT, BOOK_WEIGHT)
    rows = check_file(card, "c.toycard.json", input="c")
    assert _cell(rows, "character", "toy-card", "toy-lite")["kept_pct"] == 86.5  # 148/171 = 86.54%
    assert _cell(rows, "character", "toy-card", "toy-swallow")["kept_pct"] == 15.7  # 27/171 = 15.78%


def test_a_cell_sums_its_entities_weights(toy_registry: None) -> None:
    # two books to toy-narrow: the one above (144, lost 41) and one with an extra entry
    # {"uid": "c", "text": "Fog."}: id 1, content 4 and the same thirteen defaults as entry a
    # (enabled..delayUntilRecursion: 1+1+7+5+1+6+1+1+1+3 = 27) = 32 more, of which the id "c"
    # comes back "2" (1 more lost). Cell: (144 - 41 + 176 - 42) / (144 + 176) = 237 / 320 = 74.06%.
    other = orjson_book(items_extra=[{"uid": "c", "text": "Fog."}])
    rows = check_file(toys.book(), "b.toylore.json", input="b") + check_file(
        other, "o.toylore.json", input="o"
    )
    cell = _cell(rows, "lorebook", "toy-lore", "toy-narrow")
    assert (cell["weight"], cell["lost_weight"], cell["kept_pct"]) == (320, 83, 74.0)


def orjson_book(items_extra: list[dict[str, object]]) -> bytes:
    import orjson

    t = orjson.loads(toys.book())
    t["items"] += items_extra
    return orjson.dumps(t)


def test_rows_without_weights_leave_the_kept_share_unknown(toy_registry: None) -> None:
    rows = check_file(toys.book(), "b.toylore.json", input="b")
    for r in rows:  # rows written before the measure existed
        r.weight = r.lost_weight = None
    cell = _cell(rows, "lorebook", "toy-lore", "toy-narrow")
    assert cell["kept_pct"] is None and cell["lossless_pct"] == 0.0
    page = render_html(build_report(rows))
    assert 'data-lossless="0.0"' in page and "data-kept" not in page


# -- real files, by hand ------------------------------------------------------------------------------


def test_sillytavern_regex_to_risu() -> None:
    # samples/sillytavern/regex-Censor.json, one script, as a canonical regex set:
    #   name "Censor" 6 (a one-script file is named after it), rule: id (a 36-character uuid) 36,
    #   label "Censor" 6, find "darn" 4, replace "d**n" 4, phases ["output"] (placement [2]) 6,
    #   targets ["display"] (markdownOnly) 7, substituteFind "escaped" (substituteRegex 2) 7,
    #   runOnEdit 1, enabled (disabled false) 1, sortOrder 0 1; flags "" and trimStrings [] are
    #   empty                                                                         total 79
    # risu-regex does not cover rules[].id, targets, substituteFind or runOnEdit: 36 + 7 + 7 + 1 = 51
    # lost (the name survives as the export's file name, "output" is its one phase, sortOrder 0
    # its row index). Kept 28 / 79 = 35.44%.
    data = (SAMPLES / "sillytavern" / "regex-Censor.json").read_bytes()
    row = _cross(data, "regex-Censor.json", "risu-regex")
    assert (row.weight, row.lost_weight) == (79, 51)
    assert _lost(row) == {
        "rules[].id": 36,
        "rules[].targets[]": 7,
        "rules[].substituteFind": 7,
        "rules[].runOnEdit": 1,
    }
    rows = check_file(data, "regex-Censor.json", input="regex-Censor.json")
    assert _cell(rows, "regex", "sillytavern-regex", "risu-regex")["kept_pct"] == 35.4


# samples/sillytavern/world-legacy-minimal.json as a canonical lorebook:
#   name "world-legacy-minimal" (ST names a world after its file) 20
#   entry 0: id "0" 1, title "Entry 1" (empty comment) 7,
#            content "The mill on the river has been silent for a year." 49, triggers "mill" 4 + 1
#            and "miller" 6 + 1, enabled 1, constant 1, selective 1, selectiveLogic "and_any" 7,
#            position "world" (0) 5, depth 1, role "system" 6, sortOrder (order 100) 1,
#            priority 1, probability 1, the three recursion values 3                       = 97
#   entry 1: id "1" 1, title "River" 5, content "The river floods every spring." 30,
#            trigger "river" 5 + 1, position "character" (1) 9, and enabled..delayUntilRecursion
#            as above without position: 1+1+1+7+1+6+1+1+1+3 = 23                           = 74
LEGACY_WEIGHT = 20 + 97 + 74  # 191


def test_sillytavern_lorebook_to_risu_and_rolecall() -> None:
    data = (SAMPLES / "sillytavern" / "world-legacy-minimal.json").read_bytes()
    name = "world-legacy-minimal.json"
    # risu-lorebook covers neither the book's name nor entries[].position: the name (20) is lost
    # and entry 1's "character" (9) comes back as the default "world". Kept 162 / 191 = 84.81%.
    risu = _cross(data, name, "risu-lorebook")
    assert (risu.weight, risu.lost_weight) == (LEGACY_WEIGHT, 20 + 9)
    assert _lost(risu) == {"name": 20, "entries[].position": 9}
    # rolecall-lorebook covers everything here but entries[].selective: two false flags (1 + 1).
    # Kept 189 / 191 = 98.95%.
    rolecall = _cross(data, name, "rolecall-lorebook")
    assert (rolecall.weight, rolecall.lost_weight) == (LEGACY_WEIGHT, 2)
    rows = check_file(data, name, input=name)
    assert _cell(rows, "lorebook", "sillytavern-lorebook", "risu-lorebook")["kept_pct"] == 84.8
    assert _cell(rows, "lorebook", "sillytavern-lorebook", "rolecall-lorebook")["kept_pct"] == 98.9


def test_pygmalion_card_to_agnai() -> None:
    # samples/pygmalion/oskar.pygmalion.json: name "Oskar" 5, char_persona (identity.description)
    # 83, world_scenario 76, char_greeting 69, example_dialogue 80 (metadata is not card content)
    # = 313. Agnai writes the definition into its persona text and reads that text back as
    # identity.description (as Agnai's own Tavern export does), and holds the scenario, the
    # greeting and the examples: nothing is lost. Kept 313 / 313 = 100%.
    data = (SAMPLES / "pygmalion" / "oskar.pygmalion.json").read_bytes()
    row = _cross(data, "oskar.pygmalion.json", "agnai")
    assert (row.weight, row.lost_weight) == (313, 0)
    assert _lost(row) == {}
    rows = check_file(data, "oskar.pygmalion.json", input="oskar")
    assert _cell(rows, "character", "pygmalion", "agnai")["kept_pct"] == 100.0


# -- the whole matrix ---------------------------------------------------------------------------------


def _all_rows() -> list[FidelityRow]:
    roots = [SAMPLES] + ([corpus_root()] if corpus_root() is not None else [])
    rows: list[FidelityRow] = []
    for root in roots:
        assert root is not None
        for f, name, data in inputs_below(root):
            rows += check_file(data, name, input=str(f.relative_to(root.parent)))
    return rows


@pytest.mark.slow
def test_the_matrix_distinguishes_conversions_on_samples_and_corpus() -> None:
    rows = _all_rows()
    cross = [r for r in rows if r.check == "cross" and r.status != "error"]
    # every lost unit is listed under one of the row's paths
    for r in cross:
        assert r.weight is not None and r.lost_weight is not None and 0 <= r.lost_weight <= r.weight
        assert sum(x.weight or 0 for x in (*r.lost, *r.changed)) == r.lost_weight, (r.input, r.target)
    rep = build_report(rows)
    for kind in ("character", "lorebook", "regex"):
        cells = rep["kinds"][kind]["matrix"]
        lossy = [c["kept_pct"] for c in cells if c["lossless"] == 0]
        # cells that are all "0% lossless" still tell a conversion that keeps nearly everything
        # from one that keeps little
        assert lossy and min(lossy) < 60 and max(lossy) > 95, (kind, sorted(lossy))
        assert len(set(lossy)) > len(lossy) // 2
        for c in cells:
            if c["lost_weight"]:
                shares = [p["loss_share"] for p in c["paths"]]
                assert 0 < sum(shares) <= 100.5
        for b in rep["kinds"][kind]["best_targets"]:
            kept = [t["kept_pct"] for t in b["targets"]]
            assert kept == sorted(kept, reverse=True)


def test_an_unknown_file_gets_no_weights(tmp_path: Path) -> None:
    rows = check_file(b"\x00 not a card", "x.bin", input="x")
    assert [(r.check, r.weight) for r in rows] == [("decode", None)]
    assert "weight" not in rows[0].to_json()


def test_partial_reports_merge_like_one_pass(toy_registry: None) -> None:
    from bunzai_codecs.fidelity.report import ReportBuilder

    rows = check_file(toys.book(), "b.toylore.json", input="b") + check_file(
        toys.card(), "c.toycard.json", input="c"
    )
    one = build_report(rows)
    merged = ReportBuilder().add_all(rows[::2]).merge(ReportBuilder().add_all(rows[1::2])).report()
    assert merged == one
    # the book and the card's embedded copy of it: the same content, the same loss (see above)
    narrow = {c["source"]: c for c in one["kinds"]["lorebook"]["matrix"] if c["target"] == "toy-narrow"}
    assert {s: (c["weight"], c["lost_weight"]) for s, c in narrow.items()} == {
        "toy-lore": (144, 41),
        "toy-card": (144, 41),
    }


def test_the_page_shows_kept_shares_best_targets_and_loss_shares(toy_registry: None) -> None:
    import re

    rep = build_report(check_file(toys.book(), "b.toylore.json", input="b"))
    page = render_html(rep)
    cells = dict(re.findall(r'data-target="([^"]+)" data-lossless="[^"]+" data-kept="([^"]+)"', page))
    assert cells["toy-narrow"] == "71.5" and cells["toy-leaky"] == "100.0"
    # best first: the most kept (toy-leaky and toy-named keep all, by name), then toy-unstable's
    # (144 - 11) / 144 = 92.36%, which beats toy-narrow's 71.5% despite its unexpected loss
    (best,) = rep["kinds"]["lorebook"]["best_targets"]
    assert [t["target"] for t in best["targets"]] == ["toy-leaky", "toy-named", "toy-unstable"]
    assert [t["kept_pct"] for t in best["targets"]] == [100.0, 100.0, 92.3]
    assert "Best target for each source format (lorebook)" in page
    section = page[page.index('id="d-lorebook--toy-lore--toy-narrow"') :]
    section = section[: section.index("</section>")]
    assert "kept 71.5% of the content (103 of 144)" in section
    assert "share of loss" in section and "<td class=share>31.7%</td>" in section
