"""Writes ``samples/voxta/`` (run from the project root: ``python tests/formats/voxta/make_voxta_samples.py``).

Stdlib only (zipfile, json, struct, zlib), independent of the codecs under test, and deterministic
(fixed member timestamps, fixed ids). The layout and keys are those of Voxta's own exports as public
descriptions of the package format give them; the content is original, written for bunzai.

- ``lantern-harbor.voxpkg``: a package (``package.json`` whose entry resource is its scenario) with
  two characters, each with a thumbnail and an avatar image, a memory book both characters use, a
  second book only the scenario names, and the scenario with its thumbnail;
- ``wren.voxpkg``: a single-character export (no ``package.json``) with a thumbnail and two avatar
  images, no books.

Members are deflated, JSON is written as .NET's indented serializer writes it (two spaces).
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples" / "voxta"
STAMP = (2024, 11, 2, 10, 30, 0)

PACKAGE_ID = "6f0c2a51-9d3e-4b7a-8e21-3c5d7a9b1e04"
MIRA = "2b8e4f61-0a7c-4d3e-9f12-6a4c8e0b2d57"
TOBIN = "c41a7d02-5e9b-4f6c-a8d3-1b7e9c2f4a60"
HARBOR_BOOK = "8d3f1a92-4c6e-4b0d-9a7f-2e5c8b1d3f46"
LOG_BOOK = "e5b2c8d1-7a3f-4e9c-b6d0-4f1a9c3e7b28"
SCENARIO = "9a7c3e15-2d8b-4f60-a1e4-7c3b5d9f0e82"
WREN = "5d1e9b38-6c2a-4e7f-8b40-0a9d3c6e1f75"
VOICE_SERVICE = "3e7a9c20-1b5d-4f8e-a6c3-9d2b4e0f7a18"


def chunk(ctype: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + ctype + data + struct.pack(">I", zlib.crc32(ctype + data))


def image(w: int, h: int, rgba: tuple[int, int, int, int]) -> bytes:
    """A solid-colour RGBA PNG."""
    rows = b"".join(b"\0" + bytes(rgba) * w for _ in range(h))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )


def pretty(tree: object) -> bytes:
    return json.dumps(tree, ensure_ascii=False, indent=2).encode("utf-8")


def voice(name: str, voice_id: str) -> list[dict[str, object]]:
    return [
        {
            "Voice": {
                "parameters": {"VoiceBackend": "kokoro", "Name": voice_id, "Speed": 1.0},
                "label": name,
            },
            "Service": {"ServiceName": "Kokoro", "ServiceId": VOICE_SERVICE},
        }
    ]


MIRA_JSON = {
    "$type": "character",
    "Id": MIRA,
    "Name": "Mira Holt",
    "Label": "Mira",
    "Version": "1.2.0",
    "PackageId": PACKAGE_ID,
    "Culture": "en-US",
    "Description": "Late twenties, salt-stiff oilskin coat, a brass spyglass on a cord.",
    "Personality": "dry + patient + stubborn about tides",
    "Profile": "{{ char }} is the harbourmaster of Saltmarsh. She knows every keel by its creak and"
    " owes favours to half the fishing fleet.",
    "Scenario": "{{ user }} arrives on the evening ferry while a fog bank rolls in.",
    "FirstMessage": "*Mira lowers the spyglass.* You picked a fine night to land, {{ user }}.",
    "AlternativeFirstMessages": ["Tide's turning. Grab a rope or get out of the way, {{ user }}."],
    "MessageExamples": "<START>\n{{ user }}: Is the lighthouse manned?\n{{ char }}: Tobin's up there."
    " Whether he's awake is another matter.",
    "SystemPrompt": "",
    "PostHistoryInstructions": "Keep {{ char }}'s replies short, like harbour radio.",
    "Context": "",
    "Instructions": "",
    "UserNameOverride": "",
    "UserDescriptionOverride": "",
    "Creator": "Sample Author",
    "CreatorNotes": "Pairs with Tobin; the scenario casts both.",
    "Tags": ["harbour", "slice of life", "fog"],
    "ExplicitContent": False,
    "ChatStyle": 0,
    "EnableThinkingSpeech": False,
    "NotifyUserAwayReturn": True,
    "TimeAware": False,
    "UseMemory": False,
    "MaxTokens": 0,
    "MaxSentences": 0,
    "SystemPromptOverrideType": 0,
    "TextToSpeech": voice("Kokoro: Bella", "af_bella"),
    "MemoryBooks": [HARBOR_BOOK],
    "DefaultScenarios": [{"ClientId": "Voxta.Talk", "ScenarioId": SCENARIO}],
    "Scripts": [],
    "Augmentations": [],
    "AppConfiguration": {
        "Voxta.Talk": {"view": "stage", "avatar": "", "background": "", "bgm": ""},
    },
    "Thumbnail": {"RandomizedETag": "mK3v0Q7zR2aLw9Xb", "ContentType": "image/png"},
    "DateCreated": "2024-10-05T14:20:31.412+00:00",
    "DateModified": "2024-11-02T10:28:07.9031422+00:00",
}

TOBIN_JSON = {
    "$type": "character",
    "Id": TOBIN,
    "Name": "Tobin Reyes",
    "Version": "1.0.0",
    "PackageId": PACKAGE_ID,
    "Culture": "en-US",
    "Description": "Sixty, white beard, knitted cap, ink on his fingers.",
    "Personality": "gentle + forgetful + sharp about weather",
    "Profile": "{{ char }} keeps the Saltmarsh light and writes the logbook in verse when nobody checks.",
    "Scenario": "",
    "FirstMessage": "Mind the stairs, {{ user }}. Two hundred and twelve of them.",
    "MessageExamples": "",
    "SystemPrompt": "",
    "PostHistoryInstructions": "",
    "Context": "The lamp must be lit by dusk.",
    "Instructions": "",
    "Creator": "Sample Author",
    "CreatorNotes": "",
    "Tags": ["harbour", "lighthouse"],
    "ExplicitContent": False,
    "ChatStyle": 0,
    "EnableThinkingSpeech": False,
    "NotifyUserAwayReturn": False,
    "TimeAware": True,
    "UseMemory": False,
    "MaxTokens": 0,
    "MaxSentences": 0,
    "SystemPromptOverrideType": 0,
    "TextToSpeech": voice("Kokoro: Adam", "am_adam"),
    "MemoryBooks": [HARBOR_BOOK],
    "DefaultScenarios": [],
    "Scripts": [{"Name": "index", "Content": 'import { chat } from "@voxta";\n// the lamp routine\n'}],
    "Augmentations": [],
    "Thumbnail": {"RandomizedETag": "p8Yc2Lx0sTq4Wn7e", "ContentType": "image/png"},
    "DateCreated": "0001-01-01T00:00:00+00:00",
    "DateModified": "2024-11-02T10:29:44.118+00:00",
}

HARBOR_JSON = {
    "$type": "book",
    "Id": HARBOR_BOOK,
    "PackageId": PACKAGE_ID,
    "Name": "Saltmarsh Harbor",
    "Version": "1.0.0",
    "Description": "Places and people of the harbour.",
    "ExplicitContent": False,
    "Creator": "Sample Author",
    "Items": [
        {
            "Id": "1f4c7a20-3b9e-4d61-8c05-7e2a9d4b6f13",
            "Keywords": ["ferry", "evening ferry"],
            "Text": "The ferry runs twice a day; the evening crossing is the one {{ user }} took.",
            "Weight": 10,
            "Deleted": False,
            "CreatedAt": "2024-10-05T14:22:10.001+00:00",
            "LastUpdated": "2024-10-05T14:22:10.001+00:00",
        },
        {
            "Id": "6a2e9d41-0c7b-4f38-9e16-3d8b5a2c7e90",
            "Keywords": ["Crooked Pier"],
            "Text": "The oldest pier; it groans at low tide.",
            "Weight": 5,
            "Deleted": False,
            "CreatedAt": "2024-10-05T14:23:55.310+00:00",
            "LastUpdated": "2024-10-12T09:01:02.774+00:00",
        },
        {
            "Id": "b7d3f8a2-9c41-4e5d-a0b6-1f9e3c7d5a24",
            "Keywords": ["smugglers"],
            "Text": "Rumours only. Mira denies everything.",
            "Weight": 0,
            "Deleted": True,
            "CreatedAt": "2024-10-06T08:00:00+00:00",
            "LastUpdated": "2024-10-20T19:45:12.5+00:00",
            "DeletedAt": "2024-10-20T19:45:12.5+00:00",
        },
    ],
    "DateCreated": "2024-10-05T14:21:48.660+00:00",
    "DateModified": "2024-10-20T19:45:12.5+00:00",
}

LOG_JSON = {
    "$type": "book",
    "Id": LOG_BOOK,
    "PackageId": PACKAGE_ID,
    "Name": "Harbor Logbook",
    "Version": "1.0.0",
    "Description": "",
    "ExplicitContent": False,
    "Creator": "Sample Author",
    "Items": [
        {
            "Id": "0d9b4e72-6f1a-4c38-b25e-8a3c7f1d9e06",
            "Keywords": ["logbook", "the log"],
            "Text": "Last entry: fog from the east, three boats still out.",
            "Weight": 10,
            "Deleted": False,
            "CreatedAt": "2024-10-30T21:00:00+00:00",
            "LastUpdated": "2024-10-30T21:00:00+00:00",
        }
    ],
    "DateCreated": "2024-10-30T20:58:14.203+00:00",
    "DateModified": "2024-10-30T21:00:00+00:00",
}

SCENARIO_JSON = {
    "$type": "scenario",
    "Id": SCENARIO,
    "Name": "Fog Night at Saltmarsh",
    "Version": "1.0.0",
    "PackageId": PACKAGE_ID,
    "Client": "Voxta.Talk",
    "Creator": "Sample Author",
    "Description": "Help Mira and Tobin bring the last boats home.",
    "ExplicitContent": False,
    "Template": "{{ user }} is in Saltmarsh harbour with {{ scenario_chars.main }} and"
    " {{ scenario_chars.keeper }}. Fog is coming in.",
    "Messages": "",
    "ChatFlow": 0,
    "ChatStyle": 1,
    "SystemPromptOverrideType": 0,
    "Roles": [
        {
            "Name": "main",
            "Description": "The harbourmaster",
            "DefaultCharacterId": MIRA,
            "EnabledOnStart": True,
        },
        {
            "Name": "keeper",
            "Description": "The lighthouse keeper",
            "DefaultCharacterId": TOBIN,
            "EnabledOnStart": False,
        },
    ],
    "SharedScripts": [
        {
            "Name": "index",
            "Content": 'import { chat } from "@voxta";\n\nchat.addEventListener("start", () => {\n'
            '  chat.setFlag("fog");\n});\n',
        }
    ],
    "Events": [
        {
            "Name": "lamp_lit",
            "Description": "Light the lamp",
            "Timing": 4,
            "Disabled": False,
            "Once": True,
            "FlagsFilter": "fog",
            "Effect": {"SetFlags": ["!fog", "lamp"], "MaxSentences": 0, "MaxTokens": 0},
        }
    ],
    "Actions": [],
    "Contexts": [
        {"Name": "fog", "Text": "Visibility is a few metres.", "FlagsFilter": "fog", "Disabled": False}
    ],
    "MemoryBooks": [HARBOR_BOOK, LOG_BOOK],
    "Thumbnail": {"ETag": 1, "ContentType": "image/png"},
    "DateCreated": "2024-10-31T05:44:59.144+00:00",
    "DateModified": "2024-11-02T10:30:00+00:00",
}

PACKAGE_JSON = {
    "$type": "package",
    "Id": PACKAGE_ID,
    "Name": "Lantern Harbor",
    "Version": "1.2.0",
    "Description": "Two harbour characters, their lore and a foggy evening.",
    "Creator": "Sample Author",
    "ExplicitContent": False,
    "EntryResource": {"Kind": 3, "Id": SCENARIO},
    "ThumbnailResource": {"Kind": 3, "Id": SCENARIO},
    "DateCreated": "2024-10-05T14:19:02.5+00:00",
    "DateModified": "2024-11-02T10:30:00+00:00",
}

WREN_JSON = {
    "$type": "character",
    "Id": WREN,
    "Name": "Wren",
    "Version": "1.0.0",
    "Culture": "en-GB",
    "Description": "A small courier in a too-large rain cape.",
    "Personality": "quick, nosy, loyal",
    "Profile": "{{char}} delivers letters across the canal quarter and reads none of them. Mostly.",
    "Scenario": "",
    "FirstMessage": "Letter for {{user}}! Sign here. No, the other here.",
    "MessageExamples": "",
    "SystemPrompt": "",
    "PostHistoryInstructions": "",
    "Context": "",
    "Instructions": "",
    "Creator": "",
    "CreatorNotes": "",
    "Tags": [],
    "ExplicitContent": False,
    "ChatStyle": 0,
    "EnableThinkingSpeech": True,
    "NotifyUserAwayReturn": False,
    "TimeAware": False,
    "UseMemory": False,
    "MaxTokens": 0,
    "MaxSentences": 0,
    "SystemPromptOverrideType": 0,
    "TextToSpeech": [],
    "MemoryBooks": [],
    "DefaultScenarios": [],
    "Scripts": [],
    "Augmentations": [],
    "Thumbnail": {"RandomizedETag": "Wr3nQ0x7Ls2Dk9Fa", "ContentType": "image/png"},
    "DateCreated": "2024-09-14T08:12:45.25+00:00",
    "DateModified": "2024-09-14T08:40:02.003+00:00",
}


def write_zip(path: Path, members: list[tuple[str, bytes]]) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=STAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 0
            z.writestr(info, data)
    path.write_bytes(buf.getvalue())


def lantern_harbor() -> list[tuple[str, bytes]]:
    return [
        ("package.json", pretty(PACKAGE_JSON)),
        (f"Characters/{MIRA}/character.json", pretty(MIRA_JSON)),
        (f"Characters/{MIRA}/thumbnail.png", image(8, 8, (40, 90, 140, 255))),
        (f"Characters/{MIRA}/Assets/Avatars/Default/Smile_Idle_01.png", image(8, 8, (60, 130, 180, 255))),
        (f"Characters/{TOBIN}/character.json", pretty(TOBIN_JSON)),
        (f"Characters/{TOBIN}/thumbnail.png", image(8, 8, (170, 120, 40, 255))),
        (
            f"Characters/{TOBIN}/Assets/Avatars/Default/Neutral_Talking_01.png",
            image(8, 8, (200, 150, 70, 255)),
        ),
        (f"Books/{HARBOR_BOOK}/book.json", pretty(HARBOR_JSON)),
        (f"Books/{LOG_BOOK}/book.json", pretty(LOG_JSON)),
        (f"Scenarios/{SCENARIO}/scenario.json", pretty(SCENARIO_JSON)),
        (f"Scenarios/{SCENARIO}/thumbnail.png", image(8, 4, (90, 100, 110, 255))),
    ]


def wren() -> list[tuple[str, bytes]]:
    return [
        (f"Characters/{WREN}/character.json", pretty(WREN_JSON)),
        (f"Characters/{WREN}/thumbnail.png", image(8, 8, (120, 60, 150, 255))),
        (f"Characters/{WREN}/Assets/Avatars/Default/Neutral_Idle_01.png", image(8, 8, (140, 80, 170, 255))),
        (f"Characters/{WREN}/Assets/Avatars/Default/Smile_Talking_01.png", image(8, 8, (160, 100, 190, 255))),
    ]


if __name__ == "__main__":
    SAMPLES.mkdir(parents=True, exist_ok=True)
    write_zip(SAMPLES / "lantern-harbor.voxpkg", lantern_harbor())
    write_zip(SAMPLES / "wren.voxpkg", wren())
