"""The codec contract: detect with a score, decode to canonical entities, encode back.

One ``Codec`` subclass per format id; instances are stateless and picklable (Beam ships them to
workers). A codec of a declared format (``formats/table.py``, see ``core.format``) takes its id,
kind, app, label, suffixes and priority from that declaration and detects through its model-free
detector. ``detect`` is guarded so it can never raise and always returns a score in [0, 1]: a
detector that crashes on odd input scores 0 rather than taking the whole ranking down (the crash
is still visible through ``Codec.detect_errors`` in tests).
"""

from __future__ import annotations

import abc
import functools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from bunzai_codecs.core.entity import (
    ENTITY_KINDS,
    KNOWLEDGE_REFS,
    CanonicalEntity,
    Decoded,
    EntityKind,
    canonical_id,
)
from bunzai_codecs.core.errors import BunzaiError, Malformed, Unsupported, ValidationFailed
from bunzai_codecs.core.escrow import Twin
from bunzai_codecs.core.format import DECLARED, DETECT_ERRORS, Format, guarded
from bunzai_codecs.core.media import sniff_mime

if TYPE_CHECKING:
    from bunzai_codecs.core.media import Resolver
    from bunzai_codecs.core.sniff import Sniff

#: a score at or above this is a match
ACCEPT = 0.5
#: a score of this ends detection at once
CERTAIN = 1.0


#: the coverage pattern that covers every canonical path
EVERYTHING = "*"

_INDEX = re.compile(r"\[\d+\]")
_KEYED = re.compile(r"\[('[^']*'|\"[^\"]*\")\]")


def normalize_path(path: str) -> str:
    """``$.entries[3].triggers[0].text`` -> ``entries[].triggers[].text`` (a coverage pattern)."""
    if path.startswith("$."):
        path = path[2:]
    elif path.startswith("$"):
        path = path[1:]
    path = _INDEX.sub("[]", path)
    return _KEYED.sub(".*", path)


def _prefixes(p: str) -> list[str]:
    """``a[].b.c`` -> ``["a[].b.c", "a[].b", "a"]``: the pattern and every pattern above it."""
    out = [p]
    while True:
        cut = max(p.rfind("."), p.rfind("[]"))
        if cut <= 0:
            return out
        p = p[:cut]
        out.append(p)


_STEP = re.compile(r"\.?([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[('[^']*'|\"[^\"]*\")\]")


def _at_pattern(tree: Any, path: str, pattern: str) -> tuple[bool, Any]:
    """Walk ``tree`` along concrete ``path`` (``entries[3].triggers[0].text``) until the steps taken
    spell ``pattern`` (``entries[].triggers``): ``(True, the value there)``, else (no such step, or
    no value there) ``(False, None)``."""
    if path.startswith("$"):
        path = path[1:].lstrip(".")
    taken = ""
    pos = 0
    while pos < len(path):
        m = _STEP.match(path, pos)
        if m is None:
            return False, None
        pos = m.end()
        name, index, keyed = m.groups()
        if name is not None:
            taken = f"{taken}.{name}" if taken else name
            tree = tree.get(name) if isinstance(tree, dict) else None
        elif index is not None:
            taken += "[]"
            i = int(index)
            tree = tree[i] if isinstance(tree, list) and i < len(tree) else None
        else:
            taken += ".*"
            tree = tree.get(keyed[1:-1]) if isinstance(tree, dict) else None
        if taken == pattern:
            return tree is not None, tree
    return False, None


#: ``normalize_path`` of the concrete paths a fidelity check classes: the same paths recur for every
#: target an entity is converted to
_pattern = functools.lru_cache(maxsize=1 << 16)(normalize_path)


@functools.lru_cache(maxsize=1 << 16)
def _declares(paths: frozenset[str], excludes: frozenset[str], pattern: str) -> bool:
    """Whether a coverage of ``paths`` less ``excludes`` holds ``pattern`` (before any reshape):
    a row classes each pattern once per target, not once per entry."""
    prefixes = _prefixes(pattern)
    if excludes and any(p in excludes for p in prefixes):
        return False
    return EVERYTHING in paths or any(p in paths for p in prefixes)


@dataclass(frozen=True)
class Reshape:
    """A value a format holds only in another shape: below ``path`` (a coverage pattern naming a
    value of the body, ``entries[].triggers``), a change is what the format does, not a loss by
    mistake, when ``when(the value before)`` holds (Risu splits a key list holding a comma). With
    ``whole``, ``when`` is asked about the whole body dump instead (a shape that depends on other
    parts of the body: KoboldAI's categories are the names its entries carry)."""

    path: str
    when: Callable[[Any], bool]
    note: str
    whole: bool = False


