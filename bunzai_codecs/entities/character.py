"""The canonical character: a roleplay character card, whatever app wrote it.

Grouped by meaning: ``identity`` (who), ``persona`` (how it behaves and looks), ``prompts`` (text it
adds to the prompt), ``greetings``, ``examples``, ``media``, ``attribution``, ``discovery``,
``settings``, ``bias``, ``behavior`` (Risu script data, never run), ``worldName`` and an open
``extensions`` bag. Embedded lorebooks and regex scripts are not stored here: they decode into their
own entities, linked from the character by ``links.knowledgeRefs``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from bunzai_codecs.entities.base import Body, MessageRole, Num, Opaque, known

#: what a media asset is for (CCv3 ``icon`` is ``portrait``; unmapped asset types are ``other``)
MediaRole = Annotated[str, known("portrait", "emotion", "outfit", "pose", "background", "other")]

#: Agnai persona encodings: plain text, W++, square-bracket (SBF), Boostyle, NovelAI attributes
PersonaKind = Annotated[str, known("text", "wpp", "sbf", "boostyle", "attributes")]

#: text-to-speech services (Agnai ``service``, Risu VITS)
VoiceProvider = Annotated[str, known("elevenlabs", "webspeechsynthesis", "novel", "agnaistic", "vits")]

#: where a depth injection came from, so it returns to the same slot on export
InjectionOrigin = Annotated[str, known("depth_prompt", "insert")]

#: which visual the creator chose for the character (Agnai ``visualType``)
VisualKind = Annotated[str, known("avatar", "sprite")]

#: Risu side-screen mode
RisuViewScreen = Annotated[str, known("none", "emotion", "imggen", "vn")]

#: Risu pre-built asset style
PrebuiltAssetStyle = Annotated[str, known("", "dynamic")]


# --- identity -------------------------------------------------------------------------------


class CharacterIdentity(Body):
    """Who the character is: its name and main definition."""

    name: str = ""
    """The character's name, substituted for ``{{char}}`` (unless ``nickname`` is set). Empty when
    the source has none."""

    nickname: str | None = None
    """A name that replaces ``name`` in ``{{char}}`` without renaming the card (CCv3 ``nickname``)."""

    description: str | None = None
    """The main character definition sent to the model (CCv2/v3 ``description``). Agnai's own
    ``description`` is creator notes and maps to ``attribution.creatorNotes`` instead."""

    characterVersion: str | None = None
    """The creator's version label, verbatim (Risu may write the literal string ``"undefined"``)."""

    culture: str | None = None
    """Language tag such as ``en-us`` that picks the default language and voice (Agnai only)."""


# --- persona --------------------------------------------------------------------------------


class StructuredPersona(Body):
    """An attribute-map persona (Agnai): the encoding kind plus the attributes, kept verbatim."""

    kind: PersonaKind
    """The encoding: ``text`` (the text lives in ``persona.personality``), ``wpp``, ``sbf``,
    ``boostyle`` or ``attributes``. Unknown kinds are kept."""

    attributes: dict[str, list[str]] | None = None
    """Attribute name to its values, in source order. Absent for the ``text`` kind."""


class Voice(Body):
    """The text-to-speech voice chosen for the character (the selection, never audio data)."""

    provider: VoiceProvider
    """The TTS service (Agnai ``service``; ``vits`` for a Risu VITS voice)."""

    voiceId: str | None = None
    """The service's voice identifier."""

    rate: Num | None = None
    """Speaking rate as the service defines it (1 = normal speed). Absent = service default."""

    pitch: Num | None = None
    """Voice pitch as the service defines it. Absent = service default."""

    disabled: bool | None = None
    """True when the creator switched the voice off but kept its settings (Agnai ``voiceDisabled``).
    Absent = enabled."""

    extras: Opaque | None = None
    """Service-specific settings with no field above (ElevenLabs ``stability``, a ``seed``, the Risu
    VITS configuration), verbatim."""


class ImagePromptRow(Body):
    """One labelled row of image-generation prompt text (Risu ``sdData`` pair)."""

    label: str
    """The row label, e.g. ``always``, ``negative`` or ``current situation``."""

    value: str
    """The prompt text of the row."""


