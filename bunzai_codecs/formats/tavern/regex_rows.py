"""One mapper for the regex rule rows of every app of the Tavern lineage (docs/canonical-model.md#regexrule).

SillyTavern, Lumiverse, RoleCall and Marinara each store a regex rule as one object: a "row". The
rows differ in their keys, their placement vocabulary and a few quirks, not in what they mean, so
each app supplies its row as data, a :class:`RuleRow`: its columns (:class:`Column`) in the order
the app writes them, each naming the row key and the canonical ``RegexRule`` field(s) it holds, with the
app's placement table and quirks as the columns' parameters. This module reads a row through the
columns into a ``RegexRule`` dict (:func:`rule_of`, :func:`rules_of`) and writes a fresh row from a
rule (:func:`row_of`); each app's module keeps only its file's shape around the rows.

Reading is typed by the one reader of untrusted JSON (``_shared/wire.py``): a coercible value is
read and noted, anything else is ``Malformed`` at its JSON path, column by column in the canonical
field order (after the columns the app reads first, :attr:`RuleRow.reads`).
A field the app has no column for is left out (the model's default). Writing visits the columns
in order, so a fresh row has the app's own key order; a column may write nothing (an optional key).

The kinds of column (each app's module names the ones it uses in its table):

- :class:`Text`, :class:`Number`, :class:`Flag`, :class:`Strings`: one key, one field;
- :class:`Id`: the rule id (absent: the row index; how an app spells "no id");
- :class:`Placement`: ``phases``, through the app's placement table, with how the app spells a
  placement (ST's numbers, the others' names) and what it cannot write;
- :class:`FlagTargets` (ST's ``markdownOnly``/``promptOnly``), :class:`TargetList` (Lumiverse's
  ``target``), :class:`ApplyMode` (Marinara's ``applyMode``/``promptOnly``): ``targets``;
- :class:`SubstituteNumber` (ST's ``substituteRegex``): ``substituteFind``;
- :class:`FindLiteral` (ST's ``/pattern/flags`` ``findRegex``): ``find`` and ``flags`` in one key;
- :class:`IdList`: Marinara's character and preset id lists;
- :class:`Extras` (the unmapped keys, written back as row keys), :class:`ExtraAt` (one of them
  written at its place), :class:`Renamed` (a key kept in ``extras`` under another name).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.core.sniff import parse_json
from bunzai_codecs.entities.regex import RegexRule
from bunzai_codecs.formats._shared import wire
from bunzai_codecs.formats.tavern.lore import map_rows, with_unique_ids

Row = dict[str, Any]
#: a row as read (never changed)
Source = Mapping[str, Any]

#: the canonical fields in ``RegexRule``'s order: columns are read in it (:attr:`RuleRow.reads`)
FIELDS: tuple[str, ...] = tuple(RegexRule.model_fields)


@dataclass(frozen=True)
class Form:
    """How a row is written: ``module`` for Lumiverse's module rows; ``ids`` False for a file whose
    rows carry no id (Marinara's client exports); ``columns`` the keys the rows of the file written
    over already carry (empty for a fresh file: each optional column says whether it writes one)."""

    module: bool = False
    ids: bool = True
    columns: frozenset[str] = frozenset()

    def carries(self, key: str, fresh: bool) -> bool:
        """Whether the file's rows carry ``key`` (a fresh file: ``fresh``)."""
        return key in self.columns if self.columns else fresh


FRESH = Form()


class Column:
    """One key of an app's rule row (or a few written together) and the canonical field(s) it
    holds. :meth:`read` sets the field(s) of the rule dict from the row; :meth:`write` sets the
    key(s) of a fresh row from a rule."""

    @property
    def keys(self) -> tuple[str, ...]:
        """The row keys this column maps (what :class:`Extras` leaves alone)."""
        return ()

    #: the canonical field it reads (its place in the reading order)
    HOLDS: ClassVar[str] = "extras"

    def holds(self) -> str:
        """The canonical field it reads: :attr:`HOLDS`, or a mapped column's field."""
        return self.HOLDS

    def read(self, table: RuleRow, row: Source, index: int, ctx: wire.MapContext, rule: Row) -> None:
        """Set this column's field(s) of ``rule`` from ``row`` (at ``ctx``)."""

    def write(self, rule: RegexRule, index: int, form: Form, row: Row) -> None:
        """Set this column's key(s) of the fresh ``row`` for ``rule``."""


@dataclass(frozen=True)
class Keyed(Column):
    """A column of one row key."""

    key: str

    @property
    def keys(self) -> tuple[str, ...]:
        return (self.key,)


@dataclass(frozen=True)
class Mapped(Keyed):
    """A column of one row key and one canonical field."""

    field: str

    def holds(self) -> str:
        return self.field


def _dedupe(phases: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(phases))


@dataclass(frozen=True)
class Text(Mapped):
    """A string key: absent or ``null`` is ``default``; written as the field's value, or
    ``written`` when that is empty or unset."""

    default: str | None = ""
    written: str | None = None
    #: a row without a string here is not a rule (Marinara's ``findRegex``)
    required: bool = False

    def read(self, table: RuleRow, row: Source, index: int, ctx: wire.MapContext, rule: Row) -> None:
        v = row.get(self.key)
        if self.required and not isinstance(v, str):
            raise wire.wrong(ctx.at(self.key), "a string", v)
        s = wire.str_at(v, ctx, self.key)
        rule[self.field] = self.default if s is None else s

    def write(self, rule: RegexRule, index: int, form: Form, row: Row) -> None:
        v = getattr(rule, self.field)
        row[self.key] = (v or self.written) if self.written is not None else v


@dataclass(frozen=True)
class Number(Mapped):
    """A number key (``null`` unset); ``index``: absent is the row index (``sortOrder``)."""

    index: bool = False

    def read(self, table: RuleRow, row: Source, index: int, ctx: wire.MapContext, rule: Row) -> None:
        n = wire.num_at(row.get(self.key), ctx, self.key)
        rule[self.field] = index if n is None and self.index else n

    def write(self, rule: RegexRule, index: int, form: Form, row: Row) -> None:
        row[self.key] = getattr(rule, self.field)


@dataclass(frozen=True)
class Flag(Mapped):
    """A boolean key: absent is ``default``; ``negated`` holds the opposite of the field (ST's
    ``disabled`` for ``enabled``); ``as_bool`` writes an unset field as ``false``, ``omit_unset``
    writes nothing for it."""

    default: bool | None = None
    negated: bool = False
    as_bool: bool = False
    omit_unset: bool = False

    def read(self, table: RuleRow, row: Source, index: int, ctx: wire.MapContext, rule: Row) -> None:
        b = table.flag(row.get(self.key), ctx, self.key)
        if self.negated:
            rule[self.field] = not b
        else:
            rule[self.field] = self.default if b is None else b

    def write(self, rule: RegexRule, index: int, form: Form, row: Row) -> None:
        v = getattr(rule, self.field)
        if self.negated:
            row[self.key] = not v
        elif self.as_bool:
            row[self.key] = bool(v)
        elif v is not None or not self.omit_unset:
            row[self.key] = v


@dataclass(frozen=True)
class Strings(Mapped):
    """An array of strings (``[]`` is unset); written as a list, ``[]`` when unset."""

    def read(self, table: RuleRow, row: Source, index: int, ctx: wire.MapContext, rule: Row) -> None:
        rule[self.field] = wire.strs_at(table.value(row, self.key, ctx), ctx, self.key) or None

    def write(self, rule: RegexRule, index: int, form: Form, row: Row) -> None:
        row[self.key] = list(getattr(rule, self.field) or ())


@dataclass(frozen=True)
class Id(Keyed):
    """The rule's id: a string, or a number as its text; absent (or one of ``none``, an app's
    spelling of "no id") is the row index. ``omit_index`` leaves an id that is just the row index
    out of a written row (the app gives the rule one on import): ``"always"``, ``"module"`` (module
    rows only) or ``"never"``. ``given``: the file's reader sets the ids by its own rule (Marinara's
    depend on the file's shape); the column only writes them, in a file whose rows carry ids."""

    key: str = "id"
    none: tuple[Any, ...] = ()
    omit_index: str = "never"
    given: bool = False

    HOLDS = "id"

    def read(self, table: RuleRow, row: Source, index: int, ctx: wire.MapContext, rule: Row) -> None:
        if self.given:
            return
        v = row.get(self.key)
        rule["id"] = str(index) if any(v == x for x in self.none) else wire.id_text(v, index, ctx)

    def write(self, rule: RegexRule, index: int, form: Form, row: Row) -> None:
        if not form.ids:
            return
        omit = self.omit_index == "always" or (self.omit_index == "module" and form.module)
        if not (omit and index >= 0 and rule.id == str(index)):
            row[self.key] = rule.id


#: what a placement array and a placement were expected to be, by how an app spells them
#: (``Placement.numbers``): SillyTavern's numbers, RoleCall's names, Marinara's strings
PLACEMENT_WORDS: Mapping[str | None, tuple[str, str]] = {
    "table": ("an array of placement numbers", "a placement number"),
    "digits": ("an array of placement names", "a placement name"),
    None: ("an array", "a string"),
}

#: the placement names SillyTavern's UI gives, which Lumiverse, RoleCall and Marinara write
ST_UI_PLACEMENTS: Mapping[str, str] = {"user_input": "input", "ai_output": "output"}


@dataclass(frozen=True)
class Placement(Keyed):
    """``phases``: the app's placement values through ``phases`` (placement -> canonical phase);
    other strings are kept verbatim, each phase once. How a number reads is ``numbers``:
    ``"table"`` (SillyTavern's numbers: looked up, else kept as its digits), ``"digits"`` (the
    names of RoleCall: a number is kept as its digits), ``"text"`` (read as a string, noted, then
    looked up) or ``None`` (not a placement). What a wrong value was expected to be follows from it
    (:data:`PLACEMENT_WORDS`).

    Written back through the table reversed; a phase the app has no value for is written verbatim,
    unless it is one of ``dropped``. With ``numbers="table"`` (SillyTavern) a digits phase is
    written as its number, another unknown phase is dropped, and ``display`` is written as the
    ``display`` placements (ST's migration of its deprecated ``0``; ``FlagTargets`` adds
    ``markdownOnly``)."""

    phases: Mapping[Any, str]
    numbers: str | None = None
    dropped: frozenset[str] = frozenset()
    #: with ``numbers="table"``: what ``display`` is written as
    display: tuple[int, ...] = ()
    reverse: Mapping[str, Any] = field(init=False, repr=False, compare=False)

    HOLDS = "phases"

    def __post_init__(self) -> None:
        rev = {v: k for k, v in self.phases.items() if not (self.display and v == "display")}
        object.__setattr__(self, "reverse", rev)

    def read(self, table: RuleRow, row: Source, index: int, ctx: wire.MapContext, rule: Row) -> None:
        v = table.value(row, self.key, ctx, [])
        if self.numbers == "text":
            phases = _dedupe(self.phases.get(p, p) for p in wire.strs_at(v, ctx, self.key) or ())
        elif v.__class__ is not list:
            raise wire.wrong(ctx.at(self.key), PLACEMENT_WORDS[self.numbers][0], v)
        else:
            phases = _dedupe(self._phase(p, ctx, i) for i, p in enumerate(v))
        rule["phases"] = phases

    def _phase(self, p: Any, ctx: wire.MapContext, i: int) -> str:
        if p.__class__ is int and self.numbers == "table":
            return self.phases.get(p) or str(p)  # the common case
        if isinstance(p, str):
            return self.phases.get(p, p)
        if self.numbers is not None and isinstance(p, int | float) and not isinstance(p, bool):
            if self.numbers == "digits" or (isinstance(p, float) and not p.is_integer()):
                return wire.js_number_text(p)
            n = int(p)
            return self.phases.get(n) or str(n)
        raise wire.wrong(ctx.at(self.key, i), PLACEMENT_WORDS[self.numbers][1], p)

    def write(self, rule: RegexRule, index: int, form: Form, row: Row) -> None:
        if self.numbers != "table":
            row[self.key] = [self.reverse.get(p, p) for p in rule.phases if p not in self.dropped]
            return
        out: list[Any] = []
        for ph in rule.phases:
            n = self.reverse.get(ph)
            if n is not None:
                if n not in out:
                    out.append(n)
            elif ph == "display":
                out.extend(m for m in self.display if m not in out)
            elif ph.isdigit() and (k := wire.int_text(ph)) is not None:
                out.append(k)  # digits beyond what the app holds are no placement it has
        row[self.key] = out


@dataclass(frozen=True)
class FlagTargets(Column):
    """``targets`` as one boolean key per target (SillyTavern's ``markdownOnly`` -> ``display``,
    ``promptOnly`` -> ``prompt``); neither set is no targets. ``display_phase``: the ``display``
    phase is written as the display key too (ST's migration of its deprecated placement)."""

    flags: tuple[tuple[str, str], ...]
    display_phase: str | None = None

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(k for k, _ in self.flags)

    HOLDS = "targets"

    def read(self, table: RuleRow, row: Source, index: int, ctx: wire.MapContext, rule: Row) -> None:
        on = [target for key, target in self.flags if wire.bool_at(row.get(key), ctx, key)]
        rule["targets"] = on or None

    def write(self, rule: RegexRule, index: int, form: Form, row: Row) -> None:
        targets = rule.targets or ()
        for key, target in self.flags:
            row[key] = target in targets or (target == self.display_phase and target in rule.phases)


@dataclass(frozen=True)
class TargetList(Keyed):
    """``targets`` as a string or an array of strings (Lumiverse's ``target``); a rule without
    targets is written with ``stored`` (the app's "edit the stored text"); a module row writes a
    single target as a string."""

    stored: str

    HOLDS = "targets"

    def read(self, table: RuleRow, row: Source, index: int, ctx: wire.MapContext, rule: Row) -> None:
        v = row.get(self.key)
        if v is None or isinstance(v, str):
            rule["targets"] = v if v is None else [v]
        else:
            rule["targets"] = list(wire.strs_at(v, ctx, self.key) or ())

    def write(self, rule: RegexRule, index: int, form: Form, row: Row) -> None:
        targets = list(rule.targets) if rule.targets is not None else [self.stored]
        row[self.key] = targets[0] if form.module and len(targets) == 1 else targets


@dataclass(frozen=True)
class ApplyMode(Column):
    """``targets`` as Marinara's ``applyMode`` (``prompt``, ``display`` or ``both``; other strings
    verbatim) and its older ``promptOnly``: a null ``applyMode`` reads ``promptOnly`` (false:
    display only). Written as ``promptOnly`` and, where the file's rows carry it, ``applyMode``; no
    targets (the stored text) is ``both``."""

    key: str = "applyMode"
    legacy: str = "promptOnly"
    modes: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: {
            "prompt": ("prompt",),
            "display": ("display",),
            "both": ("display", "prompt"),
        }
    )

    @property
    def keys(self) -> tuple[str, ...]:
        return (self.legacy, self.key)

    HOLDS = "targets"

    def read(self, table: RuleRow, row: Source, index: int, ctx: wire.MapContext, rule: Row) -> None:
        mode = row.get(self.key)
        if mode is None:
            prompt = table.flag(row.get(self.legacy), ctx, self.legacy)
            rule["targets"] = ["prompt"] if prompt else ["display"]
            return
        if not isinstance(mode, str):
            raise wire.wrong(ctx.at(self.key), "a string or null", mode)
        rule["targets"] = list(self.modes.get(mode, (mode,)))

    def mode(self, targets: list[str] | None) -> str:
        """The ``applyMode`` of ``targets``."""
        if targets is None:
            return "both"  # no target = the text itself: Marinara's importer calls that "both"
        t = set(targets)
        if t == {"prompt"}:
            return "prompt"
        if t == {"display"}:
            return "display"
        return targets[0] if len(targets) == 1 else "both"

    def write(self, rule: RegexRule, index: int, form: Form, row: Row) -> None:
        mode = self.mode(rule.targets)
        row[self.legacy] = mode == "prompt"
        if form.carries(self.key, fresh=True):
            row[self.key] = mode


