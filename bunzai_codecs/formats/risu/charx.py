"""``risu``: RisuAI's ``.charx`` character (a zip) and its JPEG+ZIP hybrid (docs/formats/risu.md#character-risu).

A ``.charx`` holds ``card.json`` (a CCv3 card), ``assets/{type}/{itype}/{name}.{ext}`` files with an
``x_meta/{name}.json`` each, and ``module.risum`` (the card's triggers, regex scripts and Risu-native
lorebook rows). The hybrid is a JPEG with the same zip appended; it is read and written the same way.

Detection: 1.0 for a zip (or a JPEG with a zip after it) that has a ``card.json``.

Decode: ``card.json`` maps through the shared Tavern mapper (``tavern/fields.py``) with the Risu
dialect for ``data.extensions.risuai`` (risuai.py). As Risu's own reader does, module.risum wins:
its ``trigger`` is ``behavior.triggerScripts``, its ``regex`` the linked regex set, its ``lorebook``
the linked lorebook (book settings from ``character_book``); without a module, ``customScripts`` and
``character_book`` are used. Millisecond dates are normalised per field by the mapper. Media refs
keep their ``embeded://`` uris; their ``mime`` is sniffed from the bytes (Risu writes WebP under
``.png`` names). The twin keeps the card tree, every other zip member's bytes, the JPEG before the
zip, the opened module and two safety flags (executable content, privileged).

Encode: the card is overlaid on the twin (unedited fields, raw millisecond dates included, come back
verbatim); every asset byte and x_meta file is written back; an unedited module.risum is written back
byte for byte, an edited one is re-encoded through the gated writer (risum.encode_module). Zip bytes
are deterministic (core/archive.write_zip).
"""

from __future__ import annotations

import base64
import binascii
import re
import uuid
from dataclasses import dataclass
from typing import Any

from bunzai_codecs.core import media
from bunzai_codecs.core.archive import ZIP_DEFLATED, ZIP_STORED, ZipMemberSpec, write_zip
from bunzai_codecs.core.codec import Codec, Container, Coverage, EmitContext
from bunzai_codecs.core.entity import KNOWLEDGE_REFS, CanonicalEntity, Decoded
from bunzai_codecs.core.errors import Malformed, Unsupported
from bunzai_codecs.core.escrow import Twin, facet
from bunzai_codecs.core.overlay import merge3
from bunzai_codecs.core.sniff import Sniff, parse_json
from bunzai_codecs.entities.character import CharacterBody, MediaAsset
from bunzai_codecs.entities.lorebook import LorebookBody
from bunzai_codecs.entities.regex import RegexSetBody
from bunzai_codecs.formats._shared.links import DROP, keep_or_drop
from bunzai_codecs.formats._shared.wire import MapContext
from bunzai_codecs.formats.risu import jsformat, lore, risuai, risum, scripts
from bunzai_codecs.formats.risu.detect import CARD
from bunzai_codecs.formats.tavern import character_book as cbook
from bunzai_codecs.formats.tavern.fields import (
    TAVERN_COVERAGE,
    V3_SHAPE,
    TavernDialect,
    body_to_card,
    card_to_body,
)

MODULE = "module.risum"
#: media item fields a charx does not keep as they were (only the bytes are claimed)
_MEDIA_FIELDS = ("role", "ref", "name", "label", "primary", "mime")
#: the ref of a JPEG+ZIP card's JPEG (the bytes before the zip), an asset of role other
JPEG_REF = "jpeg:image"
JPEG_COVER: dict[str, Any] = {"role": "other", "ref": JPEG_REF, "name": "cover", "mime": "image/jpeg"}
EMBED = "embeded://"  # sic: the spelling CCv3 and Risu use
MEMBER = "zip:"
PREFIX = "prefix"

#: the extensions Risu files each asset ``itype`` under (docs/formats/risu.md#character-risu)
ITYPES = {
    "image": ("png", "jpg", "jpeg", "gif", "webp", "avif"),
    "audio": ("mp3", "wav", "ogg", "flac"),
    "video": ("mp4", "webm", "mov", "avi", "mkv"),
    "model": ("mmd", "obj"),
    "ai": ("safetensors", "cpkt", "onnx"),
    "fonts": ("otf", "ttf", "woff", "woff2"),
    "code": ("js", "ts", "lua"),
}
ASSET_DIRS = ("icon", "emotion", "background", "user_icon")
_UNSAFE = re.compile(r'[<>:"/\\|?*\x00-\x1f]')
_RESERVED = re.compile(r"^(con|prn|aux|nul|com\d|lpt\d)(\..*)?$", re.IGNORECASE)


