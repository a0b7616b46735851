"""Seeded generator of a realistic mixed roleplay archive (the benchmark corpus).

    python -m bench.gen DEST --n 10000 [--seed 7] [--jobs 2]

``DEST`` is a local folder or any fsspec URL (``s3://bucket/prefix``, ``memory://x``). The same
seed and N give the same bytes on every run: each file is drawn from its own
``random.Random(f"{seed}/{index}")`` (so files can be written by several processes in any order),
JSON is written by orjson, and images are deflated by the interpreter's zlib at a fixed level (a
different zlib build could compress the same pixels to other bytes; ``.bench-manifest.tsv`` lists each
file's sha256 so a run can tell).

The mix (share of N, rounded by largest remainder; the order is a seeded shuffle):

=====================  =====  ==================================================================
file                   share  what it is
=====================  =====  ==================================================================
card-v2-json           27 %   SillyTavern V2 export: V1 mirror + ``spec`` + ``data`` (~20 KB)
card-v3-json           15 %   CCv3 JSON card (assets, nickname, dates...)
card-png               10 %   PNG card: a ~235 KB zlib-deflated image + ``chara`` and ``ccv3``
card-charx              3 %   RisuAI ``.charx``: card.json + module.risum + image assets (zip)
lorebook-st            12 %   SillyTavern world info (``{"entries": {"0": {...}}}``)
lorebook-risu           5 %   RisuAI lorebook export
lorebook-marinara       5 %   Marinara lorebook envelope
regex-st                5 %   SillyTavern regex scripts (array)
regex-risu              3 %   RisuAI regex export
regex-marinara          2 %   Marinara regex rows
preset-st               6 %   SillyTavern chat-completion preset
preset-risu             2 %   RisuAI ``.risup`` (msgpack, AES-GCM, as Risu writes it)
preset-marinara         2 %   Marinara preset envelope
broken                  3 %   of which a third are truly broken (~1 % of N); see below
=====================  =====  ==================================================================

Cards: 35 % carry a ``character_book`` of 10-200 entries (log-uniform), 20 % carry regex scripts.
Texts are drawn from a seeded sentence pool (English with typographic punctuation, ~10 % of cards
in Japanese), so parsers see realistic non-ASCII strings.

``broken`` files (``REJECT`` in the manifest): a truncated JSON card, a card whose
``character_book.entries[k].keys`` is a number, a PNG card with a bad CRC in its ``ccv3`` chunk, random bytes, an
empty file, a truncated ``.charx``. Every one must come back as a typed error. A third of the
``broken`` share is used so that ~1 % of the archive is broken; the other two thirds are extra
V2 cards (so N stays exact).

Native files of the formats bunzai encodes (Risu/Marinara lorebooks, regex, presets, ``.charx``)
are written through bunzai's own fresh encoders from seeded canonical bodies; Tavern cards, world
info and ST presets are built here as the apps write them. PNG images are real PNGs (IHDR, one
IDAT, IEND) whose pixel rows are seeded noise deflated with zlib; Pillow is not used.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import math
import os
import random
import struct
import sys
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import orjson

#: (file kind, share of N in percent)
MIX: tuple[tuple[str, float], ...] = (
    ("card-v2-json", 26.0),
    ("card-v3-json", 15.0),
    ("card-png", 10.0),
    ("card-charx", 3.0),
    ("lorebook-st", 12.0),
    ("lorebook-risu", 5.0),
    ("lorebook-marinara", 5.0),
    ("regex-st", 5.0),
    ("regex-risu", 3.0),
    ("regex-marinara", 2.0),
    ("preset-st", 6.0),
    ("preset-risu", 2.0),
    ("preset-marinara", 2.0),
    ("broken", 1.0),
    ("card-v2-json-extra", 3.0),
)
MIX_TOTAL = sum(w for _, w in MIX)

#: the format id each kind must be detected as (``REJECT``: a typed error)
EXPECT: dict[str, str] = {
    "card-v2-json": "sillytavern",
    "card-v3-json": "sillytavern",
    "card-png": "sillytavern",
    "card-charx": "risu",
    "lorebook-st": "sillytavern-lorebook",
    "lorebook-risu": "risu-lorebook",
    "lorebook-marinara": "marinara-lorebook",
    "regex-st": "sillytavern-regex",
    "regex-risu": "risu-regex",
    "regex-marinara": "marinara-regex",
    "preset-st": "sillytavern-preset",
    "preset-risu": "risu-preset",
    "preset-marinara": "marinara-preset",
    "broken": "REJECT",
}

#: the deflate level of every image and zip member
ZLIB_LEVEL = 6
#: a PNG card image deflates to about this many bytes
IMAGE_BYTES = 235_000
#: distinct card images per seed (each card is a distinct file; the pixels repeat across cards)
IMAGE_POOL = 12
#: distinct charx asset images per seed (~40 KB each)
ASSET_POOL = 12

#: the manifest is a dot file: ``bunzai normalize`` skips names that start with ``.``
MANIFEST = ".bench-manifest.tsv"


# -- text -------------------------------------------------------------------------------------------

_WORDS = """
the a an of and to in on at by with from into over under beneath beyond through across against
lantern harbor storm tide salt rope mast sail gull lighthouse keeper widow captain smuggler
merchant priestess knight archivist cartographer alchemist thief healer guardian stranger
forest glade river bridge tower ruin market tavern inn library chapel crypt garden courtyard
quietly softly slowly suddenly carefully gently briefly warmly coldly nervously eagerly
old young tall pale dark bright silver golden crimson amber hollow ancient weathered gentle
smiles laughs sighs whispers murmurs glances frowns nods kneels reaches pauses listens waits
remembers wonders watches guards mends carries opens closes lights extinguishes follows
voice hand eyes hair cloak lamp letter map key blade coin ring book candle window door
night morning dusk dawn rain fog snow wind thunder silence memory promise secret debt oath
she he they you we it her his their your our its who whom which that this those these
is was were has had will would could should might must can may does did been being
not never always often rarely sometimes again still already soon later before after
""".split()  # noqa: SIM905 (a word list reads better as text)
_ACCENTED = ["café", "naïve", "façade", "déjà", "rôle", "über", "Zoë", "Åsa", "Mañana", "Ærø"]
_JA = (
    "彼女は灯台の番人だ。",
    "嵐の夜、港は静まり返っていた。",
    "「大丈夫、ここは安全だよ」と彼は言った。",
    "古い地図には名もない島が描かれている。",
    "窓の外で雨が降り続いている。",
    "{{user}}は扉をそっと開けた。",
    "{{char}}は微笑んで頷いた。",
    "鐘の音が遠くから聞こえる。",
)


@dataclass(frozen=True)
class Pool:
    """Seeded sentence pools every file draws its text from (built once per seed)."""

    en: tuple[str, ...]
    ja: tuple[str, ...]
    names: tuple[str, ...]
    words: tuple[str, ...]


@cache
def pool(seed: int) -> Pool:
    rng = random.Random(f"{seed}/pool")
    words = _WORDS + _ACCENTED
    en = []
    for _ in range(3000):
        n = rng.randint(6, 24)
        w = rng.choices(words, k=n)
        s = " ".join(w)
        s = s[0].upper() + s[1:]
        r = rng.random()
        if r < 0.2:
            s = f"*{s}.*"
        elif r < 0.45:
            s = f"“{s}{rng.choice(('.', '?', '!', '…'))}”"
        elif r < 0.55:
            s = f"{{{{char}}}} {s.lower()} — {{{{user}}}} {rng.choice(words)}."
        else:
            s += rng.choice((".", ".", ".", "!", "?", "…"))
        en.append(s)
    ja = ["".join(rng.choices(_JA, k=rng.randint(1, 4))) for _ in range(600)]
    syll = ["ka", "ri", "mo", "na", "el", "th", "ar", "is", "ven", "dor", "lia", "ros", "mi", "sa", "te"]
    names = ["".join(rng.choices(syll, k=rng.randint(2, 4))).capitalize() for _ in range(2000)]
    return Pool(tuple(en), tuple(ja), tuple(names), tuple(_WORDS))


class Text:
    """Draws text of a given size from the pool, in one language per file."""

    def __init__(self, rng: random.Random, p: Pool, ja: bool) -> None:
        self.rng = rng
        self.src = p.ja if ja else p.en
        self.p = p

    def __call__(self, size: int, *, para: int = 4) -> str:
        if size <= 0:
            return ""
        rng = self.rng
        out: list[str] = []
        n = 0
        k = 0
        while n < size:
            s = rng.choice(self.src)
            out.append(s)
            n += len(s) + 1
            k += 1
            if k % para == 0:
                out.append("\n\n")
        return " ".join(out).replace(" \n\n ", "\n\n").strip()

    def name(self) -> str:
        return self.rng.choice(self.p.names)

    def words(self, k: int) -> list[str]:
        return self.rng.sample(self.p.words, k)


def _lognormal_size(rng: random.Random, median: float, sigma: float = 0.35) -> int:
    return int(median * math.exp(rng.gauss(0.0, sigma)))


# -- PNG --------------------------------------------------------------------------------------------


def _chunk(ctype: bytes, data: bytes) -> bytes:
    return (
        struct.pack(">I", len(data)) + ctype + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(ctype)))
    )


def _noise_table(p: float) -> bytes:
    """256 byte values -> small signed deltas (mod 256) with a geometric spread: the rows of a
    photograph after PNG's Sub filter look like this (mostly small differences)."""
    out = bytearray()
    weights = [p * (1 - p) ** k for k in range(64)]
    total = sum(weights)
    counts = [max(1, round(w / total * 256)) for w in weights]
    k = 0
    while len(out) < 256:
        for _ in range(counts[min(k, 63)]):
            mag = k // 2 + (k % 2)
            out.append((mag if k % 2 else (256 - mag) % 256) & 0xFF)
        k += 1
    return bytes(out[:256])