@dataclass(frozen=True)
class SubstituteNumber(Keyed):
    """``substituteFind`` as numbers (SillyTavern's ``substituteRegex`` 0/1/2 -> ``names``);
    ``true``/``false`` (community files) are ``raw``/``none``; other numbers are kept as their
    digits, other strings verbatim. Written only when set; a name with no number is written 0."""

    names: Mapping[int, str]
    numbers: Mapping[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "numbers", {v: k for k, v in self.names.items()})

    HOLDS = "substituteFind"

    def read(self, table: RuleRow, row: Source, index: int, ctx: wire.MapContext, rule: Row) -> None:
        v = row.get(self.key)
        out: str | None
        if v is None or isinstance(v, str):
            out = v
        elif v is True or v is False:
            out = self.names[1] if v else self.names[0]
        elif isinstance(v, int | float):
            n = int(v) if float(v).is_integer() else None
            out = self.names[n] if n is not None and n in self.names else wire.js_number_text(v)
        else:
            raise wire.wrong(ctx.at(self.key), "a substituteRegex number", v)
        rule["substituteFind"] = out

    def write(self, rule: RegexRule, index: int, form: Form, row: Row) -> None:
        sub = rule.substituteFind
        if sub is not None:
            n = self.numbers.get(sub)
            if n is None and sub.isdigit():
                n = wire.int_text(sub)
            row[self.key] = 0 if n is None else n