sniff_mime = media.sniff_mime

_META_TYPES = {
    "image/jpeg": "JPEG",
    "image/png": "PNG",
    "image/gif": "GIF",
    "image/bmp": "BMP",
    "image/avif": "AVIF",
    "image/webp": "WEBP",
}


def x_meta(b: bytes) -> bytes:
    """The ``x_meta/{name}.json`` Risu writes for an asset: a PNG's tEXt chunks, else its type."""
    mime = sniff_mime(b)
    if mime == "image/png":
        from bunzai_codecs.core import png

        try:
            texts = {
                t.keyword: t.text.decode("latin-1")
                for t in png.text_chunks(png.parse(b).chunks)
                if t.chunk_type == "tEXt"
            }
        except Malformed:
            texts = {}
        if texts:
            return jsformat.stringify(texts, 4).encode("utf-8")
    return jsformat.stringify({"type": _META_TYPES.get(mime or "", "Unknown")}).encode("utf-8")


def itype_of(ext: str) -> str:
    for itype, exts in ITYPES.items():
        if ext in exts:
            return itype
    return "other"


def member_name(name: str) -> str:
    """Risu's zip-entry clean-up of an asset name (control and ``<>:"\\|?*`` -> ``_``, trailing dots
    and spaces trimmed, Windows reserved names prefixed); ``/`` is replaced too, so a card's asset
    name is always one path segment (``../../x`` cannot become a member outside ``assets/``)."""
    out = _UNSAFE.sub("_", name).rstrip(". ") or "_"
    return "_" + out if _RESERVED.match(out) else out


def asset_path(atype: str, name: str, ext: str, taken: set[str], n: int) -> str:
    """``assets/{type}/{itype}/{name}.{ext}`` with Risu's rules; a repeated path gets ``_1``, ``_2``
    (the R2 fix, so the card's uri and the zip entry always agree)."""
    folder = atype if atype in ASSET_DIRS else "other"
    name = member_name((name or f"asset_{n}")[:100])
    if ext == "unknown":
        itype, ext = "image", "png"
    else:
        ext = member_name(ext)  # an ext comes from the card too: "png/../../x" must stay one segment
        itype = itype_of(ext)
    base = f"assets/{folder}/{itype}/{name}"
    path = f"{base}.{ext}"
    k = 1
    while path in taken:
        path = f"{base}_{k}.{ext}"
        k += 1
    taken.add(path)
    return path


class RisuDialect(TavernDialect):
    """``data.extensions.risuai`` on a Tavern card (risuai.py).

    ``charx`` leaves the scripts out of card.json, as Risu does when it writes module.risum beside
    it. ``always`` writes the block for every body (Risu's own export); without it the block is
    written only for a body that has Risu data, so another app's Tavern codec can plug this dialect
    in (e.g. for Risu's PNG cards) without adding ``risuai`` to every card it writes.
    """

    name = "risu"
    claims = frozenset({risuai.KEY})

    def __init__(self, *, charx: bool = True, always: bool = True) -> None:
        self.charx = charx
        self.always = always

    def read(self, data: Any, body: dict[str, Any], ctx: MapContext) -> None:
        risuai.read_risuai(data, body, ctx)

    def write(self, body: CharacterBody, data: dict[str, Any]) -> None:
        if self.always or risuai.has_risu_data(body):
            data.setdefault("extensions", {})[risuai.KEY] = risuai.write_risuai(body, charx=self.charx)


CHARX_DIALECT = RisuDialect(charx=True)
DIALECTS: tuple[TavernDialect, ...] = (CHARX_DIALECT,)


def _card_data(card: Any) -> dict[str, Any]:
    if not isinstance(card, dict) or not isinstance(card.get("data"), dict):
        raise Malformed("card.json is not a CCv3 card (no data object)", path="card.json$.data")
    data: dict[str, Any] = card["data"]
    return data


def _module_of(tree: Any) -> dict[str, Any] | None:
    if isinstance(tree, dict) and isinstance(tree.get("module"), dict):
        m: dict[str, Any] = tree["module"]
        return m
    return None


def character_body(
    card: dict[str, Any], module: dict[str, Any] | None, files: dict[str, bytes]
) -> dict[str, Any]:
    """The canonical character (dict) of a card tree, its module and its zip members."""
    ctx = MapContext("$")
    body, _shape = card_to_body(card, ctx, dialects=DIALECTS)
    if module is not None and isinstance(module.get("trigger"), list):
        body.setdefault("behavior", {})["triggerScripts"] = module["trigger"]
    media = body.get("media") or {}
    items = [media.get("portrait"), *(media.get("assets") or [])]
    for m in items:
        if isinstance(m, dict) and isinstance(m.get("ref"), str) and m["ref"].startswith(EMBED):
            b = files.get(m["ref"][len(EMBED) :])
            mime = sniff_mime(b) if b is not None else None
            if mime:
                m["mime"] = mime
    return body


