"""report.json aggregation and report.html rendering, from hand-made rows with known outcomes."""

from __future__ import annotations

import random
import re
from html.parser import HTMLParser

import orjson

from bunzai_codecs.fidelity import FidelityRow, PathLoss, RowError
from bunzai_codecs.fidelity.html import render_html
from bunzai_codecs.fidelity.report import REPORT_SCHEMA, ReportBuilder, build_report

EVIL = "<script>alert(1)</script>"


def _row(
    check: str, status: str, *, entity: str = "c1", source: str = "st", target: str = "risu", **kw: object
) -> FidelityRow:
    base = {
        "input": f"in/{entity}",
        "sha256": "ab" * 32,
        "entity": entity,
        "kind": "character",
        "name": f"name of {entity}",
        "source": source,
        "target": target if check == "cross" else (source if check in ("native", "stability") else ""),
        "check": check,
        "status": status,
    }
    base.update(kw)
    return FidelityRow(**base)  # type: ignore[arg-type]


def _rows() -> list[FidelityRow]:
    lost_exp = [PathLoss("identity.nickname", "expected", 1, "identity.nickname")]
    lost_bug = [PathLoss("greetings.firstMessage", "unexpected", 1, "greetings.firstMessage")]
    return [
        _row("decode", "decoded", entity="c1"),
        _row("decode", "decoded", entity="c2"),
        _row("decode", "decoded", entity="c3"),
        _row(
            "decode",
            "rejected",
            entity="",
            kind="",
            name="",
            source="",
            error=RowError("Malformed", "bad <json>"),
        ),
        _row("native", "lossless", entity="c1"),
        _row("native", "lossless", entity="c2"),
        _row(
            "native", "unexpected", entity="c3", changed=[PathLoss("data.name", "unexpected", 1, "data.name")]
        ),
        _row("stability", "lossless", entity="c1"),
        _row("stability", "lossless", entity="c2"),
        _row("stability", "lossless", entity="c3"),
        # st -> risu: 1 lossless, 1 expected-only, 1 unexpected
        _row("cross", "lossless", entity="c1"),
        _row("cross", "expected", entity="c2", lost=lost_exp),
        _row("cross", "unexpected", entity="c3", lost=lost_exp + lost_bug),
        # st -> agnai: 2 lossless, 1 error
        _row("cross", "lossless", entity="c1", target="agnai"),
        _row("cross", "lossless", entity="c2", target="agnai"),
        _row("cross", "error", entity="c3", target="agnai", error=RowError("KeyError", "'x'", True)),
        # an info-only row is lossless and its added path is not a loss
        _row(
            "cross",
            "lossless",
            entity="c1",
            target="marinara",
            added=[PathLoss("settings.talkativeness", "info", 1, "settings.talkativeness")],
        ),
    ]


def test_matrix_counts_and_percentages() -> None:
    rep = build_report(_rows())
    assert rep["schema"] == REPORT_SCHEMA
    assert rep["inputs"] == {
        "files": 4,
        "decoded": 3,
        "rejected": 1,
        "reject_types": {"Malformed": 1},
        "rows": 17,
    }
    ch = rep["kinds"]["character"]
    assert ch["entities"] == 3 and ch["sources"] == ["st"] and ch["targets"] == ["agnai", "marinara", "risu"]
    cells = {(c["source"], c["target"]): c for c in ch["matrix"]}
    risu = cells[("st", "risu")]
    assert (risu["entities"], risu["lossless"], risu["expected"], risu["unexpected"], risu["errors"]) == (
        3,
        1,
        1,
        1,
        0,
    )
    assert (
        risu["lossless_pct"] == 33.3 and risu["expected_loss_pct"] == 33.3 and risu["unexpected_pct"] == 33.3
    )
    paths = {(p["path"], p["class"]): (p["entities"], p["examples"]) for p in risu["paths"]}
    assert paths == {
        ("identity.nickname", "expected"): (2, ["c2", "c3"]),
        ("greetings.firstMessage", "unexpected"): (1, ["c3"]),
    }
    agnai = cells[("st", "agnai")]
    assert agnai["errors"] == 1 and agnai["error_types"] == {"KeyError": 1} and agnai["lossless_pct"] == 66.7
    assert cells[("st", "marinara")]["lossless"] == 1 and cells[("st", "marinara")]["paths"] == []