#: the flag letters ST's ``regexFromString`` accepts (JavaScript's plus the PCRE-style ones it lets through)
ST_FLAG_LETTERS = frozenset("dgimsuvyxXUAJ")
_DIRECTIVE = re.compile(r"<[^>]*>")


def split_find(find_regex: str) -> tuple[str, str]:
    """``"/a+b/gi"`` -> ``("a+b", "gi")``. Like ST's ``regexFromString``, the split happens only
    when the text starts with ``/``, a later ``/`` closes a non-empty pattern and what follows is
    flag letters with no repeat; otherwise the whole string is the pattern with no flags."""
    if len(find_regex) >= 3 and find_regex[0] == "/":
        j = find_regex.rfind("/")
        if j >= 2:
            flags = find_regex[j + 1 :]
            if all(c in ST_FLAG_LETTERS for c in flags) and len(set(flags)) == len(flags):
                return find_regex[1:j], flags
    return find_regex, ""


def join_find(find: str, flags: str) -> str:
    """The ``/pattern/flags`` literal ST stores; ``""`` for an empty pattern (``//`` would be the
    two-slash pattern to ST's ``regexFromString``, and ``split_find`` reads it so)."""
    return f"/{find}/{flags}" if find else ""


def st_flags(rule: RegexRule) -> str:
    """The flags ST can store for ``rule``: the flag letters ``split_find`` reads back, each once.

    Risu's ``<...>`` directives (``<order 5>``, ``<cbs,move_top>``) have no ST equivalent and are
    dropped (kept in the ``/pattern/flags`` literal they would make ST read the whole text as the
    pattern); a Risu rule whose custom flags are off (``useFlags`` false) runs with ``g``, as in Risu.
    """
    if rule.useFlags is False:
        return "g"
    return "".join(dict.fromkeys(c for c in _DIRECTIVE.sub("", rule.flags) if c in ST_FLAG_LETTERS))


