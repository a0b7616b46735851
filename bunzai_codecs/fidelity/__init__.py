"""Round-trip fidelity: what a conversion keeps, loses or changes, as ``FidelityRow`` records.

Three checks per input (../docs/fidelity.md has the user's view):

1. **native round trip** — ``encode_F(decode_F(x))`` against ``x`` for the file's own format F,
   compared the way the format means it: parsed trees for JSON (and per line for JSONL), text-chunk
   payloads (base64 JSON decoded) plus every other chunk's bytes for PNG, per-member bytes with
   ``.json`` members as trees for zips (a JPEG before the zip compared as bytes), bytes otherwise;
2. **canonical stability** — ``decode_F(encode_F(e)).body == e.body`` for every entity of the file
   (a card's linked lorebook too, through the card it is embedded in);
3. **cross-format** — for every other codec T of the entity's kind,
   ``decode_T(encode_T(e))`` against ``e``, compared as canonical bodies with empty values counted
   as absent. Each lost or changed path is classed **expected** when T's ``coverage`` cannot hold
   it and **unexpected** (a bug) when it can. Entities linked to ``e`` (a card's lorebook) are
   compared too, under ``<kind>[i].`` paths, classed by the coverage of the codec that carried them.
   Paths the target *added* are recorded as ``info``: they never make a row lossy. Media are
   compared by their bytes (``media_changes``): a lost or altered image is ``media.portrait`` or
   ``media.assets[i]``, classed by whether the target holds ``<path>.sha256``; an image re-encoded
   with the same pixels (a WebP portrait as a PNG card) is a changed path of class ``info``. The few values
   a format spells differently but every app reads the same way (``SEMANTIC``: example dialogue
   as its ``<START>`` blocks) are compared in that form.

Every check gives one row per entity (the native check one per file, on its primary entity), and
each input also gets a ``decode`` row saying whether it decoded or was rejected, so a report (and
``bunzai audit``) can tell "a file that decoded now rejects". Losses are grouped by path pattern
(``entries[].content``), with a count and the first concrete path. ``ROW_SCHEMA`` is the JSON
Schema of a row's JSON form (committed as docs/schema/fidelity-row.schema.json).

Nothing here runs Beam: the pipeline's RoundTrip stage and ``bunzai fidelity`` both call
``check_file`` / ``check_decoded``.

The package, by seam: ``rows`` (the row and its schema), ``paths`` (differences grouped into
path losses), ``weights`` (content weights: the "kept" measure), ``native`` (the native
comparison, container aware), ``semantic`` (values compared as apps read them), ``media``
(pictures compared by their bytes), ``checks`` (the three checks, per input), and the report:
``report`` (the aggregate, ``report.json``) and ``html`` (``report.html``). Its public names are
importable from here.
"""

from bunzai_codecs.fidelity.checks import (
    body_losses,
    canonical_stability,
    check_decoded,
    check_file,
    cross_format,
    cross_targets,
    decode_row,
    entity_name,
    export_row,
    learn_patterns,
    native_round_trip,
    reject_row,
)
from bunzai_codecs.fidelity.media import media_changes
from bunzai_codecs.fidelity.native import compare_native
from bunzai_codecs.fidelity.patterns import DEFAULT_SAMPLE, Broken, PatternBook, Patterns, sample_of, sampled
from bunzai_codecs.fidelity.rows import BASES, CHECKS, ROW_SCHEMA, FidelityRow, PathLoss, RowError
from bunzai_codecs.fidelity.semantic import example_blocks
from bunzai_codecs.fidelity.weights import content_units, content_weight

__all__ = [
    "BASES",
    "CHECKS",
    "DEFAULT_SAMPLE",
    "ROW_SCHEMA",
    "Broken",
    "FidelityRow",
    "PathLoss",
    "PatternBook",
    "Patterns",
    "RowError",
    "body_losses",
    "canonical_stability",
    "check_decoded",
    "check_file",
    "compare_native",
    "content_units",
    "content_weight",
    "cross_format",
    "cross_targets",
    "decode_row",
    "entity_name",
    "example_blocks",
    "export_row",
    "learn_patterns",
    "media_changes",
    "native_round_trip",
    "reject_row",
    "sample_of",
    "sampled",
]
