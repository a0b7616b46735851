"""``--since`` reuses a previous run's results only when they are what this run would make
(issue 37, behaviours 1 and 2): the manifest's checks, each on its own, without running a pipeline.
tests/pipeline/test_since.py runs the pipeline over the same cases (marked slow)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from pipeline.dataset.manifest import MANIFEST_VERSION
from pipeline.normalize.since import codec_fingerprint, load_previous
from pipeline.runtime.errors import MissingInput
from pipeline.runtime.options import NormalizeConfig

FINGERPRINT = "ab" * 32


def _manifest(**changes: Any) -> dict[str, Any]:
    """A previous run's manifest as ``normalize`` writes it (the parts ``--since`` reads)."""
    m: dict[str, Any] = {
        "manifestVersion": MANIFEST_VERSION,
        "bunzai": {"codecFingerprint": FINGERPRINT},
        "options": {"maxFileBytes": 1000, "export": ["vaud-json", "sillytavern"], "fidelity": "native"},
        "outputs": {
            "shards": {
                "inventory": [{"path": "inventory/part-00000-of-00001.jsonl"}],
                "index": [{"path": "index/part-00000-of-00001.parquet"}],
                "canonical": [{"path": "canonical/part-00000-of-00001.jsonl"}],
            }
        },
    }
    for key, value in changes.items():
        where, _, leaf = key.rpartition("__")
        node = m
        for part in where.split("__") if where else ():
            node = node[part]
        if value is None:
            node.pop(leaf, None)
        else:
            node[leaf] = value
    return m


def _load(tmp_path: Path, manifest: dict[str, Any], **cfg: Any) -> Any:
    url = tmp_path / "prev" / "manifest.json"
    url.parent.mkdir(exist_ok=True)
    url.write_bytes(orjson.dumps(manifest))
    opts: dict[str, Any] = {"max_file_bytes": 1000, "export": ("vaud-json",), "fidelity": "native"}
    opts.update(cfg)
    config = NormalizeConfig(inputs=("in",), output=str(tmp_path / "out"), since=str(url), **opts)
    return load_previous(config, FINGERPRINT)


def test_the_same_library_and_options_reuse_the_previous_results(tmp_path: Path) -> None:
    prev = _load(tmp_path, _manifest())
    assert (prev.honoured, prev.reason) == (True, None)
    assert prev.root == str(tmp_path / "prev")
    assert prev.urls("canonical") == [str(tmp_path / "prev" / "canonical" / "part-00000-of-00001.jsonl")]


def test_a_changed_codec_library_reuses_nothing(tmp_path: Path) -> None:
    """Behaviour 1: results the codecs of another version made are not this run's."""
    for fingerprint in ("cd" * 32, "", None):
        prev = _load(tmp_path, _manifest(bunzai__codecFingerprint=fingerprint))
        assert (prev.honoured, prev.reason) == (False, "the codec library changed since that run"), (
            fingerprint
        )
    prev = _load(tmp_path, _manifest(bunzai=None))
    assert not prev.honoured


def test_a_changed_max_file_bytes_reuses_nothing(tmp_path: Path) -> None:
    """Behaviour 2: a file the previous run skipped as too big may fit now (and the reverse)."""
    for mine in (999, 1001, 10**9):
        prev = _load(tmp_path, _manifest(), max_file_bytes=mine)
        assert (prev.honoured, prev.reason) == (False, "--max-file-bytes differs from that run"), mine
    prev = _load(tmp_path, _manifest(options__maxFileBytes=None))
    assert (prev.honoured, prev.reason) == (False, "--max-file-bytes differs from that run")