@dataclass(frozen=True)
class FindLiteral(Keyed):
    """``find`` and ``flags`` in one ``/pattern/flags`` string (SillyTavern's ``findRegex``: see
    :func:`split_find`); written with the flags ST can store (:func:`st_flags`)."""

    HOLDS = "find"

    def read(self, table: RuleRow, row: Source, index: int, ctx: wire.MapContext, rule: Row) -> None:
        rule["find"], rule["flags"] = split_find(wire.str_at(row.get(self.key), ctx, self.key) or "")

    def write(self, rule: RegexRule, index: int, form: Form, row: Row) -> None:
        row[self.key] = join_find(rule.find, st_flags(rule))


@dataclass(frozen=True)
class IdList(Mapped):
    """A list of ids (Marinara's ``targetCharacterIds``, ``targetPromptPresetIds``), ``[]`` unset;
    ``single`` is an older single-id key read when the list is empty and written when the file's
    rows carry it instead. Written where the file's rows carry the key (a fresh file: ``fresh``),
    else when the rule has ids."""

    single: str | None = None
    fresh: bool = True

    @property
    def keys(self) -> tuple[str, ...]:
        return (self.key,) if self.single is None else (self.key, self.single)

    def read(self, table: RuleRow, row: Source, index: int, ctx: wire.MapContext, rule: Row) -> None:
        ids = ctx.str_list(table.value(row, self.key, ctx, []), (self.key,))
        one = row.get(self.single) if self.single is not None else None
        if not ids and isinstance(one, str) and one:
            ids = [one]  # the older nullable single-id column (null = all)
        rule[self.field] = ids or None

    def write(self, rule: RegexRule, index: int, form: Form, row: Row) -> None:
        ids = list(getattr(rule, self.field) or [])
        if form.carries(self.key, self.fresh):
            row[self.key] = ids
        elif self.single is not None and form.carries(self.single, self.fresh):
            row[self.single] = ids[0] if ids else None
        elif ids:
            row[self.key] = ids


