"""Tavern character cards (CCv1, CCv2, CCv3) <-> the canonical character body (docs/canonical-model.md#characterbody, docs/formats/sillytavern.md#character-the-cards-data-tavernfieldspy).

SillyTavern, RisuAI (``card.json``), RoleCall, Lumiverse, Chub and Agnai's Tavern export all carry
the same ``data`` object; this module maps it once. App-specific ``data.extensions.<app>`` layers
plug in as :class:`TavernDialect` objects instead of copying the mapper.

The API, all pure functions (no I/O, inputs never mutated, nothing deep-copied)::

    data_to_body(data, ctx=None, *, dialects=(), flat=False) -> dict       # the `data` object -> body dict
    body_to_data(body, *, dialects=(), complete=True, v3=True, book=None,
                 regex_scripts=None, notes_key="creator_notes") -> dict      # body -> a fresh `data` object
    card_to_body(tree, ctx=None, *, dialects=()) -> (body dict, CardShape)   # a whole card (wrapped or flat)
    body_to_card(body, shape=CardShape(), *, dialects=(), book=None, regex_scripts=None) -> dict
    card_shape(tree) -> CardShape                                           # V1/V2/V3, mirror, labels

Body dicts are not validated here: a codec passes them to ``Codec.entity`` which validates once.
Embedded ``character_book`` and ``extensions.regex_scripts`` are not part of the character body (they
become linked entities, see ``tavern/character_book.py`` and ``tavern/st_regex.py``); the writers
take them as optional arguments so a fresh card is written in spec key order.

Field rules (each pinned by a test in tests/formats/sillytavern/):

- V3 fields (``nickname``, ``creator_notes_multilingual``, ``source``, ``group_only_greetings``,
  ``assets``, ``creation_date``, ``modification_date``) are read whatever the ``spec`` label says
  and written whenever the body has them (SillyTavern keeps them on V2-labelled cards).
- Dates are unix seconds; a value above 1e11 is milliseconds (RisuAI) and is divided by 1000; 0
  means unknown (absent).
- ``extensions.talkativeness`` may be a numeric string (``"0.5"``); ``extensions.world`` ``""`` is
  no world; ``extensions.depth_prompt`` with an empty prompt is no injection; ``fav`` is
  SillyTavern UI state and stays in the escrow twin only.
- ``assets``: the ``icon`` named ``main`` (else the first icon) is ``media.portrait``; the rest are
  ``media.assets`` in order. No ``assets`` at all is CCv3's default icon (``ccdefault:``, for a PNG
  card the card image itself) and is written back as no ``assets``; a body without a portrait is
  written as ``assets: []``. Types: ``icon`` -> ``portrait``, ``emotion``/``expression`` ->
  ``emotion``, ``background``/``outfit``/``pose`` as named, anything else -> ``other`` (the raw
  type stays in the twin). ``main`` marks ``primary``; ``ext`` becomes a MIME type.
- Every ``data.extensions`` key no mapping or dialect claims is kept verbatim in ``extensions``.
- A fresh V2/V3 ``data`` has every field the spec requires (``""``/``[]`` for what the body lacks);
  a flat (V1) card gets the six V1 fields plus only what the body has.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bunzai_codecs.core.codec import Coverage
from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.core.media import ASSET_BYTES, PORTRAIT_BYTES
from bunzai_codecs.core.media import EXT_MIME as MEDIA_EXT_MIME
from bunzai_codecs.core.media import MIME_EXT as MEDIA_MIME_EXT
from bunzai_codecs.entities.base import MESSAGE_ROLES
from bunzai_codecs.formats._shared.wire import (
    MAX_SAFE_INT,
    MapContext,
    join_path,
    loose_num,
    num_at,
    opt_obj,
    opt_str,
    str_at,
    strs_at,
    wrong,
)
from bunzai_codecs.formats.tavern.character_book import CHARACTER_BOOK_COVERAGE
from bunzai_codecs.formats.tavern.png import CARD_SPECS, SPEC_V2, SPEC_V3
from bunzai_codecs.formats.tavern.st_regex import EMBEDDED_SCRIPTS_COVERAGE

if TYPE_CHECKING:
    from bunzai_codecs.entities.character import CharacterBody, MediaAsset


#: ``data.extensions`` keys the shared mapping reads (never copied into ``body.extensions``)
CLAIMED_EXTENSIONS: frozenset[str] = frozenset(
    {"talkativeness", "fav", "world", "depth_prompt", "sd_character_prompt", "regex_scripts"}
)

#: the asset CCv3 says an app must assume when ``assets`` is absent
DEFAULT_ICON = {"type": "icon", "uri": "ccdefault:", "name": "main", "ext": "png"}

#: CCv3 asset ``type`` -> canonical media role
ASSET_ROLES: dict[str, str] = {
    "icon": "portrait",
    "emotion": "emotion",
    "expression": "emotion",
    "background": "background",
    "outfit": "outfit",
    "pose": "pose",
}
#: canonical media role -> the CCv3 asset ``type`` written for it
ROLE_ASSET_TYPES: dict[str, str] = {
    "portrait": "icon",
    "emotion": "emotion",
    "background": "background",
    "outfit": "outfit",
    "pose": "pose",
    "other": "x_other",
}

#: the media extensions (core.media), plus the other files a CCv3 card's assets may be
EXT_MIME: dict[str, str] = {
    **MEDIA_EXT_MIME,
    "json": "application/json",
    "ttf": "font/ttf",
    "otf": "font/otf",
    "woff": "font/woff",
    "woff2": "font/woff2",
}
#: the media suffixes (core.media), plus JSON: the other file a CCv3 card's assets may be
MIME_EXT: dict[str, str] = {**MEDIA_MIME_EXT, "application/json": "json"}

#: a date above this is in milliseconds (year 5138 in seconds)
_MS_THRESHOLD = 1e11


class TavernDialect:
    """An app's own layer on top of the shared Tavern mapping (RisuAI's ``extensions.risuai``,
    Agnai's ``extensions.agnai``, Chub's ``extensions.chub``, Lumiverse's bare keys...).

    Subclass it, list the ``data.extensions`` keys you own in ``claims`` (they are then kept out of
    ``body.extensions``), and override either hook:

    - ``read(data, body, ctx)`` runs after the shared decode; ``data`` is the card's ``data`` object
      (read-only), ``body`` the body dict being built (every section is already a dict, e.g.
      ``body["settings"]["risu"]``); set or override canonical fields there (``self.extension(data,
      key)`` is the block the dialect owns). Raise ``Malformed`` with ``ctx.at(...)`` paths for wrong
      types; ``ctx.warn`` for notes.
    - ``write(body, data)`` runs after the shared encode; ``body`` is the ``CharacterBody`` model,
      ``data`` the fresh ``data`` dict (``data["extensions"]`` exists); write your keys into it.

    Both must be pure functions of their inputs (the same body must give the same ``data``), which
    is what makes the escrow overlay exact. Pass dialects to every call of this module's functions
    as a tuple, in a fixed order.
    """

    #: a short name for messages
    name: str = "tavern"
    #: ``data.extensions`` keys this dialect reads and writes
    claims: frozenset[str] = frozenset()
    #: canonical paths this dialect adds to the codec that applies it (its ``coverage`` is ORed in)
    coverage: Coverage = Coverage.of()

    def read(self, data: Mapping[str, Any], body: dict[str, Any], ctx: MapContext) -> None:
        """Map this app's keys of ``data`` into ``body`` (see the class docstring)."""

    @staticmethod
    def extension(data: Mapping[str, Any], key: str) -> Any:
        """``data.extensions[key]``, the block a dialect owns; ``None`` when the card has no such key
        (or no ``extensions`` object). Its type is the dialect's to check."""
        ext = data.get("extensions")
        return ext.get(key) if isinstance(ext, Mapping) else None

    def write(self, body: CharacterBody, data: dict[str, Any]) -> None:
        """Write this app's keys for ``body`` into the fresh ``data`` (see the class docstring)."""


