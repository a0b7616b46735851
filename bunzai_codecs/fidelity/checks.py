"""The fidelity checks of one input, each giving ``FidelityRow`` records: the native round trip
(``native_round_trip``), canonical stability (``canonical_stability``) and cross-format
(``cross_format``), plus its ``decode`` or reject row; ``check_file`` / ``check_decoded`` run them
all (the pipeline's RoundTrip stage and ``bunzai fidelity`` both call them), and ``export_row`` is
``bunzai convert``'s report of one export. What each check compares, and how a loss is classed, is
the package's docstring (``bunzai_codecs/fidelity/__init__.py``) and docs/fidelity.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Required, TypedDict, Unpack

from bunzai_codecs.bundle import Export, read_sniff, write
from bunzai_codecs.core import basecache, registry
from bunzai_codecs.core.codec import Codec, Coverage, sniff_kind
from bunzai_codecs.core.diff import Change, diff
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.errors import BunzaiError
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.fidelity.media import media_changes
from bunzai_codecs.fidelity.native import compare_native
from bunzai_codecs.fidelity.paths import _by_kind, _canonical_losses, _group, _linked_of, _Part, _status
from bunzai_codecs.fidelity.patterns import PatternBook, Patterns, Shape, Template, pattern_key
from bunzai_codecs.fidelity.rows import (
    DIFF_LIMIT,
    NAME_MAX,
    Check,
    FidelityRow,
    LossClass,
    PathLoss,
    RowError,
)
from bunzai_codecs.fidelity.semantic import _semantic
from bunzai_codecs.fidelity.weights import _copy, _Dumps, _Units, _weigh

# -- the checks -----------------------------------------------------------------------------------


def entity_name(e: CanonicalEntity) -> str:
    """A display name for reports: the character's or the book's name, else ""."""
    body = e.body
    name: Any = getattr(getattr(body, "identity", None), "name", None) or getattr(body, "name", None)
    if not isinstance(name, str):
        return ""
    name = " ".join(name.split())
    return name if len(name) <= NAME_MAX else name[: NAME_MAX - 1] + "…"


@dataclass(slots=True)
class _Input:
    key: str
    sha256: str
    uri: str
    #: the input's file name: written files are read back under a name like it, because some
    #: formats take the entity's name from the file name (a SillyTavern world is named by its file)
    name: str = ""

    def stem(self) -> str:
        base = self.name.replace("\\", "/").rsplit("/", 1)[-1]
        return base.split(".")[0] or "export"


def _row(inp: _Input, e: CanonicalEntity, source: str, target: str, check: Check, **kw: Any) -> FidelityRow:
    return FidelityRow(
        input=inp.key,
        sha256=inp.sha256,
        uri=inp.uri,
        entity=e.id,
        kind=e.kind,
        name=entity_name(e),
        source=source,
        target=target,
        check=check,
        **kw,
    )


def _source_of(e: CanonicalEntity, default: str = "") -> str:
    return e.source.format if e.source is not None else default


def _beside(exports: list[Export]) -> Iterator[Export]:
    for x in exports:
        yield x
        yield from _beside(x.beside)


@dataclass(slots=True)
class _Back:
    """An entity written to a format and read back, with its linked entities as the target holds
    them (embedded ones from the main file, then any written beside it)."""

    export: Export
    primary: CanonicalEntity
    #: (entity read back, codec that carried it)
    linked: list[tuple[CanonicalEntity, Codec]]


_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]+')


def _file_stem(e: CanonicalEntity) -> str:
    """The file name an app gives an export of ``e``: its name, made safe (SillyTavern saves a world
    as ``<name>.json`` and names the world after the file when it reads it back)."""
    return _UNSAFE.sub("_", entity_name(e)).strip(" .")[:100]


def _there_and_back(
    e: CanonicalEntity, pool: Sequence[CanonicalEntity], codec: Codec, inp: _Input, *, same_name: bool = False
) -> _Back:
    """Write ``e`` as ``codec`` and read it back, under the input's own name (``same_name``, for a
    same-format round trip) or the entity's name with the codec's extension (as an app names an
    export); linked entities written beside it are named ``<input stem>.<kind><ext>``."""
    export = write(e, codec.id, linked=pool)
    name = inp.name if same_name and inp.name else f"{_file_stem(e) or inp.stem()}{export.extension}"
    return _read_back(export, codec, name, lambda side: f"{inp.stem()}.{side.entity.kind}{side.extension}")


def _read_back(
    export: Export,
    codec: Codec,
    name: str,
    side_name: Callable[[Export], str],
    same: Decoded | None = None,
) -> _Back:
    """An export read back by its codec under ``name``; the exports beside it under ``side_name``.
    ``same``: what ``codec`` decoded from these very bytes under this very name (the input, when a
    same-format write gave its bytes back), used instead of decoding them again."""
    back = same if same is not None else codec.decode(Sniff(export.data, name))
    linked = [(x, codec) for x in back.entities[1:]]
    for side in _beside(export.beside):
        side_codec = registry.get(side.format)
        side_back = side_codec.decode(Sniff(side.data, side_name(side)))
        linked += [(x, side_codec) for x in side_back.entities]
    return _Back(export, back.primary, linked)


def _carrier_coverage(carrier: Codec, kind: str) -> Coverage:
    """Coverage for a linked entity of ``kind`` inside a file of ``carrier``: the carrier's own when
    it is of that kind; else what the carrier says it holds of an embedded ``kind``
    (``embedded_coverage``: a Tavern card's ``character_book`` is not the app's lorebook file);
    else its app's codec for the kind; else none."""
    if carrier.holds(kind):
        return carrier.coverage
    embedded = carrier.embedded_coverage.get(kind)
    if embedded is not None:
        return embedded
    sibling = registry.family_codec(carrier.family, kind)  # type: ignore[arg-type]
    return sibling.coverage if sibling is not None else Coverage.of()


