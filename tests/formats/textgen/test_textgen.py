"""text-generation-webui: characters (YAML, with the picture beside them), generation presets and
instruction templates (formats/textgen/, docs/formats/textgen-webui.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
import pytest

from bunzai_codecs import read, write
from bunzai_codecs.cli import main
from bunzai_codecs.core import fileset, registry, yamlio
from bunzai_codecs.core.errors import BunzaiError, LimitExceeded, Malformed, NotRecognized
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.fidelity import compare_native, cross_format
from tests.conftest import corpus_root
from tests.formats.helpers import SAMPLES, chunks, edited, sample
from tests.formats.textgen import make_textgen_samples as gen

WREN = "textgen-webui/characters/Wren.yaml"
PILOT = "textgen-webui/characters/Harbor Pilot.yml"
PRESET = "textgen-webui/presets/Lantern Warm.yaml"
CHATML = "textgen-webui/instruction-templates/Harbor ChatML.yaml"
VICUNA = "textgen-webui/instruction-templates/Harbor Vicuna.yaml"


def _read(rel: str) -> tuple[bytes, str]:
    return sample(rel), rel.rsplit("/", 1)[1]


def test_the_samples_are_what_the_generator_writes() -> None:
    for rel, data in gen.files().items():
        assert (SAMPLES / "textgen-webui" / rel).read_bytes() == data, f"{rel} is stale: run the generator"


# -- detection ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "fmt"),
    [
        (WREN, "textgen-webui"),
        (PILOT, "textgen-webui"),
        (PRESET, "textgen-webui-preset"),
        (CHATML, "textgen-webui-instruct"),
        (VICUNA, "textgen-webui-instruct"),
    ],
)
def test_each_sample_is_detected_as_its_format(rel: str, fmt: str) -> None:
    data, name = _read(rel)
    d = registry.detect_all(Sniff(data, name))
    assert d.best is not None and d.best.id == fmt
    assert [c.id for c in d.candidates] == [fmt]  # no other YAML format claims it


def test_the_character_and_its_picture_are_one_input_with_the_picture_as_portrait() -> None:
    data, name = _read(WREN)
    assert data[:4] == b"PK\x03\x04"  # the file set of Wren.yaml and Wren.png
    e = read(data, name).primary
    portrait = e.body.media.portrait
    assert portrait is not None and portrait.ref == "Wren.png" and portrait.mime == "image/png"
    assert e.media[portrait.sha256 or ""] == (SAMPLES / "textgen-webui/characters/Wren.png").read_bytes()
    assert e.body.identity.name == "Wren"
    assert e.body.greetings.firstMessage is not None and e.body.greetings.firstMessage.startswith(
        "*Wren sets"
    )
    assert (
        e.body.identity.description is not None
        and "{{user}}: Do you ever sleep?" in e.body.identity.description
    )
    assert e.original["textgen-webui"].raw["your_name"] == "Traveller"  # the user's name: escrow


def test_yaml_detection_never_takes_json_nor_other_yaml() -> None:
    json_char = orjson.dumps({"char_name": "A", "char_persona": "p", "char_greeting": "g"})
    assert registry.detect(Sniff(json_char, "a.yaml")).id == "pygmalion"  # type: ignore[union-attr]
    for text in (
        b"version: '3'\nservices:\n  web:\n    image: nginx\n",  # another app's YAML
        b"title: Notes\n\nSome prose: with a colon.\n",
        b"- a\n- b\n",
        b"name: Just a name\n",  # a name and nothing a character holds
        b"temperature: hot\nmood: sunny\nwind: none\n",  # one preset key in three
    ):
        assert registry.detect(Sniff(text, "x.yaml")) is None, text
    # an old instruction template has a name (like a character) and is not one
    alpaca = b'name: "### Response:"\nyour_name: "### Instruction:"\ncontext: "x"\nturn_template: "<|user|>\\n<|user-message|>\\n<|bot|>\\n<|bot-message|>"\n'
    assert registry.detect(Sniff(alpaca, "Alpaca.yaml")).id == "textgen-webui-instruct"  # type: ignore[union-attr]
    # a card folder's card.yaml is not a character of this app
    card = b"card_folder: 1\nname: x\ncontext: y\n"
    assert registry.detect(Sniff(card, "card.yaml")).id == "card-folder"  # type: ignore[union-attr]


def test_a_yaml_that_is_nothing_bunzai_reads_is_not_recognized() -> None:
    with pytest.raises(NotRecognized):
        read(b"spec: not ours\nitems: [1, 2]\n", "config.yaml")


# -- decoding -------------------------------------------------------------------------------------


def test_a_2023_character_keeps_its_example_dialogue_apart() -> None:
    e = read(*_read(PILOT)).primary
    assert e.body.identity.name == "Harbor Pilot"
    assert (
        e.body.examples.exampleMessages == "{{user}}: How deep is it here?\n{{char}}: Deep enough. For now."
    )
    assert e.body.media.portrait is None


def test_the_preset_maps_samplers_and_keeps_the_rest_in_escrow() -> None:
    e = read(*_read(PRESET)).primary
    s = e.body.samplers  # type: ignore[attr-defined]
    assert e.body.name == "Lantern Warm"  # type: ignore[attr-defined]
    assert (s.temperature, s.topP, s.minP, s.repetitionPenalty, s.repetitionPenaltyRange) == (
        0.82,
        0.92,
        0.05,
        1.08,
        2048,
    )
    assert s.drySequenceBreakers == ["\n", ":", '"', "*"]
    assert s.samplerOrder is None  # sampler_priority has no canonical spelling: escrow
    raw = e.original["textgen-webui-preset"].raw
    assert raw["do_sample"] is True and raw["sampler_priority"].startswith("repetition_penalty")


def test_the_instruction_template_is_kept_as_text_and_never_rendered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jinja2", None)  # importing it would fail: nothing may
    data, name = _read(CHATML)
    e = read(data, name).primary
    jinja = e.body.instruct.jinjaTemplate  # type: ignore[attr-defined]
    assert jinja is not None and jinja.startswith("{%- for message in messages %}")
    assert "{{- '<|im_start|>' + message['role']" in jinja
    assert write(e, "textgen-webui-instruct").data == data
    assert write(e, "sillytavern-instruct").data  # written to another format as data too


def test_the_older_template_is_cut_as_the_app_cuts_it() -> None:
    e = read(*_read(VICUNA)).primary
    ins = e.body.instruct  # type: ignore[attr-defined]
    assert (ins.inputSequence, ins.inputSuffix, ins.outputSequence, ins.outputSuffix) == (
        "USER: ",
        "\n",
        "ASSISTANT: ",
        "</s>\n",
    )
    assert (ins.systemSequence, ins.systemSuffix) == ("", "\n\n")
    main = next(p for p in e.body.prompts if p.id == "main")  # type: ignore[attr-defined]
    assert main.content == "A chat between a curious harbour visitor and the lighthouse keeper."


# -- round trips ----------------------------------------------------------------------------------


@pytest.mark.parametrize("rel", [WREN, PILOT, PRESET, CHATML, VICUNA])
def test_an_unedited_file_comes_back_byte_for_byte(rel: str) -> None:
    data, name = _read(rel)
    d = read(data, name)
    out = write(d.primary, d.primary.source.format, linked=d.entities)  # type: ignore[union-attr]
    assert out.data == data


def test_an_edit_changes_that_key_only() -> None:
    data, name = _read(PILOT)
    e = read(data, name).primary
    out = write(edited(e, greetings={"firstMessage": "Steady now."}), "textgen-webui").data
    before, after = yamlio.load(data), yamlio.load(out)
    assert after == {**before, "greeting": "Steady now."}
    assert list(after) == list(before)  # the file's key order


def test_an_edited_preset_keeps_the_keys_it_does_not_map() -> None:
    data, name = _read(PRESET)
    e = read(data, name).primary
    out = write(edited(e, samplers={"temperature": 1.1}), "textgen-webui-preset").data
    before, after = yamlio.load(data), yamlio.load(out)
    assert after == {**before, "temperature": 1.1}


def test_a_changed_picture_is_written_beside_the_yaml() -> None:
    import dataclasses

    from bunzai_codecs.core.media import digest

    data, name = _read(WREN)
    e = read(data, name).primary
    new_png = gen.image(8, 8, (1, 2, 3, 255))
    e = edited(e, media={"portrait": {"role": "portrait", "ref": "Wren.png", "sha256": digest(new_png)}})
    e = dataclasses.replace(e, media={digest(new_png): new_png})
    z = fileset.require(Sniff(write(e, "textgen-webui").data, "w.zip"))
    assert z.read("Wren.png") == new_png
    assert z.read("Wren.yaml") == (SAMPLES / "textgen-webui/characters/Wren.yaml").read_bytes()  # unedited


# -- malformed and hostile input --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "error", "says"),
    [
        (b"name: A\ncontext: [unclosed\n", Malformed, "line"),
        (b"name: A\ncontext: !!python/object:os.system ls\n", Malformed, "constructor"),
        (b"name: A\ngreeting: !!binary aGk=\ncontext: x\n", Malformed, "binary"),
        (b"name: A\ncontext:\n  nested: mapping\n", Malformed, "$.context"),
        (
            b"name: A\ncontext: x\n" + b"junk: " + b"[" * 200 + b"]" * 200 + b"\n",
            LimitExceeded,
            "nests deeper",
        ),
    ],
)
def test_bad_yaml_is_a_typed_reject_naming_where(text: bytes, error: type[BunzaiError], says: str) -> None:
    with pytest.raises(error) as exc:
        registry.get("textgen-webui").decode(Sniff(text, "Bad.yaml", uri="chars/Bad.yaml"))
    assert says in str(exc.value) and "chars/Bad.yaml" in str(exc.value)
    assert not exc.value.internal


def billion_laughs(levels: int = 9) -> bytes:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels + 1):
        refs = ", ".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    lines.append("name: Lol")
    lines.append(f"context: *a{levels}")
    return ("\n".join(lines) + "\n").encode()


def test_an_alias_bomb_is_refused_before_it_expands() -> None:
    bomb = billion_laughs()
    assert len(bomb) < 2000
    with pytest.raises(LimitExceeded) as exc:
        read(bomb, "lol.yaml", uri="in/lol.yaml")
    assert "aliases expanded" in str(exc.value) and "in/lol.yaml" in str(exc.value)
    # a few aliases are fine
    small = b"base: &b {x: 1}\nname: A\ncontext: hi\nextra:\n  <<: *b\n  y: 2\n"
    assert read(small, "a.yaml").primary.original["textgen-webui"].raw["extra"] == {"x": 1, "y": 2}


def test_a_recursive_alias_is_malformed() -> None:
    with pytest.raises(Malformed, match="holds it"):
        read(b"name: A\ncontext: x\nloop: &l [*l]\n", "a.yaml")


def test_a_huge_yaml_is_refused_by_size() -> None:
    huge = b"name: A\ncontext: |\n" + b"  " + b"x" * (yamlio.MAX_YAML_BYTES + 10) + b"\n"
    with pytest.raises(LimitExceeded, match="bunzai reads YAML of at most"):
        registry.get("textgen-webui").decode(Sniff(huge, "huge.yaml"))


def test_a_file_set_of_other_files_is_malformed() -> None:
    data = fileset.pack({"A.yaml": b"name: A\ncontext: x\n", "B.yaml": b"name: B\ncontext: y\n"})
    with pytest.raises(Malformed, match="one character YAML"):
        registry.get("textgen-webui").decode(Sniff(data, "x.zip"))


# -- to and from the Tavern card -----------------------------------------------------------------------


def test_to_a_tavern_card_and_back_loses_nothing() -> None:
    data, name = _read(WREN)
    d = read(data, name)
    row = cross_format(d.primary, registry.get("sillytavern"), pool=d.entities, input=WREN)
    assert row.status == "lossless", row.to_json()
    card = write(d.primary, "sillytavern", linked=d.entities)
    assert card.extension == ".png"
    back = write(read(card.data, "Wren.png").primary, "textgen-webui")
    z = fileset.require(Sniff(back.data, "w.zip"))
    assert yamlio.load(z.read("Wren.yaml")) == {
        "name": "Wren",
        "greeting": d.primary.body.greetings.firstMessage,
        "context": d.primary.body.identity.description,
    }
    assert chunks(z.read("Wren.png")) == chunks((SAMPLES / "textgen-webui/characters/Wren.png").read_bytes())


def test_from_a_tavern_card_the_loss_report_says_what_has_no_place() -> None:
    d = read(sample("sillytavern/tidepool.png"), "tidepool.png")
    row = cross_format(d.primary, registry.get("textgen-webui"), pool=d.entities, input="tidepool.png")
    assert row.status == "expected", row.to_json()
    lost = {x.path for x in (*row.lost, *row.changed) if x.cls == "expected"}
    assert {"persona.personality", "persona.scenario", "discovery.tags[]"} <= lost
    assert not [x for x in (*row.lost, *row.changed) if x.cls == "unexpected"]


def test_a_preset_from_sillytavern_text_completion_keeps_its_samplers() -> None:
    d = read(sample("sillytavern/textgen-Lantern-Balanced.json"), "textgen-Lantern-Balanced.json")
    row = cross_format(d.primary, registry.get("textgen-webui-preset"), pool=d.entities, input="x")
    assert row.status in ("lossless", "expected")
    assert not [x for x in (*row.lost, *row.changed) if x.cls == "unexpected"]


def test_a_sillytavern_instruct_template_becomes_the_older_keys_and_back() -> None:
    d = read(sample("sillytavern/instruct-Harbor-ChatML.json"), "instruct-Harbor-ChatML.json")
    out = write(d.primary, "textgen-webui-instruct")
    tree = yamlio.load(out.data)
    assert set(tree) >= {"turn_template", "user", "bot"} and "<|user-message|>" in tree["turn_template"]
    back = read(out.data, "Harbor ChatML.yaml").primary
    for f in ("inputSequence", "outputSequence", "systemSequence"):
        assert getattr(back.body.instruct, f) == (getattr(d.primary.body.instruct, f) or "")  # type: ignore[attr-defined]


# -- the command line ------------------------------------------------------------------------------------


def test_convert_to_name_yaml_writes_the_picture_beside_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "Tide.yaml"
    assert (
        main(["convert", str(SAMPLES / "sillytavern/tidepool.png"), "--to", "textgen-webui", "-o", str(out)])
        == 0
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Tide.png", "Tide.yaml"]
    assert yamlio.load(out.read_bytes())["name"] == "Tidepool"
    assert (tmp_path / "Tide.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "wrote" in capsys.readouterr().err
    # both files named on the command line are one input
    card = tmp_path / "back.png"
    args = ["convert", str(out), str(tmp_path / "Tide.png"), "--to", "sillytavern", "-o", str(card)]
    assert main(args) == 0
    e = read(card.read_bytes(), "back.png").primary
    assert e.body.identity.name == "Tidepool" and e.body.media.portrait is not None


def test_detect_and_inspect_group_a_yaml_with_its_picture(capsys: pytest.CaptureFixture[str]) -> None:
    folder = SAMPLES / "textgen-webui/characters"
    assert main(["detect", "--json", str(folder)]) == 0
    lines = [orjson.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [(Path(x["file"]).name, x["format"], Path(x.get("picture", "-")).name) for x in lines] == [
        ("Harbor Pilot.yml", "textgen-webui", "-"),
        ("Wren.yaml", "textgen-webui", "Wren.png"),
    ]
    assert main(["inspect", str(folder / "Wren.yaml"), str(folder / "Wren.png")]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert orjson.loads(line)["body"]["media"]["portrait"]["ref"] == "Wren.png"


def test_a_billion_laughs_file_is_a_one_line_reject_of_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bomb = tmp_path / "lol.yaml"
    bomb.write_bytes(billion_laughs())
    assert main(["inspect", str(bomb)]) == 3
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "LimitExceeded" in err and str(bomb) in err


# -- the shared corpus -------------------------------------------------------------------------------------


def _corpus() -> Path:
    root = corpus_root()
    if root is None:
        pytest.skip("shared corpus not present")
    return root / "textgen-webui"


def test_the_apps_own_files_read_and_come_back_byte_for_byte() -> None:
    root = _corpus()
    seen = 0
    for p in sorted(root.rglob("*.yaml")):
        d = read(p.read_bytes(), p.name)
        out = write(d.primary, d.primary.source.format, linked=d.entities)  # type: ignore[union-attr]
        assert out.data == p.read_bytes(), p
        seen += 1
    assert seen >= 10


def test_the_apps_example_and_its_picture_are_one_character() -> None:
    from bunzai_codecs.inputs import walk

    root = _corpus() / "ooba-2026-05"
    inputs = {i.name: i for i in walk(root)}
    assert "Example.png" not in inputs and inputs["Example.yaml"].picture is not None
    data = inputs["Example.yaml"].read()
    d = read(data, "Example.yaml")
    assert d.primary.body.identity.name == "Chiharu Yamada"
    assert d.primary.body.media.portrait is not None and d.primary.body.media.portrait.ref == "Example.png"
    assert compare_native(data, write(d.primary, "textgen-webui").data) == []


def test_convert_image_is_the_picture_beside_the_yaml(tmp_path: Path) -> None:
    face = tmp_path / "face.png"
    face.write_bytes(gen.image(4, 4, (9, 9, 9, 255)))
    out = tmp_path / "out" / "Pilot.yaml"
    src = SAMPLES / "textgen-webui/characters/Harbor Pilot.yml"
    assert main(["convert", str(src), "--to", "textgen-webui", "-o", str(out), "--image", str(face)]) == 0
    assert (tmp_path / "out" / "Pilot.png").read_bytes() == face.read_bytes()
    assert out.read_bytes() == src.read_bytes()  # the character itself unedited: its own bytes
