"""Every format bunzai reads and writes, declared once (``core.format.Format``).

A row says what a format is (id, kind, app, label, suffixes, export suffix, tie-break priority)
and where its detector and its codec live, as ``"module:name"`` below ``bunzai_codecs.formats``.
The registry lists and detects from these rows without loading any codec: a detector module
(``<app>/detect.py``) imports no canonical model. The codec class named here takes the row's
fields when it is created, so a codec module declares only its id.

Every app that writes Tavern cards detects through the lineage's one detector, a
``tavern.detect.CardDetector`` built here from the app's data: the mark its dialect leaves on a card
(``CardMark``: which ``extensions`` keys, of which JSON type) and the scorer of its own file (an
envelope or a zip), if any. A new Tavern card app is its dialect and codec class
(``tavern/card.py``) plus a row here.

Priorities: ``vaud-json`` (100) is asked first; Lumiverse's card (10) before the other Tavern card
codecs; SillyTavern's flat preset kinds (-1) after ``sillytavern-preset``, which keeps another
app's linked preset; ``novelai-story`` (-1, read-only) after ``novelai-lorebook``.
"""

from __future__ import annotations

from bunzai_codecs.core.claims import Claims
from bunzai_codecs.core.format import Format
from bunzai_codecs.formats.sillytavern.detect import PRESET_SIGNAL_KEYS
from bunzai_codecs.formats.tavern.detect import CardDetector, CardMark

JSON_PNG = (".json", ".png")
MARINARA = (".marinara.json", ".json")

#: the Tavern card lineage's apps: what marks a card as theirs, what scores their own file
TAVERN_CARD = CardDetector()
#: RoleCall: an ``extensions.rolecall`` object (its ``type: "persona"`` is a rolecall-persona card);
#: only RoleCall writes that key, so the mark is certain
ROLECALL_CARD = CardDetector(CardMark.of({"rolecall": dict}, unless={"type": "persona"}, score=1.0))
#: Lumiverse: its bare ``extensions`` keys (docs/formats/lumiverse.md#character); its zip is scored by its listing
LUMIVERSE_CARD = CardDetector(
    CardMark.of(
        {
            "expressions": dict,
            "expression_groups": dict,
            "alternate_fields": dict,
            "lumiverse_image_gen_lora": dict,
            "alternate_avatars": list,
            "world_book_ids": list,
            "databank_ids": list,
            "alternate_character_name": str,
            "ttsVoice": object,
        }
    ),
    file="lumiverse.detect:archive",
)
#: Marinara: its ``marinara_character`` envelope, nothing else
MARINARA_CARD = CardDetector(file="marinara.detect:character")

# What each detector can claim (``Format.claims``, ``core.claims``): the features an input must show
# for the detector to score it above 0, read off the detector. A row without claims is asked about
# every input; one whose claims leave out an input its detector scores breaks detection, which the
# test suite catches (``basecache.CHECK``, tests/core/test_detect_index.py).

#: a Tavern card (the generic ``CardDetector``): a PNG with a card chunk, a JSON card (``spec``) or
#: a flat CCv1 object (``name``)
CARD_CLAIMS = Claims.of(png_texts=("chara", "ccv3"), json_keys=("spec", "name"))
#: a Tavern card carrying an app's ``CardMark`` in its ``extensions`` (``tavern.png.card_extensions``:
#: a JSON card's ``spec``, a flat card's ``extensions``), in a JSON file or either PNG card chunk
MARKED_CLAIMS = Claims.of(png_texts=("chara", "ccv3"), json_keys=("spec", "extensions"))
#: an app's own JSON file, told by its ``type``
TYPED = Claims.of(json_keys=("type",))
#: a YAML file: text that is none of JSON, PNG and zip (``core.yamlio.looks_like_yaml``)
YAML_CLAIMS = Claims.of(other_bytes=True)


#: a file set holding a YAML file (``core/fileset``: a card folder, a character with its picture),
#: at any depth (a user's zip of the folder); a zip whose listing fails within the default bounds
#: may list within the file sets' own (``fileset.LIMITS``)
def _yaml_in_zip(*suffixes: str) -> Claims:
    return Claims.of(zip_suffixes=suffixes, zip_unreadable=True)


def _st_flat(name: str, label: str, codec: str, *signal: str) -> Format:
    """A SillyTavern flat preset kind ``sillytavern-<name>``: detected by
    ``sillytavern.detect:<name>``, asked only about JSON with one of its ``signal`` keys, and after
    ``sillytavern-preset`` on a tie (priority -1)."""
    return Format(
        f"sillytavern-{name}",
        "preset",
        "sillytavern",
        f"SillyTavern {label}",
        f"sillytavern.{codec}",
        f"sillytavern.detect:{name}",
        priority=-1,
        claims=Claims.of(json_keys=signal),
    )


