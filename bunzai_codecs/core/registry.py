"""The table of codecs and the detection ranking.

``CODECS`` maps each format id (part of the CLI contract) to ``"module:Class"``, from the format
declarations (``formats/table.py``, ``core.format``); codec modules load on first use. Listing
(``declarations``) and detection (``detect_all``, ``detect``, ``kind_of``) run on the declarations
and their detectors alone, which import no canonical model: ``bunzai formats`` and ``bunzai detect``
never load a codec. An entry a caller puts in the table as a class (``using``: tests, plugins) is
listed and detected through an instance of that class.

Detection (Pygments' and chardet's habits): every format scores the same ``Sniff``; scores at or
above ``ACCEPT`` (0.5) are matches; a score of ``CERTAIN`` (1.0) ends detection at once. Formats are
asked in a fixed order (priority descending, then id), and ranked by score, then priority, then id,
so the winner never depends on import order and the certainty short-cut picks the same format the
full ranking would. Only the formats whose row's claims the input's features meet are asked
(``core.claims``: the others would score it 0), and those that state no claims; with
``basecache.CHECK`` on, every detection is held to the one asking every format gives.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any

from bunzai_codecs.core import basecache
from bunzai_codecs.core.claims import Index
from bunzai_codecs.core.codec import ACCEPT, CERTAIN, Codec
from bunzai_codecs.core.entity import EntityKind
from bunzai_codecs.core.errors import BunzaiError, Malformed, NotRecognized, Unsupported
from bunzai_codecs.core.escrow import Twin
from bunzai_codecs.core.format import DETECT_ERRORS, PACKAGE, Format
from bunzai_codecs.core.sniff import ZIP_MAGIC, Sniff
from bunzai_codecs.formats.table import BY_ID, FORMATS

CODECS: dict[str, str | type[Codec]] = {f.id: f"{PACKAGE}.{f.codec}" for f in FORMATS}


@dataclass(frozen=True, slots=True)
class Moved:
    """Part of what a format id named now has an id of its own (``to``)."""

    to: str
    note: str


#: format ids whose old meaning moved, in part, to another id. The old id stays a format; for one
#: release, asking it to read a file that is now the other format's reads it as that format
#: (``require``), and the CLI and the pipeline print ``note`` when a command names the old id.
MOVED: dict[str, Moved] = {
    "risu-regex": Moved(
        "risu-module",
        "format risu-regex is RisuAI's regex export only: .risum modules (and RisuRealm module JSON) "
        "are risu-module; reading a module as risu-regex still works in this release only",
    ),
}


def moved_note(format_id: str) -> str | None:
    """The deprecation note for a format id whose old meaning moved (``MOVED``), else None."""
    moved = MOVED.get(format_id)
    return moved.note if moved is not None else None


@dataclass(frozen=True, slots=True)
class Candidate:
    """One codec's score for one input."""

    id: str
    score: float


@dataclass(frozen=True, slots=True)
class Detection:
    """The winner (``None`` if nothing reached ``ACCEPT``) and every non-zero candidate, ranked."""

    best: Candidate | None
    candidates: tuple[Candidate, ...]

    @property
    def runner_up(self) -> Candidate | None:
        rest = [c for c in self.candidates if self.best is None or c.id != self.best.id]
        return rest[0] if rest else None


def get(codec_id: str) -> Codec:
    """The codec for a format id; ``Unsupported`` naming the known ids when there is none."""
    try:
        return _load(codec_id)
    except KeyError:
        raise Unsupported(
            f"unknown format {codec_id!r}; known formats: {', '.join(sorted(CODECS))}"
        ) from None


def declaration(format_id: str) -> Format | Codec:
    """What lists and detects format ``format_id`` without its codec: its declaration, or for a
    class put in the table in its place (``using``), an instance of that class. ``KeyError`` for
    an id not in the table."""
    target = CODECS[format_id]
    fmt = BY_ID.get(format_id)
    if fmt is not None and target == f"{PACKAGE}.{fmt.codec}":
        return fmt
    return _load(format_id)


@cache
def declarations() -> tuple[Format | Codec, ...]:
    """Every format's :func:`declaration`, in asking order: priority descending, then id."""
    return tuple(sorted((declaration(i) for i in CODECS), key=lambda d: (-d.priority, d.id)))


def kind_of(format_id: str, s: Sniff) -> EntityKind:
    """The kind of the primary entity ``s`` holds, read as format ``format_id`` (for reports)."""
    return declaration(format_id).kind_of(s)


