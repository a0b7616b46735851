"""What every ``fuzz_<target>.py`` does: load bunzai (every codec), instrument it, fuzz one target.

Usage (from the project root, after ``pip install -e '.[fuzz]'`` or ``make fuzz``)::

    python tests/fuzz/fuzz_png.py -max_total_time=60                     # seeds from corpus/png
    python tests/fuzz/fuzz_png.py /tmp/work tests/fuzz/corpus/png -max_total_time=600

With no corpus directory given, the saved corpus is used read-only behind a scratch directory, so
a run never grows the saved one; a crasher is written to ``tests/fuzz/corpus/<target>/crash-<sha1>`` (a slow input to ``timeout-<sha1>``)
(keep it: the replay test then runs it on every pytest run). Every option of libFuzzer applies.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main(target: str) -> None:
    sys.path.insert(0, str(ROOT))
    import atheris

    from bunzai_codecs.core import registry
    from tests.fuzz.check import CORPUS, Crash, check

    registry.all_codecs()  # load every codec module before instrumenting
    atheris.instrument_all()

    args = list(sys.argv)
    if not any(not a.startswith("-") for a in args[1:]):
        args += [tempfile.mkdtemp(prefix=f"bunzai-fuzz-{target}-"), str(CORPUS / target)]
    if not any(a.startswith("-artifact_prefix=") for a in args[1:]):
        args.append(f"-artifact_prefix={CORPUS / target}/")  # libFuzzer adds crash-<sha1>, timeout-<sha1>
    if not any(a.startswith("-rss_limit_mb=") for a in args[1:]):
        args.append("-rss_limit_mb=4096")  # a bounded 96 MiB inflate is not a leak

    def one(data: bytes) -> None:
        try:
            check(target, data)
        except Crash:
            raise
        except BaseException as exc:  # the check itself must not break on any input
            raise Crash(f"check({target!r}) failed: {exc!r}") from exc

    atheris.Setup(args, one)
    atheris.Fuzz()