@dataclass(frozen=True)
class Extras(Column):
    """The row's keys no other column maps, verbatim in ``extras``; written back as row keys after
    the mapped ones (a key a mapped column already wrote is not overwritten)."""

    def read(self, table: RuleRow, row: Source, index: int, ctx: wire.MapContext, rule: Row) -> None:
        rest = {k: v for k, v in row.items() if k not in table.mapped}
        if rest:
            rule.setdefault("extras", {}).update(rest)

    def write(self, rule: RegexRule, index: int, form: Form, row: Row) -> None:
        for k, v in (rule.extras or {}).items():
            row.setdefault(k, v)


@dataclass(frozen=True)
class ExtraAt(Keyed):
    """One key of ``extras`` written at this place of the row (RoleCall's ``description``, after
    the name); it is read with the other extras (it maps no key)."""

    @property
    def keys(self) -> tuple[str, ...]:
        return ()

    def write(self, rule: RegexRule, index: int, form: Form, row: Row) -> None:
        extras = rule.extras or {}
        if self.key in extras:
            row[self.key] = extras[self.key]


@dataclass(frozen=True)
class Renamed(Keyed):
    """A key kept in ``extras`` under another ``name`` (Marinara's timestamps); written back only in
    a file whose rows carry ids (they come with their rows)."""

    name: str

    def read(self, table: RuleRow, row: Source, index: int, ctx: wire.MapContext, rule: Row) -> None:
        if row.get(self.key) is not None:
            rule.setdefault("extras", {})[self.name] = row[self.key]

    def write(self, rule: RegexRule, index: int, form: Form, row: Row) -> None:
        extras = rule.extras or {}
        if form.ids and self.name in extras:
            row[self.key] = extras[self.name]


