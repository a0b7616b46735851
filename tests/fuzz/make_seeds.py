"""Write the seed inputs of every fuzz target into tests/fuzz/corpus/<target>/seed-*.

    .venv/bin/python -m tests.fuzz.make_seeds

Seeds are the project's own samples (samples/) cut down to what each container reader sees, plus a
few wrapped-mode inputs (first byte 0x01, see check.py), plus each sample with every id and order
field a 39-digit number (tests/hostile/generate.py, ``bignum_cases``). Deterministic: running it again rewrites the
same files. Crashers (crash-*) found by the harnesses live beside the seeds and are never touched.
"""

from __future__ import annotations

import hashlib

import orjson

from bunzai_codecs.core import png
from bunzai_codecs.formats.backyard import exif
from bunzai_codecs.formats.risu import jsformat, risum, risup

from .check import CORPUS, ROOT

SAMPLES = ROOT / "samples"
CARD = orjson.dumps(
    {
        "spec": "chara_card_v3",
        "spec_version": "3.0",
        "data": {
            "name": "Seed",
            "description": "d",
            "first_mes": "hi",
            "extensions": {"depth_prompt": {"prompt": "p", "depth": 4}},
            "character_book": {"entries": [{"keys": ["k"], "content": "c", "id": 1, "enabled": True}]},
            "assets": [
                {"type": "icon", "uri": "embeded://assets/icon/image/main.png", "name": "main", "ext": "png"}
            ],
        },
    }
)


VOXTA_CHARACTER = orjson.dumps(
    {
        "$type": "character",
        "Id": "0b6f3c2e-8d41-4a7e-9c15-2f8e6d4a1b93",
        "Name": "Seed",
        "Profile": "{{ char }} d",
        "FirstMessage": "hi",
        "AlternativeFirstMessages": ["hello"],
        "MemoryBooks": ["5a9e1d37-c2b8-4f60-8e43-7d1c9b2a6f05"],
        "DateCreated": "2024-01-01T00:00:00+00:00",
    }
)


def _target_of(name: str, data: bytes) -> str:
    """The fuzz target whose container reader a whole file of this name and content goes to."""
    if data[:8] == png.PNG_SIGNATURE:
        return "png"
    if data[:4] == b"PK\x03\x04" or data[:3] == b"\xff\xd8\xff":
        return "zip"
    if name.endswith(".risum"):
        return "rpack"
    if name.endswith((".risup", ".risupreset")):
        return "risup"
    return "json"


def seeds() -> dict[str, list[bytes]]:
    files = {p.name: p.read_bytes() for p in sorted(SAMPLES.rglob("*")) if p.is_file()}
    out: dict[str, list[bytes]] = {t: [] for t in ("png", "zip", "rpack", "risup", "exif", "json")}
    for name, data in files.items():
        if data[:8] == png.PNG_SIGNATURE:
            out["png"].append(data)
            for c in png.parse(data).chunks:
                if c.type == b"eXIf":
                    out["exif"].append(c.data)
        elif data[:4] == b"PK\x03\x04" or data[:3] == b"\xff\xd8\xff":
            out["zip"].append(data)
        elif name.endswith(".risum"):
            out["rpack"].append(data)
            out["rpack"].append(b"\x01" + risum.read_blocks(data).main)
        elif name.endswith((".risup", ".risupreset")):
            out["risup"].append(data)
            opened = risup.open_preset(data, rpacked=name.endswith(".risup"))
            out["risup"].append(b"\x01" + jsformat.pack(opened.preset))
        elif data.lstrip()[:1] in (b"{", b"[") and (len(data) < 5000 or name.endswith(".story")):
            out["json"].append(data)  # a .story (its document never decoded) is JSON all the way
    # issue 37: every id and order field of every sample as 39-digit text (what a public NovelAI
    # lorebook generator writes), each file in the target that reads its container
    from tests.hostile.generate import bignum_cases

    for case in bignum_cases():
        if case.name.endswith("39-digit text"):
            out[_target_of(case.filename, case.data)].append(case.data)
    out["png"].append(b"\x01" + CARD)
    out["zip"].append(b"\x01" + CARD)
    out["zip"].append(b"\x02" + VOXTA_CHARACTER)
    out["json"].append(CARD)
    out["exif"].append(
        exif.build_exif(exif.user_comment_value(b'{"character":{"aiName":"Seed"},"version":4}'))
    )
    return out


def main() -> None:
    for target, items in seeds().items():
        d = CORPUS / target
        d.mkdir(parents=True, exist_ok=True)
        for old in d.glob("seed-*"):
            old.unlink()
        for data in items:
            (d / f"seed-{hashlib.sha1(data).hexdigest()[:16]}").write_bytes(data)
        print(f"{d}: {len(items)} seeds")


if __name__ == "__main__":
    main()
