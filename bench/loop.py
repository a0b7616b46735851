"""The single-process codec loop: every file in memory, every figure a ratio to a baseline timed
in the same run.

For each group of files (the generator's manifest says what each file is):

- ``read``: detect + decode + validate into canonical entities with escrow (``bunzai_codecs.read``);
- baselines on the same bytes: stdlib ``json.loads`` (JSON files), ``tavern-card``'s
  ``parse_card`` / ``parse_png_card`` and card-forge's parse (cards);
- ``convert``: V2 JSON cards to CCv3 JSON and to ``.charx`` (decode, encode, serialise);
- ``round trip``: decode and write back in the same format.

Timing: each subject and its baseline run alternately, ``repeat`` times over the whole group, and
the best pass of each is kept. The clock is the process's CPU time (``time.process_time``): the
loop is single-threaded and in memory, so CPU time is its cost, and a busy neighbour on a shared
2-core machine (preempting us) does not show up as our time. A ratio is baseline time / subject
time, so > 1 means bunzai is faster.
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from bunzai_codecs import bundle
from bunzai_codecs.core.entity import CanonicalEntity
from bunzai_codecs.core.errors import BunzaiError


@dataclass
class File:
    path: str
    expect: str
    data: bytes

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


@dataclass
class Timing:
    """Best-of-``repeat`` seconds for one pass over ``files`` files, and how many failed."""

    label: str
    seconds: float
    files: int
    failed: int = 0

    @property
    def per_file_us(self) -> float:
        return self.seconds / max(1, self.files) * 1e6

    @property
    def files_per_s(self) -> float:
        return self.files / self.seconds if self.seconds else 0.0


@dataclass
class Row:
    """One figure: a subject against its baseline, timed in the same run."""

    group: str
    subject: Timing
    baseline: Timing | None
    target: float | None = None
    note: str = ""

    @property
    def ratio(self) -> float | None:
        if self.baseline is None or not self.subject.seconds:
            return None
        return self.baseline.seconds / self.subject.seconds

    @property
    def meets(self) -> bool | None:
        r = self.ratio
        return None if r is None or self.target is None else r >= self.target


@dataclass
class LoopResult:
    rows: list[Row] = field(default_factory=list)
    #: seconds of one ``read`` pass over the whole corpus (the pipeline's single-process yardstick)
    corpus_read_s: float = 0.0
    corpus_files: int = 0
    corpus_bytes: int = 0
    #: detected format != the manifest's expectation (must stay 0)
    mismatches: list[str] = field(default_factory=list)


def _pass(fn: Callable[[File], Any], files: Sequence[File]) -> tuple[float, int]:
    failed = 0
    gc.collect()
    t0 = time.process_time()
    for f in files:
        try:
            fn(f)
        except Exception:
            failed += 1
    return time.process_time() - t0, failed


def race(
    subjects: Sequence[tuple[str, Callable[[File], Any]]], files: Sequence[File], repeat: int
) -> list[Timing]:
    """Time each subject over ``files``, alternating subjects each round; best of ``repeat``."""
    best = [float("inf")] * len(subjects)
    fails = [0] * len(subjects)
    for _ in range(repeat):
        for k, (_, fn) in enumerate(subjects):
            t, failed = _pass(fn, files)
            best[k] = min(best[k], t)
            fails[k] = failed
    return [Timing(label, best[k], len(files), fails[k]) for k, (label, _) in enumerate(subjects)]


# -- subjects and baselines -------------------------------------------------------------------------


def bunzai_read(f: File) -> Any:
    return bundle.read(f.data, f.name)


def stdlib_json(f: File) -> Any:
    return json.loads(f.data)


def tavern_card_json(f: File) -> Any:
    import tavern_card

    return tavern_card.parse_card(f.data)


def tavern_card_png(f: File) -> Any:
    import tavern_card

    return tavern_card.parse_png_card(f.data)


def card_forge_json(f: File) -> Any:
    """card-forge's own parse of card JSON (``forge.helper.extract_card_data`` minus the PNG step):
    ``CharacterCardV3.model_validate_json``, and for a V2 card ``CharacterCardV2`` then
    ``upgrade_v2_to_v3``."""
    from forge.helper import upgrade_v2_to_v3
    from forge.models import CharacterCardV2, CharacterCardV3
    from pydantic import ValidationError

    try:
        return CharacterCardV3.model_validate_json(f.data)
    except ValidationError:
        return upgrade_v2_to_v3(CharacterCardV2.model_validate_json(f.data))


def card_forge_png(f: File) -> Any:
    """card-forge's ``extract_card_data`` (Pillow opens the PNG) on the bytes; it prints on failure."""
    from forge.helper import extract_card_data

    with contextlib.redirect_stdout(io.StringIO()):
        card = extract_card_data(io.BytesIO(f.data))
    if card is None:
        raise ValueError("card-forge could not read the card")
    return card


