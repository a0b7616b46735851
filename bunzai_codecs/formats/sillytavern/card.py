"""``sillytavern``: Tavern character cards — CCv1 flat JSON, CCv2/CCv3 JSON, PNG and APNG cards.

Detection (0.9, the generic Tavern reader; app-specific readers of the same shape bid higher):

- a PNG with a ``ccv3`` or ``chara`` text chunk (any of tEXt/zTXt/iTXt, keyword in any case);
- JSON with ``spec`` ``chara_card_v2``/``chara_card_v3`` (``data`` is checked by the decoder, so a
  card missing it is reported, not ignored);
- a flat object with a string ``name`` plus ``first_mes`` or ``mes_example`` (0.9) or only other
  character text fields (0.6).

Decode: the card tree maps through ``_shared/tavern.py``; an embedded ``character_book`` becomes a
linked lorebook entity and ``extensions.regex_scripts`` a linked regex-set entity (both via
``knowledgeRefs``; their twins are stored under this codec's id). PNG: ``ccv3`` is read before
``chara``; when ``ccv3`` cannot be decoded the card is read from ``chara`` and the entity carries a
warning. Payloads are decoded by their shape, never by their label. The PNG file itself rides in the
escrow blobs (``blobs.image``); it is ``media.portrait`` (CCv3's ``ccdefault:``) unless the card
lists ``assets``.

Encode: a same-format export overlays the body's edits on the twin (``core.overlay.merge3``) and
re-embeds the linked lorebook and regex set; a PNG keeps every chunk, its chunk layout, and the
twin's bytes outright when nothing changed. A fresh export is a CCv3 JSON card, or a PNG (both
``chara`` and ``ccv3``, as SillyTavern writes them) when ``EmitContext.options["image"]`` holds PNG
bytes. ``options["container"]`` (``"json"``/``"png"``) picks the container explicitly.
"""

from __future__ import annotations

import base64
import binascii
import functools
import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import orjson
from pydantic import ValidationError

from bunzai_codecs.core import basecache, png
from bunzai_codecs.core import media as media_mod
from bunzai_codecs.core.codec import Codec, Container, Coverage, EmitContext, body_as, validation_failed
from bunzai_codecs.core.entity import KNOWLEDGE_REFS, CanonicalEntity, Decoded
from bunzai_codecs.core.errors import BunzaiError, Malformed, NotRecognized, Unsupported
from bunzai_codecs.core.escrow import Twin, facet
from bunzai_codecs.core.overlay import merge3
from bunzai_codecs.core.sniff import Sniff, parse_json
from bunzai_codecs.entities import CharacterBody, RegexSetBody
from bunzai_codecs.formats._shared.carrier import card_body, choose, picture, portrait_resolver
from bunzai_codecs.formats._shared.character_book import BOOK_TAG, book_to_body, embed_book
from bunzai_codecs.formats._shared.links import DROP, KEEP, keep_or_drop
from bunzai_codecs.formats._shared.st_regex import (
    SCRIPTS_TAG,
    body_to_scripts,
    embed_scripts,
    scripts_to_body,
)
from bunzai_codecs.formats._shared.tavern import (
    CARD_SPECS,
    SPEC_V2,
    SPEC_V3,
    TAVERN_COVERAGE,
    V3_SHAPE,
    CardShape,
    TavernDialect,
    body_to_card,
    card_shape,
    card_to_body,
)
from bunzai_codecs.formats._shared.wire import MapContext, wrong
from bunzai_codecs.formats.agnai.tavern_ext import AgnaiDialect
from bunzai_codecs.formats.chub.dialect import ChubDialect

if TYPE_CHECKING:
    from bunzai_codecs.core.media import Resolver

CCV3 = "ccv3"
CHARA = "chara"
CARD_KEYWORDS = (CCV3, CHARA)
#: CCv3 asset chunks (``chara-ext-asset_:N``, also without the colon) and the refs naming them
ASSET_CHUNK = "chara-ext-asset_"
ASSET_REF = "__asset:"

#: strings that make a flat object a character (with a string ``name``)
_STRONG_FLAT = ("first_mes", "mes_example")
_WEAK_FLAT = (
    "description",
    "personality",
    "scenario",
    "creator_notes",
    "creatorcomment",
    "system_prompt",
    "post_history_instructions",
)

