"""``risu-regex``: RisuAI's regex script export, ``{"type":"regex","data":[customscript...]}``.

Detection:

- 1.0 — the app's own export ``{"type":"regex","data":[...]}`` (the only shape Risu imports as regex;
  the seed missed it, so it scores as the native shape);
- 0.85 — a bare JSON array of customscript rows (other tools write these; Risu does not import one).

A ``.risum`` module (or a RisuRealm flat module JSON) is format ``risu-module`` (module.py), which
also carries the module's lorebook, triggers and assets. In bunzai 0.1.0 this id read modules too:
asking the registry to read a module as ``risu-regex`` still reads it as ``risu-module`` for one
release (``registry.MOVED``), and a module twin an older bunzai stored under this id is still used.

Export writes rows, never a module: ``{"type":"regex","data":[...]}`` (or the bare array a bare array
came from), the rows taken from the best Risu twin there is (this export's, a module's, a preset's,
a charx's), overlaid with the body.
"""

from __future__ import annotations

import orjson

from bunzai_codecs.core.codec import Codec, Coverage, EmitContext, body_as
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.regex import RegexSetBody
from bunzai_codecs.formats.risu import module, scripts
from bunzai_codecs.formats.risu.detect import regex_envelope_rows as envelope_rows

#: codecs whose twin of a regex entity holds customscript rows (a module twin stored under this
#: codec's own id by bunzai 0.1.0 included)
ROW_TWINS = ("risu-regex", module.ID, "risu-preset", "risu")


class RisuRegexCodec(Codec):
    id = "risu-regex"
    #: module twins of bunzai 0.1.0 (a module read as risu-regex) still sit under this id
    twin_type = module.ModuleTwin
    coverage = Coverage.of(
        *scripts.RULE_PATHS,
        notes=[
            "one phase per rule (Risu type: input, output, request, display, or an unknown type kept "
            "verbatim); a rule with several phases keeps the first, and a disabled rule has none",
            "no trim strings, targets, depth window or macro substitution in find",
            "no set name or description: an export is a regex file named after the set, whose name is "
            "the file name (a module, risu-module, holds both)",
            "rows have no ids and no order field: a rule's id is its row index, and rules are written in "
            "sortOrder (run order is the array order)",
        ],
    )

    def decode(self, s: Sniff) -> Decoded:
        if module.looks_like_module(s):
            raise Malformed(f"this is a RisuAI module: read it as {module.ID}", path="$")
        tree = s.require_json()
        rows = envelope_rows(tree)
        if rows is None and not isinstance(tree, list):
            raise Malformed('Risu regex scripts are {"type":"regex","data":[...]}', path="$")
        notes: list[str] = []
        if rows is not None:
            body = scripts.rows_to_body(rows, name=_stem(s.name), at="$.data", warnings=notes)
        else:
            body = scripts.rows_to_body(tree, name=_stem(s.name), at="$", warnings=notes)
        return Decoded([self.entity(s, body, raw=tree, warnings=notes)])

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        body = body_as(entity, RegexSetBody)
        twin = entity.twin(self.id)
        raw = twin.raw if twin else None
        rows = envelope_rows(raw)
        if rows is not None and isinstance(raw, dict):
            merged = scripts.merge_rows(rows, body)
            return orjson.dumps(raw if merged is rows else {**raw, "data": merged})
        if isinstance(raw, list):
            return orjson.dumps(scripts.merge_rows(raw, body))
        return orjson.dumps({"type": "regex", "data": scripts.rows_for(entity, body, ROW_TWINS)})


def _stem(name: str) -> str:
    base = name.rsplit("/", 1)[-1]
    for suf in (".json", ".risum"):
        if base.lower().endswith(suf):
            return base[: -len(suf)]
    return base
