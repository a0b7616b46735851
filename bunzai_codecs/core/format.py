"""A format's declaration: what names it, lists it and detects it, without its codec.

Every format bunzai knows is declared once, as a :class:`Format` in ``formats/table.py``: its id,
the kind(s) of entity it holds, the app that writes it, a label, the file suffixes it is saved
with, the suffix an export gets, its tie-break priority, whether it is read-only (written back only
for a file read from it, ``read_only``),
and where its detector and its codec live (``"module:name"`` below ``bunzai_codecs.formats``). The codec class (decode/encode) takes
its id's declaration at class creation (``Codec.__init_subclass__``), so nothing is declared
twice.

Detectors are plain functions ``(Sniff) -> float`` in modules that import no canonical model
(``formats/<app>/detect.py``), or a detector object a row builds from its format's data (the Tavern
card lineage's): ``bunzai detect`` and ``bunzai formats`` run on declarations and detectors alone
and never import pydantic or the codecs. This module imports nothing but ``core.entity`` (kind
names), ``core.errors`` and ``core.claims`` (what a detector can claim).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from bunzai_codecs.core.claims import Claims
from bunzai_codecs.core.entity import ENTITY_KINDS, EntityKind

if TYPE_CHECKING:
    from bunzai_codecs.core.archive import ZipReader
    from bunzai_codecs.core.sniff import Sniff

#: the package the ``"module:name"`` paths of a declaration are relative to
PACKAGE = "bunzai_codecs.formats"

#: detector crashes seen in this process, for tests: (format id, exception repr)
DETECT_ERRORS: list[tuple[str, str]] = []


def resolve(path: str) -> Any:
    """The object ``"module:name"`` names (a module path without dots is below :data:`PACKAGE`)."""
    module, _, name = path.partition(":")
    if not module.startswith("bunzai_codecs."):
        module = f"{PACKAGE}.{module}"
    return getattr(importlib.import_module(module), name)


def guarded(format_id: str, fn: Callable[[Sniff], float], s: Sniff) -> float:
    """``fn(s)`` as a score that can never take the ranking down: a crash (recorded in
    :data:`DETECT_ERRORS`) or NaN scores 0, anything else is clamped to [0, 1]."""
    try:
        score = float(fn(s))
    except Exception as exc:  # a detector must never take the ranking down
        DETECT_ERRORS.append((format_id, repr(exc)))
        return 0.0
    if score != score:  # NaN
        return 0.0
    return 0.0 if score < 0.0 else 1.0 if score > 1.0 else score


def object_detector(test: Callable[[Any], bool], score: float) -> Callable[[Sniff], float]:
    """The detector of a format whose file is one JSON object ``test`` recognises: ``score`` for an
    input whose parsed JSON object it accepts (``None`` is passed for any other input), else 0."""

    def detect(s: Sniff) -> float:
        return score if test(s.json_object) else 0.0

    detect.__doc__ = f"{score} for a JSON object {test.__name__} accepts, else 0"
    return detect


def package_detector(
    suffix: str, member: re.Pattern[str], fits: Callable[[ZipReader], bool]
) -> Callable[[Sniff], float]:
    """The detector of a zip package format (BYAF, Voxta): 1.0 for a readable zip that ``fits`` and
    has a member named like ``member`` (its character); 0.6 for one that fits without such a member
    but is named ``suffix``, 0.5 for an unreadable zip named so; else 0."""

    def detect(s: Sniff) -> float:
        if not s.is_zip:
            return 0.0
        z = s.zip
        named = s.suffix == suffix
        if z is None:
            return 0.5 if named else 0.0
        if not fits(z):
            return 0.0
        if any(member.match(n) for n in z.names):
            return 1.0
        return 0.6 if named else 0.0

    detect.__doc__ = f"a {suffix} package: a zip with a member like {member.pattern}"
    return detect


@dataclass(frozen=True)
class Format:
    """One format id's declaration (see the module docstring). The fields the codec class takes
    over are :data:`DECLARED`."""

    id: str
    #: the kind of entity this format is for: what tables list it under and what a fresh file holds
    kind: EntityKind
    #: the app that writes this format (``sillytavern``, ``risu``...); picks sibling codecs
    family: str
    #: a human name for tables
    label: str
    #: ``"module:Class"`` of the codec (decode/encode), loaded on first use
    codec: str
    #: the detector, ``(Sniff) -> float`` in [0, 1]: its ``"module:function"`` path, or a detector
    #: object built in the row from the format's own data (the Tavern card lineage's
    #: ``tavern.detect.CardDetector``); either imports no model
    detector: str | Callable[[Sniff], float]
    #: file name suffixes this format is usually saved with: a hint, never a requirement
    suffixes: tuple[str, ...] = (".json",)
    #: the suffix an export of this format is written with
    extension: str = ".json"
    #: tie-break between equal scores: higher wins, then the id in alphabetical order
    priority: int = 0
    #: every kind this format holds (default: ``kind`` alone; vaud-json holds them all)
    kinds: frozenset[EntityKind] = field(default=frozenset())
    #: ``"module:function"`` ``(Sniff) -> kind`` for a format whose file says which kind it holds
    kind_reader: str | None = None
    #: True for a format bunzai reads but does not make: it writes a file back only for an entity
    #: read from one (its escrow twin holds what the canonical model does not, the story of a
    #: NovelAI ``.story``), never one converted from another format. ``bunzai formats`` says so
    read_only: bool = False
    #: the inputs the detector can score above 0, by cheap features (``core.claims``): only those
    #: inputs ask it; ``None``, every input does
    claims: Claims | None = None

    def __post_init__(self) -> None:
        if not self.kinds:
            object.__setattr__(self, "kinds", frozenset({self.kind}))

    @cached_property
    def _detector(self) -> Callable[[Sniff], float]:
        if not isinstance(self.detector, str):
            return self.detector
        fn: Callable[[Sniff], float] = resolve(self.detector)
        return fn

    def detect(self, s: Sniff) -> float:
        """How sure this format's detector is that ``s`` is this format, in [0, 1]; never raises."""
        return guarded(self.id, self._detector, s)

    def kind_of(self, s: Sniff) -> EntityKind:
        """The kind of the primary entity ``s`` holds: :attr:`kind`, unless the file says
        (:attr:`kind_reader`). Never raises."""
        if self.kind_reader is None:
            return self.kind
        try:
            kind = resolve(self.kind_reader)(s)
        except Exception:
            return self.kind
        return kind if kind in self.kinds else self.kind

    def names(self, cls: type) -> bool:
        """Whether ``cls`` is the codec class :attr:`codec` names."""
        module, _, name = self.codec.partition(":")
        return cls.__qualname__ == name and cls.__module__ in (module, f"{PACKAGE}.{module}")

    def holds(self, kind: str) -> bool:
        """Whether this format holds entities of ``kind``."""
        return kind in self.kinds

    def kind_label(self) -> str:
        """The kind tables list this format under: ``any`` for a format that holds every kind."""
        return "any" if self.kinds >= frozenset(ENTITY_KINDS) else self.kind


#: the attributes a codec class takes from its id's declaration
DECLARED = ("kind", "kinds", "family", "label", "suffixes", "extension", "priority", "read_only")
