"""Outputs byte-identical to the goldens (``goldens.py`` says what each golden holds, why that
guards every byte, and how to rewrite them when a change means to alter outputs): a ``normalize``
run over samples/, compared first as text (a failure shows the diff), then byte for byte."""

from __future__ import annotations

import random
from pathlib import Path

import orjson
import pytest

from . import goldens as g


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    return g.run(tmp_path_factory.mktemp("goldens") / "out")


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

    def dump(m: dict[str, object]) -> bytes:
        return orjson.dumps(m, option=orjson.OPT_INDENT_2)

    a = g.normalised("manifest.json", dump(manifest))
    assert a == g.normalised("manifest.json", dump(other))
    text = g.manifest_text("manifest.json", dump(manifest))
    assert text == g.manifest_text("manifest.json", dump(other))
    assert '"started": "<varies: run time>"' in text
    assert '"output": "<varies: output folder>"' in text
    for changed in (
        dict(manifest, counts={"n": 2}),
        dict(manifest, options={"output": "/abs", "fidelity": "off"}),
        dict(manifest, bunzai={"version": "9", "codecFingerprint": "f", "codecs": ["y"]}),
    ):
        assert g.normalised("manifest.json", dump(changed)) != a
        assert g.manifest_text("manifest.json", dump(changed)) != text
    # the layout as written is guarded too: only the named values are replaced
    assert g.normalised("manifest.json", dump(manifest).replace(b'"counts"', b' "counts"')) != a
    with pytest.raises(ValueError, match="not found once"):  # a varying value it cannot place
        g.normalised("manifest.json", orjson.dumps(manifest))
    assert g.normalised("canonical/part-00000-of-00001.jsonl", b"x\n") == b"x\n"


def test_the_canonical_golden_rebuilds_the_shard_byte_for_byte() -> None:
    lines = [
        {
            "id": "character-1",
            "kind": "character",
            "body": {"name": 'Ünï \u2028 "q"', "x": 1.5e-7, "z": 2**63},
        },
        {
            "kind": "lorebook",
            "id": "lorebook-2",
            "body": {"name": None, "b": [], "a": {}},
            "source": {"uri": "s/x"},
        },
    ]
    shard = b"".join(orjson.dumps(e) + b"\n" for e in lines)
    text = g.canonical_text("canonical/part-00000-of-00001.jsonl", shard)
    assert "\nentity character-1 · character " in text and '  "kind": "lorebook",\n' in text
    assert g.canonical_bytes(text) == shard
    assert g.canonical_bytes(g.canonical_text("canonical/p.jsonl", b"")) == b""


def test_an_output_no_golden_claims_is_an_error() -> None:
    with pytest.raises(ValueError, match="no golden view claims"):
        g.project({"shiny/new.bin": b"x"})


@pytest.mark.slow  # runs the pipeline
@pytest.mark.xdist_group("goldens")  # shares the module's run
def test_normalize_outputs_match_the_goldens(
    outputs: dict[str, bytes], request: pytest.FixtureRequest
) -> None:
    if request.config.getoption("--update-goldens"):
        now = g.project(outputs)
        g.check_complete(outputs, now)
        changed = g.write(now)
        pytest.skip(f"--update-goldens rewrote {len(changed)} golden files {changed[:5]}: review `git diff`")
    stored = g.load()
    assert stored, f"no goldens in {g.GOLDENS}"
    problems = g.compare(outputs, stored)
    assert not problems, (
        "outputs moved; if the change means it, "
        + g.UPDATE
        + " and explain the diff:\n"
        + "\n".join(problems)
    )


@pytest.mark.slow
@pytest.mark.xdist_group("goldens")  # shares the module's run
def test_the_goldens_stand_for_every_byte_of_the_run(outputs: dict[str, bytes]) -> None:
    """The digests derived from the golden text alone are the run's own, file for file."""
    assert len(outputs) > 1000  # every export of every sample, not an empty run
    g.check_complete(outputs, g.project(outputs))
    assert sorted(g.digests_from_goldens(g.load())) == sorted(outputs)


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]


def _volatile_spans(manifest: bytes) -> list[range]:
    """Byte ranges of the values :data:`goldens.VARIES` names, in the manifest as written."""
    m = orjson.loads(manifest)
    spans = []
    for path, _ in g.VARIES:
        node = m
        for p in path:
            node = node[p]
        needle = f'"{path[-1]}": '.encode() + orjson.dumps(node)
        assert manifest.count(needle) == 1, needle
        start = manifest.index(needle) + len(needle) - len(orjson.dumps(node))
        spans.append(range(start, start + len(orjson.dumps(node))))
    return spans


@pytest.mark.slow
@pytest.mark.xdist_group("goldens")  # shares the module's run
def test_a_one_byte_change_in_any_output_fails(outputs: dict[str, bytes]) -> None:
    """Flip one bit at the first, middle and last byte and at five more places of every output file
    (every byte of the manifest): the check fails each time, by its digest or by the file no
    longer parsing, except inside the manifest's named varying fields. A byte more, a file more or
    a file less fails too."""
    stored = g.digests_from_goldens(g.project(outputs))

    def caught(rel: str, data: bytes) -> bool:
        try:
            return g.sha256(g.normalised(rel, data)) != stored[rel]
        except ValueError:  # orjson.JSONDecodeError: the run's outputs would not parse
            return True

    rng = random.Random(33)
    tried = 0
    for rel, data in outputs.items():
        assert caught(rel, data + b"\n"), rel
        if rel == "manifest.json":
            varying = _volatile_spans(data)
            for at in range(len(data)):
                if not any(at in span for span in varying):
                    assert caught(rel, _flip(data, at)), (rel, at)
                    tried += 1
            continue
        for at in (
            {0, len(data) // 2, len(data) - 1, *(rng.randrange(len(data)) for _ in range(5))} if data else ()
        ):
            assert caught(rel, _flip(data, at)), (rel, at)
            tried += 1
    assert tried > 5000

    one = next(iter(sorted(outputs)))
    assert g.compare({k: v for k, v in outputs.items() if k != one}, g.project(outputs))
    assert g.compare({**outputs, "exports/agnai/extra.json": b"{}"}, g.project(outputs))


@pytest.mark.slow
@pytest.mark.xdist_group("goldens")  # shares the module's run
def test_a_change_in_a_text_output_shows_as_a_text_diff(outputs: dict[str, bytes]) -> None:
    """A one-letter change inside a canonical value, an inventory row or the manifest's counts is
    reported by the text comparison, as the line that moved (not as a digest)."""
    stored = g.project(outputs)
    for rel, old, new in (
        ("canonical/part-00000-of-00001.jsonl", b'"name":"Wren"', b'"name":"Wrem"'),
        ("inventory/part-00000-of-00001.jsonl", b'"status":"new"', b'"status":"neW"'),
        ("manifest.json", b'"listed": 87', b'"listed": 88'),
    ):
        assert old in outputs[rel], (rel, old)
        moved = {**outputs, rel: outputs[rel].replace(old, new, 1)}
        problems = g.compare(moved, stored)
        assert any(
            line.startswith("+") and new.decode().split(":")[-1].strip('"') in line for line in problems
        ), (
            rel,
            problems[:10],
        )


def test_the_goldens_are_kept_under_tests(tmp_path: Path) -> None:
    names = g.write({"a/b.txt": "x\n"}, tmp_path)
    assert names == ["a/b.txt"] and g.load(tmp_path) == {"a/b.txt": "x\n"}
    assert g.write({}, tmp_path) == ["a/b.txt"] and g.load(tmp_path) == {}
