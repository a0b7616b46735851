"""voxta: a Voxta package (``.voxpkg``), a zip of characters, memory books and scenarios.

Layout (Voxta's exports)::

    package.json                               {"$type": "package", Id, Name, Version, Creator,
                                                EntryResource: {Kind, Id}, ...}; absent in a
                                                single-character export
    Characters/<id>/character.json             {"$type": "character", Id, Name, Profile, ...,
                                                MemoryBooks: [book ids]}
    Characters/<id>/thumbnail.<ext>            the character's picture
    Characters/<id>/Assets/...                 avatars (Assets/Avatars/<set>/<Emotion>_<State>...),
                                                voice samples, other files
    Books/<id>/book.json                       {"$type": "book", Id, Name, Items: [{Id, Keywords,
                                                Text, Weight, Deleted}]}
    Scenarios/<id>/scenario.json (+ files)     roles, events, actions, scripts: not mapped

Decoding yields every character of the package, each a peer: the first entity is the character
``package.json``'s ``EntryResource`` names (else the first in the archive), each character links
(``knowledgeRefs``) the books its ``MemoryBooks`` names, and books no character names are linked
from the first character, so nothing the package holds is unreachable. Entity order: the first
character, its books, those unnamed books, then each further character followed by its books not
yet listed. The first character's twin holds the package: the member list (names, order, methods)
and the bytes of every member no character or book owns (``package.json``, scenarios, collections);
each character's and book's twin holds its own JSON tree and bytes. A character's files are its
media: the thumbnail is the portrait, every other file of its folder an asset (bytes in the media
store by digest, ``ref`` = the path inside the character's folder).

Writing the first character of a package writes the package: every member in its place, each
character and book found among the linked entities merged with its twin (``core/overlay.merge3``,
so an unedited member comes back byte-identical), the package's own members byte for byte; a
character or book the caller did not pass is left out, a newly linked book is added. Any other
character (a package's further character written alone, or one from another format) is written as
a package of its own with its linked books; one from another format gets a ``package.json``, UUIDs
derived from its entity id, and Voxta's defaults.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import orjson

from bunzai_codecs.core import archive
from bunzai_codecs.core import media as media_mod
from bunzai_codecs.core.codec import Codec, Container, Coverage, EmitContext, Reshape
from bunzai_codecs.core.entity import KNOWLEDGE_REFS, CanonicalEntity, Decoded, canonical_id
from bunzai_codecs.core.errors import Malformed, Unsupported
from bunzai_codecs.core.escrow import Twin, facet
from bunzai_codecs.core.overlay import merge3
from bunzai_codecs.core.sniff import Sniff, parse_json
from bunzai_codecs.entities.character import CharacterBody, MediaAsset
from bunzai_codecs.entities.lorebook import LorebookBody
from bunzai_codecs.formats._shared.links import KEEP, keep_or_drop
from bunzai_codecs.formats._shared.wire import MapContext
from bunzai_codecs.formats.voxta.detect import CHARACTER
from bunzai_codecs.formats.voxta.mapping import (
    MEMORY_BOOKS,
    book_body,
    character_body,
    derived_uuid,
    fresh_book,
    fresh_character,
    has_spaced_placeholder,
    item_key,
    mapped_book,
    mapped_character,
    memory_book_ids,
    within,
    write_date,
)

ID = "voxta"
PACKAGE = "package.json"
BOOK = re.compile(r"^Books/([^/]+)/book\.json$")
#: ``EntryResource.Kind`` of a character
KIND_CHARACTER = 1

#: asset folders (inside ``Assets/``) by media role; another role's files go to ``Misc``
ROLE_FOLDERS = {"emotion": "Avatars/Default", "background": "Backgrounds"}
#: ``Assets/<folder>/`` -> media role, when reading
FOLDER_ROLES = (("Assets/Avatars/", "emotion"), ("Assets/Backgrounds/", "background"))
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9 ._-]+")

_SPACED_NOTE = "a spaced Scriban placeholder ({{ user }}) reads back compact ({{user}}): the same expression"
_TEXT_PATHS = (
    "identity.description",
    "persona.appearance",
    "persona.personality",
    "persona.scenario",
    "greetings.firstMessage",
    "greetings.alternateGreetings[].text",
    "examples.exampleMessages",
    "prompts.systemPrompt",
    "prompts.postHistoryInstructions",
)

BOOK_COVERAGE = Coverage.of(
    "name",
    "description",
    "entries[].content",
    "entries[].triggers[].text",
    "entries[].enabled",
    "entries[].priority",
    notes=[
        "a memory book is a linked lorebook: Name, Description and one entry per item (Keywords are the"
        " triggers, Text the content, Weight the priority, Deleted the reverse of enabled)",
        "item ids are UUIDs: an entry id that is not one is written as a UUID derived from it",
        "Voxta has no insertion position, scan or budget settings per book: those are not held",
    ],
    reshapes=[Reshape("entries[].content", has_spaced_placeholder, _SPACED_NOTE)],
)


def _folder(member: str) -> str:
    return member.rsplit("/", 1)[0] + "/"


def _owner_folder(name: str) -> str | None:
    """``Characters/<id>/`` or ``Books/<id>/`` for a member inside one, else None."""
    parts = name.split("/")
    if len(parts) >= 3 and parts[0] in ("Characters", "Books") and parts[1]:
        return f"{parts[0]}/{parts[1]}/"
    return None


def _role(rel: str) -> str:
    for prefix, role in FOLDER_ROLES:
        if rel.startswith(prefix):
            return role
    return "other"


def _stem(rel: str) -> str:
    base = rel.rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[0] if "." in base[1:] else base


def _dumps(tree: Any, indent: bool) -> bytes:
    return orjson.dumps(tree, option=orjson.OPT_INDENT_2) if indent else orjson.dumps(tree)


def _read_object(z: archive.ZipReader, name: str) -> tuple[dict[str, Any], bytes]:
    data = z.read(name)
    tree = parse_json(data, what=name)
    if not isinstance(tree, dict):
        raise Malformed(f"{name} is not a JSON object", path="$")
    return tree, data


def _check_type(tree: dict[str, Any], want: str, member: str, warnings: list[str]) -> None:
    t = tree.get("$type")
    if t is not None and t != want:
        warnings.append(f'{member}: "$type" is {t!r}, not {want!r}')


def _resolver(folder: str, files: dict[str, bytes]) -> media_mod.Resolver:
    def resolve(_path: str, a: MediaAsset) -> bytes | None:
        return files.get(folder + a.ref)

    return resolve


def _media_of(folder: str, files: dict[str, bytes]) -> dict[str, Any]:
    """The media section of a character whose folder holds ``files`` (member -> bytes)."""
    portrait: dict[str, Any] | None = None
    assets: list[dict[str, Any]] = []
    for name in files:
        rel = name[len(folder) :]
        if portrait is None and "/" not in rel and rel.lower().startswith("thumbnail."):
            portrait = {"role": "portrait", "ref": rel}
        else:
            assets.append({"role": _role(rel), "ref": rel, "name": _stem(rel)})
    return {"portrait": portrait, "assets": assets or None}


# -- the codec ------------------------------------------------------------------------------------


@dataclass(eq=False)
class PackageTwin(Twin):
    """A Voxta entity's escrow: ``member``, the package member of its JSON; ``pkg``, the package's
    digest (which entities came from one package); a character's ``books`` (its ``MemoryBooks``
    ids -> lorebook entity ids) and ``thumbnail`` (the media type its card's thumbnail had); and, on
    the first character, ``archive``: the member list (``members``, ``[name, method]`` pairs) and
    the books no character names (``unnamed``). ``blobs`` hold the members' bytes by name."""

    member: str | None = facet(str)
    pkg: str | None = facet(str)
    books: dict[str, Any] | None = facet(dict)
    archive: dict[str, Any] | None = facet(dict)
    thumbnail: str | None = facet(str)


def _twin(entity: CanonicalEntity) -> PackageTwin:
    """``entity``'s Voxta twin (an empty one when it has none)."""
    t = entity.twin(ID)
    return t if isinstance(t, PackageTwin) else PackageTwin()


class VoxtaCodec(Codec):
    id = ID
    twin_type = PackageTwin
    containers = (Container("voxpkg", (".voxpkg",), "zip", images=True),)
    coverage = Coverage.of(
        "identity.name",
        "identity.nickname",
        "identity.description",
        "identity.characterVersion",
        "identity.culture",
        "persona.personality",
        "persona.scenario",
        "persona.appearance",
        "prompts.systemPrompt",
        "prompts.postHistoryInstructions",
        "greetings.firstMessage",
        "greetings.alternateGreetings[].text",
        "examples.exampleMessages",
        "attribution.creator",
        "attribution.creatorNotes",
        "attribution.createdAt",
        "attribution.updatedAt",
        "discovery.tags",
        *media_mod.PORTRAIT_BYTES,
        *media_mod.ASSET_BYTES,
        notes=[
            "a package yields every character it holds; each links the memory books its MemoryBooks"
            " names (books no character names are linked from the first character)",
            "Profile is the main definition (identity.description), Description the looks"
            " (persona.appearance), Label the nickname, AlternativeFirstMessages the alternate greetings"
            " (titles are not held)",
            "images keep their bytes as files of the character's folder: thumbnail.<ext> is the portrait,"
            " every other file an asset (Assets/Avatars/ emotion, Assets/Backgrounds/ background, else"
            " other); only the bytes are claimed; a URL without bytes cannot be packed and is left out",
            "voice (TextToSpeech), Scripts, Augmentations, Context, Instructions, user overrides, chat"
            " settings, ExplicitContent, AppConfiguration, DefaultScenarios, ids and dates as written:"
            " escrow only",
            "scenarios, collections and package.json ride in the first character's twin, byte for byte",
            _SPACED_NOTE,
        ],
        reshapes=[Reshape(p, has_spaced_placeholder, _SPACED_NOTE) for p in _TEXT_PATHS],
    )
    embedded_coverage: ClassVar[Mapping[str, Coverage]] = {"lorebook": BOOK_COVERAGE}

    # -- decode -----------------------------------------------------------------------------------

    def decode(self, s: Sniff) -> Decoded:
        z = s.require_zip()
        chars = [m.name for m in z.members if CHARACTER.match(m.name)]
        if not chars:
            raise Unsupported(
                "this Voxta package holds no character (no Characters/<id>/character.json); bunzai reads"
                " a package's characters and the memory books they use",
                path="Characters/",
            )
        books = [m.name for m in z.members if BOOK.match(m.name)]
        owners = {_folder(n): n for n in (*chars, *books)}
        owned: dict[str, dict[str, bytes]] = {n: {} for n in owners.values()}
        package_blobs: dict[str, bytes] = {}
        for m in z.members:
            if m.is_dir or m.name in owned:
                continue
            folder = _owner_folder(m.name)
            owner = owners.get(folder) if folder is not None else None
            if owner is not None:
                owned[owner][m.name] = z.read(m.name)
            else:
                package_blobs[m.name] = z.read(m.name)

        warnings: list[str] = []
        entry_id = None
        if PACKAGE in z:
            pkg, _ = _read_object(z, PACKAGE)
            _check_type(pkg, "package", PACKAGE, warnings)
            entry = pkg.get("EntryResource")
            if isinstance(entry, dict) and entry.get("Kind") == KIND_CHARACTER:
                entry_id = entry.get("Id")

        trees: dict[str, tuple[dict[str, Any], bytes]] = {}
        for name in (*chars, *books):
            trees[name] = _read_object(z, name)
        for name in chars:
            _check_type(trees[name][0], "character", name, warnings)
        for name in books:
            _check_type(trees[name][0], "book", name, warnings)

        first = next(
            (n for n in chars if entry_id is not None and trees[n][0].get("Id") == entry_id), chars[0]
        )
        order = [first, *(n for n in chars if n != first)]
        book_ids = {n: canonical_id("lorebook", s.sha256, "book", n) for n in books}
        by_voxta_id: dict[str, str] = {}
        for n in books:
            vid = trees[n][0].get("Id")
            by_voxta_id.setdefault(vid if isinstance(vid, str) else n.split("/")[1], n)

        named: dict[str, list[str]] = {}
        for n in order:
            try:
                named[n] = [by_voxta_id[v] for v in memory_book_ids(trees[n][0]) if v in by_voxta_id]
            except Malformed as exc:
                raise within(exc, n) from None
        used = {b for bs in named.values() for b in bs}
        unnamed = [b for b in books if b not in used]

        book_entities: dict[str, CanonicalEntity] = {}
        for n in books:
            tree, data = trees[n]
            bctx = MapContext()
            try:
                bbody = book_body(tree, bctx)
            except Malformed as exc:
                raise within(exc, n) from None
            blobs = {n: data, **owned[n]}
            book_entities[n] = self.entity(
                s, bbody, raw=tree, part=("book", n), kind="lorebook", member=n, pkg=s.sha256, blobs=blobs
            )
            book_entities[n].warnings.extend(f"{n}: {w}" for w in bctx.warnings)

        entities: list[CanonicalEntity] = []
        listed: set[str] = set()

        def add_books(names: list[str]) -> None:
            for b in names:
                if b not in listed:
                    listed.add(b)
                    entities.append(book_entities[b])

        for i, n in enumerate(order):
            tree, data = trees[n]
            folder = _folder(n)
            files = owned[n]
            cctx = MapContext()
            try:
                body = character_body(tree, cctx)
            except Malformed as exc:
                raise within(exc, n) from None
            body["media"] = _media_of(folder, files)
            links = named[n] + (unnamed if i == 0 else [])
            escrow: dict[str, Any] = {
                "member": n,
                "pkg": s.sha256,
                "books": {v: book_ids[by_voxta_id[v]] for v in memory_book_ids(tree) if v in by_voxta_id},
                "blobs": {n: data},
            }
            if i == 0:
                escrow["archive"] = {
                    "members": [[m.name, m.method] for m in z.members],
                    "unnamed": [book_ids[b] for b in unnamed],
                }
                escrow["blobs"] = {n: data, **package_blobs}
            part = () if i == 0 else ("character", n)
            e = self.entity(s, body, raw=tree, part=part, media=_resolver(folder, files), **escrow)
            e.warnings.extend(f"{n}: {w}" for w in cctx.warnings)
            portrait = e.body.media.portrait  # type: ignore[attr-defined]
            e.original[ID].put("thumbnail", portrait.mime if portrait is not None else None)
            folder_id = n.split("/")[1]
            if tree.get("Id") != folder_id:
                e.warnings.append(
                    f"{n}: character Id {tree.get('Id')!r} differs from its folder {folder_id!r}"
                )
            if links:
                e.links = {KNOWLEDGE_REFS: [book_ids[b] for b in links]}
            entities.append(e)
            add_books(links)
        entities[0].warnings.extend(warnings)
        return Decoded(entities)

    # -- encode -----------------------------------------------------------------------------------

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        twin = _twin(entity)
        w = _Writer(ctx)
        if twin.archive is not None and isinstance(twin.raw, dict):
            return w.package(entity, twin)
        return w.single(entity, twin)


# -- writing --------------------------------------------------------------------------------------


@dataclass
class _Writer:
    """One package being written: its members (name -> bytes, method) in the order added, and what
    has been written of the linked entities."""

    ctx: EmitContext
    files: dict[str, tuple[bytes, int | None]] = field(default_factory=dict)
    #: entity id -> the Voxta id its book was written under
    books: dict[str, str] = field(default_factory=dict)
    package_id: str = ""
    creator: str | None = None

    def add(self, name: str, data: bytes, method: int | None = None) -> None:
        self.files.setdefault(name, (data, method))

    # -- a package read before ---------------------------------------------------------------------

    def package(self, primary: CanonicalEntity, twin: PackageTwin) -> bytes:
        token = twin.pkg
        arch = twin.archive or {}
        members = [(m[0], m[1]) for m in arch.get("members", []) if isinstance(m, list) and len(m) == 2]
        methods = dict(members)
        self.package_id = str(twin.raw.get("PackageId") or "") or derived_uuid(primary.id, "package")
        pool = [primary, *(x for x in self.ctx.linked.values() if x is not primary and x.id != primary.id)]
        mine: dict[str, CanonicalEntity] = {}
        for x in pool:
            t = x.twin(ID)
            if isinstance(t, PackageTwin) and t.pkg == token and x.kind == "character":
                mine.setdefault(str(t.member), x)
        mine[str(twin.member)] = primary
        self.character(primary, methods, set(arch.get("unnamed") or []))
        for name, _ in members:
            c = mine.get(name)
            if c is not None and c is not primary and CHARACTER.match(name):
                self.character(c, methods, set())
                self.ctx.embed(c)
        blobs = twin.blobs or {}
        for name, method in members:
            if name != twin.member and name in blobs:
                self.add(name, blobs[name], method)
        written = set(self.files)
        out: list[archive.ZipMemberSpec] = []
        for name, method in members:
            if name.endswith("/"):
                if any(n.startswith(name) for n in written):
                    out.append(archive.ZipMemberSpec(name, b"", method))
            elif name in self.files:
                data, m = self.files.pop(name)
                out.append(archive.ZipMemberSpec(name, data, method if m is None else m))
        out += [archive.ZipMemberSpec(n, d, m) for n, (d, m) in self.files.items()]
        return archive.write_zip(out)

    # -- one character and its books ---------------------------------------------------------------

    def single(self, entity: CanonicalEntity, twin: PackageTwin) -> bytes:
        raw = twin.raw
        if isinstance(raw, dict):
            self.package_id = str(raw.get("PackageId") or "") or derived_uuid(entity.id, "package")
            self.character(entity, {}, set())
            return archive.write_zip([archive.ZipMemberSpec(n, d, m) for n, (d, m) in self.files.items()])
        body = entity.body
        assert isinstance(body, CharacterBody)
        self.package_id = derived_uuid(entity.id, "package")
        self.creator = body.attribution.creator
        self.add(PACKAGE, b"")  # its place: first
        cid = self.character(entity, {}, set())
        pkg = {
            "$type": "package",
            "Id": self.package_id,
            "Name": body.identity.name,
            "Version": body.identity.characterVersion or "1.0.0",
            "Description": "",
            "Creator": body.attribution.creator or "",
            "ExplicitContent": False,
            "EntryResource": {"Kind": KIND_CHARACTER, "Id": cid},
            "ThumbnailResource": {"Kind": KIND_CHARACTER, "Id": cid},
            "DateCreated": write_date(body.attribution.createdAt),
            "DateModified": write_date(body.attribution.updatedAt),
        }
        self.files[PACKAGE] = (_dumps(pkg, True), None)
        return archive.write_zip([archive.ZipMemberSpec(n, d, m) for n, (d, m) in self.files.items()])

    def place(
        self, e: CanonicalEntity, twin: PackageTwin, member_re: re.Pattern[str], folder: str, name: str
    ) -> tuple[dict[str, Any] | None, str, str]:
        """Where ``e`` is written, as ``(raw tree, member, Voxta id)``: the member it was read from,
        when its twin has one that ``member_re`` matches and no entity written before claimed it
        (then the raw tree and its ``Id``, else its folder's name); otherwise a new
        ``<folder>/<uuid>/<name>`` derived from ``e``'s id, and no raw tree."""
        raw, member = twin.raw, twin.member
        if (
            isinstance(raw, dict)
            and isinstance(member, str)
            and member_re.match(member)
            and member not in self.files
        ):
            rid = raw.get("Id")
            return raw, member, rid if isinstance(rid, str) else member.split("/")[1]
        uid, n = derived_uuid(e.id), 2
        while f"{folder}/{uid}/{name}" in self.files:
            uid, n = derived_uuid(e.id, str(n)), n + 1
        return None, f"{folder}/{uid}/{name}", uid

    def character(self, c: CanonicalEntity, methods: dict[str, int], unnamed: set[str]) -> str:
        """Write ``c``'s ``character.json``, its files and its linked books; its Voxta id."""
        body = c.body
        assert isinstance(body, CharacterBody)
        twin = _twin(c)
        raw, member, cid = self.place(c, twin, CHARACTER, "Characters", "character.json")
        folder = _folder(member)
        self.add(member, b"")  # its place: before its files
        mime, picture = self.media(c, folder, methods, from_voxta=raw is not None)
        thumb_new = {"ContentType": mime} if mime is not None else None
        book_ids = self.linked_books(c, twin if raw is not None else PackageTwin(), unnamed)
        if raw is None:
            thumb = None
            if picture is not None:
                thumb = {"RandomizedETag": thumbnail_etag(picture), "ContentType": mime or "image/png"}
            tree = fresh_character(body, cid, self.package_id, book_ids, thumb)
            data = _dumps(tree, True)
        else:
            base = mapped_character(CharacterBody.model_validate(character_body(raw, MapContext())))
            new = mapped_character(body)
            old_thumb = twin.thumbnail
            if isinstance(old_thumb, str):
                base["Thumbnail"] = {"ContentType": old_thumb}
            if thumb_new is not None:
                new["Thumbnail"] = thumb_new
            if MEMORY_BOOKS in raw or book_ids:
                base[MEMORY_BOOKS] = raw.get(MEMORY_BOOKS)
                new[MEMORY_BOOKS] = book_ids
            tree = merge3(raw, base, new)
            data = _member_bytes(tree, raw, twin.blob(member))
        self.files[member] = (data, methods.get(member))
        return cid

    def media(
        self, c: CanonicalEntity, folder: str, methods: dict[str, int], *, from_voxta: bool
    ) -> tuple[str | None, bytes | None]:
        """Write ``c``'s pictures and other files into ``folder``; the portrait's media type and
        bytes, if one was written."""
        portrait_mime, picture = None, None
        for path, a in media_mod.items(c.body):
            data = media_mod.bytes_of(c.media, a)
            if data is None:
                continue  # a URL or app path: nothing to pack
            is_portrait = path == "media.portrait"
            rel = a.ref if _keeps_ref(a.ref, is_portrait, from_voxta) else None
            if rel is None or folder + rel in self.files:
                rel = self._new_rel(folder, a, data, is_portrait)
            self.add(folder + rel, data, methods.get(folder + rel))
            if is_portrait:
                portrait_mime, picture = media_mod.sniff_mime(data) or a.mime, data
        return portrait_mime, picture

    def _new_rel(self, folder: str, a: MediaAsset, data: bytes, is_portrait: bool) -> str:
        ext = media_mod.extension(a.mime, data)
        if is_portrait:
            stem, where = "thumbnail", ""
        else:
            stem = _UNSAFE_NAME.sub("_", a.name or "").strip(" ._") or "asset"
            where = f"Assets/{ROLE_FOLDERS.get(a.role, 'Misc')}/"
        rel, n = f"{where}{stem}.{ext}", 2
        while folder + rel in self.files:
            rel, n = f"{where}{stem}-{n}.{ext}", n + 1
        return rel

    def linked_books(self, c: CanonicalEntity, twin: PackageTwin, unnamed: set[str]) -> list[Any]:
        """Write every lorebook ``c`` links; the ``MemoryBooks`` list to write (the twin's order and
        the ids of books outside the package kept; a book no longer linked dropped; a new one added)."""
        refs = self.ctx.refs(c, "lorebook")
        for b in refs:
            self.book(b, c.body.identity.name)  # type: ignore[attr-defined]
            self.ctx.embed(b)
        linked = {b.id for b in refs}
        raw = twin.raw
        old = raw.get(MEMORY_BOOKS) if isinstance(raw, dict) else None
        known: dict[str, str] = twin.books or {}
        keep_unresolved = keep_or_drop(c, self.ctx, "lorebook", old) is KEEP
        out: list[Any] = []
        for v in old if isinstance(old, list) else []:
            eid = known.get(v) if isinstance(v, str) else None
            if eid is None:
                out.append(v)  # a book outside the package (Voxta's library): not ours to judge
            elif eid in linked:
                out.append(self.books[eid])
            elif keep_unresolved and eid in c.knowledge_refs and eid not in self.ctx.linked:
                out.append(v)
        for b in refs:
            v = self.books[b.id]
            if b.id not in unnamed and v not in out:
                out.append(v)
        return out

    def book(self, b: CanonicalEntity, owner: str) -> str:
        """Write lorebook ``b`` once; the Voxta id it is written under."""
        if b.id in self.books:
            return self.books[b.id]
        body = b.body
        assert isinstance(body, LorebookBody)
        twin = _twin(b)
        raw, member, bid = self.place(b, twin, BOOK, "Books", "book.json")
        if raw is None:
            data = _dumps(fresh_book(body, bid, self.package_id, self.creator, owner), True)
        else:
            base = mapped_book(LorebookBody.model_validate(book_body(raw, MapContext())), bid)
            tree = merge3(raw, base, mapped_book(body, bid), list_key=item_key)
            data = _member_bytes(tree, raw, twin.blob(member))
        self.books[b.id] = bid
        self.add(member, data)
        for name, extra in (twin.blobs or {}).items():
            if name != twin.member and isinstance(extra, bytes) and name.startswith(_folder(member)):
                self.add(name, extra)
        return bid


def _member_bytes(tree: Any, raw: Any, blob: bytes | None) -> bytes:
    """A JSON member's bytes: the twin's own when its tree is unchanged, else the tree written the
    way the member was (indented when it had line breaks, or when there is no member)."""
    if tree is raw and blob is not None:
        return blob
    return _dumps(tree, blob is None or b"\n" in blob)


def _keeps_ref(ref: str, is_portrait: bool, from_voxta: bool) -> bool:
    """Whether an item's ``ref`` can name its file in the character's folder: one a Voxta package
    gave it, or one shaped like Voxta's (``thumbnail.<ext>``, ``Assets/...``); never
    ``character.json`` itself, a URL, or a path that would leave the folder."""
    if not ref or ref.endswith("/") or ":" in ref or ref == "character.json":
        return False
    try:
        archive.safe_member_name(ref)
    except Malformed:
        return False
    if from_voxta:
        return True
    if is_portrait:
        return "/" not in ref and ref.lower().startswith("thumbnail.")
    return ref.startswith("Assets/")


def thumbnail_etag(data: bytes) -> str:
    """A stable stand-in for the ``RandomizedETag`` Voxta gives a thumbnail."""
    return base64.b64encode(bytes.fromhex(media_mod.digest(data))[:12]).decode("ascii")


__all__ = ["BOOK_COVERAGE", "VoxtaCodec"]