def _compare_bodies(
    before: CanonicalEntity,
    after: CanonicalEntity,
    coverage: Coverage | None,
    prefix: str = "",
    dumps: _Dumps | None = None,
) -> _Part:
    same = after is before and coverage is None
    if same and not basecache.CHECK:
        # the same entity on both sides (a same-format write that gave the input's own bytes back,
        # so its decode is the input's): the walk below finds no difference in one tree and itself
        return _Part([], None, prefix)
    old = dumps.fresh(before) if dumps is not None else before.body.dump()
    new = _copy(old) if after is before else after.body.dump()
    if coverage is not None:  # across formats: a value spelled differently but read the same is kept
        new = _semantic(before.kind, old, new)
        coverage = coverage.for_body(old)  # a value the target holds only reshaped: expected
    media_diff, fates = media_changes(old, new, before.media, after.media, coverage)
    changes = diff(old, new, empty_is_absent=coverage is not None, limit=DIFF_LIMIT)
    if same and (changes or media_diff or fates):
        raise basecache.RuleBroken("fidelity: an entity differs from itself")
    return _Part(changes + media_diff, coverage, prefix, fates)


def body_losses(
    before: CanonicalEntity, after: CanonicalEntity, coverage: Coverage | None
) -> tuple[list[PathLoss], list[PathLoss], list[PathLoss]]:
    """``(lost, changed, added)`` between two entities' bodies (media compared by their bytes),
    classed by ``coverage`` as a cross-format check does (None: every difference unexpected, the
    same-format view)."""
    part = _compare_bodies(before, after, coverage)
    row = _losses_row(_Input("", "", ""), before, "", "", "cross", [part])
    return row.lost, row.changed, row.added


def _linked_changes(
    originals: list[CanonicalEntity],
    back: list[tuple[CanonicalEntity, Codec]],
    cross: bool,
    dumps: _Dumps | None = None,
) -> Iterator[_Part]:
    """Pair linked entities by kind and order; ``<kind>[i].`` prefixes their paths."""
    want = _by_kind((x, None) for x in originals)
    got = _by_kind(back)
    for kind in sorted(want.keys() | got.keys()):
        ws, gs = want.get(kind, []), got.get(kind, [])
        for i in range(max(len(ws), len(gs))):
            prefix = f"{kind}[{i}]."
            if i >= len(gs):
                w = ws[i][0]
                # nothing came back for it: every leaf is lost, an unexpected loss (bundle.write
                # writes a linked entity beside the file when the target cannot embed it)
                yield _Part([Change("", "removed", _fresh(w, dumps), None)], None, prefix)
            elif i >= len(ws):
                # came back from nowhere: info across formats, a difference in the same format
                yield _Part(
                    [Change("", "added", None, gs[i][0].body.dump())],
                    Coverage.of() if cross else None,
                    prefix,
                )
            else:
                cov = _carrier_coverage(gs[i][1], kind) if cross else None
                yield _compare_bodies(ws[i][0], gs[i][0], cov, prefix, dumps)


