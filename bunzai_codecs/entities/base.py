"""Building blocks shared by the five canonical bodies (character, lorebook, regex, persona, preset).

Conventions (see docs/architecture.md):
- Field names are the canonical paths, camelCase, no aliases: the JSON form is the
  Python form, which keeps validation on pydantic-core's fast path.
- ``T | None = None`` is an optional field: absent and ``None`` mean the same and are not emitted.
- Open enumerations (values apps extend) are plain ``str`` annotated with their known values: an
  unknown value is kept verbatim, never rejected.
- Opaque app data (script rows, extension bags) is ``dict[str, Any]`` / ``list[Any]``: carried, never
  interpreted, never executed.
- Sections (groups of optional leaves: ``identity``, ``persona``, ``samplers``...) are always present
  (``Field(default_factory=...)``), so "section absent" and "section empty" are the same body.
  Value objects (a voice, a media asset, a character filter) are ``T | None``: absent means "none".
- Child collections of a body (lore ``entries``, regex ``rules``, preset ``prompts``) are always
  present lists; wire lists whose absence differs from ``[]`` (tags, greetings, triggers) are
  ``list[T] | None``.
- Numbers the apps store as JavaScript numbers are :data:`Num` (``int | float``): ``100`` stays an
  int and ``0.5`` a float, so nothing is rounded or widened; bools and numeric strings are refused. Dates are :data:`Num` unix seconds.
- Every sub-model (section, row, value object) is a :class:`Body` too, so all share one config.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, Strict

from bunzai_codecs.core import seal


class Body(BaseModel):
    """Base of every canonical model: unknown keys are a bug in the codec that built the body."""

    model_config = ConfigDict(
        extra="forbid",
        use_attribute_docstrings=True,
        validate_default=False,
        ser_json_inf_nan="strings",
    )

    def __eq__(self, other: object) -> bool:
        # BaseModel.__eq__ less the checks a body never needs: bodies have no private attributes,
        # no extras (``extra="forbid"``) and nothing but their fields in ``__dict__``, so two bodies
        # of one class are equal exactly when their ``__dict__``s are. Encoders compare whole
        # bodies (is the twin's body unedited?), hundreds of nested models per lorebook.
        if other.__class__ is self.__class__:
            return self.__dict__ == other.__dict__
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]  # mutable, as BaseModel's: unhashable

    # -- edits are counted (``core.seal``: a decoded body's "unedited since decode" mark) --------------

    def __setattr__(self, name: str, value: Any) -> None:
        seal.edited()
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        seal.edited()
        super().__delattr__(name)

    @classmethod
    def __pydantic_on_complete__(cls) -> None:
        # every list and dict validation builds counts its in-place changes too (``seal.TrackedList``)
        super().__pydantic_on_complete__()
        cls.__pydantic_validator__ = seal.tracking_validator(cls)

    def dump(self) -> dict[str, Any]:
        """The JSON-ready dict of this body (absent optional fields left out)."""
        return self.model_dump(mode="json", exclude_none=True)


def known(*values: str) -> Any:
    """Metadata for an open enumeration: ``Annotated[str, known("a", "b")]``.

    Any string validates; ``values`` are the ones bunzai maps, published in the JSON Schema as
    ``x-known-values`` so a reader of docs/schema/ sees the vocabulary.
    """
    return Field(json_schema_extra={"x-known-values": list(values), "x-open-enum": True})


#: free-form dictionary carried verbatim (extension bags, opaque app rows)
Opaque = dict[str, Any]

#: a JavaScript number: ``int`` when the source wrote an integer, ``float`` otherwise. Strict: a
#: bool or a numeric string is a codec bug (the codec converts ``"0.5"``; the twin keeps the string)
Num = Annotated[int, Strict()] | Annotated[float, Strict()]

#: chat message role of an injected text (closed: apps encode it as 0/1/2, strings, or Risu ``bot``)
MessageRole = Literal["system", "user", "assistant"]
#: the message roles, in the order SillyTavern numbers them (0, 1, 2)
MESSAGE_ROLES: tuple[str, ...] = get_args(MessageRole)

#: a generation type a prompt or lore entry is limited to (ST ``triggers`` / ``injection_trigger``)
GenerationType = Annotated[str, known("normal", "continue", "impersonate", "swipe", "regenerate", "quiet")]
