#!/usr/bin/env python
"""Fuzz RPack and the .risum module container (blocks, markers, asset table) through every codec.

    python tests/fuzz/fuzz_rpack.py -max_total_time=60        (or: make fuzz FUZZ_TIME=60)

Only typed errors may escape (tests/fuzz/check.py); the saved corpus is tests/fuzz/corpus/rpack/.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _run import main

if __name__ == "__main__":
    main("rpack")
