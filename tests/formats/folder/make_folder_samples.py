"""Writes ``samples/card-folder/`` (run from the project root:
``python -m tests.formats.folder.make_folder_samples``).

Stdlib only (the YAML and Markdown are written as text, the PNG with struct and zlib), independent
of the codec under test, and deterministic: a card folder as an author keeps one in git, written by
hand (no ``.bunzai/`` escrow). The content is original, written for bunzai.

``marlow/``: a character with its long texts as Markdown files, two alternate greetings (one
titled), a portrait in ``assets/``, a lorebook of three entries (settings in front matter; one
constant, one with secondary keys), a regex set of two scripts, and ``.gitattributes``.
"""

from __future__ import annotations

from pathlib import Path

from tests.formats.make_samples import image, write_files  # the stdlib writers the generators share

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples" / "card-folder"


CARD = """\
# Marlow, the harbour's ferryman. Long texts are the Markdown files beside this one.
card_folder: 1
identity:
  name: Marlow
  characterVersion: '2.1'
media:
  portrait:
    role: portrait
    ref: 'ccdefault:'
    name: main
    primary: true
    file: assets/portrait.png
attribution:
  creator: bunzai samples
  createdAt: 1717000000
discovery:
  tags:
  - ferry
  - harbour
  - slow burn
settings:
  talkativeness: 0.6
"""

TEXTS = {
    "description.md": "{{char}} rows the night ferry across Saltmarsh harbour. He is sixty, broad-shouldered,\n"
    "and he has never once charged a passenger who could not pay.\n",
    "personality.md": "calm, superstitious about the tides, kind in a gruff way\n",
    "scenario.md": "The last ferry of the night; fog on the water; {{user}} is the only passenger.\n",
    "first_message.md": "*Marlow holds the boat steady against the pier.* In you get. Mind the rope.\n",
    "examples.md": "<START>\n{{user}}: Is it safe in this fog?\n{{char}}: Safer than the road. The water knows me.\n",
    "creator_notes.md": "Written for bunzai's card-folder sample. CC0.\n",
}

GREETINGS = {
    "greetings/01.md": "*The lantern on the bow sputters.* Late crossing, is it? Sit by the lamp.\n",
    "greetings/02.md": "---\ntitle: Storm night\n---\n*Rain hammers the pier.* We're not going anywhere until this passes.\n",
}

BOOK = """\
name: Saltmarsh Harbour
description: Places and customs of the harbour.
tokenBudget: 512
"""

ENTRIES = {
    "lorebook/001-the-night-ferry.md": """\
---
id: ferry
title: The night ferry
triggers:
- text: ferry
- text: crossing
---
A flat-bottomed boat with a lantern on its bow; it crosses every hour until the fog horn sounds.
""",
    "lorebook/002-fog-horn.md": """\
---
id: horn
title: Fog horn
triggers:
- text: horn
secondaryTriggers:
- text: fog
selective: true
selectiveLogic: and_any
sortOrder: 90
---
Three long blasts: every boat stays at its pier until dawn.
""",
    "lorebook/003-harbour-custom.md": """\
---
id: custom
title: Harbour custom
constant: true
position: character
---
Passengers leave a copper on the ferryman's bench; nobody counts them.
""",
}

REGEX = {
    "regex/set.yaml": "name: Marlow's tidy quotes\n",
    "regex/01-curly-quotes.yaml": """\
id: quotes
label: Curly quotes
find: '"([^"]*)"'
flags: g
replace: “$1”
phases:
- output
""",
    "regex/02-ellipsis.yaml": """\
id: ellipsis
label: Ellipsis
find: \\.\\.\\.
flags: g
replace: …
phases:
- output
- input
""",
}


def files() -> dict[str, bytes]:
    out = {"marlow/card.yaml": CARD.encode("utf-8")}
    for group in (TEXTS, GREETINGS, ENTRIES, REGEX):
        out.update({f"marlow/{k}": v.encode("utf-8") for k, v in group.items()})
    out["marlow/lorebook/book.yaml"] = BOOK.encode("utf-8")
    out["marlow/assets/portrait.png"] = image(32, 32, (58, 96, 140, 255))
    out["marlow/.gitattributes"] = b"* -text\n"
    return dict(sorted(out.items()))


def main() -> None:
    write_files(SAMPLES, files())


if __name__ == "__main__":
    main()