class ImagePrompt(Body):
    """Text the creator wrote to steer image generation of this character (no sampler settings)."""

    prefix: str | None = None
    """Text put before the generated image prompt (ST ``sd_character_prompt.positive``, Agnai
    ``imageSettings.prefix``, Risu ``newGenData.prompt``)."""

    suffix: str | None = None
    """Text put after the generated image prompt."""

    negative: str | None = None
    """Negative prompt: what the image must not show."""

    template: str | None = None
    """Prompt template the image prompt is built from (Agnai)."""

    instructions: str | None = None
    """Free-form instructions for the image prompt writer (Risu ``newGenData.instructions``)."""

    emotionInstructions: str | None = None
    """Instructions for generating emotion images (Risu ``newGenData.emotionInstructions``)."""

    rows: list[ImagePromptRow] | None = None
    """Labelled prompt rows in source order (Risu ``sdData``)."""


class CharacterPersona(Body):
    """How the character thinks, where it is, how it looks and sounds."""

    personality: str | None = None
    """Personality summary (CCv2 ``personality``; the text of an Agnai ``text`` persona)."""

    structured: StructuredPersona | None = None
    """Attribute-map persona (Agnai ``persona``). Absent when the source has none."""

    scenario: str | None = None
    """The situation the roleplay starts in."""

    appearance: str | None = None
    """Physical description, mainly for image generation (Agnai ``appearance``, Marinara
    ``extensions.appearance``)."""

    voice: Voice | None = None
    """Text-to-speech voice. Absent = no voice configured."""

    imagePrompt: ImagePrompt = Field(default_factory=ImagePrompt)
    """Image-generation prompt text; empty when the source has none."""


# --- prompts --------------------------------------------------------------------------------


class DepthInjection(Body):
    """Text inserted into the chat history at a fixed depth (ST Character's Note, Agnai ``insert``)."""

    text: str
    """The injected text. An empty text means no injection."""

    depth: Num
    """Messages counted from the end of the chat; 0 = after the last message."""

    role: MessageRole | None = None
    """Role of the injected message. Absent = ``system``."""

    origin: InjectionOrigin | None = None
    """Source mechanism: ``depth_prompt`` (ST/Risu/Marinara) or ``insert`` (Agnai). Absent = unknown."""

    enabled: bool | None = None
    """False when the creator switched the injection off. Absent = enabled."""


class CharacterPrompts(Body):
    """Prompt text the character adds to or overrides in the user's prompt setup."""

    systemPrompt: str | None = None
    """Replaces the user's main system prompt; ``{{original}}`` stands for the replaced text. Empty
    or absent = no override."""

    postHistoryInstructions: str | None = None
    """Replaces the user's post-history (jailbreak) instructions; ``{{original}}`` as above."""

    prefill: str | None = None
    """Text the model reply is started with. No current format writes it for a character."""

    depthInjections: list[DepthInjection] | None = None
    """Texts inserted at a depth in the chat, in source order."""

    additionalText: str | None = None
    """Plain text appended to the prompt (Risu ``additionalText``), not a depth injection."""


# --- greetings and examples -----------------------------------------------------------------


class Greeting(Body):
    """One greeting message, optionally titled."""

    text: str
    """The greeting message."""

    title: str | None = None
    """A creator-given title for the greeting. Absent = untitled."""


class CharacterGreetings(Body):
    """The messages a chat can open with."""

    firstMessage: str | None = None
    """The character's first message (``first_mes``, Agnai ``greeting``)."""

    alternateGreetings: list[Greeting] | None = None
    """Alternative first messages (swipes), in order. Absent differs from an empty list."""

    groupOnlyGreetings: list[Greeting] | None = None
    """First messages used only in group chats (CCv3). Absent differs from an empty list."""


class CharacterExamples(Body):
    """Example dialogue that shows the model the character's voice."""

    exampleMessages: str | None = None
    """Example dialogue, verbatim, blocks separated by ``<START>`` (``mes_example``, Agnai
    ``sampleChat``)."""


# --- media ----------------------------------------------------------------------------------