def lore_body(
    card: dict[str, Any], module: dict[str, Any] | None, warnings: list[str]
) -> tuple[dict[str, Any], Any, str] | None:
    """(lorebook body, its twin tree, source) for a card: module rows win over ``character_book``;
    the reader's notes go to ``warnings``."""
    data = _card_data(card)
    cb = data.get("character_book")
    rows = module.get("lorebook") if module is not None else None
    if isinstance(rows, list) and rows:
        body = lore.rows_to_body(rows, at="module.risum$.module.lorebook", warnings=warnings)
        body.update(lore.settings_body(cb))
        return body, rows, "module"
    if cb is not None:
        book = cbook.require_book(cb, "$.data.character_book")
        return cbook.book_to_body(book, MapContext("$.data.character_book", warnings)), book, "character_book"
    return None


def regex_rows_of(card: dict[str, Any], module: dict[str, Any] | None) -> tuple[list[Any], str] | None:
    rows = module.get("regex") if module is not None else None
    if isinstance(rows, list) and rows:
        return rows, "module"
    ext = _card_data(card).get("extensions")
    r = ext.get(risuai.KEY) if isinstance(ext, dict) else None
    cs = r.get("customScripts") if isinstance(r, dict) else None
    if isinstance(cs, list) and cs:
        return cs, "customScripts"
    return None


def _executable(card: dict[str, Any], module: dict[str, Any] | None, body: dict[str, Any]) -> bool:
    beh = body.get("behavior") or {}
    if beh.get("triggerScripts") or beh.get("virtualScript") or beh.get("backgroundHTML"):
        return True
    return bool(module and (module.get("trigger") or module.get("cjs") or module.get("lua")))


@dataclass(eq=False)
class CharxTwin(Twin):
    """A charx's escrow: its member names in order (``members``), the members' bytes
    (``blobs``: ``member:<name>``, and the bytes before the zip), the markers the card carries
    (``hasExecutableContent``, ``privileged``) and its ``module.risum`` (``module``: the tree and
    how its JSON block was written, ``{raw, style}``)."""

    members: list[Any] | None = facet(list)
    has_executable_content: bool | None = facet(bool, wire="hasExecutableContent")
    privileged: bool | None = facet(bool)
    module: dict[str, Any] | None = facet(dict)


