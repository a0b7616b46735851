"""Builds samples/risu/ from the content below (all of it written for bunzai, none copied).

    .venv/bin/python tests/formats/risu/make_risu_samples.py

The binary samples are made with bunzai's own writers (RPack container, .risup chain, PNG text
chunks, deterministic zip), laid out the way RisuAI lays them out (formats/risu.md). A test checks
that running this again gives the committed bytes.
"""

from __future__ import annotations

import struct
import sys
import zlib
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[3]
OUT = ROOT / "samples" / "risu"
F = "\uf000folder:"

HARBOR = "7d3c2a10-4b5e-4f60-8a71-0c9d2e3f4a5b"
PEOPLE = "9e41b7c2-1d3a-4e5f-9a6b-7c8d9e0f1a2b"


def lorebook_rows() -> list[dict[str, Any]]:
    base = {"mode": "normal", "alwaysActive": False, "secondkey": "", "selective": False, "bookVersion": 2}
    return [
        {
            "key": F + HARBOR,
            "comment": "Harbor District",
            "content": "",
            "mode": "folder",
            "insertorder": 100,
            "alwaysActive": False,
            "secondkey": "",
            "selective": False,
            "bookVersion": 2,
        },
        {
            **base,
            "key": "lighthouse, lantern tower",
            "comment": "The Lighthouse",
            "content": "@@depth 2\n@@role system\nThe lighthouse of Lantern Harbor burns green oil; "
            "its keeper, Oswin, logs every ship by the colour of its sails.",
            "insertorder": 120,
            "folder": F + HARBOR,
            "useRegex": False,
            "id": "b6f0c1d2-0001-4a00-8000-000000000001",
        },
        {
            **base,
            "key": "/harbou?r ?master/i",
            "comment": "Harbormaster",
            "content": "The harbormaster, Tilde Varga, settles berth disputes with a brass coin toss.",
            "insertorder": 110,
            "folder": F + HARBOR,
            "useRegex": True,
        },
        {
            # a third-party copy lost the U+F000 on this folder key; its child still has it
            "key": "folder:" + PEOPLE,
            "comment": "People",
            "content": "",
            "mode": "folder",
            "insertorder": 200,
            "alwaysActive": False,
            "secondkey": "",
            "selective": False,
            "bookVersion": 2,
        },
        {
            **base,
            "key": "Oswin",
            "comment": "Oswin",
            "content": "Oswin is sixty, half-deaf from the foghorn, and trusts gulls more than sailors.",
            "insertorder": 100,
            "folder": F + PEOPLE,
            "useRegex": False,
            "id": "dup-1",
            "activationPercent": 40,
            "selective": True,
            "secondkey": "storm, rain",
        },
        {
            **base,
            "key": "Tilde",
            "comment": "Tilde",
            "content": "@@exclude_keys Oswin\nTilde Varga keeps a ledger in a cipher only her cat can read.",
            "insertorder": 100,
            "folder": "folder:" + PEOPLE,
            "useRegex": False,
            "id": "dup-1",
            "extentions": {"risu_case_sensitive": True},
            "loreCache": None,
        },
        {
            **base,
            "key": "",
            "comment": "Tide table",
            "content": "High tide at dawn and dusk; the harbor chain is raised at night.",
            "insertorder": 50,
            "alwaysActive": True,
        },
        {
            # a chat-local stub pointing at the Oswin entry (Risu's "child" mode)
            "key": "Oswin",
            "comment": "",
            "content": "",
            "mode": "child",
            "insertorder": 100,
            "alwaysActive": False,
            "secondkey": "",
            "selective": False,
            "id": "dup-1",
        },
    ]


def regex_rows() -> list[dict[str, Any]]:
    return [
        {"comment": "Trim user shouting", "in": "!{2,}", "out": "!", "type": "editinput", "ableFlag": False},
        {
            "comment": "Bell sound",
            "in": "\\*ding\\*",
            "out": "🔔",
            "type": "editoutput",
            "ableFlag": True,
            "flag": "gi<order 5>",
        },
        {
            "comment": "Drop OOC from prompt",
            "in": "\\(OOC:[^)]*\\)",
            "out": "",
            "type": "editprocess",
            "ableFlag": False,
        },
        {
            "comment": "Harbor names bold",
            "in": "(Oswin|Tilde)",
            "out": "**$1**",
            "type": "editdisplay",
            "ableFlag": True,
            "flag": "g<cbs,move_top>",
        },
        {
            "comment": "After translation",
            "in": "harbour",
            "out": "harbor",
            "type": "edittrans",
            "ableFlag": False,
        },
        {"comment": "Old rule, off", "in": "foo", "out": "bar", "type": "disabled", "ableFlag": False},
    ]