@dataclass(frozen=True)
class RuleRow:
    """One app's regex rule row: its ``columns`` in the order it writes them. ``json``: keys whose
    value may be a JSON-encoded string (Marinara's table store; ``""`` is unset); ``string_bools``:
    ``"true"``/``"false"`` are the app's own booleans, not a coercion to note; ``foreign``: a key
    that makes a row another app's, with the message saying so."""

    app: str
    columns: tuple[Column, ...]
    json: frozenset[str] = frozenset()
    string_bools: bool = False
    foreign: Mapping[str, str] = field(default_factory=dict)
    #: the columns read first, by a key of each; the others are read after them in the canonical
    #: field order (``RegexRule``'s). The order decides which error a row with several wrong keys
    #: reports and the order of a row's notes: each app keeps the one its reader has always had
    reads: tuple[str, ...] = ()
    #: the row keys the columns map (what :class:`Extras` leaves alone)
    mapped: frozenset[str] = field(init=False, repr=False, compare=False)
    #: :attr:`columns` in reading order
    reading: tuple[Column, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "mapped", frozenset(k for c in self.columns for k in c.keys))
        first = {k: i for i, k in enumerate(self.reads)}
        missing = set(self.reads) - self.mapped
        if missing:
            raise ValueError(f"{self.app}: reads names keys no column maps: {sorted(missing)}")

        def rank(c: Column) -> tuple[int, int]:
            named = min((first[k] for k in c.keys if k in first), default=len(first))
            return named, FIELDS.index(c.holds())

        object.__setattr__(self, "reading", tuple(sorted(self.columns, key=rank)))

    def value(self, row: Mapping[str, Any], key: str, ctx: wire.MapContext, default: Any = None) -> Any:
        """``row[key]``, decoded when the app stores it as JSON text (:attr:`json`)."""
        v = row.get(key)
        if v is None:
            return default
        if key in self.json and isinstance(v, str):
            if not v.strip():
                return default
            try:
                return parse_json(v, what=f"JSON in {key}")
            except Malformed as exc:
                raise Malformed(exc.message, path=ctx.at(key)) from None
        return v

    def flag(self, v: Any, ctx: wire.MapContext, key: str) -> bool | None:
        """A boolean value (``None`` unset), by the one reader's policy and the app's spelling."""
        if self.string_bools and v in ("true", "false"):
            return v == "true"
        return wire.bool_at(v, ctx, key)