def _fresh(e: CanonicalEntity, codec_id: str) -> CanonicalEntity:
    """``e`` without its own twin for ``codec_id`` (so that codec writes a fresh tree)."""
    return CanonicalEntity(
        kind=e.kind,
        id=e.id,
        body=e.body,
        links=e.links,
        original={k: v for k, v in e.original.items() if k != codec_id},
        source=e.source,
        warnings=e.warnings,
    )


def convert_v3_json(f: File) -> bytes:
    """A V2 JSON card as a CCv3 JSON card: decode, write fresh through the ``sillytavern`` codec
    (it writes CCv3; linked lorebook and regex scripts are re-embedded), serialise."""
    d = bundle.read(f.data, f.name)
    return bundle.write(_fresh(d.primary, "sillytavern"), "sillytavern", linked=d.entities).data


def convert_charx(f: File) -> bytes:
    """A V2 JSON card as a RisuAI ``.charx`` (zip with card.json and module.risum)."""
    return bundle.convert(f.data, f.name, "risu").data


def round_trip(f: File) -> bytes:
    """Decode, then write back in the detected format (through the escrow twin)."""
    d = bundle.read(f.data, f.name)
    src = d.primary.source
    assert src is not None
    return bundle.write(d.primary, src.format, linked=d.entities).data


