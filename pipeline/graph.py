"""The normalize graph: every stage wired to its outputs.

    inputs -> List -> PairWithPrevious (dedupe by uri; --since) -> Spread -> ReadBytes
      -> Detect -> Decode -> Validate -> canonical/part-*.jsonl   (sorted shards)
                                      -> RoundTrip -> fidelity/rows-*.jsonl -> fidelity/report.{json,html}
                                         (--fidelity full: every check; native: no cross-format rows;
                                          off: no RoundTrip, no fidelity rows, shards or report)
                                      -> Export -> exports/<format>/<entity-id><ext>
                                      -> (RoundTrip, or IndexRows) -> index/part-*.parquet (sorted;
                                         --bigquery-table: loaded into BigQuery once committed)
      every stage's failures -> rejects/part-*.jsonl; one row per input -> inventory/part-*.jsonl
      an input rejected whole -> its fidelity ``decode`` row, made by the stage that rejected it
      every file above is staged (.bunzai-staging/<run>/out/) -> Commit: the verdict (listing
      complete, balanced), then only if ok: move into place, Prune (files of earlier runs),
      manifest.json (last: the run's commit record); see pipeline/commit.py

Big data (bytes, entities, lines) stays inside the fused read-to-write stage; only small records
(file refs, run notes, export candidates, counts) cross a shuffle, so the local runners, which hold
shuffled data in memory, stream an archive of any size. The local runners also materialise every
multi-input Flatten, so per-input streams (inventory rows, count pairs, fidelity rows) are written,
counted and folded producer by producer; only partial results are flattened.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import apache_beam as beam
import orjson

from pipeline.commit import STAGING, Commit
from pipeline.index import INDEX, CarryIndex, LoadBigQuery, WriteIndex, unchecked_records
from pipeline.io import Output
from pipeline.options import NormalizeConfig
from pipeline.report import (
    REJECT_EXAMPLES,
    Balance,
    CommitExports,
    WriteFidelityReport,
    export_counts,
    fidelity_counts,
    reject_counts,
    reject_example,
    row_counts,
)
from pipeline.shards import ShardSpec, WriteShards, line_of
from pipeline.since import (
    CANONICAL,
    FIDELITY,
    INVENTORY_DS,
    REJECTS_DS,
    CarryForward,
    Previous,
    carried_exports,
    codec_fingerprint,
    load_previous,
    previous_inventory,
    unchanged_row,
)
from pipeline.transforms import (
    REJECTED_WHOLE,
    Decode,
    Detect,
    Export,
    ListFiles,
    Pack,
    PairWithPrevious,
    ReadBytes,
    RoundTrip,
    SharedSizes,
    Spread,
    Validate,
    ValidInput,
    canonical_records,
    inventory_record,
    packed_uris,
    reject_record,
    rejected_record,
)

SPECS = {
    CANONICAL: ShardSpec("canonical"),
    FIDELITY: ShardSpec("fidelity", "rows"),
    REJECTS_DS: ShardSpec("rejects"),
    INVENTORY_DS: ShardSpec("inventory"),
}


@dataclass(frozen=True)
class Built:
    output: Output
    previous: Previous | None
    manifest: Any
    #: this run's staging folder, relative to the output (``.bunzai-staging/<run>``)
    staging: str = ""


def _entity_sources(v: ValidInput) -> set[str]:
    return {ve.entity.source.uri for ve in v.accepted if ve.entity.source is not None}


def build(p: beam.Pipeline, cfg: NormalizeConfig, *, runner: str, started: str) -> Built:
    fingerprint = codec_fingerprint()
    previous = load_previous(cfg, fingerprint)
    reuse = previous if previous is not None and previous.honoured else None
    output = Output(cfg.output, cfg.storage)
    staging = f"{STAGING}/{uuid.uuid4().hex}"
    shards = {
        ds: WriteShards(ds, spec, output, staging, target_bytes=cfg.shard_bytes) for ds, spec in SPECS.items()
    }  # --fidelity off: no fidelity shards

    # -- list, pair with the previous run, read ---------------------------------------------------
    listing = (
        p
        | "Inputs" >> beam.Create(list(range(len(cfg.inputs))))
        | "List" >> ListFiles(cfg.inputs, cfg.storage, cfg.output, cfg.max_file_bytes)
    )
    if reuse is not None:
        paired = listing.files | "PairWithPrevious" >> PairWithPrevious(
            previous_inventory(p, reuse, cfg.storage)
        )
    else:  # one input lists each file once: nothing to join unless there are several
        paired = listing.files | "PairWithPrevious" >> PairWithPrevious(join=len(cfg.inputs) > 1)
    # whether another listed file has the same size matters only to exports (see SharedSizes)
    shared_sizes = paired.pending | "SharedSizes" >> SharedSizes() if cfg.export else None
    packed = paired.pending | "Pack" >> Pack()
    read = (
        packed
        | "Spread" >> Spread()  # the listing of one input is one element: spread the reads
        | "ReadBytes"
        >> ReadBytes(
            cfg.inputs, cfg.storage, cfg.max_file_bytes, since=reuse is not None, shared_sizes=shared_sizes
        )
    )

    # -- the per-input chain (fused: the bytes and entities never leave it) -----------------------
    detected = read.files | "Detect" >> Detect()
    decoded = detected.detected | "Decode" >> Decode()
    validated = decoded.decoded | "Validate" >> Validate()
    valid = validated.valid
    canonical = valid | "CanonicalRecords" >> beam.FlatMap(canonical_records)
    fidelity_on = cfg.fidelity != "off"

    reject_streams = [
        listing.rejects,
        read.rejects,
        detected.rejects,
        decoded.rejects,
        validated.rejects,
    ]
    fresh_fidelity = None
    if fidelity_on:
        roundtrip = valid | "RoundTrip" >> RoundTrip(cross=cfg.fidelity == "full")
        reject_streams.append(roundtrip.rejects)
        index_in = [roundtrip[INDEX]]  # the entity index's rows (pipeline/index.py)
        # the fidelity ``decode`` row of each input this run rejected whole (decoded ones get theirs
        # from RoundTrip), made where it stopped: the audit's "a file that decoded now rejects"
        # needs both. Made in the fused chain: no join over every input's inventory row.
        whole = (
            read[REJECTED_WHOLE],
            detected[REJECTED_WHOLE],
            decoded[REJECTED_WHOLE],
            validated[REJECTED_WHOLE],
        )
        rejected_fidelity = [
            pc | f"RejectedRow{i}" >> beam.FlatMap(rejected_record) for i, pc in enumerate(whole)
        ]
        fresh_fidelity = [roundtrip.rows, *rejected_fidelity]
    else:  # no RoundTrip: the index rows without a native status
        index_in = [valid | "IndexRows" >> beam.FlatMap(unchecked_records)]
    fresh_candidates = None
    direct_exports = None
    if cfg.export:
        exported = valid | "Export" >> Export(cfg.export, output, staging)
        reject_streams.append(exported.rejects)
        fresh_candidates = exported.candidates
        direct_exports = exported.written

    unchanged_rows = read.unchanged | "UnchangedRows" >> beam.Map(unchanged_row)
    # every per-input stream is consumed producer by producer (the local runners materialise every
    # multi-input Flatten in memory): only small partial results (run notes, partial counts,
    # partial fidelity reports) are flattened
    rows = (read.inventory, detected.inventory, decoded.inventory, validated.inventory, unchanged_rows)
    fresh_rejects = tuple(reject_streams) | "FreshRejects" >> beam.Flatten()

    # -- carried forward from the previous run (--since) -----------------------------------------
    canonical_in = [canonical]
    fidelity_in = list(fresh_fidelity or ())
    reject_dicts = [fresh_rejects]
    accounted_extra = []
    fidelity_dicts = [
        pc | f"ParseRows{i}" >> beam.Map(lambda rec: orjson.loads(line_of(rec)))
        for i, pc in enumerate(fidelity_in)
    ]
    candidates = [fresh_candidates] if fresh_candidates is not None else []
    if reuse is not None:
        skip = (read.refreshed, paired.deleted) | "NotCarried" >> beam.Flatten()
        carried = p | "CarryForward" >> CarryForward(reuse, cfg.storage, skip)
        canonical_in.append(carried["canonical"])
        index_in.append(p | "CarryIndex" >> CarryIndex(reuse.urls(INDEX), cfg.storage, skip))
        reject_dicts.append(carried["reject_dicts"])
        accounted_extra.append(carried["accounted"])
        if fidelity_on:  # the same --fidelity as that run, or it would not be reused
            fidelity_in.append(carried["fidelity"])
            fidelity_dicts.append(carried["rows"])
        if cfg.export:
            candidates.append(
                read.unchanged | "CarriedExports" >> beam.FlatMap(carried_exports, reuse.root, cfg.export)
            )

    # -- the sorted shards ------------------------------------------------------------------------
    reject_records = [fresh_rejects | "RejectRecords" >> beam.Map(reject_record)]
    if reuse is not None:
        reject_records.append(carried["rejects"])
    inventory_records = [
        pc | f"InventoryRecords{i}" >> beam.Map(inventory_record) for i, pc in enumerate(rows)
    ]
    written_shards = [
        tuple(canonical_in) | "WriteCanonical" >> shards[CANONICAL],
        tuple(reject_records) | "WriteRejects" >> shards[REJECTS_DS],
        tuple(inventory_records) | "WriteInventory" >> shards[INVENTORY_DS],
    ]
    if fidelity_on:
        written_shards.append(tuple(fidelity_in) | "WriteFidelity" >> shards[FIDELITY])
    index_files = tuple(index_in) | "WriteIndex" >> WriteIndex(output, staging, target_bytes=cfg.shard_bytes)
    written_shards.append(index_files)
    shard_infos = tuple(written_shards) | "AllShards" >> beam.Flatten()
    written = [shard_infos | "ShardPaths" >> beam.Map(lambda s: s.rel)]  # staged files
    kept = [p | "NoneKept" >> beam.Create([])]  # files the previous run left in place

    all_rejects = tuple(reject_dicts) | "AllRejects" >> beam.Flatten()
    count_streams = [
        *(pc | f"CountRows{i}" >> beam.FlatMap(row_counts) for i, pc in enumerate(rows)),
        all_rejects | "CountRejects" >> beam.FlatMap(reject_counts),
        paired.deleted | "CountDeleted" >> beam.Map(lambda _: (("inputs", "deleted"), 1)),
    ]
    if fidelity_on:
        written.append(
            tuple(fidelity_dicts) | "FidelityReport" >> WriteFidelityReport(output, cfg.inputs, staging)
        )
        count_streams += [
            pc | f"CountFidelity{i}" >> beam.FlatMap(fidelity_counts) for i, pc in enumerate(fidelity_dicts)
        ]
    if candidates:
        settled = (
            tuple(candidates)
            | "AllCandidates" >> beam.Flatten()
            | "CommitExports" >> CommitExports(output, staging)
        )
        committed = settled.staged
        if direct_exports is not None:
            committed = (committed, direct_exports) | "AllExports" >> beam.Flatten()
        written.append(committed)
        kept.append(settled.kept)
        count_streams += [
            committed | "CountExports" >> beam.FlatMap(export_counts),
            settled.kept | "CountKept" >> beam.FlatMap(export_counts),
        ]
    if fresh_candidates is not None and direct_exports is not None:
        attempts = (fresh_candidates, direct_exports) | "ExportAttempts" >> beam.Flatten()
        count_streams.append(attempts | "CountAttempts" >> beam.Map(lambda _: (("stage", "export", "in"), 1)))

    # -- balance: every listed input is an entity's source or a reject -------------------------
    balance = packed | "Balance" >> Balance(
        [
            valid | "EntitySources" >> beam.FlatMap(_entity_sources),
            *(
                pc | f"InputRejects{i}" >> beam.FlatMap(lambda r: [r["uri"]] if r["stage"] != "list" else [])
                for i, pc in enumerate(reject_dicts)
            ),
            *accounted_extra,
        ],
        uris_of=packed_uris,
    )
    count_streams.append(balance["counts"])

    # -- finish: the verdict, then (only when complete and balanced) the commit ------------------
    # summed per stream first (lifted: the partial sums are made fused with each producer), so
    # the Flatten below holds a few partial sums per key instead of one pair per input and count
    partial_counts = [pc | f"PartialSum{i}" >> beam.CombinePerKey(sum) for i, pc in enumerate(count_streams)]
    counts = tuple(partial_counts) | "AllCounts" >> beam.Flatten() | "Sum" >> beam.CombinePerKey(sum)
    examples = (
        all_rejects
        | "RejectExamples" >> beam.Map(reject_example)
        | "SomeRejects" >> beam.combiners.Top.SmallestPerKey(REJECT_EXAMPLES)
    )
    header = {
        "options": cfg.public(),
        "runner": runner,
        "started": started,
        "fingerprint": fingerprint,
        "since": previous.public() if previous is not None else None,
    }
    manifest = {
        "counts": counts,
        "patterns": listing.patterns,
        "shards": shard_infos,
        "balance": balance["examples"],
        "reject_examples": examples,
        "list_rejects": listing.rejects,
        "staged": tuple(written) | "Written" >> beam.Flatten(),
        "kept": tuple(kept) | "AllKept" >> beam.Flatten(),
    } | "Commit" >> Commit(output, staging, header, cfg.inputs, cfg.allow_empty)
    if cfg.bigquery_table:  # the committed index, loaded into BigQuery once the run is committed
        index_files | "BigQuery" >> LoadBigQuery(cfg.bigquery_table, output, manifest)
    return Built(output, previous, manifest, staging)


__all__ = ["SPECS", "STAGING", "Built", "build"]