#: "absent" in a twin lookup (distinct from a present null)
_ABSENT: Any = object()


def card_score(t: dict[str, Any]) -> float:
    """The detection score of a parsed JSON object as a Tavern card (see the module docstring)."""
    spec = t.get("spec")
    if spec is not None:
        return 0.9 if isinstance(spec, str) and spec in CARD_SPECS else 0.0
    if "data" in t or "entries" in t or not isinstance(t.get("name"), str):
        return 0.0  # `entries`: a lorebook ({name, description, entries}), never a flat card
    for k in _STRONG_FLAT:
        if isinstance(t.get(k), str):
            return 0.9
    for k in _WEAK_FLAT:
        if isinstance(t.get(k), str):
            return 0.6
    return 0.6 if isinstance(t.get("alternate_greetings"), list) else 0.0


def payload_tree(t: png.TextChunk, offset: int) -> Any:
    """A card text chunk's JSON: base64 as Tavern apps write it (whitespace and missing padding
    tolerated), or bare JSON text (``{``...) as some tools do. Typed errors name the chunk."""
    raw = t.text.strip()
    kw = t.keyword
    if raw[:1] == b"{":
        data = raw
    else:
        b64 = b"".join(raw.split())
        if len(b64) % 4:
            b64 += b"=" * (-len(b64) % 4)
        try:
            data = base64.b64decode(b64, validate=True)
        except (binascii.Error, ValueError):
            raise Malformed(f"{t.chunk_type} {kw!r} chunk is not valid base64", offset=offset) from None
    try:
        return parse_json(data, what=f"{kw} chunk JSON")
    except Malformed as exc:
        exc.offset = offset
        raise


def sniff_payload_tree(s: Sniff, t: png.TextChunk) -> Any:
    """``payload_tree`` of text chunk ``t`` of ``s``'s PNG (offset: the chunk's own), parsed once
    per input: every detector that looks into a PNG card (RoleCall, Lumiverse...) and the decoder
    share the one parse. The tree is shared, never copied (it becomes the escrow twin)."""
    pf = s.png
    offset = pf.chunks[t.index].offset if pf is not None and t.index < len(pf.chunks) else 0
    return s.memo(("png-card-payload", t.index), lambda: payload_tree(t, offset))


def encode_payload(tree: Any, *, base64_form: bool = True) -> bytes:
    """A card tree as a text-chunk value: base64 of compact UTF-8 JSON (SillyTavern's form)."""
    data = orjson.dumps(tree)
    return base64.b64encode(data) if base64_form else data


def relabel(tree: dict[str, Any], spec: str, version: str) -> dict[str, Any]:
    """``tree`` with only ``spec``/``spec_version`` changed (SillyTavern's ``chara``/``ccv3`` pair)."""
    out = dict(tree)
    if "spec" in out or "data" in out:
        out["spec"] = spec
        out["spec_version"] = version
    return out


@dataclass(eq=False)
class CardTwin(Twin):
    """A Tavern card's escrow: the PNG file (``blobs.image``) and which of its card chunks the card
    was read from (``png.payload``: ``ccv3`` or ``chara``); a Lumiverse zip's card member
    (``zip.card``, the archive in ``blobs.archive``); ``module`` marks the regex set of a Lumiverse
    zip's modules file."""

    png: dict[str, Any] | None = facet(dict)
    zip: dict[str, Any] | None = facet(dict)
    module: bool | None = facet(bool)


