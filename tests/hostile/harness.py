"""Run one hostile input through bunzai the way a user and the pipeline would.

For each case: ``read()`` (detect + decode, as the CLI does) and every codec's ``decode`` forced on
the input (as ``--from FORMAT`` does). Each call must either succeed or raise one of the typed
errors; a typed error marked ``internal`` (a decoder let a KeyError or TypeError escape), any
other exception and a detector that raised (``Codec.detect_errors``) are crashes.
"""

from __future__ import annotations

import time
import tracemalloc
from collections import Counter
from dataclasses import dataclass, field

from bunzai_codecs import BunzaiError, Codec, read
from bunzai_codecs.core import basecache, registry
from bunzai_codecs.core.entity import Decoded
from bunzai_codecs.core.sniff import Sniff

from .generate import Case

#: hostile inputs run with the rules checked, not trusted (the test suite's setting, for
#: ``python -m tests.hostile.report`` and the fuzzers too): an escrow tree mutated after decode, a
#: body mark or an indexed detection that full validation or the full detector scan contradicts
#: raises ``basecache.RuleBroken``, a crash here
basecache.CHECK = True


@dataclass
class Outcome:
    case: Case
    detected: str | None = None
    status: str = "decoded"  # decoded | rejected | crash
    error: str | None = None
    crashes: list[str] = field(default_factory=list)
    forced: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    peak_bytes: int = 0


def _classify(exc: BaseException) -> str | None:
    """None for an acceptable typed error, else a description of the crash."""
    if isinstance(exc, BunzaiError):
        if exc.internal:
            return f"internal {type(exc).__name__}: {exc}"
        return None
    return f"{type(exc).__name__}: {exc}"


#: the categories whose decoded entities are also written to every other format of their kind (as
#: ``bunzai convert --to`` does): numbers that do not fit break writers, not readers
CROSS = frozenset({"bignum", "fuzz"})


def _cross(decoded: Decoded) -> list[str]:
    """Each entity written to every format of its kind: the crashes, as ``write <format>: ...``."""
    from bunzai_codecs import write

    crashes = []
    for e in decoded.entities:
        for codec in registry.for_kind(e.kind):
            try:
                write(e, codec.id, linked=decoded.entities)
            except Exception as exc:
                crash = _classify(exc)
                if crash:
                    crashes.append(f"write {codec.id}: {crash}")
    return crashes


def run(case: Case, *, measure: bool = False) -> Outcome:
    out = Outcome(case)
    # detectors are wrapped so a crash scores 0 and detection goes on; it is still a bug
    Codec.detect_errors.clear()
    if measure:
        tracemalloc.start()
    t0 = time.perf_counter()
    try:
        decoded = read(case.data, case.filename, uri=f"hostile://{case.category}/{case.filename}")
        out.detected = decoded.entities[0].source.format if decoded.entities[0].source else None
        # a decoded entity must also survive the way out: vaud-json (the canonical line) and its own format
        from bunzai_codecs import write

        for e in decoded.entities:
            write(e, "vaud-json", linked=decoded.entities)
            fmt = e.source.format if e.source else None
            if fmt and fmt in registry.CODECS and registry.get(fmt).kind == e.kind:
                write(e, fmt, linked=decoded.entities)
    except Exception as exc:
        crash = _classify(exc)
        if crash:
            out.crashes.append(f"read: {crash}")
        else:
            out.status = "rejected"
            out.error = type(exc).__name__
    else:
        if case.category in CROSS:
            out.crashes += _cross(decoded)
    for codec in registry.all_codecs():
        try:
            codec.decode(Sniff(case.data, case.filename))
            out.forced["decoded"] += 1
        except Exception as exc:
            crash = _classify(exc)
            if crash:
                out.crashes.append(f"{codec.id}: {crash}")
            else:
                out.forced["rejected"] += 1
    out.crashes += [f"detect {cid}: {err}" for cid, err in Codec.detect_errors]
    Codec.detect_errors.clear()
    out.seconds = time.perf_counter() - t0
    if measure:
        out.peak_bytes = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    if out.crashes:
        out.status = "crash"
    return out
