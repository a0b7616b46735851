"""Every Risu corpus row detects as EXPECT.tsv says (REJECT rows claimed by nothing), and the samples
in samples/risu/ are exactly what tests/formats/risu/make_risu_samples.py builds."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import ACCEPT
from bunzai_codecs.core.sniff import Sniff
from tests.conftest import expect_rows

HERE = Path(__file__).resolve().parent
RISU_IDS = ("risu", "risu-lorebook", "risu-module", "risu-regex", "risu-preset", "risu-persona")


def _risu_rows() -> list[tuple[str, str]]:
    return [(p, f) for p, f in expect_rows() if p.startswith("risu/") or f in RISU_IDS]


@pytest.mark.parametrize(("rel", "want"), _risu_rows() or [("-", "-")])
def test_corpus_row_detects_as_expected(corpus: Path, rel: str, want: str) -> None:
    s = Sniff((corpus / rel).read_bytes(), Path(rel).name)
    ours = {c.id: c.detect(s) for c in registry.all_codecs() if c.id in RISU_IDS}
    if want == "REJECT" or want not in RISU_IDS:
        # not ours to claim (REJECT, or another app's codec, e.g. a bare card.json is SillyTavern's)
        assert all(score < ACCEPT for score in ours.values()), ours
        return
    if want not in registry.CODECS:
        pytest.skip(f"{want} codec not built yet")
    best = registry.detect(s)
    assert best is not None and best.id == want


def _builder() -> object:
    spec = importlib.util.spec_from_file_location("make_risu_samples", HERE / "make_risu_samples.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_samples_are_what_the_builder_makes() -> None:
    mod = _builder()
    built = mod.build()  # type: ignore[attr-defined]
    out = mod.OUT  # type: ignore[attr-defined]
    assert built, "the builder made nothing"
    for name, data in built.items():
        assert (out / name).read_bytes() == data, f"samples/risu/{name} is stale: run make_risu_samples.py"


SAMPLES = HERE.parents[2] / "samples" / "risu"


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("lantern_harbor.risum", "risu-module"),
        ("harbor_night_shift_preset.risup", "risu-preset"),
        ("mira_holt_persona.png", "risu-persona"),
    ],
)
def test_truncation_at_every_length_is_a_typed_error(name: str, fmt: str) -> None:
    from bunzai_codecs import read
    from bunzai_codecs.core.errors import BunzaiError

    data = (SAMPLES / name).read_bytes()
    for n in range(len(data)):
        try:
            read(data[:n], name, format=fmt)
        except BunzaiError as exc:
            assert not getattr(exc, "internal", False), (n, str(exc))
