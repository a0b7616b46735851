#!/usr/bin/env python
"""Fuzz the PNG chunk reader and text chunks, and PNG cards (chara/ccv3/persona/naidata/eXIf) through every codec.

    python tests/fuzz/fuzz_png.py -max_total_time=60        (or: make fuzz FUZZ_TIME=60)

Only typed errors may escape (tests/fuzz/check.py); the saved corpus is tests/fuzz/corpus/png/.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _run import main

if __name__ == "__main__":
    main("png")
