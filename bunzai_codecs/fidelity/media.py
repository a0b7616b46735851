"""Media compared by their bytes, not their refs (``media_changes``): a lost or altered picture is
``media.portrait`` / ``media.assets[i]``; across formats a re-encoded picture with the same pixels
is kept."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bunzai_codecs.core.codec import Coverage, normalize_path
from bunzai_codecs.core.diff import Change, diff
from bunzai_codecs.fidelity.rows import LossClass

#: what a media item's bytes stand for: its digest, or the digest of its pixels (across formats)
_CONTENT_KEYS = ("sha256", "size", "ref", "mime")


@dataclass(slots=True)
class _Item:
    path: str
    value: dict[str, Any]
    data: bytes | None

    @property
    def sha(self) -> str | None:
        v = self.value.get("sha256")
        return v if isinstance(v, str) else None


def _media_items(body: dict[str, Any], store: dict[str, bytes]) -> tuple[_Item | None, list[_Item]]:
    media = body.get("media")
    if not isinstance(media, dict):
        return None, []

    def item(path: str, v: Any) -> _Item:
        sha = v.get("sha256") if isinstance(v, dict) else None
        return _Item(path, v, store.get(sha) if isinstance(sha, str) else None)

    p = media.get("portrait")
    portrait = item("media.portrait", p) if isinstance(p, dict) else None
    assets = [
        item(f"media.assets[{i}]", a) for i, a in enumerate(media.get("assets") or []) if isinstance(a, dict)
    ]
    return portrait, assets


def _same_picture(a: _Item, b: _Item) -> bool:
    """Two encodings of one picture (a WebP portrait re-encoded as the PNG of a PNG card)."""
    from bunzai_codecs.core.media import pixels_key

    if a.data is None or b.data is None:
        return False
    ka, kb = pixels_key(a.data, a.sha), pixels_key(b.data, b.sha)
    return ka is not None and ka == kb


def _content(a: _Item, b: _Item, *, pixels: bool) -> str | None:
    """How the bytes of a paired item came back: None (the same), ``reencoded``, ``changed``,
    ``lost`` or ``added``."""
    if a.sha is None and b.sha is None:
        return None
    if b.sha is None:
        return "lost"
    if a.sha is None:
        return "added"
    if a.sha == b.sha:
        return None
    return "reencoded" if pixels and _same_picture(a, b) else "changed"


def _meta(v: dict[str, Any], bytes_known: bool) -> dict[str, Any]:
    """What is compared of an item besides its bytes: with bytes on either side, its ref (where a
    container keeps the file), MIME type and size are the container's business, not data."""
    return {k: x for k, x in v.items() if not (bytes_known and k in _CONTENT_KEYS)}


def _pair_media(
    po: _Item | None, ao: list[_Item], pn: _Item | None, an: list[_Item], *, pixels: bool
) -> list[tuple[_Item | None, _Item | None]]:
    """Old and new media items paired: by digest, then (across formats) by pixels, wherever they
    are (an asset may come back as the portrait: only its role changed); then portrait with
    portrait; then assets by ref, then by role and name. Unpaired items stand alone (old order,
    then the new extras)."""
    old = ([po] if po is not None else []) + ao
    left = ([pn] if pn is not None else []) + an
    found: dict[int, _Item] = {}

    def take(i: int, pred: Callable[[_Item], bool]) -> None:
        if i in found:
            return
        for k, n in enumerate(left):
            if pred(n):
                found[i] = left.pop(k)
                return

    def same_slot(o: _Item, n: _Item) -> bool:
        return (o is po) == (n is pn) and all(o.value.get(k) == n.value.get(k) for k in ("role", "name"))

    # one picture may stand in several slots (an avatar that is also the background): the same slot
    # with the same bytes first, then the same bytes anywhere, then (across formats) the same pixels
    for slot in (True, False):
        for i, o in enumerate(old):
            if o.sha is not None:
                take(i, lambda n, o=o, slot=slot: n.sha == o.sha and (not slot or same_slot(o, n)))  # type: ignore[misc]
    for slot in (True, False) if pixels else ():
        for i, o in enumerate(old):
            if o.data is not None:
                take(i, lambda n, o=o, slot=slot: (not slot or same_slot(o, n)) and _same_picture(o, n))  # type: ignore[misc]
    if po is not None:
        take(0, lambda n: n is pn)
    for i, o in enumerate(old):
        if o is not po and o.sha is None:
            take(i, lambda n, o=o: n is not pn and n.sha is None and n.value.get("ref") == o.value.get("ref"))  # type: ignore[misc]
    for i, o in enumerate(old):
        if o is not po:
            key = (o.value.get("role"), o.value.get("name"))
            take(i, lambda n, key=key: n is not pn and (n.value.get("role"), n.value.get("name")) == key)  # type: ignore[misc]
    return [(o, found.get(i)) for i, o in enumerate(old)] + [(None, n) for n in left]


def media_changes(
    old: dict[str, Any],
    new: dict[str, Any],
    old_store: dict[str, bytes],
    new_store: dict[str, bytes],
    coverage: Coverage | None,
) -> tuple[list[Change], list[tuple[str, str, LossClass]]]:
    """Compare the media of two body dumps by their bytes, and take them out of both dumps (the
    rest is compared as usual). Returns the item fields' changes (name, role, label...: classed by
    coverage like any path, under the old item's path) and the bytes' fates as ``(group, path,
    class)``: a lost or altered image is ``lost``/``changed`` at ``media.portrait`` or
    ``media.assets[i]``, classed by whether the target covers ``<path>.sha256``; across formats
    (``coverage`` given) an image whose pixels came back in other bytes is ``changed`` with class
    ``info`` (a stated re-encode, never lossy); an image the target added is ``added`` (``info``)."""
    pixels = coverage is not None
    po, ao = _media_items(old, old_store)
    pn, an = _media_items(new, new_store)
    for d in (old, new):
        m = d.get("media")
        if isinstance(m, dict):
            m.pop("portrait", None)
            m.pop("assets", None)

    def cls(path: str) -> LossClass:
        if coverage is None:
            return "unexpected"
        return "unexpected" if coverage.covers(normalize_path(path) + ".sha256") else "expected"

    changes: list[Change] = []
    fates: list[tuple[str, str, LossClass]] = []
    for a, b in _pair_media(po, ao, pn, an, pixels=pixels):
        if a is None:
            assert b is not None
            if b.sha is not None:
                fates.append(("added", b.path, "info" if coverage is not None else "unexpected"))
            else:
                changes.append(Change(b.path, "added", None, b.value))
            continue
        if b is None:
            if a.sha is not None:
                fates.append(("lost", a.path, cls(a.path)))
            else:
                changes.append(Change(a.path, "removed", a.value, None))
            continue
        fate = _content(a, b, pixels=pixels)
        if fate == "reencoded":
            fates.append(("changed", a.path, "info"))
        elif fate == "added":
            fates.append(("added", a.path, "info" if coverage is not None else "unexpected"))
        elif fate is not None:
            fates.append((fate, a.path, cls(a.path)))
        known = a.sha is not None or b.sha is not None
        changes += diff(
            _meta(a.value, known), _meta(b.value, known), path=a.path, empty_is_absent=coverage is not None
        )
    return changes, fates
