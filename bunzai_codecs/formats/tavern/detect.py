"""Detection of Tavern cards, for every app that writes them; imports no canonical model.

:class:`CardDetector` is the Tavern card lineage's one detector (see ``tavern/card.py``). Every row
of ``formats/table.py`` for an app that writes Tavern cards names one, built from the app's data,
and a Tavern card codec with no row (a test's, a plugin's) detects through one built from its own
dialect and envelope (``TavernCard.detect``):

- the generic card (no mark, no file of its own: SillyTavern's row) scores 0.9 for a PNG with a
  ``ccv3``/``chara`` chunk, a ``chara_card_v2``/``v3`` JSON card or a flat CCv1 object with a
  string ``name`` and ``first_mes``/``mes_example`` (0.6 for other character text fields only);
- an app whose file is its own (an envelope around the card, a zip) scores that file with its
  ``file`` scorer: Marinara's ``{type: "marinara_character", data: <card>}``, Lumiverse's zip;
  ``None`` from it hands the input to the card's own detection below;
- an app whose cards carry its dialect's keys in ``extensions`` (its :class:`CardMark`) scores a
  card whose JSON tree, or either PNG card chunk's payload, is marked: 0.95 by default (above the
  generic 0.9), 1.0 for a mark no other app writes (RoleCall's ``extensions.rolecall`` object).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.formats.tavern.png import CARD_SPECS, card_extensions, card_keyword, png_card_trees

#: strings that make a flat object a character (with a string ``name``)
_STRONG_FLAT = ("first_mes", "mes_example")
_WEAK_FLAT = (
    "description",
    "personality",
    "scenario",
    "creator_notes",
    "creatorcomment",
    "system_prompt",
    "post_history_instructions",
)


def card_score(t: dict[str, Any]) -> float:
    """The detection score of a parsed JSON object as a Tavern card (see the module docstring)."""
    spec = t.get("spec")
    if spec is not None:
        return 0.9 if isinstance(spec, str) and spec in CARD_SPECS else 0.0
    if "data" in t or "entries" in t or not isinstance(t.get("name"), str):
        return 0.0  # `entries`: a lorebook ({name, description, entries}), never a flat card
    for k in _STRONG_FLAT:
        if isinstance(t.get(k), str):
            return 0.9
    for k in _WEAK_FLAT:
        if isinstance(t.get(k), str):
            return 0.6
    return 0.6 if isinstance(t.get("alternate_greetings"), list) else 0.0


#: the score of a card the app's mark is on: above the generic reader's 0.9
MARKED = 0.95


@dataclass(frozen=True)
class CardMark:
    """What makes a Tavern card an app's: its ``extensions`` hold one of :attr:`keys`, each with a
    value of the JSON type given for it (``dict`` an object, ``list`` an array, ``str`` a string,
    ``object`` any value), unless that value is an object holding one of the :attr:`unless`
    ``(key, value)`` pairs (a card of the app's other format: RoleCall's persona card is
    ``extensions.rolecall.type: "persona"``). A marked card scores :attr:`score`. Build one with
    :meth:`of`."""

    keys: tuple[tuple[str, type], ...]
    unless: tuple[tuple[str, Any], ...] = ()
    #: 0.95 (:data:`MARKED`); 1.0 for a mark only the app writes (a key named after it)
    score: float = MARKED

    @classmethod
    def of(
        cls, keys: Mapping[str, type], *, unless: Mapping[str, Any] | None = None, score: float = MARKED
    ) -> CardMark:
        """The mark of ``keys`` (``extensions`` key -> the type of its value)."""
        return cls(tuple(keys.items()), tuple((unless or {}).items()), score)

    @classmethod
    def claiming(cls, keys: frozenset[str]) -> CardMark:
        """The mark of a dialect with no row: any of the ``extensions`` keys it claims, of any type."""
        return cls.of(dict.fromkeys(sorted(keys), object))

    def on(self, tree: Any) -> bool:
        """Whether the card ``tree`` (a card, or RoleCall's bare ``data`` object) carries this mark."""
        ext = card_extensions(tree)
        if not ext:
            return False
        for key, kind in self.keys:
            v = ext.get(key, _ABSENT)
            if v is _ABSENT or not isinstance(v, kind):
                continue
            if not (self.unless and isinstance(v, dict) and any(v.get(k) == x for k, x in self.unless)):
                return True
        return False


_ABSENT = object()

#: scores an app's own file (an envelope, a zip); ``None``: the card's own detection decides
FileScorer = Callable[[Sniff], float | None]


@dataclass(frozen=True)
class CardDetector:
    """The Tavern card lineage's detector (see the module docstring), parameterised by what the app
    adds: the :class:`CardMark` on its cards and the scorer of its own ``file`` (a callable, or its
    ``"module:function"`` path below ``bunzai_codecs.formats``, loaded on first use). With neither,
    it is the generic card detector."""

    mark: CardMark | None = None
    file: str | FileScorer | None = None

    @functools.cached_property
    def _file(self) -> FileScorer | None:
        if isinstance(self.file, str):
            from bunzai_codecs.core.format import resolve

            scorer: FileScorer = resolve(self.file)
            return scorer
        return self.file

    def __call__(self, s: Sniff) -> float:
        scorer = self._file
        if scorer is not None:
            by_file = scorer(s)
            if by_file is not None:
                return by_file
        if self.mark is not None:
            trees = png_card_trees(s) if s.is_png else [s.json_object]
            return self.mark.score if any(self.mark.on(t) for t in trees) else 0.0
        if s.is_png:
            # keywords only: nothing is inflated here (an unrelated zTXt bomb costs nothing), and a
            # card chunk that will not decode is still claimed so the decoder can say what is wrong
            pf = s.png
            if pf is None:
                return 0.0
            return 0.9 if any(card_keyword(c) is not None for c in pf.chunks) else 0.0
        t = s.json_object
        return card_score(t) if t is not None else 0.0


#: the generic Tavern card detector (SillyTavern's row)
card = CardDetector()


def is_character_book(tree: Any) -> bool:
    """True for an object whose ``entries`` is an array of CCv3-shaped rows (``keys`` array or
    ``content`` string on the first row), the shape of a standalone ``character_book``/Chub book.
    An Agnai memory book (``keywords`` + ``entry``) is not one."""
    if not isinstance(tree, dict):
        return False
    entries = tree.get("entries")
    if not isinstance(entries, list):
        return False
    if not entries:
        return "name" in tree or "scan_depth" in tree or "token_budget" in tree
    first = entries[0]
    if not isinstance(first, dict) or ("keywords" in first and "entry" in first):
        return False
    return isinstance(first.get("keys"), list) or isinstance(first.get("content"), str)


def is_script(v: Any) -> bool:
    """A dict that looks like an ST regex script: a string ``findRegex`` plus ``scriptName`` or
    ``replaceString``."""
    return (
        isinstance(v, dict)
        and isinstance(v.get("findRegex"), str)
        and (isinstance(v.get("scriptName"), str) or isinstance(v.get("replaceString"), str))
    )
