"""Writes samples/{pygmalion,backyard,novelai}/ from the facts in the formats notes, stdlib only.

Run from the project root: ``python tests/formats/make_samples.py``. The files are committed; this
script is how they were made (independently of the codecs under test: plain struct/zlib/zipfile/
json), so a test that reads a sample checks the codec against the format, not against itself.
The content is original (written for bunzai), not taken from any app's files.
"""

from __future__ import annotations

import base64
import io
import json
import struct
import zipfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "samples"


def chunk(ctype: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + ctype + data + struct.pack(">I", zlib.crc32(ctype + data))


def image(w: int, h: int, rgba: tuple[int, int, int, int], *extra: bytes, after_ihdr: bytes = b"") -> bytes:
    """A solid-colour RGBA PNG; ``after_ihdr`` chunks go right after IHDR, ``extra`` before IEND."""
    rows = b"".join(b"\0" + bytes(rgba) * w for _ in range(h))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
        + after_ihdr
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + b"".join(extra)
        + chunk(b"IEND", b"")
    )


def text(keyword: str, value: bytes) -> bytes:
    return chunk(b"tEXt", keyword.encode("latin-1") + b"\0" + value)


def b64json(tree: object) -> bytes:
    return base64.b64encode(json.dumps(tree, ensure_ascii=False, separators=(",", ":")).encode())


def write_files(root: Path, files: dict[str, bytes]) -> None:
    """Write ``files`` (paths relative to ``root`` -> bytes), making folders; print each path."""
    for rel, data in files.items():
        out = root / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
        print(out)


def pretty(tree: object, indent: int = 2, newline: bool = True) -> bytes:
    return json.dumps(tree, ensure_ascii=False, indent=indent).encode() + (b"\n" if newline else b"")


# -- Pygmalion ---------------------------------------------------------------------------------

PYG_JSON = {
    "char_name": "Oskar",
    "char_persona": "Oskar runs the galley of a fishing trawler. Gruff, generous, allergic to shellfish.",
    "char_greeting": "*Oskar slides a bowl across the counter.* Eat first. Questions later.",
    "world_scenario": "A trawler in the northern sea, three days from port, a storm on the horizon.",
    "example_dialogue": "<START>\n{{user}}: What's in the stew?\n{{char}}: Potatoes, patience and a secret.",
    "metadata": {
        "version": 1,
        "created": 1700000000000,
        "modified": 1700000500000,
        "source": None,
        "tool": {
            "name": "Sample Character Editor",
            "version": "0.5.0",
            "url": "https://example.invalid/editor",
        },
    },
}
PYG_PNG = {
    "name": "Ines",
    "char_name": "Ines",
    "char_persona": "Ines keeps the lighthouse logbook and talks to the gulls. Dry humour, no patience for fog.",
    "char_greeting": "Mind the stairs. Two hundred and twelve of them, I counted twice.",
    "world_scenario": "A lighthouse on a rocky island, autumn night.",
    "example_dialogue": "<USER>: Do you get lonely?\n<BOT>: The gulls would be offended.",
}


def pygmalion() -> None:
    d = ROOT / "pygmalion"
    (d / "oskar.pygmalion.json").write_bytes(pretty(PYG_JSON))
    (d / "ines.pygmalion.png").write_bytes(image(8, 8, (40, 90, 160, 255), text("chara", b64json(PYG_PNG))))


# -- Backyard legacy PNG (EXIF UserComment) ----------------------------------------------------