class SillyTavernCard(Codec):
    """SillyTavern and the Tavern card lineage: CCv1/V2/V3 JSON and PNG/APNG cards."""

    id = "sillytavern"
    kind = "character"
    family = "sillytavern"
    label = "SillyTavern / Tavern card (CCv1-v3 JSON, PNG, APNG)"
    suffixes: ClassVar[tuple[str, ...]] = (".png", ".json", ".apng")
    extension = ".json"
    containers: ClassVar[tuple[Container, ...]] = (
        Container("json", (".json",), "json", images=True),
        Container("png", (".png", ".apng"), "png", images=True),
    )
    #: app layers applied on top of the shared Tavern mapping (e.g. Agnai's ``extensions.agnai``):
    #: add a ``TavernDialect`` here to map an app's keys on SillyTavern cards. Chub's
    #: ``extensions.chub`` is a lens onto media (``formats/chub/dialect.py``)
    dialects: ClassVar[tuple[TavernDialect, ...]] = (AgnaiDialect(), ChubDialect())
    twin_type = CardTwin
    coverage = functools.reduce(operator.or_, (d.coverage for d in dialects), TAVERN_COVERAGE) | Coverage.of(
        # one `depth_prompt` slot: a list of several injections is not kept (the Tavern note says which
        # one is written), so no injection path is claimed
        excludes=["prompts.depthInjections"],
    )

    # -- detect ----------------------------------------------------------------------------------

    def detect(self, s: Sniff) -> float:
        if s.is_png:
            # keywords only: nothing is inflated here (an unrelated zTXt bomb costs nothing), and a
            # card chunk that will not decode is still claimed so the decoder can say what is wrong
            pf = s.png
            if pf is None:
                return 0.0
            return 0.9 if any(_card_keyword(c) is not None for c in pf.chunks) else 0.0
        t = s.json_object
        return card_score(t) if t is not None else 0.0

    # -- decode ----------------------------------------------------------------------------------

    def decode(self, s: Sniff) -> Decoded:
        if s.is_png:
            return self._decode_png(s)
        tree = s.require_json()
        if not isinstance(tree, dict):
            raise wrong("$", "a character card object", tree)
        return Decoded(self.decode_tree(s, tree))

    def decode_tree(
        self,
        s: Sniff,
        tree: dict[str, Any],
        *,
        media: Resolver | None = None,
        more_assets: list[dict[str, Any]] | None = None,
        **escrow: Any,
    ) -> list[CanonicalEntity]:
        """A parsed card tree as the card entity plus its linked lorebook and regex set; ``media``
        finds the bytes of the card's media items (a PNG card's own image); ``more_assets`` are
        media the file holds outside the card tree (a Lumiverse zip's expressions)."""
        ctx = MapContext("$")
        body, shape = card_to_body(tree, ctx, dialects=self.dialects)
        data = tree["data"] if shape.wrapped else tree
        linked: list[CanonicalEntity] = []
        data_path = ("data",) if shape.wrapped else ()
        book = data.get("character_book")
        if book is not None:
            bctx = ctx.child(*data_path, "character_book")
            if not isinstance(book, dict):
                raise wrong(bctx.path, "a character_book object", book)
            bbody = book_to_body(book, bctx)
            basecache.remember(BOOK_TAG, book, bbody, input_bytes=s.size)  # for embed_book
            be = self.entity(s, bbody, raw=book, part=("lorebook", "character_book"), kind="lorebook")
            be.warnings.extend(bctx.warnings)
            linked.append(be)
        ext = data.get("extensions")
        scripts = ext.get("regex_scripts") if isinstance(ext, dict) else None
        if scripts is not None and scripts != []:
            rctx = MapContext(ctx.at(*data_path, "extensions", "regex_scripts"))
            rbody = scripts_to_body(scripts, name="", ctx=rctx)
            basecache.remember(SCRIPTS_TAG, scripts, rbody, input_bytes=s.size)  # for embed_scripts
            re_ = self.entity(s, rbody, raw=scripts, part=("regex", "regex_scripts"), kind="regex")
            re_.warnings.extend(rctx.warnings)
            linked.append(re_)

        basecache.remember(self._card_tag, tree, body, input_bytes=s.size)  # for base_body
        if more_assets:  # a copy: the remembered dict is the card tree's own mapping
            m = body.get("media") or {}
            body = {**body, "media": {**m, "assets": [*(m.get("assets") or []), *more_assets]}}
        card = self.entity(s, body, raw=tree, media=media, **escrow)
        card.warnings.extend(ctx.warnings)
        if linked:
            card.links = {KNOWLEDGE_REFS: [e.id for e in linked]}
        return [card, *linked]

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
        there is a picture to write it into (the portrait's bytes or a caller's image)."""
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
        """A CCv3 card for the entity with its linked lorebook and regex set embedded."""
        body = body if body is not None else _wired(entity)
        book = self._book(entity, ctx, None)
        scripts = self._scripts(entity, ctx, None)
        return body_to_card(
            body,
            V3_SHAPE,
            dialects=self.dialects,
            book=None if book is KEEP or book is DROP else book,
            regex_scripts=None if scripts is KEEP or scripts is DROP else scripts,
        )

    @property
    def _card_tag(self) -> str:
        # the card mapping depends on the codec's dialects: one basecache tag per codec
        return f"tavern-card:{self.id}"

    def base_body(self, raw: dict[str, Any]) -> CharacterBody:
        """The body the twin's own tree decodes to (what an unedited entity holds)."""
        body = basecache.recall(self._card_tag, raw)
        if body is None:
            body, _ = card_to_body(raw, dialects=self.dialects)
        return CharacterBody.model_validate(body)

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
        shape = card_shape(raw)
        base_body = self.base_body(raw)
        delta = None
        if body == base_body:
            tree = raw
        else:
            base = body_to_card(base_body, shape, dialects=self.dialects)
            new = body_to_card(body, shape, dialects=self.dialects)
            tree = merge3(raw, base, new)
            delta = (base, new)

        data = tree.get("data") if shape.wrapped else tree
        if not isinstance(data, dict):
            return tree, delta
        old_book = data.get("character_book", _ABSENT)
        book = self._book(entity, ctx, None if old_book is _ABSENT else old_book)
        ext = data.get("extensions")
        old_scripts = ext.get("regex_scripts", _ABSENT) if isinstance(ext, dict) else _ABSENT
        scripts = self._scripts(entity, ctx, None if old_scripts is _ABSENT else old_scripts)
        return _apply_links(tree, shape, book, scripts), delta

    def _book(self, entity: CanonicalEntity, ctx: EmitContext, old: Any) -> Any:
        """The ``character_book`` to embed: a linked lorebook (through its twin when it has one),
        ``KEEP`` the twin's copy, or ``DROP`` it (the links say there is no lorebook any more)."""
        books = ctx.refs(entity, "lorebook")
        if books:
            b = books[0]
            ctx.embed(b)
            return embed_book(b, self.id)
        return keep_or_drop(entity, ctx, "lorebook", old)

    def _scripts(self, entity: CanonicalEntity, ctx: EmitContext, old: Any) -> Any:
        sets = ctx.refs(entity, "regex")
        if sets:
            for r in sets:
                ctx.embed(r)
            if len(sets) == 1:
                return embed_scripts(sets[0], self.id)
            out: list[Any] = []
            for r in sets:
                out.extend(body_to_scripts(_regex(r)))
            return out
        if isinstance(old, list) and not old:
            return KEEP  # an empty list is not an embedded set
        return keep_or_drop(entity, ctx, "regex", old)

    def _png_with_twin(
        self, twin: CardTwin, blob: bytes, tree: dict[str, Any], delta: tuple[Any, Any] | None
    ) -> bytes:
        if tree is twin.raw:
            return blob  # nothing changed: the file as it was read
        pf = png.parse(blob)
        primary = str((twin.png or {}).get("payload", CCV3))
        errors: list[Any] = []
        texts = png.text_chunks(pf.chunks, keywords=CARD_KEYWORDS, errors=errors)
        by_index = {t.index: t for t in texts}
        seen: set[str] = set()
        chunks: list[png.Chunk] = []
        for i, c in enumerate(pf.chunks):
            kw = _card_keyword(c)
            if kw is None:
                chunks.append(c)
                continue
            if kw in seen:
                continue  # a stale duplicate: SillyTavern keeps one chunk per keyword
            seen.add(kw)
            t = by_index.get(i)
            payload = tree if kw == primary else _backfill(t, c, tree, delta, kw)
            chunks.append(_rewrite_chunk(c, t, payload))
        return png.build(chunks, pf.trailing)