def test_roundtrip_rates_and_top_lost_paths() -> None:
    ch = build_report(_rows())["kinds"]["character"]
    (rt,) = ch["roundtrip"]
    assert rt["format"] == "st" and (rt["files"], rt["native_lossless"], rt["native_rate"]) == (3, 2, 66.7)
    assert (rt["entities"], rt["stable"], rt["stability_rate"]) == (3, 3, 100.0)
    assert rt["native_paths"][0]["path"] == "data.name"
    top = ch["lost_paths"]
    assert (
        top[0]["path"] == "identity.nickname"
        and top[0]["entities"] == 2
        and top[0]["pairs"] == ["st -> risu"]
    )
    assert top[0]["examples"] == ["c2", "c3"]
    assert [(p["path"], p["class"], p["examples"]) for p in ch["unexpected_paths"]] == [
        ("greetings.firstMessage", "unexpected", ["c3"])
    ]


def test_report_is_the_same_whatever_the_row_order_and_merges_like_one_pass() -> None:
    rows = _rows()
    one = build_report(rows)
    shuffled = rows[:]
    random.Random(7).shuffle(shuffled)
    assert build_report(shuffled) == one  # examples are the smallest ids, not the first seen
    a = ReportBuilder().add_all(shuffled[:9])
    b = ReportBuilder().add_all(shuffled[9:])
    assert b.merge(a).report() == one
    # rows as JSON dicts (what the pipeline reads back) give the same report
    assert build_report(orjson.loads(orjson.dumps(r.to_json())) for r in rows) == one


def test_entity_names_are_carried_for_examples() -> None:
    rep = build_report(_rows())
    assert rep["entities"]["c3"] == {
        "name": "name of c3",
        "input": "in/c3",
        "source": "st",
        "kind": "character",
    }
    assert "c1" not in rep["entities"]  # only ids the report shows


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.cells: list[dict[str, str | None]] = []
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        d = dict(attrs)
        if tag == "td" and "cell" in (d.get("class") or ""):
            self.cells.append(d)
        for k in ("href", "src"):
            if d.get(k):
                self.links.append(d[k] or "")


def test_html_is_self_contained_and_escapes_every_input_string() -> None:
    rows = _rows()
    rows.append(
        _row(
            "cross",
            "unexpected",
            entity="evil",
            name=EVIL,
            source=f"st{EVIL}",
            lost=[PathLoss(f"extensions['{EVIL}']", "unexpected", 1, f"extensions['{EVIL}']")],
        )
    )
    rows.append(
        _row("decode", "rejected", entity="", input=f"x/{EVIL}.json", error=RowError("Malformed", EVIL))
    )
    page = render_html(build_report(rows))
    p = _Collect()
    p.feed(page)
    assert "script" not in p.tags and "iframe" not in p.tags and "img" not in p.tags
    assert EVIL not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # no network: every link is an in-page anchor; no external stylesheet or font
    assert all(h.startswith("#") for h in p.links), p.links
    assert not re.search(r"https?://", page.replace("http://www.w3.org/2000/svg", ""))
    assert "<style>" in page and "<svg" in page


def test_html_matrix_has_one_cell_per_pair_with_its_numbers() -> None:
    page = render_html(build_report(_rows()))
    p = _Collect()
    p.feed(page)
    cells = {(c["data-source"], c["data-target"]): c for c in p.cells}
    assert set(cells) == {("st", "agnai"), ("st", "marinara"), ("st", "risu"), ("st", "st")}
    assert (
        cells[("st", "risu")]["data-lossless"] == "33.3" and cells[("st", "risu")]["data-unexpected"] == "1"
    )
    assert cells[("st", "agnai")]["data-unexpected"] == "1"  # the error counts
    assert "diag" in (cells[("st", "st")]["class"] or "") and cells[("st", "st")]["data-lossless"] == "66.7"
    # every non-lossless cell has its drill-down section
    for s, t in (("st", "risu"), ("st", "agnai")):
        assert f'id="d-character--{s}--{t}"' in page
