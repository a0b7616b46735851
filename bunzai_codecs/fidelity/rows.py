"""A fidelity row: what one check found for one entity (``FidelityRow``, its ``PathLoss`` and
``RowError``), and ``ROW_SCHEMA``, the JSON Schema of its JSON form
(docs/schema/fidelity-row.schema.json)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from bunzai_codecs.core.errors import BunzaiError

Check = Literal["decode", "native", "stability", "cross"]
CHECKS: tuple[Check, ...] = ("decode", "native", "stability", "cross")
Status = Literal["decoded", "rejected", "lossless", "expected", "unexpected", "error"]
LossClass = Literal["expected", "unexpected", "info"]
Basis = Literal["observed", "predicted"]
BASES: tuple[Basis, ...] = ("observed", "predicted")

#: differences looked at per comparison: past this a row says "and more" through its counts
DIFF_LIMIT = 5000
#: longest entity name kept in a row (names are card text: reports escape them)
NAME_MAX = 120

_INDEX = re.compile(r"\[\d+\]")


@dataclass(frozen=True, slots=True)
class PathLoss:
    """One path pattern that was lost, changed or added, with how often and where first."""

    path: str
    """Pattern with list indices as ``[]`` (``entries[].content``); native paths keep object keys."""
    cls: LossClass
    """``expected``: the target cannot hold the path; ``unexpected``: it can, so this is a bug;
    ``info``: the target added a value, or re-encoded an image keeping its pixels (never makes a
    row lossy)."""
    count: int = 1
    """Concrete paths behind the pattern in this row."""
    at: str = ""
    """The first concrete path (``entries[3].content``)."""
    weight: int | None = None
    """Cross rows: the content weight of the source values lost or changed under this pattern
    (``content_weight``); None where not measured (native and stability rows, older rows)."""

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"path": self.path, "class": self.cls, "count": self.count, "at": self.at}
        if self.weight is not None:
            d["weight"] = self.weight
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> PathLoss:
        w = d.get("weight")
        return cls(
            str(d["path"]),
            cast(LossClass, d["class"]),
            int(d.get("count", 1)),
            str(d.get("at", "")),
            None if w is None else int(w),
        )


@dataclass(frozen=True, slots=True)
class RowError:
    """An exception a check hit: a typed ``BunzaiError`` (a refusal the codec chose; also
    ``NotImplementedError`` from a read-only format) or, with ``internal``, anything else (a bug)."""

    type: str
    message: str
    internal: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "message": self.message, "internal": self.internal}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> RowError:
        return cls(str(d["type"]), str(d.get("message", "")), bool(d.get("internal", False)))

    @classmethod
    def of(cls, exc: BaseException) -> RowError:
        # NotImplementedError: a format bunzai reads but does not write (yet) — a fact, not a bug
        typed = isinstance(exc, BunzaiError | NotImplementedError)
        internal = not typed or (isinstance(exc, BunzaiError) and exc.internal)
        msg = exc.message if isinstance(exc, BunzaiError) else str(exc)
        return cls(type(exc).__name__, " ".join(msg.split())[:500], internal)


@dataclass(slots=True)
class FidelityRow:
    """The outcome of one check on one entity (or, for ``decode``, on one input)."""

    input: str
    """Stable key of the input file (``samples/risu/x.charx``, or the uri)."""
    sha256: str
    """Digest of the input's bytes: two runs compare an input only when it did not change."""
    entity: str
    """Canonical entity id ("" for a rejected input)."""
    kind: str
    """Entity kind ("" for a rejected input)."""
    source: str
    """The format the entity was decoded from ("" when no format was recognised)."""
    target: str
    """The format written: the source itself for ``native`` and ``stability``; "" for ``decode``."""
    check: Check
    status: Status
    name: str = ""
    """The entity's display name (card text: escape it before showing it)."""
    lost: list[PathLoss] = field(default_factory=list)
    changed: list[PathLoss] = field(default_factory=list)
    added: list[PathLoss] = field(default_factory=list)
    error: RowError | None = None
    uri: str = ""
    weight: int | None = None
    """Cross rows: the content weight of the source entity and the entities linked to it (every
    populated canonical leaf value, weighed by ``content_weight``); None on other checks."""
    lost_weight: int | None = None
    """Cross rows: how much of ``weight`` did not come back unchanged (lost or changed values; all
    of it when the conversion failed). The row keeps ``weight - lost_weight``."""
    basis: Basis = "observed"
    """How the row was obtained: ``observed`` (written, read back and compared for this input) or
    ``predicted`` (a cross row given by its pattern's template: ``fidelity.patterns``)."""
    disagreed: bool = False
    """An observed cross row of a pattern whose sampled rows disagree (``fidelity.patterns``):
    observed because no prediction could be trusted for it."""
    pattern: str = ""
    """Cross rows made under a sample (``normalize --fidelity-sample 1/K``, K > 1): the pattern
    (source format, target, fill signature) whose observed rows a predicted row follows, and
    that an observed row taught; "" otherwise."""

    @property
    def lossy(self) -> bool:
        return self.status in ("expected", "unexpected", "error", "rejected")

    def losses(self) -> Iterator[tuple[str, PathLoss]]:
        """``("lost" | "changed" | "added", loss)`` for every path of the row."""
        for name in ("lost", "changed", "added"):
            for loss in getattr(self, name):
                yield name, loss

    def to_json(self) -> dict[str, Any]:
        return {
            "input": self.input,
            "sha256": self.sha256,
            "uri": self.uri,
            "entity": self.entity,
            "kind": self.kind,
            "name": self.name,
            "source": self.source,
            "target": self.target,
            "check": self.check,
            "status": self.status,
            "lost": [x.to_json() for x in self.lost],
            "changed": [x.to_json() for x in self.changed],
            "added": [x.to_json() for x in self.added],
            "error": self.error.to_json() if self.error else None,
            **({} if self.weight is None else {"weight": self.weight, "lost_weight": self.lost_weight}),
            "basis": self._basis_json(),
        }

    def _basis_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"how": self.basis}
        if self.pattern:
            out["pattern"] = self.pattern
        if self.disagreed:
            out["disagreed"] = True
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> FidelityRow:
        w, lw = d.get("weight"), d.get("lost_weight")
        basis = d.get("basis") or {}
        return cls(
            input=str(d["input"]),
            sha256=str(d.get("sha256", "")),
            uri=str(d.get("uri", "")),
            entity=str(d.get("entity", "")),
            kind=str(d.get("kind", "")),
            name=str(d.get("name", "")),
            source=str(d.get("source", "")),
            target=str(d.get("target", "")),
            check=cast(Check, d["check"]),
            status=cast(Status, d["status"]),
            lost=[PathLoss.from_json(x) for x in d.get("lost", [])],
            changed=[PathLoss.from_json(x) for x in d.get("changed", [])],
            added=[PathLoss.from_json(x) for x in d.get("added", [])],
            error=RowError.from_json(d["error"]) if d.get("error") else None,
            weight=None if w is None else int(w),
            lost_weight=None if lw is None else int(lw),
            basis=cast(Basis, basis.get("how", "observed")),
            pattern=str(basis.get("pattern", "")),
            disagreed=bool(basis.get("disagreed", False)),
        )


