"""The manifest: the run's commit record (``manifest.json``, written last by ``commit.Commit``), and
the one reader of it (``read_manifest``) that ``--since`` and ``bunzai export`` share.

Its numbers are counted from the records themselves (pipeline/normalize/counts.py), combined per key, so
the manifest is exact on every runner.
"""

from __future__ import annotations

import datetime as dt
import platform
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import apache_beam as beam
import orjson

import bunzai_codecs
from bunzai_codecs.core import registry
from pipeline.dataset.blobs import LAYOUT as BLOB_LAYOUT
from pipeline.dataset.blobs import blob_counts
from pipeline.dataset.shards import ShardInfo
from pipeline.normalize.balance import SAMPLE
from pipeline.normalize.counts import REJECT_EXAMPLES
from pipeline.normalize.elements import STAGES
from pipeline.normalize.fidelity_report import FIDELITY_REPORT
from pipeline.runtime.storage import Storage

MANIFEST = "manifest.json"
#: the manifest's ``manifestVersion``: bumped when a reader of an older one would misread it
MANIFEST_VERSION = 1


class ManifestError(ValueError):
    """A manifest that cannot be read, or is not a (committed) bunzai normalize manifest; one line."""


def read_manifest(storage: Storage, url: str, *, committed: bool = False) -> dict[str, Any]:
    """The manifest at ``url`` (a ``manifest.json`` URL): ``FileNotFoundError`` when there is none
    (each caller says what that means), ``ManifestError`` when it cannot be read or is not a
    manifest of this version (``committed``: or of a run that was not committed)."""
    try:
        fs, path = storage.fs(url)
        m = orjson.loads(fs.cat_file(path))
    except FileNotFoundError:
        raise
    except (OSError, orjson.JSONDecodeError, ValueError) as exc:
        raise ManifestError(f"cannot read {url}: {type(exc).__name__}: {exc}") from None
    if not isinstance(m, dict) or m.get("manifestVersion") != MANIFEST_VERSION:
        raise ManifestError(f"{url} is not a bunzai normalize manifest")
    if committed and not (m.get("commit") or {}).get("ok"):
        raise ManifestError(f"{url} is not the manifest of a committed bunzai normalize run")
    return m