def _fresh(e: CanonicalEntity, dumps: _Dumps | None) -> dict[str, Any]:
    return dumps.fresh(e) if dumps is not None else e.body.dump()


def _losses_row(
    inp: _Input,
    e: CanonicalEntity,
    source: str,
    target: str,
    check: Check,
    parts: Iterable[_Part],
) -> FidelityRow:
    lost: list[PathLoss] = []
    changed: list[PathLoss] = []
    added: list[PathLoss] = []
    for part in parts:
        lo, ch, ad = _canonical_losses(part.changes, part.coverage, part.prefix)
        lost += lo
        changed += ch
        added += ad
        groups: dict[str, list[tuple[str, LossClass]]] = {"lost": [], "changed": [], "added": []}
        for group, path, c in part.media:
            groups[group].append((part.prefix + path, c))
        lost += _group(groups["lost"], True)
        changed += _group(groups["changed"], True)
        added += _group(groups["added"], True)
    lost, changed, added = (_merge(x) for x in (lost, changed, added))
    return _row(
        inp,
        e,
        source,
        target,
        check,
        status=_status(lost, changed, added),
        lost=lost,
        changed=changed,
        added=added,
    )


def _merge(items: list[PathLoss]) -> list[PathLoss]:
    acc: dict[tuple[str, str], PathLoss] = {}
    for x in items:
        k = (x.path, x.cls)
        acc[k] = PathLoss(x.path, x.cls, acc[k].count + x.count, acc[k].at) if k in acc else x
    return [acc[k] for k in sorted(acc)]


def _error_row(
    inp: _Input, e: CanonicalEntity, source: str, target: str, check: Check, exc: BaseException
) -> FidelityRow:
    return _row(inp, e, source, target, check, status="error", error=RowError.of(exc))


class InputKeys(TypedDict, total=False):
    """What the same-format checks are told about their input: its stable key (``input``), digest,
    uri, file name, and the format it was decoded from (``source``; default: the entity's own)."""

    input: Required[str]
    sha256: str
    uri: str
    source: str | None
    name: str


def _input_of(decoded: Decoded, keys: InputKeys) -> tuple[_Input, str]:
    """The input ``keys`` describe, and the format to write (``source``, else the primary's own)."""
    inp = _Input(keys["input"], keys.get("sha256", ""), keys.get("uri", ""), keys.get("name", ""))
    return inp, keys.get("source") or _source_of(decoded.primary)


def native_round_trip(data: bytes, decoded: Decoded, **keys: Unpack[InputKeys]) -> FidelityRow:
    """Check 1 on a file: its primary entity (with the entities it links to) written back in its
    own format, compared with ``data`` as that format means it. Every difference is unexpected."""
    inp, fmt = _input_of(decoded, keys)
    return _native_row(data, decoded, inp, fmt, _written(decoded, fmt))


def _written(decoded: Decoded, fmt: str) -> Export | Exception:
    """The primary entity of ``decoded`` written in its own format ``fmt`` with its linked
    entities, or what stopped it: the native and the stability check share this one write."""
    try:
        return write(decoded.primary, fmt, linked=decoded.entities)
    except Exception as exc:
        return exc


def _native_row(
    data: bytes, decoded: Decoded, inp: _Input, fmt: str, made: Export | Exception
) -> FidelityRow:
    e = decoded.primary
    try:
        if isinstance(made, Exception):
            raise made
        changes = compare_native(data, made.data)
    except Exception as exc:
        return _error_row(inp, e, fmt, fmt, "native", exc)
    groups: dict[str, list[tuple[str, LossClass]]] = {"removed": [], "changed": [], "added": []}
    for ch in changes:
        groups[ch.kind].append((ch.path, "unexpected"))
    lost, changed, added = (_group(groups[k], False) for k in ("removed", "changed", "added"))
    return _row(
        inp,
        e,
        fmt,
        fmt,
        "native",
        status=_status(lost, changed, added),
        lost=lost,
        changed=changed,
        added=added,
    )