@dataclass(frozen=True, slots=True)
class CardShape:
    """How a card tree is laid out, so a writer can produce the same layout again."""

    #: ``{spec, spec_version, data}``; False for a flat V1 object (or RoleCall's bare ``data``)
    wrapped: bool = True
    #: the ``spec`` label, verbatim (a ``chara`` PNG payload may say V3 and a ``ccv3`` one V2)
    spec: Any = SPEC_V3
    #: the ``spec_version`` label, verbatim (``"3.0"``; some tools write a number)
    spec_version: Any = "3.0"
    #: SillyTavern's V1 mirror at the top level of a wrapped card (``name``, ``description``...)
    mirror: bool = False
    #: where a flat card keeps creator notes: ``creator_notes`` (flat V2) or ST's V1 ``creatorcomment``
    notes_key: str = "creator_notes"

    @property
    def v3(self) -> bool:
        """True when the label says V3 (a flat card counts as V2 for required fields)."""
        return self.wrapped and self.spec == SPEC_V3


V2_SHAPE = CardShape(spec=SPEC_V2, spec_version="2.0")
V3_SHAPE = CardShape()


def card_shape(tree: Mapping[str, Any]) -> CardShape:
    """The layout of a parsed card (no validation: see :func:`card_to_body`)."""
    if isinstance(tree.get("data"), dict):
        return CardShape(
            wrapped=True,
            spec=tree.get("spec"),
            spec_version=tree.get("spec_version"),
            mirror=isinstance(tree.get("name"), str),
        )
    notes_key = (
        "creatorcomment" if "creatorcomment" in tree and "creator_notes" not in tree else "creator_notes"
    )
    return CardShape(wrapped=False, spec=None, spec_version=None, notes_key=notes_key)


