"""backyard: the legacy Backyard/Faraday PNG whose EXIF UserComment holds {character, version}."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from bunzai_codecs import Malformed, read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import EmitContext
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.media import default_portrait_png, digest
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import CharacterBody, LorebookBody
from bunzai_codecs.formats.backyard import exif
from bunzai_codecs.formats.backyard.common import (
    card_date,
    from_backyard,
    iso_to_unix,
    to_backyard,
    unix_to_iso,
)
from tests.conftest import expect_rows
from tests.formats.helpers import chunks, edited, png_chunk, sample, tiny_png
from tests.formats.make_samples import BY_V2, BY_V4, exif_block

CODEC = registry.get("backyard")
CARD_IMAGE = {"role": "portrait", "ref": "ccdefault:", "name": "main", "primary": True, "mime": "image/png"}
V4 = "backyard/maelis.v4.backyard.png"
V2 = "backyard/tidecaller.v2.backyard.png"


def payload(png: bytes) -> tuple[Any, str]:
    """The {character, version} JSON of a legacy PNG and whether it was base64 (read via the EXIF walk)."""
    block = next(d for t, d in chunks(png) if t == b"eXIf")
    uc = exif.find_user_comment(block)
    assert uc is not None and uc.value[:8] == b"ASCII\0\0\0"
    text = uc.value[8:]
    if text.startswith(b"{"):
        return json.loads(text), "raw"
    return json.loads(base64.b64decode(text)), "base64"


def legacy_png(comment: bytes) -> bytes:
    return tiny_png(after_ihdr=png_chunk(b"eXIf", exif_block(comment)))


# -- detection ---------------------------------------------------------------------------------


def test_samples_detect_with_certainty() -> None:
    for rel in (V4, V2):
        assert CODEC.detect(Sniff(sample(rel), rel)) == 1.0


@pytest.mark.parametrize(
    "comment,score",
    [
        (b'{"character": {"aiName": "A"}, "version": 2}', 1.0),
        (base64.b64encode(b'{"version": 4, "character": {}}'), 1.0),
        (b'{"version": 4}', 0.0),  # JSON, but not a Backyard export
        (b"Shot on a sample camera", 0.0),  # an ordinary camera comment
        (b"abcd", 0.0),  # base64-looking, not JSON
        (b'{"character": {"aiName": ', 0.55),  # starts like ours: claimed so the error is precise
    ],
)
def test_detection_by_user_comment(comment: bytes, score: float) -> None:
    assert CODEC.detect(Sniff(legacy_png(comment), "a.png")) == score


def test_a_png_without_exif_or_a_json_file_is_not_claimed() -> None:
    assert CODEC.detect(Sniff(tiny_png(), "a.png")) == 0.0
    assert CODEC.detect(Sniff(json.dumps(BY_V2).encode(), "a.json")) == 0.0


# -- decode ------------------------------------------------------------------------------------


def test_decode_v4_base64_maps_fields_and_translates_placeholders() -> None:
    d = read(sample(V4), "maelis.png")
    b = d.primary.body
    assert isinstance(b, CharacterBody)
    assert b.identity.name == "Maelis the Lantern Keeper"
    assert b.identity.nickname == "Maelis"
    assert b.identity.description == (
        "{{char}} tends the lanterns of a canal city. She knows every bridge and every rumour."
    )
    assert (
        b.prompts.systemPrompt
        == "Write {{char}}'s replies in the third person. Keep {{user}}'s actions for {{user}}."
    )
    assert b.persona.scenario == "{{user}} arrives in the canal city at dusk, looking for {{char}}."
    assert b.greetings.firstMessage == "*A lantern flares as {{user}} approaches.* Lost, or looking?"
    # the # turn markers are Backyard's; canonical example dialogue uses Tavern's {{user}}: lines
    assert b.examples.exampleMessages == (
        "{{user}}: Which bridge is the oldest?\n{{char}}: The Crooked One. It leans because it listens."
    )
    assert b.attribution.createdAt == 1714557600
    assert b.attribution.updatedAt == 1714649415.25
    # the PNG itself is the picture: the card-image portrait, as for a Tavern PNG
    p = b.media.portrait
    assert p is not None and p.dump() == {**CARD_IMAGE, "sha256": p.sha256, "size": p.size}
    # its bytes are the PNG without the eXIf chunk that holds the character
    image = d.primary.media[p.sha256 or ""]
    assert [t for t, _ in chunks(image)] == [t for t, _ in chunks(sample(V4)) if t != b"eXIf"]
    twin = d.primary.original["backyard"]
    assert twin.encoding == "base64"
    assert twin.raw["character"]["model"] == "sample.7b.q4_k_m"
    assert twin.raw["character"]["Chat"][0]["id"] == "clsamplechat000000000001"


def test_lore_items_become_a_linked_lorebook() -> None:
    d = read(sample(V4), "maelis.png")
    assert len(d.entities) == 2
    book = d.entities[1]
    assert d.primary.knowledge_refs == [book.id]
    assert isinstance(book.body, LorebookBody)
    first, second = book.body.entries
    assert first.id == "clsample0000lore00000001"
    assert first.title == "Crooked Bridge, old bridge"
    assert [t.text for t in first.triggers or []] == ["Crooked Bridge", "old bridge"]
    assert first.content == "The oldest bridge; {{char}} says it listens."
    assert (first.position, first.depth) == ("depth", 2)
    assert (book.body.globalScanDepth, book.body.tokenBudget) == (4, 384)
    assert [t.text for t in second.triggers or []] == ["lantern oil"]
    assert book.original["backyard"].raw[0]["order"] == "a0"


def test_decode_v2_raw_little_endian_with_the_comment_mid_block() -> None:
    d = read(sample(V2), "tide.png")
    b = d.primary.body
    assert isinstance(b, CharacterBody)
    assert b.identity.name == "Tidecaller" and b.identity.nickname is None  # aiName equals the display name
    assert b.identity.description == "{{char}} speaks for the sea and hates being interrupted."
    assert b.greetings.firstMessage is None  # null
    assert b.prompts.systemPrompt is None and b.examples.exampleMessages is None  # ""
    assert d.primary.original["backyard"].encoding == "raw"
    assert len(d.entities) == 1 and d.primary.knowledge_refs == []  # no lore items, no book


def test_placeholder_translation_is_an_inverse_on_canonical_text() -> None:
    for text in ["{{char}} and {{user}}", "{{character}} stays", "a {b} c", "{{{char}}}"]:
        assert from_backyard(to_backyard(from_backyard(text))) == from_backyard(text)
    assert from_backyard("{char} met {character} and {user}") == "{{char}} met {{char}} and {{user}}"


def test_dates() -> None:
    assert iso_to_unix("2025-06-12T19:03:56.873Z") == 1749755036.873
    assert iso_to_unix("1970-01-01T00:00:10Z") == 10
    assert iso_to_unix("not a date") is None
    assert unix_to_iso(1749755036.873) == "2025-06-12T19:03:56.873Z"
    assert unix_to_iso(None) == "1970-01-01T00:00:00.000Z"
    assert card_date("1970-01-01T00:00:00.000Z") is None and card_date("2024-01-01T00:00:00Z") == 1704067200


# -- round trips -------------------------------------------------------------------------------


@pytest.mark.parametrize("rel", [V4, V2])
def test_unchanged_round_trip_is_byte_identical(rel: str) -> None:
    d = read(sample(rel), rel)
    assert write(d.primary, "backyard", linked=d.entities).data == sample(rel)


@pytest.mark.parametrize("rel", [V4, V2])
def test_an_edit_rewrites_only_the_user_comment(rel: str) -> None:
    src = sample(rel)
    d = read(src, rel)
    e = edited(d.primary, lambda b: b["identity"].update(description="{{char}} has retired."))
    out = write(e, "backyard", linked=d.entities).data
    tree, encoding = payload(out)
    old, old_encoding = payload(src)
    assert encoding == old_encoding  # raw stays raw, base64 stays base64
    assert tree["character"]["aiPersona"] == "{character} has retired."
    old["character"]["aiPersona"] = "{character} has retired."
    assert tree == old  # nothing else in the export moved, the chat history included
    assert [c for c in chunks(out) if c[0] != b"eXIf"] == [c for c in chunks(src) if c[0] != b"eXIf"]
    assert [t for t, _ in chunks(out)] == [t for t, _ in chunks(src)]
    again = read(out, "again.png").primary
    assert again.body == e.body  # canonical stability


def test_editing_the_linked_lorebook_rewrites_lore_items_by_id() -> None:
    d = read(sample(V4), "m.png")
    book = edited(d.entities[1], lambda b: b["entries"][1].update(content="Seed oil, nothing else."))
    out = write(d.primary, "backyard", linked=[d.primary, book]).data
    items = payload(out)[0]["character"]["loreItems"]
    assert items[0] == BY_V4["character"]["loreItems"][0]  # type: ignore[index]
    assert items[1] == {**BY_V4["character"]["loreItems"][1], "value": "Seed oil, nothing else."}  # type: ignore[index]


def test_an_emptied_link_list_drops_the_lore() -> None:
    d = read(sample(V4), "m.png")
    d.primary.links = {"knowledgeRefs": []}
    out = write(d.primary, "backyard", linked=d.entities).data
    assert payload(out)[0]["character"]["loreItems"] == []


def test_unresolvable_links_keep_the_twins_lore() -> None:
    d = read(sample(V4), "m.png")
    out = write(d.primary, "backyard", linked=[d.primary]).data
    assert out == sample(V4)


def test_a_foreign_body_gets_a_version_4_export_on_a_placeholder_image() -> None:
    body = CharacterBody.model_validate(
        {
            "identity": {"name": "Vell", "description": "{{char}} carries letters for {{user}}."},
            "prompts": {"systemPrompt": "Stay in character."},
            "greetings": {"firstMessage": "Package for {{user}}!"},
            "examples": {"exampleMessages": "{{user}}: Who sent it?\n{{char}}: Can't say."},
        }
    )
    book = CanonicalEntity(
        kind="lorebook",
        id="lorebook-y",
        body=LorebookBody.model_validate(
            {
                "entries": [
                    {
                        "id": "0",
                        "content": "The post office.",
                        "triggers": [{"text": "post"}, {"text": "mail"}],
                    }
                ]
            }
        ),
    )
    e = CanonicalEntity(
        kind="character", id="character-abc123", body=body, links={"knowledgeRefs": [book.id]}
    )
    ctx = EmitContext.for_entities([book])
    out = CODEC.encode(e, ctx)
    assert ctx.embedded == {book.id}
    tree, encoding = payload(out)
    assert encoding == "base64" and tree["version"] == 4
    c = tree["character"]
    assert c["aiDisplayName"] == c["aiName"] == "Vell"
    assert c["aiPersona"] == "{character} carries letters for {user}."
    assert c["customDialogue"] == "#{user}: Who sent it?\n#{character}: Can't say."
    assert c["loreItems"] == [{"id": "0", "key": "post, mail", "value": "The post office."}]
    for key in (
        "basePrompt",
        "model",
        "temperature",
        "minP",
        "promptTemplate",
        "canDeleteCustomDialogue",
        "Chat",
    ):
        assert key in c
    # no image anywhere: the default portrait, with the character's eXIf after IHDR
    assert [t for t, _ in chunks(out)] == [b"IHDR", b"eXIf", b"IDAT", b"IEND"]
    back = read(out, "vell.png")
    image = default_portrait_png()
    portrait = {**CARD_IMAGE, "sha256": digest(image), "size": len(image)}
    assert back.primary.body == body.model_copy(
        # unknown dates are written as the epoch (required fields) and read back as unknown; the
        # default portrait is the picture the card now has
        update={"media": CharacterBody.model_validate({"media": {"portrait": portrait}}).media}
    )
    assert back.primary.media == {digest(image): image}


def test_a_fresh_export_uses_the_callers_image() -> None:
    image = sample("pygmalion/ines.pygmalion.png")  # any PNG; its chara chunk is not carried over
    e = CanonicalEntity(
        kind="character", id="character-1", body=CharacterBody.model_validate({"identity": {"name": "Q"}})
    )
    out = CODEC.encode(e, EmitContext(options={"image": image}))
    idat = [d for t, d in chunks(image) if t == b"IDAT"]
    assert [d for t, d in chunks(out) if t == b"IDAT"] == idat
    assert not [d for t, d in chunks(out) if t == b"tEXt"]
    assert payload(out)[0]["character"]["aiDisplayName"] == "Q"


# -- bad input ---------------------------------------------------------------------------------


def test_an_exif_comment_that_is_not_json_is_malformed() -> None:
    with pytest.raises(Malformed, match="neither JSON nor base64"):
        CODEC.decode(Sniff(legacy_png(b"Shot on a sample camera"), "cam.png"))
    with pytest.raises(Malformed, match="JSON"):
        read(legacy_png(b'{"character": {"aiName": '), "broken.png")
    with pytest.raises(Malformed, match="base64 JSON"):
        CODEC.decode(Sniff(legacy_png(base64.b64encode(b"{not json")), "b.png"))


def test_json_without_a_character_object_is_malformed_at_its_path() -> None:
    with pytest.raises(Malformed) as ei:
        CODEC.decode(Sniff(legacy_png(b'{"character": [1], "version": 2}'), "x.png"))
    assert ei.value.path == "$.character"
    with pytest.raises(Malformed) as ei:
        CODEC.decode(Sniff(legacy_png(b'{"character": {"aiPersona": [5]}, "version": 2}'), "x.png"))
    assert (ei.value.path, ei.value.message) == ("$.character.aiPersona", "expected a string, found an array")
    with pytest.raises(Malformed) as ei:
        CODEC.decode(Sniff(legacy_png(b'{"character": {"loreItems": [{"key": false}]}}'), "x.png"))
    assert (ei.value.path, ei.value.message) == (
        "$.character.loreItems[0].key",
        "expected a string, found a boolean",
    )
    with pytest.raises(Malformed) as ei:
        CODEC.decode(Sniff(legacy_png(b'{"character": {"loreItems": ["tower"]}}'), "x.png"))
    assert (ei.value.path, ei.value.message) == (
        "$.character.loreItems[0]",
        "expected an object, found a string",
    )


def test_a_broken_exif_block_is_malformed_with_a_file_offset() -> None:
    data = tiny_png(after_ihdr=png_chunk(b"eXIf", b"MM\0*" + (4000).to_bytes(4, "big")))
    with pytest.raises(Malformed, match="outside") as ei:
        CODEC.decode(Sniff(data, "x.png"))
    assert ei.value.offset is not None and ei.value.offset > 33
    with pytest.raises(Malformed, match="no eXIf"):
        CODEC.decode(Sniff(tiny_png(), "x.png"))


# -- corpus ------------------------------------------------------------------------------------


@pytest.mark.parametrize("rel,fmt", expect_rows("backyard"))
def test_corpus_detects_and_round_trips(corpus: Path, rel: str, fmt: str) -> None:
    data = (corpus / rel).read_bytes()
    d = read(data, rel)
    assert d.primary.source.format == fmt  # type: ignore[union-attr]
    assert write(d.primary, fmt, linked=d.entities).data == data


def test_corpus_v1_edit_keeps_the_chat_history(corpus: Path) -> None:
    data = (corpus / "backyard/legacy-png/character-export-v1.png").read_bytes()
    d = read(data, "v1.png")
    e = edited(d.primary, lambda b: b["greetings"].update(firstMessage="Hi {{user}}."))
    tree, encoding = payload(write(e, "backyard").data)
    old, _ = payload(data)
    assert encoding == "raw" and tree["version"] == 1
    assert tree["character"]["firstMessage"] == "Hi {user}."
    assert tree["character"]["Chat"] == old["character"]["Chat"]
    assert "promptTemplate" not in tree["character"]  # a v1 export is not upgraded
