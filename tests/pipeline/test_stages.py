"""Each stage alone, on FnApiRunner, with ``TestPipeline`` + ``assert_that``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import apache_beam as beam
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.testing.test_pipeline import TestPipeline as BeamTestPipeline
from apache_beam.testing.util import assert_that, equal_to

from bunzai_codecs.core import registry
from bunzai_codecs.core.sniff import Sniff
from pipeline.dataset.datasets import canonical_lines
from pipeline.normalize.balance import Balance, DigestSet
from pipeline.normalize.decode import Decode, Detect
from pipeline.normalize.elements import InputFile, Pending
from pipeline.normalize.listing import TOTALS, ListFiles, Pack, SharedSizes, Spread
from pipeline.normalize.packed import InputUnits, packed_uris, unit_of, unpack_pending, uri_digest
from pipeline.normalize.pairing import PairWithPrevious
from pipeline.normalize.read import ReadBytes
from pipeline.normalize.roundtrip import RoundTrip
from pipeline.normalize.validate import Validate
from pipeline.runtime.storage import FileRef, Storage

from .conftest import write_inputs

#: cross-format rows of a card and its lorebook: one per other format of each kind that writes
#: another format's entity (not a read-only one)
CROSS = sum(
    len([c for c in registry.for_kind(k) if c.id != "vaud-json" and not c.read_only])  # type: ignore[arg-type]
    for k in ("character", "lorebook")
)

pytestmark = pytest.mark.slow  # runs the pipeline


def pipeline() -> BeamTestPipeline:
    return BeamTestPipeline(options=PipelineOptions(["--runner=FnApiRunner"]))


def test_list_files_streams_refs_and_rejects_a_missing_input(tmp_path: Path) -> None:
    write_inputs(tmp_path)
    inputs = (str(tmp_path / "cards"), str(tmp_path / "books/*.json"), str(tmp_path / "nope"))
    with pipeline() as p:
        out = p | beam.Create([0, 1, 2]) | ListFiles(inputs, Storage())
        assert_that(
            out.files | beam.Map(lambda r: (r.root, r.uri)),
            equal_to(
                [
                    (0, f"{tmp_path}/cards/copy-of-mira.vaud.json"),
                    (0, f"{tmp_path}/cards/mira.vaud.json"),
                    (0, f"{tmp_path}/cards/nested/rules.vaud.json"),
                    (1, f"{tmp_path}/books/dupes.vaud.json"),
                    (1, f"{tmp_path}/books/escape.vaud.json"),
                    (1, f"{tmp_path}/books/quiet.vaud.json"),
                ]
            ),
            label="files",
        )
        assert_that(out.patterns, equal_to([(0, 3), (1, 3), (2, 0)]), label="patterns")
        assert_that(
            out.rejects | beam.Map(lambda r: (r["uri"], r["stage"], r["error"])),
            equal_to([(str(tmp_path / "nope"), "list", "FileNotFoundError")]),
            label="rejects",
        )


def _ref(uri: str, size: int | None = 3, etag: str | None = None, root: int = 0) -> FileRef:
    return FileRef(uri, root, uri, size, etag)


def test_pair_with_previous_dedupes_and_finds_deleted_inputs() -> None:
    with pipeline() as p:
        refs = p | "Refs" >> beam.Create([_ref("a", root=1), _ref("a", root=0), _ref("b")])
        prev = p | "Prev" >> beam.Create([{"uri": "a", "size": 3}, {"uri": "gone", "size": 1}])
        out = refs | PairWithPrevious(prev)
        assert_that(
            out.pending | beam.Map(lambda pd: (pd.ref.uri, pd.ref.root, pd.prev is not None)),
            equal_to([("a", 0, True), ("b", 0, False)]),
            label="pending",
        )
        assert_that(out.deleted, equal_to(["gone"]), label="deleted")


def test_pair_with_previous_joins_across_many_cells_and_batches() -> None:
    # more rows than one packed batch holds, spread over the join's hash cells: every listed uri
    # comes out once with its own previous row, every uri only the previous run had is deleted
    from pipeline.normalize.pairing import JOIN_PACK

    n = JOIN_PACK * 5
    listed = [_ref(f"u{i}", size=i) for i in range(n)] + [
        _ref(f"u{i}", size=i, root=1) for i in range(0, n, 7)
    ]
    previous = [{"uri": f"u{i}", "size": i, "etag": f"e{i}"} for i in range(n // 2, n + 40)]
    with pipeline() as p:
        out = p | "Refs" >> beam.Create(listed) | PairWithPrevious(p | "Prev" >> beam.Create(previous))
        assert_that(
            out.pending
            | beam.Map(lambda pd: (pd.ref.uri, pd.ref.root, pd.ref.size, pd.prev and pd.prev["etag"])),
            equal_to([(f"u{i}", 0, i, f"e{i}" if i >= n // 2 else None) for i in range(n)]),
            label="pending",
        )
        assert_that(out.deleted, equal_to([f"u{i}" for i in range(n, n + 40)]), label="deleted")


def test_read_bytes_bounds_reads_and_skips_unchanged_by_etag(tmp_path: Path) -> None:
    (tmp_path / "small.json").write_bytes(b"{}")
    (tmp_path / "big.json").write_bytes(b"{" + b" " * 100 + b"}")
    small, big = str(tmp_path / "small.json"), str(tmp_path / "big.json")
    pending = [
        Pending(_ref(small, 2)),
        Pending(_ref(big, 102)),
        Pending(_ref(small, 2, etag="e1"), {"uri": small, "size": 2, "etag": "e1"}),  # unchanged
        Pending(_ref(small, 2, etag="e2"), {"uri": small, "size": 2, "etag": "e1"}),  # changed
        Pending(_ref(str(tmp_path / "vanished.json"), 2)),
    ]
    with pipeline() as p:
        out = p | beam.Create(pending) | ReadBytes((str(tmp_path),), Storage(), max_bytes=50, since=True)
        assert_that(
            out.files | beam.Map(lambda f: (f.sniff.data, f.status)),
            equal_to([(b"{}", "new"), (b"{}", "changed")]),
            label="files",
        )
        assert_that(out.unchanged | beam.Map(lambda pd: pd.ref.etag), equal_to(["e1"]), label="unchanged")
        assert_that(out.refreshed, equal_to([small]), label="refreshed")
        assert_that(
            out.rejects | beam.Map(lambda r: (r["uri"].rsplit("/", 1)[1], r["stage"], r["error"])),
            equal_to([("big.json", "read", "LimitExceeded"), ("vanished.json", "read", "FileNotFoundError")]),
            label="rejects",
        )
        assert_that(
            out.inventory | beam.Map(lambda r: r["rejected"]), equal_to(["read", "read"]), label="inventory"
        )


def _file(tmp: Path, rel: str) -> InputFile:
    data = (tmp / rel).read_bytes()
    ref = _ref(rel, len(data))
    return InputFile(ref, Sniff(data, rel.rsplit("/", 1)[1], uri=rel), "new")


def test_detect_decode_validate_roundtrip_chain(tmp_path: Path) -> None:
    write_inputs(tmp_path)
    files = [
        _file(tmp_path, rel)
        for rel in (
            "cards/mira.vaud.json",
            "books/dupes.vaud.json",
            "broken/v2.vaud.json",
            "broken/noise.bin",
        )
    ]
    with pipeline() as p:
        detected = p | beam.Create(files) | Detect()
        decoded = detected.detected | Decode()
        valid = decoded.decoded | Validate()
        rows = valid.valid | RoundTrip()

        def stages(label: str, pc: Any, expected: list[Any]) -> None:
            assert_that(
                pc | f"{label}Key" >> beam.Map(lambda r: (r["uri"], r["error"])),
                equal_to(expected),
                label=label,
            )

        stages("detect", detected.rejects, [("broken/noise.bin", "NotRecognized")])
        stages("decode", decoded.rejects, [("broken/v2.vaud.json", "Malformed")])
        stages("validate", valid.rejects, [("books/dupes.vaud.json", "ValidationFailed")])
        assert_that(
            valid.valid
            | "Accepted"
            >> beam.FlatMap(lambda v: [(v.uri, ve.entity.kind, ve.entity.source.uri) for ve in v.accepted]),
            equal_to(
                [
                    ("cards/mira.vaud.json", "character", "cards/mira.vaud.json"),
                    ("cards/mira.vaud.json", "lorebook", "cards/mira.vaud.json"),
                ]
            ),
            label="valid",
        )
        assert_that(
            valid.valid | beam.FlatMap(canonical_lines) | "CountLines" >> beam.combiners.Count.Globally(),
            equal_to([2]),
            label="canonical",
        )
        assert_that(
            rows.rows
            | "Checks" >> beam.Map(lambda row: row["check"])
            | "CountChecks" >> beam.combiners.Count.PerElement(),
            equal_to([("decode", 1), ("native", 1), ("stability", 2), ("cross", CROSS)]),
            label="rows",
        )  # mira.vaud.json: a card and its lorebook, each to every other format of its kind
        assert_that(rows.rejects, equal_to([]), label="roundtrip-rejects")
        assert_that(
            (detected.inventory, decoded.inventory, valid.inventory)
            | beam.Flatten()
            | "Rows" >> beam.Map(lambda r: (r["uri"], r["rejected"])),
            equal_to(
                [
                    ("broken/noise.bin", "detect"),
                    ("broken/v2.vaud.json", "decode"),
                    ("books/dupes.vaud.json", "validate"),
                    ("cards/mira.vaud.json", None),
                ]
            ),
            label="inventory",
        )


def test_a_crashing_encoder_is_a_row_and_a_reject_not_a_failed_job(tmp_path: Path) -> None:
    from bunzai_codecs.core import registry
    from bunzai_codecs.core.codec import Codec, EmitContext
    from bunzai_codecs.core.entity import CanonicalEntity, Decoded
    from pipeline.export.files import Export
    from pipeline.runtime.storage import Output

    class Buggy(Codec):
        id = "buggy"
        kind = "character"

        def detect(self, s: Sniff) -> float:
            return 1.0 if s.json_object and "buggy" in s.json_object else 0.0

        def decode(self, s: Sniff) -> Decoded:
            return Decoded([self.entity(s, {"identity": {"name": "B"}}, raw=s.json)])

        def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
            raise KeyError("oops")

    data = b'{"buggy": 1}'
    f = InputFile(_ref("b.json", len(data)), Sniff(data, "b.json", uri="b.json"), "new")
    with registry.using({**registry.CODECS, "buggy": Buggy}), pipeline() as p:
        valid = p | beam.Create([f]) | Detect()
        valid = valid.detected | Decode()
        valid = valid.decoded | Validate()
        rows = valid.valid | RoundTrip()
        exported = valid.valid | Export(("buggy",), Output(str(tmp_path), Storage()), "staging")
        others = len([c for c in registry.for_kind("character") if c.id not in ("vaud-json", "buggy")])
        assert_that(
            rows.rows
            | "Own" >> beam.Filter(lambda r: r["check"] != "cross")
            | "Status" >> beam.Map(lambda r: (r["check"], r["status"], (r["error"] or {}).get("internal"))),
            equal_to([("decode", "decoded", None), ("native", "error", True), ("stability", "error", True)]),
            label="rows",
        )
        assert_that(
            rows.rows
            | "OnlyCross" >> beam.Filter(lambda r: r["check"] == "cross")
            | "CrossCount" >> beam.combiners.Count.Globally(),
            equal_to([others]),  # the other formats read what buggy decoded
            label="cross",
        )
        assert_that(
            rows.rejects | "RT" >> beam.Map(lambda r: (r["stage"], r["error"])),
            equal_to([("roundtrip", "InternalError")]),
            label="rt",
        )
        assert_that(
            exported.rejects | "EX" >> beam.Map(lambda r: (r["stage"], r["error"])),
            equal_to([("export", "InternalError")]),
            label="ex",
        )


def test_pair_without_a_join_makes_one_pending_per_ref() -> None:
    with pipeline() as p:
        refs = p | "Refs" >> beam.Create([_ref("a"), _ref("b", size=None)])
        out = refs | PairWithPrevious(join=False)
        assert_that(
            out.pending | beam.Map(lambda pd: (pd.ref.uri, pd.ref.size, pd.prev)),
            equal_to([("a", 3, None), ("b", None, None)]),
            label="pending",
        )
        assert out.deleted is None  # nothing joined: no previous run to have any


def test_spread_passes_every_pending_through_once_unchanged() -> None:
    pending = [
        Pending(_ref(f"s3://bucket/{i}.json", size=i, etag=f"e{i}" if i % 2 else None, root=i % 3))
        for i in range(300)
    ]
    pending.append(
        Pending(_ref("zip://a.png::/tmp/x.zip", size=None), {"uri": "zip://a.png::/tmp/x.zip", "n": [1]})
    )
    pending.append(Pending(_ref("ünïcode ✓.json"), None, shared=False))
    listed = sum(pd.ref.size if pd.ref.size is not None else 64 << 10 for pd in pending)
    units = InputUnits(shard_bytes=100)  # a unit per ~100 listed bytes: 300 sizes of 0-299 bytes
    with pipeline() as p:
        packed = p | beam.Create(pending) | Pack()
        assert_that(
            packed.batches | "Sizes" >> beam.Map(lambda kv: len(packed_uris(kv))) | beam.CombineGlobally(sum),
            equal_to([len(pending)]),
            label="packed",
        )
        assert_that(
            packed[TOTALS]
            | "Totals" >> beam.CombineGlobally(lambda ts: tuple(map(sum, zip(*ts, strict=True)))),
            equal_to([(len(pending), listed)]),
            label="totals",
        )
        assert_that(packed.batches | Spread(units, packed[TOTALS]), equal_to(pending), label="spread")
        # one element of the shuffle per unit: every input of a unit, and only those
        count = units.count([(len(pending), listed)])
        grouped = (
            packed.batches
            | "ByUnit" >> Spread(units, packed[TOTALS]).by_unit()
            | "Group" >> beam.GroupByKey()
            | "Units"
            >> beam.Map(lambda kv: (kv[0], sorted(p.ref.uri for b in kv[1] for p in unpack_pending(b))))
        )
        want = {}
        for pd in pending:
            want.setdefault(unit_of(pd.ref.uri, count), []).append(pd.ref.uri)
        assert count > 100 and len(want) > 100
        assert_that(grouped, equal_to([(u, sorted(us)) for u, us in want.items()]), label="units")


def test_shared_sizes_decide_which_reads_are_shared(tmp_path: Path) -> None:
    for name, data in (("a.json", b"{}"), ("b.json", b"[]"), ("c.json", b"{ }")):
        (tmp_path / name).write_bytes(data)
    pending = [
        Pending(_ref(str(tmp_path / n), size)) for n, size in (("a.json", 2), ("b.json", 2), ("c.json", 3))
    ]
    pending.append(Pending(_ref(str(tmp_path / "c.json"), None)))  # a store that gives no size
    with pipeline() as p:
        pcoll = p | beam.Create(pending)
        sizes = pcoll | SharedSizes()
        assert_that(sizes, equal_to([(2, None)]), label="sizes")
        out = pcoll | ReadBytes((str(tmp_path),), Storage(), max_bytes=50, shared_sizes=sizes)
        assert_that(
            out.files | beam.Map(lambda f: (f.ref.path.rsplit("/", 1)[1], f.ref.size, f.shared)),
            equal_to(
                [("a.json", 2, True), ("b.json", 2, True), ("c.json", 3, False), ("c.json", None, True)]
            ),
            label="files",
        )


def test_balance_counts_outcomes_and_finds_the_uris_of_problems() -> None:
    with pipeline() as p:
        listed = p | "Listed" >> beam.Create(["a", "b", "c", "d"])
        entities = p | "Entities" >> beam.Create(["a", "a", "b", "z"])  # z: an output nobody listed
        rejects = p | "Rejects" >> beam.Create(["b", "d"])
        out = listed | Balance([entities, rejects])
        assert_that(
            out["counts"] | beam.CombinePerKey(sum),
            equal_to([(("balance", "ok"), 3), (("balance", "unaccounted"), 1), (("balance", "unlisted"), 1)]),
            label="counts",
        )
        assert_that(
            out["examples"], equal_to([("unaccounted", ["c"]), ("unlisted", ["z"])]), label="examples"
        )


def test_balance_reads_listed_uris_from_packed_batches(tmp_path: Path) -> None:
    pending = [Pending(_ref(f"u{i}")) for i in range(150)]
    with pipeline() as p:
        packed = p | "Listed" >> beam.Create(pending) | Pack()
        accounted = p | "Accounted" >> beam.Create([f"u{i}" for i in range(1, 150)])
        out = packed.batches | Balance([accounted], uris_of=packed_uris)
        assert_that(
            out["counts"] | beam.CombinePerKey(sum),
            equal_to([(("balance", "ok"), 149), (("balance", "unaccounted"), 1)]),
            label="counts",
        )
        assert_that(out["examples"], equal_to([("unaccounted", ["u0"])]), label="examples")


def test_balance_of_a_sound_run_has_only_ok_and_no_examples() -> None:
    uris = [f"file:///archive/{i:05d}.json" for i in range(2000)]
    with pipeline() as p:
        listed = p | "Listed" >> beam.Create(uris)
        out = listed | Balance([p | "Accounted" >> beam.Create(uris[::-1] + uris[:10])])
        assert_that(
            out["counts"] | beam.CombinePerKey(sum), equal_to([(("balance", "ok"), 2000)]), label="counts"
        )
        assert_that(out["examples"], equal_to([]), label="examples")


def test_digest_set_merges_digests_and_partial_sets() -> None:
    fn = DigestSet()
    acc = fn.add_input(fn.add_input(fn.create_accumulator(), 1), {2, 3})
    assert fn.extract_output(fn.merge_accumulators([acc, {3, 4}, set()])) == {1, 2, 3, 4}
    assert fn.merge_accumulators([]) == set()
    assert uri_digest("a") == uri_digest("a") != uri_digest("b")
    assert 0 <= uri_digest("a") < 1 << 128