def shard_paths(manifest: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """Dataset name -> its shards' paths (relative to the manifest's folder), as the manifest lists them."""
    listed = (manifest.get("outputs") or {}).get("shards") or {}
    return {ds: tuple(s["path"] for s in info) for ds, info in listed.items()}


def _nest(counts: dict[tuple[str, ...], int], head: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, n in counts.items():
        if key[0] != head:
            continue
        node = out
        for k in key[1:-1]:
            node = node.setdefault(k, {})
        node[key[-1]] = node.get(key[-1], 0) + n
    return _sorted(out)


def _sorted(d: Any) -> Any:
    return {k: _sorted(d[k]) for k in sorted(d)} if isinstance(d, dict) else d


def build_manifest(
    *,
    options: dict[str, Any],
    runner: str,
    started: str,
    finished: str,
    fingerprint: str,
    since: dict[str, Any] | None,
    counts: Iterable[tuple[tuple[str, ...], int]],
    patterns: Iterable[tuple[int, int]],
    shards: Iterable[ShardInfo],
    balance: Iterable[tuple[str, list[str]]],
    pruned: int,
    reject_examples: Iterable[tuple[tuple[str, str], list[tuple[str, str]]]] = (),
) -> dict[str, Any]:
    c: dict[tuple[str, ...], int] = defaultdict(int)
    for k, n in counts:
        c[tuple(k)] += n
    inputs = _nest(c, "inputs")
    listed = inputs.get("listed", 0)
    stats_stages = _nest(c, "stage")
    rejects = _nest(c, "rejects")
    stages: dict[str, dict[str, int]] = {}
    for st in STAGES:
        row = dict(stats_stages.get(st, {}))
        row["rejected"] = sum(rejects.get(st, {}).values())
        stages[st] = _sorted(row)
    stages["list"]["out"] = listed
    exports = _nest(c, "exports")
    # export: in = this run's attempts (staged + refused); out = files committed, carried ones included
    stages["export"]["in"] = c.get(("stage", "export", "in"), 0) + stages["export"]["rejected"]
    stages["export"]["out"] = sum(exports.values())
    fidelity = _nest(c, "fidelity")
    stages["roundtrip"]["rows"] = sum(sum(v.values()) for v in fidelity.values())
    fidelity_basis = _fidelity_basis(c)
    by_kind: dict[str, int] = defaultdict(int)
    by_format: dict[str, int] = defaultdict(int)
    for key, n in c.items():
        if key[0] == "entities":
            by_kind[key[1]] += n
            by_format[key[2]] += n
    bal_counts = _nest(c, "balance")
    samples = {k: sorted(v)[:SAMPLE] for k, v in balance}
    accounted = bal_counts.get("ok", 0)
    problems = {k: bal_counts.get(k, 0) for k in ("unaccounted", "unlisted")}
    listed_by_listing = accounted + problems["unaccounted"]
    shard_list: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in sorted(shards, key=lambda s: s.rel):
        shard_list[s.dataset].append(s.to_json())
    pats = dict(patterns)
    return {
        "manifestVersion": MANIFEST_VERSION,
        "bunzai": {
            "version": bunzai_codecs.__version__,
            "codecFingerprint": fingerprint,
            "codecs": sorted(registry.CODECS),
        },
        "beam": beam.__version__,
        "python": platform.python_version(),
        "runner": runner,
        "started": started,
        "finished": finished,
        "options": options,
        "since": since,
        "inputs": {
            "patterns": [{"input": u, "matched": pats.get(i, 0)} for i, u in enumerate(options["inputs"])],
            "listed": listed,
            "new": inputs.get("new", 0),
            "changed": inputs.get("changed", 0),
            "unchanged": inputs.get("unchanged", 0),
            "deleted": inputs.get("deleted", 0),
            "withEntities": c.get(("outcome", "entities"), 0),
            "rejectedWhole": c.get(("outcome", "rejected"), 0),
            "formats": _nest(c, "formats"),
        },
        "balance": {
            "rule": "every listed input is the source of a canonical entity or of a reject (and has one inventory row); no output names an input that was not listed",
            "listed": listed_by_listing,
            "inventoryRows": listed,
            "accounted": accounted,
            "unaccounted": problems["unaccounted"],
            "unlisted": problems["unlisted"],
            "ok": problems["unaccounted"] == 0 and problems["unlisted"] == 0 and listed_by_listing == listed,
            "examples": {k: v for k, v in sorted(samples.items()) if k != "ok"},
        },
        "counts": {
            "stages": stages,
            "entities": {
                "total": sum(by_kind.values()),
                "byKind": _sorted(dict(by_kind)),
                "byFormat": _sorted(dict(by_format)),
                "byKindFormat": _nest(c, "entities"),
            },
            "rejects": {
                "total": sum(sum(v.values()) for v in rejects.values()),
                "byStage": {k: sum(v.values()) for k, v in rejects.items()},
                "byStageError": rejects,
                "examples": _reject_examples(reject_examples),
            },
            "exports": {"total": sum(exports.values()), "byFormat": exports},
            "fidelity": fidelity,
            "fidelityBasis": fidelity_basis,
            "blobs": blob_counts(c),
        },
        "outputs": {
            "shards": {k: shard_list[k] for k in sorted(shard_list)},
            "exports": "exports/<format>/<entity-id><extension>",
            "blobs": BLOB_LAYOUT,
            # --fidelity off: no fidelity rows, shards or report
            "fidelityReport": list(FIDELITY_REPORT) if options.get("fidelity", "full") != "off" else [],
            "pruned": pruned,
        },
    }


def _fidelity_basis(c: dict[tuple[str, ...], int]) -> dict[str, Any]:
    """How the fidelity rows were obtained (``FidelityRow.basis``): observed, predicted from their
    pattern, observed because their pattern's sampled rows disagreed; and the sample's patterns
    (``--fidelity-sample``: learned, disagreeing, unpredictable). Empty with ``--fidelity off``."""
    basis = _nest(c, "fidelityBasis")
    if not basis:
        return {}
    out: dict[str, Any] = {k: basis.get(k, 0) for k in ("observed", "predicted", "disagreed")}
    patterns = _nest(c, "fidelityPatterns")
    if patterns:
        out["patterns"] = patterns
    return out


def _reject_examples(
    examples: Iterable[tuple[tuple[str, str], list[tuple[str, str]]]],
) -> dict[str, dict[str, list[dict[str, str]]]]:
    out: dict[str, dict[str, list[dict[str, str]]]] = {}
    for (stage, error), items in sorted(examples, key=lambda kv: tuple(kv[0])):
        out.setdefault(stage, {})[error] = [
            {"uri": u, "message": m} for u, m in sorted(items)[:REJECT_EXAMPLES]
        ]
    return out


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


__all__ = [
    "MANIFEST",
    "MANIFEST_VERSION",
    "ManifestError",
    "build_manifest",
    "now",
    "read_manifest",
    "shard_paths",
]
