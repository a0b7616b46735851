"""Builds ``samples/lumiverse/quill.lumiverse.zip`` from ``quill.lumiverse.json`` (run from the project
root: ``python tests/formats/lumiverse/make_lumiverse_samples.py``). Deterministic.

The zip is Lumiverse's charx-like character container (docs/formats/lumiverse.md#character): ``card.json``,
``lumiverse_modules.json`` (version 1: expressions mapped to archive paths, alternate avatars, one
module regex script whose ``target`` is a single string, as module rows write it) and the image
files the modules file names.
"""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

from bunzai_codecs.core import archive, png

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples" / "lumiverse"


def tiny_png(rgb: tuple[int, int, int]) -> bytes:
    rows = b"".join(b"\0" + bytes(rgb * 2) for _ in range(2))
    return png.build(
        [
            png.Chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)),
            png.Chunk(b"IDAT", zlib.compress(rows, 9)),
            png.Chunk(b"IEND", b""),
        ]
    )


MODULES = {
    "version": 1,
    "expressions": {
        "enabled": True,
        "defaultExpression": "calm",
        "mappings": {
            "calm": "assets/other/image/expr_calm.png",
            "puzzled": "assets/other/image/expr_puzzled.png",
        },
    },
    "expression_groups": {"groups": {}},
    "alternate_fields": {},
    "alternate_avatars": [{"id": "av-1", "label": "Rusted", "path": "assets/icon/image/av-1.png"}],
    "has_nsfw_expressions": False,
    "world_books": [],
    "regex_scripts": [
        {
            "name": "Brass clicks",
            "find_regex": "\\*click\\*",
            "replace_string": "*tick*",
            "flags": "gi",
            "placement": ["ai_output"],
            "scope": "character",
            "scope_id": None,
            "target": "display",
            "min_depth": None,
            "max_depth": None,
            "trim_strings": [],
            "run_on_edit": False,
            "substitute_macros": "none",
            "disabled": False,
            "sort_order": 0,
            "description": "Sound effects, softened.",
            "metadata": {},
        }
    ],
}


def build() -> bytes:
    card = (SAMPLES / "quill.lumiverse.json").read_bytes()
    return archive.write_zip(
        [
            ("card.json", card),
            ("lumiverse_modules.json", json.dumps(MODULES, indent=2).encode("utf-8")),
            ("assets/other/image/expr_calm.png", tiny_png((180, 140, 60))),
            ("assets/other/image/expr_puzzled.png", tiny_png((120, 100, 60))),
            ("assets/icon/image/av-1.png", tiny_png((90, 60, 40))),
        ]
    )


if __name__ == "__main__":
    (SAMPLES / "quill.lumiverse.zip").write_bytes(build())