def rule_of(table: RuleRow, row: Mapping[str, Any], index: int, ctx: wire.MapContext) -> Row:
    """One row as a ``RegexRule`` dict (not yet validated); ``index`` is its position (the id
    when it has none, and ``sortOrder`` for an app without one). Paths are built only for an error
    (``ctx.at``): the happy path formats none."""
    for key, message in table.foreign.items():
        if key in row:
            raise Malformed(message, path=ctx.at(key))
    rule: Row = {"sortOrder": index}
    for c in table.reading:
        c.read(table, row, index, ctx, rule)
    return rule


def rules_of(
    table: RuleRow,
    rows: Any,
    ctx: wire.MapContext,
    path: tuple[str | int, ...] = (),
    *,
    what: str = "regex script",
) -> list[Row]:
    """The array of rows at ``path`` below ``ctx`` as ``RegexRule`` dicts, ids made unique; a
    ``Malformed`` saying ``an array of <what>s`` or ``a <what> object`` where it is not one."""
    rules = map_rows(
        rows, ctx, path, f"an array of {what}s", f"a {what} object", lambda r, i, c: rule_of(table, r, i, c)
    )
    return with_unique_ids(rules)


def row_of(table: RuleRow, rule: RegexRule, index: int = -1, form: Form = FRESH) -> Row:
    """A fresh row for ``rule`` at ``index`` in its array (``-1``: not in one), in the app's key
    order and ``form``."""
    row: Row = {}
    for c in table.columns:
        c.write(rule, index, form, row)
    return row


def rows_of(table: RuleRow, rules: Iterable[RegexRule], form: Form = FRESH) -> list[Row]:
    """Fresh rows for ``rules``, in order."""
    return [row_of(table, r, i, form) for i, r in enumerate(rules)]


__all__ = [
    "FRESH",
    "ST_FLAG_LETTERS",
    "ApplyMode",
    "Column",
    "ExtraAt",
    "Extras",
    "FindLiteral",
    "Flag",
    "FlagTargets",
    "Form",
    "Id",
    "IdList",
    "Number",
    "Placement",
    "Renamed",
    "RuleRow",
    "Strings",
    "SubstituteNumber",
    "TargetList",
    "Text",
    "join_find",
    "row_of",
    "rows_of",
    "rule_of",
    "rules_of",
    "split_find",
    "st_flags",
]