class MediaAsset(Body):
    """An image or other media file of a character, persona or lorebook. The body never holds the
    bytes: an asset the file carried has a ``sha256`` digest, and the bytes are in the entity's media
    store under that digest (vaud-json writes the store as its ``media`` section); an asset known
    only by reference (a web URL, a path into an app's folders) has a ``ref`` and no digest."""

    role: MediaRole
    """What the asset is for: ``portrait``, ``emotion``, ``outfit``, ``pose``, ``background`` or
    ``other``. Unknown roles are kept."""

    ref: str
    """Where the source kept the bytes, verbatim: an http(s) URL, ``embeded://path``, ``__asset:N``,
    ``ccdefault:`` (a PNG card's own image), an archive or app path; for an inline ``data:`` URL only
    its header (``data:image/png;base64,``): the payload is in the media store under ``sha256``."""

    name: str | None = None
    """The asset's name (CCv3 ``name``: ``main`` marks the main icon, emotion assets are named
    after the emotion)."""

    label: str | None = None
    """Human label of a variant (expression, outfit, pose)."""

    primary: bool | None = None
    """True for the main asset of its role (the ``main`` icon among several). Absent = not marked."""

    mime: str | None = None
    """Media type such as ``image/png``: sniffed from the bytes when the file carried them, else the
    one the source states. Absent = unknown."""

    sha256: str | None = None
    """Lowercase hex SHA-256 of the bytes, the key of the entity's media store. Absent = the file
    did not carry the bytes (a URL or path only)."""

    size: int | None = None
    """Length of the bytes, with ``sha256``."""


class Sprite(Body):
    """An Agnai composite avatar recipe: chosen parts plus colours (the recipe, not the image)."""

    parts: dict[str, str]
    """Body part slot (``body``, ``eyes``, ``front_hair``...) to the chosen part id."""

    gender: str | None = None
    """Sprite base (Agnai ``male`` or ``female``)."""

    eyeColor: str | None = None
    """Eye colour, a CSS hex string."""

    bodyColor: str | None = None
    """Skin colour, a CSS hex string."""

    hairColor: str | None = None
    """Hair colour, a CSS hex string."""


class CharacterMedia(Body):
    """The character's images and other media."""

    portrait: MediaAsset | None = None
    """The main image (the PNG card image, the CCv3 ``main`` icon, Agnai ``avatar``)."""

    assets: list[MediaAsset] | None = None
    """Other media (emotions, backgrounds, extra icons), in source order."""

    sprite: Sprite | None = None
    """Composite avatar recipe (Agnai ``sprite``). Absent = none."""

    visualKind: VisualKind | None = None
    """Which visual the app shows: ``avatar`` (the portrait) or ``sprite``. Absent = avatar."""


# --- attribution, discovery -----------------------------------------------------------------


class CharacterAttribution(Body):
    """Who made the card, notes for its users, its origin and dates."""

    creator: str | None = None
    """The card's author."""

    creatorNotes: str | None = None
    """Notes for people using the card, never sent to the model (``creator_notes``; Agnai
    ``description``)."""

    creatorNotesMultilingual: dict[str, str] | None = None
    """Creator notes per language, ISO 639-1 code to text (CCv3)."""

    source: list[str] | None = None
    """Origin ids or URLs of the card, oldest first (CCv3 ``source``)."""

    license: str | None = None
    """License of the card, e.g. ``CC BY-NC-SA 4.0`` (Risu)."""

    createdAt: Num | None = None
    """Creation time, unix seconds UTC (millisecond and ISO sources are converted). Absent = unknown."""

    updatedAt: Num | None = None
    """Last modification time, unix seconds UTC. Absent = unknown."""


class CharacterDiscovery(Body):
    """What helps people find the card."""

    tags: list[str] | None = None
    """Tags, in source order. Never sent to the model."""


# --- settings, bias, behavior ---------------------------------------------------------------


class RisuSettings(Body):
    """RisuAI display and behaviour toggles the creator set on the card."""

    viewScreen: RisuViewScreen | None = None
    """Side screen mode: ``none``, ``emotion``, ``imggen`` or ``vn``."""

    largePortrait: bool | None = None
    """Show the portrait large."""

    inlayViewScreen: bool | None = None
    """Show the side screen inlaid in the chat."""

    utilityBot: bool | None = None
    """The card is a utility bot, not a roleplay character."""

    lorePlus: bool | None = None
    """Use Risu's Lore+ lorebook mode."""


