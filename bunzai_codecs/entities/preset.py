"""The canonical prompt preset: ordered prompts, groups, choices and generation settings (CANONICAL.md §5).

Models a chat-completion preset: the prompts assembled into a request (in list order), their
folders, the questions a preset asks its user (choices), sampler values in API units, API options,
utility prompts and format templates. Connection data (models, URLs, keys) is never canonical. A
preset's regex scripts are a linked regex set, not stored here.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from bunzai_codecs.entities.base import Body, GenerationType, Num, Opaque, known

#: role of a prompt message (open: Risu cache items carry ``all``)
PromptRole = Annotated[str, known("system", "user", "assistant")]

#: where a prompt is placed: in list order, or inside the chat at a depth
PromptPlacement = Annotated[str, known("relative", "in_chat")]

#: app-filled slot of a marker prompt (vocabulary: SillyTavern prompt identifiers)
MarkerSlot = Annotated[
    str,
    known(
        "chatHistory",
        "worldInfoBefore",
        "worldInfoAfter",
        "worldInfo",
        "dialogueExamples",
        "personaDescription",
        "charDescription",
        "chatSummary",
        "authorNote",
        "postHistory",
        "cachePoint",
    ),
]

#: how a choice is answered
ChoiceType = Annotated[str, known("one", "many", "toggle", "input")]

#: requested reasoning effort
ReasoningEffort = Annotated[str, known("minimal", "low", "medium", "high", "xhigh", "maximum")]

#: requested answer verbosity (``auto``: none requested, the provider's default)
Verbosity = Annotated[str, known("auto", "low", "medium", "high")]

#: provider service tier
ServiceTier = Annotated[str, known("flex", "priority")]

#: how ST rewrites the message list before sending it
PromptPostProcessing = Annotated[
    str,
    known("none", "merge", "merge_tools", "semi", "semi_tools", "strict", "strict_tools", "single"),
]

#: how prompt groups are wrapped when assembled
WrapFormat = Annotated[str, known("xml", "markdown", "none")]


class PresetPrompt(Body):
    """One prompt of the preset: a text block, or a marker the app fills (chat history, lore...)."""

    id: str
    """Stable prompt key, verbatim (ST/Marinara ``identifier``; the index for Risu)."""

    name: str = ""
    """Prompt name shown to users."""

    content: str = ""
    """The prompt text, verbatim (macros unresolved). Empty for markers."""

    role: PromptRole | None = None
    """Message role: ``system``, ``user`` or ``assistant`` (Risu ``bot`` is ``assistant``).
    Unknown values are kept. Absent = ``system``."""

    enabled: bool = True
    """False leaves the prompt out of the request."""

    marker: bool = False
    """True when the app fills the prompt itself (see ``markerSlot``)."""

    markerSlot: MarkerSlot | None = None
    """For a marker: what the app puts there (``chatHistory``, ``worldInfoBefore``,
    ``personaDescription``...). Unknown values are kept."""

    systemPrompt: bool | None = None
    """True for an ST built-in prompt (``main``, ``nsfw``, ``jailbreak``...)."""

    placement: PromptPlacement = "relative"
    """``relative``: sent in list order; ``in_chat``: inserted in the chat at ``injectionDepth``."""

    injectionDepth: Num | None = None
    """For ``in_chat``: messages counted from the end of the chat. Absent = 4 (ST default)."""

    injectionOrder: Num | None = None
    """For ``in_chat``: order among prompts at the same depth, lower first. Absent = 100."""

    injectionTrigger: list[GenerationType] | None = None
    """Generation types the prompt is used for. Absent or empty = all."""

    forbidOverrides: bool | None = None
    """True: a character card's prompt overrides cannot replace this prompt."""

    groupId: str | None = None
    """Id of the ``PresetGroup`` holding the prompt. Absent = top level."""

    wrapInXml: bool | None = None
    """Wrap the prompt in an XML tag (Marinara, legacy)."""

    xmlTagName: str | None = None
    """Tag name used by ``wrapInXml``."""

    extras: Opaque | None = None
    """Source fields with no canonical home (Risu ``type2``/``rangeStart``..., Marinara marker
    options), verbatim."""


