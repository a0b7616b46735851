"""Security: nothing from an input is executed, and no name from an input becomes a path unchecked.

- Regexes and scripts in cards are data: while every sample (and a card built to hurt a regex
  engine) is decoded and exported to every format of its kind, ``re`` never compiles a pattern
  that came from the input, and ``exec``/``eval``/``compile``/subprocesses are never called.
- The CLI writes exactly the files it names (OUT and ``<OUT stem>.<kind><ext>`` beside it): a card
  named ``../../x`` or a file named with a path cannot put a file anywhere else.
- Zip member names: bunzai never writes an unsafe one (``..``, absolute, backslash, NUL), even when
  a card's asset names ask for it, and never reads one (tests/core/test_archive.py and the hostile
  zip cases).
"""

from __future__ import annotations

import base64
import builtins
import contextlib
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from bunzai_codecs import BunzaiError, read, write
from bunzai_codecs.core import archive, registry
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.formats.vaud.codec import dumps
from tests.formats.helpers import inputs_below

from .generate import ROOT, tiny_png

# -- nothing from an input is executed -------------------------------------------------------------

#: a card whose scripts and patterns would hang or run code if anything evaluated them
EVIL_PATTERN = "(a+)+$"
EVIL_KEY = "/(x+x+)+y/i"
EVIL_CARD = {
    "spec": "chara_card_v2",
    "spec_version": "2.0",
    "data": {
        "name": "Regex Bait",
        "description": "{{char}}",
        "first_mes": "a" * 40 + "!",
        "extensions": {
            "regex_scripts": [
                {
                    "scriptName": "bait",
                    "findRegex": f"/{EVIL_PATTERN}/g",
                    "replaceString": "x",
                    "placement": [2],
                }
            ],
            "risuai": {
                "customScripts": [{"comment": "c", "in": EVIL_PATTERN, "out": "y", "type": "editoutput"}]
            },
        },
        "character_book": {
            "entries": [
                {"keys": [EVIL_KEY], "content": "x" * 40, "id": 1, "enabled": True, "use_regex": True},
            ]
        },
    },
}


def _strings(tree: Any) -> Iterator[str]:
    if isinstance(tree, str):
        yield tree
    elif isinstance(tree, dict):
        for k, v in tree.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(tree, list | tuple):
        for v in tree:
            yield from _strings(v)


def _inputs() -> list[tuple[str, bytes]]:
    out = [
        (f.relative_to(ROOT).as_posix(), data) for f, _name, data in inputs_below(ROOT / "samples", skip=())
    ]
    out.append(("evil.json", orjson.dumps(EVIL_CARD)))
    return out


INPUTS = _inputs()


class Recorder:
    """Records every pattern ``re`` compiles and every exec/eval/compile/subprocess call."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.patterns: list[str] = []
        self.executed: list[str] = []
        real_compile = re._compile  # type: ignore[attr-defined]

        def spy_compile(pattern: Any, flags: Any) -> Any:
            if isinstance(pattern, str | bytes):
                self.patterns.append(pattern if isinstance(pattern, str) else pattern.decode("latin-1"))
            return real_compile(pattern, flags)

        monkeypatch.setattr(re, "_compile", spy_compile)
        for name in ("exec", "eval", "compile"):
            real = getattr(builtins, name)

            def spy(*args: Any, _name: str = name, _real: Any = real, **kwargs: Any) -> Any:
                self.executed.append(f"{_name}{args[:1]!r}")
                return _real(*args, **kwargs)

            monkeypatch.setattr(builtins, name, spy)

        def no_process(*args: Any, **kwargs: Any) -> Any:
            self.executed.append(f"subprocess {args[:1]!r}")
            raise AssertionError("a subprocess was started during a conversion")

        monkeypatch.setattr(subprocess, "Popen", no_process)


def _convert_everywhere(name: str, data: bytes) -> list[CanonicalEntity]:
    """Decode, then export every entity to every format of its kind (and vaud-json)."""
    decoded = read(data, name)
    for e in decoded.entities:
        for c in registry.all_codecs():
            if c.kind == e.kind or c.id == "vaud-json":
                # a typed refusal is fine here; what matters is what ran
                with contextlib.suppress(BunzaiError):
                    write(e, c.id, linked=decoded.entities)
    return decoded.entities


@pytest.mark.parametrize(("name", "data"), INPUTS, ids=[n for n, _ in INPUTS])
def test_no_pattern_or_script_from_the_input_is_compiled_or_run(
    name: str, data: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    _convert_everywhere(Path(name).name, data)  # warm up: lazy codec imports compile their own source
    rec = Recorder(monkeypatch)
    entities = _convert_everywhere(Path(name).name, data)
    monkeypatch.undo()
    # every string the input holds: texts, keys, patterns, scripts, as decoded and as escrowed
    held = set()
    for e in entities:
        held |= set(_strings(e.body.dump()))
        held |= set(_strings(orjson.loads(dumps(e))["original"]))
    held |= {EVIL_PATTERN, EVIL_KEY, EVIL_KEY.strip("/i")}
    held = {s for s in held if len(s) >= 3}
    assert not (set(rec.patterns) & held), sorted(set(rec.patterns) & held)
    assert rec.executed == []


def test_the_recorder_sees_a_pattern_compiled_from_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """The spy works: compiling a card's pattern would be seen (this is what codecs must not do)."""
    rec = Recorder(monkeypatch)
    re.compile(EVIL_PATTERN + "(?#probe)")
    monkeypatch.undo()
    assert EVIL_PATTERN + "(?#probe)" in rec.patterns