def png_image(w: int = 4, h: int = 4, rgb: tuple[int, int, int] = (40, 90, 140)) -> bytes:
    """A small opaque RGB PNG, written chunk by chunk (no imaging library)."""
    from bunzai_codecs.core import png

    rows = b"".join(b"\x00" + bytes(rgb) * w for _ in range(h))
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return png.build(
        [png.Chunk(b"IHDR", ihdr), png.Chunk(b"IDAT", zlib.compress(rows, 9)), png.Chunk(b"IEND", b"")]
    )


def webp_image() -> bytes:
    """Bytes that start like a WebP file (RIFF....WEBP VP8L), as Risu writes under .png names."""
    payload = b"VP8L" + struct.pack("<I", 5) + b"\x2f\x00\x00\x00\x00" + b"\x00"
    return b"RIFF" + struct.pack("<I", 4 + len(payload)) + b"WEBP" + payload


def module_tree() -> dict[str, Any]:
    return {
        "module": {
            "name": "Lantern Harbor Module",
            "description": "Lore, display rules and a bell trigger for Lantern Harbor.",
            "id": "4f1e9c3a-5b6d-4c7e-8f90-a1b2c3d4e5f6",
            "lorebook": lorebook_rows()[:3],
            "regex": regex_rows()[1:4],
            "trigger": [
                {
                    "comment": "Ring the bell",
                    "type": "manual",
                    "conditions": [],
                    "effect": [{"type": "v2Header", "code": "", "indent": 0}],
                },
                {
                    "comment": "Lua greeter",
                    "type": "start",
                    "conditions": [],
                    "effect": [
                        {"type": "triggerlua", "code": "-- data only, never run\nlocal tide = 'high'\n"}
                    ],
                },
            ],
            "lowLevelAccess": False,
            "hideIcon": False,
            "namespace": "lantern-harbor",
            "customModuleToggle": "=Harbor=group\nharbor_weather=Weather=select=Clear,Fog,Storm\n"
            "harbor_bell=Ring the bell on arrival\n=Harbor=groupEnd",
            "assets": [["buoy", "", "png"]],
        },
        "type": "risuModule",
    }


def module_assets() -> list[bytes]:
    return [png_image(2, 2, (200, 60, 30))]


def preset_tree() -> dict[str, Any]:
    return {
        "name": "Harbor Night Shift",
        "apiType": "gpt35",
        "openAIKey": "",
        "mainPrompt": "",
        "jailbreak": "",
        "globalNote": "",
        "temperature": 85,
        "maxContext": 16000,
        "maxResponse": 800,
        "frequencyPenalty": 20,
        "PresensePenalty": -1000,
        "formatingOrder": [
            "main",
            "description",
            "personaPrompt",
            "chats",
            "lastChat",
            "jailbreak",
            "lorebook",
        ],
        "aiModel": "openrouter",
        "subModel": "openrouter",
        "promptTemplate": [
            {
                "type": "plain",
                "text": "You narrate a slow, foggy harbor town at night.",
                "role": "system",
                "type2": "main",
                "name": "Main",
            },
            {"type": "persona", "innerFormat": "<user>{{slot}}</user>"},
            {"type": "description", "innerFormat": "{{slot}}\n"},
            {"type": "lorebook"},
            {"type": "chat", "rangeStart": 0, "rangeEnd": -3, "name": "Older chat"},
            {"type": "cache", "name": "Cache point", "depth": 1, "role": "all"},
            {"type": "chat", "rangeStart": -3, "rangeEnd": "end"},
            {"type": "authornote", "innerFormat": None, "defaultText": ""},
            {
                "type": "jailbreak",
                "text": "Keep replies under {{getglobalvar::toggle_length}} paragraphs.",
                "role": "user",
                "type2": "normal",
            },
            {"type": "plain", "text": "Understood.", "role": "bot", "type2": "normal", "name": "Ack"},
        ],
        "top_p": 0.95,
        "top_k": -1000,
        "min_p": -1000,
        "top_a": -1000,
        "repetition_penalty": -1000,
        "promptSettings": {
            "assistantPrefill": "",
            "postEndInnerFormat": "",
            "sendChatAsSystem": False,
            "sendName": False,
            "utilOverride": False,
            "maxThoughtTagDepth": -1,
        },
        "customPromptTemplateToggle": "=Style=divider\nlength=Reply length=select=Short,Medium,Long\n"
        "narration=Third-person narration\nnickname=Call the user=text",
        "templateDefaultVariables": "",
        "moduleIntergration": "",
        "regex": regex_rows()[:2],
        "reasonEffort": 1,
        "thinkingTokens": -1000,
        "verbosity": 1,
        "seperateModels": None,
        "proxyKey": "",
    }