# --- decode -------------------------------------------------------------------------------------


def card_to_body(
    tree: Any, ctx: MapContext | None = None, *, dialects: Sequence[TavernDialect] = ()
) -> tuple[dict[str, Any], CardShape]:
    """A whole card (CCv2/V3 wrapper, or a flat V1 object) as a body dict and its shape.

    A tree with a ``spec`` but no ``data`` object is ``Malformed`` at ``$.data``: it claims to be
    V2/V3 and lacks its content. The top-level V1 mirror of a wrapped card is not read (``data``
    wins; the twin keeps the mirror).
    """
    ctx = ctx or MapContext("$")
    if not isinstance(tree, dict):
        raise wrong(ctx.path, "a card object", tree)
    data = tree.get("data")
    if isinstance(data, dict):
        shape = card_shape(tree)
        return data_to_body(data, ctx.child("data"), dialects=dialects), shape
    if data is not None or "spec" in tree:
        where = ctx.at("data")
        if data is None:
            raise Malformed(f"card says spec {tree.get('spec')!r} but has no data object", path=where)
        raise wrong(where, "the card's data object", data)
    return data_to_body(tree, ctx, dialects=dialects, flat=True), card_shape(tree)


def data_to_body(
    data: Mapping[str, Any],
    ctx: MapContext | None = None,
    *,
    dialects: Sequence[TavernDialect] = (),
    flat: bool = False,
) -> dict[str, Any]:
    """The card's ``data`` object as a ``CharacterBody`` dict (see the module docstring).

    ``ctx.path`` is the JSON path of ``data`` (default ``$.data``). ``flat`` reads a flat V1 object:
    its ``creatorcomment`` and top-level ``talkativeness`` fill in for the V2 homes.
    """
    ctx = ctx or MapContext("$.data")
    g = data.get

    ext_raw = g("extensions")
    if ext_raw is None:
        ext: Mapping[str, Any] = {}
    elif isinstance(ext_raw, dict):
        ext = ext_raw
    else:
        raise wrong(ctx.at("extensions"), "an object", ext_raw)

    creator_notes = str_at(g("creator_notes"), ctx, "creator_notes")
    talk = loose_num(ext.get("talkativeness"))
    if flat:
        if creator_notes is None:
            creator_notes = str_at(g("creatorcomment"), ctx, "creatorcomment")
        if talk is None:
            talk = loose_num(g("talkativeness"))

    image_prompt: dict[str, Any] = {}
    sd = ext.get("sd_character_prompt")
    if sd is not None:
        if not isinstance(sd, dict):
            raise wrong(ctx.at("extensions", "sd_character_prompt"), "an object", sd)
        sdp = ("extensions", "sd_character_prompt")
        image_prompt["prefix"] = str_at(sd.get("positive"), ctx, *sdp, "positive") or None
        image_prompt["negative"] = str_at(sd.get("negative"), ctx, *sdp, "negative") or None

    world = str_at(ext.get("world"), ctx, "extensions", "world") or None

    claimed: frozenset[str] | set[str] = CLAIMED_EXTENSIONS
    if dialects:
        claimed = set(CLAIMED_EXTENSIONS)
        for d in dialects:
            claimed |= d.claims
    rest = {k: v for k, v in ext.items() if k not in claimed} if ext else {}

    body: dict[str, Any] = {
        "identity": {
            "name": str_at(g("name"), ctx, "name") or "",
            "nickname": str_at(g("nickname"), ctx, "nickname"),
            "description": str_at(g("description"), ctx, "description"),
            "characterVersion": str_at(g("character_version"), ctx, "character_version"),
        },
        "persona": {
            "personality": str_at(g("personality"), ctx, "personality"),
            "scenario": str_at(g("scenario"), ctx, "scenario"),
            "imagePrompt": image_prompt,
        },
        "prompts": {
            "systemPrompt": str_at(g("system_prompt"), ctx, "system_prompt"),
            "postHistoryInstructions": str_at(
                g("post_history_instructions"), ctx, "post_history_instructions"
            ),
            "depthInjections": _depth_injections(ext.get("depth_prompt"), ctx),
        },
        "greetings": {
            "firstMessage": str_at(g("first_mes"), ctx, "first_mes"),
            "alternateGreetings": _greetings(g("alternate_greetings"), ctx, "alternate_greetings"),
            "groupOnlyGreetings": _greetings(g("group_only_greetings"), ctx, "group_only_greetings"),
        },
        "examples": {"exampleMessages": str_at(g("mes_example"), ctx, "mes_example")},
        "media": _media(g("assets"), ctx),
        "attribution": {
            "creator": str_at(g("creator"), ctx, "creator"),
            "creatorNotes": creator_notes,
            "creatorNotesMultilingual": _multilingual(g("creator_notes_multilingual"), ctx),
            "source": _source(g("source"), ctx),
            "createdAt": _date(g("creation_date"), ctx, "creation_date"),
            "updatedAt": _date(g("modification_date"), ctx, "modification_date"),
        },
        "discovery": {"tags": _tags(g("tags"), ctx)},
        "settings": {"talkativeness": talk},
        "behavior": {},
        "worldName": world,
        "extensions": rest,
    }
    for d in dialects:
        d.read(data, body, ctx)
    return body