@dataclass(frozen=True)
class Coverage:
    """The canonical body paths a format can carry.

    Patterns are dotted canonical paths; ``[]`` stands for any list index and a trailing ``.*``
    (or a bare prefix) covers everything below; ``*`` alone covers every path (vaud-json). ``entries[].triggers`` covers
    ``entries[4].triggers[0].isRegex``. ``excludes`` carves a part out of what is covered: with
    ``extensions`` covered and ``extensions.risuai`` excluded, ``extensions.chub.x`` is covered and
    ``extensions.risuai.x`` is not (an exclusion wins over any covered pattern, also across ``|``).
    Exclusions only narrow a declaration. ``reshapes`` narrow it per value: a covered path whose value
    the format can only hold in another shape (a Risu key holding a comma is split in two) is not
    covered for a body with such a value (``for_body``). Fidelity checks use this to class a loss as
    expected (the target cannot hold the path, or not that value) or unexpected (a bug);
    FORMAT-SUPPORT.md is generated from it.
    """

    paths: frozenset[str]
    notes: tuple[str, ...] = ()
    excludes: frozenset[str] = frozenset()
    #: values the format holds only in another shape (``Reshape``): covered paths, yet a change
    #: below one is expected for a body whose value there is of that kind
    reshapes: tuple[Reshape, ...] = ()
    #: the body ``covers`` answers for (``for_body``): None answers for the format in general
    body: Any = field(default=None, compare=False, hash=False, repr=False)

    @classmethod
    def of(
        cls,
        *paths: str,
        notes: Iterable[str] = (),
        excludes: Iterable[str] = (),
        reshapes: Iterable[Reshape] = (),
    ) -> Coverage:
        return cls(
            frozenset(p.removesuffix(".*") for p in paths),
            tuple(notes),
            frozenset(p.removesuffix(".*") for p in excludes),
            tuple(reshapes),
        )

    def covers(self, path: str) -> bool:
        if not _declares(self.paths, self.excludes, _pattern(path)):
            return False
        return self.body is None or not self.expects(path, self.body)

    def expects(self, path: str, body: Any) -> bool:
        """Whether a change at concrete ``path`` of ``body`` (its canonical dump, before the
        conversion) is one of this format's ``reshapes``."""
        for r in self.reshapes:
            found, value = _at_pattern(body, path, r.path)
            if found and r.when(body if r.whole else value):
                return True
        return False

    def for_body(self, body: Any) -> Coverage:
        """This coverage answering for ``body`` (a canonical dump): a path whose value the format
        reshapes for this body is not covered, so a change there is classed expected."""
        return replace(self, body=body) if self.reshapes else self

    def __or__(self, other: Coverage) -> Coverage:
        return Coverage(
            self.paths | other.paths,
            self.notes + other.notes,
            self.excludes | other.excludes,
            self.reshapes + other.reshapes,
        )


#: what a container's bytes look like (``sniff_kind``): how an export is named after the bytes it holds
Magic = str


@dataclass(frozen=True)
class Container:
    """One way a format's file is written: ``name`` is what ``EmitContext.options["container"]``
    asks for, ``suffixes`` the file names it is written under (the first is the one an export gets),
    ``magic`` what its bytes look like (``json``, ``png``, ``zip``, ``jpeg`` or ``binary``),
    ``images`` whether it holds pictures, ``files`` whether it is several files on disk."""

    name: str
    suffixes: tuple[str, ...]
    magic: Magic
    #: whether this container can hold the entity's pictures (a PNG card, a zip, data: URLs in
    #: JSON): with pictures to keep, another container of the format is preferred to one that cannot
    images: bool = False
    #: written as several files (a card folder; a character YAML with its picture beside it): the
    #: bytes are their file set (``core.fileset``), which ``Codec.layout`` lays out on disk. A
    #: writer that can write files (``bunzai convert``) asks for this container; one that writes
    #: one file per export (the pipeline) keeps the format's default, the same set as one ``.zip``
    files: bool = False


#: the two containers most formats offer: a plain ``.json`` file, and a ``.png`` (a picture with the
#: entity in its text chunks)
JSON_FILE = Container("json", (".json",), "json")
PNG_FILE = Container("png", (".png",), "png", images=True)