class CharacterSettings(Body):
    """Settings the creator tuned on the character itself."""

    talkativeness: Num | None = None
    """How often the character speaks in a group chat, 0..1 (ST default 0.5 when absent)."""

    risu: RisuSettings = Field(default_factory=RisuSettings)
    """RisuAI toggles; empty when the source is not Risu."""

    responseSchema: Opaque | None = None
    """Structured-output definition the replies must follow (Agnai ``json``), verbatim."""


class PhraseBias(Body):
    """A bias on how likely the model is to produce a phrase."""

    phrase: str
    """The biased text."""

    weight: Num
    """Bias strength: positive makes the phrase more likely, negative less likely."""


class PrebuiltAsset(Body):
    """Risu pre-built asset settings (data only)."""

    command: bool | str | None = None
    """Pre-built asset command switch, verbatim: a boolean, or the empty string Risu writes."""

    exclude: list[str] | None = None
    """Risu-internal asset paths excluded from the pre-built assets."""

    style: PrebuiltAssetStyle | None = None
    """Asset style: ``""`` or ``dynamic``."""


class CharacterBehavior(Body):
    """Script data a card carries (RisuAI). Carried and editable, never executed by bunzai."""

    triggerScripts: list[Opaque] | None = None
    """Trigger rows (condition/effect scripts, Lua or visual triggers), verbatim, in order."""

    virtualScript: str | None = None
    """Risu virtual script source, verbatim."""

    backgroundHTML: str | None = None
    """HTML Risu injects into the chat background, verbatim."""

    backgroundCSS: str | None = None
    """CSS Risu injects into the chat background, verbatim."""

    defaultVariables: str | None = None
    """Script variables' initial values, ``key=value`` lines, verbatim."""

    moduleToggles: str | None = None
    """Toggle definitions, one ``key=Label[=type[=options]]`` line each, verbatim."""

    privileged: bool | None = None
    """True when the card asks for Risu's low-level script access (``lowLevelAccess``): a warning
    marker, never a permission."""

    prebuiltAsset: PrebuiltAsset = Field(default_factory=PrebuiltAsset)
    """Pre-built asset settings; empty when the source has none."""


# --- the body -------------------------------------------------------------------------------


class CharacterBody(Body):
    """A roleplay character: definition, greetings, media and creator data, app-independent."""

    identity: CharacterIdentity = Field(default_factory=CharacterIdentity)
    """Name and main definition."""

    persona: CharacterPersona = Field(default_factory=CharacterPersona)
    """Personality, scenario, looks and voice."""

    prompts: CharacterPrompts = Field(default_factory=CharacterPrompts)
    """Prompt overrides and injections."""

    greetings: CharacterGreetings = Field(default_factory=CharacterGreetings)
    """First messages."""

    examples: CharacterExamples = Field(default_factory=CharacterExamples)
    """Example dialogue."""

    media: CharacterMedia = Field(default_factory=CharacterMedia)
    """Portrait, other assets and avatar recipe."""

    attribution: CharacterAttribution = Field(default_factory=CharacterAttribution)
    """Author, notes, origin, license and dates."""

    discovery: CharacterDiscovery = Field(default_factory=CharacterDiscovery)
    """Tags."""

    settings: CharacterSettings = Field(default_factory=CharacterSettings)
    """Settings tuned on the character (group talkativeness, Risu toggles, response schema)."""

    bias: list[PhraseBias] | None = None
    """Phrase biases (Risu ``bias``), in source order."""

    behavior: CharacterBehavior = Field(default_factory=CharacterBehavior)
    """Script data (Risu); never executed. The card's regex scripts are a linked regex set."""

    worldName: str | None = None
    """Name of a lorebook (ST world) the app loads with the character, linked by name only."""

    extensions: Opaque = Field(default_factory=dict)
    """Extension keys no section claims (``data.extensions`` minus mapped keys), verbatim. Empty
    when there are none."""
