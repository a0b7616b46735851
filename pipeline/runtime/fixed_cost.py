"""Two memos that cut Beam's fixed cost per run, which a small nightly run (and every pipeline test)
pays in full: one normalize run over ten small files took 6.4 s of CPU, 3.3 s of it building the
graph, without them and 2.7 s (0.9 s) with them
(docs/perf-notes/2026-12-02-fixed-cost-and-test-suite.md). Neither changes what Beam decides, so
the graph, its stages and every output byte stay the same (tests/pipeline/test_goldens.py;
tests/pipeline/test_fixed_cost.py checks both memos against Beam's own answers, every DoFn of the
full graph included).

- ``PipelineOptions.view_as(cls)`` builds a fresh argparse parser of ``cls``'s options and parses
  the flags again, every call; ``Pipeline.apply`` and the type checks call it ~2,650 times per
  build (mostly for ``TypeOptions``). A view holds no state of its own: every view reads and writes
  the one ``_all_options`` dict of the object it was made from, and the flags it parses do not
  change. So each object's view of a class is made once and handed out again.
- ``userstate.get_dofn_specs(dofn)`` walks every method of a DoFn and takes ``inspect.signature``
  of each, to find state and timer parameters; Beam asks it ~7 times for each of the graph's ~240
  DoFns while building and translating the graph, and again for every DoFn each runner bundle
  unpickles. The answer depends only on the DoFn's methods: those of its class, and any method
  bound on the object itself (``beam.Map(obj.method)``). So it is kept per class and per such
  methods' functions.

The views are kept weakly (an options object that is dropped takes its views with it); the specs
per class, a bounded set. Importing this module changes nothing: ``install()`` (idempotent) puts
both in place, and is called where it is meant, never as a side effect of an import: where a job
makes its pipeline (``jobs/runner.py::new_pipeline``, for both jobs), in the setup of the
stages that handle inputs (any worker process the runner starts), and by the test suite's
``tests/conftest.py``.
"""

from __future__ import annotations

import types
import weakref
from typing import Any, TypeVar

from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.transforms import userstate

_O = TypeVar("_O", bound=PipelineOptions)

_views: weakref.WeakKeyDictionary[PipelineOptions, dict[type, PipelineOptions]] = weakref.WeakKeyDictionary()
_specs: dict[tuple[type, tuple[tuple[str, Any], ...]], Any] = {}
_view_as = PipelineOptions.view_as
_get_dofn_specs = userstate.get_dofn_specs


def view_as(self: PipelineOptions, cls: type[_O]) -> _O:
    views = _views.get(self)
    if views is None:
        views = _views[self] = {}
    view = views.get(cls)
    if view is None:
        view = views[cls] = _view_as(self, cls)
    return view  # type: ignore[return-value]


def get_dofn_specs(dofn: Any) -> Any:
    bound = tuple(
        (name, value.__func__)
        for name, value in getattr(dofn, "__dict__", {}).items()
        if isinstance(value, types.MethodType)
    )
    key = (type(dofn), bound)
    try:
        specs = _specs.get(key)
    except TypeError:  # a method bound on the object whose function cannot be hashed: asked each time
        return _get_dofn_specs(dofn)
    if specs is None:
        specs = _specs[key] = _get_dofn_specs(dofn)
    return specs


def install() -> None:
    PipelineOptions.view_as = view_as  # type: ignore[method-assign]
    userstate.get_dofn_specs = get_dofn_specs