def canonical_stability(decoded: Decoded, **keys: Unpack[InputKeys]) -> list[FidelityRow]:
    """Check 2: the file's primary entity written in its own format and decoded again must give the
    same bodies — the primary's, and each linked entity's (matched by kind and order). Entities the
    primary does not link to (a Voxta package's further characters, which the package written for
    its first one holds too) are matched, by kind and order, with what came back beyond the linked
    ones; one that did not come back is lost. One row per entity; every difference is unexpected."""
    inp, fmt = _input_of(decoded, keys)
    return _stability_rows(decoded, inp, fmt, _written(decoded, fmt))


def _stability_rows(
    decoded: Decoded, inp: _Input, fmt: str, made: Export | Exception, data: bytes | None = None
) -> list[FidelityRow]:
    """``canonical_stability``'s rows from the file written back (``made``). When that gave the
    input's own bytes (``data``, read under ``inp.name``), reading them again gives what
    ``decoded`` holds: it is compared instead of a second decode."""
    e = decoded.primary
    try:
        codec = registry.get(fmt)
        if isinstance(made, Exception):
            raise made
        name = inp.name or f"{_file_stem(e) or inp.stem()}{made.extension}"
        same = decoded if inp.name and data is not None and made.data == data else None
        back = _read_back(
            made, codec, name, lambda side: f"{inp.stem()}.{side.entity.kind}{side.extension}", same
        )
    except Exception as exc:
        return [_error_row(inp, x, fmt, fmt, "stability", exc) for x in decoded.entities]
    rows = [_losses_row(inp, e, fmt, fmt, "stability", [_compare_bodies(e, back.primary, None)])]
    linked = _linked_of(e, decoded.entities)
    linked_ids = {x.id for x in linked}
    rest = [x for x in decoded.entities[1:] if x.id not in linked_ids]
    got = _by_kind(back.linked)
    for group in (linked, rest):
        for kind, ws in _by_kind((x, None) for x in group).items():
            gs = got.get(kind, [])
            for i, (w, _) in enumerate(ws):
                if i < len(gs):
                    rows.append(
                        _losses_row(inp, w, fmt, fmt, "stability", [_compare_bodies(w, gs[i][0], None)])
                    )
                else:
                    lost = [PathLoss("$", "unexpected", 1, "$")]
                    rows.append(_row(inp, w, fmt, fmt, "stability", status="unexpected", lost=lost))
            got[kind] = gs[len(ws) :]
    return rows


def cross_format(
    e: CanonicalEntity,
    target: Codec,
    *,
    pool: Sequence[CanonicalEntity] = (),
    input: str,
    sha256: str = "",
    uri: str = "",
    source: str | None = None,
    name: str = "",
    units: _Units | None = None,
    dumps: _Dumps | None = None,
) -> FidelityRow:
    """Check 3 for one entity and one target: ``decode_T(encode_T(e))`` against ``e``; each lost or
    changed path is expected when ``target.coverage`` cannot hold it, unexpected otherwise. Linked
    entities (from ``pool``) are compared under ``<kind>[i].`` by the coverage of their carrier.
    ``units``: ``e``'s units of content when the caller weighed them already (for several targets);
    ``dumps``: the source bodies' dumps, shared by the caller's rows."""
    inp = _Input(input, sha256, uri, name)
    return _cross(e, target, pool, inp, source or _source_of(e), units, dumps)[0]


def _cross(
    e: CanonicalEntity,
    target: Codec,
    pool: Sequence[CanonicalEntity],
    inp: _Input,
    fmt: str,
    units: _Units | None,
    dumps: _Dumps | None,
) -> tuple[FidelityRow, list[_Part]]:
    """``cross_format``'s row, with the comparisons it was made from (``fidelity.patterns`` learns
    from them)."""
    units = units.fresh() if units is not None else _Units.of(e, pool, dumps)
    try:
        back = _there_and_back(e, pool or [e], target, inp)
    except Exception as exc:
        return _weigh(_error_row(inp, e, fmt, target.id, "cross", exc), units, []), []
    parts = [_compare_bodies(e, back.primary, target.coverage, dumps=dumps)]
    parts += list(_linked_changes(_linked_of(e, pool), back.linked, cross=True, dumps=dumps))
    return _weigh(_losses_row(inp, e, fmt, target.id, "cross", parts), units, parts), parts