def exif_block(comment: bytes, *, little: bool = False, comment_last: bool = True) -> bytes:
    """A TIFF block: IFD0 (XResolution, Exif pointer) -> Exif IFD (ExifVersion, UserComment,
    ColorSpace). With ``comment_last`` False a rational value follows the comment's bytes."""
    o = "<" if little else ">"
    head = (b"II*\0" if little else b"MM\0*") + struct.pack(o + "I", 8)
    ifd0_at, n0 = 8, 2
    exif_at = ifd0_at + 2 + 12 * n0 + 4
    n1 = 3
    data_at = exif_at + 2 + 12 * n1 + 4
    value = b"ASCII\0\0\0" + comment
    pad = b"\0" if len(value) % 2 else b""
    rational = struct.pack(o + "II", 72, 1)
    if comment_last:
        rational_at, comment_at = data_at, data_at + 8
        tail = rational + value + pad
    else:
        comment_at, rational_at = data_at, data_at + len(value) + len(pad)
        tail = value + pad + rational
    ifd0 = struct.pack(o + "H", n0)
    ifd0 += struct.pack(o + "HHII", 0x011A, 5, 1, rational_at)
    ifd0 += struct.pack(o + "HHII", 0x8769, 4, 1, exif_at) + struct.pack(o + "I", 0)
    ifd1 = struct.pack(o + "H", n1)
    ifd1 += struct.pack(o + "HHI", 0x9000, 7, 4) + b"0232"
    ifd1 += struct.pack(o + "HHII", 0x9286, 7, len(value), comment_at)
    ifd1 += struct.pack(o + "HHI", 0xA001, 3, 1) + struct.pack(o + "HH", 0xFFFF, 0) + struct.pack(o + "I", 0)
    return head + ifd0 + ifd1 + tail


BY_V4 = {
    "character": {
        "id": "clsample0000lanternkeeper",
        "createdAt": "2024-05-01T10:00:00.000Z",
        "updatedAt": "2024-05-02T11:30:15.250Z",
        "aiDisplayName": "Maelis the Lantern Keeper",
        "aiName": "Maelis",
        "aiPersona": "{character} tends the lanterns of a canal city. She knows every bridge and every rumour.",
        "basePrompt": "Write {character}'s replies in the third person. Keep {user}'s actions for {user}.",
        "customDialogue": "#{user}: Which bridge is the oldest?\n#{character}: The Crooked One. It leans because it listens.",
        "firstMessage": "*A lantern flares as {user} approaches.* Lost, or looking?",
        "scenario": "{user} arrives in the canal city at dusk, looking for {char}.",
        "model": "sample.7b.q4_k_m",
        "temperature": 0.9,
        "topK": 40,
        "topP": 0.95,
        "minP": 0.05,
        "minPEnabled": True,
        "repeatPenalty": 1.1,
        "repeatLastN": 128,
        "promptTemplate": "ChatML",
        "canDeleteCustomDialogue": True,
        "isNSFW": False,
        "grammar": None,
        "loreItems": [
            {
                "id": "clsample0000lore00000001",
                "order": "a0",
                "key": "Crooked Bridge, old bridge",
                "value": "The oldest bridge; {character} says it listens.",
            },
            {
                "id": "clsample0000lore00000002",
                "order": "a1",
                "key": "lantern oil",
                "value": "Whale-free oil pressed from river seeds.",
            },
        ],
        "Chat": [
            {
                "id": "clsamplechat000000000001",
                "name": "",
                "modelConfigId": "clsample0000lanternkeeper",
                "authorNote": "",
                "createdAt": "2024-05-01T10:00:00.000Z",
                "updatedAt": "2024-05-01T10:00:00.000Z",
                "ChatItems": [],
            }
        ],
    },
    "version": 4,
}
BY_V2 = {
    "character": {
        "id": "clsample0000tidecaller000",
        "createdAt": "2023-12-01T08:00:00.000Z",
        "updatedAt": "2023-12-01T08:00:00.000Z",
        "aiDisplayName": "Tidecaller",
        "aiName": "Tidecaller",
        "aiPersona": "{char} speaks for the sea and hates being interrupted.",
        "basePrompt": "",
        "customDialogue": "",
        "firstMessage": None,
        "scenario": "",
        "model": "sample.13b.q5_k_m",
        "temperature": 0.8,
        "topK": 30,
        "topP": 0.9,
        "minP": 0.1,
        "minPEnabled": False,
        "repeatPenalty": 1,
        "repeatLastN": 64,
        "isNSFW": False,
        "grammar": None,
        "loreItems": [],
        "Chat": [],
    },
    "version": 2,
}