@cache
def _load(codec_id: str) -> Codec:
    target = CODECS[codec_id]
    if isinstance(target, str):
        module, _, cls_name = target.partition(":")
        cls = getattr(importlib.import_module(module), cls_name)
    else:
        cls = target
    codec: Codec = cls()
    if codec.id != codec_id:
        raise RuntimeError(f"registry says {codec_id!r} but {target} has id {codec.id!r}")
    return codec


@cache
def all_codecs() -> tuple[Codec, ...]:
    """Every codec, in asking order: priority descending, then id."""
    return tuple(sorted((_load(i) for i in CODECS), key=lambda c: (-c.priority, c.id)))


@contextmanager
def using(table: dict[str, str | type[Codec]]) -> Iterator[None]:
    """Swap the codec table (tests, plugins); caches are reset on entry and on exit."""
    global CODECS
    saved = CODECS
    CODECS = dict(table)
    _clear()
    try:
        yield
    finally:
        CODECS = saved
        _clear()


def _clear() -> None:
    _load.cache_clear()
    all_codecs.cache_clear()
    declarations.cache_clear()
    _index.cache_clear()
    _for_kind.cache_clear()
    apps.cache_clear()


@cache
def _index() -> Index:
    """The detection index over :func:`declarations` (``core.claims``): a format put in the table
    as a class states no claims and is asked always."""
    decls = declarations()
    return Index.build(decls, [d.claims if isinstance(d, Format) else None for d in decls])


def candidates(s: Sniff) -> tuple[Format | Codec, ...]:
    """The formats that may score ``s`` above 0, in asking order: those whose claims its features
    meet and those that state none (``core.claims``)."""
    return _index().pick(s)  # type: ignore[return-value]


def for_kind(kind: EntityKind) -> list[Codec]:
    """Every codec that holds entities of ``kind``, in asking order."""
    return list(_for_kind(kind))


@cache
def _for_kind(kind: EntityKind) -> tuple[Codec, ...]:
    # asked for every input a fidelity check converts (its targets): the table does not change
    return tuple(c for c in all_codecs() if c.holds(kind))


def family_codec(family: str, kind: EntityKind) -> Codec | None:
    """The codec of app ``family`` that writes entities of ``kind`` (the highest-priority one that
    is not read-only), if any."""
    for c in all_codecs():
        if c.family == family and c.holds(kind) and not c.read_only:
            return c
    return None


@cache
def apps() -> dict[str, tuple[Format | Codec, ...]]:
    """Every app (format family: ``sillytavern``, ``risu``...) and its formats, in asking order.
    An app name is a ``--to`` target of its own: that app's format for each entity's kind
    (``bundle.target_codec``)."""
    out: dict[str, list[Format | Codec]] = {}
    for d in declarations():
        if d.family:
            out.setdefault(d.family, []).append(d)
    return {app: tuple(ds) for app, ds in sorted(out.items())}


def app_kinds(app: str) -> list[str]:
    """The entity kinds app ``app`` has a format for, sorted."""
    return sorted({k for d in apps().get(app, ()) for k in d.kinds})


def is_target(name: str) -> bool:
    """Whether ``name`` is a ``--to`` target: a format id or an app name."""
    return name in CODECS or name in apps()


def check_target(name: str) -> None:
    """``Unsupported`` naming the known format ids and app names when ``name`` is neither."""
    if not is_target(name):
        raise Unsupported(
            f"unknown format {name!r}; known formats: {', '.join(sorted(CODECS))}; "
            f"or an app name for its format of each kind: {', '.join(apps())}"
        )


def formats_for(kind: str) -> list[str]:
    """The ids of the formats that hold entities of ``kind``, in asking order (for messages)."""
    return [d.id for d in declarations() if d.holds(kind)]


def lossless_codec(kind: EntityKind) -> Codec:
    """The format that writes an entity of ``kind`` as the canonical entity itself (vaud-json):
    where linked entities go when their app has no format for them."""
    for c in all_codecs():
        if c.lossless and c.holds(kind):
            return c
    raise Unsupported(f"no lossless format holds {kind} entities")


def twin_type(format_id: str) -> type[Twin]:
    """The escrow twin class of format ``format_id`` (the base ``Twin`` for an id not in the table:
    a vaud-json line may carry the twin of a format this bunzai does not know)."""
    return _load(format_id).twin_type if format_id in CODECS else Twin


def _rank_key(c: Candidate) -> tuple[float, int, str]:
    return (-c.score, -declaration(c.id).priority, c.id)


