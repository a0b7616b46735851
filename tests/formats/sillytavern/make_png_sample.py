"""Builds samples/sillytavern/tidepool.png: a 16x16 generated image carrying a card the way
SillyTavern writes one (tEXt `chara` = base64 JSON labelled V2, tEXt `ccv3` = the same JSON labelled
V3, both just before IEND), plus an unrelated tEXt `Software` and zTXt `Comment` chunk that a card
export must keep. Standard library only, so the sample does not depend on the code it tests.

    python tests/formats/sillytavern/make_png_sample.py
"""

import base64
import json
import struct
import zlib
from pathlib import Path

CARD = {
    "name": "Tidepool",
    "description": "{{char}} is a hermit crab who collects shells and gossip in equal measure.",
    "personality": "nosy, generous",
    "scenario": "Low tide, a rock pool, {{user}} peering in.",
    "first_mes": "*A claw waves.* \"Don't block the light, it's rude.\"",
    "mes_example": "",
    "creatorcomment": "",
    "avatar": "none",
    "talkativeness": "0.7",
    "fav": False,
    "tags": ["cozy"],
    "create_date": "2025-06-01T10:00:00.000Z",
    "spec": "chara_card_v2",
    "spec_version": "2.0",
    "data": {
        "name": "Tidepool",
        "description": "{{char}} is a hermit crab who collects shells and gossip in equal measure.",
        "personality": "nosy, generous",
        "scenario": "Low tide, a rock pool, {{user}} peering in.",
        "first_mes": "*A claw waves.* \"Don't block the light, it's rude.\"",
        "mes_example": "",
        "creator_notes": "",
        "system_prompt": "",
        "post_history_instructions": "",
        "tags": ["cozy"],
        "creator": "bunzai samples",
        "character_version": "1.0",
        "alternate_greetings": [],
        "extensions": {
            "talkativeness": "0.7",
            "fav": False,
            "world": "",
            "depth_prompt": {"prompt": "", "depth": 4, "role": "system"},
        },
        "group_only_greetings": [],
    },
}


def chunk(ctype: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + ctype + data + struct.pack(">I", zlib.crc32(ctype + data))


def image(w: int = 16, h: int = 16) -> list[bytes]:
    """A w x h RGB gradient: filter byte 0 then (r, g, b) per pixel, per row."""
    rows = b"".join(b"\0" + bytes(v for x in range(w) for v in (x * 16, y * 16, 160)) for y in range(h))
    return [
        chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)),
        chunk(b"IDAT", zlib.compress(rows, 9)),
    ]


def text(keyword: str, value: bytes) -> bytes:
    return chunk(b"tEXt", keyword.encode("latin-1") + b"\0" + value)


def main() -> None:
    payload = json.dumps(CARD, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    v3 = dict(CARD, spec="chara_card_v3", spec_version="3.0")
    payload3 = json.dumps(v3, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    ihdr, idat = image()
    parts = [
        b"\x89PNG\r\n\x1a\n",
        ihdr,
        text("Software", b"bunzai sample generator"),
        chunk(b"zTXt", b"Comment\0\0" + zlib.compress(b"generated, not drawn")),
        idat,
        text("chara", base64.b64encode(payload)),
        text("ccv3", base64.b64encode(payload3)),
        chunk(b"IEND", b""),
    ]
    out = Path(__file__).resolve().parents[3] / "samples" / "sillytavern" / "tidepool.png"
    out.write_bytes(b"".join(parts))
    print(out)


if __name__ == "__main__":
    main()