class PresetGroup(Body):
    """A folder of prompts (Marinara groups)."""

    id: str
    """Stable group id, referenced by ``PresetPrompt.groupId``."""

    name: str = ""
    """Group name; also the wrapper tag name when ``behavior.wrapFormat`` wraps groups."""

    parentGroupId: str | None = None
    """Id of the parent group. Absent = top level."""

    order: Num | None = None
    """Position among sibling groups, lower first."""

    enabled: bool | None = None
    """False leaves the whole group out. Absent = on."""


class ChoiceOption(Body):
    """One answer of a choice."""

    id: str
    """Stable option id (the index for Risu select options)."""

    label: str = ""
    """Answer text shown to the user."""

    value: str | None = None
    """Value stored in the choice's variable when this answer is picked (Risu: the option index
    as a string). Absent = the label."""


class PresetChoice(Body):
    """A question the preset asks its user; the answer fills a variable the prompts read."""

    id: str
    """Stable choice id."""

    key: str | None = None
    """Variable the answer is stored in (Marinara ``variableName``; Risu key, read as
    ``toggle_<key>``)."""

    label: str = ""
    """The question shown to the user."""

    type: ChoiceType
    """``one`` (pick one), ``many`` (pick several), ``toggle`` (on/off) or ``input`` (free text).
    Unknown values are kept."""

    options: list[ChoiceOption] = Field(default_factory=list)
    """Possible answers, in order. Empty for toggles and free text."""

    default: str | list[str] | None = None
    """Preselected answer: a value, or several values for ``many``. Absent = none."""

    separator: str | None = None
    """For ``many``: text joining the picked values."""

    randomPick: bool | None = None
    """True: an answer is picked at random instead of asking."""

    sortOrder: Num | None = None
    """Position among the choices, lower first."""

    extras: Opaque | None = None
    """Source fields with no canonical home (Marinara ``displayMode``, ``optionSort``), verbatim."""


class PresetAttribution(Body):
    """Who made the preset."""

    creator: str | None = None
    """The preset's author (Marinara ``author``)."""


class PresetSamplers(Body):
    """Sampling values in API units (Risu's x100 integers are converted). Absent = not sent."""

    temperature: Num | None = None
    """Sampling temperature."""

    topP: Num | None = None
    """Nucleus sampling: cumulative probability kept, 0..1."""

    topK: Num | None = None
    """Only the K most likely tokens are kept (0 = off)."""

    minP: Num | None = None
    """Minimum probability relative to the top token, 0..1."""

    topA: Num | None = None
    """Top-A sampling threshold."""

    repetitionPenalty: Num | None = None
    """Repetition penalty (1 = off)."""

    frequencyPenalty: Num | None = None
    """Frequency penalty, API units (OpenAI -2..2)."""

    presencePenalty: Num | None = None
    """Presence penalty, API units (OpenAI -2..2)."""

    maxContext: Num | None = None
    """Context window, in tokens."""

    maxTokens: Num | None = None
    """Maximum reply length, in tokens."""

    stopSequences: list[str] | None = None
    """Strings that end the reply when generated."""


class PresetGeneration(Body):
    """Request shape settings."""

    seed: Num | None = None
    """Random seed (ST: -1 = random)."""

    completions: Num | None = None
    """Number of replies requested at once (``n``)."""

    maxContextUnlocked: bool | None = None
    """True: the context size may exceed the model's usual limit."""