class RisuCharxCodec(Codec):
    id = "risu"
    twin_type = CharxTwin
    containers = (
        Container("charx", (".charx",), "zip", images=True),
        Container("jpeg", (".jpeg", ".jpg"), "jpeg", images=True),
    )
    coverage = TAVERN_COVERAGE | Coverage.of(
        "persona.imagePrompt.instructions",
        "persona.imagePrompt.emotionInstructions",
        "persona.imagePrompt.rows",
        "prompts.additionalText",
        "attribution.license",
        "settings.risu",
        "bias",
        "behavior",
        *media.PORTRAIT_BYTES,
        *media.ASSET_BYTES,
        notes=[
            "images keep their bytes as archive files with their true extension (assets/<type>/<kind>/"
            "<name>.<ext>); only their bytes are claimed: a ref reads back as embeded://assets/..., an"
            " embeded:// ref whose bytes are not in the source is left out (Risu refuses a card whose"
            " asset file is missing), and http(s) refs are kept in card.json but skipped by Risu's import",
            "a JPEG+ZIP card's JPEG (Risu renders the main image into it) is an asset with ref jpeg:image;"
            " writing the jpeg container renders the portrait as a JPEG when there is none",
            "module.risum holds the triggers, regex scripts and lorebook rows; an edited module is "
            "re-encoded through the gated .risum writer",
            "voice: only a VITS voice (risuai.vits) is held; other providers have no place",
            "image prompt: prefix, negative, instructions, emotion instructions and the sdData rows; no "
            "suffix or template",
            "extensions.risuai is Risu's own namespace, read into first-class fields (settings.risu, "
            "behavior, bias, persona.imagePrompt...): an opaque risuai bag another codec kept (a Risu PNG "
            "card read as a SillyTavern card) is written into the card and reads back as those fields",
        ],
        # one `depth_prompt` slot (the Tavern note): a list of several injections is not kept
        excludes=[
            "extensions.risuai",
            *(f"media.{item}.{f}" for item in ("portrait", "assets[]") for f in _MEDIA_FIELDS),
            "prompts.depthInjections",
        ],
    )

    # -- decode ----------------------------------------------------------------------------------

    def decode(self, s: Sniff) -> Decoded:
        z = s.require_zip()
        if not z.has(CARD):
            raise Malformed("a .charx needs a card.json (none in the archive)", path=CARD)
        card = parse_json(z.read(CARD), what="card.json")
        _card_data(card)
        files: dict[str, bytes] = {}
        for m in z.members:
            if not m.is_dir and m.name != CARD:
                files[m.name] = z.read(m.name)
        module_tree = None
        style = None
        warnings: list[str] = []
        if MODULE in files:
            try:
                opened = risum.open_module(files[MODULE])
            except Malformed as exc:
                raise Malformed(f"module.risum: {exc.message}", path=exc.path, offset=exc.offset) from None
            module_tree, style = opened.tree, opened.style
            warnings += opened.warnings
        module = _module_of(module_tree)
        if card.get("spec") != "chara_card_v3":
            warnings.append(f"card.json spec is {card.get('spec')!r}; Risu only imports chara_card_v3")
        body = character_body(card, module, files)
        privileged = bool((body.get("behavior") or {}).get("privileged"))
        executable = _executable(card, module, body)
        blobs = {MEMBER + k: v for k, v in files.items()}
        if z.prefix_length:
            blobs[PREFIX] = z.prefix
            if media.sniff_mime(z.prefix) == "image/jpeg":
                # the JPEG of a JPEG+ZIP card (Risu renders the main image into it): an asset too
                m = body.setdefault("media", {})
                m["assets"] = [*(m.get("assets") or []), dict(JPEG_COVER)]
        loose = loose_media(card, files)
        if loose:
            # media files the card does not list (an emotion image packed beside it): assets too
            m = body.setdefault("media", {})
            m["assets"] = [*(m.get("assets") or []), *loose]
        files_and_cover = {**files, JPEG_REF: z.prefix} if z.prefix_length else files
        escrow: dict[str, Any] = {
            "members": list(z.names),
            "blobs": blobs,
            "has_executable_content": executable,
            "privileged": privileged,
        }
        if module_tree is not None:
            escrow["module"] = {"raw": module_tree, "style": style}
        primary = self.entity(s, body, raw=card, media=member_resolver(files_and_cover), **escrow)
        primary.warnings.extend(warnings)
        if executable:
            primary.warnings.append(
                "card carries executable content (triggers/scripts/HTML); kept as data, never run"
            )
        if privileged:
            primary.warnings.append(
                "card requests Risu low-level access (lowLevelAccess); a marker, never a permission"
            )
        entities = [primary]
        links: list[str] = []
        notes: list[str] = []
        lb = lore_body(card, module, notes)
        if lb is not None:
            lbody, lraw, source = lb
            e = self.entity(s, lbody, raw=lraw, part=("lorebook", source), kind="lorebook")
            e.warnings.extend(notes)
            entities.append(e)
            links.append(e.id)
        rx = regex_rows_of(card, module)
        if rx is not None:
            rows, source = rx
            name = body["identity"]["name"]
            notes = []
            e = self.entity(
                s,
                scripts.rows_to_body(rows, name=name, at=f"{source}.regex", warnings=notes),
                raw=rows,
                part=("regex", source),
                kind="regex",
            )
            e.warnings.extend(notes)
            entities.append(e)
            links.append(e.id)
        if links:
            primary.links = {KNOWLEDGE_REFS: links}
        return Decoded(entities)

    # -- encode ----------------------------------------------------------------------------------

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        own = entity.twin(self.id)
        twin = own if isinstance(own, CharxTwin) else CharxTwin()
        raw = twin.raw
        blobs = twin.blobs or {}
        files: dict[str, bytes] = {k[len(MEMBER) :]: v for k, v in blobs.items() if k.startswith(MEMBER)}
        # media: an asset whose bytes are this archive's member stays a member; any other asset with
        # bytes becomes a data: URL here, which _materialise writes as a member (true extension);
        # the JPEG cover of a JPEG+ZIP card is the bytes before the zip, not a card asset
        assert isinstance(entity.body, CharacterBody)
        cover, card_body = _split_cover(entity.body, entity.media)
        if isinstance(raw, dict):  # the twin's loose media files stay loose members
            listed = _embedded(raw)
            card_body = _without(card_body, lambda a: _is_loose(a, listed, files))
        wired = media.wire(card_body, entity.media, inline=lambda _p, a: not _in_archive(a, files))
        assert isinstance(wired, CharacterBody)
        body, bag = lift_risuai(wired)
        module_tree = (twin.module or {}).get("raw")
        module = _module_of(module_tree)
        if not isinstance(raw, dict):
            raw = None

        # the linked lorebook and regex set, through their twins when they came from this card
        old_lore = lore_body(raw, module, []) if raw is not None else None
        source = old_lore[2] if old_lore is not None else None
        old_rows = old_lore[1] if old_lore is not None and source == "module" else None
        new_rows, new_book = self._lore(entity, ctx, raw, old_lore)
        old_rx = regex_rows_of(raw, module) if raw is not None else None
        new_rx = self._regex(entity, ctx, old_rx[0] if old_rx is not None and old_rx[1] == "module" else None)
        if new_rx is None and old_rx is None and bag is not None:
            new_rx = _bag_rows(bag.get("customScripts"))  # a Risu card's own scripts, read opaquely

        # card.json
        fresh = _keep_bag_keys(body_to_card(body, V3_SHAPE, dialects=DIALECTS, book=new_book), bag)
        if raw is not None:
            base_body = CharacterBody.model_validate(character_body(raw, module, files))
            old_book = _render_book(old_lore, old_rows, None if old_lore is None else old_lore[0], raw)
            base = body_to_card(base_body, V3_SHAPE, dialects=DIALECTS, book=old_book)
            rank = _asset_order(raw)
            card = merge3(raw, _align(base, rank), _align(fresh, rank), list_key=_list_key)
        else:
            card = fresh

        # module.risum
        module_bytes = self._module_bytes(entity, body, twin, files, module_tree, new_rows, new_rx)

        # assets: the twin's members as they were, plus data: URIs turned into archive files
        card, added = self._materialise(card, files)
        order: list[str] = [n for n in (twin.members or []) if isinstance(n, str)]
        # a file whose asset row the edit removed goes too (its x_meta, keyed by a name that may
        # repeat, stays: Risu ignores x_meta)
        gone = _embedded(raw) - _embedded(card) if raw is not None else set()
        out: dict[str, bytes] = {n: b for n, b in files.items() if n != MODULE and n not in gone}
        out.update(added)
        if module_bytes is not None:
            out[MODULE] = module_bytes
        out[CARD] = jsformat.stringify(card, 4).encode("utf-8")
        names = [n for n in order if n in out]
        names += [n for n in added if n not in names]
        names += [n for n in (MODULE, CARD) if n in out and n not in names]
        names += [n for n in out if n not in names]
        got = blobs.get(PREFIX)
        prefix: bytes = got if isinstance(got, bytes) else b""
        want = ctx.options.get("container")
        if want not in (None, "charx", "jpeg"):
            raise Unsupported(f"risu writes charx or jpeg containers, not {want!r}")
        if want == "charx":
            prefix = b""
        elif cover is not None and cover != prefix:
            prefix = cover
        elif want == "jpeg" and not prefix:
            prefix = _jpeg_of(entity) or b""
            if not prefix:
                raise Unsupported("a JPEG+ZIP card needs a picture: this character has no image to render")
        return write_zip([ZipMemberSpec(n, out[n], _method(n, out[n])) for n in names], prefix=prefix)

    def _lore(
        self,
        entity: CanonicalEntity,
        ctx: EmitContext,
        raw: dict[str, Any] | None,
        old: tuple[dict[str, Any], Any, str] | None,
    ) -> tuple[list[Any] | None, dict[str, Any] | None]:
        """(module lorebook rows to write or None to leave them, the ``character_book`` to write)."""
        source = old[2] if old is not None else None
        old_rows = old[1] if old is not None and source == "module" else None
        old_cb = _card_data(raw).get("character_book") if raw is not None else None
        refs = ctx.refs(entity, "lorebook")
        if not refs:
            if keep_or_drop(entity, ctx, "lorebook", old_rows or old_cb) is DROP:
                return ([] if old_rows else None), None
            return None, old_cb if isinstance(old_cb, dict) else None
        ctx.embed(refs[0])  # a card holds one lorebook; any further one is exported beside it
        b = refs[0].body
        assert isinstance(b, LorebookBody)
        if source == "character_book":
            return None, _render_book(old, None, b.model_dump(), raw)
        rows = self._rows_for(refs[0], b, old_rows)
        return rows, lore.character_book(rows, lore.book_settings(b))

    def _rows_for(self, ref: CanonicalEntity, b: LorebookBody, old_rows: list[Any] | None) -> list[Any]:
        t = ref.twin(self.id)
        if old_rows is not None and t is not None and t.raw == old_rows:
            return lore.merge_rows(old_rows, b)
        return lore.rows_for(ref, b)

    def _regex(
        self, entity: CanonicalEntity, ctx: EmitContext, old_rows: list[Any] | None
    ) -> list[Any] | None:
        """The module regex rows to write, or None to leave them."""
        refs = ctx.refs(entity, "regex")
        if refs:
            for ref in refs:
                ctx.embed(ref)
            t = refs[0].twin(self.id)
            if len(refs) == 1 and old_rows is not None and t is not None and t.raw == old_rows:
                b = refs[0].body
                assert isinstance(b, RegexSetBody)
                return scripts.merge_rows(old_rows, b)
            rows: list[Any] = []
            for ref in refs:
                b = ref.body
                assert isinstance(b, RegexSetBody)
                rows += scripts.rows_for(ref, b, (self.id, *scripts.ROW_SOURCES))
            return rows
        if keep_or_drop(entity, ctx, "regex", old_rows) is DROP:
            return []
        return None

    def _module_bytes(
        self,
        entity: CanonicalEntity,
        body: CharacterBody,
        twin: CharxTwin,
        files: dict[str, bytes],
        module_tree: Any,
        rows: list[Any] | None,
        rx: list[Any] | None,
    ) -> bytes | None:
        module = _module_of(module_tree)
        triggers = body.behavior.triggerScripts
        if module is not None:
            m = dict(module)
            if triggers != (module.get("trigger") if isinstance(module.get("trigger"), list) else None):
                m["trigger"] = list(triggers or [])
            if rows is not None and rows is not module.get("lorebook"):
                m["lorebook"] = rows
            if rx is not None and rx is not module.get("regex"):
                m["regex"] = rx
            if m == module and MODULE in files:
                return files[MODULE]  # unedited: its own bytes
            opened = risum.open_module(files[MODULE]) if MODULE in files else None
            tree = {**module_tree, "module": m}
            style = (twin.module or {}).get("style")
            return risum.encode_module(
                tree, opened.assets if opened else [], style, opened.trailing if opened else b""
            )
        if MODULE in files:
            return files[MODULE]
        if not (triggers or rows or rx):
            return None
        name = body.identity.name
        tree = {
            "module": {
                "name": f"{name} Module",
                "description": f"Module for {name}",
                "id": str(uuid.uuid5(uuid.NAMESPACE_URL, "bunzai:" + entity.id)),
                "trigger": list(triggers or []),
                "regex": rx or [],
                "lorebook": rows or [],
            },
            "type": risum.MODULE_TYPE,
        }
        return risum.encode_module(tree, [])

    def _materialise(self, card: Any, files: dict[str, bytes]) -> tuple[Any, dict[str, bytes]]:
        """``data:`` asset uris written out as archive files with ``embeded://`` uris, the way Risu
        exports every asset; an ``embeded://`` row with no file in this archive is left out (Risu's
        reader refuses a card whose uri names no entry); everything else is left as it is."""
        data = card.get("data") if isinstance(card, dict) else None
        assets = data.get("assets") if isinstance(data, dict) else None
        if not isinstance(assets, list) or not any(
            isinstance(a, dict)
            and (
                str(a.get("uri", "")).startswith("data:")
                or (str(a.get("uri", "")).startswith(EMBED) and str(a["uri"])[len(EMBED) :] not in files)
            )
            for a in assets
        ):
            return card, {}
        taken = set(files)
        added: dict[str, bytes] = {}
        out_assets = []
        for n, a in enumerate(assets):
            uri = a.get("uri", "") if isinstance(a, dict) else ""
            if isinstance(uri, str) and uri.startswith(EMBED) and uri[len(EMBED) :] not in files:
                continue  # no bytes for it here (another app's archive): Risu would refuse the card
            if not (isinstance(uri, str) and uri.startswith("data:") and ";base64," in uri):
                out_assets.append(a)
                continue
            try:
                b = base64.b64decode(uri.split(",", 1)[1], validate=True)
            except (binascii.Error, ValueError):
                out_assets.append(a)
                continue
            name = str(a.get("name") or "")
            ext = str(a.get("ext") or "png").lower()
            path = asset_path(str(a.get("type") or ""), name, ext, taken, n)
            meta = f"x_meta/{member_name(name or f'asset_{n}')}.json"
            if meta not in taken:
                taken.add(meta)
                added[meta] = x_meta(b)
            added[path] = b
            out_assets.append({**a, "uri": EMBED + path})
        assert isinstance(card, dict) and isinstance(data, dict)
        return {**card, "data": {**data, "assets": out_assets}}, added