def _greetings(v: Any, ctx: MapContext, key: str) -> list[dict[str, Any]] | None:
    if v is None:
        return None
    if v.__class__ is str:
        return [{"text": v}]  # ST wraps a single string into a one-element array
    texts = strs_at(v, ctx, key)
    return [{"text": t} for t in texts] if texts is not None else None


def _tags(v: Any, ctx: MapContext) -> list[str] | None:
    if v.__class__ is str:
        return [t.strip() for t in v.split(",") if t.strip()]  # ST splits a comma-separated string
    return strs_at(v, ctx, "tags")


def _date(v: Any, ctx: MapContext, key: str) -> int | float | None:
    if v is None:
        return None
    n = num_at(v, ctx, key)
    if not n:
        return None  # 0 = unknown (CCv3)
    if n > _MS_THRESHOLD:
        return n / 1000 if n % 1000 else n // 1000
    return n


def _multilingual(v: Any, ctx: MapContext) -> dict[str, str] | None:
    if v is None:
        return None
    path = ctx.at("creator_notes_multilingual")
    d = opt_obj(v, path)
    if d is None:
        return None
    for k, text in d.items():
        if not isinstance(text, str):
            raise wrong(join_path(path, k), "a string", text)
    return d


def _source(v: Any, ctx: MapContext) -> list[str] | None:
    if v is None:
        return None
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return v
    # RoleCall writes [{name}] objects: not a canonical source list; the twin keeps it verbatim
    ctx.warn(f"{ctx.at('source')}: not an array of strings; kept in the escrow twin only")
    return None


def _depth_injections(v: Any, ctx: MapContext) -> list[dict[str, Any]] | None:
    if v is None:
        return None
    if v.__class__ is not dict:
        raise wrong(ctx.at("extensions", "depth_prompt"), "an object", v)
    text = str_at(v.get("prompt"), ctx, "extensions", "depth_prompt", "prompt")
    if not text:
        return None  # ST's default-when-unset: no injection (depth/role ride the twin)
    depth = num_at(v.get("depth"), ctx, "extensions", "depth_prompt", "depth")
    role = v.get("role")
    if role is not None and (role.__class__ is not str or role not in MESSAGE_ROLES):  # a dict is unhashable
        ctx.warn(f"{ctx.at('extensions', 'depth_prompt', 'role')}: unknown role {role!r}; read as unset")
        role = None
    return [{"text": text, "depth": 4 if depth is None else depth, "role": role, "origin": "depth_prompt"}]


