"""Cross-format rows by fill pattern (docs/fidelity.md, "Fidelity by pattern"): a cross row
predicted from the rows observed for other sources of the same pattern, instead of a write, a
read back and a diff of its own.

**Why it works.** A cross row is what target T does to each value the source fills: keeps it,
loses it (T has no place for it), changes it (T reads back another value), plus the values T's
reader adds where the source had none. For a given T that depends on *which* canonical paths the
source fills and on the *kind* of value at each (a known enumeration value or another one, true or
false, an integer or a fraction, a text with whitespace at its ends or carriage returns or macros,
a picture of some media type), not on the text itself.

**The pieces.**

- ``Shape``: one walk of a source entity's bodies (and of the entities linked to it, under their
  ``<kind>[i].`` prefixes): its units of content (the same units and weights as
  ``weights._Units``), grouped by (pattern, value class), what it fills (``Presence``: per
  pattern, whether every element of its list fills it, some, none), and its **signature**: the
  facts about the entity as a whole that change what comes back (its kind, the container and file
  suffix it came in, how many entities of each kind it links, whether its name survives as a file
  name, whether a nickname repeats the name, and which format ``Reshape`` tests its values meet).
- A **pattern** is (source format, target, signature): ``pattern_key``.
- ``Template``: what the rows observed for one pattern show: a *fate* per (pattern, value class)
  of unit (kept; lost or changed, with its class; or "set to the reader's default value"), the
  paths the target *adds* where a source fills nothing (once, or once per list element lacking
  it), and the presences its sources had. ``Template.learn`` reads one observed row (with the
  comparisons it came from) and keeps the template only when the template gives that very row
  back byte for byte; a row it does not (a pattern lost for some values of one class only, a diff
  cut at ``DIFF_LIMIT``, an error) teaches nothing. ``Template.merge`` joins two sources' templates
  and refuses (a *disagreement*) when one (pattern, class) fared two ways or an added path appears
  for one source and not for another in the same situation.
- ``Template.predict`` gives a new source's row from its shape, only when every (pattern, class)
  and every presence of the shape is among what the template's sources showed: one pass over the
  shape's groups, no write, no read, no diff.
- ``PatternBook``: templates by pattern, folded from observed rows in any order with the same
  result (a Beam combine's accumulator); a pattern whose rows disagree is ``Broken``, with the
  inputs that show it.
- ``Patterns``: a run's policy for ``check_decoded``: one input in ``sample`` (by the digest of its
  key) is observed in full; any other input's cross row is predicted from the book when the book
  knows its shape, and observed otherwise.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from bunzai_codecs.core.codec import Codec, Reshape
from bunzai_codecs.core.diff import join
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.fidelity.paths import _by_kind, _linked_of, _Part, _pattern_of, _status
from bunzai_codecs.fidelity.rows import DIFF_LIMIT, FidelityRow, PathLoss
from bunzai_codecs.fidelity.weights import MEDIA_UNITS, _Dumps, _Units, content_weight

# -- value classes ----------------------------------------------------------------------------------


@functools.cache
def _enum_paths() -> dict[str, dict[str, frozenset[str]]]:
    """kind -> body pattern -> the values its schema names (a closed ``Literal`` or an open
    enumeration's ``x-known-values``): a string there is classed by its value, since what a target
    does with it depends on which value it is (a known one mapped, another dropped)."""
    from bunzai_codecs.entities import BODY_TYPES

    return {kind: _schema_enums(model.model_json_schema()) for kind, model in BODY_TYPES.items()}


def _schema_enums(schema: dict[str, Any]) -> dict[str, frozenset[str]]:
    defs = schema.get("$defs", {})
    found: dict[str, frozenset[str]] = {}

    def walk(node: Any, path: str, depth: int) -> None:
        if not isinstance(node, dict) or depth > 40:
            return
        ref = node.get("$ref")
        if isinstance(ref, str):
            walk(defs.get(ref.rsplit("/", 1)[-1], {}), path, depth + 1)
        values = [node["const"]] if "const" in node else node.get("enum") or node.get("x-known-values")
        if values and all(isinstance(v, str) for v in values):
            found[path] = found.get(path, frozenset()) | frozenset(values)
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in node.get(key) or ():
                walk(sub, path, depth + 1)
        for name, sub in (node.get("properties") or {}).items():
            walk(sub, f"{path}.{name}" if path else name, depth + 1)
        items = node.get("items")
        if isinstance(items, dict):
            walk(items, f"{path}[]", depth + 1)

    walk(schema, "", 0)
    return found


def _number_class(v: int | float) -> str:
    """A number's class: int or float, integral or not, its sign, and whether it leaves the 32-bit
    and the 53-bit ranges (where apps that store ints or doubles part ways)."""
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            return "fnan"
        c = "f" if v.is_integer() else "g"
    else:
        c = "i"
    if v < 0:
        c += "-"
    elif v == 0:
        c += "0"
    a = abs(v)
    if a >= 2**53:
        c += "H"
    elif a >= 2**31:
        c += "B"
    return c


def _text_class(s: str) -> str:
    """A text's class: the features some app's writer or reader treats apart — whitespace at
    either end (trimmed), carriage returns (CRLF made LF), macros (``{{char}}`` spelled the app's
    way)."""
    c = "s"
    if s[0].isspace() or s[-1].isspace():
        c += "w"
    if "\r" in s:
        c += "r"
    if "{{" in s:
        c += "m"
    return c


_LIST_INDEX = re.compile(r"\[\d+\]")
#: distinct values of a (pattern, class) of scalars a shape counts (for a target that gives one
#: value back whatever the source said); past this the rule cannot be applied to the shape
_VALUES = 64
#: a media asset's fields that stand for its bytes (``media._CONTENT_KEYS``)
_MEDIA_CONTENT = frozenset({"sha256", "size", "ref", "mime"})


# -- the shape of a source --------------------------------------------------------------------------


@dataclass(slots=True)
class _Stat:
    """The units of one (pattern, value class) in a shape: how many, where the first one is in the
    walk's order (its index and concrete path), their weight, and (scalars) the same by value."""

    count: int
    index: int
    at: str
    weight: int
    #: value key (``(type, value)``) -> [count, index, at] of its first unit; None past ``_VALUES``
    values: dict[Any, list[Any]] | None = None


def _element_of(pattern: str) -> str:
    """The innermost list-element pattern ``pattern`` lies in (``entries[]`` for
    ``entries[].content``), or "" (the body itself)."""
    cut = pattern.rfind("[]")
    return pattern[: cut + 2] if cut >= 0 else ""


#: a pattern's presence in a source, relative to the elements it lies in: every element fills it,
#: some do, none does, there are no elements, or (below a keyed step) any number of values do
_ALL, _SOME, _NONE, _VOID, _ANY = "all", "some", "none", "void", "any"
_ONE, _SOME_ELEMENTS, _NO_ELEMENTS = frozenset({"1"}), frozenset({"+"}), frozenset({"0"})


class Shape:
    """One walk of the bodies a cross row of ``e`` compares (``weights._bodies``): the units of
    content (``units``, as ``_Units.of`` makes them) grouped by pattern and value class
    (``groups``), each unit in the walk's order (``order``: prefix, path, pattern, class, value
    key), the concrete paths of each list pattern's elements (``elements``; a linked kind's
    entities are the elements of ``<kind>[]``), how many values at each pattern hold a unit
    (``filled``: leaves and the objects and lists above them), and the signature."""

    __slots__ = (
        "_bodies",
        "_counter",
        "_holding",
        "_order",
        "_states",
        "elements",
        "filled",
        "groups",
        "leaves",
        "signature",
        "units",
    )

    def __init__(
        self,
        e: CanonicalEntity,
        pool: Sequence[CanonicalEntity],
        dumps: _Dumps,
        container: str,
        *,
        order: bool = False,
    ) -> None:
        self.groups: dict[tuple[str, str], _Stat] = {}
        self.elements: dict[str, list[str]] = {}
        #: every unit in the walk's order, when asked for (``order``): what ``Template.learn`` reads
        self._order: list[tuple[str, str, str, str, Any]] | None = [] if order else None
        self._counter = itertools.count()
        self.filled: dict[str, int] = {}
        self._holding: dict[str, set[str]] = {}
        self._states: dict[str, frozenset[str]] | None = None
        units: dict[str, dict[str, int]] = {}
        fill: set[str] = {f"kind:{e.kind}", f"container:{container}", *_entity_classes(e)}
        bodies: list[tuple[str, str, Any]] = [("", e.kind, dumps.shared(e))]
        linked = _by_kind((x, None) for x in _linked_of(e, pool))
        for kind, items in sorted(linked.items()):
            fill.add(f"linked:{kind}:{len(items)}")
            self.elements[f"{kind}[]"] = [f"{kind}[{i}]" for i in range(len(items))]
            bodies += [(f"{kind}[{i}].", kind, dumps.shared(x)) for i, (x, _) in enumerate(items)]
        for prefix, kind, body in bodies:
            pp = _pattern_of(prefix) if prefix else ""
            if (
                _walk(self, units.setdefault(prefix, {}), prefix, pp, _enum_paths().get(kind, {}), body)
                and prefix
            ):
                self.filled[pp[:-1]] = self.filled.get(pp[:-1], 0) + 1
            fill.update(f"reshape:{rid}" for rid in _reshapes_active(body))
        self.units = _Units(units)
        self._bodies = bodies
        self.leaves: dict[str, int] = {}
        for (pattern, _), st in self.groups.items():
            self.leaves[pattern] = self.leaves.get(pattern, 0) + st.count
        for pattern, n in self.leaves.items():  # a leaf is filled where it holds a unit
            self.filled[pattern] = self.filled.get(pattern, 0) + n
        digest = hashlib.blake2b(digest_size=12)
        for item in sorted(fill):
            digest.update(item.encode("utf-8", "surrogatepass"))
            digest.update(b"\0")
        self.signature = digest.hexdigest()

    def state(self, pattern: str) -> str:
        """How fully this source fills ``pattern`` (``_ALL``...)."""
        e = _element_of(pattern)
        n = len(self.elements.get(e, ())) if e else 1
        f = self.filled.get(pattern, 0)
        if n == 0:
            return _VOID
        if f == 0:
            return _NONE
        if ".*" in pattern[len(e) :]:
            return _ANY
        return _ALL if f == n else _SOME

    def lacking(self, element: str, head: str) -> int:
        """How many elements of ``element`` fill nothing at ``element + head``."""
        return len(self.elements.get(element, ())) - self.filled.get(element + head, 0)

    def states(self) -> dict[str, frozenset[str]]:
        """What this source fills, as ``Template.states`` keeps it: per pattern its state, per leaf
        pattern whether a unit sits at it (``leaf:``), per list pattern whether it has elements
        (``#``). Keys not listed are implied (``_implied``)."""
        if self._states is None:
            out = {p: frozenset({self.state(p)}) for p in self.filled}
            out.update((f"leaf:{p}", _ONE) for p in self.leaves)
            out.update((f"#{e}", _SOME_ELEMENTS if els else _NO_ELEMENTS) for e, els in self.elements.items())
            self._states = out
        return self._states

    @property
    def order(self) -> list[tuple[str, str, str, str, Any]]:
        """Every unit in the walk's order: (prefix, path, pattern, value class, value key)."""
        if self._order is None:  # walked again (the same walk, recording): rarely needed
            again = _Again(self)
            for prefix, kind, body in self._bodies:
                pp = _pattern_of(prefix) if prefix else ""
                _walk(again, {}, prefix, pp, _enum_paths().get(kind, {}), body)  # type: ignore[arg-type]
            self._order = again._order
        return self._order

    def holding(self, element: str, head: str) -> set[str]:
        """The elements of ``element`` (concrete paths) that fill something at ``element + head``."""
        key = element + head
        found = self._holding.get(key)
        if found is None:
            depth = element.count("[]")
            found = set()
            for prefix, path, pattern, _, _ in self.order:
                if pattern == key or pattern.startswith((key + ".", key + "[")):
                    found.add(_cut(prefix + path, depth))
            self._holding[key] = found
        return found


class _Again:
    """What ``_walk`` fills, for a second walk that only records the order."""

    def __init__(self, shape: Shape) -> None:
        self.groups: dict[tuple[str, str], _Stat] = {}
        self.filled: dict[str, int] = {}
        self.elements: dict[str, list[str]] = {}
        self._order: list[tuple[str, str, str, str, Any]] = []
        self._counter = itertools.count()


def _cut(path: str, depth: int) -> str:
    """``path`` up to the end of its ``depth``-th list index (``entries[3]`` of
    ``entries[3].triggers[0].text`` for depth 1)."""
    end = 0
    for m in _LIST_INDEX.finditer(path):
        depth -= 1
        end = m.end()
        if depth == 0:
            break
    return path[:end]


def _walk(
    shape: Shape, units: dict[str, int], prefix: str, pp: str, enums: dict[str, frozenset[str]], body: Any
) -> bool:
    """``Shape``'s walk of one body: ``content_units``' order and rule (``weights._units_into``), with
    each unit's pattern and value class, and what each pattern holds (whether the body holds a
    unit). Written as closures over locals: it runs over every value of every source body."""
    groups, filled, elements = shape.groups, shape.filled, shape.elements
    order = shape._order
    cut = len(pp)

    counter = shape._counter

    def unit(path: str, full: str, weight: int, cls: str, value: Any) -> None:
        if full[-2:] == "[]":  # a value of a list: a target that holds one keeps the first
            cls += "@0" if path[-3:] == "[0]" else "@n"
        elif "[]" in full and (at := path.rfind("[")) >= 0:
            # a field of a list's element: a target may keep the first element only
            cls += "@0" if path.startswith("[0]", at) else "@n"
        units[path] = weight
        index = next(counter)
        key = (full, cls)
        st = groups.get(key)
        if st is None:
            st = groups[key] = _Stat(1, index, prefix + path, weight, None if value is None else {})
        else:
            st.count += 1
            st.weight += weight
        if value is not None:
            values = st.values
            if values is not None:
                vk = (value.__class__, value)
                v = values.get(vk)
                if v is not None:
                    v[0] += 1
                elif len(values) < _VALUES:
                    values[vk] = [1, index, prefix + path]
                else:
                    st.values = None
            if order is not None:
                order.append((prefix, path, full, cls, (value.__class__, value)))
        elif order is not None:
            order.append((prefix, path, full, cls, None))

    def walk(value: Any, path: str, full: str) -> bool:
        c = value.__class__
        if c is str:
            if not value:
                return False
            known = enums.get(full[cut:]) if enums else None
            cls = (f"={value}" if value in known else "=?") if known is not None else _text_class(value)
            unit(path, full, len(value), cls, None)
            return True
        if c is dict:
            size = value.get("size")
            if (
                size is not None
                and isinstance(size, int)
                and size.__class__ is not bool
                and full[cut:] in MEDIA_UNITS
            ):
                if size <= 0:
                    return False
                fields = ",".join(
                    k for k in sorted(value) if k not in _MEDIA_CONTENT and value[k] is not None
                )
                unit(path, full, size, f"media:{value.get('mime')}:{'sha256' in value}:{fields}", None)
                return True
            held = False
            for k in sorted(value, key=str):
                if k.__class__ is str and k.isidentifier():
                    if path:
                        held = walk(value[k], f"{path}.{k}", f"{full}.{k}") or held
                    else:
                        held = walk(value[k], k, f"{full}.{k}" if full else k) or held
                else:
                    p = join(path, k)
                    held = walk(value[k], p, pp + _pattern_of(p)) or held
            if held and path:
                filled[full] = filled.get(full, 0) + 1
            return held
        if c is list:
            ep = f"{full}[]"
            els = elements.get(ep)
            if els is None:
                els = elements[ep] = []
            held = False
            for i, v in enumerate(value):
                p = f"{path}[{i}]"
                els.append(prefix + p)
                held = walk(v, p, ep) or held
            if held:
                filled[full] = filled.get(full, 0) + 1
            return held
        if value is None:
            return False
        if c is bool:
            unit(path, full, 1, "T" if value else "F", value)
            return True
        if c is int or c is float:
            unit(path, full, 1, _number_class(value), value)
            return True
        w = content_weight(path, value)  # anything else: the rule itself, classed by its type
        if w:
            unit(path, full, w, c.__name__, None)
            return True
        return False

    return walk(body, "", pp[:-1])


def _entity_classes(e: CanonicalEntity) -> list[str]:
    """What about the entity as a whole changes what comes back: whether its display name is its
    own export's file name (a format that names an entity after its file, a SillyTavern world,
    gives the name back only then), whether a nickname repeats the name (``SEMANTIC_BODY``), and
    the suffix of the file it came from (a target with several containers keeps the source's)."""
    from bunzai_codecs.fidelity.checks import _file_stem, entity_name

    name = entity_name(e)
    uri = e.source.uri if e.source is not None else ""
    base = uri.split("::", 1)[0].rsplit("/", 1)[-1]
    suffix = base.rpartition(".")[2].lower() if "." in base else ""
    identity = getattr(e.body, "identity", None)
    nick = getattr(identity, "nickname", None)
    return [
        f"name:{'none' if not name else 'stem' if _file_stem(e) == name else 'other'}",
        f"nickname:{'none' if not nick else 'name' if nick == getattr(identity, 'name', None) else 'own'}",
        f"suffix:{suffix}",
    ]


@functools.cache
def _all_reshapes() -> tuple[tuple[str, Reshape], ...]:
    """Every ``Reshape`` a format declares (in its coverage or an embedded coverage)."""
    from bunzai_codecs.core import registry

    seen: list[tuple[str, Reshape]] = []
    for codec in registry.all_codecs():
        for cov in (codec.coverage, *codec.embedded_coverage.values()):
            for r in cov.reshapes:
                if all(r is not x for _, x in seen):
                    seen.append((f"{codec.id}:{r.path}:{len(seen)}", r))
    return tuple(seen)


def _reshapes_active(body: Any) -> list[str]:
    """The reshapes whose test holds for a value of ``body``: some format writes that value in
    another shape, so what comes back depends on the value (the signature names it)."""
    return [rid for rid, r in _all_reshapes() if any(r.when(v) for v in _values_at(body, r.path))]


def _values_at(body: Any, pattern: str) -> list[Any]:
    """Every value of ``body`` at a coverage ``pattern`` (``entries[].triggers``)."""
    nodes = [body]
    for step in pattern.replace("[]", ".[]").split("."):
        if not step:
            continue
        nxt: list[Any] = []
        for n in nodes:
            if step == "[]":
                if isinstance(n, list):
                    nxt.extend(n)
            elif isinstance(n, dict) and step in n:
                nxt.append(n[step])
        nodes = nxt
    return nodes


def pattern_key(shape: Shape, source: str, target: Codec | str) -> str:
    """The pattern of a cross row: (source format, target, the source's signature), as 16 hex."""
    tid = target if isinstance(target, str) else target.id
    return hashlib.blake2b(f"{source}\0{tid}\0{shape.signature}".encode(), digest_size=8).hexdigest()


# -- templates --------------------------------------------------------------------------------------

#: what a target does to the units of one (pattern, value class): ``(group, class, weighed,
#: keeps)`` — lost or changed, expected or unexpected, its weight counted (a media asset's bytes
#: are not), and, for a target that gives one value back whatever the source said (its reader's
#: default), that value (``(type, value)``): units holding it are kept — or None: kept
Fate = tuple[str, str, bool, Any] | None


@dataclass(frozen=True, slots=True)
class _Added:
    """A path the target adds where a source fills nothing: the leaf ``path`` itself (no
    ``element``, no ``head``); a list at ``head`` where there is none (``times`` values, the first
    at ``rest``); or in each element of list pattern ``element`` that fills nothing at
    ``element + head``, ``times`` paths each (the first at the element + ``rest``)."""

    path: str
    cls: str
    element: str = ""
    head: str = ""
    rest: str = ""
    times: int = 1
    #: the leaf rule only: added where the source fills this object (a picture's name, added to
    #: a picture); "" where the source lacks it too
    parent: str = ""

    def count(self, shape: Shape) -> int:
        if self.element:
            return shape.lacking(self.element, self.head) * self.times
        if self.head:
            return 0 if shape.filled.get(self.head) else self.times
        if self.parent and not shape.filled.get(self.parent):
            return 0
        return 0 if shape.leaves.get(self.path) else 1

    def at(self, shape: Shape) -> str:
        if not self.element:
            return self.rest or self.path
        held = shape.holding(self.element, self.head)
        return next(x for x in shape.elements.get(self.element, ()) if x not in held) + self.rest

    def fires(self, states: Mapping[str, frozenset[str]]) -> bool:
        """Whether this rule adds something for at least one source with these ``states``."""
        if self.element:
            key = self.element + self.head
            if key in states:
                return bool(states[key] & {_NONE, _SOME})
            return "+" in _implied(f"#{self.element}", states)
        if self.head:
            return bool(_implied(self.head, states) & {_NONE, _VOID})
        if self.parent and not (_implied(self.parent, states) & {_ALL, _SOME, _ANY}):
            return False
        return "0" in _implied(f"leaf:{self.path}", states)

    def same_addition(self) -> tuple[Any, ...]:
        """What is added, whatever the condition on the parent (``parent``)."""
        return (self.path, self.cls, self.element, self.head, self.rest, self.times)


def _implied(key: str, states: Mapping[str, frozenset[str]]) -> frozenset[str]:
    """``states[key]``, or what sources that never filled it had there: a leaf never held a unit
    (``"0"``), a list had no elements, a pattern was filled by none of its elements (``none``; or
    ``void`` where its list had none either)."""
    found = states.get(key)
    if found is not None:
        return found
    if key.startswith(("leaf:", "#")):
        return _NO_ELEMENTS
    e = _element_of(key)
    if not e:
        return frozenset({_NONE})
    els = _implied(f"#{e}", states)
    return frozenset(({_NONE} if "+" in els else set()) | ({_VOID} if "0" in els else set()))


@dataclass(frozen=True)
class Template:
    """What one target does to the sources of one pattern, from the rows observed for them: a fate
    per (pattern, value class) of unit, the paths it adds where a source fills nothing, and what the
    sources filled (``states``: a new source is predicted only where its own are among these)."""

    fates: dict[tuple[str, str], Fate]
    added: frozenset[_Added]
    states: dict[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def learn(cls, row: FidelityRow, parts: Sequence[_Part], shape: Shape) -> Template | None:
        """The template that gives ``row`` (observed, with the comparisons ``parts`` it came from)
        back from ``shape``; None when none does (see the module's docstring)."""
        if row.status == "error" or row.lost_weight is None:
            return None
        if any(len(p.changes) >= DIFF_LIMIT for p in parts):
            return None  # the diff was cut: a count may be short
        classes: dict[tuple[str, str], set[str]] = {}
        for group in ("lost", "changed"):
            for x in getattr(row, group):
                classes.setdefault((group, x.path), set()).add(x.cls)
        # each unit's fate, as _weigh finds them: a change takes the units it touches
        units = shape.units.fresh()
        fate_of: dict[tuple[str, str], tuple[str, str, bool, Any]] = {}
        for part in parts:
            for ch in part.changes:
                if ch.kind != "added":
                    group = "lost" if ch.kind == "removed" else "changed"
                    for p, _ in units.take(part.prefix, ch.path):
                        after = (
                            (ch.after.__class__, ch.after) if p == ch.path and group == "changed" else None
                        )
                        fate_of[(part.prefix, p)] = (group, "", True, after)
            for group, path, c in part.media:
                if group != "added":
                    fate_of.setdefault((part.prefix, path), (group, c, False, None))
        seen: dict[tuple[str, str], list[tuple[Fate, Any, Any]]] = {}
        for prefix, path, pattern, vcls, vk in shape.order:
            f = fate_of.get((prefix, path))
            fate: Fate = None
            after = None
            if f is not None:
                group, cls_, weighed, after = f
                if not cls_:
                    found = classes.get((group, pattern))
                    if found is None or len(found) != 1:
                        return None
                    cls_ = next(iter(found))
                fate = (group, cls_, weighed, None)
            seen.setdefault((pattern, vcls), []).append((fate, vk, after))
        fates: dict[tuple[str, str], Fate] = {}
        for key, items in seen.items():
            kinds = {f for f, _, _ in items}
            if len(kinds) == 1:
                fates[key] = items[0][0]
                continue
            fate = _default_of(items)
            if fate is None:
                return None  # one kind of value fared two ways: not the pattern's doing
            fates[key] = fate
        added = []
        for x in row.added:
            rule = _added_rule(x, shape)
            if rule is None:
                return None
            added.append(rule)
        t = cls(fates, frozenset(added), dict(shape.states()))
        made = t.predict(shape, row)
        if made is None or made.to_json() != row.to_json():
            return None
        return t

    def merge(self, other: Template) -> Template | str:
        """One template for what both say, or why they disagree: one (pattern, class) fared two
        ways, or a path one added the other did not add in the same situation."""
        fates = dict(self.fates)
        for k, f in other.fates.items():
            mine = fates.setdefault(k, f)
            if mine != f:
                return f"{k[0]} ({k[1]}): {_fate_text(mine)} in one source, {_fate_text(f)} in another"
        # one rule per addition: where one source shows it added without its parent, it is added
        # whatever the parent
        rules: dict[tuple[Any, ...], _Added] = {}
        for r in sorted(self.added | other.added, key=lambda r: (r.same_addition(), r.parent)):
            rules[r.same_addition()] = r if r.same_addition() not in rules else replace(r, parent="")
        added = frozenset(rules.values())
        for side in (self, other):
            shown = {r.same_addition() for r in side.added}
            for r in added:
                if r.same_addition() not in shown and r.fires(side.states):
                    return f"{r.path}: added for one source, not for another that also lacked it"
        keys = self.states.keys() | other.states.keys()
        states = {k: _implied(k, self.states) | _implied(k, other.states) for k in keys}
        return Template(fates, added, states)

    def knows(self, shape: Shape) -> bool:
        """Whether every (pattern, class) of ``shape``, and how it fills each pattern, are among
        what this template's sources showed."""
        fates = self.fates
        if any(k not in fates for k in shape.groups):
            return False
        mine, theirs = shape.states(), self.states
        return all(_implied(k, mine) <= _implied(k, theirs) for k in mine.keys() | theirs.keys())

    def predict(self, shape: Shape, like: FidelityRow) -> FidelityRow | None:
        """The row for ``shape``, its input and entity fields taken from ``like`` (made for this very
        input, entity and target); None when the template does not know ``shape`` or the row would
        reach the diff's limit."""
        if not self.knows(shape):
            return None
        acc: dict[tuple[str, str, str], list[Any]] = {}
        lost_weight = 0
        events = 0
        fates = self.fates
        for key, st in shape.groups.items():
            f = fates[key]
            if f is None:
                continue
            group, c, weighed, keeps = f
            count, index, at, w = st.count, st.index, st.at, st.weight
            if keeps is not None:  # set to the reader's default: units holding it are kept
                if st.values is None:
                    return None
                rest = [v for k, v in st.values.items() if k != keeps]
                if not rest:
                    continue
                count = sum(v[0] for v in rest)
                index, at = min((v[1], v[2]) for v in rest)
                w = count  # a scalar weighs 1
            if not weighed:
                w = 0
            lost_weight += w
            events += count
            e = acc.get((group, key[0], c))
            if e is None:
                acc[(group, key[0], c)] = [count, index, at, w]
            else:
                e[0] += count
                e[3] += w
                if index < e[1]:
                    e[1], e[2] = index, at
        out: dict[str, list[PathLoss]] = {"lost": [], "changed": [], "added": []}
        for (group, path, c), (count, _, at, w) in acc.items():
            out[group].append(PathLoss(path, c, count, at, w))  # type: ignore[arg-type]
        for r in self.added:
            n = r.count(shape)
            if n:
                events += n
                out["added"].append(PathLoss(r.path, r.cls, n, r.at(shape)))  # type: ignore[arg-type]
        if events >= DIFF_LIMIT:
            return None
        lost, changed, adds = (sorted(out[g], key=_order) for g in ("lost", "changed", "added"))
        return FidelityRow(
            input=like.input,
            sha256=like.sha256,
            uri=like.uri,
            entity=like.entity,
            kind=like.kind,
            name=like.name,
            source=like.source,
            target=like.target,
            check="cross",
            status=_status(lost, changed, adds),
            lost=lost,
            changed=changed,
            added=adds,
            weight=shape.units.total(),
            lost_weight=lost_weight,
        )


def _fate_text(f: Fate) -> str:
    if f is None:
        return "kept"
    group, c, _, keeps = f
    return f"{group} ({c})" + (f" unless it is {keeps[1]!r}" if keeps is not None else "")


def _default_of(items: list[tuple[Fate, Any, Any]]) -> Fate:
    """The fate of a (pattern, class) some of whose units came back changed and the others kept,
    when the target gives one value back whatever the source said (its reader's default, the
    writer having dropped it): every changed unit came back as that value, every kept unit held it.
    None when that is not what happened."""
    kinds = {f for f, _, _ in items}
    changed = [f for f in kinds if f is not None]
    if len(kinds) != 2 or len(changed) != 1 or changed[0][0] != "changed" or not changed[0][2]:
        return None
    afters = {after for f, _, after in items if f is not None}
    value = next(iter(afters)) if len(afters) == 1 else None
    if value is None:
        return None
    for f, vk, _ in items:
        if vk is None or (vk == value) != (f is None):
            return None
    group, c, weighed, _ = changed[0]
    return (group, c, weighed, value)


def _order(x: PathLoss) -> tuple[str, str]:
    return x.path, x.cls


def _added_rule(x: PathLoss, shape: Shape) -> _Added | None:
    """An added path as a rule (``_Added``) that gives its count and first path back, or None."""
    if ".*" in x.path:
        return None
    if "[]" not in x.path:
        parent = x.path.rpartition(".")[0]
        rule = _Added(x.path, x.cls, parent=parent if parent and shape.filled.get(parent) else "")
        return rule if x.count == 1 and x.at == x.path and rule.count(shape) == 1 else None
    top = x.path[: x.path.index("[]")]
    first = x.path.replace("[]", "[0]")
    if "[]" not in x.path[len(top) + 2 :] and x.at == first and not shape.filled.get(top):
        return _Added(x.path, x.cls, head=top, rest=first, times=x.count)  # a list where there was none
    cut = len(x.path)
    while (cut := x.path.rfind("[]", 0, cut)) >= 0:
        element, rest = x.path[: cut + 2], x.path[cut + 2 :]
        if not rest.startswith("."):
            continue
        head = "." + rest[1:].split(".", 1)[0].split("[", 1)[0]
        lacking = shape.lacking(element, head)
        if lacking <= 0 or x.count % lacking:
            continue
        rule = _Added(x.path, x.cls, element, head, rest.replace("[]", "[0]"), x.count // lacking)
        if rule.at(shape) == x.at:
            return rule
    return None


# -- a run's book of patterns -----------------------------------------------------------------------


@dataclass(frozen=True)
class Broken:
    """A pattern no one template gives every sampled row of: its rows are observed for every input
    of the run. ``disagreed``: some sampled row did teach a template, and another row disagrees
    with it (no template gives that row, or the two give different fates or additions) — a codec
    bug or a loss that depends on the values, which the run reports; otherwise no sampled row of
    it taught anything (its losses depend on the values throughout). ``inputs``: up to three of the
    sampled inputs (the first by key). Both depend on the set of rows, never on the order they
    were folded in."""

    source: str
    target: str
    disagreed: bool
    inputs: tuple[str, ...]

    @property
    def reason(self) -> str:
        if self.disagreed:
            return "the sampled rows of this pattern disagree: no one prediction gives them all"
        return "no sampled row of this pattern follows from its paths and value classes"

    def to_json(self, key: str) -> dict[str, Any]:
        return {
            "pattern": key,
            "source": self.source,
            "target": self.target,
            "reason": self.reason,
            "inputs": list(self.inputs),
        }


@dataclass
class _Entry:
    template: Template | Broken
    #: the first three inputs (by key) that taught it
    inputs: tuple[str, ...]
    source: str
    target: str
    #: every input that taught it (``_member``: 64 bits of its key's digest)
    members: frozenset[int] = frozenset()


def _member(key: str) -> int:
    return int.from_bytes(
        hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big"
    )


class PatternBook:
    """Templates by pattern key, folded from observed rows (``add``) and other books (``merge``)
    with the same result in any order: a pattern whose rows disagree is ``Broken`` for good."""

    def __init__(self) -> None:
        self.entries: dict[str, _Entry] = {}

    def add(self, key: str, learned: Template | None, *, input: str, source: str, target: str) -> None:
        """An observed row of pattern ``key`` (``learned``: its template, None when none gives it
        back) of ``input``."""
        t: Template | Broken = learned if learned is not None else Broken(source, target, False, (input,))
        self._fold(key, _Entry(t, (input,), source, target, frozenset({_member(input)})))

    def merge(self, other: PatternBook) -> PatternBook:
        for key, entry in other.entries.items():
            self._fold(key, entry)
        return self

    def _fold(self, key: str, entry: _Entry) -> None:
        have = self.entries.get(key)
        if have is None:
            self.entries[key] = entry
            return
        inputs = tuple(sorted(set(have.inputs) | set(entry.inputs)))[:3]
        members = have.members | entry.members
        a, b = have.template, entry.template
        merged: Template | Broken
        if isinstance(a, Broken) or isinstance(b, Broken):
            # a template met a row it does not give (or a disagreement already): they disagree
            disagreed = any(not isinstance(x, Broken) or x.disagreed for x in (a, b))
            merged = Broken(have.source, have.target, disagreed, inputs)
        else:
            m = a.merge(b)
            merged = Broken(have.source, have.target, True, inputs) if isinstance(m, str) else m
        self.entries[key] = _Entry(merged, inputs, have.source, have.target, members)

    def get(self, key: str) -> Template | Broken | None:
        entry = self.entries.get(key)
        return entry.template if entry is not None else None

    def taught(self, key: str, input: str) -> bool:
        """Whether ``input``'s observed row of pattern ``key`` is one the book was made from."""
        entry = self.entries.get(key)
        return entry is not None and _member(input) in entry.members

    def broken(self) -> dict[str, Broken]:
        return {k: e.template for k, e in self.entries.items() if isinstance(e.template, Broken)}

    def disagreements(self) -> dict[str, Broken]:
        """The patterns whose sampled rows disagree (``Broken.disagreed``), by key."""
        return {k: b for k, b in sorted(self.broken().items()) if b.disagreed}

    def __len__(self) -> int:
        return len(self.entries)


#: normalize's default ``--fidelity-sample``: one input in 16 observed in full (docs/fidelity.md,
#: "Fidelity by pattern", says why)
DEFAULT_SAMPLE = 16


def sample_of(text: str) -> int:
    """``"1/K"`` -> K (>= 1): one input in K is observed in full."""
    head, sep, tail = text.strip().partition("/")
    try:
        k = int(tail) if sep and head.strip() == "1" else 0
    except ValueError:
        k = 0
    if k < 1:
        raise ValueError(f"expected 1/K with K a whole number of at least 1, got {text!r}")
    return k


def sampled(key: str, sample: int) -> bool:
    """Whether the input with stable key ``key`` (its uri in the pipeline) is in the sample of one
    in ``sample``: 64 bits of its blake2b digest, mod ``sample``, are 0 — the same inputs on every
    machine and run, whatever order they come in, and known before the input is read."""
    if sample <= 1:
        return True
    digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % sample == 0


@dataclass
class Patterns:
    """A run's cross-format policy (``check_decoded(patterns=...)``): an input in the sample (one in
    ``sample`` by ``sampled``) has every cross row observed; another input's row is predicted from
    ``book`` where the book knows the source's shape, and observed otherwise (its pattern not in the
    book, its rows broken, or a value class or presence the sample did not show)."""

    sample: int = 1
    book: PatternBook = field(default_factory=PatternBook)

    def observes(self, key: str) -> bool:
        return sampled(key, self.sample)

    def taught(self, key: str, input: str) -> bool:
        """Whether the book was made from ``input``'s observed row of pattern ``key`` (an input of
        the sample that the sample's pass read): its template gives that very row back."""
        return self.book.taught(key, input)

    def template(self, key: str) -> Template | None:
        t = self.book.get(key)
        return t if isinstance(t, Template) else None

    def disagreed(self, key: str) -> bool:
        """Whether pattern ``key``'s sampled rows disagree (then its rows are observed and say so)."""
        t = self.book.get(key)
        return isinstance(t, Broken) and t.disagreed


def learned_rows(
    items: Iterable[tuple[str, FidelityRow, Sequence[_Part], Shape]],
) -> Iterable[tuple[str, Template | None, FidelityRow]]:
    """``(pattern key, template or None, row)`` of observed rows (key, row, comparisons, shape)."""
    for key, row, parts, shape in items:
        yield key, Template.learn(row, parts, shape), row


__all__ = [
    "DEFAULT_SAMPLE",
    "Broken",
    "PatternBook",
    "Patterns",
    "Shape",
    "Template",
    "learned_rows",
    "pattern_key",
    "sample_of",
    "sampled",
]