#: an 8x8 baseline JPEG (made once for this sample; the front of the .jpeg hybrid card)
JPEG_8X8 = (
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDABALDA4MChAODQ4SERATGCgaGBYWGDEjJR0oOjM9PDkzODdASFxOQERXRTc4UG1RV19iZ2hn"
    "Pk1xeXBkeFxlZ2P/2wBDARESEhgVGC8aGi9jQjhCY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2Nj"
    "Y2P/wAARCAAIAAgDASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQID"
    "AAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlq"
    "c3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3"
    "+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEI"
    "FEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImK"
    "kpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwDn"
    "KKKK9A5j/9k="
)
#: a 4x4 WebP (made once): what Risu's image compression writes under a .png name
WEBP_4X4 = "UklGRjoAAABXRUJQVlA4IC4AAACwAQCdASoEAAQAAgA0JaACdLoABGaAAP7n5L/6aR/xpH/GkfMW/ztbDEE8AAAA"

CHAR = "Oswin the Lamplighter"


def charx_assets() -> list[tuple[dict[str, Any], bytes]]:
    """(card asset row, bytes) in card order; the paths follow Risu's writer (duplicate names get _1)."""
    import base64

    webp = base64.b64decode(WEBP_4X4)
    rows = [
        ("icon", "lamp", "assets/icon/image/lamp.png", png_image(2, 2, (250, 200, 60))),
        ("icon", "lamp", "assets/icon/image/lamp_1.png", webp),  # same name, second file
        ("x-risu-asset", "harbor_map", "assets/other/image/harbor_map.png", webp),
        ("emotion", "smile", "assets/emotion/image/smile.png", webp),
        ("icon", "main", "assets/icon/image/main.png", png_image(4, 4, (30, 60, 120))),
    ]
    return [({"type": t, "uri": "embeded://" + path, "name": n, "ext": "png"}, b) for t, n, path, b in rows]


def charx_module() -> dict[str, Any]:
    m = module_tree()["module"]
    return {
        "module": {
            "name": f"{CHAR} Module",
            "description": f"Module for {CHAR}",
            "id": "0b7e6a52-3c1d-4f8e-9a20-5d6c7b8a9e01",
            "trigger": m["trigger"],
            "regex": m["regex"],
            "lorebook": lorebook_rows(),
        },
        "type": "risuModule",
    }