def _media(v: Any, ctx: MapContext) -> dict[str, Any]:
    if v is None:
        return {"portrait": default_portrait()}  # CCv3: no `assets` means the default icon
    path = ctx.at("assets")
    if not isinstance(v, list):
        raise wrong(path, "an array of assets", v)
    items: list[dict[str, Any]] = []
    portrait_at = -1
    for i, a in enumerate(v):
        if not isinstance(a, dict):
            raise wrong(f"{path}[{i}]", "an asset object", a)
        item = asset_to_media(a, f"{path}[{i}]", ctx)
        if a.get("type") == "icon" and (
            portrait_at < 0 or (a.get("name") == "main" and not items[portrait_at].get("primary"))
        ):
            portrait_at = i
        items.append(item)
    if portrait_at < 0:
        return {"assets": items}
    portrait = items.pop(portrait_at)
    return {"portrait": portrait, "assets": items or None}


def asset_to_media(a: Mapping[str, Any], path: str, ctx: MapContext) -> dict[str, Any]:
    """One CCv3 asset ``{type, uri, name, ext}`` as a ``MediaAsset`` dict."""
    typ = opt_str(a.get("type"), path + ".type", ctx) or ""
    name = opt_str(a.get("name"), path + ".name", ctx)
    ext = opt_str(a.get("ext"), path + ".ext", ctx)
    out: dict[str, Any] = {
        "role": ASSET_ROLES.get(typ, "other"),
        "ref": opt_str(a.get("uri"), path + ".uri", ctx) or "",
        "name": name,
        "mime": EXT_MIME.get(ext.lower()) if ext else None,
    }
    if name == "main":
        out["primary"] = True
    return out


def media_to_asset(m: MediaAsset) -> dict[str, Any]:
    """A canonical media asset as a CCv3 asset; ``ext`` from the MIME type, else the ref's suffix,
    else ``unknown``."""
    ext = MIME_EXT.get(m.mime or "")
    if ext is None:
        tail = m.ref.rsplit("/", 1)[-1]
        dot = tail.rfind(".")
        guess = tail[dot + 1 :].lower() if dot > 0 else ""
        ext = guess if guess in EXT_MIME else "unknown"
    name = m.name if m.name is not None else ("main" if m.primary else "")
    return {"type": ROLE_ASSET_TYPES.get(m.role, m.role), "uri": m.ref, "name": name, "ext": ext}


# --- encode -------------------------------------------------------------------------------------