#: the picture containers a format writes, by the media type ``core.media.sniff_mime`` finds
_IMAGE_MAGIC: dict[str, Magic] = {"image/png": "png", "image/jpeg": "jpeg"}


def sniff_kind(data: bytes) -> Magic:
    """What ``data`` looks like, for naming it: ``png``, ``jpeg`` (also a JPEG with a zip after it),
    ``zip``, ``json`` or ``binary``."""
    image = _IMAGE_MAGIC.get(sniff_mime(data) or "")
    if image is not None:
        return image
    if data[:4] == b"PK\x03\x04":
        return "zip"
    head = data[:64].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head[:1] in (b"{", b"["):
        return "json"
    return "binary"


@dataclass
class EmitContext:
    """What an encoder may consult besides the entity: the entities its links point at.

    ``linked`` resolves ``knowledgeRefs``; an encoder that embeds a linked entity (a card's lorebook
    as ``character_book``) records its id in ``embedded`` so the caller knows which linked entities
    still need a file of their own.
    """

    linked: dict[str, CanonicalEntity] = field(default_factory=dict)
    embedded: set[str] = field(default_factory=set)
    options: dict[str, Any] = field(default_factory=dict)
    #: the container the encoder wrote, when the bytes alone do not say (``.risupreset``/``.risup``)
    written: str | None = None

    @classmethod
    def for_entities(cls, entities: Iterable[CanonicalEntity], **options: Any) -> EmitContext:
        return cls(linked={e.id: e for e in entities}, options=options)

    def refs(self, entity: CanonicalEntity, kind: EntityKind | None = None) -> list[CanonicalEntity]:
        """The linked entities of ``entity`` that this context can resolve, in link order."""
        out = []
        for ref in entity.links.get(KNOWLEDGE_REFS, []):
            e = self.linked.get(ref)
            if e is not None and (kind is None or e.kind == kind):
                out.append(e)
        return out

    def embed(self, entity: CanonicalEntity) -> None:
        self.embedded.add(entity.id)


#: how messages name the entities of a kind
KIND_NAMES: Mapping[str, str] = {
    "character": "characters",
    "lorebook": "lorebooks",
    "regex": "regex sets",
    "persona": "personas",
    "preset": "presets",
}


