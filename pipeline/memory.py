"""glibc malloc settings for the job's local processes (the DirectRunner's job process and its
``multi_processing`` workers).

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


__all__ = ["ARENA_MAX", "MMAP_THRESHOLD", "tune_malloc"]