#: ``risuai`` keys a charx does not keep in card.json: the scripts live in module.risum, the asset
#: tables are the archive's own ``assets``
_BAG_SKIP = frozenset({"customScripts", "triggerscript", "emotions", "additionalAssets"})


def lift_risuai(body: CharacterBody) -> tuple[CharacterBody, dict[str, Any] | None]:
    """``(body, bag)``: a body whose ``extensions.risuai`` is an opaque bag (a Risu card read by a
    codec that does not map Risu's keys, e.g. a Risu PNG card read as a SillyTavern card) with that
    bag read the way this codec reads a card (``risuai.read_risuai``) into every field the body
    leaves unset, and the bag dropped from ``extensions``; ``bag`` is the bag itself (None when
    there is none). Risu's writer builds ``risuai`` from the body's fields, so without this the bag
    (background HTML, default variables, sdData, view settings...) would be replaced by defaults.
    A bag whose values have the wrong types is left as it is (and replaced on write, as before)."""
    ext = body.extensions or {}
    bag = ext.get(risuai.KEY)
    if not isinstance(bag, dict):
        return body, None
    got: dict[str, Any] = {}
    try:
        risuai.read_risuai({"extensions": {risuai.KEY: bag}}, got, MapContext("$.data"))
    except Malformed:
        return body, None
    out = body.dump()
    _fill(out, got)
    rest = {k: v for k, v in ext.items() if k != risuai.KEY}
    if rest:
        out["extensions"] = rest
    else:
        out.pop("extensions", None)
    return CharacterBody.model_validate(out), bag


