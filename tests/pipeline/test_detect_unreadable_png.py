"""A PNG that does not parse (here: a card chunk with a bad CRC) is a detect-stage reject of the
pipeline, naming the chunk's problem and offset, never a failed run. Since issue 32 it is
``Malformed`` (clearly a PNG, but broken), as ``--from`` would say: the detect stage handles it
like ``NotRecognized`` (a ``Malformed`` escaping from it once failed a whole ``normalize``)."""

from __future__ import annotations

from apache_beam.pvalue import TaggedOutput

from bunzai_codecs.core import png
from bunzai_codecs.core.sniff import Sniff
from pipeline.normalize.decode import _Detect
from pipeline.normalize.elements import INVENTORY, REJECTS, InputFile
from pipeline.runtime.storage import FileRef
from tests.formats.helpers import sample


def test_a_png_card_with_a_corrupt_card_chunk_is_a_detect_reject() -> None:
    raw = sample("sillytavern/tidepool.png")
    chunk = next(c for c in png.parse(raw).chunks if png.keyword_of(c) == "ccv3")
    bad = bytearray(raw)
    bad[chunk.offset + 20] ^= 0x01  # inside the ccv3 value: its CRC no longer matches
    f = InputFile(
        FileRef("t.png", 0, "t.png", len(bad), None), Sniff(bytes(bad), "t.png", uri="t.png"), "new"
    )
    out = list(_Detect().process(f))
    tags = [o.tag for o in out if isinstance(o, TaggedOutput)]
    assert REJECTS in tags and INVENTORY in tags and len(out) == len(tags)  # nothing detected
    rec = next(o.value for o in out if isinstance(o, TaggedOutput) and o.tag == REJECTS)
    assert (rec["error"], rec["stage"]) == ("Malformed", "detect")
    assert "bad CRC in tEXt chunk" in rec["message"]
    assert rec["path"] == f"@{chunk.offset}"  # the byte offset of the bad chunk
