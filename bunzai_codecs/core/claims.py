"""What inputs a format's detector can claim, by cheap features: the detection index.

Every format's detector is asked about every input (``core.registry``), yet most can tell from a
glance that an input is not theirs: a SillyTavern preset is a JSON object with one of a few keys, a
Voxta package is a zip with a ``Characters/`` folder, a RisuAI persona is a PNG with a ``persona``
text chunk. A format states that glance in its table row (``Format.claims``): the :class:`Claims`
an input must show for its detector to score it above 0. The registry reads an input's features
once (:func:`features`: the top-level keys of a JSON object, the chunk types and text keywords of a
PNG, the member names of a zip...) and asks only the formats whose claims meet them, plus every
format that states none (asked always, as before: a format added without claims is still found).

The scores, the ranking and the winner are the ones asking every format gives: a format left out
is one whose detector returns 0 for the input, which neither ranks nor wins. That is a promise of
each row, checked, not trusted: with ``basecache.CHECK`` on (the test suite, the hostile and fuzz
runs) every detection also asks every format and raises ``basecache.RuleBroken`` when the two
rankings differ, and ``tests/core/test_detect_index.py`` compares them over the samples, the shared
corpus, the hostile inputs and the fuzz seeds.

Features never parse what detection would not: a PNG's chunks and a zip's listing are the ones
``Sniff`` reads for every detector anyway, and a text chunk's keyword is read without inflating it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bunzai_codecs.core.sniff import Sniff

#: a feature: (what, name) — ("key", "spec"), ("png-text", "ccv3"), ("zip-member", "card.json")...
Feature = tuple[str, str]

#: a JSON array at the top level
JSON_ARRAY: Feature = ("json", "array")
#: input that starts like JSON and does not parse (a JSONL file is one)
JSON_UNPARSED: Feature = ("json", "unparsed")
#: a zip (or a JPEG with one appended) whose listing does not read
ZIP_UNREADABLE: Feature = ("zip", "unreadable")
#: input that is none of JSON, PNG and zip (a JPEG without a zip too): raw bytes of an app's own
OTHER_BYTES: Feature = ("bytes", "other")


@dataclass(frozen=True)
class Claims:
    """The inputs a format's detector may score above 0: any input showing one of these features.
    Build with :meth:`of`; ``|`` joins two. A detector that can claim an input outside them is a
    bug of its row (``basecache.CHECK`` finds it)."""

    features: frozenset[Feature] = frozenset()
    #: input starting with one of these bytes (a ``.risum`` module's magic), whatever else it is
    magic: tuple[bytes, ...] = ()

    @classmethod
    def of(
        cls,
        *,
        json_keys: Iterable[str] = (),
        json_array: bool = False,
        json_unparsed: bool = False,
        png_texts: Iterable[str] = (),
        png_chunks: Iterable[bytes] = (),
        zip_members: Iterable[str] = (),
        zip_folders: Iterable[str] = (),
        zip_suffixes: Iterable[str] = (),
        zip_unreadable: bool = False,
        other_bytes: bool = False,
        magic: Iterable[bytes] = (),
        suffixes: Iterable[str] = (),
    ) -> Claims:
        """A JSON object with one of ``json_keys`` at its top level, a JSON array, JSON that does
        not parse; a PNG with a text chunk of one of ``png_texts`` (keywords, any case) or a chunk
        of one of ``png_chunks`` (types); a zip listing one of ``zip_members`` or a member below one
        of ``zip_folders`` (first path segments) or a member named with one of ``zip_suffixes``
        (lower case, with the dot: ``.yaml``, at any depth), a zip whose listing does not read; any other
        bytes; input starting with one of ``magic``; input named with one of ``suffixes`` (lower
        case, with the dot: a detector that reads the file name), whatever it holds."""
        feats: set[Feature] = {("key", k) for k in json_keys}
        feats |= {("png-text", k.lower()) for k in png_texts}
        feats |= {("png-chunk", t.decode("latin-1")) for t in png_chunks}
        feats |= {("zip-member", n) for n in zip_members}
        feats |= {("zip-folder", n) for n in zip_folders}
        feats |= {("zip-suffix", x.lower()) for x in zip_suffixes}
        feats |= {("suffix", x.lower()) for x in suffixes}
        for on, feat in (
            (json_array, JSON_ARRAY),
            (json_unparsed, JSON_UNPARSED),
            (zip_unreadable, ZIP_UNREADABLE),
            (other_bytes, OTHER_BYTES),
        ):
            if on:
                feats.add(feat)
        return cls(frozenset(feats), tuple(magic))

    def __or__(self, other: Claims) -> Claims:
        return Claims(self.features | other.features, tuple(dict.fromkeys(self.magic + other.magic)))


def features(s: Sniff) -> set[Feature]:
    """The features of input ``s`` that claims name (see :meth:`Claims.of`), read from what ``Sniff``
    parses for every detector anyway: its name's suffix and what its bytes hold."""
    out = _held(s)
    if s.suffix:
        out.add(("suffix", s.suffix))
    return out


