"""The Tavern card lineage as one codec: CCv1 flat JSON, CCv2/CCv3 JSON, PNG and APNG cards.

:class:`TavernCard` owns everything a Tavern card codec does; an app that writes Tavern cards
(SillyTavern, RoleCall, Lumiverse...) is a subclass that declares its identity, its own
:class:`~bunzai_codecs.formats.tavern.fields.TavernDialect` (the ``extensions`` keys it reads and
writes) and, where its file differs, its envelope (:class:`CardEnvelope`: an object of the app's
own around the card, as Marinara's ``{type: "marinara_character", data: <V2 card>}``) or container
(a zip, extra detection)::

    class MyAppCard(TavernCard):
        id = "myapp"
        family = "myapp"
        label = "MyApp character (CCv3 + extensions.myapp)"
        dialect = MyAppDialect()

(an app of this package sets only ``id`` and ``dialect``: its row in ``formats/table.py`` declares
the rest, its detector among them: the lineage's
:class:`~bunzai_codecs.formats.tavern.detect.CardDetector` with the app's ``CardMark``). Such a
codec decodes a card through the shared mapping plus :data:`SHARED_DIALECTS` plus its dialect, and
writes it back overlaid on its twin; its coverage is the shared coverage with its dialect's.

Detection is the lineage's one detector (``tavern/detect.py``), for every app: a declared codec's
is its row's; a codec with no row detects a card holding one of its dialect's ``claims`` (0.95,
above the generic 0.9) or, with an envelope, the file its envelope scores. With neither (the
generic Tavern reader, 0.9):

- a PNG with a ``ccv3`` or ``chara`` text chunk (any of tEXt/zTXt/iTXt, keyword in any case);
- JSON with ``spec`` ``chara_card_v2``/``chara_card_v3`` (``data`` is checked by the decoder, so a
  card missing it is reported, not ignored);
- a flat object with a string ``name`` plus ``first_mes`` or ``mes_example`` (0.9) or only other
  character text fields (0.6).

Decode: the card tree maps through ``tavern/fields.py``; an embedded ``character_book`` becomes a
linked lorebook entity and ``extensions.regex_scripts`` a linked regex-set entity (both via
``knowledgeRefs``; their twins are stored under this codec's id). PNG (``tavern/png.py``): ``ccv3``
is read before ``chara``; when ``ccv3`` cannot be decoded the card is read from ``chara`` and the
entity carries a warning. Payloads are decoded by their shape, never by their label. The PNG file
itself rides in the escrow blobs (``blobs.image``); it is ``media.portrait`` (CCv3's ``ccdefault:``)
unless the card lists ``assets``.

Encode: a same-format export overlays the body's edits on the twin (``core.overlay.merge3``) and
re-embeds the linked lorebook and regex set (``tavern/links.py``); a PNG keeps every chunk, its chunk
layout, and the twin's bytes outright when nothing changed. A fresh export is a CCv3 JSON card, or a
PNG (both ``chara`` and ``ccv3``, as SillyTavern writes them) when ``EmitContext.options["image"]``
holds PNG bytes. ``options["container"]`` (``"json"``/``"png"``) picks the container explicitly.
"""

from __future__ import annotations

import base64
import binascii
import functools
import importlib
import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, cast

import orjson
from pydantic import ValidationError

from bunzai_codecs.core import basecache, png, seal
from bunzai_codecs.core import media as media_mod
from bunzai_codecs.core.codec import Codec, Container, Coverage, EmitContext, body_as, validation_failed
from bunzai_codecs.core.entity import KNOWLEDGE_REFS, CanonicalEntity, Decoded
from bunzai_codecs.core.errors import BunzaiError, Malformed, NotRecognized, Unsupported
from bunzai_codecs.core.escrow import Twin, facet
from bunzai_codecs.core.overlay import merge3, unedited
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import CharacterBody
from bunzai_codecs.formats._shared.carrier import card_body, choose, picture, portrait_resolver
from bunzai_codecs.formats._shared.wire import MapContext, wrong
from bunzai_codecs.formats.tavern.character_book import BOOK_TAG, book_to_body
from bunzai_codecs.formats.tavern.detect import CardDetector, CardMark, card_score
from bunzai_codecs.formats.tavern.fields import (
    TAVERN_COVERAGE,
    V3_SHAPE,
    CardShape,
    TavernDialect,
    body_to_card,
    card_shape,
    card_to_body,
)
from bunzai_codecs.formats.tavern.links import apply_links, embedded_links, fresh_links, relink
from bunzai_codecs.formats.tavern.png import (
    ASSET_CHUNK,
    ASSET_REF,
    CARD_KEYWORDS,
    CCV3,
    rewrite_png,
    sniff_payload_tree,
    write_png,
)
from bunzai_codecs.formats.tavern.st_regex import SCRIPTS_TAG, scripts_to_body

