"""risu-persona: PNG tEXt ``persona`` = base64 {name, personaPrompt, note}."""

from __future__ import annotations

import base64
from pathlib import Path

import orjson
import pytest

from bunzai_codecs import Malformed, read, write
from bunzai_codecs.core import png, registry
from bunzai_codecs.core.codec import EmitContext
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.media import default_portrait_png
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import PersonaBody
from bunzai_codecs.formats.risu.persona import blank_png

SAMPLE = Path(__file__).resolve().parents[3] / "samples" / "risu" / "mira_holt_persona.png"


def _persona_png(payload: object, *, extra: list[png.Chunk] | None = None) -> bytes:
    raw = payload if isinstance(payload, bytes) else base64.b64encode(orjson.dumps(payload))
    chunks = [png.make_text_chunk("persona", raw), *(extra or [])]
    return png.replace_text(blank_png(), remove=[], add=chunks)


def _chunk_tree(data: bytes) -> object:
    t = png.find_text(png.text_chunks(png.parse(data).chunks), "persona")
    assert t is not None
    return orjson.loads(base64.b64decode(t.text))


def test_detection() -> None:
    det = registry.get("risu-persona")
    assert det.detect(Sniff(SAMPLE.read_bytes(), SAMPLE.name)) == 0.95
    assert det.detect(Sniff(blank_png(), "x.png")) == 0.0
    card = _persona_png({"name": "a", "personaPrompt": "b"}, extra=[png.make_text_chunk("chara", b"e30=")])
    assert det.detect(Sniff(card, "card.png")) < 0.5  # a character card is not a persona


def test_decode_sample() -> None:
    body = read(SAMPLE.read_bytes(), SAMPLE.name).primary.body
    assert isinstance(body, PersonaBody)
    assert body.name == "Mira Holt"
    assert body.content.startswith("{{user}} is Mira Holt")
    assert body.brief == "Night-shift ferry pilot"
    assert body.attribution.source == "risu"
    assert body.media.portrait is not None and body.media.portrait.mime == "image/png"


def test_round_trip_and_edit() -> None:
    data = SAMPLE.read_bytes()
    d = read(data, SAMPLE.name)
    assert write(d.primary, "risu-persona").data == data
    body = d.primary.body
    assert isinstance(body, PersonaBody)
    body.brief = "Day-shift now"
    out = write(d.primary, "risu-persona").data
    assert _chunk_tree(out) == {**orjson.loads(base64.b64decode(_raw_chunk(data))), "note": "Day-shift now"}

    # every non-text chunk (the image) is untouched
    def image(b: bytes) -> list[tuple[bytes, bytes]]:
        return [(c.type, c.data) for c in png.parse(b).chunks if c.type not in (b"tEXt", b"zTXt", b"iTXt")]

    assert image(out) == image(data)
    assert read(out, "x.png").primary.body == body


def _raw_chunk(data: bytes) -> bytes:
    t = png.find_text(png.text_chunks(png.parse(data).chunks), "persona")
    assert t is not None
    return t.text


def test_fresh_export_makes_a_png_risu_imports() -> None:
    body = PersonaBody.model_validate({"name": "Ren", "content": "{{user}} is Ren.", "brief": "quiet"})
    data = registry.get("risu-persona").encode(
        CanonicalEntity(kind="persona", id="p", body=body), EmitContext()
    )
    assert data[:8] == png.PNG_SIGNATURE
    assert _chunk_tree(data) == {"name": "Ren", "personaPrompt": "{{user}} is Ren.", "note": "quiet"}


def test_bad_payloads_are_typed_errors() -> None:
    with pytest.raises(Malformed, match="personaPrompt"):
        read(_persona_png({"name": "a"}), "x.png")
    with pytest.raises(Malformed, match="JSON"):
        read(_persona_png(b"bm90IGpzb24="), "x.png")
    with pytest.raises(Malformed):
        read(_persona_png(b"%%%"), "x.png", format="risu-persona")


def test_a_broken_inline_portrait_is_not_used_as_the_carrier() -> None:
    """Regression (property tests): a portrait data URI holding only a PNG signature was used as
    the image the persona is written into, giving a file that does not decode. A portrait that is
    not a whole PNG is ignored like any other unreadable portrait: the default portrait carries the
    persona."""
    codec = registry.get("risu-persona")
    body = PersonaBody.model_validate(
        {
            "name": "Mira",
            "media": {"portrait": {"role": "portrait", "ref": "data:image/png;base64,iVBORw0KGgo="}},
        }
    )
    data = codec.encode(CanonicalEntity(kind="persona", id="persona-x", body=body), EmitContext())
    assert data.startswith(default_portrait_png()[:33])
    assert codec.decode(Sniff(data, "p.png")).primary.body.name == "Mira"
