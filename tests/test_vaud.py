"""vaud-json: the canonical entity as JSON lines; decode and encode are exact inverses."""

from __future__ import annotations

import pytest

from bunzai_codecs import Malformed, ValidationFailed, read, write
from bunzai_codecs.core.entity import CanonicalEntity, Source, canonical_id
from bunzai_codecs.entities import CharacterBody, LorebookBody
from bunzai_codecs.formats.risu.charx import CharxTwin
from bunzai_codecs.formats.tavern.card import CardTwin
from bunzai_codecs.formats.vaud.codec import dumps


def _bundle() -> tuple[CanonicalEntity, CanonicalEntity]:
    digest = "ab" * 32
    book = CanonicalEntity(
        kind="lorebook",
        id=canonical_id("lorebook", digest, "character_book"),
        body=LorebookBody.model_validate(
            {
                "name": "World",
                "entries": [{"id": "0", "title": "Town", "content": "A town.", "sortOrder": 10.5}],
            }
        ),
        # every entity bunzai reads is stamped with a source; one without gets the vaud file's
        source=Source(uri="s3://b/card.png", format="sillytavern", score=1.0, sha256=digest, bytes=6),
    )
    card = CanonicalEntity(
        kind="character",
        id=canonical_id("character", digest),
        body=CharacterBody.model_validate(
            {"identity": {"name": "Séra"}, "settings": {"talkativeness": 0.5}, "extensions": {"k": None}}
        ),
        links={"knowledgeRefs": [book.id]},
        original={
            "sillytavern": CardTwin.of(
                {"talkativeness": "0.5", "data": {}}, blobs={"image": b"\x89PNG\0\xff"}
            )
        },
        source=Source(uri="s3://b/card.png", format="sillytavern", score=1.0, sha256=digest, bytes=6),
        warnings=["ccv3 chunk is not JSON; read chara"],
    )
    return card, book


def test_round_trip_is_byte_identical_and_keeps_every_part() -> None:
    card, book = _bundle()
    first = write(card, "vaud-json", linked=[book]).data
    assert first.count(b"\n") == 2  # card line + linked book line
    decoded = read(first, "card.vaud.json")
    again = write(decoded.primary, "vaud-json", linked=decoded.entities).data
    assert again == first
    got = decoded.primary
    assert got.id == card.id and got.links == card.links and got.warnings == card.warnings
    assert got.original["sillytavern"].blobs["image"] == b"\x89PNG\0\xff"
    assert got.source == card.source
    assert decoded.entities[1].body == book.body
    assert decoded.entities[1].body.entries[0].sortOrder == 10.5


def test_a_single_entity_file_is_plain_json_and_detects_with_certainty() -> None:
    card, _ = _bundle()
    line = dumps(card)
    from bunzai_codecs.core import registry
    from bunzai_codecs.core.sniff import Sniff

    s = Sniff(line, "x.json")
    assert s.json is not None
    assert registry.detect(s) == registry.Candidate("vaud-json", 1.0)


@pytest.mark.parametrize(
    ("kind", "native"),
    [
        ("preset", {"prompts": [], "prompt_order": []}),  # sillytavern-preset
        ("persona", {"personas": {}, "persona_descriptions": {}}),  # sillytavern-persona
        ("lorebook", {"entries": {"0": {"key": ["a"], "content": "b"}}}),  # sillytavern-lorebook
        ("character", {"persona": {"kind": "text"}, "greeting": "hi"}),  # agnai
        ("character", {"char_name": "P", "char_persona": "x", "char_greeting": "hi"}),  # pygmalion
    ],
)
def test_an_entity_line_wins_over_native_keys_beside_it(kind: str, native: dict[str, object]) -> None:
    # no detector steps aside for vaud-json: the ranking decides (certain, and asked first)
    import orjson

    from bunzai_codecs.core import registry
    from bunzai_codecs.core.sniff import Sniff

    s = Sniff(orjson.dumps({"schemaVersion": 1, "kind": kind, "id": "x", "body": {}, **native}), "x.json")
    assert registry.detect(s) == registry.Candidate("vaud-json", 1.0)
    best = registry.detect_all(s).best
    assert best is not None and best.id == "vaud-json"


@pytest.mark.parametrize(
    ("mutate", "error", "path"),
    [
        (lambda t: t.update(schemaVersion=99), Malformed, "$.schemaVersion"),
        (lambda t: t.update(kind="spaceship"), Malformed, "$.kind"),
        (lambda t: t["body"]["identity"].update(name=5), ValidationFailed, "$.body.identity.name"),
        (lambda t: t["original"]["sillytavern"]["blobs"].update(image="%%%"), Malformed, None),
        (lambda t: t.update(links={"knowledgeRefs": [1]}), Malformed, "$.links.knowledgeRefs"),
    ],
)
def test_bad_vaud_input_is_a_typed_error_with_a_path(mutate, error, path) -> None:  # type: ignore[no-untyped-def]
    import orjson

    card, _ = _bundle()
    tree = orjson.loads(dumps(card))
    mutate(tree)
    with pytest.raises(error) as info:
        read(orjson.dumps(tree), "bad.vaud.json", format="vaud-json")
    if path:
        assert info.value.path == path
    assert info.value.uri == "bad.vaud.json"


# -- media: the store rides in the line, self-contained, each byte once ---------------------------