if TYPE_CHECKING:
    from bunzai_codecs.core.media import Resolver

#: the dialects every Tavern card codec applies, in this order, by import path: apps whose keys ride
#: on any Tavern card (Agnai's ``extensions.agnai``; Chub's ``extensions.chub``, a lens onto media)
#: add theirs here
SHARED_DIALECTS: tuple[str, ...] = (
    "bunzai_codecs.formats.agnai.tavern_ext:AgnaiDialect",
    "bunzai_codecs.formats.chub.dialect:ChubDialect",
)


@functools.cache
def shared_dialects() -> tuple[TavernDialect, ...]:
    """The :data:`SHARED_DIALECTS`, loaded (once)."""
    out = []
    for path in SHARED_DIALECTS:
        module, _, name = path.partition(":")
        out.append(getattr(importlib.import_module(module), name)())
    return tuple(out)


def tavern_coverage(dialects: Iterable[TavernDialect]) -> Coverage:
    """What a Tavern card codec applying ``dialects`` carries: the shared coverage and theirs."""
    return functools.reduce(operator.or_, (d.coverage for d in dialects), TAVERN_COVERAGE) | Coverage.of(
        # one `depth_prompt` slot: a list of several injections is not kept (the Tavern note says which
        # one is written), so no injection path is claimed
        excludes=["prompts.depthInjections"],
    )


#: writes the card of a body (see :meth:`CardEnvelope.write`)
CardWriter = Callable[[CharacterBody], dict[str, Any]]


class CardEnvelope:
    """What an app's file wraps around its Tavern card. The base class is no wrapper: the file is
    the card (a JSON card, a PNG chunk's payload). An app whose file holds the card inside an object
    of its own (Marinara's ``{type: "marinara_character", data: <V2 card>, ...}``) subclasses it and
    sets :attr:`TavernCard.envelope`; :class:`TavernCard` then reads the card at :attr:`at`, lets
    :meth:`read` add the envelope's own fields to the body and :meth:`write` build the file around
    a written card. Mapping, linked book and scripts (re-embedded into the card's ``data`` below
    :attr:`at`), escrow overlay and detection by the envelope stay :class:`TavernCard`'s."""

    #: the key path of the card tree inside the file (``()``: the file is the card)
    at: tuple[str, ...] = ()
    #: the card layout a fresh file is written with
    shape: CardShape = V3_SHAPE

    def score(self, s: Sniff) -> float | None:
        """The detection score of a file with this envelope; ``None``: the card's own detection."""
        return None

    def card(self, tree: Any) -> dict[str, Any]:
        """The card tree at :attr:`at` of a parsed file, checked: a typed error says what is wrong
        where (``NotRecognized`` for a file that is not this envelope at all)."""
        if not isinstance(tree, dict):
            raise wrong("$", "a character card object", tree)
        return tree

    def read(self, tree: dict[str, Any], body: dict[str, Any], ctx: MapContext) -> None:
        """Add the envelope's own fields to ``body`` (the card's body dict); ``ctx`` is at the
        file's root. Nothing by default."""

    def write(
        self, body: CharacterBody, card_of: CardWriter, twin: dict[str, Any] | None, ctx: EmitContext | None
    ) -> dict[str, Any]:
        """The file for ``body``. ``card_of`` writes the card of a body (in the twin's layout, or
        :attr:`shape` for a fresh file; a fresh card gets the linked book and scripts); ``twin`` is
        the twin's file (``None`` for a fresh one); ``ctx`` is the export's context for a fresh
        file and ``None`` where the tree is one side of the three-way merge with the twin. By
        default the file is the card."""
        return card_of(body)


#: no envelope: the file is the card
BARE = CardEnvelope()


