"""A format's declaration: what names it, lists it and detects it, without its codec.

Every format bunzai knows is declared once, as a :class:`Format` in ``formats/table.py``: its id,
the kind(s) of entity it holds, the app that writes it, a label, the file suffixes it is saved
with, the suffix an export gets, its tie-break priority, and where its detector and its codec
live (``"module:name"`` below ``bunzai_codecs.formats``). The codec class (decode/encode) takes
its id's declaration at class creation (``Codec.__init_subclass__``), so nothing is declared
twice.

Detectors are plain functions ``(Sniff) -> float`` in modules that import no canonical model
(``formats/<app>/detect.py``): ``bunzai detect`` and ``bunzai formats`` run on declarations and
detectors alone and never import pydantic or the codecs. This module imports nothing but
``core.entity`` (kind names), ``core.errors`` and ``core.claims`` (what a detector can claim).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from bunzai_codecs.core.claims import Claims
from bunzai_codecs.core.entity import ENTITY_KINDS, EntityKind

if TYPE_CHECKING:
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
    #: ``"module:function"`` of the detector, ``(Sniff) -> float`` in [0, 1]; it imports no model
    detector: str
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
    #: the inputs the detector can score above 0, by cheap features (``core.claims``): only those
    #: inputs ask it; ``None``, every input does
    claims: Claims | None = None

    def __post_init__(self) -> None:
        if not self.kinds:
            object.__setattr__(self, "kinds", frozenset({self.kind}))

    @cached_property
    def _detector(self) -> Callable[[Sniff], float]:
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
DECLARED = ("kind", "kinds", "family", "label", "suffixes", "extension", "priority")