def _png(color: bytes) -> bytes:
    import struct
    import zlib

    from bunzai_codecs.core import png

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return png.build(
        [
            png.Chunk(b"IHDR", ihdr),
            png.Chunk(b"IDAT", zlib.compress(b"\0" + color)),
            png.Chunk(b"IEND", b""),
        ]
    )


def _card_with_media() -> CanonicalEntity:
    from bunzai_codecs.core import png
    from bunzai_codecs.core.media import digest

    image = _png(b"\x10\x20\x30")
    emotion = _png(b"\xff\x00\x00")
    # the PNG file the card was read from: its picture plus the card chunk
    card_file = png.replace_text(image, remove=(), add=[png.make_text_chunk("chara", b"e30=")])
    body = CharacterBody.model_validate(
        {
            "identity": {"name": "Pic"},
            "media": {
                "portrait": {
                    "role": "portrait",
                    "ref": "ccdefault:",
                    "mime": "image/png",
                    "sha256": digest(image),
                    "size": len(image),
                },
                "assets": [
                    {
                        "role": "emotion",
                        "ref": "embeded://assets/emotion/image/joy.png",
                        "name": "joy",
                        "sha256": digest(emotion),
                        "size": len(emotion),
                    }
                ],
            },
        }
    )
    return CanonicalEntity(
        kind="character",
        id=canonical_id("character", "cd" * 32),
        body=body,
        original={
            "sillytavern": CardTwin.of({"data": {}}, blobs={"image": card_file}),
            "risu": CharxTwin.of({}, blobs={"zip:assets/emotion/image/joy.png": emotion}),
        },
        media={digest(image): image, digest(emotion): emotion},
        source=Source(
            uri="card.png", format="sillytavern", score=1.0, sha256="cd" * 32, bytes=len(card_file)
        ),
    )


def test_the_media_store_is_written_inline_and_read_back_exactly() -> None:
    import base64

    import orjson

    card = _card_with_media()
    line = dumps(card)
    tree = orjson.loads(line)
    assert set(tree["media"]) == set(card.media)
    for key, b64 in tree["media"].items():
        assert base64.b64decode(b64) == card.media[key]
    back = read(line, "x.vaud.json").primary
    assert back.media == card.media
    assert back.body == card.body
    assert back.original["sillytavern"].blobs["image"] == card.original["sillytavern"].blobs["image"]
    assert back.original["risu"].blobs == card.original["risu"].blobs
    assert dumps(back) == line


def test_escrow_blobs_that_hold_media_bytes_are_not_written_twice() -> None:
    import base64

    import orjson

    card = _card_with_media()
    tree = orjson.loads(dumps(card))
    emotion_key = card.body.media.assets[0].sha256  # type: ignore[index]
    # a member equal to a media entry is a reference to it
    assert tree["original"]["risu"]["blobs"]["zip:assets/emotion/image/joy.png"] == f"sha256:{emotion_key}"
    # the PNG card file is its picture (a media entry) plus the card chunk: only the chunk is written
    image_blob = tree["original"]["sillytavern"]["blobs"]["image"]
    assert isinstance(image_blob, dict) and image_blob["png"] == card.body.media.portrait.sha256  # type: ignore[union-attr]
    assert len(orjson.dumps(image_blob)) < len(base64.b64encode(card.original["sillytavern"].blobs["image"]))


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda t: t["media"].update({next(iter(t["media"])): "AAAA"}), "$.media"),
        (lambda t: t.update(media={"x": "%%%"}), "$.media.x"),
        (lambda t: t["original"]["risu"]["blobs"].update({"m": "sha256:" + "0" * 64}), None),
        (lambda t: t["original"]["sillytavern"]["blobs"]["image"].update(png="0" * 64), None),
    ],
)
def test_bad_media_is_a_typed_error(mutate, path) -> None:  # type: ignore[no-untyped-def]
    import orjson

    tree = orjson.loads(dumps(_card_with_media()))
    mutate(tree)
    with pytest.raises(Malformed) as info:
        read(orjson.dumps(tree), "bad.vaud.json", format="vaud-json")
    if path:
        assert (info.value.path or "").startswith(path)


def test_an_inline_data_url_of_an_older_line_moves_to_the_store() -> None:
    import base64

    import orjson

    image = _png(b"\x01\x02\x03")
    url = "data:image/png;base64," + base64.b64encode(image).decode()
    old = {
        "schemaVersion": 1,
        "kind": "persona",
        "id": "persona-x",
        "body": {"name": "P", "media": {"portrait": {"role": "portrait", "ref": url}}},
    }
    e = read(orjson.dumps(old), "old.vaud.json").primary
    p = e.body.media.portrait  # type: ignore[union-attr]
    assert p.ref == "data:image/png;base64," and p.size == len(image) and p.mime == "image/png"
    assert e.media[p.sha256] == image  # type: ignore[index]


def test_a_digest_without_bytes_in_the_line_is_a_reference_only() -> None:
    """A canonical line may name media whose bytes live elsewhere (a content-addressed store): the
    line reads, the store holds what the line carried, and writing it back gives the same line."""
    import orjson

    card = _card_with_media()
    tree = orjson.loads(dumps(card))
    kept = card.body.media.portrait.sha256  # type: ignore[union-attr]
    tree["media"] = {kept: tree["media"][kept]}
    tree["original"]["risu"]["blobs"] = {}
    line = orjson.dumps(tree)
    back = read(line, "x.vaud.json").primary
    assert set(back.media) == {kept} and back.body == card.body
    assert dumps(back) == line