def detect_all(s: Sniff) -> Detection:
    """Rank every non-zero score of ``s`` (the formats that may claim it are asked: the others
    score 0). For reports and ``bunzai detect``."""
    asked = candidates(s)
    found = _detect_all(s, asked)
    if basecache.CHECK:
        _held_to_every_format(s, asked, found, _detect_all, "detect_all")
    return found


def _detect_all(s: Sniff, asked: tuple[Format | Codec, ...]) -> Detection:
    cands = [Candidate(d.id, sc) for d in asked if (sc := d.detect(s)) > 0.0]
    cands.sort(key=_rank_key)
    best = cands[0] if cands and cands[0].score >= ACCEPT else None
    return Detection(best, tuple(cands))


def detect(s: Sniff) -> Candidate | None:
    """The winning format for ``s`` (short-cut at certainty), or ``None`` below ``ACCEPT``."""
    asked = candidates(s)
    best = _detect(s, asked)
    if basecache.CHECK:
        _held_to_every_format(s, asked, best, _detect, "detect")
    return best


def _detect(s: Sniff, asked: tuple[Format | Codec, ...]) -> Candidate | None:
    best: Candidate | None = None
    for c in asked:
        sc = c.detect(s)
        if sc >= CERTAIN:
            return Candidate(c.id, sc)
        if sc >= ACCEPT and (best is None or sc > best.score):
            best = Candidate(c.id, sc)  # asking order already breaks ties
    return best


def _held_to_every_format(
    s: Sniff, asked: tuple[Format | Codec, ...], found: Any, how: Any, what: str
) -> None:
    """``basecache.CHECK``: raise ``RuleBroken`` unless asking every format gives ``found`` too. A
    detector crash is recorded once (``DETECT_ERRORS``): the formats asked already recorded theirs."""
    every = declarations()
    if len(asked) == len(every):
        return
    seen = len(DETECT_ERRORS)
    full = how(s, every)
    ids = {d.id for d in asked}
    rest = [e for e in DETECT_ERRORS[seen:] if e[0] not in ids]
    del DETECT_ERRORS[seen:]
    DETECT_ERRORS.extend(rest)
    if full != found:
        skipped = {d.id for d in every} - ids
        raise basecache.RuleBroken(
            f"{what} of {s!r} asked by its features gives {found}, asking every format gives {full} "
            f"(a row's claims leave out an input its detector claims; not asked: {sorted(skipped)})"
        )


def require(s: Sniff, format_id: str | None = None) -> Candidate:
    """The codec to decode ``s`` with: ``format_id`` if given (its decoder then says precisely what
    does not fit, which beats "not recognised"; an id in ``MOVED`` that scores 0 where its successor
    scores reads ``s`` as the successor), else the detection winner."""
    if format_id is not None:
        score = get(format_id).detect(s)
        moved = MOVED.get(format_id)
        if score == 0.0 and moved is not None:
            # the old id asked to read what is now the other format's (a module as risu-regex)
            theirs = get(moved.to).detect(s)
            if theirs > 0.0:
                return Candidate(moved.to, theirs)
        return Candidate(format_id, score)
    best = detect(s)
    if best is None:
        raise unrecognized(s)
    return best


#: how many of the nearest formats a ``NotRecognized`` names
NEAREST = 3


def unrecognized(s: Sniff, detection: Detection | None = None) -> BunzaiError:
    """Why no format took ``s``: input that is clearly JSON, a PNG or a zip but does not parse is
    ``Malformed`` where it breaks (the byte offset), as decoding with ``--from`` would say; anything
    else is ``NotRecognized`` naming the nearest formats and their scores."""
    if s.looks_like_json and s.json_error is not None:
        return s.json_error
    if s.is_png:
        _ = s.png_texts  # (whichever detectors were asked: a text chunk over the bounds says so)
    if s.is_png and s.png_error is not None:
        bad = s.png_error
        return Malformed(f"not a readable PNG: {bad.message}", uri=s.uri, offset=bad.offset, path=bad.path)
    if s.data[:4] == ZIP_MAGIC and s.zip_error is not None:
        bad = s.zip_error
        msg = (
            bad.message
            if bad.message.startswith("not a readable zip")
            else f"not a readable zip: {bad.message}"
        )
        return type(bad)(msg, uri=s.uri, offset=bad.offset, path=bad.path)
    d = detection or detect_all(s)
    near = ", ".join(f"{c.id} ({c.score:.2f})" for c in d.candidates[:NEAREST])
    return NotRecognized(
        "no format recognised this input" + (f"; nearest: {near}" if near else ""),
        uri=s.uri,
    )
