"""The canonical persona: the user's character, injected as ``{{user}}``.

``brief`` (a summary shown in the app) and ``content`` (the text sent to the model) are kept apart:
swapping them is the classic persona bug.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from bunzai_codecs.entities.base import Body, MessageRole, Num, known
from bunzai_codecs.entities.character import MediaAsset

#: where the persona text is placed in the prompt (ST ``persona_description_positions``)
PersonaPosition = Annotated[
    str,
    known("prompt", "after_char", "author_note_top", "author_note_bottom", "depth", "none"),
]

#: app that a persona was imported from
PersonaSourceApp = Annotated[str, known("sillytavern", "risu", "marinara")]


class PersonaSections(Body):
    """Structured parts of the persona, next to (not instead of) ``content``."""

    appearance: str | None = None
    """Looks of the user's character."""

    personality: str | None = None
    """Personality of the user's character."""

    history: str | None = None
    """Backstory of the user's character (Marinara ``backstory``)."""


#: the canonical path of every persona section (what an app that holds them all covers)
SECTION_PATHS: tuple[str, ...] = tuple(f"sections.{name}" for name in PersonaSections.model_fields)


class PersonaPresentation(Body):
    """How the persona is shown in the app."""

    imageUrl: str | None = None
    """Path or URL of the persona image (ST avatar file id, Marinara ``avatarPath``)."""


class PersonaMedia(Body):
    """The persona's images."""

    portrait: MediaAsset | None = None
    """The persona image itself (a Risu persona PNG, a Marinara ``avatar`` data URI)."""


class ChatInjection(Body):
    """Where the persona text goes in the prompt."""

    position: PersonaPosition
    """``prompt`` (in the prompt's persona slot), ``after_char`` (legacy), ``author_note_top``,
    ``author_note_bottom``, ``depth`` (in the chat at ``depth``) or ``none`` (not sent).
    Unknown values are kept."""

    depth: Num | None = None
    """For ``depth``: messages counted from the end of the chat. Absent = 2 (ST default)."""

    role: MessageRole | None = None
    """For ``depth``: role of the injected message. Absent = ``system``."""


class PersonaAttribution(Body):
    """Who made the persona and where it came from."""

    creator: str | None = None
    """The persona's author."""

    version: str | None = None
    """The author's version label."""

    creatorNotes: str | None = None
    """Notes for people using the persona, never sent to the model."""

    source: PersonaSourceApp | None = None
    """The app the persona was imported from, stamped by the codec (``sillytavern``, ``risu``,
    ``marinara``)."""


class PersonaBody(Body):
    """A user persona: who ``{{user}}`` is in the roleplay."""

    name: str = ""
    """The persona's name, substituted for ``{{user}}``."""

    content: str = ""
    """The persona description sent to the model as ``{{user}}``'s definition."""

    brief: str | None = None
    """A short summary or note shown in the app, never sent to the model (ST ``title``, Risu
    ``note``, Marinara ``comment``)."""

    sections: PersonaSections = Field(default_factory=PersonaSections)
    """Structured parts (appearance, personality, history)."""

    presentation: PersonaPresentation = Field(default_factory=PersonaPresentation)
    """How the app shows the persona."""

    media: PersonaMedia = Field(default_factory=PersonaMedia)
    """The persona image."""

    chatInjection: ChatInjection | None = None
    """Where the persona text is placed. Absent = the app default (in the prompt)."""

    worldName: str | None = None
    """Name of a lorebook the app loads with the persona (ST ``lorebook``)."""

    attribution: PersonaAttribution = Field(default_factory=PersonaAttribution)
    """Author, version, notes and source app."""