def _has_optional(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


# -- the loop ---------------------------------------------------------------------------------------


def groups(files: Sequence[File]) -> dict[str, list[File]]:
    """Files by what they are: JSON cards (V2 and V3), PNG cards, and one group per other format."""
    out: dict[str, list[File]] = {}
    for f in files:
        if f.expect == "sillytavern":
            key = "png-cards" if f.path.endswith(".png") else "json-cards"
        else:
            key = f.expect
        out.setdefault(key, []).append(f)
    return out


def check_formats(files: Sequence[File]) -> list[str]:
    """Files whose detected format (or rejection) is not the manifest's: a benchmark over files
    bunzai misreads would measure the wrong work."""
    bad = []
    for f in files:
        try:
            got = bundle.read(f.data, f.name).primary.source
            fmt = got.format if got else "?"
        except BunzaiError as exc:
            fmt = "REJECT"
            if exc.internal:
                fmt = f"INTERNAL {exc}"
        if fmt != f.expect:
            bad.append(f"{f.path}: detected {fmt}, expected {f.expect}")
    return bad


#: issue 31's codec targets (its outside profile found each of issue 21's ceilings a choice of the
#: design: one hash, one validation and one dispatch per input, unedited writes skipping the walk)
TARGETS = {
    ("json-cards", "json.loads"): 0.4,
    ("png-cards", "tavern-card"): 0.6,
    ("convert v2->ccv3 json", "json.loads"): 0.3,
}


#: the groups of the rows issue 31 sets targets on (``run(..., only=TARGET_GROUPS)``: ``--loop-only``)
TARGET_GROUPS = ("json-cards", "png-cards", "convert")


def run(
    files: Sequence[File],
    *,
    repeat: int = 3,
    log: Callable[[str], None] = print,
    only: Collection[str] | None = None,
) -> LoopResult:
    """Every row of the codec loop over ``files``; ``only`` names the groups to time (``json-cards``,
    ``png-cards``, ``convert``, a format id, ``broken``, ``corpus``), default all of them."""

    def wanted(group: str) -> bool:
        return only is None or group in only

    res = LoopResult(corpus_files=len(files), corpus_bytes=sum(len(f.data) for f in files))
    res.mismatches = check_formats(files)
    by = groups(files)
    peers = _has_optional("tavern_card"), _has_optional("forge")

    def add(group: str, subject: Timing, base: Timing | None, note: str = "") -> None:
        row = Row(group, subject, base, TARGETS.get((group, base.label if base else "")), note)
        res.rows.append(row)
        r = f"{row.ratio:.2f}x {base.label}" if base and row.ratio is not None else "-"
        log(f"  {group:<24} {subject.label:<22} {subject.per_file_us:9.0f} us/file  {r}")

    # JSON cards: read vs json.loads, tavern-card, card-forge
    cards = by.get("json-cards", [])
    if cards and wanted("json-cards"):
        subjects: list[tuple[str, Callable[[File], Any]]] = [
            ("read", bunzai_read),
            ("json.loads", stdlib_json),
        ]
        if peers[0]:
            subjects.append(("tavern-card", tavern_card_json))
        if peers[1]:
            subjects.append(("card-forge", card_forge_json))
        t = race(subjects, cards, repeat)
        for base in t[1:]:
            add("json-cards", t[0], base, f"{base.failed} of {base.files} failed" if base.failed else "")

    pngs = by.get("png-cards", [])
    if pngs and wanted("png-cards"):
        subjects = [("read", bunzai_read)]
        if peers[0]:
            subjects.append(("tavern-card", tavern_card_png))
        if peers[1]:
            subjects.append(("card-forge", card_forge_png))
        t = race(subjects, pngs, repeat)
        if len(t) == 1:
            add("png-cards", t[0], None)
        for base in t[1:]:
            add("png-cards", t[0], base, f"{base.failed} of {base.files} failed" if base.failed else "")

    v2 = [f for f in cards if b'"chara_card_v2"' in f.data]
    if v2 and wanted("convert"):
        t = race(
            [("convert", convert_v3_json), ("convert charx", convert_charx), ("json.loads", stdlib_json)],
            v2,
            repeat,
        )
        add("convert v2->ccv3 json", t[0], t[2])
        add("convert v2->charx", t[1], t[2])

    # every other format: read vs json.loads (JSON formats), and the same-format round trip
    for group, fs in sorted(by.items()):
        if group in ("json-cards", "png-cards", "REJECT") or not wanted(group):
            continue
        is_json = all(f.data.lstrip()[:1] in (b"{", b"[") for f in fs)
        subjects = [("read", bunzai_read), ("round trip", round_trip)]
        if is_json:
            subjects.append(("json.loads", stdlib_json))
        t = race(subjects, fs, repeat)
        add(group, t[0], t[2] if is_json else None)
        add(group, t[1], t[2] if is_json else None)
    for group in ("json-cards", "png-cards"):
        if by.get(group) and only is None:
            t = race([("round trip", round_trip)], by[group], repeat)
            add(group, t[0], None)

    rejects = by.get("REJECT", [])
    if rejects and wanted("broken"):
        t = race([("read (rejects)", bunzai_read)], rejects, repeat)
        add("broken", t[0], None, "every one a typed error")

    # the whole corpus once, in manifest order: the yardstick for the pipeline
    if not wanted("corpus"):
        return res
    t = race([("read all", bunzai_read)], files, 1)
    res.corpus_read_s = t[0].seconds
    log(f"  whole corpus: {len(files)} files read in {t[0].seconds:.2f}s ({t[0].files_per_s:.0f} files/s)")
    return res


def load(dest: str, limit: int | None = None) -> list[File]:
    """The corpus under ``dest`` (folder or fsspec URL) into memory, in manifest order."""
    import fsspec

    from bench.gen import read_manifest

    fs, root = fsspec.core.url_to_fs(dest)
    rows = read_manifest(dest)
    if limit is not None:
        rows = rows[:limit]
    paths = [f"{root}/{p}" for p, _, _, _ in rows]
    blobs = fs.cat(paths)
    return [File(p, e, blobs[f"{root}/{p}"]) for p, e, _, _ in rows]


# -- where the time goes: the floor under each target ----------------------------------------------


@dataclass
class Part:
    label: str
    us: float


def _cpu_us(fn: Callable[[Any], Any], items: Sequence[Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t0 = time.process_time()
        for x in items:
            fn(x)
        best = min(best, time.process_time() - t0)
    return best / max(1, len(items)) * 1e6


def breakdown_json_cards(cards: Sequence[File], repeat: int = 3) -> list[Part]:
    """Per-file CPU microseconds of each piece of ``read`` on JSON cards, measured apart: the
    parse (orjson), the input digest (sha256: entity ids and provenance), every detector on an
    already parsed input, the mapping to body dicts, pydantic validation of those dicts, and
    pydantic-core validating the bodies straight from their own JSON (what a decode done wholly by
    pydantic-core could cost at best); next to ``json.loads`` and the whole ``read``."""
    import hashlib

    import orjson

    from bunzai_codecs.core import registry
    from bunzai_codecs.core.sniff import Sniff
    from bunzai_codecs.entities import CharacterBody, LorebookBody, RegexSetBody
    from bunzai_codecs.entities.base import Body
    from bunzai_codecs.formats.tavern.character_book import book_to_body
    from bunzai_codecs.formats.tavern.fields import card_to_body
    from bunzai_codecs.formats.tavern.st_regex import scripts_to_body

    codec = registry.get("sillytavern")
    dialects = codec.dialects  # type: ignore[attr-defined]
    trees = [orjson.loads(f.data) for f in cards]

    def mapped(t: Any) -> tuple[Any, Any, Any]:
        body, _ = card_to_body(t, dialects=dialects)
        data = t["data"] if isinstance(t.get("data"), dict) else t
        book = data.get("character_book")
        ext = data.get("extensions") or {}
        scripts = ext.get("regex_scripts")
        return body, book_to_body(book) if book else None, scripts_to_body(scripts) if scripts else None

    bodies = [mapped(t) for t in trees]

    def validate(b: tuple[Any, Any, Any]) -> None:
        CharacterBody.model_validate(b[0])
        if b[1] is not None:
            LorebookBody.model_validate(b[1])
        if b[2] is not None:
            RegexSetBody.model_validate(b[2])

    def detect(pair: tuple[File, Any]) -> Any:
        s = Sniff(pair[0].data, pair[0].name)
        s._json, s._json_error = pair[1], None  # parsed already: detection alone
        return registry.detect(s)

    # the ceiling of a decode done wholly inside pydantic-core (wire keys mapped by aliases,
    # parsed and validated in Rust): the bodies' own JSON validated straight from bytes
    kinds: tuple[type[Body], ...] = (CharacterBody, LorebookBody, RegexSetBody)

    def own_json(k: type[Body], b: Any) -> bytes:
        return orjson.dumps(k.model_validate(b).dump())

    as_json = [
        [(k, own_json(k, b)) for k, b in zip(kinds, trio, strict=True) if b is not None] for trio in bodies
    ]

    def validate_json(items: list[tuple[Any, bytes]]) -> None:
        for k, raw in items:
            k.model_validate_json(raw)

    pairs = list(zip(cards, trees, strict=True))
    return [
        Part("json.loads (baseline)", _cpu_us(lambda f: json.loads(f.data), cards, repeat)),
        Part("orjson.loads", _cpu_us(lambda f: orjson.loads(f.data), cards, repeat)),
        Part("sha256 of the file", _cpu_us(lambda f: hashlib.sha256(f.data).hexdigest(), cards, repeat)),
        Part("detection (all codecs, parsed input)", _cpu_us(detect, pairs, repeat)),
        Part("mapping to body dicts", _cpu_us(mapped, trees, repeat)),
        Part("pydantic validation", _cpu_us(validate, bodies, repeat)),
        Part("model_validate_json of the bodies' own JSON", _cpu_us(validate_json, as_json, repeat)),
        Part("read (all of it)", _cpu_us(bunzai_read, cards, repeat)),
    ]


def breakdown_png_cards(pngs: Sequence[File], repeat: int = 3) -> list[Part]:
    """Per-file CPU microseconds of the fixed costs of a PNG card next to tavern-card's parse."""
    import base64
    import hashlib
    import zlib

    import orjson

    from bunzai_codecs.core import png

    def payload(f: File) -> Any:
        pf = png.parse(f.data, check_crc=False)
        t = png.text_chunks(pf.chunks, keywords=("ccv3",))[0]
        return orjson.loads(base64.b64decode(t.text))

    parts = [
        Part("sha256 of the file", _cpu_us(lambda f: hashlib.sha256(f.data).hexdigest(), pngs, repeat)),
        Part("CRC-32 of every chunk", _cpu_us(lambda f: zlib.crc32(f.data), pngs, repeat)),
        Part("chunk walk, no CRC", _cpu_us(lambda f: png.parse(f.data, check_crc=False), pngs, repeat)),
        Part("base64 + orjson of ccv3", _cpu_us(payload, pngs, repeat)),
        Part("read (all of it)", _cpu_us(bunzai_read, pngs, repeat)),
    ]
    if _has_optional("tavern_card"):
        parts.insert(0, Part("tavern-card parse_png_card (baseline)", _cpu_us(tavern_card_png, pngs, repeat)))
    return parts
