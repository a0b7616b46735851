"""The canonical regex set: an ordered list of find/replace rules.

A rule is data: bunzai never runs a pattern from a file. ``find`` and ``flags`` are kept apart and
verbatim (SillyTavern's ``/pattern/flags`` string is split by its codec). When a rule runs is told
by three fields together: ``phases`` (pipeline steps), ``targets`` (which copy of the text it edits)
and ``enabled``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from bunzai_codecs.entities.base import Body, Num, Opaque, known

#: pipeline step a rule runs at
RegexPhase = Annotated[str, known("input", "output", "request", "display", "slash", "lorebook", "reasoning")]

#: which copy of the text a rule edits
RegexTarget = Annotated[str, known("prompt", "display")]

#: whether macros such as ``{{char}}`` are substituted into ``find`` before it is compiled
FindSubstitution = Annotated[str, known("none", "raw", "escaped")]


class RegexRule(Body):
    """One find/replace rule."""

    id: str
    """Stable rule id, unique in the set (the row index when the source has no id)."""

    label: str = ""
    """Rule name shown to users (ST ``scriptName``, Risu ``comment``)."""

    find: str = ""
    """The pattern, verbatim, without ``/`` delimiters or flags."""

    flags: str = ""
    """Regex flags, verbatim (may include Risu ``<...>`` directives). Empty = no flags."""

    useFlags: bool | None = None
    """Risu custom-flag switch (``ableFlag``): when false Risu ignores ``flags`` and uses ``g``."""

    replace: str = ""
    """The replacement, verbatim (``$1``, ``{{match}}``, macros, Risu ``@@`` prefixes)."""

    trimStrings: list[str] | None = None
    """Strings removed from each captured group before replacing."""

    phases: list[RegexPhase] = Field(default_factory=list)
    """Steps the rule runs at: ``input`` (user message), ``output`` (model reply), ``request``
    (outgoing prompt), ``display`` (rendering), ``slash``, ``lorebook``, ``reasoning``. Unknown
    values are kept. Empty = never runs."""

    targets: list[RegexTarget] | None = None
    """Which copy the rule edits: ``prompt`` (only what is sent), ``display`` (only what is shown).
    Absent = the stored message text itself."""

    substituteFind: FindSubstitution | None = None
    """Macro substitution into ``find``: ``none``, ``raw`` or ``escaped`` (regex-escaped).
    Absent = none."""

    minDepth: Num | None = None
    """Skip messages less deep than this (0 = the last message). Absent = no lower bound."""

    maxDepth: Num | None = None
    """Skip messages deeper than this. Absent = no upper bound."""

    runOnEdit: bool | None = None
    """True: also run when a message is edited."""

    characterIds: list[str] | None = None
    """Characters the rule is limited to (app ids). Absent or empty = all."""

    presetIds: list[str] | None = None
    """Prompt presets the rule is limited to (app ids). Absent or empty = all."""

    enabled: bool = True
    """False switches the rule off."""

    sortOrder: Num = 0
    """Run order within the set: lower runs first."""

    extras: Opaque | None = None
    """Source fields with no canonical home (e.g. Marinara timestamps), verbatim."""


class RegexSetBody(Body):
    """A named, ordered set of regex rules (a script file, or the scripts a card or preset carries)."""

    name: str = ""
    """Set name (the file name stem, a single script's name, or a Risu module name)."""

    description: str | None = None
    """Description of the set (Risu module ``description``)."""

    enabled: bool | None = None
    """Set-level switch. No current format stores one; absent = on."""

    rules: list[RegexRule] = Field(default_factory=list)
    """The rules, in source order."""