def charx_card() -> dict[str, Any]:
    from bunzai_codecs.formats.risu import lore

    settings = {"scan_depth": 4, "token_budget": 2000, "recursive_scanning": False}
    settings["extensions"] = {"risu_fullWordMatching": False}
    return {
        "spec": "chara_card_v3",
        "spec_version": "3.0",
        "data": {
            "name": CHAR,
            "description": "{{char}} tends the lamps of Lantern Harbor and talks to them like old friends.",
            "personality": "patient, dry-humoured, superstitious about fog",
            "scenario": "A fog bank rolls in while {{user}} waits for the night ferry.",
            "first_mes": "*Oswin lifts his lantern.* Ferry's late again. Fog ate it, I reckon.",
            "mes_example": "<START>\n{{user}}: Is it safe?\n{{char}}: Safe as a lamp in a storm.",
            "creator_notes": "Sample card written for bunzai's tests.",
            "system_prompt": "",
            "post_history_instructions": "",
            "alternate_greetings": ["*The foghorn sounds twice.* That means trouble, or a wedding."],
            "character_book": lore.character_book(lorebook_rows(), settings),
            "tags": ["harbor", "slice of life"],
            "creator": "bunzai",
            "character_version": "1.2",
            "extensions": {
                "risuai": {
                    "bias": [["fog", 5]],
                    "viewScreen": "emotion",
                    "utilityBot": False,
                    "sdData": [["always", "old man, lantern"], ["negative", ""]],
                    "backgroundHTML": "<div class='fog'></div>",
                    "additionalText": "",
                    "virtualscript": "",
                    "largePortrait": True,
                    "lorePlus": False,
                    "inlayViewScreen": False,
                    "newGenData": {
                        "prompt": "",
                        "negative": "",
                        "instructions": "",
                        "emotionInstructions": "",
                    },
                    "vits": {},
                    "lowLevelAccess": False,
                    "defaultVariables": "fog=1\nferry_late=0",
                    "prebuiltAssetCommand": "",
                    "prebuiltAssetExclude": [],
                    "prebuiltAssetStyle": "",
                },
                "depth_prompt": {"depth": 0, "prompt": ""},
            },
            "group_only_greetings": [],
            "nickname": "Oz",
            "source": [],
            "creation_date": 1745411957356,  # Risu: milliseconds
            "modification_date": 1772896582,  # Risu: seconds
            "assets": [row for row, _ in charx_assets()],
        },
    }


def charx_members() -> list[tuple[str, bytes]]:
    """Risu's write order: x_meta then the file for each asset, module.risum, card.json last."""
    from bunzai_codecs.formats.risu import charx, jsformat, risum

    out: list[tuple[str, bytes]] = []
    seen: set[str] = set()
    for row, data in charx_assets():
        meta = f"x_meta/{row['name']}.json"
        if meta in seen:
            meta = f"x_meta/{row['name']}_1.json"
        seen.add(meta)
        out.append((meta, charx.x_meta(data)))
        out.append((row["uri"][len("embeded://") :], data))
    out.append(("module.risum", risum.pack_module(charx_module(), [], "indent2")))
    out.append(("card.json", jsformat.stringify(charx_card(), 4).encode("utf-8")))
    return out


def persona_payload() -> dict[str, Any]:
    return {
        "name": "Mira Holt",
        "personaPrompt": "{{user}} is Mira Holt, a ferry pilot who knows every sandbar by its sound.",
        "note": "Night-shift ferry pilot",
    }


def build() -> dict[str, bytes]:
    import base64

    from bunzai_codecs.core import png
    from bunzai_codecs.formats.risu import jsformat, risum, risup

    files: dict[str, bytes] = {}
    files["harbor_lorebook_export.json"] = orjson.dumps({"type": "risu", "ver": 1, "data": lorebook_rows()})
    files["harbor_regexscript_export.json"] = orjson.dumps({"type": "regex", "data": regex_rows()})
    files["lantern_harbor.risum"] = risum.pack_module(module_tree(), module_assets(), "indent2")
    preset = preset_tree()
    files["harbor_night_shift_preset.json"] = jsformat.stringify(preset, 2).encode("utf-8")
    # Risu's msgpack carries JavaScript undefined; so does the sample
    files["harbor_night_shift_preset.risup"] = risup.write_preset(
        {**preset, "localStopStrings": jsformat.UNDEFINED}
    )
    from bunzai_codecs.core.archive import ZIP_DEFLATED, ZIP_STORED, ZipMemberSpec, write_zip

    members = [
        ZipMemberSpec(n, b, ZIP_DEFLATED if n.endswith((".json", ".risum")) else ZIP_STORED)
        for n, b in charx_members()
    ]
    zipped = write_zip(members)
    files["oswin_the_lamplighter.charx"] = zipped
    # the hybrid: a JPEG with the zip appended, offsets counted from the zip's own start (fflate)
    files["oswin_the_lamplighter.jpeg"] = base64.b64decode(JPEG_8X8) + zipped
    payload = base64.b64encode(orjson.dumps(persona_payload()))
    files["mira_holt_persona.png"] = png.replace_text(
        png_image(3, 3, (90, 140, 200)), remove=[], add=[png.make_text_chunk("persona", payload)]
    )
    return files


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, data in build().items():
        (OUT / name).write_bytes(data)
        print(OUT / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