#: the first folder below ``assets/`` -> the media role of a file the card does not list
_LOOSE_ROLES = {
    "emotion": "emotion",
    "emotions": "emotion",
    "expression": "emotion",
    "expressions": "emotion",
    "background": "background",
    "backgrounds": "background",
}


def loose_media(card: Any, files: dict[str, bytes]) -> list[dict[str, Any]]:
    """Media files under ``assets/`` the card's ``assets`` do not list, as media assets (role from
    their folder, named by their file name), in archive order: the archive holds them, so the body
    names them."""
    listed = _embedded(card)
    out = []
    for name, data in files.items():
        if not name.startswith("assets/") or name in listed or media.sniff_mime(data) is None:
            continue
        parts = name.split("/")
        stem = parts[-1].rsplit(".", 1)[0]
        role = _LOOSE_ROLES.get(parts[1].lower(), "other") if len(parts) > 2 else "other"
        out.append({"role": role, "ref": EMBED + name, "name": stem or None})
    return out


def _is_loose(a: MediaAsset, listed: set[str], files: dict[str, bytes]) -> bool:
    member = _member_of(a.ref)
    return member is not None and member not in listed and _in_archive(a, files)


def _without(body: CharacterBody, drop: Any) -> CharacterBody:
    assets = body.media.assets or []
    rest = [a for a in assets if not drop(a)]
    if len(rest) == len(assets):
        return body
    return body.model_copy(update={"media": body.media.model_copy(update={"assets": rest or None})})