def body_to_data(
    body: CharacterBody,
    *,
    dialects: Sequence[TavernDialect] = (),
    complete: bool = True,
    v3: bool = True,
    book: dict[str, Any] | None = None,
    regex_scripts: list[Any] | None = None,
    notes_key: str = "creator_notes",
) -> dict[str, Any]:
    """A fresh ``data`` object for ``body`` (see the module docstring).

    ``complete`` writes every field CCv2 requires (``v3`` adds ``group_only_greetings``); otherwise
    (a flat V1 card) only the six V1 fields and what the body has. ``book`` and ``regex_scripts``
    are placed at their spec positions when given. ``notes_key`` names the creator-notes key of a
    flat card (``creatorcomment`` for SillyTavern's V1).
    """
    idn, per, pr, gr, att = body.identity, body.persona, body.prompts, body.greetings, body.attribution
    d: dict[str, Any] = {
        "name": idn.name,
        "description": idn.description or "",
        "personality": per.personality or "",
        "scenario": per.scenario or "",
        "first_mes": gr.firstMessage or "",
        "mes_example": body.examples.exampleMessages or "",
    }

    def put(key: str, value: Any, default: Any) -> None:
        if value is not None:
            d[key] = value
        elif complete:
            d[key] = default

    put(notes_key if not complete else "creator_notes", att.creatorNotes, "")
    put("system_prompt", pr.systemPrompt, "")
    put("post_history_instructions", pr.postHistoryInstructions, "")
    alts = gr.alternateGreetings
    put("alternate_greetings", [g.text for g in alts] if alts is not None else None, [])
    if book is not None:
        d["character_book"] = book
    tags = body.discovery.tags
    put("tags", list(tags) if tags is not None else None, [])
    put("creator", att.creator, "")
    put("character_version", idn.characterVersion, "")

    ext: dict[str, Any] = {}
    if body.settings.talkativeness is not None:
        ext["talkativeness"] = body.settings.talkativeness
    if body.worldName:
        ext["world"] = body.worldName
    dp = _depth_prompt(body)
    if dp is not None:
        ext["depth_prompt"] = dp
    ip = per.imagePrompt
    if ip.prefix is not None or ip.negative is not None:
        ext["sd_character_prompt"] = {"positive": ip.prefix or "", "negative": ip.negative or ""}
    if regex_scripts is not None:
        ext["regex_scripts"] = regex_scripts
    for k, v in body.extensions.items():
        if k not in ext:
            ext[k] = v
    if ext or complete:
        d["extensions"] = ext

    groups = gr.groupOnlyGreetings
    if groups is not None:
        d["group_only_greetings"] = [g.text for g in groups]
    elif complete and v3:
        d["group_only_greetings"] = []
    assets = _assets(body)
    if assets is not None:
        d["assets"] = assets
    if idn.nickname is not None:
        d["nickname"] = idn.nickname
    if att.creatorNotesMultilingual is not None:
        d["creator_notes_multilingual"] = dict(att.creatorNotesMultilingual)
    if att.source is not None:
        d["source"] = list(att.source)
    if att.createdAt is not None:
        d["creation_date"] = _wire_date(att.createdAt)
    if att.updatedAt is not None:
        d["modification_date"] = _wire_date(att.updatedAt)

    for dl in dialects:
        dl.write(body, d)
    return d


def body_to_card(
    body: CharacterBody,
    shape: CardShape = V3_SHAPE,
    *,
    dialects: Sequence[TavernDialect] = (),
    book: dict[str, Any] | None = None,
    regex_scripts: list[Any] | None = None,
) -> dict[str, Any]:
    """A fresh card tree for ``body`` laid out as ``shape`` (default: a CCv3 wrapper, no mirror)."""
    if not shape.wrapped:
        return body_to_data(
            body,
            dialects=dialects,
            complete=False,
            book=book,
            regex_scripts=regex_scripts,
            notes_key=shape.notes_key,
        )
    data = body_to_data(body, dialects=dialects, v3=shape.v3, book=book, regex_scripts=regex_scripts)
    card: dict[str, Any] = {}
    if shape.mirror:
        card.update(v1_mirror(data))
    card["spec"] = shape.spec
    card["spec_version"] = shape.spec_version
    card["data"] = data
    return card


def v1_mirror(data: Mapping[str, Any]) -> dict[str, Any]:
    """SillyTavern's top-level V1 mirror of a ``data`` object (kept in sync on every ST save)."""
    m = {
        "name": data.get("name", ""),
        "description": data.get("description", ""),
        "personality": data.get("personality", ""),
        "scenario": data.get("scenario", ""),
        "first_mes": data.get("first_mes", ""),
        "mes_example": data.get("mes_example", ""),
        "creatorcomment": data.get("creator_notes", ""),
        "tags": data.get("tags", []),
    }
    ext = data.get("extensions")
    if isinstance(ext, dict) and "talkativeness" in ext:
        m["talkativeness"] = ext["talkativeness"]
    return m


def _wire_date(v: int | float) -> int | float:
    """A whole float date as an integer, when JavaScript holds it as one (a float date beyond
    that, read from text no integer fits, stays a float: JSON cannot carry a bigger integer)."""
    return int(v) if isinstance(v, float) and v.is_integer() and abs(v) <= MAX_SAFE_INT else v


def _depth_prompt(body: CharacterBody) -> dict[str, Any] | None:
    injections = body.prompts.depthInjections
    if not injections:
        return None
    pick = next((i for i in injections if i.origin in (None, "depth_prompt")), injections[0])
    if not pick.text:
        return None
    out: dict[str, Any] = {"prompt": pick.text, "depth": pick.depth}
    if pick.role is not None:
        out["role"] = pick.role
    return out