@pytest.mark.parametrize(
    ("changes", "cfg", "reason"),
    [
        ({}, {"export": ("vaud-json", "agnai")}, "this run exports formats that run did not"),
        ({}, {"fidelity": "full"}, "--fidelity full differs from that run's (native)"),
        ({"options__fidelity": None}, {}, "--fidelity native differs from that run's (full)"),
        ({"outputs__shards__inventory": None}, {}, "that manifest lists no inventory"),
        ({"outputs__shards__index": None}, {}, "that manifest lists no entity index"),
    ],
)
def test_every_other_difference_reuses_nothing(
    tmp_path: Path, changes: dict[str, Any], cfg: dict[str, Any], reason: str
) -> None:
    prev = _load(tmp_path, _manifest(**changes), **cfg)
    assert (prev.honoured, prev.reason) == (False, reason)


def test_the_fingerprint_is_the_codec_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fingerprint changes with any codec source file's bytes or name, and with nothing else."""
    import bunzai_codecs

    lib = tmp_path / "bunzai_codecs"
    (lib / "formats").mkdir(parents=True)
    (lib / "__init__.py").write_text("")
    (lib / "formats" / "a.py").write_text("X = 1\n")
    (lib / "notes.md").write_text("not code")
    monkeypatch.setattr(bunzai_codecs, "__file__", str(lib / "__init__.py"))
    first = codec_fingerprint()
    assert len(first) == 64 and codec_fingerprint() == first
    (lib / "notes.md").write_text("still not code")
    assert codec_fingerprint() == first
    (lib / "formats" / "a.py").write_text("X = 2\n")
    second = codec_fingerprint()
    assert second != first
    (lib / "formats" / "a.py").rename(lib / "formats" / "b.py")
    assert codec_fingerprint() not in (first, second)


def test_no_manifest_or_not_a_manifest_is_a_missing_input(tmp_path: Path) -> None:
    """A --since that names nothing readable is a missing input (exit 3), not a typo (issue 32)."""
    with pytest.raises(MissingInput, match="no manifest at"):
        load_previous(
            NormalizeConfig(inputs=("in",), output="out", since=str(tmp_path / "missing.json")), FINGERPRINT
        )
    with pytest.raises(MissingInput, match="is not a bunzai normalize manifest"):
        _load(tmp_path, _manifest(manifestVersion=99))


# -- found by mutation testing ------------------------------------------------------------------------


def test_the_same_exports_and_an_unrecorded_full_fidelity_reuse(tmp_path: Path) -> None:
    prev = _load(tmp_path, _manifest(), export=("vaud-json", "sillytavern"))
    assert prev.honoured  # the same formats, not only fewer
    prev = _load(tmp_path, _manifest(options__fidelity=None), fidelity="full")
    assert prev.honoured  # a manifest from before --fidelity was a full run


def test_what_the_previous_run_is_and_says(tmp_path: Path) -> None:
    prev = _load(tmp_path, _manifest())
    url = str(tmp_path / "prev" / "manifest.json")
    assert prev.manifest == url
    assert prev.public() == {"manifest": url, "honoured": True, "reason": None}
    assert prev.urls("fidelity") == []  # a dataset that run did not write


def test_a_manifest_in_the_current_folder_is_its_own_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "manifest.json").write_bytes(orjson.dumps(_manifest()))
    monkeypatch.chdir(tmp_path)
    cfg = NormalizeConfig(
        inputs=("in",), output="out", since="manifest.json", max_file_bytes=1000, fidelity="native"
    )
    prev = load_previous(cfg, FINGERPRINT)
    assert prev.root == "." and prev.urls("inventory") == ["./inventory/part-00000-of-00001.jsonl"]


def test_a_manifest_missing_its_parts_reuses_nothing_and_an_unreadable_one_is_named(tmp_path: Path) -> None:
    assert _load(tmp_path, _manifest(outputs=None)).reason == "that manifest lists no inventory"
    assert _load(tmp_path, _manifest(options=None)).reason == "--max-file-bytes differs from that run"
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"{not json")
    with pytest.raises(MissingInput, match=f"--since: cannot read {bad}: JSONDecodeError: "):
        load_previous(NormalizeConfig(inputs=("in",), output="out", since=str(bad)), FINGERPRINT)