@dataclass(eq=False)
class CardTwin(Twin):
    """A Tavern card's escrow: the PNG file (``blobs.image``) and which of its card chunks the card
    was read from (``png.payload``: ``ccv3`` or ``chara``); a Lumiverse zip's card member
    (``zip.card``, the archive in ``blobs.archive``); ``module`` marks the regex set of a Lumiverse
    zip's modules file."""

    png: dict[str, Any] | None = facet(dict)
    zip: dict[str, Any] | None = facet(dict)
    module: bool | None = facet(bool)


class TavernCard(Codec):
    """The Tavern card lineage: CCv1/V2/V3 JSON and PNG/APNG cards, read and written through the
    shared mapping plus :attr:`dialects`. A subclass is an app: it sets ``id``, ``family``,
    ``label`` and its own :attr:`dialect`; everything else is inherited (see the module docstring)."""

    kind = "character"
    suffixes: ClassVar[tuple[str, ...]] = (".png", ".json", ".apng")
    extension = ".json"
    containers: ClassVar[tuple[Container, ...]] = (
        Container("json", (".json",), "json", images=True),
        Container("png", (".png", ".apng"), "png", images=True),
    )
    #: the app's own layer on the shared mapping (its ``extensions`` keys), if any
    dialect: ClassVar[TavernDialect | None] = None
    #: every layer applied, in order: the shared ones (:data:`SHARED_DIALECTS`) then :attr:`dialect`
    dialects: ClassVar[tuple[TavernDialect, ...]] = shared_dialects()
    #: what the app's file wraps around the card (:class:`CardEnvelope`; default: nothing)
    envelope: ClassVar[CardEnvelope] = BARE
    twin_type = CardTwin
    coverage = tavern_coverage(dialects)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "dialect" in cls.__dict__ and "dialects" not in cls.__dict__ and cls.dialect is not None:
            cls.dialects = (*shared_dialects(), cls.dialect)
            if "coverage" not in cls.__dict__:
                cls.coverage = tavern_coverage(cls.dialects)
        if (
            "id" in cls.__dict__
            and cls.format is not None
            and not isinstance(cls.format.detector, CardDetector)
        ):
            raise TypeError(
                f"{cls.__name__}: a Tavern card app detects through the lineage's detector; its row in"
                " formats/table.py names a tavern.detect.CardDetector"
            )

    # -- detect ----------------------------------------------------------------------------------

    def detect(self, s: Sniff) -> float:
        """The lineage's detector for a codec with no row: a card marked by one of its dialect's
        ``claims``, or the file its :attr:`envelope` scores (a declared codec detects by its row)."""
        return self.detector()(s)

    @classmethod
    def detector(cls) -> CardDetector:
        """The lineage's detector with this codec's own dialect and envelope."""
        claims = cls.dialect.claims if cls.dialect is not None else frozenset()
        return CardDetector(CardMark.claiming(claims) if claims else None, cls.envelope.score)

    # -- decode ----------------------------------------------------------------------------------

    def decode(self, s: Sniff) -> Decoded:
        if s.is_png and self.container_named("png") is not None:
            return self._decode_png(s)
        return Decoded(self.decode_tree(s, s.require_json()))

    def decode_tree(
        self,
        s: Sniff,
        tree: Any,
        *,
        media: Resolver | None = None,
        more_assets: list[dict[str, Any]] | None = None,
        **escrow: Any,
    ) -> list[CanonicalEntity]:
        """A parsed file (a card, or the :attr:`envelope` around one) as the card entity plus its
        linked lorebook and regex set; ``media`` finds the bytes of the card's media items (a PNG
        card's own image); ``more_assets`` are media the file holds outside the card tree (a
        Lumiverse zip's expressions)."""
        ctx = MapContext("$")
        card_tree = self.envelope.card(tree)
        body, shape = self._card_body(tree, card_tree, ctx)
        data = card_tree["data"] if shape.wrapped else card_tree
        linked: list[CanonicalEntity] = []
        data_path = (*self.envelope.at, "data") if shape.wrapped else self.envelope.at
        book = data.get("character_book")
        if book is not None:
            bctx = ctx.child(*data_path, "character_book")
            if not isinstance(book, dict):
                raise wrong(bctx.path, "a character_book object", book)
            bbody = book_to_body(book, bctx)
            be = self.entity(
                s, bbody, raw=book, part=("lorebook", "character_book"), kind="lorebook", mark=BOOK_TAG
            )
            seal.keep_unless_marked(be.body, BOOK_TAG, book, bbody, input_bytes=s.size)  # for embed_book
            be.warnings.extend(bctx.warnings)
            linked.append(be)
        ext = data.get("extensions")
        scripts = ext.get("regex_scripts") if isinstance(ext, dict) else None
        if scripts is not None and scripts != []:
            rctx = MapContext(ctx.at(*data_path, "extensions", "regex_scripts"))
            rbody = scripts_to_body(scripts, name="", ctx=rctx)
            re_ = self.entity(
                s, rbody, raw=scripts, part=("regex", "regex_scripts"), kind="regex", mark=SCRIPTS_TAG
            )
            seal.keep_unless_marked(
                re_.body, SCRIPTS_TAG, scripts, rbody, input_bytes=s.size
            )  # for embed_scripts
            re_.warnings.extend(rctx.warnings)
            linked.append(re_)

        mapped = body  # the card tree's own mapping: what base_body maps again
        mark: str | None = self._card_tag
        if more_assets:  # a copy: the mapped dict stays the card tree's own mapping
            m = body.get("media") or {}
            body = {**body, "media": {**m, "assets": [*(m.get("assets") or []), *more_assets]}}
            mark = None  # not the body the twin maps to
        card = self.entity(s, body, raw=tree, media=media, mark=mark, **escrow)
        seal.keep_unless_marked(card.body, self._card_tag, tree, mapped, input_bytes=s.size)  # for base_body
        card.warnings.extend(ctx.warnings)
        if linked:
            card.links = {KNOWLEDGE_REFS: [e.id for e in linked]}
        return [card, *linked]

    def _card_body(
        self, tree: dict[str, Any], card_tree: dict[str, Any], ctx: MapContext
    ) -> tuple[dict[str, Any], CardShape]:
        """The body of a file (its card through the dialects, then the envelope's own fields)."""
        body, shape = card_to_body(card_tree, ctx.child(*self.envelope.at), dialects=self.dialects)
        self.envelope.read(tree, body, ctx)
        return body, shape

    def _decode_png(self, s: Sniff) -> Decoded:
        pf = s.require_png()
        errors: list[tuple[int, str | None, Malformed]] = []
        texts = png.text_chunks(pf.chunks, keywords=CARD_KEYWORDS, errors=errors)
        found: list[png.TextChunk | Malformed] = []
        for kw in CARD_KEYWORDS:
            t = next((t for t in texts if t.keyword.lower() == kw), None)
            if t is not None:
                found.append(t)
            else:
                broken = next((e for _, k, e in errors if k == kw), None)
                if broken is not None:
                    found.append(broken)
        if not found:
            raise NotRecognized("PNG has no chara or ccv3 text chunk: not a character card")
        first_error: BunzaiError | None = None
        resolve = png_media(s, pf)
        for item in found:
            try:
                if isinstance(item, Malformed):
                    raise item
                kw = item.keyword.lower()
                tree = sniff_payload_tree(s, item)
                if not isinstance(tree, dict):
                    raise wrong("$", f"the {kw} chunk to hold a card object", tree)
                entities = self.decode_tree(
                    s, tree, media=resolve, blobs={"image": s.data}, png={"payload": kw}
                )
            except (BunzaiError, ValidationError) as exc:
                err = (
                    validation_failed(exc, uri=s.uri, codec=self.id)
                    if isinstance(exc, ValidationError)
                    else exc
                )
                if first_error is None:
                    first_error = err
                continue
            if first_error is not None:
                entities[0].warnings.insert(
                    0, f"ccv3 chunk unusable ({_one_line(first_error)}); the card was read from chara"
                )
            return Decoded(entities)
        assert first_error is not None
        raise first_error

    # -- encode ----------------------------------------------------------------------------------

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        twin = entity.twin(self.id)
        raw = twin.raw if twin else None
        if not isinstance(raw, dict):
            twin = raw = None
        blob = twin.blob("image") if twin else None
        want = self.container(entity, ctx, blob)
        if want == "png":
            carrier = choose(entity, ctx, twin_png=blob)
            body = card_body(entity, carrier)
        else:
            # a JSON card holds its images as data: URLs (CCv3 assets)
            carrier = None
            body = media_mod.wire(entity.body, entity.media, inline=lambda _p, _a: True)
        assert isinstance(body, CharacterBody)

        if raw is not None:
            tree, delta = self.overlay_tree(entity, raw, ctx, body)
        else:
            tree, delta = self.fresh_tree(entity, ctx, body), None

        if carrier is None:
            return orjson.dumps(tree, option=orjson.OPT_INDENT_2) + b"\n"
        if carrier.source == "twin" and isinstance(twin, CardTwin) and blob is not None:
            return self._png_with_twin(twin, blob, tree, delta)
        return write_png(carrier.image, tree)

    def container(self, entity: CanonicalEntity, ctx: EmitContext, blob: bytes | None) -> str:
        """``json`` or ``png``: the one asked for, else the one the entity came in, else a PNG when
        there is a picture to write it into (the portrait's bytes or a caller's image); always
        ``json`` for a codec without a PNG container (an app's JSON envelope)."""
        if self.container_named("png") is None:
            return "json"
        want = ctx.options.get("container")
        if want is not None:
            if want not in ("json", "png"):
                raise Unsupported(f"{self.id} writes json or png containers, not {want!r}")
            return str(want)
        twin = entity.twin(self.id)
        if twin is not None and isinstance(twin.raw, dict):
            return "png" if blob is not None else "json"
        portrait = body_as(entity, CharacterBody).media.portrait
        has_image = media_mod.bytes_of(entity.media, portrait) is not None
        return "png" if has_image or ctx.options.get("image") is not None else "json"

    def fresh_tree(
        self, entity: CanonicalEntity, ctx: EmitContext, body: CharacterBody | None = None
    ) -> dict[str, Any]:
        """A fresh file for the entity (a CCv3 card, or the :attr:`envelope`'s layout) with its
        linked lorebook and regex set embedded."""
        body = body if body is not None else _wired(entity)
        book, scripts = fresh_links(self.id, entity, ctx, self.script_sets(entity, ctx))
        return self.file_tree(body, self.envelope.shape, None, ctx, book=book, regex_scripts=scripts)

    def file_tree(
        self,
        body: CharacterBody,
        shape: CardShape,
        twin: dict[str, Any] | None,
        ctx: EmitContext | None = None,
        **links: Any,
    ) -> dict[str, Any]:
        """The file for ``body``: its card in ``shape`` (with ``links``, ``book``/``regex_scripts``
        for :func:`~bunzai_codecs.formats.tavern.fields.body_to_card`) in the :attr:`envelope`
        (see :meth:`CardEnvelope.write` for ``twin`` and ``ctx``)."""

        def card_of(b: CharacterBody) -> dict[str, Any]:
            return body_to_card(b, shape, dialects=self.dialects, **links)

        return self.envelope.write(body, card_of, twin, ctx)

    @property
    def _card_tag(self) -> str:
        # the card mapping depends on the codec's dialects: one basecache tag per codec
        return f"tavern-card:{self.id}"

    def _mapped(self, raw: dict[str, Any]) -> dict[str, Any]:
        """The body dict the mapper makes of the twin's tree (kept from the decode when it can be)."""
        body = basecache.recall(self._card_tag, raw)
        if body is None:
            body, _ = self._card_body(raw, self.envelope.card(raw), MapContext("$"))
        return cast(dict[str, Any], body)

    def overlay_tree(
        self,
        entity: CanonicalEntity,
        raw: dict[str, Any],
        ctx: EmitContext,
        body: CharacterBody | None = None,
    ) -> tuple[dict[str, Any], tuple[Any, Any] | None]:
        """The twin with the body's edits and the re-embedded links applied; ``raw`` itself when
        nothing changed. Also returns the ``(base, new)`` native trees of an edit (for the PNG
        backfill), or ``None``. ``body`` is the entity's body as the mapper writes it
        (``core.media.wire``; default: images with bytes as data: URLs)."""
        body = body if body is not None else _wired(entity)
        shape = card_shape(self.envelope.card(raw))
        delta = None
        # unedited: found without mapping or validating the base where the decoder's mark or
        # holds_mapped can tell
        mapped: list[dict[str, Any]] = []

        def base_dict() -> dict[str, Any]:
            if not mapped:
                mapped.append(self._mapped(raw))
            return mapped[0]

        if unedited(body, base_dict, tag=self._card_tag, raw=raw) or body == (
            base_body := CharacterBody.model_validate(base_dict())
        ):
            tree = raw
        else:
            base = self.file_tree(base_body, shape, raw)
            new = self.file_tree(body, shape, raw)
            tree = merge3(raw, base, new)
            delta = (base, new)

        at = (*self.envelope.at, "data") if shape.wrapped else self.envelope.at
        return relink(self.id, entity, ctx, tree, at, self.script_sets(entity, ctx)), delta

    def script_sets(self, entity: CanonicalEntity, ctx: EmitContext) -> list[CanonicalEntity]:
        """The linked regex sets the card's ``extensions.regex_scripts`` holds (all of them; an
        app whose file keeps some elsewhere narrows this)."""
        return ctx.refs(entity, "regex")

    def _png_with_twin(
        self, twin: CardTwin, blob: bytes, tree: dict[str, Any], delta: tuple[Any, Any] | None
    ) -> bytes:
        if tree is twin.raw:
            return blob  # nothing changed: the file as it was read
        primary = str((twin.png or {}).get("payload", CCV3))

        def backfill(own: dict[str, Any]) -> dict[str, Any]:
            # the other chunk's own tree with the same edit and the same embedded links
            merged = apply_delta(own, delta[0], delta[1]) if delta is not None else own
            at = ("data",) if isinstance(tree.get("data"), dict) else ()
            book, scripts = embedded_links(tree, at)
            return apply_links(merged, ("data",) if card_shape(merged).wrapped else (), book, scripts)

        return rewrite_png(blob, primary, tree, backfill)