class PresetApiOptions(Body):
    """Provider request options."""

    reasoningEffort: ReasoningEffort | None = None
    """Requested reasoning effort (``minimal``, ``low``, ``medium``, ``high``...). Unknown values
    are kept."""

    verbosity: Verbosity | None = None
    """Requested answer verbosity (``low``, ``medium``, ``high``), or ``auto``: none is requested
    and the provider's default applies (SillyTavern's ``auto``, Risu's switched-off slider)."""

    thinkingTokens: Num | None = None
    """Reasoning token budget (Risu)."""

    serviceTier: ServiceTier | None = None
    """Provider service tier (``flex``, ``priority``)."""

    squashSystemMessages: bool | None = None
    """Merge consecutive system messages into one."""

    showThoughts: bool | None = None
    """Show the model's reasoning in the chat."""

    promptPostProcessing: PromptPostProcessing | None = None
    """How ST rewrites the message list (``none``, ``merge``, ``semi``, ``strict``, ``single``,
    ``*_tools`` variants keep tool calls)."""

    streamResponses: bool | None = None
    """Stream the reply as it is generated."""

    functionCalling: bool | None = None
    """Allow the model to call tools."""

    enableWebSearch: bool | None = None
    """Allow the provider's web search."""

    requestImages: bool | None = None
    """Ask the model for images in its reply."""


class PresetSystemPrompts(Body):
    """Utility prompts the app sends in particular situations."""

    assistantPrefill: str | None = None
    """Text the model reply is started with."""

    assistantImpersonation: str | None = None
    """Prefill used when the model writes as the user."""

    impersonation: str | None = None
    """Instruction used when the model writes as the user."""

    newChat: str | None = None
    """Marks the start of a new chat."""

    newGroupChat: str | None = None
    """Marks the start of a new group chat."""

    newExampleChat: str | None = None
    """Marks the start of each example dialogue."""

    continueNudge: str | None = None
    """Instruction used to continue the last message."""

    groupNudge: str | None = None
    """Instruction telling whose turn it is in a group chat."""


class PresetTemplates(Body):
    """Format strings that wrap card fields when they are inserted."""

    worldInfoFormat: str | None = None
    """Wraps the activated lore text (``{0}`` is the text)."""

    scenarioFormat: str | None = None
    """Wraps the scenario (``{{scenario}}``)."""

    personalityFormat: str | None = None
    """Wraps the personality (``{{personality}}``)."""


class PresetBehavior(Body):
    """Message assembly behaviour."""

    wrapFormat: WrapFormat | None = None
    """How groups are wrapped when assembled: ``xml``, ``markdown`` or ``none``."""

    namesBehavior: Num | None = None
    """ST ``names_behavior``, verbatim: -1 none, 0 default, 1 completion, 2 message content."""

    sendIfEmpty: str | None = None
    """Text sent as the user message when the user sends nothing."""

    continuePrefill: bool | None = None
    """Continue by prefilling the last message instead of a nudge prompt."""

    continuePostfix: str | None = None
    """Text appended to a continued message."""


class PresetBody(Body):
    """A prompt preset: the prompts that build a request plus its generation settings."""

    name: str = ""
    """Preset name (ST: the file name stem)."""

    description: str | None = None
    """Description for users."""

    attribution: PresetAttribution = Field(default_factory=PresetAttribution)
    """Author."""

    prompts: list[PresetPrompt] = Field(default_factory=list)
    """Prompts in assembly order (ST ``prompt_order``); prompts the order omits come last, disabled."""

    groups: list[PresetGroup] = Field(default_factory=list)
    """Folders of prompts."""

    choices: list[PresetChoice] = Field(default_factory=list)
    """Questions asked of the preset's user."""

    samplers: PresetSamplers = Field(default_factory=PresetSamplers)
    """Sampling values."""

    generation: PresetGeneration = Field(default_factory=PresetGeneration)
    """Seed, number of replies and context limit unlock."""

    apiOptions: PresetApiOptions = Field(default_factory=PresetApiOptions)
    """Reasoning, verbosity, streaming, tools and other options sent to the provider."""

    systemPrompts: PresetSystemPrompts = Field(default_factory=PresetSystemPrompts)
    """Utility prompts."""

    templates: PresetTemplates = Field(default_factory=PresetTemplates)
    """Card field format strings."""

    behavior: PresetBehavior = Field(default_factory=PresetBehavior)
    """Group wrapping, name prefixes, empty-message and continue behaviour."""