def backyard() -> None:
    d = ROOT / "backyard"
    v4 = exif_block(b64json(BY_V4))
    (d / "maelis.v4.backyard.png").write_bytes(
        image(16, 16, (200, 160, 60, 255), after_ihdr=chunk(b"eXIf", v4))
    )
    raw = json.dumps(BY_V2, separators=(",", ":")).encode()
    v2 = exif_block(raw, little=True, comment_last=False)
    (d / "tidecaller.v2.backyard.png").write_bytes(
        image(16, 16, (20, 80, 120, 255), text("Software", b"sample writer"), after_ihdr=chunk(b"eXIf", v2))
    )
    byaf(d / "maelis.byaf")


def byaf(path: Path) -> None:
    cid = "maelis01"
    manifest = {
        "schemaVersion": 1,
        "createdAt": "2024-06-01T12:00:00.000Z",
        "author": {"name": "Sample Author", "backyardURL": "https://backyard.ai/hub/user/sample"},
        "characters": [f"characters/{cid}/character.json"],
        "scenarios": ["scenarios/dusk.json", "scenarios/festival.json"],
    }
    character = {
        "schemaVersion": 1,
        "id": cid,
        "name": "Maelis",
        "displayName": "Maelis the Lantern Keeper",
        "isNSFW": False,
        "persona": "{character} tends the lanterns of a canal city.",
        "createdAt": "2024-05-01T10:00:00.000Z",
        "updatedAt": "2024-06-01T12:00:00.000Z",
        "loreItems": [
            {"key": "Crooked Bridge, old bridge", "value": "The oldest bridge; {character} says it listens."},
            {"key": "lantern oil", "value": "Pressed from river seeds."},
        ],
        "images": [
            {"path": "images/portrait.png", "label": "avatar"},
            {"path": "images/festival.png", "label": "festival outfit"},
        ],
    }
    common = {
        "schemaVersion": 1,
        "formattingInstructions": "Write {character}'s replies only.",
        "minP": 0.05,
        "minPEnabled": True,
        "temperature": 0.9,
        "repeatPenalty": 1.1,
        "repeatLastN": 128,
        "topK": 40,
        "topP": 0.95,
    }
    dusk = {
        **common,
        "title": "Dusk arrival",
        "exampleMessages": [
            {
                "characterID": cid,
                "text": "{user}: Which bridge is the oldest?\n{character}: The Crooked One.",
            },
            {"characterID": cid, "text": "{character}: Mind the third step."},
        ],
        "canDeleteExampleMessages": True,
        "firstMessages": [{"characterID": cid, "text": "Lost, or looking, {user}?"}],
        "narrative": "{user} arrives at dusk.",
        "promptTemplate": "ChatML",
        "grammar": None,
        "messages": [
            {
                "type": "human",
                "createdAt": "2024-06-01T12:01:00.000Z",
                "updatedAt": "2024-06-01T12:01:00.000Z",
                "text": "Looking.",
            },
            {
                "type": "ai",
                "outputs": [
                    {
                        "createdAt": "2024-06-01T12:01:05.000Z",
                        "updatedAt": "2024-06-01T12:01:05.000Z",
                        "activeTimestamp": "2024-06-01T12:01:05.000Z",
                        "text": "Then follow the light.",
                    }
                ],
            },
        ],
        "backgroundImage": "scenarios/dusk-background.png",
    }
    festival = {
        **common,
        "title": "Festival night",
        "model": "sample.7b.q4_k_m",
        "exampleMessages": [],
        "canDeleteExampleMessages": False,
        "firstMessages": [{"characterID": cid, "text": "Every lantern is lit tonight!"}],
        "narrative": "The lantern festival.",
        "promptTemplate": None,
        "grammar": None,
        "messages": [],
    }
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:

        def put(name: str, data: bytes) -> None:
            z.writestr(zipfile.ZipInfo(name, (2024, 6, 1, 12, 0, 0)), data)

        put("manifest.json", pretty(manifest, newline=False))
        put("characters/", b"")
        put(f"characters/{cid}/", b"")
        put(f"characters/{cid}/images/", b"")
        put(f"characters/{cid}/images/portrait.png", image(4, 4, (200, 160, 60, 255)))
        put(f"characters/{cid}/images/festival.png", image(4, 4, (220, 40, 90, 255)))
        put(f"characters/{cid}/character.json", pretty(character, newline=False))
        put("scenarios/", b"")
        put("scenarios/dusk-background.png", image(4, 2, (10, 10, 40, 255)))
        put("scenarios/dusk.json", pretty(dusk, newline=False))
        put("scenarios/festival.json", pretty(festival, newline=False))
    path.write_bytes(buf.getvalue())