def test_the_bait_card_is_decoded_and_keeps_its_patterns_as_text() -> None:
    d = read(orjson.dumps(EVIL_CARD), "evil.json")
    regex = next(e for e in d.entities if e.kind == "regex")
    book = next(e for e in d.entities if e.kind == "lorebook")
    assert regex.body.rules[0].find == EVIL_PATTERN  # type: ignore[attr-defined]
    assert book.body.entries[0].triggers[0].text in (EVIL_KEY, "(x+x+)+y")  # type: ignore[attr-defined]


# -- export names cannot leave the output folder ---------------------------------------------------

HOSTILE_NAMES = [
    "../../../../tmp/bunzai-pwned",
    "/etc/passwd",
    "..\\..\\x",
    "a/../../b",
    "C:\\Windows\\x",
    "\0x",
]


def _card(name: str) -> bytes:
    card = {
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {
            "name": name,
            "description": "d",
            "first_mes": "hi",
            "extensions": {
                "regex_scripts": [
                    {"scriptName": name, "findRegex": "/a/g", "replaceString": "b", "placement": [2]}
                ]
            },
            "character_book": {
                "name": name,
                "entries": [{"keys": ["k"], "content": "c", "id": 1, "enabled": True}],
            },
        },
    }
    return orjson.dumps(card)


def _tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


@pytest.mark.parametrize("hostile", HOSTILE_NAMES)
@pytest.mark.parametrize("fmt", ["vaud-json", "sillytavern", "risu", "agnai", "marinara-character", "byaf"])
def test_cli_convert_writes_only_beside_out(tmp_path: Path, hostile: str, fmt: str) -> None:
    from bunzai_codecs.cli import main

    src = tmp_path / "in" / "card.json"
    src.parent.mkdir()
    src.write_bytes(_card(hostile))
    out_dir = tmp_path / "out"
    before = _tree(tmp_path)
    rc = main(["convert", str(src), "--to", fmt, "-o", str(out_dir / "result")])
    assert rc == 0
    written = _tree(tmp_path) - before
    assert written, "nothing written"
    for rel in written:
        assert rel == "out" or rel.startswith("out/"), rel
        name = rel.removeprefix("out/")
        assert (
            name == "out" or name == "result" or re.fullmatch(r"result\.(lorebook|regex)\.[a-z.]+", name)
        ), rel


def test_export_file_names_come_from_codecs_not_from_cards() -> None:
    """``write`` names nothing itself: an export's extension is one of its codec's container
    suffixes (the one its bytes are), beside exports likewise, and no field of the entity reaches a
    file name."""
    d = read(_card("../../evil"), "card.json")
    for c in registry.all_codecs():
        if c.kind != "character":
            continue
        ex = write(d.primary, c.id, linked=d.entities)
        for side in [ex, *ex.beside]:
            assert side.extension in registry.get(side.format).writable_suffixes()
            assert "/" not in side.extension and ".." not in side.extension


# -- zip names ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("hostile", [*HOSTILE_NAMES, "../../x.png"])
def test_a_card_cannot_make_bunzai_write_an_unsafe_zip_member(hostile: str) -> None:
    """A v3 card whose data: assets are named to escape: the .charx (and .byaf) export either
    writes safe member names or refuses with a typed error; it never writes the name as given."""
    png_uri = "data:image/png;base64," + base64.b64encode(tiny_png()).decode()
    card = orjson.loads(_card("x"))
    card["spec"] = "chara_card_v3"
    card["data"]["assets"] = [
        {"type": "icon", "uri": png_uri, "name": "main", "ext": "png"},
        {"type": "emotion", "uri": png_uri, "name": hostile, "ext": "png"},
        {"type": "emotion", "uri": png_uri, "name": "fine", "ext": hostile},
    ]
    d = read(orjson.dumps(card), "card.json")
    for fmt in ("risu", "byaf", "lumiverse"):
        if fmt not in registry.CODECS:
            continue
        try:
            data = write(d.primary, fmt, linked=d.entities).data
        except BunzaiError:
            continue
        if data[:4] != b"PK\x03\x04":
            continue  # this format wrote the card without an archive
        z = archive.open_zip(data)  # refuses unsafe names itself; and check them explicitly
        for n in z.names:
            archive.safe_member_name(n)
            assert hostile not in n


@pytest.mark.parametrize("hostile", HOSTILE_NAMES)
def test_write_zip_refuses_unsafe_names(hostile: str) -> None:
    with pytest.raises(BunzaiError):
        archive.write_zip([(hostile, b"x")])