class Codec(abc.ABC):
    """Base class for every format codec. A subclass sets ``id`` (a declared format's codec takes
    the other attributes of :data:`DECLARED` and its detector from ``formats/table.py``; an
    undeclared one, a test's or a plugin's, sets them and ``detect`` itself) and implements
    ``decode`` (abstract: a class without it cannot be instantiated) and, unless the format is
    read-only, ``encode``; see docs/architecture.md for the contract."""

    id: ClassVar[str]
    #: the kind of entity this format is for: what tables list it under and what a fresh file holds
    kind: ClassVar[EntityKind]
    #: every kind of entity this format holds (default: ``kind`` alone; vaud-json holds them all).
    #: ``encode`` refuses an entity of any other kind before the codec's own code runs
    kinds: ClassVar[frozenset[EntityKind]]
    #: True for a format that writes the canonical entity itself (vaud-json): a conversion to it is
    #: compared exactly, like a same-format round trip, and it is nobody's cross-format target
    lossless: ClassVar[bool] = False
    #: the escrow twin this codec keeps (``core.escrow``): a subclass declares the codec's facets
    twin_type: ClassVar[type[Twin]] = Twin
    #: the app that writes this format (``sillytavern``, ``risu``...); picks sibling codecs
    family: ClassVar[str] = ""
    #: a human name for tables
    label: ClassVar[str] = ""
    #: file name suffixes this format is usually saved with: a hint, never a requirement
    suffixes: ClassVar[tuple[str, ...]] = ()
    #: the suffix an export of this format is written with
    extension: ClassVar[str] = ".json"
    #: the containers this format is written in, the default first (``containers_of`` fills in one
    #: JSON container named by ``extension`` for a codec that declares none)
    containers: ClassVar[tuple[Container, ...]] = ()
    #: tie-break between equal scores: higher wins, then the id in alphabetical order
    priority: ClassVar[int] = 0
    #: a read-only format writes a file back only for an entity that holds its escrow twin (one read
    #: from such a file); ``encode`` refuses any other entity with ``Unsupported`` before the codec's
    #: own code runs (``core.format.Format.read_only``)
    read_only: ClassVar[bool] = False
    coverage: ClassVar[Coverage] = Coverage.of()
    #: what this format holds of an entity of another kind that it embeds in its own file (a Tavern
    #: card's ``character_book`` and ``regex_scripts``): fidelity classes an embedded entity's losses
    #: by it, and by the app's own codec for that kind when the kind is not listed here
    embedded_coverage: ClassVar[Mapping[str, Coverage]] = {}
    #: the declaration this codec takes its metadata and detector from (None: an undeclared codec)
    format: ClassVar[Format | None] = None
    #: detector crashes seen in this process, for tests: (codec id, exception repr)
    detect_errors: ClassVar[list[tuple[str, str]]] = DETECT_ERRORS

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "id" in cls.__dict__:
            _take_declaration(cls)
        if "kind" in cls.__dict__ and "kinds" not in cls.__dict__:
            cls.kinds = frozenset({cls.kind})
        if "detect" in cls.__dict__:
            setattr(cls, "detect", _guard_detect(cls.__dict__["detect"]))  # noqa: B010 (mypy: method-assign)
        if "decode" in cls.__dict__:
            setattr(cls, "decode", _guard_decode(cls.__dict__["decode"]))  # noqa: B010
        if "encode" in cls.__dict__:
            setattr(cls, "encode", _guard_encode(cls.__dict__["encode"]))  # noqa: B010

    def holds(self, kind: str) -> bool:
        """Whether this format holds entities of ``kind``."""
        return kind in self.kinds

    def writes(self, entity: CanonicalEntity) -> bool:
        """Whether ``encode`` takes ``entity``: this format holds its kind, and a read-only format
        only an entity read from one of its files (one that holds its twin)."""
        return entity.kind in self.kinds and (not self.read_only or entity.twin(self.id) is not None)

    def kind_label(self) -> str:
        """The kind tables list this format under: ``any`` for a format that holds every kind."""
        return "any" if self.kinds >= frozenset(ENTITY_KINDS) else self.kind

    def detect(self, s: Sniff) -> float:
        """How sure this codec is that ``s`` is its format, in [0, 1]. Cheap; never raises."""
        return 0.0

    def kind_of(self, s: Sniff) -> EntityKind:
        """The kind of the primary entity ``s`` holds, for detection reports: this codec's kind,
        unless the format carries several (vaud-json says so in the file). Cheap; never raises."""
        return self.kind

    @abc.abstractmethod
    def decode(self, s: Sniff) -> Decoded:
        """The entities ``s`` holds, primary first; raises a ``BunzaiError`` on bad input."""

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        """Deterministic bytes of this format for ``entity`` (its twin, if any, preserved). Only an
        entity of a kind the format ``holds`` gets here (``Unsupported`` otherwise).

        A codec that does not override it is a read-only format: bunzai reads it and cannot write
        it. That is a fact about the format, not a bug, and this default says so the one way the
        callers know: ``NotImplementedError``, which the pipeline reports as ``Unsupported`` and
        fidelity records as a typed refusal (``pipeline.options.writable`` tells such a format by
        this very method). A method a subclass must override is abstract instead (``decode``), so
        forgetting it fails when the class is instantiated, never as this fact."""
        raise NotImplementedError(f"bunzai reads {self.id} but does not write it")

    def entity(
        self,
        s: Sniff,
        body: Any,
        *,
        raw: Any,
        part: tuple[str, ...] = (),
        kind: EntityKind | None = None,
        media: Resolver | None = None,
        warnings: Iterable[str] = (),
        mark: str | None = None,
        **facets: Any,
    ) -> CanonicalEntity:
        """Build one decoded entity: validate ``body`` (a dict or a model) for ``kind`` (default:
        this codec's), give it a deterministic id from the input's digest and ``part``, and store
        the twin ``twin_type.of(raw, **facets)`` under this codec's id. Media items get their digests and
        the entity its media store (``core.media.bind``): the bytes ``media`` resolves for an item
        (a zip member, the card's own image), else those of an inline ``data:`` URL. ``warnings`` are
        the notes its reader made.

        ``mark``: the tag of the mapper whose dict of ``raw`` ``body`` is, exactly as this codec's
        encoder maps the twin again: the validated body is marked unedited since decode
        (``core.seal``), unless binding its media made another body of it."""
        from bunzai_codecs.core import seal
        from bunzai_codecs.core.media import bind
        from bunzai_codecs.entities import BODY_TYPES
        from bunzai_codecs.entities.base import Body

        k = kind or self.kind
        validated = body if isinstance(body, Body) else BODY_TYPES[k].model_validate(body)
        store: dict[str, bytes] = {}
        model = bind(validated, store, media, hasher=s.digest_of)
        if mark is not None and model is validated and validated is not body:
            seal.mark(model, mark, raw)
        return CanonicalEntity(
            kind=k,
            id=canonical_id(k, s.sha256, *part),
            body=model,
            original={self.id: self.twin_type.of(raw, **facets)},
            warnings=list(warnings),
            media=store,
        )

    def outside(self, entity: CanonicalEntity) -> dict[str, Any]:
        """What the file ``entity`` was read from in this format holds outside every entity (a
        NovelAI scenario's story, context and settings around its lorebook), from the entity's
        twin: a name for each part (``scenario.prompt``) -> its value; empty for most formats. A
        conversion whose file no longer holds a part has lost it (``bunzai convert`` reports it)."""
        return {}

    def container_list(self) -> tuple[Container, ...]:
        """The containers this codec writes (see ``containers``)."""
        if self.containers:
            return self.containers
        # a JSON format's file is JSON whatever its app calls it: .json names it too
        plain = (".json",) if self.extension.endswith(".json") else ()
        suffixes = tuple(dict.fromkeys((self.extension, *self.suffixes, *plain)))
        return (Container("json", suffixes, "json", images=self.coverage.covers("media.portrait.sha256")),)

    def container_named(self, name: str) -> Container | None:
        return next((c for c in self.container_list() if c.name == name), None)

    def container_for_name(self, filename: str) -> Container | None:
        """The container a file name asks for: the one with the longest suffix it ends with
        (case-insensitive), or None when no container of this format is written under it."""
        low = filename.lower()
        best: tuple[int, Container] | None = None
        for c in self.container_list():
            for suf in c.suffixes:
                if low.endswith(suf.lower()) and (best is None or len(suf) > best[0]):
                    best = (len(suf), c)
        return best[1] if best else None

    def files_container(self) -> Container | None:
        """The container this format writes as several files (``Container.files``), if any."""
        return next((c for c in self.container_list() if c.files), None)

    def layout(self, data: bytes, path: PurePath) -> list[tuple[PurePath, bytes]]:
        """The files an export's bytes are on disk when written as ``path``: ``[(path, data)]``,
        unless the format writes several files (``Container.files``), whose codec says where each
        member of the file set goes (every path inside ``path``'s folder, or ``path`` itself for a
        folder format)."""
        return [(path, data)]

    def owns(self, rel: str) -> bool:
        """For a folder format (a container of ``files`` whose suffix is ``/``): whether a file at
        ``rel`` inside such a folder is one the format writes, so a forced export into the folder
        replaces it (or removes it when the new export has no such file)."""
        return False

    def writable_suffixes(self) -> list[str]:
        return [suf for c in self.container_list() for suf in c.suffixes]

    def extension_for(self, data: bytes) -> str:
        """The suffix an export of ``data`` is named with: the first suffix of the first container
        whose bytes look like ``data`` (a PNG card ``.png``, a JSON card ``.json``), else
        ``extension``."""
        kind = sniff_kind(data)
        for c in self.container_list():
            if c.magic == kind:
                return c.suffixes[0]
        return self.extension

    def __reduce__(self) -> tuple[Callable[..., Codec], tuple[()]]:
        return (type(self), ())

    def __repr__(self) -> str:
        return f"<codec {self.id}>"