# fmt: off
FORMATS: tuple[Format, ...] = (
    Format("agnai", "character", "agnai", "Agnai character",
           "agnai.codec:AgnaiCharacterCodec", "agnai.detect:character",
           claims=Claims.of(json_keys=("kind",))),
    Format("agnai-lorebook", "lorebook", "agnai", "Agnai memory book",
           "agnai.lorebook:AgnaiLorebookCodec", "agnai.detect:lorebook",
           claims=Claims.of(json_keys=("kind", "entries"))),
    Format("vaud-json", "character", "vaud", "bunzai canonical (vaud-json)",
           "vaud.codec:VaudJsonCodec", "vaud.detect:entity", (".vaud.json", ".jsonl"), ".vaud.json",
           priority=100, kinds=frozenset({"character", "lorebook", "persona", "preset", "regex"}),
           kind_reader="vaud.detect:kind_of",
           claims=Claims.of(json_keys=("schemaVersion",), json_unparsed=True)),
    Format("marinara-character", "character", "marinara",
           "Marinara-Engine character (marinara_character export)",
           "marinara.character:MarinaraCharacterCodec", MARINARA_CARD,
           MARINARA, ".marinara.json",
           claims=TYPED),
    Format("marinara-lorebook", "lorebook", "marinara", "Marinara-Engine lorebook",
           "marinara.lorebook:MarinaraLorebookCodec", "marinara.detect:lorebook", MARINARA, ".marinara.json",
           claims=TYPED),
    Format("marinara-persona", "persona", "marinara", "Marinara-Engine persona",
           "marinara.persona:MarinaraPersonaCodec", "marinara.detect:persona", MARINARA, ".marinara.json",
           claims=Claims.of(json_keys=("type", "personality"))),
    Format("marinara-preset", "preset", "marinara", "Marinara-Engine prompt preset",
           "marinara.preset:MarinaraPresetCodec", "marinara.detect:preset", MARINARA, ".marinara.json",
           claims=TYPED),
    Format("marinara-regex", "regex", "marinara", "Marinara-Engine regex scripts",
           "marinara.regex:MarinaraRegexCodec", "marinara.detect:regex",
           claims=Claims.of(json_keys=("kind",), json_array=True)),
    Format("marinara-story-bundle", "lorebook", "marinara", "Marinara-Engine story bundle (references only)",
           "marinara.story_bundle:MarinaraStoryBundleCodec", "marinara.detect:story_bundle",
           (".marinara.json",), ".marinara.json",
           claims=TYPED),
    Format("backyard", "character", "backyard", "Backyard.ai / Faraday legacy character PNG (EXIF)",
           "backyard.legacy:BackyardCodec", "backyard.detect:legacy", (".png",), ".png",
           claims=Claims.of(png_chunks=(b"eXIf",))),
    Format("byaf", "character", "backyard", "Backyard.ai archive (.byaf)",
           "backyard.byaf:ByafCodec", "backyard.detect:byaf", (".byaf",), ".byaf",
           claims=Claims.of(zip_members=("manifest.json",), zip_unreadable=True)),
    Format("card-folder", "character", "bunzai",
           "a character card as a folder (card.yaml, Markdown texts, lorebook/, regex/, assets/)",
           "folder.codec:CardFolderCodec", "folder.detect:card_folder", ("/", ".zip"), ".zip",
           claims=YAML_CLAIMS | _yaml_in_zip(".yaml")),
    Format("chub-lorebook", "lorebook", "chub", "Chub lorebook (character_book JSON)",
           "chub.lorebook:ChubLorebook", "chub.detect:lorebook",
           claims=Claims.of(json_keys=("entries",))),
    Format("kobold-save", "lorebook", "kobold",
           "KoboldAI Lite / KoboldCpp / KoboldAI client story save (world info, memory, author's note)"
           " and Lite's world info export", "kobold.save:KoboldSaveCodec", "kobold.detect:save",
           claims=Claims.of(json_keys=("gamestarted",), json_array=True)),
    Format("lumiverse", "character", "lumiverse",
           "Lumiverse character (CCv3 + bare extension keys; JSON, PNG, zip with lumiverse_modules.json)",
           "lumiverse.card:LumiverseCard", LUMIVERSE_CARD, (".json", ".png", ".charx", ".zip"),
           priority=10,
           claims=MARKED_CLAIMS | Claims.of(zip_members=("lumiverse_modules.json",))),
    Format("lumiverse-persona", "persona", "lumiverse", "Lumiverse persona (account object)",
           "lumiverse.persona:LumiversePersona", "lumiverse.detect:persona",
           claims=Claims.of(json_keys=("subjective_pronoun",))),
    Format("lumiverse-preset", "preset", "lumiverse", "Lumiverse preset (lumiverse_preset wrapper)",
           "lumiverse.preset:LumiversePreset", "lumiverse.detect:preset",
           claims=TYPED),
    Format("lumiverse-regex", "regex", "lumiverse", "Lumiverse regex scripts",
           "lumiverse.regex:LumiverseRegex", "lumiverse.detect:regex",
           claims=TYPED),
    Format("novelai-lorebook", "lorebook", "novelai",
           "NovelAI lorebook (.lorebook, PNG naidata card, .scenario book)",
           "novelai.lorebook:NovelAILorebookCodec", "novelai.detect:lorebook",
           (".lorebook", ".json", ".png", ".scenario", ".scenario.json"), ".lorebook",
           claims=Claims.of(json_keys=("lorebookVersion", "scenarioVersion"), png_texts=("naidata",))),
    Format("novelai-preset", "preset", "novelai", "NovelAI text generation preset (.preset)",
           "novelai.preset:NovelAIPresetCodec", "novelai.detect:preset", (".preset", ".json"), ".preset",
           claims=Claims.of(json_keys=("presetVersion",))),
    Format("novelai-story", "lorebook", "novelai",
           "NovelAI story (.story): its lorebook, memory, author's note and ephemeral entries; the story"
           " text kept in escrow", "novelai.story:NovelAIStoryCodec", "novelai.detect:story",
           (".story",), ".story", priority=-1, read_only=True,
           claims=Claims.of(json_keys=("storyContainerVersion",))),
    Format("pygmalion", "character", "pygmalion", "Pygmalion / oobabooga classic character (JSON, PNG)",
           "pygmalion.codec:PygmalionCodec", "pygmalion.detect:character", JSON_PNG,
           claims=Claims.of(json_keys=("char_persona", "char_greeting"), png_texts=("chara",))),
    Format("risu", "character", "risu", "RisuAI character (.charx, JPEG+ZIP)",
           "risu.charx:RisuCharxCodec", "risu.detect:charx", (".charx", ".jpeg", ".jpg"), ".charx",
           claims=Claims.of(zip_members=("card.json",))),
    Format("risu-lorebook", "lorebook", "risu", "RisuAI lorebook export",
           "risu.lorebook:RisuLorebookCodec", "risu.detect:lorebook", (".json", ".lorebook"),
           claims=Claims.of(json_keys=("type", "entries"), json_array=True)),
    Format("risu-module", "regex", "risu", "RisuAI module (.risum, RisuRealm module JSON)",
           "risu.module:RisuModuleCodec", "risu.detect:module", (".risum", ".json"), ".risum",
           claims=Claims.of(json_keys=("type",), magic=(b"\x6f\x00",))),
    Format("risu-persona", "persona", "risu", "RisuAI persona PNG",
           "risu.persona:RisuPersonaCodec", "risu.detect:persona", (".png",), ".png",
           claims=Claims.of(png_texts=("persona",))),
    Format("risu-preset", "preset", "risu", "RisuAI preset (.risup, .risupreset, botPreset JSON)",
           "risu.preset:RisuPresetCodec", "risu.detect:preset", (".risup", ".risupreset", ".json"), ".risup",
           claims=Claims.of(json_keys=("formatingOrder", "PresensePenalty"), other_bytes=True)),
    Format("risu-regex", "regex", "risu", "RisuAI regex scripts (regexscript export)",
           "risu.regex:RisuRegexCodec", "risu.detect:regex",
           claims=Claims.of(json_keys=("type",), json_array=True)),
    Format("rolecall", "character", "rolecall",
           "RoleCall character (CCv2/v3 + extensions.rolecall; JSON, PNG)",
           "rolecall.card:RoleCallCard", ROLECALL_CARD, JSON_PNG,
           claims=MARKED_CLAIMS),
    Format("rolecall-lorebook", "lorebook", "rolecall", "RoleCall lorebook export (v1)",
           "rolecall.lorebook:RoleCallLorebook", "rolecall.detect:lorebook",
           claims=Claims.of(json_keys=("schemaVersion",))),
    Format("rolecall-persona", "persona", "rolecall",
           "RoleCall persona (rolecall_persona JSON/PNG, persona card)",
           "rolecall.persona:RoleCallPersona", "rolecall.detect:persona", JSON_PNG,
           claims=Claims.of(png_texts=("rcpersona", "chara", "ccv3"), json_keys=("data", "persona", "spec", "extensions"))),
    Format("rolecall-preset", "preset", "rolecall",
           "RoleCall preset (ST chat-completion preset + RoleCall keys)",
           "rolecall.preset:RoleCallPreset", "rolecall.detect:preset",
           claims=Claims.of(json_keys=("macro_engine_yaml", "choice_groups", "extensions"))),
    Format("rolecall-regex", "regex", "rolecall", "RoleCall regex script",
           "rolecall.regex:RoleCallRegex", "rolecall.detect:regex",
           claims=Claims.of(json_keys=("rules",))),
    Format("sillytavern", "character", "sillytavern", "SillyTavern / Tavern card (CCv1-v3 JSON, PNG, APNG)",
           "sillytavern.card:SillyTavernCard", TAVERN_CARD, (".png", ".json", ".apng"),
           claims=CARD_CLAIMS),
    _st_flat("context", "context template (story string)", "formatting:SillyTavernContextCodec", "story_string"),
    _st_flat("instruct", "instruct template", "formatting:SillyTavernInstructCodec", "input_sequence"),
    _st_flat("kobold", "KoboldAI preset (samplers)", "samplers:SillyTavernKoboldCodec", "temp"),
    Format("sillytavern-lorebook", "lorebook", "sillytavern", "SillyTavern world info",
           "sillytavern.lorebook:SillyTavernLorebookCodec", "sillytavern.detect:lorebook",
           claims=Claims.of(json_keys=("entries", "spec"))),
    _st_flat("master", "Advanced Formatting master export", "master:SillyTavernMasterCodec",
             "instruct", "context", "sysprompt", "preset", "reasoning", "srw"),
    _st_flat("novel", "NovelAI preset (samplers)", "samplers:SillyTavernNovelCodec", "temperature"),
    Format("sillytavern-persona", "persona", "sillytavern", "SillyTavern personas (backup or settings.json)",
           "sillytavern.persona:SillyTavernPersonaCodec", "sillytavern.detect:persona",
           claims=Claims.of(json_keys=("personas", "power_user"))),
    Format("sillytavern-preset", "preset", "sillytavern", "SillyTavern chat-completion preset",
           "sillytavern.preset:SillyTavernPresetCodec", "sillytavern.detect:preset",
           claims=Claims.of(json_keys=("version", "prompts", *PRESET_SIGNAL_KEYS))),
    _st_flat("reasoning", "reasoning template", "formatting:SillyTavernReasoningCodec", "separator"),
    Format("sillytavern-regex", "regex", "sillytavern", "SillyTavern regex scripts",
           "sillytavern.regex:SillyTavernRegex", "sillytavern.detect:regex",
           claims=Claims.of(json_keys=("findRegex",), json_array=True)),
    _st_flat("sysprompt", "system prompt template", "formatting:SillyTavernSyspromptCodec", "content"),
    _st_flat("textgen", "Text Completion preset (samplers)", "samplers:SillyTavernTextgenCodec", "temp"),
    Format("textgen-webui", "character", "textgen",
           "text-generation-webui character (YAML, with the picture beside it)",
           "textgen.character:TextgenCharacterCodec", "textgen.detect:character",
           (".yaml", ".yml", ".zip"), ".yaml",
           claims=YAML_CLAIMS | _yaml_in_zip(".yaml", ".yml")),
    Format("textgen-webui-instruct", "preset", "textgen", "text-generation-webui instruction template (YAML)",
           "textgen.instruct:TextgenInstructCodec", "textgen.detect:instruct", (".yaml", ".yml"), ".yaml",
           claims=YAML_CLAIMS),
    Format("textgen-webui-preset", "preset", "textgen", "text-generation-webui generation preset (YAML)",
           "textgen.preset:TextgenPresetCodec", "textgen.detect:preset", (".yaml", ".yml"), ".yaml",
           claims=YAML_CLAIMS),
    Format("voxta", "character", "voxta", "Voxta package (.voxpkg)",
           "voxta.package:VoxtaCodec", "voxta.detect:package", (".voxpkg",), ".voxpkg",
           claims=Claims.of(zip_folders=("Characters",), zip_unreadable=True, suffixes=(".voxpkg",))),
)
# fmt: on

#: the declarations by format id
BY_ID: dict[str, Format] = {f.id: f for f in FORMATS}
