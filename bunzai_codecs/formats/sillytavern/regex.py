"""``sillytavern-regex``: SillyTavern regex script files — one script object or an array of them.

ST exports a single script as ``regex-<scriptName>.json`` (one object) and a bulk export as an array;
its importer takes either. Detection: 0.9 for an object with a string ``scriptName`` and
``findRegex``, or a non-empty array whose every item has a string ``findRegex`` plus ``scriptName``
or ``replaceString`` (Marinara's row dumps share that shape and bid 0.95). The field mapping is
``tavern/st_regex.py``.

The set is named after the single script, or the file name's stem for an array. Encode keeps the
twin's shape (object or array); a fresh export with one rule is an object, otherwise an array.
A regex set decoded from a card's ``extensions.regex_scripts`` (twin under ``sillytavern``) is
exported through that twin too, so a card's scripts written beside it lose nothing.
"""

from __future__ import annotations

from typing import Any

import orjson

from bunzai_codecs.core.codec import Codec, EmitContext, body_as
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.overlay import merge3
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import RegexSetBody
from bunzai_codecs.formats._shared.wire import MapContext, file_stem, wrong
from bunzai_codecs.formats.tavern.st_regex import (
    SCRIPT_KEY,
    ST_REGEX_COVERAGE,
    body_to_scripts,
    rule_to_script,
    script_to_rule,
    scripts_to_body,
)

#: codecs whose twin of a regex set is a plain array of ST scripts
_SCRIPT_TWINS = ("sillytavern",)


class SillyTavernRegex(Codec):
    """SillyTavern regex scripts (the built-in Regex extension's export files)."""

    id = "sillytavern-regex"
    coverage = ST_REGEX_COVERAGE

    def decode(self, s: Sniff) -> Decoded:
        t = s.require_json()
        if isinstance(t, dict):
            ctx = MapContext("$")
            rule = script_to_rule(t, 0, ctx)
            body: dict[str, Any] = {"name": rule["label"], "rules": [rule]}
        elif isinstance(t, list):
            ctx = MapContext("$")
            body = scripts_to_body(t, name=file_stem(s.name), ctx=ctx)
        else:
            raise wrong("$", "a regex script object or an array of scripts", t)
        return Decoded([self.entity(s, body, raw=t, warnings=ctx.warnings)])

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        body = body_as(entity, RegexSetBody)
        raw = _twin_raw(entity, self.id)
        out: Any
        if isinstance(raw, dict) and len(body.rules) == 1:
            base = RegexSetBody.model_validate({"rules": [script_to_rule(raw, 0, MapContext("$"))]})
            if base.rules == body.rules:
                out = raw
            else:
                out = merge3(raw, rule_to_script(base.rules[0], 0), rule_to_script(body.rules[0], 0))
        elif isinstance(raw, list):
            base = RegexSetBody.model_validate(scripts_to_body(raw))
            if base.rules == body.rules:
                out = raw
            else:
                out = merge3(raw, body_to_scripts(base), body_to_scripts(body), list_key=SCRIPT_KEY)
        else:
            scripts = body_to_scripts(body)
            out = scripts[0] if len(scripts) == 1 and not isinstance(raw, list) else scripts
        return orjson.dumps(out, option=orjson.OPT_INDENT_2) + b"\n"


def _twin_raw(entity: CanonicalEntity, codec_id: str) -> Any:
    twin = entity.twin(codec_id)
    if twin is not None:
        return twin.raw
    for fmt in _SCRIPT_TWINS:
        t = entity.twin(fmt)
        if t is not None and isinstance(t.raw, list):
            return t.raw
    return None


__all__ = ["SillyTavernRegex"]