def _take_declaration(cls: type[Codec]) -> None:
    """Give ``cls``, when it is the codec its id's declaration names (``formats/table.py``), the
    :data:`DECLARED` attributes and the declared detector. A declared codec that sets one of them
    itself is a second declaration, refused. Any other class (a test's stand-in, a plugin) is an
    undeclared codec that sets its own."""
    from bunzai_codecs.formats.table import BY_ID

    fmt = BY_ID.get(cls.__dict__["id"])
    if fmt is None or not fmt.names(cls):
        cls.format = None
        return
    again = [a for a in (*DECLARED, "detect", "kind_of") if a in cls.__dict__]
    if again:
        raise TypeError(
            f"{cls.__name__} sets {', '.join(again)}: format {fmt.id!r} declares them in formats/table.py"
        )
    for attr in DECLARED:
        setattr(cls, attr, getattr(fmt, attr))
    cls.format = fmt

    def detect(self: Codec, s: Sniff) -> float:
        return fmt.detect(s)

    def kind_of(self: Codec, s: Sniff) -> EntityKind:
        return fmt.kind_of(s)

    detect.__doc__ = Codec.detect.__doc__
    kind_of.__doc__ = Codec.kind_of.__doc__
    setattr(cls, "detect", detect)  # noqa: B010 (mypy: method-assign)
    setattr(cls, "kind_of", kind_of)  # noqa: B010