def export_row(
    e: CanonicalEntity,
    pool: Sequence[CanonicalEntity],
    export: Export,
    *,
    name: str,
    input: str,
    source: str = "",
    side_names: dict[int, str] | None = None,
) -> FidelityRow:
    """The cross check on an export already made (``bunzai convert``'s report): ``export`` read back
    under the file ``name`` it was written as (the exports beside it under ``side_names``, by the
    export's ``id``), compared with ``e``, its linked entities and the other entities the file holds
    (``Export.embedded``: a Voxta package's further characters), classed by the target's coverage."""
    target = registry.get(export.format)
    inp = _Input(input, "", input, name)
    fmt = source or _source_of(e)
    names = side_names or {}
    try:
        back = _read_back(
            export,
            target,
            name,
            lambda side: names.get(id(side), f"{inp.stem()}.{side.entity.kind}{side.extension}"),
        )
    except Exception as exc:
        return _error_row(inp, e, fmt, target.id, "cross", exc)
    parts = [_compare_bodies(e, back.primary, None if target.lossless else target.coverage)]
    linked = _linked_of(e, pool)
    ids = {x.id for x in linked} | {e.id}
    held = [x for x in pool if x.id in export.embedded and x.id not in ids]
    parts += list(_linked_changes(linked + held, back.linked, cross=True))
    return _losses_row(inp, e, fmt, target.id, "cross", parts)


def cross_targets(kind: str, source: str) -> list[Codec]:
    """Every codec of ``kind`` but the source itself, the lossless vaud-json (nothing to learn) and
    the read-only formats (they write no other format's entity)."""
    return [
        c
        for c in registry.for_kind(kind)  # type: ignore[arg-type]
        if c.id != source and not c.lossless and not c.read_only
    ]


def check_decoded(
    data: bytes,
    decoded: Decoded,
    *,
    source: str,
    input: str,
    sha256: str = "",
    uri: str = "",
    name: str = "",
    targets: Sequence[str] | None = None,
    patterns: Patterns | None = None,
) -> list[FidelityRow]:
    """All three checks on an input ``data`` (file name ``name``) that ``source`` decoded to
    ``decoded`` (the pipeline's RoundTrip stage calls this): one native row, a stability row per
    entity, a cross row per entity and target. ``targets`` limits the cross-format targets.
    ``patterns``: a run's sample and book (``fidelity.patterns``): a cross row of an input outside
    the sample is predicted where the book knows its pattern, and every cross row names its
    pattern; without it (or with a sample of 1) every row is observed, as ``bunzai fidelity`` does."""
    kw: dict[str, Any] = {"input": input, "sha256": sha256, "uri": uri, "source": source, "name": name}
    fmt = source or _source_of(decoded.primary)
    inp = _Input(input, sha256, uri, name)
    made = _written(decoded, fmt)  # one write for both same-format checks
    rows = [_native_row(data, decoded, inp, fmt, made)]
    rows += _stability_rows(decoded, inp, fmt, made, data)
    dumps = _Dumps(keep=True)  # every cross row compares with the same source bodies
    plan = patterns if patterns is not None and patterns.sample > 1 else None
    if plan is not None:
        rows += _cross_by_pattern(data, decoded, inp, source, targets, plan, dumps)
    else:
        for e in decoded.entities:
            units: _Units | None = None
            for t in cross_targets(e.kind, source):
                if targets is None or t.id in targets:
                    if units is None:
                        units = _Units.of(e, decoded.entities, dumps)
                    rows.append(cross_format(e, t, pool=decoded.entities, units=units, dumps=dumps, **kw))
    if basecache.CHECK:
        dumps.verify()
    return rows


def _cross_by_pattern(
    data: bytes,
    decoded: Decoded,
    inp: _Input,
    source: str,
    targets: Sequence[str] | None,
    plan: Patterns,
    dumps: _Dumps,
) -> Iterator[FidelityRow]:
    """``check_decoded``'s cross rows under ``plan``: each named by its pattern, predicted from the
    plan's book where it knows the source's shape and the input is outside the sample, observed
    otherwise."""
    observe = plan.observes(inp.key)
    container = sniff_kind(data)
    for e, shape, t in _cross_work(decoded, source, targets, dumps, container):
        fmt = source or _source_of(e)
        key = pattern_key(shape, fmt, t)
        # an input of the sample: observed; the sample's pass observed it already when the book
        # was made from it (its template gives that very row back: under basecache.CHECK, held to
        # a second observation)
        template = plan.template(key) if not observe or plan.taught(key, inp.key) else None
        row = None
        if template is not None:
            row = template.predict(shape, _row(inp, e, fmt, t.id, "cross", status="lossless"))
        if row is not None and observe and basecache.CHECK:
            again = _cross(e, t, decoded.entities, inp, fmt, shape.units, dumps)[0]
            if again.to_json() != row.to_json():
                raise basecache.RuleBroken(f"fidelity: the book does not give {inp.key} -> {t.id} back")
        if row is None:
            row = _cross(e, t, decoded.entities, inp, fmt, shape.units, dumps)[0]
            row.disagreed = plan.disagreed(key)
        elif not observe:
            row.basis = "predicted"
        row.pattern = key
        yield row


