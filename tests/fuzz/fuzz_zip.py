#!/usr/bin/env python
"""Fuzz the bounded zip reader and zipped cards (.charx, .byaf, .voxpkg, JPEG+ZIP) through every codec.

    python tests/fuzz/fuzz_zip.py -max_total_time=60        (or: make fuzz FUZZ_TIME=60)

Only typed errors may escape (tests/fuzz/check.py); the saved corpus is tests/fuzz/corpus/zip/.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _run import main

if __name__ == "__main__":
    main("zip")