def _assets(body: CharacterBody) -> list[dict[str, Any]] | None:
    media = body.media
    items: list[dict[str, Any]] = []
    if media.portrait is not None:
        items.append(media_to_asset(media.portrait))
    if media.assets:
        items.extend(media_to_asset(m) for m in media.assets)
    if not items:
        return []  # no portrait at all: an explicit empty list (absent would mean the default icon)
    if media.assets is None and items == [DEFAULT_ICON]:
        return None  # exactly what CCv3 assumes when `assets` is absent
    return items


def default_portrait() -> dict[str, Any]:
    """The portrait of a card without ``assets``: CCv3's default icon (``ccdefault:``), i.e. the card
    image itself — for a PNG card the image whose bytes ride in the escrow blobs."""
    return {"role": "portrait", "ref": "ccdefault:", "name": "main", "primary": True, "mime": "image/png"}


#: canonical character paths a Tavern ``data`` object can hold
TAVERN_COVERAGE = Coverage.of(
    "identity.name",
    "identity.nickname",
    "identity.description",
    "identity.characterVersion",
    "persona.personality",
    "persona.scenario",
    "persona.imagePrompt.prefix",
    "persona.imagePrompt.negative",
    "prompts.systemPrompt",
    "prompts.postHistoryInstructions",
    "greetings.firstMessage",
    "greetings.alternateGreetings[].text",
    "greetings.groupOnlyGreetings[].text",
    "examples.exampleMessages",
    "media.portrait.role",
    "media.portrait.ref",
    "media.portrait.name",
    "media.portrait.primary",
    "media.portrait.mime",
    *PORTRAIT_BYTES,
    "media.assets[].role",
    "media.assets[].ref",
    "media.assets[].name",
    "media.assets[].primary",
    "media.assets[].mime",
    *ASSET_BYTES,
    "attribution.creator",
    "attribution.creatorNotes",
    "attribution.creatorNotesMultilingual",
    "attribution.source",
    "attribution.createdAt",
    "attribution.updatedAt",
    "discovery.tags",
    "settings.talkativeness",
    "worldName",
    "extensions",
    notes=[
        "one depth injection (`extensions.depth_prompt`: the first one from a `depth_prompt`, else the"
        " first); a list of them is not held, so `prompts.depthInjections` is not claimed: the one written"
        " comes back as `depthInjections[0]`, without `enabled`, and the others are lost",
        "greeting titles are not held",
        "media asset `label` is not held; unknown asset types read as `other` (the raw type stays in the twin)",
        "images keep their bytes: a PNG card's picture is the portrait (a portrait that is not a PNG is"
        " re-encoded as one: the pixels are kept, not the bytes), every other image with bytes is a"
        " CCv3 asset with a data: URL; a JSON card holds the portrait as a data: URL too",
        'a fresh V2/V3 export writes every spec-required field, so an absent text reads back as `""`',
    ],
)


#: what a Tavern card holds of the entities it embeds (``Codec.embedded_coverage``): its lorebook as a
#: ``character_book``, its regex sets as ``extensions.regex_scripts``
TAVERN_EMBEDDED: Mapping[str, Coverage] = {
    "lorebook": CHARACTER_BOOK_COVERAGE,
    "regex": EMBEDDED_SCRIPTS_COVERAGE,
}


def dialect_claims(dialects: Iterable[TavernDialect]) -> frozenset[str]:
    """Every ``data.extensions`` key the shared mapping and ``dialects`` read."""
    out = set(CLAIMED_EXTENSIONS)
    for d in dialects:
        out |= d.claims
    return frozenset(out)


__all__ = [
    "ASSET_ROLES",
    "CARD_SPECS",
    "CLAIMED_EXTENSIONS",
    "DEFAULT_ICON",
    "EXT_MIME",
    "MIME_EXT",
    "ROLE_ASSET_TYPES",
    "SPEC_V2",
    "SPEC_V3",
    "TAVERN_COVERAGE",
    "TAVERN_EMBEDDED",
    "V2_SHAPE",
    "V3_SHAPE",
    "CardShape",
    "TavernDialect",
    "asset_to_media",
    "body_to_card",
    "body_to_data",
    "card_shape",
    "card_to_body",
    "data_to_body",
    "default_portrait",
    "dialect_claims",
    "media_to_asset",
    "v1_mirror",
]
