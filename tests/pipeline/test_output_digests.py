"""Outputs byte-identical to those of the code before issue 21's speed work: a ``normalize`` run
over samples/ against the stored digest list (``output_digests.py`` says what is normalised, and
how to regenerate the list when a change means to alter outputs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from . import output_digests as od

pytestmark = pytest.mark.slow  # runs the pipeline


def test_the_normalisation_touches_only_what_varies() -> None:
    manifest = {
        "started": "a",
        "finished": "b",
        "runner": "X",
        "python": "3",
        "beam": "2",
        "bunzai": {"version": "9", "codecFingerprint": "f", "codecs": ["x"]},
        "options": {"output": "/abs", "fidelity": "full"},
        "counts": {"n": 1},
    }
    other = dict(manifest, started="c", finished="d", runner="Y", python="4", beam="5")
    other["bunzai"] = {"version": "1", "codecFingerprint": "g", "codecs": ["x"]}
    other["options"] = {"output": "/elsewhere", "fidelity": "full"}
    import orjson

    a = od.normalised("manifest.json", orjson.dumps(manifest))
    assert a == od.normalised("manifest.json", orjson.dumps(other))
    for changed in (
        dict(manifest, counts={"n": 2}),
        dict(manifest, options={"output": "/abs", "fidelity": "off"}),
        dict(manifest, bunzai={"version": "9", "codecFingerprint": "f", "codecs": ["y"]}),
    ):
        assert od.normalised("manifest.json", orjson.dumps(changed)) != a
    assert od.normalised("canonical/part-00000-of-00001.jsonl", b"x\n") == b"x\n"


def test_normalize_outputs_match_the_stored_digests(tmp_path: Path) -> None:
    want = od.load()
    assert len(want) > 100, "the stored list covers every output file"
    found = od.run(tmp_path / "out")
    missing = sorted(want.keys() - found.keys())
    extra = sorted(found.keys() - want.keys())
    differ = sorted(k for k in want.keys() & found.keys() if want[k] != found[k])
    assert not (missing or extra or differ), (
        f"outputs moved: {len(differ)} differ {differ[:10]}, {len(missing)} missing {missing[:10]}, "
        f"{len(extra)} new {extra[:10]}; if the change means it, `make output-digests` and review the diff"
    )