def write_png(image: bytes, tree: dict[str, Any]) -> bytes:
    """``image`` with a fresh card in it, as SillyTavern writes one: every existing ``chara``/``ccv3``
    chunk removed, then ``chara`` (V2 label) and ``ccv3`` (V3 label) inserted before ``IEND``."""
    chara = relabel(tree, SPEC_V2, "2.0")
    ccv3 = relabel(tree, SPEC_V3, "3.0")
    return png.replace_text(
        image,
        remove=CARD_KEYWORDS,
        add=[
            png.make_text_chunk(CHARA, encode_payload(chara)),
            png.make_text_chunk(CCV3, encode_payload(ccv3)),
        ],
    )


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


def _wired(entity: CanonicalEntity) -> CharacterBody:
    """The body with every image that has bytes as a data: URL (what a JSON card holds)."""
    body = media_mod.wire(body_as(entity, CharacterBody), entity.media, inline=lambda _p, _a: True)
    assert isinstance(body, CharacterBody)
    return body


def _regex(entity: CanonicalEntity) -> RegexSetBody:
    body = entity.body
    assert isinstance(body, RegexSetBody)
    return body


def _apply_links(tree: dict[str, Any], shape: CardShape, book: Any, scripts: Any) -> dict[str, Any]:
    """Set or drop the embedded book and scripts, copying only the dicts on the way (``tree`` may be
    the twin, which is never mutated)."""
    data: dict[str, Any] = tree["data"] if shape.wrapped else tree
    raw_ext = data.get("extensions")
    ext: dict[str, Any] = raw_ext if isinstance(raw_ext, dict) else {}
    book_changed = book is DROP and "character_book" in data
    if book is not KEEP and book is not DROP:
        old = data.get("character_book", _ABSENT)
        book_changed = book is not old and book != old
    scripts_changed = scripts is DROP and "regex_scripts" in ext
    if scripts is not KEEP and scripts is not DROP:
        old_s = ext.get("regex_scripts", _ABSENT)
        scripts_changed = scripts is not old_s and scripts != old_s
    if not book_changed and not scripts_changed:
        return tree
    data = dict(data)
    if book_changed:
        if book is DROP:
            del data["character_book"]
        else:
            data["character_book"] = book
    if scripts_changed:
        ext = dict(ext)
        if scripts is DROP:
            ext.pop("regex_scripts", None)
        else:
            ext["regex_scripts"] = scripts
        data["extensions"] = ext
    if not shape.wrapped:
        return data
    out = dict(tree)
    out["data"] = data
    return out