def _split_cover(body: CharacterBody, store: dict[str, bytes]) -> tuple[bytes | None, CharacterBody]:
    """(the JPEG cover's bytes, the body without it): the cover is the bytes before the zip."""
    assets = body.media.assets or []
    cover = next((a for a in assets if a.ref == JPEG_REF), None)
    if cover is None:
        return None, body
    rest = [a for a in assets if a is not cover]
    data = media.bytes_of(store, cover)
    jpeg = data if data is not None and media.sniff_mime(data) == "image/jpeg" else None
    return jpeg, body.model_copy(update={"media": body.media.model_copy(update={"assets": rest or None})})


def _jpeg_of(entity: CanonicalEntity) -> bytes | None:
    """The portrait rendered as a JPEG (what Risu puts before the zip), or None without one."""
    assert isinstance(entity.body, CharacterBody)
    data = media.bytes_of(entity.media, entity.body.media.portrait)
    if data is None:
        return None
    if media.sniff_mime(data) == "image/jpeg":
        return data
    try:
        return media.as_jpeg(data)
    except media.ImageError:
        return None


def member_resolver(files: dict[str, bytes]) -> media.Resolver:
    """The bytes of an ``embeded://`` ref: the archive member it names."""

    def resolve(_path: str, a: MediaAsset) -> bytes | None:
        path = _member_of(a.ref)
        return files.get(path) if path is not None else None

    return resolve


def _member_of(ref: str) -> str | None:
    low = ref[:12].lower()
    for prefix in (EMBED, "embedded://"):
        if low.startswith(prefix):
            return ref[len(prefix) :]
    return None


def _in_archive(a: MediaAsset, files: dict[str, bytes]) -> bool:
    """The asset's bytes are the archive member its ref names (so the ref stays as it is)."""
    path = _member_of(a.ref)
    data = files.get(path) if path is not None else None
    return data is not None and media.digest(data) == a.sha256


