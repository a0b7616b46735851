"""byaf: the Backyard Archive Format zip (manifest, one character, scenarios, images)."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bunzai_codecs import Malformed, Unsupported, read, write
from bunzai_codecs.core import archive, registry
from bunzai_codecs.core.codec import EmitContext
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import CharacterBody, LorebookBody
from bunzai_codecs.formats.backyard.byaf import examples_from_messages, examples_to_messages
from tests.conftest import expect_rows
from tests.formats.helpers import edited, sample, tiny_png

CODEC = registry.get("byaf")
SAMPLE = "backyard/maelis.byaf"
CDIR = "characters/maelis01"


def members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {n: z.read(n) for n in z.namelist()}


def names(data: bytes) -> list[str]:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return z.namelist()


def rezip(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for n, d in files.items():
            z.writestr(n, d)
    return buf.getvalue()


def sample_files() -> dict[str, bytes]:
    return members(sample(SAMPLE))


def with_json(name: str, change: Any) -> bytes:
    files = sample_files()
    tree = json.loads(files[name])
    change(tree)
    files[name] = json.dumps(tree).encode()
    return rezip(files)


# -- detection ---------------------------------------------------------------------------------


def test_detection() -> None:
    assert CODEC.detect(Sniff(sample(SAMPLE), "m.byaf")) == 1.0
    assert CODEC.detect(Sniff(sample(SAMPLE), "m.zip")) == 1.0  # by content, not by name
    only_manifest = rezip({"manifest.json": b"{}"})
    assert CODEC.detect(Sniff(only_manifest, "x.byaf")) == 0.6
    assert CODEC.detect(Sniff(only_manifest, "x.zip")) == 0.0
    assert CODEC.detect(Sniff(rezip({"card.json": b"{}"}), "x.charx")) == 0.0
    assert CODEC.detect(Sniff(b'{"a": 1}', "x.byaf")) == 0.0


# -- decode ------------------------------------------------------------------------------------


def test_decode_maps_character_first_scenario_and_images() -> None:
    d = read(sample(SAMPLE), "maelis.byaf")
    b = d.primary.body
    assert isinstance(b, CharacterBody)
    assert b.identity.name == "Maelis the Lantern Keeper"
    assert b.identity.nickname == "Maelis"
    assert b.identity.description == "{{char}} tends the lanterns of a canal city."
    assert b.attribution.creator == "Sample Author"
    assert b.attribution.createdAt == 1714557600 and b.attribution.updatedAt == 1717243200
    # the first scenario
    assert b.prompts.systemPrompt == "Write {{char}}'s replies only."
    assert b.persona.scenario == "{{user}} arrives at dusk."
    assert b.greetings.firstMessage == "Lost, or looking, {{user}}?"
    assert b.examples.exampleMessages == (
        "<START>\n{{user}}: Which bridge is the oldest?\n{{char}}: The Crooked One.\n<START>\n{{char}}: Mind the third step."
    )
    # each further scenario is an alternate greeting titled by the scenario title
    assert [(g.text, g.title) for g in b.greetings.alternateGreetings or []] == [
        ("Every lantern is lit tonight!", "Festival night")
    ]
    assert b.media.portrait is not None
    assert (b.media.portrait.ref, b.media.portrait.label, b.media.portrait.mime) == (
        "images/portrait.png",
        "avatar",
        "image/png",
    )
    # the first scenario's background (an archive-root path) is the character's background
    assert [(a.role, a.ref, a.label) for a in b.media.assets or []] == [
        ("other", "images/festival.png", "festival outfit"),
        ("background", "scenarios/dusk-background.png", None),
    ]
    # every image's bytes are the member it names
    z = archive.open_zip(sample(SAMPLE))
    assert d.primary.media[b.media.portrait.sha256 or ""] == z.read(f"{CDIR}/images/portrait.png")
    for a, member in zip(
        b.media.assets or [], [f"{CDIR}/images/festival.png", "scenarios/dusk-background.png"], strict=True
    ):
        assert d.primary.media[a.sha256 or ""] == z.read(member)
    twin = d.primary.original["byaf"]
    assert twin.raw["scenarios"][0]["messages"][1]["outputs"][0]["text"] == "Then follow the light."
    assert twin.raw["manifest"]["author"]["backyardURL"] == "https://backyard.ai/hub/user/sample"
    assert set(twin.blobs) == {
        f"{CDIR}/images/portrait.png",
        f"{CDIR}/images/festival.png",
        "scenarios/dusk-background.png",
    }
    assert d.primary.warnings == []


def test_lore_items_are_a_linked_lorebook() -> None:
    d = read(sample(SAMPLE), "maelis.byaf")
    book = d.entities[1]
    assert d.primary.knowledge_refs == [book.id]
    assert isinstance(book.body, LorebookBody)
    assert [(e.id, e.title, [t.text for t in e.triggers or []]) for e in book.body.entries] == [
        ("0", "Crooked Bridge, old bridge", ["Crooked Bridge", "old bridge"]),
        ("1", "lantern oil", ["lantern oil"]),
    ]
    assert book.body.entries[0].content == "The oldest bridge; {{char}} says it listens."
    assert "byaf" in book.original


def test_portrait_is_the_avatar_label_else_the_first_image() -> None:
    data = with_json(
        f"{CDIR}/character.json",
        lambda c: c.update(
            images=[
                {"path": "images/festival.png", "label": ""},
                {"path": "images/portrait.png", "label": "x"},
            ]
        ),
    )
    b = read(data, "m.byaf").primary.body
    assert b.media.portrait.ref == "images/festival.png"  # type: ignore[attr-defined]
    assert b.media.portrait.label is None  # type: ignore[attr-defined]


@given(
    st.lists(
        st.text(alphabet=st.characters(blacklist_characters="\r"), max_size=30).filter(
            lambda t: "<START>" not in t
        ),
        max_size=5,
    )
)
def test_example_blocks_are_an_exact_inverse(texts: list[str]) -> None:
    assert examples_to_messages(examples_from_messages(texts)) == texts


def test_examples_without_start_are_one_block() -> None:
    assert examples_to_messages("{{user}}: hi\n{{char}}: hello") == ["{{user}}: hi\n{{char}}: hello"]
    assert examples_to_messages("\n<START>\na") == ["a"]


# -- round trips -------------------------------------------------------------------------------


def assert_same_archive(a: bytes, b: bytes) -> None:
    ma, mb = members(a), members(b)
    assert names(a) == names(b)
    for n, x in ma.items():
        if n.endswith(".json"):
            assert json.loads(x) == json.loads(mb[n]), n
        else:
            assert x == mb[n], n


def test_unchanged_round_trip_keeps_members_and_trees() -> None:
    d = read(sample(SAMPLE), "m.byaf")
    out = write(d.primary, "byaf", linked=d.entities).data
    assert_same_archive(sample(SAMPLE), out)
    assert members(out) == members(sample(SAMPLE))


def test_an_edit_changes_only_its_member() -> None:
    d = read(sample(SAMPLE), "m.byaf")
    e = edited(d.primary, lambda b: b["identity"].update(description="{{char}} retired to the coast."))
    out = write(e, "byaf", linked=d.entities).data
    before, after = members(sample(SAMPLE)), members(out)
    assert names(out) == names(sample(SAMPLE))
    changed = {
        n
        for n in before
        if (json.loads(before[n]) if n.endswith(".json") else before[n])
        != (json.loads(after[n]) if n.endswith(".json") else after[n])
    }
    assert changed == {f"{CDIR}/character.json"}
    assert json.loads(after[f"{CDIR}/character.json"])["persona"] == "{character} retired to the coast."
    assert read(out, "again.byaf").primary.body == e.body


def test_a_new_greeting_is_a_new_full_scenario_and_a_removed_one_drops_its_file() -> None:
    d = read(sample(SAMPLE), "m.byaf")
    e = edited(
        d.primary,
        lambda b: b["greetings"]["alternateGreetings"].append(
            {"text": "Rain again, {{user}}.", "title": "Rainy day"}
        ),
    )
    out = write(e, "byaf", linked=d.entities).data
    files = members(out)
    manifest = json.loads(files["manifest.json"])
    assert manifest["scenarios"] == [
        "scenarios/dusk.json",
        "scenarios/festival.json",
        "scenarios/scenario3.json",
    ]
    new = json.loads(files["scenarios/scenario3.json"])
    assert new["title"] == "Rainy day"
    assert new["firstMessages"] == [{"characterID": "maelis01", "text": "Rain again, {user}."}]
    # a new scenario copies the first one's settings and has an empty chat
    dusk = json.loads(files["scenarios/dusk.json"])
    for k in ("formattingInstructions", "temperature", "narrative", "exampleMessages", "promptTemplate"):
        assert new[k] == dusk[k]
    assert new["messages"] == [] and "backgroundImage" not in new
    assert read(out, "again.byaf").primary.body == e.body

    e2 = edited(
        read(sample(SAMPLE), "m.byaf").primary, lambda b: b["greetings"].update(alternateGreetings=None)
    )
    out2 = write(e2, "byaf").data
    assert "scenarios/festival.json" not in names(out2)
    assert json.loads(members(out2)["manifest.json"])["scenarios"] == ["scenarios/dusk.json"]


def test_lorebook_edits_and_unique_keys() -> None:
    d = read(sample(SAMPLE), "m.byaf")

    def change(b: dict[str, Any]) -> None:
        b["entries"][1]["content"] = "Seed oil."
        b["entries"].append({"id": "9", "content": "More about oil.", "triggers": [{"text": "lantern oil"}]})

    book = edited(d.entities[1], change)
    out = write(d.primary, "byaf", linked=[d.primary, book]).data
    items = json.loads(members(out)[f"{CDIR}/character.json"])["loreItems"]
    assert items == [
        {"key": "Crooked Bridge, old bridge", "value": "The oldest bridge; {character} says it listens."},
        {"key": "lantern oil", "value": "Seed oil.\n\nMore about oil."},  # BYAF keys are unique
    ]


def test_a_foreign_body_gets_a_fresh_archive() -> None:
    portrait = "data:image/png;base64," + __import__("base64").b64encode(tiny_png()).decode()
    body = CharacterBody.model_validate(
        {
            "identity": {"name": "Vell", "description": "A courier."},
            "greetings": {"firstMessage": "Package!", "alternateGreetings": [{"text": "Late again."}]},
            "examples": {"exampleMessages": "<START>\n{{user}}: Who?\n{{char}}: Can't say."},
            "media": {
                "portrait": {"role": "portrait", "ref": portrait},
                "assets": [{"role": "other", "ref": "https://x.invalid/a.png"}],
            },
            "attribution": {"creator": "Someone"},
        }
    )
    e = CanonicalEntity(kind="character", id="character-0123456789abcdef01234567", body=body)
    out = CODEC.encode(e, EmitContext())
    cid = "c0123456789abcdef01234567"
    assert names(out) == [
        "manifest.json",
        "characters/",
        f"characters/{cid}/",
        f"characters/{cid}/images/",
        f"characters/{cid}/images/image1.png",
        f"characters/{cid}/character.json",
        "scenarios/",
        "scenarios/scenario1.json",
        "scenarios/scenario2.json",
    ]
    files = members(out)
    manifest = json.loads(files["manifest.json"])
    assert manifest["author"] == {"name": "Someone"} and manifest["characters"] == [
        f"characters/{cid}/character.json"
    ]
    character = json.loads(files[f"characters/{cid}/character.json"])
    required = {
        "schemaVersion",
        "id",
        "name",
        "displayName",
        "isNSFW",
        "persona",
        "createdAt",
        "updatedAt",
        "loreItems",
        "images",
    }
    assert set(character) == required
    assert character["images"] == [
        {"path": "images/image1.png", "label": "avatar"}
    ]  # the URL asset cannot be packed
    assert files[f"characters/{cid}/images/image1.png"] == tiny_png()
    s1, s2 = (json.loads(files[f"scenarios/scenario{i}.json"]) for i in (1, 2))
    assert s1["firstMessages"] == [{"characterID": cid, "text": "Package!"}]
    assert s1["exampleMessages"] == [{"characterID": cid, "text": "{user}: Who?\n{character}: Can't say."}]
    assert s2["firstMessages"][0]["text"] == "Late again."
    with zipfile.ZipFile(io.BytesIO(out)) as z:
        assert {i.compress_type for i in z.infolist()} == {zipfile.ZIP_STORED}
    back = read(out, "v.byaf").primary.body
    assert back.identity == body.identity and back.greetings == body.greetings  # type: ignore[attr-defined]
    assert back.examples == body.examples  # type: ignore[attr-defined]


# -- bad input ---------------------------------------------------------------------------------


def test_a_manifest_naming_a_missing_character_file() -> None:
    files = sample_files()
    del files[f"{CDIR}/character.json"]
    with pytest.raises(Malformed, match="missing file") as ei:
        read(rezip(files), "m.byaf")
    assert ei.value.path == "$.characters[0]"


def test_a_manifest_naming_a_missing_scenario() -> None:
    data = with_json("manifest.json", lambda m: m["scenarios"].append("scenarios/ghost.json"))
    with pytest.raises(Malformed, match="missing file") as ei:
        read(data, "m.byaf")
    assert ei.value.path == "$.scenarios[2]"


def test_a_character_naming_a_missing_image() -> None:
    data = with_json(
        f"{CDIR}/character.json", lambda c: c["images"].append({"path": "images/ghost.png", "label": ""})
    )
    with pytest.raises(Malformed, match="missing image") as ei:
        read(data, "m.byaf")
    assert ei.value.path == "$.images[2].path"


def test_an_image_path_escaping_the_character_folder() -> None:
    data = with_json(
        f"{CDIR}/character.json", lambda c: c["images"].append({"path": "../../manifest.json", "label": ""})
    )
    with pytest.raises(Malformed, match="unsafe"):
        read(data, "m.byaf")


def test_a_missing_background_image() -> None:
    files = sample_files()
    del files["scenarios/dusk-background.png"]
    with pytest.raises(Malformed, match="background"):
        read(rezip(files), "m.byaf")


def test_two_characters_are_unsupported_and_bad_paths_malformed() -> None:
    data = with_json("manifest.json", lambda m: m["characters"].append("characters/b/character.json"))
    with pytest.raises(Unsupported):
        read(data, "m.byaf")
    data = with_json("manifest.json", lambda m: m.update(characters=["elsewhere/character.json"]))
    with pytest.raises(Malformed, match="not characters/"):
        CODEC.decode(Sniff(data, "m.byaf"))


def test_broken_json_members_are_malformed_and_name_the_member() -> None:
    files = sample_files()
    files["manifest.json"] = b"{nope"
    with pytest.raises(Malformed, match=r"manifest\.json"):
        read(rezip(files), "m.byaf")
    data = with_json(f"{CDIR}/character.json", lambda c: c.update(persona=["x"]))
    with pytest.raises(Malformed, match=r"character\.json") as ei:
        read(data, "m.byaf")
    assert ei.value.path == "$.persona"
    data = with_json("scenarios/dusk.json", lambda s: s.update(firstMessages=[{"text": True}]))
    with pytest.raises(Malformed) as ei:
        read(data, "m.byaf")
    assert ei.value.path == "$.firstMessages[0].text"
    assert ei.value.message.endswith(": expected a string, found a boolean")


def test_a_folder_that_differs_from_the_id_is_a_warning() -> None:
    data = with_json(f"{CDIR}/character.json", lambda c: c.update(id="other"))
    assert read(data, "m.byaf").primary.warnings == [
        "character id 'other' differs from its folder 'maelis01'"
    ]


# -- corpus ------------------------------------------------------------------------------------


@pytest.mark.parametrize("rel,fmt", expect_rows("byaf"))
def test_corpus_detects_and_round_trips(corpus: Path, rel: str, fmt: str) -> None:
    data = (corpus / rel).read_bytes()
    d = read(data, rel)
    assert d.primary.source.format == fmt  # type: ignore[union-attr]
    out = write(d.primary, fmt, linked=d.entities).data
    assert_same_archive(data, out)
    # Backyard writes JSON.stringify(tree, null, 2): the re-written JSON members are byte-identical
    assert members(out) == members(data)


def test_corpus_archive_three_has_two_scenarios(corpus: Path) -> None:
    d = read((corpus / "backyard/byaf/test-archive-3.byaf").read_bytes(), "3.byaf")
    b = d.primary.body
    assert b.identity.name == "Test Bot" and b.identity.nickname == "TestBot"  # type: ignore[attr-defined]
    assert [g.text for g in b.greetings.alternateGreetings] == ["Hello, I am a test bot!"]  # type: ignore[attr-defined]
    assert len(b.media.assets) == 2  # type: ignore[attr-defined]
