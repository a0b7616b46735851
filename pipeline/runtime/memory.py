"""Process settings for the job: glibc malloc for its local processes (the DirectRunner's job
process and its ``multi_processing`` workers), and the cyclic garbage collector's young-generation
threshold for every process that handles inputs (any runner: it is set where inputs are read).

Measured on the benchmark corpus (``--fidelity off``, ``multi_processing`` x2), each worker's
resident memory grew by ~9 KiB per input it processed although no Python object outlived its
input (tracemalloc at the peak shows only the bounded shard buffers): glibc's allocator raises its
mmap threshold after the first large block is freed, so later file bytes and canonical lines (a
few hundred KiB each) are carved from the heap, which fragments and is never given back, and
every gRPC thread of a worker gets its own arena to fragment. Two settings keep it flat: large
blocks always through mmap (returned to the system when freed) and at most two arenas.

Workers read the environment when they start; this process takes the same settings through
``mallopt``. Values already in the environment win. Elsewhere than glibc nothing changes.
"""

from __future__ import annotations

import ctypes
import gc
import os
import sys

#: blocks at least this large are mmapped (glibc's static default; fixing it turns off the
#: dynamic threshold that causes the growth)
MMAP_THRESHOLD = 256 << 10
ARENA_MAX = 2
_M_MMAP_THRESHOLD, _M_ARENA_MAX = -3, -8


def tune_malloc() -> bool:
    """Apply the settings to this process and (through the environment) to the processes it
    starts. Returns whether ``mallopt`` took them."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        threshold = int(os.environ.setdefault("MALLOC_MMAP_THRESHOLD_", str(MMAP_THRESHOLD)))
        arenas = int(os.environ.setdefault("MALLOC_ARENA_MAX", str(ARENA_MAX)))
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, threshold)) and bool(libc.mallopt(_M_ARENA_MAX, arenas))
    except (OSError, AttributeError, ValueError):  # not glibc (musl), or a value that is not a number
        return False


#: allocations of tracked objects between two young-generation collections (CPython's default is
#: 700). Decoding one input builds thousands of small containers (parsed trees, nested canonical
#: models), so the default collects many times per input, and every tenth collection also walks the
#: middle generation; a worker's long-lived objects (Beam, gRPC, protobuf, the codecs' schemas:
#: ~185k objects) make those passes dear. The trees are freed by reference counting, not by the
#: collector, so a larger threshold mostly saves work. Not much larger, though: the runner's own
#: per-bundle garbage (cycles that hold buffers) waits for a collection too, and while shards merge
#: few objects are allocated. At 20000 each worker's peak at 100k inputs grew by ~45 MiB; at 5000
#: it did not, and the CPU saved was the same (docs/perf-notes/2026-11-30-collector-threshold.md).
GC_GEN0 = 5_000
#: CPython's own young-generation threshold, what the library's callers get
CPYTHON_GEN0 = 700


def tune_gc() -> bool:
    """Raise the collector's young-generation threshold to :data:`GC_GEN0` in this process.

    A threshold already at least that high, and a collector switched off (``gc.disable()`` or a
    threshold of 0), are left as they are. Returns whether the threshold was changed. Cheap and
    idempotent: DoFns call it from ``setup`` in whatever process the runner gives them.
    """
    gen0, gen1, gen2 = gc.get_threshold()
    if not gc.isenabled() or gen0 == 0 or gen0 >= GC_GEN0:
        return False
    gc.set_threshold(GC_GEN0, gen1, gen2)
    return True


__all__ = ["ARENA_MAX", "CPYTHON_GEN0", "GC_GEN0", "MMAP_THRESHOLD", "tune_gc", "tune_malloc"]
