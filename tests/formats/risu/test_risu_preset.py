"""risu-preset: the .risup chain, the botPreset map (units, markers, toggles), overlay, typed errors."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path
from typing import Any

import orjson
import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from bunzai_codecs import Malformed, read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import PresetBody, RegexSetBody
from bunzai_codecs.formats.risu import jsformat, risup, rpack

SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "risu"
RISUP = SAMPLES / "harbor_night_shift_preset.risup"
JSON = SAMPLES / "harbor_night_shift_preset.json"


def _decrypt_file(data: bytes, *, rpacked: bool = True) -> tuple[dict[str, Any], Any]:
    """The chain undone independently of the codec (facts: docs/formats/risu.md#preset-risu-preset)."""
    outer = jsformat.unpack(gzip.decompress(rpack.decode(data) if rpacked else data))
    key = hashlib.sha256(b"risupreset").digest()
    return outer, jsformat.unpack(AESGCM(key).decrypt(bytes(12), outer["preset"], None))


def _body(data: bytes, name: str) -> PresetBody:
    body = read(data, name).primary.body
    assert isinstance(body, PresetBody)
    return body


def test_sample_risup_is_the_risu_chain() -> None:
    data = RISUP.read_bytes()
    assert data[:3] == bytes([0x10, 0x03, 0xFC])  # RPack'd gzip header
    outer, preset = _decrypt_file(data)
    assert outer["presetVersion"] == 2 and outer["type"] == "preset"
    assert list(outer) == ["presetVersion", "type", "preset"]
    assert preset["name"] == "Harbor Night Shift"
    assert preset["localStopStrings"] is jsformat.UNDEFINED


def test_detection_scores() -> None:
    det = registry.get("risu-preset")
    assert det.detect(Sniff(RISUP.read_bytes(), RISUP.name)) == 1.0
    assert det.detect(Sniff(RISUP.read_bytes(), "renamed.bin")) == 1.0
    risupreset = rpack.decode(RISUP.read_bytes())
    assert det.detect(Sniff(risupreset, "x.risupreset")) == 1.0
    assert det.detect(Sniff(JSON.read_bytes(), JSON.name)) == 0.95
    assert det.detect(Sniff(gzip.compress(b"hello"), "x.gz")) == 0.0
    assert det.detect(Sniff(b'{"temperature": 1, "prompts": []}', "st.json")) == 0.0


def test_decode_field_by_field() -> None:
    body = _body(RISUP.read_bytes(), RISUP.name)
    assert body.name == "Harbor Night Shift"
    s = body.samplers
    assert s.temperature == 0.85  # x100 integer -> API units
    assert s.frequencyPenalty == 0.2
    assert s.presencePenalty is None  # -1000: not sent
    assert s.topP == 0.95 and s.topK is None and s.minP is None
    assert (s.maxContext, s.maxTokens) == (16000, 800)
    assert body.apiOptions.reasoningEffort == "medium" and body.apiOptions.verbosity == "medium"
    assert body.apiOptions.thinkingTokens is None
    assert body.systemPrompts.assistantPrefill == ""


def test_prompt_template_items() -> None:
    p = _body(RISUP.read_bytes(), RISUP.name).prompts
    assert [x.id for x in p] == [str(i) for i in range(10)]
    main = p[0]
    assert (main.marker, main.content, main.role, main.name) == (
        False,
        "You narrate a slow, foggy harbor town at night.",
        "system",
        "Main",
    )
    assert main.extras == {"type2": "main"}
    slots = [(x.marker, x.markerSlot) for x in p[1:8]]
    assert slots == [
        (True, "personaDescription"),
        (True, "charDescription"),
        (True, "worldInfo"),
        (True, "chatHistory"),
        (True, "cachePoint"),
        (True, "chatHistory"),
        (True, "authorNote"),
    ]
    assert p[1].extras == {"innerFormat": "<user>{{slot}}</user>"}
    assert p[4].extras == {"rangeStart": 0, "rangeEnd": -3}
    assert p[5].role == "all"  # a cache item's role is kept verbatim
    jb = p[8]
    assert jb.marker is False and jb.extras == {"type": "jailbreak", "type2": "normal"} and jb.role == "user"
    assert p[9].role == "assistant"  # Risu "bot"
    assert all(x.enabled and x.placement == "relative" for x in p)


def test_toggles_become_choices() -> None:
    c = _body(RISUP.read_bytes(), RISUP.name).choices
    assert [(x.key, x.label, x.type) for x in c] == [
        ("length", "Reply length", "one"),
        ("narration", "Third-person narration", "toggle"),
        ("nickname", "Call the user", "input"),
    ]
    assert [(o.label, o.value) for o in c[0].options] == [("Short", "0"), ("Medium", "1"), ("Long", "2")]


def test_regex_becomes_a_linked_regex_set() -> None:
    d = read(RISUP.read_bytes(), RISUP.name)
    preset, rx = d.entities
    assert preset.links == {"knowledgeRefs": [rx.id]}
    assert isinstance(rx.body, RegexSetBody)
    assert [r.label for r in rx.body.rules] == ["Trim user shouting", "Bell sound"]
    assert rx.original["risu-preset"].raw is preset.original["risu-preset"].raw["regex"]


def test_json_and_risup_decode_to_the_same_body() -> None:
    assert _body(JSON.read_bytes(), JSON.name) == _body(RISUP.read_bytes(), RISUP.name)


def test_unedited_risup_re_exports_its_bytes() -> None:
    data = RISUP.read_bytes()
    d = read(data, RISUP.name)
    assert write(d.primary, "risu-preset", linked=d.entities).data == data


def test_edited_risup_is_a_file_risu_can_read_with_only_the_edit_changed() -> None:
    data = RISUP.read_bytes()
    d = read(data, RISUP.name)
    body = d.primary.body
    assert isinstance(body, PresetBody)
    body.samplers.temperature = 1.3
    body.prompts[0].content = "Narrate the harbor at dawn."
    out = write(d.primary, "risu-preset", linked=d.entities).data
    assert out[:3] == bytes([0x10, 0x03, 0xFC])
    _, before = _decrypt_file(data)
    _, after = _decrypt_file(out)
    assert after["temperature"] == 130  # back to Risu's x100 integer, no float noise
    assert after["promptTemplate"][0]["text"] == "Narrate the harbor at dawn."
    assert after["localStopStrings"] is jsformat.UNDEFINED  # msgpack undefined restored
    rest = {k: v for k, v in after.items() if k not in ("temperature", "promptTemplate")}
    assert rest == {k: v for k, v in before.items() if k not in ("temperature", "promptTemplate")}
    assert after["promptTemplate"][1:] == before["promptTemplate"][1:]
    # and we read it back the same way
    again = _body(out, "x.risup")
    assert again == body


def test_an_edited_choice_keeps_the_layout_lines() -> None:
    d = read(RISUP.read_bytes(), RISUP.name)
    body = d.primary.body
    assert isinstance(body, PresetBody)
    body.choices[1].label = "Narrate in third person"
    _, after = _decrypt_file(write(d.primary, "risu-preset", linked=d.entities).data)
    assert after["customPromptTemplateToggle"] == (
        "=Style=divider\nlength=Reply length=select=Short,Medium,Long\n"
        "narration=Narrate in third person\nnickname=Call the user=text"
    )


def test_edited_linked_regex_is_re_embedded() -> None:
    d = read(RISUP.read_bytes(), RISUP.name)
    preset, rx = d.entities
    assert isinstance(rx.body, RegexSetBody)
    rx.body.rules[1].replace = "BELL"
    out = write(preset, "risu-preset", linked=d.entities)
    assert out.beside == []
    _, after = _decrypt_file(out.data)
    assert after["regex"][1]["out"] == "BELL"
    assert after["regex"][0] == _decrypt_file(RISUP.read_bytes())[1]["regex"][0]


def test_json_preset_round_trip_and_risupreset_container() -> None:
    d = read(JSON.read_bytes(), JSON.name)
    out = write(d.primary, "risu-preset", linked=d.entities).data
    assert orjson.loads(out) == orjson.loads(JSON.read_bytes())
    gz = rpack.decode(RISUP.read_bytes())
    d2 = read(gz, "x.risupreset")
    assert d2.primary.original["risu-preset"].container == "risupreset"
    assert write(d2.primary, "risu-preset", linked=d2.entities).data == gz


def test_fresh_export_is_a_risup_with_risu_units() -> None:
    from bunzai_codecs.core.codec import EmitContext
    from bunzai_codecs.core.entity import CanonicalEntity

    body = PresetBody.model_validate(
        {
            "name": "Fresh",
            "prompts": [
                {"id": "main", "name": "Main", "content": "Be brief.", "role": "system"},
                {"id": "h", "marker": True, "markerSlot": "chatHistory"},
                {"id": "a", "content": "Ok.", "role": "assistant"},
            ],
            "samplers": {"temperature": 0.7, "presencePenalty": 0.1, "topK": 40},
            "apiOptions": {"reasoningEffort": "high"},
        }
    )
    data = registry.get("risu-preset").encode(
        CanonicalEntity(kind="preset", id="p", body=body), EmitContext()
    )
    _, t = _decrypt_file(data)
    assert t["name"] == "Fresh" and t["temperature"] == 70 and t["PresensePenalty"] == 10
    assert t["top_k"] == 40 and t["top_p"] == -1000 and t["reasonEffort"] == 2
    assert t["promptTemplate"][1] == {"type": "chat", "rangeStart": 0, "rangeEnd": "end"}
    assert t["promptTemplate"][2]["role"] == "bot"
    assert t["openAIKey"] == "" and t["regex"] == []


def test_gcm_tag_mismatch_is_malformed() -> None:
    outer, _ = _decrypt_file(RISUP.read_bytes())
    ct = bytearray(outer["preset"])
    ct[-1] ^= 1
    bad = rpack.encode(gzip.compress(jsformat.pack({**outer, "preset": bytes(ct)})))
    with pytest.raises(Malformed, match="GCM tag"):
        read(bad, "bad.risup")


def test_truncated_gzip_is_malformed() -> None:
    data = RISUP.read_bytes()
    with pytest.raises(Malformed, match=r"(truncated|corrupt)"):
        read(data[: len(data) // 2], "cut.risup", format="risu-preset")


def test_wrapper_checks() -> None:
    wrap = rpack.encode(gzip.compress(jsformat.pack({"presetVersion": 5, "type": "preset", "preset": b"x"})))
    with pytest.raises(Malformed) as e:
        read(wrap, "v.risup", format="risu-preset")
    assert e.value.path == "$.presetVersion"
    wrap = rpack.encode(gzip.compress(jsformat.pack({"presetVersion": 2, "type": "preset"})))
    with pytest.raises(Malformed, match="no encrypted preset"):
        read(wrap, "v.risup", format="risu-preset")


def test_pres_key_and_zlib_stream_are_read() -> None:
    _, preset = _decrypt_file(RISUP.read_bytes())
    import zlib

    ct = risup.encrypt(jsformat.pack(preset))
    data = rpack.encode(zlib.compress(jsformat.pack({"presetVersion": 0, "type": "preset", "pres": ct})))
    body = _body(data, "z.risup")
    assert body.name == "Harbor Night Shift"


def test_corpus_preset(corpus: Path) -> None:
    path = corpus / "risu/preset/RISUCO_ELYSIUM_8.0_preset.risup"
    data = path.read_bytes()
    assert registry.detect(Sniff(data, path.name)).id == "risu-preset"  # type: ignore[union-attr]
    d = read(data, path.name)
    assert write(d.primary, "risu-preset", linked=d.entities).data == data
    body = d.primary.body
    assert isinstance(body, PresetBody)
    assert len(body.prompts) == 35 and body.samplers.temperature == 1.3
    # an edit re-encodes through our chain: the decrypted tree equals the original but for the edit
    body.name = "renamed"
    out = write(d.primary, "risu-preset", linked=d.entities).data
    _, before = _decrypt_file(data)
    _, after = _decrypt_file(out)
    assert after == {**before, "name": "renamed"}
    assert list(after) == list(before)