def _cross_work(
    decoded: Decoded,
    source: str,
    targets: Sequence[str] | None,
    dumps: _Dumps,
    container: str,
    *,
    order: bool = False,
) -> Iterator[tuple[CanonicalEntity, Shape, Codec]]:
    """``(entity, its shape, target)`` of every cross row of ``decoded``, a shape made once per
    entity (under ``basecache.CHECK``, its units held to ``_Units.of``)."""
    for e in decoded.entities:
        shape: Shape | None = None
        for t in cross_targets(e.kind, source):
            if targets is not None and t.id not in targets:
                continue
            if shape is None:
                shape = Shape(e, decoded.entities, dumps, container, order=order)
                if basecache.CHECK:
                    want = _Units.of(e, decoded.entities, dumps)
                    if shape.units.units != want.units or shape.units.order != want.order:
                        raise basecache.RuleBroken("fidelity: a shape's units differ from _Units.of")
            yield e, shape, t


def learn_patterns(
    data: bytes,
    decoded: Decoded,
    book: PatternBook,
    *,
    source: str,
    input: str,
    name: str = "",
    targets: Sequence[str] | None = None,
) -> int:
    """Observe every cross row of an input (as ``check_decoded`` would) and fold what each teaches
    into ``book`` (``PatternBook.add``): the sample's half of a run by pattern. Returns the rows."""
    inp = _Input(input, "", "", name)
    dumps = _Dumps(keep=True)
    n = 0
    for e, shape, t in _cross_work(decoded, source, targets, dumps, sniff_kind(data), order=True):
        fmt = source or _source_of(e)
        row, parts = _cross(e, t, decoded.entities, inp, fmt, shape.units, dumps)
        book.add(
            pattern_key(shape, fmt, t),
            Template.learn(row, parts, shape),
            input=input,
            source=fmt,
            target=t.id,
        )
        n += 1
    return n


def decode_row(decoded: Decoded, *, source: str, input: str, sha256: str = "", uri: str = "") -> FidelityRow:
    """The decode row of an input that ``source`` decoded."""
    return _row(_Input(input, sha256, uri), decoded.primary, source, "", "decode", status="decoded")


def reject_row(
    exc: BaseException | RowError, *, input: str, sha256: str = "", uri: str = "", source: str = ""
) -> FidelityRow:
    """The decode row of an input that did not decode (``exc``: what stopped it, or a ``RowError``
    rebuilt from a reject record)."""
    return FidelityRow(
        input=input,
        sha256=sha256,
        uri=uri,
        entity="",
        kind="",
        source=source,
        target="",
        check="decode",
        status="rejected",
        error=exc if isinstance(exc, RowError) else RowError.of(exc),
    )


def check_file(
    data: bytes,
    name: str = "",
    *,
    input: str | None = None,
    uri: str | None = None,
    targets: Sequence[str] | None = None,
) -> list[FidelityRow]:
    """Read one input and run every check: a ``decode`` row, then ``check_decoded``'s rows. A file
    that does not decode gives its ``rejected`` row only."""
    key = input or uri or name
    try:
        s = Sniff(data, name, uri=uri)
        sha = s.sha256
    except BunzaiError as exc:
        import hashlib

        return [reject_row(exc, input=key, sha256=hashlib.sha256(data).hexdigest(), uri=uri or "")]
    fmt = ""
    try:
        cand = registry.require(s)
        fmt = cand.id
        decoded = read_sniff(s, format=cand.id, score=cand.score)
    except Exception as exc:  # a typed reject, or an internal error the row marks as such
        return [reject_row(exc, input=key, sha256=sha, uri=uri or "", source=fmt)]
    # the file's own format, not the entities' recorded source (a vaud-json line keeps the
    # format its entity first came from)
    kw: dict[str, Any] = {"input": key, "sha256": sha, "uri": uri or "", "source": fmt}
    return [decode_row(decoded, **kw), *check_decoded(data, decoded, name=name, targets=targets, **kw)]
