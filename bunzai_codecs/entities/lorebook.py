"""The canonical lorebook (world info): book settings, flat categories and entries.

An entry is text the app inserts into the prompt when one of its triggers appears in the scanned
chat. Two ordering axes are kept apart: ``sortOrder`` (placement, where an active entry lands) and
``priority`` (eviction, which entries are dropped first when the budget is full).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from bunzai_codecs.entities.base import Body, GenerationType, MessageRole, Num, Opaque, known
from bunzai_codecs.entities.character import MediaAsset

#: kind of book (Marinara ``category``; Agnai books are ``other``)
LorebookType = Annotated[str, known("world", "character", "npc", "spellbook", "uncategorized", "other")]

#: how secondary triggers combine with the primary ones (closed: apps agree on these four)
SelectiveLogic = Literal["and_any", "not_all", "not_any", "and_all"]

#: where an active entry is inserted
LorePosition = Annotated[
    str,
    known(
        "world",
        "character",
        "author_note_top",
        "author_note_bottom",
        "depth",
        "before_example",
        "after_example",
        "outlet",
    ),
]

#: text scanned for triggers besides the chat
ScanSource = Annotated[
    str,
    known(
        "persona_description",
        "character_description",
        "character_personality",
        "character_scenario",
        "character_depth_prompt",
        "creator_notes",
        "character_name",
        "character_tags",
        "persona_tags",
    ),
]


class Trigger(Body):
    """A key that activates an entry when it appears in the scanned text."""

    text: str
    """The key, verbatim; for a regex key the pattern without its ``/`` delimiters."""

    isRegex: bool = False
    """True when ``text`` is a regular expression (never run during conversion)."""

    flags: str | None = None
    """Regex flags such as ``i``, verbatim. Absent = none. Only for regex keys."""

    probability: Num | None = None
    """Activation chance of this key, 0..100. Absent = the entry's ``probability``."""


class CharacterFilter(Body):
    """Limits an entry to (or excludes it from) some characters."""

    isExclude: bool = False
    """False: the entry fires only for the listed characters; true: never for them."""

    names: list[str] = Field(default_factory=list)
    """Character identifiers (ST: avatar file names without ``.png``)."""

    tags: list[str] = Field(default_factory=list)
    """Character tag identifiers (ST: app-local tag ids)."""


class LoreCategory(Body):
    """A folder of entries. Categories are flat: nesting is not modelled."""

    id: str
    """Stable category id, referenced by ``LoreEntry.categoryId`` (Risu: the folder key)."""

    name: str = ""
    """Folder name shown to users."""

    sortOrder: Num = 100
    """Position of the folder among folders; higher = later."""

    enabled: bool | None = None
    """False disables every entry in the folder without changing their own flags. Absent = on."""


