"""Values a format spells differently but every app reads the same way (``SEMANTIC``: example
dialogue as its ``<START>`` blocks; ``SEMANTIC_BODY``: a nickname equal to the name), compared in
that form (docs/fidelity.md)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_START = re.compile(r"<START>", re.IGNORECASE)


def example_blocks(text: str) -> list[str]:
    """Example dialogue as the Tavern apps read it (SillyTavern's ``parseMesExamples``): split at
    every ``<START>``, a missing leading ``<START>`` implied (blank text before the first one is
    nothing), each block trimmed. Two texts with the same blocks are the same examples."""
    head, *rest = _START.split(text)
    return [b.strip() for b in ([head] if head.strip() else []) + rest]


#: cross-format only: (kind, body path) -> the form two values are compared in, for values a format
#: writes in another spelling that every app reads the same way (docs/fidelity.md lists them)
SEMANTIC: dict[tuple[str, tuple[str, ...]], Callable[[Any], Any]] = {
    ("character", ("examples", "exampleMessages")): lambda v: example_blocks(v) if isinstance(v, str) else v,
}


def _nickname_is_the_name(before: dict[str, Any], after: dict[str, Any]) -> None:
    """A nickname equal to the name means what no nickname means: the name is used for {{char}}."""
    b, a = before.get("identity"), after.get("identity")
    if not (isinstance(b, dict) and isinstance(a, dict)) or b.get("name") != a.get("name"):
        return
    same = b.get("name")
    if b.get("nickname") == same and a.get("nickname") is None:
        a["nickname"] = same
    elif a.get("nickname") == same and b.get("nickname") is None:
        a.pop("nickname", None)


#: cross-format only: kind -> rules that make ``after`` say what ``before`` says where the two
#: differ only in a spelling every app reads the same way, when the test needs more than one path
SEMANTIC_BODY: dict[str, tuple[Callable[[dict[str, Any], dict[str, Any]], None], ...]] = {
    "character": (_nickname_is_the_name,),
}


def _semantic(kind: str, before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """``after`` with each ``SEMANTIC`` value that means the same as ``before``'s replaced by it."""
    for rule in SEMANTIC_BODY.get(kind, ()):
        rule(before, after)
    for (k, path), key in SEMANTIC.items():
        if k != kind:
            continue
        b: Any = before
        a: Any = after
        for part in path[:-1]:
            b = b.get(part) if isinstance(b, dict) else None
            a = a.get(part) if isinstance(a, dict) else None
        last = path[-1]
        if not (isinstance(b, dict) and isinstance(a, dict) and last in b and last in a):
            continue
        if b[last] != a[last] and key(b[last]) == key(a[last]):
            a[last] = b[last]
    return after
