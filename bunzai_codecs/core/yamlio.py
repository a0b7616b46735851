"""YAML, read safely and within bounds, written deterministically.

bunzai reads YAML files of other apps (text-generation-webui's characters, presets and instruction
templates) and writes its own (a card folder's ``card.yaml``). PyYAML does the parsing and the
emitting; this module is the one door both go through.

Reading (:func:`load`) builds plain JSON values only — dict (string keys), list, str, int, float,
bool, None — so a YAML file's tree is a JSON tree like any other input's:

- no tag ever builds an object: PyYAML's safe constructor (never ``yaml.load`` with the full
  loader); ``!!binary``, ``!!set``, ``!!omap`` and ``!!pairs`` are refused, a timestamp is kept as
  the text it was written as, a non-string mapping key is refused;
- every bound is checked before the tree is built: the text (:data:`MAX_YAML_BYTES`), the nesting
  (:data:`MAX_DEPTH`), and what aliases expand to. PyYAML shares an aliased node instead of copying
  it, but every later walk of the tree (a JSON dump, a comparison) visits it once per alias, so a
  "billion laughs" file of a few hundred bytes is a tree of billions of nodes. The composer counts
  the nodes and the characters of the tree as if every alias were expanded, and stops at
  :data:`MAX_NODES` / :data:`MAX_CHARS` with ``LimitExceeded``; an alias to a node that contains it
  (a recursive structure) is ``Malformed``;
- numbers are JSON's: an integer beyond 64 bits is read as a float (as ``core.sniff.parse_json``
  does), ``.nan`` and ``.inf`` are refused; a string with a lone surrogate is refused;
- errors are ``Malformed`` (``LimitExceeded`` for a bound) with the line and column in the message
  and the byte offset.

libyaml's parser is used when PyYAML has it (every PyYAML wheel does), else PyYAML's own; the
composer and the constructor are always PyYAML's Python ones (they hold the bounds).

Writing (:func:`dump`) is PyYAML's pure-Python emitter (never libyaml's: the bytes must not depend
on how PyYAML was built) with fixed settings: keys in the order given, block style, two-space
indent, no line folding, UTF-8 text as it is, a string with a line break as a literal block (``|``)
where YAML can hold it exactly. The text is read back and compared with the tree before it is
returned: a value YAML would not give back the same is a bug, raised, never written.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from bunzai_codecs.core.errors import BunzaiError, LimitExceeded, Malformed

if TYPE_CHECKING:
    from bunzai_codecs.core.sniff import Sniff

#: the largest YAML text read (bytes): characters, presets and card folders' files are kilobytes
MAX_YAML_BYTES = 16 * 1024 * 1024
#: the deepest nesting read (mappings and sequences)
MAX_DEPTH = 100
#: the most nodes a YAML text may stand for, aliases expanded
MAX_NODES = 50_000
#: the most scalar characters a YAML text may stand for, aliases expanded
MAX_CHARS = 64 * 1024 * 1024

_STR = "tag:yaml.org,2002:str"
#: tags the safe constructor knows that build no JSON value: refused
_REFUSED = ("binary", "set", "omap", "pairs")


def _yaml() -> Any:
    import yaml

    return yaml


def _loader_class() -> type:
    """The bounded safe loader: libyaml's parser (when PyYAML has it) feeding PyYAML's own composer
    (which counts) and safe constructor (which builds JSON values only)."""
    global _LOADER
    if _LOADER is not None:
        return _LOADER
    yaml = _yaml()
    from yaml.composer import Composer
    from yaml.constructor import BaseConstructor, SafeConstructor
    from yaml.events import AliasEvent
    from yaml.nodes import MappingNode, ScalarNode
    from yaml.resolver import Resolver

    if getattr(yaml, "__with_libyaml__", False):
        from yaml._yaml import CParser as Parser

        def init_parser(self: Any, stream: str) -> None:
            Parser.__init__(self, stream)

        parser_bases: tuple[type, ...] = (Parser,)
    else:  # pragma: no cover - every PyYAML wheel has libyaml
        from yaml.parser import Parser as PyParser
        from yaml.reader import Reader
        from yaml.scanner import Scanner

        def init_parser(self: Any, stream: str) -> None:
            Reader.__init__(self, stream)
            Scanner.__init__(self)
            PyParser.__init__(self)

        parser_bases = (Reader, Scanner, PyParser)

    class Constructor(SafeConstructor):
        def construct_yaml_int(self, node: Any) -> Any:
            try:
                v = super().construct_yaml_int(node)
                # as orjson reads JSON: an integer beyond 64 bits is a float
                return v if -(2**63) <= v < 2**64 else float(v)
            except (ValueError, OverflowError):  # thousands of digits: beyond any JSON number
                raise _Refused(f"{node.value[:20]!r}... is beyond the numbers JSON holds", node) from None

        def construct_yaml_float(self, node: Any) -> Any:
            v = super().construct_yaml_float(node)
            if not math.isfinite(v):
                raise _Refused(f"{node.value!r} is not a finite number (JSON has none)", node)
            return v

        def construct_yaml_str(self, node: Any) -> Any:
            v = super().construct_yaml_str(node)
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                raise _Refused("a string holds a lone surrogate (not UTF-8 text)", node) from None
            return v

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            if isinstance(node, MappingNode):
                self.flatten_mapping(node)  # merge keys (``<<: *base``) first: their key is no string
            for key_node, _ in node.value:
                if not (isinstance(key_node, ScalarNode) and key_node.tag == _STR):
                    what = key_node.value if isinstance(key_node, ScalarNode) else "a collection"
                    raise _Refused(f"mapping key {what!r} is not a string (JSON keys are)", key_node)
            return BaseConstructor.construct_mapping(self, node, deep=deep)

        def refuse(self, node: Any) -> Any:
            raise _Refused(f"the tag {node.tag} builds no JSON value", node)

    Constructor.add_constructor("tag:yaml.org,2002:int", Constructor.construct_yaml_int)
    Constructor.add_constructor("tag:yaml.org,2002:float", Constructor.construct_yaml_float)
    Constructor.add_constructor("tag:yaml.org,2002:str", Constructor.construct_yaml_str)
    # a date is kept as the text it was written as
    Constructor.add_constructor("tag:yaml.org,2002:timestamp", Constructor.construct_yaml_str)
    for t in _REFUSED:
        Constructor.add_constructor(f"tag:yaml.org,2002:{t}", Constructor.refuse)

    class Loader(Composer, *parser_bases, Constructor, Resolver):  # type: ignore[misc]
        def __init__(self, stream: str) -> None:
            init_parser(self, stream)
            Composer.__init__(self)
            Constructor.__init__(self)
            Resolver.__init__(self)
            self._depth = 0
            self._nodes = 0
            self._chars = 0
            #: id(node) -> (nodes, chars) of an aliased node with every alias below it expanded
            self._weight: dict[int, tuple[int, int]] = {}
            #: the ids of the nodes composed whole (an alias to any other is to an enclosing node)
            self._done: set[int] = set()

        def _count(self, nodes: int, chars: int, node: Any) -> None:
            self._nodes += nodes
            self._chars += chars
            if self._nodes > MAX_NODES:
                raise _Bound(f"stands for more than {MAX_NODES} values (aliases expanded)", node)
            if self._chars > MAX_CHARS:
                raise _Bound(f"stands for more than {MAX_CHARS} characters (aliases expanded)", node)

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(AliasEvent):
                event = self.peek_event()
                target = self.anchors.get(event.anchor)
                if target is not None:
                    if id(target) not in self._done:
                        raise _Refused(f"alias *{event.anchor} refers to a node that holds it", event)
                    self._count(*self._expanded(target), event)
                return super().compose_node(parent, index)
            self._depth += 1
            if self._depth > MAX_DEPTH:
                raise _Bound(f"nests deeper than {MAX_DEPTH} levels", self.peek_event())
            node = super().compose_node(parent, index)
            self._depth -= 1
            self._done.add(id(node))
            self._count(1, len(node.value) if isinstance(node, ScalarNode) else 0, node)
            return node

        def _expanded(self, node: Any) -> tuple[int, int]:
            """``(values, characters)`` ``node`` stands for with its aliases expanded, once per
            node (an alias's target was expanded when that alias was composed: shallow)."""
            w = self._weight.get(id(node))
            if w is None:
                if isinstance(node, ScalarNode):
                    w = (1, len(node.value))
                else:
                    pairs = node.value if isinstance(node, MappingNode) else ((x,) for x in node.value)
                    n, c = 1, 0
                    for group in pairs:
                        for child in group:
                            cn, cc = self._expanded(child)
                            n, c = n + cn, c + cc
                    w = (n, c)
                self._weight[id(node)] = w
            return w

    _LOADER = Loader
    return Loader


_LOADER: type | None = None


class _Refused(Exception):
    """A value the loader does not build (raised with the node or event it is about)."""

    def __init__(self, message: str, where: Any) -> None:
        super().__init__(message)
        self.message = message
        self.mark = getattr(where, "start_mark", None)


class _Bound(_Refused):
    """A bound was hit."""


def _text(data: bytes | str, what: str) -> tuple[str, int]:
    """The YAML text of ``data`` and the byte length of the BOM it started with."""
    if isinstance(data, str):
        return data, 0
    if len(data) > MAX_YAML_BYTES:
        raise LimitExceeded(f"{what} is {len(data)} bytes; bunzai reads YAML of at most {MAX_YAML_BYTES}")
    from bunzai_codecs.core.sniff import decode_text

    raw = decode_text(data)
    bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    try:
        return raw.decode("utf-8"), bom
    except UnicodeDecodeError as exc:
        raise Malformed(f"{what} is not UTF-8 text: {exc.reason}", offset=exc.start + bom) from None


def _where(text: str, mark: Any, bom: int) -> tuple[str, int | None]:
    if mark is None:
        return "", None
    index = min(int(getattr(mark, "index", 0)), len(text))
    return (
        f" (line {mark.line + 1}, column {mark.column + 1})",
        len(text[:index].encode("utf-8", "surrogatepass")) + bom,
    )


def load(data: bytes | str, *, what: str = "YAML") -> Any:
    """The JSON-valued tree of one YAML document (``None`` for an empty one); see the module
    docstring for what is refused. Raises ``Malformed`` / ``LimitExceeded``."""
    text, bom = _text(data, what)
    yaml = _yaml()
    loader = _loader_class()(text)
    try:
        return loader.get_single_data()
    except _Bound as exc:
        at, offset = _where(text, exc.mark, bom)
        raise LimitExceeded(f"{what}: {exc.message}{at}", offset=offset) from None
    except _Refused as exc:
        at, offset = _where(text, exc.mark, bom)
        raise Malformed(f"{what}: {exc.message}{at}", offset=offset) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at, offset = _where(text, mark, bom)
        why = exc.problem or exc.context or "not YAML"
        raise Malformed(f"invalid {what}: {why}{at}", offset=offset) from None
    except yaml.YAMLError as exc:  # a reader error: a character YAML does not allow
        raise Malformed(f"invalid {what}: {' '.join(str(exc).split())}") from None
    except RecursionError:
        raise LimitExceeded(f"{what} nests too deeply") from None
    finally:
        loader.dispose()


# -- detection ------------------------------------------------------------------------------------

#: a top-level mapping key at the start of a line: ``name:``, ``"name":``, ``'<|bot|>':``
_TOP_KEY = re.compile(
    rb"""^(?:"([^"\n]*)"|'([^'\n]*)'|([^\s#"'\-?:\[\]{},&*!|>%@`][^\n]*?))[ \t]*:(?:[ \t]|\r?$)""", re.M
)
_HEAD = 4096


def looks_like_yaml(s: Sniff) -> bool:
    """Cheap: whether ``s`` may be a YAML mapping (text, no NUL in its head, not JSON, not a known
    binary container, its first line of content a ``key:``)."""
    if s.is_png or s.is_jpeg or s.is_zip or s.is_gzip or s.looks_like_json:
        return False
    head = s.data[:_HEAD]
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    if b"\x00" in head:
        return False
    for line in head.splitlines():
        t = line.strip()
        if not t or t.startswith(b"#") or t.startswith(b"%") or t == b"---":
            continue
        return _TOP_KEY.match(line) is not None
    return False


def top_keys(s: Sniff) -> frozenset[str]:
    """The top-level mapping keys ``s`` spells at the start of a line, found without parsing (a
    detector's cheap first look: a file without its keys is not parsed at all). Empty when ``s``
    does not :func:`look like YAML <looks_like_yaml>`."""

    def find() -> frozenset[str]:
        if not looks_like_yaml(s):
            return frozenset()
        keys = set()
        for m in _TOP_KEY.finditer(s.data):
            raw = (
                m.group(1) if m.group(1) is not None else m.group(2) if m.group(2) is not None else m.group(3)
            )
            keys.add(raw.decode("utf-8", "replace").strip())
        return frozenset(keys)

    return s.memo("yaml-keys", find)


def tree(s: Sniff) -> Any:
    """``s`` parsed as YAML (once per input, :func:`load`'s bounds and refusals); raises the typed
    error (cached too) when it is not readable YAML."""
    return s.memo("yaml", lambda: load(s.data, what="YAML"))


def broken(s: Sniff) -> bool:
    """Whether ``s`` looks like YAML but is not readable YAML (a syntax error, a bound hit): a
    detector that finds its format's keys in it claims it at :data:`BROKEN`, so that its decoder
    says what is wrong (a typed error at the line), rather than "not recognised"."""
    if not looks_like_yaml(s):
        return False
    try:
        tree(s)
    except BunzaiError:
        return True
    return False


#: the score of a file whose keys are a format's but whose YAML does not read (``broken``): the
#: least that is a match
BROKEN = 0.5


def mapping(s: Sniff) -> dict[str, Any] | None:
    """``s``'s YAML tree when it :func:`looks like YAML <looks_like_yaml>` and parses to a mapping,
    else None (never raises: for detectors)."""
    if not looks_like_yaml(s):
        return None
    try:
        t = tree(s)
    except BunzaiError:
        return None
    return t if isinstance(t, dict) else None


# -- writing --------------------------------------------------------------------------------------


def _dumper_class() -> type:
    global _DUMPER
    if _DUMPER is not None:
        return _DUMPER
    yaml = _yaml()

    class Dumper(yaml.SafeDumper):  # type: ignore[name-defined]
        pass

    def represent_str(dumper: Any, value: str) -> Any:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar(_STR, value, style=style)

    Dumper.add_representer(str, represent_str)
    _DUMPER = Dumper
    return Dumper


_DUMPER: type | None = None


def dump(tree: Any) -> bytes:
    """``tree`` (JSON values) as YAML text, UTF-8 (see the module docstring): the same tree gives
    the same bytes on every machine. Raises ``ValueError`` for a tree YAML would not read back as
    itself (a bug of the caller or of this module, never written)."""
    yaml = _yaml()
    text = yaml.dump(
        tree,
        Dumper=_dumper_class(),
        allow_unicode=True,
        sort_keys=False,
        default_flow_style=False,
        width=float("inf"),
        indent=2,
        line_break="\n",
    )
    try:
        back = load(text)
    except BunzaiError as exc:
        raise ValueError(f"YAML written for this tree does not read back: {exc.message}") from None
    if not same(back, tree):
        raise ValueError("YAML written for this tree reads back as another tree")
    return str(text).encode("utf-8")


def same(a: Any, b: Any) -> bool:
    """Whether two JSON trees are equal value for value and type for type (``1``, ``1.0`` and
    ``True`` differ; key order counts)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


__all__ = [
    "BROKEN",
    "MAX_CHARS",
    "MAX_DEPTH",
    "MAX_NODES",
    "MAX_YAML_BYTES",
    "broken",
    "dump",
    "load",
    "looks_like_yaml",
    "mapping",
    "same",
    "top_keys",
    "tree",
]