class LoreEntry(Body):
    """One lorebook entry: text plus the rules that decide when and where it is inserted."""

    id: str
    """Stable entry id, unique in the book (a repeated source id gets ``-2``, ``-3``... appended)."""

    title: str = ""
    """Entry label; codecs write ``Entry N`` when the source has none. Never sent to the model."""

    comment: str | None = None
    """A separate creator note, kept only when it differs from ``title``."""

    content: str = ""
    """The inserted text, verbatim (``@@`` decorators and macros are not parsed)."""

    enabled: bool = True
    """False switches the entry off."""

    constant: bool = False
    """True inserts the entry whenever it fits, without a trigger."""

    triggers: list[Trigger] | None = None
    """Primary keys; any one of them activates the entry."""

    secondaryTriggers: list[Trigger] | None = None
    """Secondary keys, combined with the primary ones by ``selectiveLogic``."""

    selective: bool | None = None
    """True when the secondary keys are in use. Absent = the app default."""

    selectiveLogic: SelectiveLogic = "and_any"
    """How secondary keys combine: ``and_any`` (any secondary), ``not_all`` (not all),
    ``not_any`` (none) or ``and_all`` (all)."""

    position: LorePosition = "world"
    """Where the entry is inserted: ``world`` (before the character definition), ``character``
    (after it), ``author_note_top``, ``author_note_bottom``, ``depth`` (in the chat at ``depth``
    with ``role``), ``before_example``, ``after_example`` or ``outlet`` (``outletName``). Unknown
    values are kept."""

    depth: Num = 4
    """For ``position: depth``: messages counted from the end of the chat, 0 = after the last."""

    role: MessageRole = "system"
    """For ``position: depth``: role of the inserted message."""

    outletName: str | None = None
    """For ``position: outlet``: the named outlet that receives the text."""

    sortOrder: Num = 100
    """Placement order among active entries: higher = inserted later (closer to the end)."""

    priority: Num = 100
    """Eviction order when the token budget is full: lower is dropped first."""

    probability: Num = 100
    """Chance, 0..100, that the entry fires when triggered (100 = always)."""

    scanDepth: Num | None = None
    """How many recent messages are scanned for triggers. Absent = the book's setting."""

    caseSensitive: bool | None = None
    """Whether triggers match case-sensitively. Absent = the book's setting."""

    matchWholeWords: bool | None = None
    """Whether triggers match whole words only. Absent = the book's setting."""

    excludeRecursion: bool = False
    """True: other entries' text cannot activate this entry."""

    preventRecursion: bool = False
    """True: this entry's text cannot activate other entries."""

    delayUntilRecursion: Num = 0
    """Activate only from this recursion pass on; 0 = from the first scan."""

    sticky: Num | None = None
    """Messages the entry stays active after firing. Absent = not sticky."""

    cooldown: Num | None = None
    """Messages the entry cannot fire again after firing. Absent = no cooldown."""

    delay: Num | None = None
    """Messages the chat must have before the entry can fire. Absent = no delay."""

    group: str | None = None
    """Inclusion group name(s), comma-separated: only one entry of a group fires."""

    groupWeight: Num | None = None
    """Weight of the entry in the random pick within its group. Absent = 100."""

    groupOverride: bool | None = None
    """True: this entry wins its group over the weighted pick."""

    useGroupScoring: bool | None = None
    """Whether the group pick prefers the entry matching the most keys. Absent = global setting."""

    categoryId: str | None = None
    """Id of the ``LoreCategory`` holding the entry. Absent = top level."""

    scanSources: list[ScanSource] | None = None
    """Extra texts scanned for triggers besides the chat (``persona_description``,
    ``character_description``...). Unknown values are kept."""

    characterFilter: CharacterFilter | None = None
    """Limits the entry to some characters. Absent = every character."""

    generationTriggers: list[GenerationType] | None = None
    """Generation types the entry fires on (``normal``, ``continue``, ``impersonate``, ``swipe``...).
    Absent or empty = all."""

    ignoreBudget: bool | None = None
    """True: the entry is inserted even when the token budget is full."""

    vectorized: bool | None = None
    """True: the entry is also activated by vector similarity (ST Vector Storage)."""

    automationId: str | None = None
    """ST Quick Reply automation bound to the entry's activation."""

    displayIndex: Num | None = None
    """The creator's manual order in the editor list, separate from ``sortOrder``."""

    extensions: Opaque | None = None
    """The source entry's extension bag, verbatim."""


class LorebookMedia(Body):
    """The book's picture."""

    portrait: MediaAsset | None = None
    """The image a lorebook file is (a NovelAI ``naidata`` PNG). Absent = none."""


class LorebookBody(Body):
    """A lorebook (world info book): settings, categories and entries."""

    name: str = ""
    """Book name (ST: the file name without ``.json``). Empty when the source has none."""

    description: str | None = None
    """Description of the book for users."""

    lorebookType: LorebookType | None = None
    """Kind of book (``world``, ``character``, ``npc``...). Unknown values are kept."""

    tags: list[str] | None = None
    """Tags of the book."""

    enabled: bool | None = None
    """False switches the whole book off. Absent = on."""

    globalScanDepth: Num | None = None
    """Messages scanned for triggers. Absent = the host app's default, never 0."""

    tokenBudget: Num | None = None
    """Maximum tokens the book's entries may take. Absent = the host default."""

    globalRecursion: bool | None = None
    """Whether inserted entries can activate other entries."""

    maxRecursionDepth: Num | None = None
    """Maximum recursion passes. Absent = the host default."""

    entryBudget: Num | None = None
    """Maximum number of active entries. Absent = no limit."""

    globalMatchWholeWords: bool | None = None
    """Default whole-word matching for entries that do not set ``matchWholeWords``."""

    extensions: Opaque | None = None
    """The source book's extension bag, verbatim."""

    sourceBook: Opaque | None = None
    """The card book (a CCv3 ``character_book``) this book was made from, verbatim: SillyTavern keeps
    it beside a world imported from a card (``originalData``). Absent = none recorded."""

    categories: list[LoreCategory] = Field(default_factory=list)
    """Folders of entries, flat, in source order."""

    entries: list[LoreEntry] = Field(default_factory=list)
    """The entries, in source order."""

    media: LorebookMedia | None = None
    """The book's picture. Absent = the file is not an image."""