# -- NovelAI -----------------------------------------------------------------------------------

CAT = "0b9a4c1e-6f1d-4a8e-9c53-2f0e8d7a1b11"


def _cc(priority: int) -> dict[str, object]:
    return {
        "prefix": "",
        "suffix": "\n",
        "tokenBudget": 1,
        "reservedTokens": 0,
        "budgetPriority": priority,
        "trimDirection": "trimBottom",
        "insertionType": "newline",
        "maximumTrimType": "sentence",
        "insertionPosition": -1,
    }


def _bias(*phrases: str) -> list[dict[str, object]]:
    return [
        {
            "phrases": [{"sequences": [], "sequence": p, "type": 2} for p in phrases],
            "ensure_sequence_finish": False,
            "ensureSequenceFinish": False,
            "generate_once": True,
            "generateOnce": True,
            "bias": 0.05 if phrases else 0,
            "enabled": True,
            "whenInactive": False,
        }
    ]


NAI_BOOK = {
    "lorebookVersion": 6,
    "entries": [
        {
            "text": "The orchard of Hollin grows silver pears that ripen only under moonlight.",
            "contextConfig": _cc(400),
            "lastUpdatedAt": 1710000000000,
            "displayName": "Hollin Orchard",
            "id": "5d0c1f4e-2b7a-4f09-8d3e-61a2c4b9e001",
            "keys": ["Hollin", "orchard", "silver pear"],
            "searchRange": 1000,
            "enabled": True,
            "forceActivation": False,
            "keyRelative": False,
            "nonStoryActivatable": False,
            "category": CAT,
            "loreBiasGroups": _bias("pear"),
            "advancedConditions": [],
        },
        {
            "text": "Warden Aldous guards the orchard gate and distrusts anyone who whistles.",
            "contextConfig": _cc(650),
            "lastUpdatedAt": 1710000100000,
            "displayName": "Warden Aldous",
            "id": "5d0c1f4e-2b7a-4f09-8d3e-61a2c4b9e002",
            "keys": ["/\\bAldous\\b/i", "warden"],
            "searchRange": 2500,
            "enabled": True,
            "forceActivation": False,
            "keyRelative": True,
            "nonStoryActivatable": False,
            "category": "",
            "loreBiasGroups": _bias(),
            "advancedConditions": [],
        },
        {
            "text": "Pears picked before moonrise taste of ash.",
            "contextConfig": _cc(-200),
            "lastUpdatedAt": 1710000200000,
            "displayName": "Picking rule",
            "id": "5d0c1f4e-2b7a-4f09-8d3e-61a2c4b9e003",
            "keys": [],
            "searchRange": 1000,
            "enabled": False,
            "forceActivation": True,
            "keyRelative": False,
            "nonStoryActivatable": True,
            "category": CAT,
            "loreBiasGroups": _bias(),
            "advancedConditions": [],
        },
    ],
    "settings": {"orderByKeyLocations": False},
    "categories": [
        {
            "name": "Places",
            "id": CAT,
            "enabled": True,
            "createSubcontext": False,
            "subcontextSettings": {
                "text": "",
                "contextConfig": _cc(400),
                "lastUpdatedAt": 1710000000000,
                "displayName": "New Lorebook Entry",
                "id": "5d0c1f4e-2b7a-4f09-8d3e-61a2c4b9e0a1",
                "keys": [],
                "searchRange": 1000,
                "enabled": True,
                "forceActivation": False,
                "keyRelative": False,
                "nonStoryActivatable": False,
                "category": "",
                "loreBiasGroups": _bias(),
                "advancedConditions": [],
            },
            "useCategoryDefaults": False,
            "categoryDefaults": {
                "text": "",
                "contextConfig": _cc(400),
                "lastUpdatedAt": 1710000000000,
                "displayName": "New Lorebook Entry",
                "id": "5d0c1f4e-2b7a-4f09-8d3e-61a2c4b9e0a2",
                "keys": [],
                "searchRange": 1000,
                "enabled": True,
                "forceActivation": False,
                "keyRelative": False,
                "nonStoryActivatable": False,
                "category": "",
                "loreBiasGroups": _bias(),
                "advancedConditions": [],
            },
            "categoryBiasGroups": _bias(),
            "settings": {},
            "order": [],
            "open": False,
        },
    ],
    "order": [],
}
#: a version-3 book: no entry ids, no bias groups, no categories
NAI_V3 = {
    "lorebookVersion": 3,
    "entries": [
        {
            "text": "Moonwell: a spring that reflects tomorrow's sky.",
            "contextConfig": _cc(400),
            "lastUpdatedAt": 1600000000000,
            "displayName": "Moonwell",
            "keys": ["moonwell", "spring"],
            "searchRange": 1000,
            "enabled": True,
            "forceActivation": False,
            "keyRelative": False,
            "nonStoryActivatable": False,
        },
        {
            "text": "Nobody drinks from the Moonwell twice.",
            "contextConfig": _cc(300),
            "lastUpdatedAt": 1600000000001,
            "keys": ["moonwell"],
            "searchRange": 500,
            "enabled": True,
            "forceActivation": False,
            "keyRelative": False,
            "nonStoryActivatable": False,
        },
    ],
    "settings": {"orderByKeyLocations": True},
}
NAI_SCENARIO = {
    "scenarioVersion": 3,
    "title": "A Night in Hollin",
    "description": "A short sample scenario written for bunzai's tests.",
    "prompt": "The moon rose over the orchard, and the pears began to glow.",
    "tags": ["sample"],
    "context": [{"text": "You are a traveller.", "contextConfig": _cc(800)}],
    "ephemeralContext": [],
    "placeholders": [],
    "settings": {"parameters": {"temperature": 1}, "preset": "default", "model": "sample"},
    "lorebook": NAI_V3,
    "author": "bunzai",
    "storyContextConfig": _cc(0),
    "phraseBiasGroups": [],
    "bannedSequenceGroups": [{"sequences": [], "enabled": True}],
    "messageSettings": {},
}


def novelai() -> None:
    d = ROOT / "novelai"
    (d / "hollin.lorebook").write_bytes(pretty(NAI_BOOK))
    (d / "moonwell.v3.lorebook").write_bytes(pretty(NAI_V3, indent=4))
    (d / "hollin.naidata.png").write_bytes(
        image(12, 18, (120, 200, 120, 255), after_ihdr=text("naidata", b64json(NAI_BOOK)))
    )
    (d / "night-in-hollin.scenario").write_bytes(pretty(NAI_SCENARIO))


if __name__ == "__main__":
    pygmalion()
    backyard()
    novelai()
