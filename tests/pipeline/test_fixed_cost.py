"""pipeline/runtime/fixed_cost.py: its two memos answer what Beam's own functions answer."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import apache_beam as beam
from apache_beam.options.pipeline_options import (
    PipelineOptions,
    StandardOptions,
    TypeOptions,
    WorkerOptions,
)
from apache_beam.transforms import userstate
from apache_beam.transforms.userstate import BagStateSpec, TimerSpec

import pipeline.runtime.fixed_cost as fixed_cost

from .conftest import PINNED
from .graphs import applied_transforms, build_graph, full_argv


def test_installed() -> None:
    assert PipelineOptions.view_as is fixed_cost.view_as
    assert userstate.get_dofn_specs is fixed_cost.get_dofn_specs
    fixed_cost.install()  # idempotent: Beam's own functions stay what the memos call
    assert fixed_cost._view_as is not fixed_cost.view_as
    assert fixed_cost._get_dofn_specs is not fixed_cost.get_dofn_specs


def test_a_view_is_made_once_per_object_and_class_and_reads_the_shared_options() -> None:
    options = PipelineOptions(["--runner=FnApiRunner", "--num_workers=3"])
    view = options.view_as(TypeOptions)
    assert options.view_as(TypeOptions) is view
    assert options.view_as(StandardOptions).runner == "FnApiRunner"
    assert options.view_as(WorkerOptions).num_workers == 3
    # a write through one view is what every view, and a view Beam makes afresh, reads
    options.view_as(StandardOptions).runner = "DirectRunner"
    assert options.view_as(StandardOptions).runner == "DirectRunner"
    assert fixed_cost._view_as(options, StandardOptions).runner == "DirectRunner"
    view.pipeline_type_check = False
    assert fixed_cost._view_as(options, TypeOptions).pipeline_type_check is False
    # another object (Beam's Pipeline deep-copies the options it is given) has views of its own
    other = copy.deepcopy(options)
    assert other.view_as(TypeOptions) is not view
    other.view_as(StandardOptions).runner = "FnApiRunner"
    assert options.view_as(StandardOptions).runner == "DirectRunner"


class _Plain(beam.DoFn):
    def process(self, element: int) -> Iterator[int]:
        yield element


SEEN = BagStateSpec("seen", beam.coders.VarIntCoder())
FLUSH = TimerSpec("flush", beam.TimeDomain.WATERMARK)
SEEN_PARAM = beam.DoFn.StateParam(SEEN)
FLUSH_PARAM = beam.DoFn.TimerParam(FLUSH)


class _Stateful(beam.DoFn):
    def process(
        self, element: tuple[str, int], seen: Any = SEEN_PARAM, flush: Any = FLUSH_PARAM
    ) -> Iterator[int]:
        yield element[1]

    @userstate.on_timer(FLUSH)
    def flush(self) -> Iterator[int]:
        yield 0


def test_dofn_specs_are_beams_answer() -> None:
    plain, stateful = _Plain(), _Stateful()
    assert fixed_cost.get_dofn_specs(plain) == (set(), set())
    assert userstate.is_stateful_dofn(stateful) and not userstate.is_stateful_dofn(plain)
    assert userstate.get_dofn_specs(stateful) == ({SEEN}, {FLUSH})
    assert userstate.get_dofn_specs(stateful) is userstate.get_dofn_specs(stateful)  # kept
    assert userstate.get_dofn_specs(_Stateful()) == fixed_cost._get_dofn_specs(_Stateful())


class _Holder:
    def stateful(self, element: int, seen: Any = SEEN_PARAM) -> list[int]:
        return [element]

    def plain(self, element: int) -> list[int]:
        return [element]


def test_a_method_bound_on_the_dofn_is_part_of_the_answer() -> None:
    """``beam.Map(obj.method)``: the DoFn's class is Beam's wrapper for every callable; the method
    it holds decides."""
    from apache_beam.transforms.core import CallableWrapperDoFn

    holder = _Holder()
    stateful, plain = CallableWrapperDoFn(holder.stateful), CallableWrapperDoFn(holder.plain)
    assert userstate.get_dofn_specs(stateful) == ({SEEN}, set())
    assert userstate.get_dofn_specs(plain) == (set(), set())
    assert userstate.get_dofn_specs(CallableWrapperDoFn(lambda x: [x])) == (set(), set())
    assert userstate.get_dofn_specs(CallableWrapperDoFn(_Holder().stateful)) == ({SEEN}, set())


def test_every_dofn_of_the_normalize_graph_gets_beams_answer() -> None:
    p = build_graph([*PINNED, *full_argv()])
    fns = [n.transform.fn for n in applied_transforms(p) if isinstance(n.transform, beam.ParDo)]
    assert len(fns) > 100
    for fn in fns:
        assert fixed_cost.get_dofn_specs(fn) == fixed_cost._get_dofn_specs(fn), fn