def _held(s: Sniff) -> set[Feature]:
    if s.is_png:
        pf = s.png
        if pf is None:
            return set()  # no detector reads an unreadable PNG
        from bunzai_codecs.core import png

        out: set[Feature] = set()
        for c in pf.chunks:
            out.add(("png-chunk", c.type.decode("latin-1")))
            kw = png.keyword_of(c)
            if kw is not None:
                out.add(("png-text", kw))
        return out
    if s.is_zip:
        z = s.zip
        if z is None:
            return {ZIP_UNREADABLE}
        out = set()
        for n in z.names:
            out.add(("zip-member", n))
            slash = n.find("/")
            if slash > 0:
                out.add(("zip-folder", n[:slash]))
            dot = n.rfind(".")
            if dot > n.rfind("/") + 1:
                out.add(("zip-suffix", n[dot:].lower()))
        return out
    if s.looks_like_json:
        t = s.json
        if isinstance(t, dict):
            return {("key", k) for k in t if k.__class__ is str}
        if isinstance(t, list):
            return {JSON_ARRAY}
        return {JSON_UNPARSED} if s.json_error is not None else set()
    return {OTHER_BYTES}


@dataclass
class Index:
    """Which of ``order`` (declarations in asking order) may claim which feature, as bit masks."""

    order: tuple[object, ...]
    by_feature: dict[Feature, int] = field(default_factory=dict)
    #: formats asked whatever the input (no claims stated)
    always: int = 0
    #: (magic, mask) of the formats that claim inputs by their first bytes
    magic: tuple[tuple[bytes, int], ...] = ()
    #: JSON key -> mask (the ``("key", k)`` features, for a JSON object's keys view)
    by_key: dict[str, int] = field(default_factory=dict)
    #: mask -> the declarations it names, in asking order
    _picked: dict[int, tuple[object, ...]] = field(default_factory=dict)

    @classmethod
    def build(cls, order: tuple[object, ...], claims: list[Claims | None]) -> Index:
        idx = cls(order)
        magic: dict[bytes, int] = {}
        for i, c in enumerate(claims):
            bit = 1 << i
            if c is None:
                idx.always |= bit
                continue
            for f in c.features:
                idx.by_feature[f] = idx.by_feature.get(f, 0) | bit
            for m in c.magic:
                magic[m] = magic.get(m, 0) | bit
        idx.magic = tuple(magic.items())
        idx.by_key = {k: m for (what, k), m in idx.by_feature.items() if what == "key"}
        return idx

    def mask(self, s: Sniff) -> int:
        """The formats that may claim ``s``."""
        mask = self.always
        t = s.json if s.looks_like_json else None
        if isinstance(t, dict):  # the hot case: the keys both have, intersected in C
            by_key = self.by_key
            for k in t.keys() & by_key.keys():
                mask |= by_key[k]
            if s.suffix:
                mask |= self.by_feature.get(("suffix", s.suffix), 0)
        else:
            get = self.by_feature.get
            for f in features(s):
                mask |= get(f, 0)
        if self.magic:
            head = s.data[:16]
            for m, bits in self.magic:
                if head.startswith(m):
                    mask |= bits
        return mask

    def pick(self, s: Sniff) -> tuple[object, ...]:
        """The declarations that may claim ``s``, in asking order."""
        mask = self.mask(s)
        got = self._picked.get(mask)
        if got is None:
            got = self._picked[mask] = tuple(d for i, d in enumerate(self.order) if mask >> i & 1)
        return got


__all__ = [
    "JSON_ARRAY",
    "JSON_UNPARSED",
    "OTHER_BYTES",
    "ZIP_UNREADABLE",
    "Claims",
    "Feature",
    "Index",
    "features",
]
