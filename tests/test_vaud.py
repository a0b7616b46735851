"""vaud-json: the canonical entity as JSON lines; decode and encode are exact inverses."""

from __future__ import annotations

import pytest

from bunzai_codecs import Malformed, ValidationFailed, read, write
from bunzai_codecs.core.entity import CanonicalEntity, Source, canonical_id
from bunzai_codecs.entities import CharacterBody, LorebookBody
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
            "sillytavern": {"raw": {"talkativeness": "0.5", "data": {}}, "blobs": {"image": b"\x89PNG\0\xff"}}
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
    assert got.original["sillytavern"]["blobs"]["image"] == b"\x89PNG\0\xff"
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
