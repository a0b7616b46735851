"""The native round trip's comparison, container aware: parsed trees for JSON (per line for
JSONL), text-chunk payloads plus every other chunk's bytes for PNG, per-member bytes (``.json``
members as trees) for zips, bytes otherwise."""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core.diff import Change, diff, join
from bunzai_codecs.core.errors import BunzaiError
from bunzai_codecs.core.sniff import Sniff, parse_json
from bunzai_codecs.fidelity.rows import DIFF_LIMIT


def compare_native(before: bytes, after: bytes) -> list[Change]:
    """How ``after`` differs from ``before`` as the file's format means it (see module docstring).

    Paths: ``data.name`` for JSON, ``line[2].body`` for JSONL, ``png.chara.data.name`` and
    ``png.chunks[3]`` (a non-text chunk) for PNG, ``zip['card.json'].data.name`` and
    ``zip['assets/a.png']`` for zips, ``$`` when the bytes differ and nothing finer applies.
    """
    if before == after:  # the same bytes parse to the same trees: no difference in any view
        return []
    a, b = Sniff(before), Sniff(after)
    if a.is_png:
        return _compare_png(a, b)
    if a.is_zip and a.zip is not None:
        return _compare_zip(a, b)
    if a.looks_like_json:
        ta, tb = a.json, b.json
        if a.json_error is None:
            if b.json_error is not None:
                return [Change("$", "changed", "JSON", f"not JSON: {b.json_error.message}")]
            return diff(ta, tb, limit=DIFF_LIMIT)
        la, lb = _json_lines(before), _json_lines(after)
        if la is not None:
            if lb is None:
                return [Change("$", "changed", "JSON lines", "not JSON lines")]
            return diff({"line": la}, {"line": lb}, limit=DIFF_LIMIT)
    return [] if before == after else [Change("$", "changed", f"{len(before)} bytes", f"{len(after)} bytes")]


def _json_lines(data: bytes) -> list[Any] | None:
    out = []
    try:
        for line in data.splitlines():
            if line.strip():
                out.append(parse_json(line))
    except BunzaiError:
        return None
    return out


def _text_value(v: bytes) -> Any:
    """A PNG text payload as a tree: base64 JSON (cards), plain JSON, else the text itself."""
    import base64
    import binascii

    try:
        return parse_json(base64.b64decode(v, validate=True))
    except (BunzaiError, binascii.Error, ValueError):
        pass
    try:
        return parse_json(v)
    except BunzaiError:
        return v.decode("latin-1")


def _compare_png(a: Sniff, b: Sniff) -> list[Change]:
    from bunzai_codecs.core.png import TEXT_TYPES

    pa, pb = a.png, b.png
    if pa is None or pb is None:
        if a.data == b.data:
            return []
        return [Change("$", "changed", "PNG", "not a readable PNG" if pb is None else "PNG")]

    def texts(s: Sniff) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for t in s.png_texts:
            key = t.keyword.lower()
            n, k = 1, key
            while k in out:
                n += 1
                k = f"{key}#{n}"
            out[k] = _text_value(t.text)
        return out

    text_types = {t.encode("ascii") for t in TEXT_TYPES}
    oa = [c for c in pa.chunks if c.type not in text_types]
    ob = [c for c in pb.chunks if c.type not in text_types]
    out = []
    for i in range(max(len(oa), len(ob))):
        ca = oa[i] if i < len(oa) else None
        cb = ob[i] if i < len(ob) else None
        path = f"png.chunks[{i}]"
        if cb is None:
            out.append(Change(path, "removed", _chunk_label(ca), None))
        elif ca is None:
            out.append(Change(path, "added", None, _chunk_label(cb)))
        elif ca.type != cb.type or ca.data != cb.data:
            out.append(Change(path, "changed", _chunk_label(ca), _chunk_label(cb)))
    if pa.trailing != pb.trailing:
        out.append(
            Change("png.trailing", "changed", f"{len(pa.trailing)} bytes", f"{len(pb.trailing)} bytes")
        )
    out += diff(texts(a), texts(b), path="png", limit=DIFF_LIMIT)
    return out


def _chunk_label(c: Any) -> str:
    return f"{c.type.decode('latin-1')} ({len(c.data)} bytes)"


def _compare_zip(a: Sniff, b: Sniff) -> list[Change]:
    za, zb = a.zip, b.zip
    if za is None:
        return []
    if zb is None:
        return [Change("$", "changed", "zip", "not a readable zip")]
    out: list[Change] = []
    if za.prefix != zb.prefix:
        out.append(Change("zip.prefix", "changed", f"{len(za.prefix)} bytes", f"{len(zb.prefix)} bytes"))
    na, nb = set(za.names), set(zb.names)
    for name in sorted(na | nb):
        path = join("zip", name)
        if name not in nb:
            out.append(Change(path, "removed", name, None))
        elif name not in na:
            out.append(Change(path, "added", None, name))
        else:
            x, y = za.read(name), zb.read(name)
            if x == y:
                continue
            if name.lower().endswith(".json"):
                try:
                    out += diff(parse_json(x), parse_json(y), path=path, limit=DIFF_LIMIT)
                    continue
                except BunzaiError:
                    pass
            out.append(Change(path, "changed", f"{len(x)} bytes", f"{len(y)} bytes"))
    return out