def _fill(dst: dict[str, Any], src: dict[str, Any]) -> None:
    for k, v in src.items():
        if v is None:
            continue
        if isinstance(v, dict) and isinstance(dst.get(k), dict):
            _fill(dst[k], v)
        elif dst.get(k) is None:
            dst[k] = v


def _bag_rows(v: Any) -> list[Any] | None:
    """An opaque bag's ``customScripts`` as module regex rows (None: none to write)."""
    if isinstance(v, list) and v and all(isinstance(r, dict) for r in v):
        return v
    return None


def _keep_bag_keys(card: dict[str, Any], bag: dict[str, Any] | None) -> dict[str, Any]:
    """``card`` with the opaque bag's keys that no canonical field holds (``private``, keys Risu
    added later...) kept in ``extensions.risuai`` after the ones written from the body."""
    if not bag:
        return card
    data = card.get("data")
    ext = data.get("extensions") if isinstance(data, dict) else None
    r = ext.get(risuai.KEY) if isinstance(ext, dict) else None
    if not isinstance(data, dict) or not isinstance(ext, dict) or not isinstance(r, dict):
        return card
    extra = {k: v for k, v in bag.items() if k not in r and k not in _BAG_SKIP and k not in risuai.MAPPED}
    if not extra:
        return card
    return {**card, "data": {**data, "extensions": {**ext, risuai.KEY: {**r, **extra}}}}


def _render_book(
    old: tuple[dict[str, Any], Any, str] | None,
    rows: list[Any] | None,
    body: dict[str, Any] | None,
    raw: dict[str, Any] | None,
) -> dict[str, Any] | None:
    """The ``character_book`` for a lorebook: Risu's rendering of module rows, or (when the card's
    lorebook came from ``character_book`` itself) the shared CCv3 book writer; None for none."""
    old_cb = _card_data(raw).get("character_book") if raw is not None else None
    if old is None:
        return old_cb if isinstance(old_cb, dict) else None
    lbody = LorebookBody.model_validate(body if body is not None else old[0])
    if old[2] == "character_book":
        return cbook.body_to_book(lbody, spelling=cbook.book_spelling(old_cb))
    return lore.character_book(rows if rows is not None else old[1], lore.book_settings(lbody))


def _list_key(item: Any) -> Any:
    """Pairs card list items for the overlay: assets by uri (the shared writer puts the portrait
    first, Risu puts ``main`` last, so positions do not line up), book entries by id."""
    if isinstance(item, dict):
        if "uri" in item and "type" in item:
            return ("asset", item["uri"])
        if "id" in item:
            return ("id", item["id"])
    return None


def _asset_order(card: Any) -> dict[str, int]:
    data = card.get("data") if isinstance(card, dict) else None
    assets = data.get("assets") if isinstance(data, dict) else None
    out: dict[str, int] = {}
    for i, a in enumerate(assets if isinstance(assets, list) else []):
        if isinstance(a, dict) and isinstance(a.get("uri"), str):
            out.setdefault(a["uri"], i)
    return out


def _align(card: dict[str, Any], order: dict[str, int]) -> dict[str, Any]:
    """``card`` with ``data.assets`` in the twin's order (by uri; new ones after, as written): the
    shared writer puts the portrait first, Risu writes ``main`` last, and the overlay pairs rows."""
    data = card.get("data")
    assets = data.get("assets") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(assets, list) or not order:
        return card
    n = len(order)
    ranked = sorted(enumerate(assets), key=lambda p: (order.get(p[1].get("uri"), n + p[0]), p[0]))
    return {**card, "data": {**data, "assets": [a for _, a in ranked]}}


def _embedded(card: Any) -> set[str]:
    """The archive paths a card's ``data.assets`` point at."""
    data = card.get("data") if isinstance(card, dict) else None
    assets = data.get("assets") if isinstance(data, dict) else None
    out = set()
    for a in assets if isinstance(assets, list) else []:
        uri = a.get("uri") if isinstance(a, dict) else None
        if isinstance(uri, str) and uri.startswith(EMBED):
            out.add(uri[len(EMBED) :])
    return out


def _method(name: str, b: bytes) -> int:
    mime = sniff_mime(b)
    if mime and mime.split("/")[0] in ("image", "audio", "video"):
        return ZIP_STORED
    return ZIP_DEFLATED


__all__ = [
    "DIALECTS",
    "RisuCharxCodec",
    "RisuDialect",
    "asset_path",
    "lift_risuai",
    "sniff_mime",
    "x_meta",
]
