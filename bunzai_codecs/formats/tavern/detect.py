"""Detection of Tavern cards, for every app that writes them; imports no canonical model.

:func:`card` is the Tavern card lineage's detector (see ``tavern/card.py``): 0.9 for a PNG with a
``ccv3``/``chara`` chunk, a ``chara_card_v2``/``v3`` JSON card or a flat CCv1 object with a string
``name`` and ``first_mes``/``mes_example`` (0.6 for other character text fields only); an app's
envelope scores its own file, and an app's dialect claims a card holding one of its extension keys
(0.95).
"""

from __future__ import annotations

from collections.abc import Callable
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


def card(
    s: Sniff,
    envelope: Callable[[Sniff], float | None] | None = None,
    claims: frozenset[str] | None = None,
) -> float:
    """The score of ``s`` as a Tavern card of an app whose ``envelope`` scores its own file (``None``
    from it: the card's own detection) and whose dialect ``claims`` these extension keys."""
    by_envelope = envelope(s) if envelope is not None else None
    if by_envelope is not None:
        return by_envelope
    if claims is not None:
        # an app's card: certain when the card holds one of its dialect's extension keys
        trees = png_card_trees(s) if s.is_png else [s.json_object]
        return 0.95 if any(claims & set(card_extensions(t) or ()) for t in trees) else 0.0
    if s.is_png:
        # keywords only: nothing is inflated here (an unrelated zTXt bomb costs nothing), and a
        # card chunk that will not decode is still claimed so the decoder can say what is wrong
        pf = s.png
        if pf is None:
            return 0.0
        return 0.9 if any(card_keyword(c) is not None for c in pf.chunks) else 0.0
    t = s.json_object
    return card_score(t) if t is not None else 0.0


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
