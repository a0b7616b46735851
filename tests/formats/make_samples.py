"""Writes samples/{pygmalion,backyard,novelai,kobold}/ from the facts in the formats notes, stdlib only.

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


def _new_entry(entry_id: str, updated: int, *, v6: bool = True) -> dict[str, object]:
    """A blank entry as NovelAI's editor makes one (category subcontext and defaults, a story's
    lore defaults); version 6 adds ``advancedConditions``."""
    entry: dict[str, object] = {
        "text": "",
        "contextConfig": _cc(400),
        "lastUpdatedAt": updated,
        "displayName": "New Lorebook Entry",
        "id": entry_id,
        "keys": [],
        "searchRange": 1000,
        "enabled": True,
        "forceActivation": False,
        "keyRelative": False,
        "nonStoryActivatable": False,
        "category": "",
        "loreBiasGroups": _bias(),
    }
    return {**entry, "advancedConditions": []} if v6 else entry


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
            "subcontextSettings": _new_entry("5d0c1f4e-2b7a-4f09-8d3e-61a2c4b9e0a1", 1710000000000),
            "useCategoryDefaults": False,
            "categoryDefaults": _new_entry("5d0c1f4e-2b7a-4f09-8d3e-61a2c4b9e0a2", 1710000000000),
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


# -- NovelAI story (.story) -----------------------------------------------------------------------
# NovelAI's story container as its web client serialises it (JSON.stringify of StoryContainer:
# metadata dates as epoch milliseconds, the story text as ``content.document``, base64 of msgpack).
# The document below is a small msgpack map written here by hand: bunzai keeps it opaque, so its
# inner structure is a placeholder, not NovelAI's editor document.


def _msgpack_str(v: str) -> bytes:
    b = v.encode()
    assert len(b) < 256
    return (bytes([0xA0 | len(b)]) if len(b) < 32 else b"\xd9" + bytes([len(b)])) + b


def _msgpack_map(pairs: list[tuple[str, str]]) -> bytes:
    return bytes([0x80 | len(pairs)]) + b"".join(_msgpack_str(k) + _msgpack_str(v) for k, v in pairs)


STORY_DOCUMENT = base64.b64encode(
    _msgpack_map(
        [("text", "The lantern road ran north from Hollin, lit every mile by a keeper."), ("step", "3")]
    )
).decode()


def _ctx(priority: int, position: int, reserved: int = 0, trim: str = "trimBottom") -> dict[str, object]:
    return {
        **_cc(priority),
        "tokenBudget": 2048,
        "reservedTokens": reserved,
        "trimDirection": trim,
        "insertionPosition": position,
    }


NAI_STORY_BOOK = {
    "lorebookVersion": 5,
    "entries": [
        {
            "text": "Each lantern on the road is tended by a keeper who lives in the milestone beside it.",
            "contextConfig": _cc(400),
            "lastUpdatedAt": 1712000000000,
            "displayName": "Lantern keepers",
            "id": "6c1e2f30-4a5b-4c6d-8e7f-901a2b3c4d01",
            "keys": ["lantern", "keeper", "milestone"],
            "searchRange": 1000,
            "enabled": True,
            "forceActivation": False,
            "keyRelative": False,
            "nonStoryActivatable": False,
            "category": "6c1e2f30-4a5b-4c6d-8e7f-901a2b3c4dc1",
            "loreBiasGroups": _bias(),
        },
        {
            "text": "Fog on the road means the keepers are asleep.",
            "contextConfig": _cc(300),
            "lastUpdatedAt": 1712000000500,
            "displayName": "Fog",
            "id": "6c1e2f30-4a5b-4c6d-8e7f-901a2b3c4d02",
            "keys": ["/\\bfog(gy)?\\b/i"],
            "searchRange": 2000,
            "enabled": True,
            "forceActivation": False,
            "keyRelative": False,
            "nonStoryActivatable": False,
            "category": "",
            "loreBiasGroups": _bias("fog"),
        },
    ],
    "settings": {"orderByKeyLocations": False},
    "categories": [
        {
            "name": "The road",
            "id": "6c1e2f30-4a5b-4c6d-8e7f-901a2b3c4dc1",
            "enabled": True,
            "createSubcontext": False,
            "subcontextSettings": {"text": "", "contextConfig": _cc(400)},
            "useCategoryDefaults": False,
            "categoryDefaults": {"text": "", "contextConfig": _cc(400)},
            "categoryBiasGroups": _bias(),
        }
    ],
}

NAI_STORY = {
    "storyContainerVersion": 1,
    "metadata": {
        "storyMetadataVersion": 1,
        "id": "0f3d6a52-8c41-4e7b-9a15-2e6d8c4b1a77",
        "remoteId": "",
        "remoteStoryId": "",
        "title": "The Lantern Road",
        "description": "A short sample story written for bunzai's tests.",
        "textPreview": "The lantern road ran north from Hollin",
        "favorite": False,
        "tags": ["sample", "travel"],
        "createdAt": 1712000000000,
        "lastUpdatedAt": 1712000900000,
        "isModified": False,
        "hasDocument": True,
    },
    "content": {
        "storyContentVersion": 6,
        "settings": {
            "parameters": {"textGenerationSettingsVersion": 3, "temperature": 1.05, "max_length": 40},
            "preset": "sample-preset",
            "trimResponses": True,
            "banBrackets": True,
            "prefix": "vanilla",
            "model": "sample-model",
        },
        "document": STORY_DOCUMENT,
        "context": [
            {
                "text": "The traveller is Ada, a cartographer mapping the lantern road.",
                "contextConfig": _ctx(800, 0),
            },
            {
                "text": "[ Style: quiet, observant, a little melancholy ]",
                "contextConfig": _ctx(-400, -4, 2048),
            },
        ],
        "lorebook": NAI_STORY_BOOK,
        "storyContextConfig": _ctx(0, -1, 512, "trimTop"),
        "ephemeralContext": [
            {
                "text": "A storm gathers over the hills.",
                "contextConfig": _ctx(-10000, -2, 2048, "doNotTrim"),
                "startingStep": 4,
                "delay": 0,
                "duration": 2,
                "repeat": False,
                "reverse": False,
            }
        ],
        "contextDefaults": {
            "ephemeralDefaults": [
                {
                    "text": "",
                    "contextConfig": _ctx(-10000, -2, 2048, "doNotTrim"),
                    "startingStep": 1,
                    "delay": 0,
                    "duration": 1,
                    "repeat": False,
                    "reverse": False,
                }
            ],
            "loreDefaults": [_new_entry("6c1e2f30-4a5b-4c6d-8e7f-901a2b3c4dd0", 1712000000000, v6=False)],
        },
        "settingsDirty": False,
        "didGenerate": True,
        "phraseBiasGroups": _bias(),
        "bannedSequenceGroups": [{"sequences": [], "enabled": True}],
    },
}


def novelai_story() -> None:
    (ROOT / "novelai" / "lantern-road.story").write_bytes(compact(NAI_STORY))


# -- KoboldAI saves and world info export ---------------------------------------------------------
# KoboldAI Lite saves with JSON.stringify (compact; its generate_savefile key order), the KoboldAI
# client with Python's json.dumps(save, indent=3) (ASCII escapes). A Lite world info entry has
# key, keysecondary, keyanti, content, comment, folder, selective, constant, probability (its UI
# stores the select's text), wigroup, widisabled; the client's has the first seven, folder a uid.


def compact(tree: object) -> bytes:
    """JSON.stringify(tree): no spaces, no ASCII escapes (for the integers, strings and simple
    floats these samples hold)."""
    return json.dumps(tree, ensure_ascii=False, separators=(",", ":")).encode()


def _lite_wi(key: str, content: str, comment: str, **kw: object) -> dict[str, object]:
    e: dict[str, object] = {
        "key": key,
        "keysecondary": "",
        "keyanti": "",
        "content": content,
        "comment": comment,
        "folder": None,
        "selective": False,
        "constant": False,
        "probability": "100",
        "wigroup": "",
        "widisabled": False,
    }
    e.update(kw)
    return e


LITE_WI = [
    _lite_wi(
        "harbor watch, watchtower",
        "The harbor watch keeps a tower at the mouth of the bay; its bell rings for every ship.",
        "Harbor watch",
    ),
    _lite_wi(
        "Captain Irel",
        "Captain Irel commands the watch. She distrusts smugglers and loves bad puns.",
        "Irel",
        keysecondary="night, smuggler",
        selective=True,
        wigroup="People",
    ),
    _lite_wi(
        "tide",
        "At low tide the old causeway appears.",
        "Causeway",
        keyanti="storm",
        selective=True,
        probability="50",
        wigroup="Places",
    ),
    _lite_wi("", "Salt air, gulls and tar: the harbor smells of work.", "", constant=True, wigroup="Places"),
    _lite_wi("bell", "The bell was cast from a sunken ship's anchor.", "Old bell", widisabled=True),
]

LITE_SETTINGS = {
    "my_api_key": "0000000000",
    "home_cluster": "https://example.invalid",
    "saved_oai_key": "",
    "max_context_length": 4096,
    "max_length": 200,
    "temperature": 0.7,
    "rep_pen": 1.07,
    "top_p": 0.92,
    "case_sensitive_wi": False,
    "opmode": 2,
    "modelhashes": [],
}

LITE_SAVE = {
    "gamestarted": True,
    "prompt": "The fog lifted off the bay just as the watch bell began to ring.",
    "memory": "[The story follows Dell, a new recruit of the harbor watch.]",
    "authorsnote": "Keep the tone light; the watch are friends.",
    "anotetemplate": "[Author's note: <|>]",
    "actions": [" Dell ran up the tower stairs two at a time.", ' "Ship!" someone shouted below.'],
    "actions_metadata": {
        "0": {"Selected Text": "", "Alternative Text": []},
        "1": {"Selected Text": "", "Alternative Text": []},
    },
    "worldinfo": LITE_WI,
    "wifolders_d": {},
    "wifolders_l": [],
    "anotestr": 320,
    "wisearchdepth": "0",
    "wiinsertlocation": 0,
    "personal_notes": "Remember: the causeway scene next.",
    "newlineaftermemory": True,
    "documentdb_provider": 0,
    "documentdb_searchhistory": 0,
    "documentdb_numresults": 3,
    "documentdb_searchrange": 300,
    "documentdb_chunksize": 800,
    "documentdb_data": "",
    "altbranches": [],
    "savedsettings": LITE_SETTINGS,
    "savedaestheticsettings": None,
}

LITE_NO_WI = {
    "gamestarted": True,
    "prompt": "The night ferry left on time, which had never happened before.",
    "memory": "Passengers: Oona (a retired smuggler) and her nephew Tam.",
    "authorsnote": "",
    "anotetemplate": "[Author's note: <|>]",
    "actions": [" Tam checked the tickets twice."],
    "actions_metadata": {"0": {"Selected Text": "", "Alternative Text": []}},
    "worldinfo": [],
    "wifolders_d": {},
    "wifolders_l": [],
    "anotestr": 320,
    "wisearchdepth": 0,
    "wiinsertlocation": 0,
    "personal_notes": "",
    "newlineaftermemory": True,
    "savedsettings": None,
    "savedaestheticsettings": None,
}

CLIENT_SAVE = {
    "gamestarted": True,
    "prompt": "Saltmarsh wakes slowly. The ferryman\u2019s horn sounds twice across the reeds.",
    "memory": "You are Wren, the village apothecary of Saltmarsh.",
    "authorsnote": "Describe smells and weather.",
    "anotetemplate": "[Author's note: <|>]",
    "actions": [" You unlock the shop.", " A heron watches from the roof."],
    "actions_metadata": {
        "0": {"Selected Text": " You unlock the shop.", "Alternative Text": []},
        "1": {"Selected Text": " A heron watches from the roof.", "Alternative Text": []},
    },
    "worldinfo": [
        {
            "key": "ferryman, Old Pell",
            "keysecondary": "",
            "content": "Old Pell rows the ferry and hums sea shanties off key.",
            "comment": "Ferryman",
            "folder": 1204933,
            "selective": False,
            "constant": False,
        },
        {
            "key": "reeds, marsh",
            "keysecondary": "night, lantern",
            "content": "Lights in the reeds at night are marsh spirits \u2014 or smugglers.",
            "comment": "",
            "folder": 1204933,
            "selective": True,
            "constant": False,
        },
        {
            "key": "apothecary",
            "keysecondary": "",
            "content": "Wren's shop sells salves, teas and one very old bottle nobody may open.",
            "comment": "The shop",
            "folder": None,
            "selective": False,
            "constant": True,
        },
    ],
    "wifolders_d": {"1204933": {"name": "Villagers", "collapsed": False}},
    "wifolders_l": [1204933],
}


def kobold() -> None:
    d = ROOT / "kobold"
    d.mkdir(exist_ok=True)
    (d / "harbor-watch.lite.json").write_bytes(compact(LITE_SAVE))
    (d / "night-ferry.lite.json").write_bytes(compact(LITE_NO_WI))
    (d / "saltmarsh.client.json").write_bytes(json.dumps(CLIENT_SAVE, indent=3).encode())
    (d / "world_info.json").write_bytes(compact(LITE_WI))


if __name__ == "__main__":
    pygmalion()
    backyard()
    novelai()
    novelai_story()
    kobold()