_LOSS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["path", "class", "count", "at"],
    "properties": {
        "path": {"type": "string", "description": "Path pattern, list indices as []: entries[].content"},
        "class": {
            "enum": ["expected", "unexpected", "info"],
            "description": "expected: the target's coverage cannot hold the path; unexpected: it can "
            "(a bug); info: never lossy: a value the target added, or (a changed media.portrait / "
            "media.assets[i]) an image re-encoded with the same pixels",
        },
        "count": {"type": "integer", "minimum": 1, "description": "Concrete paths behind the pattern"},
        "at": {"type": "string", "description": "The first concrete path: entries[3].content"},
        "weight": {
            "type": "integer",
            "minimum": 0,
            "description": "Cross rows only: content weight of the source values lost or changed under "
            "this pattern (characters of text, 1 per other value, bytes of a sized media asset)",
        },
    },
}

#: JSON Schema of ``FidelityRow.to_json()`` (docs/schema/fidelity-row.schema.json)
ROW_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://bunzai.invalid/schema/fidelity-row.schema.json",
    "title": "FidelityRow",
    "description": "One fidelity check on one entity (fidelity/rows-*.jsonl, one JSON object a line).",
    "type": "object",
    "additionalProperties": False,
    "required": [
        "input",
        "sha256",
        "uri",
        "entity",
        "kind",
        "name",
        "source",
        "target",
        "check",
        "status",
        "lost",
        "changed",
        "added",
        "error",
    ],
    "properties": {
        "input": {
            "type": "string",
            "description": "Stable key of the input file (root label + relative path, or uri)",
        },
        "sha256": {"type": "string", "description": "sha256 of the input's bytes"},
        "uri": {"type": "string", "description": "Where the input was read"},
        "entity": {"type": "string", "description": "Canonical entity id; empty for a rejected input"},
        "kind": {
            "enum": ["", "character", "lorebook", "regex", "persona", "preset"],
            "description": "Entity kind; empty for a rejected input",
        },
        "name": {"type": "string", "description": "Display name of the entity (card text, unescaped)"},
        "source": {"type": "string", "description": "Format the entity was decoded from"},
        "target": {"type": "string", "description": "Format written (the source for native/stability)"},
        "check": {
            "enum": list(CHECKS),
            "description": "decode: did the input decode; native: encode_F(decode_F(x)) vs x; "
            "stability: decode(encode(e)).body vs e.body; cross: decode_T(encode_T(e)) vs e",
        },
        "status": {
            "enum": ["decoded", "rejected", "lossless", "expected", "unexpected", "error"],
            "description": "decoded/rejected for decode rows; otherwise the worst class of loss, or error",
        },
        "lost": {"type": "array", "items": {"$ref": "#/$defs/loss"}, "description": "Paths absent after"},
        "changed": {
            "type": "array",
            "items": {"$ref": "#/$defs/loss"},
            "description": "Paths with another value",
        },
        "added": {
            "type": "array",
            "items": {"$ref": "#/$defs/loss"},
            "description": "Paths only present after",
        },
        "error": {
            "oneOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["type", "message", "internal"],
                    "properties": {
                        "type": {
                            "type": "string",
                            "description": "Exception class: Malformed, Unsupported...",
                        },
                        "message": {"type": "string"},
                        "internal": {"type": "boolean", "description": "Not a typed bunzai error: a bug"},
                    },
                },
            ],
            "description": "What stopped the check (status error or rejected)",
        },
        "weight": {
            "type": "integer",
            "minimum": 0,
            "description": "Cross rows only: content weight of the source entity and the entities "
            "linked to it: every populated canonical leaf value, a text by its characters, a sized "
            "media asset by its bytes, any other value 1",
        },
        "lost_weight": {
            "type": "integer",
            "minimum": 0,
            "description": "Cross rows only: the part of weight lost or changed by the conversion (all "
            "of it on an error); the row keeps weight - lost_weight",
        },
        "basis": {
            "type": "object",
            "additionalProperties": False,
            "required": ["how"],
            "properties": {
                "how": {
                    "enum": list(BASES),
                    "description": "observed: written, read back and compared for this input; "
                    "predicted: a cross row given by its pattern's template (normalize "
                    "--fidelity-sample), learned from the observed rows of that pattern",
                },
                "pattern": {
                    "type": "string",
                    "description": "Cross rows under a sample: the pattern (source format, target, fill "
                    "signature) a predicted row follows and an observed row taught",
                },
                "disagreed": {
                    "const": True,
                    "description": "An observed row of a pattern whose sampled rows disagree: no "
                    "prediction is trusted for it, so every input's row of it is observed",
                },
            },
            "description": "How the row was obtained (rows of an older bunzai have none: observed)",
        },
    },
    "dependentRequired": {"weight": ["lost_weight"], "lost_weight": ["weight"]},
    "$defs": {"loss": _LOSS_SCHEMA},
}
