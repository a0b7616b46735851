"""The canonical prompt preset: ordered prompts, groups, choices and generation settings.

Models a chat-completion preset: the prompts assembled into a request (in list order), their
folders, the questions a preset asks its user (choices), sampler values in API units, API options,
utility prompts and format templates. The same body holds what text-completion apps keep in presets
of their own: sampler values and their order (SillyTavern's Text Completion, KoboldAI and NovelAI
presets, NovelAI's own), the instruct template that wraps each message in a model's sequences, the
context template (SillyTavern's story string), a system prompt (the ``main`` prompt) and the
reasoning block's prefix and suffix. Connection data (models, URLs, keys) is never canonical. A
preset's regex scripts are a linked regex set, not stored here.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from bunzai_codecs.entities.base import Body, GenerationType, MessageRole, Num, Opaque, known

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

#: a sampler, in a sampler order (canonical names of the ``PresetSamplers`` they govern; a sampler
#: id an app has and bunzai cannot name is kept as the app wrote it, as text)
SamplerName = Annotated[
    str,
    known(
        "temperature",
        "topK",
        "topP",
        "topA",
        "minP",
        "typicalP",
        "tailFreeSampling",
        "repetitionPenalty",
        "mirostat",
        "unified",
        "cfg",
        "topG",
    ),
]

#: NovelAI's phrase repetition penalty strength
PhraseRepetitionPenalty = Annotated[
    str, known("off", "very_light", "light", "medium", "aggressive", "very_aggressive")
]

#: when an instruct template puts speakers' names before their messages
InstructNamesBehavior = Annotated[str, known("none", "force", "always")]


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

    minTokens: Num | None = None
    """Minimum reply length, in tokens."""

    typicalP: Num | None = None
    """Typical sampling: the locally typical probability mass kept, 0..1 (1 = off)."""

    tailFreeSampling: Num | None = None
    """Tail free sampling threshold, 0..1 (1 = off)."""

    topG: Num | None = None
    """Top-G sampling: only the G most likely token groups are kept (NovelAI; 0 = off)."""

    epsilonCutoff: Num | None = None
    """Epsilon sampling cutoff, in units of 1e-4 (0 = off)."""

    etaCutoff: Num | None = None
    """Eta sampling cutoff, in units of 1e-4 (0 = off)."""

    topNSigma: Num | None = None
    """Top-nσ: tokens more than n standard deviations below the top logit are dropped (0 = off)."""

    minKeep: Num | None = None
    """Fewest tokens every truncating sampler must keep."""

    repetitionPenaltyRange: Num | None = None
    """How many recent tokens the repetition penalty looks at (0 = the whole context)."""

    repetitionPenaltySlope: Num | None = None
    """How the repetition penalty fades over its range (its curve's slope)."""

    repetitionPenaltyDecay: Num | None = None
    """Tokens over which the repetition penalty decays to nothing (0 = no decay)."""

    encoderRepetitionPenalty: Num | None = None
    """Penalty (or, below 1, reward) for tokens that appear in the prompt (1 = off)."""

    noRepeatNgramSize: Num | None = None
    """No n-gram of this many tokens may repeat (0 = off)."""

    phraseRepetitionPenalty: PhraseRepetitionPenalty | None = None
    """NovelAI's phrase repetition penalty: ``off``, ``very_light``, ``light``, ``medium``,
    ``aggressive`` or ``very_aggressive``. Unknown values are kept."""

    temperatureLast: bool | None = None
    """Apply temperature after the truncating samplers, whatever the sampler order says."""

    dynamicTemperature: bool | None = None
    """Dynamic temperature: the temperature varies between ``dynamicTemperatureMin`` and
    ``dynamicTemperatureMax`` with the entropy of the token distribution."""

    dynamicTemperatureMin: Num | None = None
    """Lowest temperature of dynamic temperature."""

    dynamicTemperatureMax: Num | None = None
    """Highest temperature of dynamic temperature."""

    dynamicTemperatureExponent: Num | None = None
    """Exponent of the entropy-to-temperature curve of dynamic temperature."""

    smoothingFactor: Num | None = None
    """Quadratic ("smoothing") sampling factor (0 = off)."""

    smoothingCurve: Num | None = None
    """Curve of quadratic sampling (1 = plain quadratic)."""

    mirostatMode: Num | None = None
    """Mirostat version: 0 off, 1 or 2 (NovelAI switches Mirostat on in its sampler order)."""

    mirostatTau: Num | None = None
    """Mirostat target entropy (tau)."""

    mirostatEta: Num | None = None
    """Mirostat learning rate (eta; NovelAI's ``mirostat_lr``)."""

    dryMultiplier: Num | None = None
    """DRY ("don't repeat yourself") penalty multiplier (0 = off)."""

    dryBase: Num | None = None
    """DRY base: how fast the penalty grows with the length of the repeated sequence."""

    dryAllowedLength: Num | None = None
    """DRY: longest repeated sequence that is not penalised."""

    dryPenaltyLastN: Num | None = None
    """DRY: how many recent tokens are scanned for repeats (0 = the whole context)."""

    drySequenceBreakers: list[str] | None = None
    """DRY: strings that end a repeated sequence (newline, ``:``, quotes...)."""

    xtcThreshold: Num | None = None
    """XTC ("exclude top choices"): probability above which top tokens may be removed."""

    xtcProbability: Num | None = None
    """XTC: chance per token that the top choices are removed (0 = off)."""

    unifiedLinear: Num | None = None
    """NovelAI unified sampling, linear term (``math1_temp``)."""

    unifiedQuad: Num | None = None
    """NovelAI unified sampling, quadratic term (``math1_quad``)."""

    unifiedConf: Num | None = None
    """NovelAI unified sampling, confidence (entropy scale) term (``math1_quad_entropy_scale``)."""

    cfgScale: Num | None = None
    """Classifier-free guidance scale (1 = off)."""

    negativePrompt: str | None = None
    """Classifier-free guidance negative prompt: text the reply is steered away from."""

    grammar: str | None = None
    """A GBNF grammar the reply must follow, verbatim (never run by bunzai)."""

    bannedTokens: str | None = None
    """Tokens or strings the model may never produce, as the app writes them (one per line)."""

    samplerOrder: list[SamplerName] | None = None
    """The order the samplers are applied in (only those switched on, first applied first)."""

    disabledSamplers: list[SamplerName] | None = None
    """Samplers a preset lists in its order but switches off (NovelAI)."""


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


class PresetInstruct(Body):
    """An instruct template: the sequences that wrap each message for an instruction-tuned model in
    text completion (SillyTavern's Instruct Template, RisuAI's instruct chat template)."""

    enabled: bool | None = None
    """True: text-completion prompts are built with this template (Risu ``useInstructPrompt``)."""

    chatTemplate: str | None = None
    """Name of a chat template the app has built in (Risu ``instructChatTemplate``: ``chatml``,
    ``llama3``, ``jinja``...), verbatim."""

    jinjaTemplate: str | None = None
    """A Jinja chat template, verbatim (Risu ``JinjaTemplate``; never run by bunzai)."""

    inputSequence: str | None = None
    """Put before each user message."""

    inputSuffix: str | None = None
    """Put after each user message."""

    outputSequence: str | None = None
    """Put before each model message."""

    outputSuffix: str | None = None
    """Put after each model message (SillyTavern's legacy ``separator_sequence``)."""

    systemSequence: str | None = None
    """Put before each system message."""

    systemSuffix: str | None = None
    """Put after each system message."""

    firstInputSequence: str | None = None
    """Replaces ``inputSequence`` for the first user message. Empty = the usual one."""

    lastInputSequence: str | None = None
    """Replaces ``inputSequence`` for the last user message. Empty = the usual one."""

    firstOutputSequence: str | None = None
    """Replaces ``outputSequence`` for the first model message. Empty = the usual one."""

    lastOutputSequence: str | None = None
    """Replaces ``outputSequence`` for the model message being generated. Empty = the usual one."""

    lastSystemSequence: str | None = None
    """Replaces ``systemSequence`` for the last system message. Empty = the usual one."""

    storyStringPrefix: str | None = None
    """Put before the story string (the context template's rendered card fields)."""

    storyStringSuffix: str | None = None
    """Put after the story string."""

    stopSequence: str | None = None
    """A string that ends the reply when generated."""

    userAlignmentMessage: str | None = None
    """A user message sent first when the chat would start with a model message."""

    wrap: bool | None = None
    """True: each sequence is separated from the message by a newline."""

    macro: bool | None = None
    """True: macros (``{{char}}``...) in the sequences are replaced."""

    namesBehavior: InstructNamesBehavior | None = None
    """When speakers' names are put before their messages: ``none``, ``force`` (in groups and for
    personas) or ``always``. Unknown values are kept."""

    activationRegex: str | None = None
    """A regular expression, verbatim: a model whose name matches it selects this template."""

    skipExamples: bool | None = None
    """True: example dialogue is not wrapped in the sequences."""

    systemSameAsUser: bool | None = None
    """True: system messages are wrapped like user messages."""

    sequencesAsStopStrings: bool | None = None
    """True: the sequences also stop the reply when generated."""


class PresetContext(Body):
    """A context template: how the card fields become the "story string" at the top of a
    text-completion prompt, and what separates the parts (SillyTavern's Context Template)."""

    storyString: str | None = None
    """The story string template, verbatim (Handlebars: ``{{#if description}}...{{/if}}``)."""

    exampleSeparator: str | None = None
    """Put before each example dialogue (replaces its ``<START>``)."""

    chatStart: str | None = None
    """Put between the story string and examples and the chat."""

    useStopStrings: bool | None = None
    """True: the separators also stop the reply when generated."""

    namesAsStopStrings: bool | None = None
    """True: the participants' names followed by a colon stop the reply."""

    storyStringPosition: Num | None = None
    """Where the story string goes, as SillyTavern numbers it: 0 at the top of the prompt, 1 in the
    chat at ``storyStringDepth``, 2 before the prompt."""

    storyStringDepth: Num | None = None
    """For a story string in the chat: messages counted from the end."""

    storyStringRole: MessageRole | None = None
    """For a story string in the chat: the message role it is sent as."""

    alwaysForceName2: bool | None = None
    """True: the character's name always ends the prompt, so the model answers as them."""

    trimSentences: bool | None = None
    """True: an unfinished last sentence is cut from the reply."""

    singleLine: bool | None = None
    """True: the reply ends at its first line break."""


class PresetReasoning(Body):
    """How a model's reasoning is marked in its reply (SillyTavern's reasoning formatting, Marinara's
    custom thinking tags)."""

    prefix: str | None = None
    """Text that opens the reasoning block (``<think>``)."""

    suffix: str | None = None
    """Text that closes the reasoning block (``</think>``)."""

    separator: str | None = None
    """Text between the reasoning block and the reply."""


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

    instruct: PresetInstruct = Field(default_factory=PresetInstruct)
    """Instruct template: the sequences around each message in text completion."""

    context: PresetContext = Field(default_factory=PresetContext)
    """Context template: the story string and the separators of a text-completion prompt."""

    reasoning: PresetReasoning = Field(default_factory=PresetReasoning)
    """The marks around a model's reasoning."""