def _guard_detect(fn: Callable[[Codec, Sniff], float]) -> Callable[[Codec, Sniff], float]:
    @functools.wraps(fn)
    def detect(self: Codec, s: Sniff) -> float:
        return guarded(self.id, functools.partial(fn, self), s)

    return detect


B = TypeVar("B")


def body_as(entity: CanonicalEntity, model: type[B]) -> B:
    """``entity``'s body as ``model``, the body type of the kind an encoder holds (the encode guard
    let no other kind in)."""
    body = entity.body
    assert isinstance(body, model), f"a {type(body).__name__} where a {model.__name__} belongs"
    return body


def _guard_encode(
    fn: Callable[[Codec, CanonicalEntity, EmitContext], bytes],
) -> Callable[[Codec, CanonicalEntity, EmitContext], bytes]:
    """An entity of a kind the format does not hold, and for a read-only format an entity not read
    from one of its files, is refused before the encoder runs."""

    @functools.wraps(fn)
    def encode(self: Codec, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        if entity.kind not in self.kinds:
            raise Unsupported(f"{self.id} holds {KIND_NAMES[self.kind]}, not {entity.kind}")
        if self.read_only and entity.twin(self.id) is None:
            raise Unsupported(read_only_refusal(self, entity))
        return fn(self, entity, ctx)

    return encode


def read_only_refusal(codec: Codec, entity: CanonicalEntity) -> str:
    """Why read-only ``codec`` will not write ``entity`` (which was not read from one of its files),
    naming the formats of its app that would."""
    from bunzai_codecs.formats.table import FORMATS  # the table, not the registry: no import circle

    came = entity.source.format if entity.source is not None else None
    where = f"this {entity.kind} was read as {came}" if came else f"this {entity.kind} was not read from one"
    others = [f.id for f in FORMATS if f.family == codec.family and f.holds(entity.kind) and not f.read_only]
    hint = f"; write it as {' or '.join(others)}" if others else ""
    return f"{codec.id} is read-only: bunzai writes one back only for a file read from one ({where}){hint}"


#: exceptions a decoder may hit on hostile input that mean "this input is broken", not "bunzai is"
_INPUT_FAULTS = (KeyError, IndexError, TypeError, ValueError, AttributeError, RecursionError)


def _guard_decode(fn: Callable[[Codec, Sniff], Decoded]) -> Callable[[Codec, Sniff], Decoded]:
    """Typed errors pass through (with the uri attached); a pydantic ValidationError becomes
    ``ValidationFailed`` with its JSON path; any other input fault becomes ``Malformed`` marked
    ``internal`` so the hostile-input tests can still find the decoder that let it escape."""
    from pydantic import ValidationError

    @functools.wraps(fn)
    def decode(self: Codec, s: Sniff) -> Decoded:
        try:
            return fn(self, s)
        except BunzaiError as exc:
            raise exc.with_uri(s.uri) from None
        except ValidationError as exc:
            raise validation_failed(exc, uri=s.uri, codec=self.id) from exc
        except _INPUT_FAULTS as exc:
            raise Malformed(
                f"{self.id} could not read this input: {type(exc).__name__}: {exc}", uri=s.uri, internal=True
            ) from exc

    return decode


def validation_failed(
    exc: Any, *, uri: str | None = None, codec: str = "", prefix: str = "body"
) -> ValidationFailed:
    """A pydantic ``ValidationError`` as a typed error naming the first bad path."""
    from bunzai_codecs.core.errors import json_path

    errs = exc.errors(include_url=False)
    first = errs[0] if errs else {"loc": (), "msg": str(exc)}
    path = json_path((prefix, *first["loc"])) if prefix else json_path(tuple(first["loc"]))
    more = f" (+{len(errs) - 1} more)" if len(errs) > 1 else ""
    who = f"{codec}: " if codec else ""
    return ValidationFailed(f"{who}{first['msg']}{more}", uri=uri, path=path)