def _card_keyword(c: png.Chunk) -> str | None:
    if c.type not in (b"tEXt", b"zTXt", b"iTXt"):
        return None
    sep = c.data.find(b"\0")
    if sep < 0:
        return None
    kw = c.data[:sep].decode("latin-1").lower()
    return kw if kw in CARD_KEYWORDS else None


def _backfill(
    t: png.TextChunk | None,
    c: png.Chunk,
    tree: dict[str, Any],
    delta: tuple[Any, Any] | None,
    kw: str,
) -> dict[str, Any]:
    """The other card chunk's new payload: its own tree with the same edit and the same embedded
    links applied, or (when it does not decode) the primary tree relabelled as SillyTavern writes it."""
    own = None
    if t is not None:
        try:
            own = payload_tree(t, c.offset)
        except Malformed:
            own = None
    if isinstance(own, dict):
        merged = apply_delta(own, delta[0], delta[1]) if delta is not None else own
        return _same_links(merged, tree)
    if kw == CHARA:
        return relabel(tree, SPEC_V2, "2.0")
    return relabel(tree, SPEC_V3, "3.0")


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


def _same_links(backfill: dict[str, Any], primary: dict[str, Any]) -> dict[str, Any]:
    """Give the backfill the primary's embedded book and scripts (SillyTavern writes one card twice)."""
    pd = primary.get("data")
    pdata: dict[str, Any] = pd if isinstance(pd, dict) else primary
    bshape = card_shape(backfill)
    book = pdata.get("character_book", DROP)
    pext = pdata.get("extensions")
    scripts = pext.get("regex_scripts", DROP) if isinstance(pext, dict) else DROP
    return _apply_links(backfill, bshape, book, scripts)


def _rewrite_chunk(c: png.Chunk, t: png.TextChunk | None, tree: dict[str, Any]) -> png.Chunk:
    sep = c.data.find(b"\0")
    keyword = c.data[:sep].decode("latin-1")
    bare = t is not None and t.text.lstrip()[:1] == b"{"
    value = encode_payload(tree, base64_form=not bare)
    if t is None:
        return png.make_text_chunk(keyword, value)
    return png.make_text_chunk(
        keyword,
        value,
        t.chunk_type,
        compress=t.compressed,
        language=t.language,
        translated_keyword=t.translated_keyword,
    )


def _one_line(e: BunzaiError) -> str:
    where = e.where()
    msg = " ".join(e.message.split())
    return f"{msg} at {where}" if where else msg


__all__ = [
    "SillyTavernCard",
    "apply_delta",
    "card_score",
    "encode_payload",
    "payload_tree",
    "relabel",
    "sniff_payload_tree",
    "write_png",
]