_TABLE = _noise_table(0.22)


def png_image(rng: random.Random, *, target: int = IMAGE_BYTES, width: int = 0) -> bytes:
    """A real RGB PNG (IHDR, one IDAT, IEND, no text) whose IDAT deflates to about ``target``
    bytes. Rows use the Sub filter over seeded noise; nothing but zlib and struct is used."""
    # the noise deflates to ~4 bits per filtered byte: raw bytes ~= target * 2
    raw_len = int(target * 8 / 3.99)
    if not width:
        width = 480
    row = 1 + width * 3
    height = max(1, raw_len // row)
    noise = rng.randbytes(height * (row - 1)).translate(_TABLE)
    rows = bytearray()
    step = row - 1
    for y in range(height):
        rows.append(1)  # Sub
        rows += noise[y * step : (y + 1) * step]
    idat = zlib.compress(bytes(rows), ZLIB_LEVEL)
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", idat) + _chunk(b"IEND", b"")


@cache
def image_pool(seed: int) -> tuple[bytes, ...]:
    return tuple(png_image(random.Random(f"{seed}/image/{k}")) for k in range(IMAGE_POOL))


@cache
def asset_pool(seed: int) -> tuple[bytes, ...]:
    return tuple(
        png_image(random.Random(f"{seed}/asset/{k}"), target=40_000, width=200) for k in range(ASSET_POOL)
    )


def card_png(image: bytes, chara: dict[str, Any], ccv3: dict[str, Any]) -> bytes:
    """``image`` with SillyTavern's two card chunks (base64 JSON) inserted before IEND."""
    iend = image.rindex(b"IEND") - 4
    chunks = _chunk(b"tEXt", b"chara\0" + base64.b64encode(orjson.dumps(chara)))
    chunks += _chunk(b"tEXt", b"ccv3\0" + base64.b64encode(orjson.dumps(ccv3)))
    return image[:iend] + chunks + image[iend:]


# -- cards ------------------------------------------------------------------------------------------


def _uuid(rng: random.Random) -> str:
    h = rng.getrandbits(128).to_bytes(16, "big").hex()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def book_entry(rng: random.Random, text: Text, i: int) -> dict[str, Any]:
    """One ``character_book`` entry as SillyTavern 1.12+ writes it on export."""
    keys = [w for w in text.words(rng.randint(1, 5))]
    if rng.random() < 0.08:
        keys.append(f"/{rng.choice(keys)}s?/i")
    secondary = text.words(rng.randint(1, 2)) if rng.random() < 0.25 else []
    pos = rng.choice((0, 1, 1, 1, 4))
    return {
        "id": i,
        "keys": keys,
        "secondary_keys": secondary,
        "comment": " ".join(text.words(2)).title(),
        "content": text(rng.randint(100, 900)),
        "constant": rng.random() < 0.1,
        "selective": bool(secondary),
        "insertion_order": rng.choice((100, 100, 90, 110, 50)),
        "enabled": rng.random() > 0.05,
        "position": "before_char" if pos == 0 else "after_char",
        "use_regex": True,
        "extensions": {
            "position": pos,
            "exclude_recursion": False,
            "display_index": i,
            "probability": 100,
            "useProbability": True,
            "depth": 4,
            "selectiveLogic": 0,
            "group": "",
            "group_override": False,
            "group_weight": 100,
            "prevent_recursion": False,
            "delay_until_recursion": False,
            "scan_depth": None,
            "match_whole_words": None,
            "use_group_scoring": False,
            "case_sensitive": None,
            "automation_id": "",
            "role": 0,
            "vectorized": False,
            "sticky": 0,
            "cooldown": 0,
            "delay": 0,
        },
    }


def regex_script(rng: random.Random, text: Text) -> dict[str, Any]:
    """One SillyTavern regex script."""
    w = text.words(2)
    return {
        "id": _uuid(rng),
        "scriptName": " ".join(w).title(),
        "findRegex": rng.choice(
            (f"/{w[0]}|{w[1]}/gi", r"/\(OOC:[^)]*\)/gi", f"/<{w[0]}>(.*?)<\\/{w[0]}>/gs", "/[“”]/g")
        ),
        "replaceString": rng.choice(("", "$1", '"', f"<span class={w[1]}>$1</span>", "{{match}}")),
        "trimStrings": [],
        "placement": sorted(rng.sample((1, 2, 3, 5, 6), rng.randint(1, 2))),
        "disabled": rng.random() < 0.1,
        "markdownOnly": rng.random() < 0.5,
        "promptOnly": rng.random() < 0.3,
        "runOnEdit": rng.random() < 0.5,
        "substituteRegex": rng.choice((0, 0, 1)),
        "minDepth": None,
        "maxDepth": rng.choice((None, None, 2, 4)),
    }


def card_data(rng: random.Random, text: Text, *, v3: bool, scale: float = 1.0) -> dict[str, Any]:
    """A card's ``data`` object, SillyTavern key order; ~20 KB of text with the V1 mirror."""
    name = text.name()
    s = scale
    data: dict[str, Any] = {
        "name": name,
        "description": text(_lognormal_size(rng, 4200 * s)),
        "personality": text(_lognormal_size(rng, 500 * s)) if rng.random() < 0.7 else "",
        "scenario": text(_lognormal_size(rng, 700 * s)) if rng.random() < 0.8 else "",
        "first_mes": text(_lognormal_size(rng, 1500 * s)),
        "mes_example": text(_lognormal_size(rng, 1500 * s)) if rng.random() < 0.8 else "",
        "creator_notes": text(_lognormal_size(rng, 400 * s)) if rng.random() < 0.7 else "",
        "system_prompt": text(200) if rng.random() < 0.3 else "",
        "post_history_instructions": text(150) if rng.random() < 0.2 else "",
        "tags": text.words(rng.randint(0, 8)),
        "creator": text.name(),
        "character_version": rng.choice(("1.0", "1.1", "2.0", "")),
        "alternate_greetings": [
            text(_lognormal_size(rng, 900 * s)) for _ in range(rng.choice((0, 0, 1, 2, 3)))
        ],
        "extensions": {
            "talkativeness": rng.choice(("0.5", "0.5", "0.7", 0.5)),
            "fav": rng.random() < 0.1,
            "world": "",
            "depth_prompt": {
                "prompt": text(200) if rng.random() < 0.2 else "",
                "depth": 4,
                "role": "system",
            },
        },
    }
    if rng.random() < 0.35:
        n = int(math.exp(rng.uniform(math.log(10), math.log(200))))
        data["character_book"] = {
            "entries": [book_entry(rng, text, i) for i in range(n)],
            "name": f"{name}'s lore",
        }
        data["extensions"]["world"] = data["character_book"]["name"]
    if rng.random() < 0.2:
        data["extensions"]["regex_scripts"] = [regex_script(rng, text) for _ in range(rng.randint(1, 8))]
    if rng.random() < 0.1:
        data["extensions"]["chub"] = {
            "full_path": f"{data['creator']}/{name}".lower(),
            "id": rng.getrandbits(24),
        }
    data["group_only_greetings"] = []
    if v3:
        data["nickname"] = name.split()[0] if rng.random() < 0.3 else None
        if data["nickname"] is None:
            del data["nickname"]
        data["assets"] = [{"type": "icon", "uri": "ccdefault:", "name": "main", "ext": "png"}]
        data["creation_date"] = 1_690_000_000 + rng.getrandbits(25)
        data["modification_date"] = data["creation_date"] + rng.getrandbits(20)
        if rng.random() < 0.2:
            data["source"] = [f"https://example.org/c/{rng.getrandbits(32):x}"]
    return data


def st_v2_card(rng: random.Random, text: Text) -> dict[str, Any]:
    """A SillyTavern V2 export: the V1 mirror, ``spec`` and ``data``."""
    data = card_data(rng, text, v3=False, scale=1.0)
    created = f"2024-{rng.randint(1, 12)}-{rng.randint(1, 28)} @{rng.randint(0, 23)}h {rng.randint(0, 59)}m"
    return {
        "name": data["name"],
        "description": data["description"],
        "personality": data["personality"],
        "scenario": data["scenario"],
        "first_mes": data["first_mes"],
        "mes_example": data["mes_example"],
        "creatorcomment": data["creator_notes"],
        "avatar": "none",
        "chat": f"{data['name']} - {created}",
        "talkativeness": data["extensions"]["talkativeness"],
        "fav": data["extensions"]["fav"],
        "tags": data["tags"],
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": data,
        "create_date": created,
    }


def v3_card(rng: random.Random, text: Text) -> dict[str, Any]:
    return {"spec": "chara_card_v3", "spec_version": "3.0", "data": card_data(rng, text, v3=True, scale=1.8)}


def _dumps(rng: random.Random, tree: Any) -> bytes:
    """Compact (Chub, RisuAI) or indented (SillyTavern's exports) JSON, seeded."""
    return orjson.dumps(tree, option=orjson.OPT_INDENT_2) if rng.random() < 0.5 else orjson.dumps(tree)


# -- other formats through bunzai's encoders --------------------------------------------------------


def lore_body(rng: random.Random, text: Text) -> Any:
    from bunzai_codecs.entities import LorebookBody

    n = int(math.exp(rng.uniform(math.log(8), math.log(250))))
    entries = []
    for i in range(n):
        keys = text.words(rng.randint(1, 4))
        entries.append(
            {
                "id": str(i),
                "title": " ".join(text.words(2)).title(),
                "content": text(rng.randint(100, 1000)),
                "triggers": [{"text": k} for k in keys],
                "secondaryTriggers": [{"text": k} for k in text.words(1)] if rng.random() < 0.2 else None,
                "selective": rng.random() < 0.2,
                "constant": rng.random() < 0.08,
                "enabled": rng.random() > 0.05,
                "position": rng.choice(("world", "character", "character", "depth")),
                "sortOrder": rng.choice((100, 100, 90, 110)),
                "displayIndex": i,
            }
        )
    return LorebookBody.model_validate(
        {"name": f"{text.name()} {rng.choice(('Atlas', 'Chronicle', 'Lore', 'World'))}", "entries": entries}
    )


def regex_body(rng: random.Random, text: Text) -> Any:
    from bunzai_codecs.entities import RegexSetBody

    rules = []
    for k in range(rng.randint(2, 30)):
        s = regex_script(rng, text)
        find = s["findRegex"]
        pattern, _, flags = find[1:].rpartition("/")
        phases = {1: "input", 2: "output", 3: "slash", 5: "lorebook", 6: "reasoning"}
        rules.append(
            {
                "id": s["id"],
                "label": s["scriptName"],
                "find": pattern,
                "flags": flags,
                "replace": s["replaceString"],
                "phases": [phases[p] for p in s["placement"]],
                "targets": ["display"] if s["markdownOnly"] else None,
                "enabled": not s["disabled"],
                "sortOrder": k,
            }
        )
    return RegexSetBody.model_validate({"name": " ".join(text.words(2)).title(), "rules": rules})


_PRESET_MARKERS = (
    ("main", "Main Prompt", False),
    ("worldInfoBefore", "World Info (before)", True),
    ("personaDescription", "Persona Description", True),
    ("charDescription", "Char Description", True),
    ("charPersonality", "Char Personality", True),
    ("scenario", "Scenario", True),
    ("nsfw", "Auxiliary Prompt", False),
    ("worldInfoAfter", "World Info (after)", True),
    ("dialogueExamples", "Chat Examples", True),
    ("chatHistory", "Chat History", True),
    ("jailbreak", "Post-History Instructions", False),
)


def st_preset(rng: random.Random, text: Text) -> dict[str, Any]:
    """A SillyTavern chat-completion preset (``OpenAI Settings/<name>.json``)."""
    prompts: list[dict[str, Any]] = []
    order: list[dict[str, Any]] = []
    for ident, name, marker in _PRESET_MARKERS:
        p: dict[str, Any] = {"name": name, "system_prompt": True, "identifier": ident}
        if marker:
            p["marker"] = True
        else:
            p["role"] = "system"
            p["content"] = text(rng.randint(50, 1500))
        prompts.append(p)
        order.append({"identifier": ident, "enabled": rng.random() > 0.1})
    for _ in range(rng.randint(0, 12)):
        ident = _uuid(rng)
        prompts.append(
            {
                "identifier": ident,
                "system_prompt": False,
                "enabled": False,
                "marker": False,
                "name": " ".join(text.words(3)).title(),
                "role": rng.choice(("system", "user", "assistant")),
                "content": text(rng.randint(100, 2500)),
                "injection_position": rng.choice((0, 1)),
                "injection_depth": 4,
                "injection_order": 100,
                "forbid_overrides": False,
            }
        )
        order.insert(rng.randint(0, len(order)), {"identifier": ident, "enabled": rng.random() > 0.3})
    return {
        "chat_completion_source": rng.choice(("openai", "openrouter", "claude", "custom")),
        "openai_model": "gpt-4o",
        "temperature": round(rng.uniform(0.5, 1.3), 2),
        "frequency_penalty": round(rng.uniform(0, 0.5), 2),
        "presence_penalty": round(rng.uniform(0, 0.5), 2),
        "top_p": round(rng.uniform(0.8, 1), 2),
        "top_k": rng.choice((0, 40, 100)),
        "top_a": 0,
        "min_p": rng.choice((0, 0.05, 0.1)),
        "repetition_penalty": 1,
        "openai_max_context": rng.choice((8192, 16384, 32768, 128000)),
        "openai_max_tokens": rng.choice((300, 600, 1000, 2048)),
        "max_context_unlocked": rng.random() < 0.5,
        "seed": -1,
        "n": 1,
        "stream_openai": True,
        "squash_system_messages": rng.random() < 0.5,
        "names_behavior": rng.choice((0, 1, 2)),
        "send_if_empty": "",
        "impersonation_prompt": "[Write your next reply from the point of view of {{user}}.]",
        "new_chat_prompt": "[Start a new Chat]",
        "new_group_chat_prompt": "[Start a new group chat. Group members: {{group}}]",
        "new_example_chat_prompt": "[Example Chat]",
        "continue_nudge_prompt": "[Continue your last message without repeating its original content.]",
        "wi_format": "{0}",
        "scenario_format": "{{scenario}}",
        "personality_format": "{{personality}}",
        "assistant_prefill": "",
        "continue_prefill": False,
        "continue_postfix": " ",
        "bias_preset_selected": "Default (none)",
        "wrap_in_quotes": False,
        "prompts": prompts,
        "prompt_order": [
            {"character_id": 100000, "order": [{"identifier": "main", "enabled": True}]},
            {"character_id": 100001, "order": order},
        ],
    }


def _entity(kind: str, body: Any) -> Any:
    from bunzai_codecs.core.entity import CanonicalEntity

    return CanonicalEntity(kind=kind, id=f"{kind}-bench", body=body)  # type: ignore[arg-type]


def _encode(fmt: str, entity: Any, linked: tuple[Any, ...] = ()) -> bytes:
    from bunzai_codecs import bundle

    return bundle.write(entity, fmt, linked=linked).data


def _via_st(data: bytes, name: str, fmt: str) -> bytes:
    """A native SillyTavern file re-encoded as ``fmt`` by bunzai (a fresh export, no twin)."""
    from bunzai_codecs import bundle

    d = bundle.read(data, name)
    e = d.primary
    fresh = _entity(e.kind, e.body)
    fresh.links = e.links
    return _encode(fmt, fresh, tuple(d.entities[1:]))


def charx(rng: random.Random, text: Text, seed: int) -> bytes:
    """A RisuAI ``.charx`` through bunzai's Risu encoder: the card, its lore and regex in
    ``module.risum``, and 1-4 image assets (portrait + emotions) as archive members."""
    from bunzai_codecs import bundle

    card = v3_card(rng, text)
    imgs = image_pool(seed)
    assets_pool = asset_pool(seed)
    main = imgs[rng.randrange(len(imgs))]
    assets = [{"type": "icon", "uri": _data_uri(main), "name": "main", "ext": "png"}]
    for k in range(rng.randint(0, 3)):
        a = assets_pool[rng.randrange(len(assets_pool))]
        assets.append(
            {"type": "emotion", "uri": _data_uri(a), "name": f"{text.words(1)[0]}{k}", "ext": "png"}
        )
    card["data"]["assets"] = assets
    d = bundle.read(orjson.dumps(card), "card.json")
    e = d.primary
    fresh = _entity(e.kind, e.body)
    fresh.links = e.links
    return _encode("risu", fresh, tuple(d.entities[1:]))


def _data_uri(b: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(b).decode("ascii")


# -- broken files -----------------------------------------------------------------------------------


def broken(rng: random.Random, text: Text, seed: int) -> tuple[str, bytes]:
    """One broken file (suffix, bytes): every one must be rejected with a typed error."""
    k = rng.randrange(6)
    if k == 0:  # truncated JSON card
        b = orjson.dumps(v3_card(rng, text))
        return ".json", b[: rng.randint(10, len(b) - 2)]
    if k == 1:  # a wrong type at a path
        card = v3_card(rng, text)
        book = card["data"].setdefault("character_book", {"entries": [book_entry(rng, text, 0)]})
        entries = book["entries"]
        entries[rng.randrange(len(entries))]["keys"] = rng.randint(1, 99)
        return ".json", orjson.dumps(card)
    if k == 2:  # a PNG card whose ccv3 chunk's CRC is wrong (the pixels' CRC is not read)
        img = image_pool(seed)[rng.randrange(IMAGE_POOL)]
        card = v3_card(rng, text)
        damaged = bytearray(card_png(img, card, card))
        damaged[damaged.rindex(b"tEXtccv3") + 12] ^= 0x01  # inside the ccv3 chunk's base64
        return ".png", bytes(damaged)
    if k == 3:
        return ".json", rng.randbytes(rng.randint(100, 5000))
    if k == 4:
        return ".json", b""
    b = charx(rng, text, seed)
    return ".charx", b[: len(b) // 2]


# -- the archive ------------------------------------------------------------------------------------


def plan(n: int, seed: int) -> list[str]:
    """The kind of each of the ``n`` files: shares by largest remainder, then a seeded shuffle."""
    raw = [(kind, n * w / MIX_TOTAL) for kind, w in MIX]
    counts = {kind: int(x) for kind, x in raw}
    short = n - sum(counts.values())
    for kind, _ in sorted(raw, key=lambda kx: (-(kx[1] - int(kx[1])), kx[0]))[:short]:
        counts[kind] += 1
    kinds = [
        ("card-v2-json" if k == "card-v2-json-extra" else k) for k, c in counts.items() for _ in range(c)
    ]
    random.Random(f"{seed}/plan").shuffle(kinds)
    return kinds


_SUFFIX = {
    "card-v2-json": ".json",
    "card-v3-json": ".json",
    "card-png": ".png",
    "card-charx": ".charx",
    "lorebook-st": ".json",
    "lorebook-risu": ".json",
    "lorebook-marinara": ".marinara.json",
    "regex-st": ".json",
    "regex-risu": ".json",
    "regex-marinara": ".json",
    "preset-st": ".json",
    "preset-risu": ".risup",
    "preset-marinara": ".marinara.json",
}


def make_file(kind: str, index: int, seed: int) -> tuple[str, bytes]:
    """(relative path, bytes) of file ``index``."""
    rng = random.Random(f"{seed}/{index}")
    text = Text(rng, pool(seed), ja=rng.random() < 0.1)
    suffix = _SUFFIX.get(kind, ".json")
    if kind == "card-v2-json":
        b = _dumps(rng, st_v2_card(rng, text))
    elif kind == "card-v3-json":
        b = _dumps(rng, v3_card(rng, text))
    elif kind == "card-png":
        v2 = st_v2_card(rng, text)
        v3 = {**v2, "spec": "chara_card_v3", "spec_version": "3.0"}  # as ST writes ccv3: only relabelled
        b = card_png(image_pool(seed)[rng.randrange(IMAGE_POOL)], v2, v3)
    elif kind == "card-charx":
        b = charx(rng, text, seed)
    elif kind.startswith("lorebook-"):
        body = lore_body(rng, text)
        fmt = {"st": "sillytavern-lorebook", "risu": "risu-lorebook", "marinara": "marinara-lorebook"}
        b = _encode(fmt[kind.split("-")[1]], _entity("lorebook", body))
    elif kind.startswith("regex-"):
        body = regex_body(rng, text)
        fmt = {"st": "sillytavern-regex", "risu": "risu-regex", "marinara": "marinara-regex"}
        b = _encode(fmt[kind.split("-")[1]], _entity("regex", body))
    elif kind == "preset-st":
        b = orjson.dumps(st_preset(rng, text), option=orjson.OPT_INDENT_2)
    elif kind in ("preset-risu", "preset-marinara"):
        st = orjson.dumps(st_preset(rng, text))
        b = _via_st(st, "preset.json", "risu-preset" if kind == "preset-risu" else "marinara-preset")
    elif kind == "broken":
        suffix, b = broken(rng, text, seed)
    else:
        raise ValueError(kind)
    folder = f"{index // 1000:03d}"
    return f"{folder}/{index:06d}-{kind}{suffix}", b


def iter_files(
    n: int, seed: int, start: int = 0, stop: int | None = None
) -> Iterator[tuple[str, str, bytes]]:
    """(kind, relative path, bytes) of files ``start..stop`` of an ``n``-file archive."""
    kinds = plan(n, seed)
    for i in range(start, n if stop is None else stop):
        path, b = make_file(kinds[i], i, seed)
        yield kinds[i], path, b


def _write_range(args: tuple[str, int, int, int, int]) -> list[tuple[str, str, int, str]]:
    dest, n, seed, start, stop = args
    import fsspec

    fs, root = fsspec.core.url_to_fs(dest)
    rows = []
    made: set[str] = set()
    for kind, rel, b in iter_files(n, seed, start, stop):
        folder = rel.rsplit("/", 1)[0]
        if folder not in made:
            fs.makedirs(f"{root}/{folder}", exist_ok=True)
            made.add(folder)
        fs.pipe_file(f"{root}/{rel}", b)
        rows.append((rel, EXPECT[kind], len(b), hashlib.sha256(b).hexdigest()))
    return rows


def generate(
    dest: str, n: int, seed: int = 7, *, jobs: int = 1, progress: Callable[[str], None] | None = None
) -> list[tuple[str, str, int, str]]:
    """Write the ``n``-file archive under ``dest`` (folder or fsspec URL) and its ``.bench-manifest.tsv``
    (path, expected format or REJECT, bytes, sha256). Returns the manifest rows."""
    import fsspec

    fs, root = fsspec.core.url_to_fs(dest)
    fs.makedirs(root, exist_ok=True)
    step = 500
    ranges = [(dest, n, seed, a, min(n, a + step)) for a in range(0, n, step)]
    rows: list[tuple[str, str, int, str]] = []
    t0 = time.perf_counter()
    if jobs > 1 and len(ranges) > 1:
        import multiprocessing as mp

        with mp.get_context("spawn").Pool(jobs) as p:
            for k, part in enumerate(p.imap(_write_range, ranges)):
                rows += part
                if progress:
                    progress(f"{min(n, (k + 1) * step)}/{n} files, {time.perf_counter() - t0:.0f}s")
    else:
        for k, r in enumerate(ranges):
            rows += _write_range(r)
            if progress:
                progress(f"{min(n, (k + 1) * step)}/{n} files, {time.perf_counter() - t0:.0f}s")
    manifest = "path\texpect\tbytes\tsha256\n" + "".join(f"{p}\t{e}\t{b}\t{h}\n" for p, e, b, h in rows)
    fs.pipe_file(f"{root}/{MANIFEST}", manifest.encode())
    return rows


def read_manifest(dest: str) -> list[tuple[str, str, int, str]]:
    import fsspec

    fs, root = fsspec.core.url_to_fs(dest)
    lines = fs.cat_file(f"{root}/{MANIFEST}").decode().splitlines()[1:]
    out = []
    for line in lines:
        p, e, b, h = line.split("\t")
        out.append((p, e, int(b), h))
    return out


def ensure(
    dest: str, n: int, seed: int = 7, *, jobs: int = 1, progress: Callable[[str], None] | None = None
) -> None:
    """Generate the archive unless ``dest`` already holds this seed's ``n`` files (checked by a
    stamp file, so a benchmark can reuse a corpus between runs)."""
    import fsspec

    fs, root = fsspec.core.url_to_fs(dest)
    stamp = f"{root}/.bench-corpus"
    want = f"n={n} seed={seed} gen=2\n".encode()  # 2: ccv3 as ST writes it, a bad ccv3 CRC
    if fs.exists(stamp) and fs.cat_file(stamp) == want and fs.exists(f"{root}/{MANIFEST}"):
        return
    if fs.exists(root):
        fs.rm(root, recursive=True)
    generate(dest, n, seed, jobs=jobs, progress=progress)
    fs.pipe_file(stamp, want)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.gen", description=__doc__.split("\n\n")[0])
    ap.add_argument("dest", help="folder or fsspec URL")
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows = generate(a.dest, a.n, a.seed, jobs=a.jobs, progress=lambda m: print(m, file=sys.stderr))
    total = sum(r[2] for r in rows)
    print(f"{len(rows)} files, {total / 1e6:.1f} MB in {a.dest} ({time.perf_counter() - t0:.1f}s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["EXPECT", "MIX", "generate", "iter_files", "make_file", "plan", "png_image", "read_manifest"]