def _wired(entity: CanonicalEntity) -> CharacterBody:
    """The body with every image that has bytes as a data: URL (what a JSON card holds)."""
    body = media_mod.wire(body_as(entity, CharacterBody), entity.media, inline=lambda _p, _a: True)
    assert isinstance(body, CharacterBody)
    return body


def apply_delta(raw: Any, base: Any, new: Any) -> Any:
    """Apply only what differs between ``base`` and ``new`` to ``raw`` (which may be a different
    tree, e.g. a card's V2 backfill): keys ``new`` adds or changes are set, keys it removes are
    dropped, everything else of ``raw`` stays. ``raw`` is never mutated."""
    if new == base:
        return raw
    if not (isinstance(raw, dict) and isinstance(base, dict) and isinstance(new, dict)):
        return new
    out = dict(raw)
    for k, v in new.items():
        if k in base:
            if v == base[k]:
                continue
            out[k] = apply_delta(raw[k], base[k], v) if k in raw else v
        else:
            out[k] = v
    for k in base:
        if k not in new:
            out.pop(k, None)
    return out


def _one_line(e: BunzaiError) -> str:
    where = e.where()
    msg = " ".join(e.message.split())
    return f"{msg} at {where}" if where else msg


__all__ = [
    "BARE",
    "SHARED_DIALECTS",
    "CardEnvelope",
    "CardTwin",
    "CardWriter",
    "TavernCard",
    "apply_delta",
    "card_score",
    "shared_dialects",
    "tavern_coverage",
]


def png_media(s: Sniff, pf: png.PngFile) -> Resolver:
    """Where a Tavern PNG card's media bytes are: an ``__asset:N`` ref is the ``chara-ext-asset_:N``
    chunk (CCv3, RisuAI), and a portrait that means the card image is the PNG without its card
    chunks (``_shared/carrier``)."""
    image = picture(s.data, parsed=pf)
    chunks: dict[str, bytes] | None = None

    def asset_chunks() -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        picked = [c for c in pf.chunks if (png.keyword_of(c) or "").startswith(ASSET_CHUNK)]
        for t in png.text_chunks(picked, errors=[]):
            key = t.keyword.lower()[len(ASSET_CHUNK) :].removeprefix(":")
            try:
                out.setdefault(key, base64.b64decode(b"".join(t.text.split()), validate=True))
            except (binascii.Error, ValueError):
                continue
        return out

    def resolve(path: str, a: Any) -> bytes | None:
        nonlocal chunks
        if a.ref[:8].lower() == ASSET_REF:
            chunks = asset_chunks() if chunks is None else chunks
            got = chunks.get(a.ref[len(ASSET_REF) :].lower())
            if got is not None:
                return got
        return portrait_resolver(image)(path, a)

    return resolve
