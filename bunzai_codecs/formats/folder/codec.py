"""``card-folder``: a character card as a folder of files an author keeps in git.

Every character format reads into the canonical character; this format writes that character (with
the lorebooks and regex scripts it links to) as a tree of small text files, and reads the tree back
(docs/formats/card-folder.md):

    card.yaml                  every field that is not a long text (name, tags, creator, version,
                               dates, settings, extensions, the media list...), canonical names
    description.md, personality.md, scenario.md, appearance.md, first_message.md, examples.md,
    system_prompt.md, post_history_instructions.md, additional_text.md, creator_notes.md
                               one long text each: the text and a final newline
    greetings/01.md ...        each alternate greeting (group_greetings/ for group-only ones); a
                               title is YAML front matter
    assets/portrait.png ...    each picture whose bytes the card carries; card.yaml names its file
    lorebook/book.yaml         a linked lorebook's own settings (lorebook-2/ for a second one...)
    lorebook/001-<title>.md    each entry: its settings as YAML front matter, its content below
    regex/set.yaml, regex/01-<label>.yaml   a linked regex set and each of its scripts
    .bunzai/escrow.json, .bunzai/blobs/     the escrow of the formats the card came from
    .gitattributes             ``* -text``: git keeps every byte (no line-ending conversion)

Fields equal to their canonical default are left out of the YAML; a text that is absent has no
file, an empty one an empty file (its newline). Files are read in name order (an entry's place is
its file's), every name is made by bunzai from a counter and a slug of ASCII letters and digits:
no text of the card ever becomes a path. A file named by ``card.yaml`` is looked up among the
folder's own files, never on the disk.

The escrow keeps each entity's twins of the formats it came from (a Tavern card's JSON and PNG), so
``card-folder -> sillytavern`` of an unedited folder writes the card byte for byte, and an edited
Markdown file changes exactly that field (the Tavern writer merges the body into its twin). Blobs
are stored whole, by digest: replacing a picture in ``assets/`` changes the portrait and nothing
else. A folder without ``.bunzai/`` (written by hand, or with it deleted) is read from its visible
files alone.

The input is a file set (``core/fileset``): the command line and the pipeline pack a folder holding
``card.yaml`` into one; a user's zip of the folder reads the same. The output is a file set too,
laid out on disk as the folder (``bunzai convert card.png --to card-folder -o mycard/``) or kept
as a ``.zip`` (``-o mycard.zip``, the pipeline's exports). A folder read from this format writes
back byte for byte when nothing changed; after an edit, every file whose content did not change
keeps its bytes (the three-way merge of ``core/overlay``, file by file), files the writer no longer
makes go, files it never makes (a README) stay.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePath
from types import MappingProxyType
from typing import Any

import orjson
from pydantic import BaseModel, ValidationError

from bunzai_codecs.core import fileset, media, registry, yamlio
from bunzai_codecs.core.codec import Codec, Container, Coverage, EmitContext, body_as, validation_failed
from bunzai_codecs.core.entity import KNOWLEDGE_REFS, CanonicalEntity, Decoded, EntityKind
from bunzai_codecs.core.errors import BunzaiError, Malformed, Unsupported
from bunzai_codecs.core.escrow import Twin
from bunzai_codecs.core.sniff import Sniff, parse_json
from bunzai_codecs.entities.base import Body
from bunzai_codecs.entities.character import CharacterBody, Greeting
from bunzai_codecs.entities.lorebook import LorebookBody, LoreEntry
from bunzai_codecs.entities.regex import RegexRule, RegexSetBody
from bunzai_codecs.formats.folder.detect import MARK, root_of

FORMAT = "card-folder"
CARD_FILE = fileset.CARD_FILE
ESCROW = ".bunzai/escrow.json"
BLOBS = ".bunzai/blobs/"
GITATTRIBUTES = ".gitattributes"
#: git: no line-ending conversion (a text's ``\r\n`` stays)
GITATTRIBUTES_TEXT = b"* -text\n"
HEADER = (
    b"# A character card as a folder (bunzai card-folder): the long texts are the Markdown files beside\n"
    b"# this one, lorebook entries lorebook/*.md, regex scripts regex/*.yaml, pictures assets/.\n"
)
ASSETS = "assets"
BOOK_FILE = "book.yaml"
SET_FILE = "set.yaml"
LOREBOOK = "lorebook"
REGEX = "regex"

#: the long texts, each one file: (section, field) -> file name
TEXTS: tuple[tuple[tuple[str, str], str], ...] = (
    (("identity", "description"), "description.md"),
    (("persona", "personality"), "personality.md"),
    (("persona", "scenario"), "scenario.md"),
    (("persona", "appearance"), "appearance.md"),
    (("greetings", "firstMessage"), "first_message.md"),
    (("examples", "exampleMessages"), "examples.md"),
    (("prompts", "systemPrompt"), "system_prompt.md"),
    (("prompts", "postHistoryInstructions"), "post_history_instructions.md"),
    (("prompts", "additionalText"), "additional_text.md"),
    (("attribution", "creatorNotes"), "creator_notes.md"),
)
#: the greeting lists, each a folder of one file per greeting
GREETINGS: tuple[tuple[tuple[str, str], str], ...] = (
    (("greetings", "alternateGreetings"), "greetings"),
    (("greetings", "groupOnlyGreetings"), "group_greetings"),
)
_LINKED = re.compile(r"^(lorebook|regex)(?:-([1-9][0-9]*))?$")
_SLUG = re.compile(r"[^a-z0-9]+")


# -- small pieces ------------------------------------------------------------------------------------


def slug(text: str | None, default: str) -> str:
    """ASCII letters and digits of ``text`` joined by ``-``, at most 40 characters: a safe piece
    of a file name (``default`` when nothing is left)."""
    s = _SLUG.sub("-", (text or "").lower()).strip("-")[:40].strip("-")
    return s or default


def text_file(text: str) -> bytes:
    return (text + "\n").encode("utf-8")


def text_of(data: bytes, where: str) -> str:
    """A text file's text: UTF-8, less the one newline that ends the file."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Malformed(f"{where}: not UTF-8 text: {exc.reason}", offset=exc.start) from None
    return text[:-1] if text.endswith("\n") else text


def front_matter_file(meta: dict[str, Any], text: str) -> bytes:
    """A Markdown file: ``meta`` as YAML front matter (between ``---`` lines), then ``text``. A
    text that starts with ``---`` gets front matter even when ``meta`` is empty."""
    if not meta and not text.startswith(("---\n", "---\r\n")) and text != "---":
        return text_file(text)
    head = yamlio.dump(meta) if meta else b""
    return b"---\n" + head + b"---\n" + text_file(text)


_FENCE = re.compile(r"^---[ \t]*\r?$", re.M)


def split_front_matter(data: bytes, where: str) -> tuple[dict[str, Any], str]:
    """``(front matter, text)`` of a Markdown file (front matter ``{}`` when the file has none)."""
    text = text_of(data, where)
    if not (text.startswith(("---\n", "---\r\n")) or text in ("---", "---\r")):
        return {}, text
    first = text.index("\n") + 1 if "\n" in text else len(text)
    end = _FENCE.search(text, first)
    if end is None:
        raise Malformed(f"{where}: the front matter (from the first ---) has no closing --- line")
    meta = (
        yamlio.load(text[first : end.start()], what=f"front matter of {where}")
        if end.start() > first
        else None
    )
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise Malformed(f"{where}: front matter is a YAML mapping", path="$")
    rest = text[end.end() :]
    return meta, rest[1:] if rest.startswith("\n") else rest


def load_map(data: bytes, where: str) -> dict[str, Any]:
    tree = yamlio.load(data, what=where)
    if tree is None:
        return {}
    if not isinstance(tree, dict):
        raise Malformed(f"{where} is a YAML mapping", path="$")
    return tree


def _model_of(annotation: Any, many: bool) -> type[Body] | None:
    """The body model ``annotation`` names (``X``, ``X | None``; with ``many``, ``list[X]``)."""
    import types
    import typing

    args = typing.get_args(annotation) if isinstance(annotation, types.UnionType) else (annotation,)
    for a in args:
        if many and typing.get_origin(a) is list:
            inner = typing.get_args(a)
            a = inner[0] if inner else None
        elif many:
            continue
        if isinstance(a, type) and issubclass(a, Body):
            return a
    return None


_NO_DEFAULT = object()


@functools.cache
def _defaults(cls: type[BaseModel]) -> dict[str, tuple[Any, type[Body] | None, type[Body] | None]]:
    """Per field of ``cls``: its default's JSON form (``_NO_DEFAULT`` for a required field, a
    section's trimmed to ``{}``), and the body model it holds (one, and many)."""
    out = {}
    for k, f in cls.model_fields.items():
        if f.default_factory is not None:
            d = f.default_factory()  # type: ignore[call-arg]  # the canonical models' factories take none
        elif f.is_required():
            d = _NO_DEFAULT
        else:
            d = f.default
        if isinstance(d, Body):
            d = trim(type(d), d.dump())
        out[k] = (d, _model_of(f.annotation, False), _model_of(f.annotation, True))
    return out


def trim(cls: type[BaseModel], dump: dict[str, Any]) -> dict[str, Any]:
    """``dump`` (a body's JSON form) without the fields equal to their default, value and type (a
    section with nothing set, ``enabled: true``...): what reads back as the same body, shorter."""
    fields = _defaults(cls)
    out: dict[str, Any] = {}
    for k, v in dump.items():
        got = fields.get(k)
        if got is None:
            out[k] = v
            continue
        default, one, many = got
        if one is not None and isinstance(v, dict):
            v = trim(one, v)
        elif many is not None and isinstance(v, list):
            v = [trim(many, x) if isinstance(x, dict) else x for x in v]
        if default is not _NO_DEFAULT and yamlio.same(v, default):
            continue
        out[k] = v
    return out


def _get(tree: dict[str, Any], path: tuple[str, str]) -> Any:
    sec = tree.get(path[0])
    return sec.get(path[1]) if isinstance(sec, dict) else None


def _pop(tree: dict[str, Any], path: tuple[str, str]) -> Any:
    sec = tree.get(path[0])
    if not isinstance(sec, dict):
        return None
    v = sec.pop(path[1], None)
    if not sec:
        tree.pop(path[0])
    return v


def _put(tree: dict[str, Any], path: tuple[str, str], value: Any) -> None:
    sec = tree.setdefault(path[0], {})
    if not isinstance(sec, dict):
        raise Malformed(f"{CARD_FILE}: {path[0]} is a mapping", path=f"$.{path[0]}")
    sec[path[1]] = value


def _check(model: type[Body], data: Any, where: str) -> Any:
    """``data`` validated as ``model``; a wrong field is ``ValidationFailed`` naming the file."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = validation_failed(exc, codec=FORMAT, prefix="")
        err.message = f"{where}: {err.message}"
        raise err from None


def _files_in(files: dict[str, bytes], folder: str, suffix: str) -> list[str]:
    """The files directly in ``folder`` with ``suffix``, in name order."""
    p = f"{folder}/"
    return sorted(n for n in files if n.startswith(p) and "/" not in n[len(p) :] and n.endswith(suffix))


# -- writing -------------------------------------------------------------------------------------------


def _media_out(
    tree: dict[str, Any], body: Body, store: dict[str, bytes], prefix: str, files: dict[str, bytes]
) -> None:
    """Each media item of ``body`` whose bytes ``store`` has as a file of ``prefix + assets/``,
    named in ``tree`` by ``file`` (instead of its digest and size; its type left out when the bytes
    say it)."""
    m = tree.get("media")
    if not isinstance(m, dict):
        return
    for path, a in media.items(body):
        data = media.bytes_of(store, a)
        if data is None:
            continue
        item: dict[str, Any]
        if path == "media.portrait":
            item, name = m["portrait"], "portrait"
        else:
            i = int(path[path.index("[") + 1 : -1])
            item, name = m["assets"][i], f"{i + 1:02d}-{slug(a.name or a.label or a.role, 'asset')}"
        rel = f"{prefix}{ASSETS}/{name}.{media.extension(a.mime, data)}"
        files[rel] = data
        item.pop("sha256", None)
        item.pop("size", None)
        if item.get("mime") == media.sniff_mime(data):
            item.pop("mime", None)
        item["file"] = rel[len(prefix) :]


def character_files(e: CanonicalEntity) -> dict[str, bytes]:
    """The visible files of a character (``card.yaml``, its texts, greetings and pictures)."""
    body = body_as(e, CharacterBody)
    files: dict[str, bytes] = {}
    tree = trim(CharacterBody, body.dump())
    for path, name in TEXTS:
        v = _pop(tree, path)
        if v is not None:
            files[name] = text_file(v)
    for path, folder in GREETINGS:
        v = _pop(tree, path)
        if v == []:
            _put(tree, path, [])  # an empty list (not no list) has no file to say it
        for i, g in enumerate(v or ()):
            meta = {k: x for k, x in g.items() if k != "text"}
            files[f"{folder}/{i + 1:0{max(2, len(str(len(v))))}d}.md"] = front_matter_file(meta, g["text"])
    _media_out(tree, body, e.media, "", files)
    files[CARD_FILE] = HEADER + yamlio.dump({MARK: 1, **tree})
    return files


def lorebook_files(e: CanonicalEntity, folder: str) -> dict[str, bytes]:
    body = body_as(e, LorebookBody)
    files: dict[str, bytes] = {}
    tree = trim(LorebookBody, body.dump())
    tree.pop("entries", None)
    _media_out(tree, body, e.media, f"{folder}/", files)
    files[f"{folder}/{BOOK_FILE}"] = yamlio.dump(tree)
    width = max(3, len(str(len(body.entries))))
    for i, entry in enumerate(body.entries):
        meta = trim(LoreEntry, entry.dump())
        content = meta.pop("content", "")
        first = entry.triggers[0].text if entry.triggers else None
        name = slug(entry.title or first or entry.comment, "entry")
        files[f"{folder}/{i + 1:0{width}d}-{name}.md"] = front_matter_file(meta, content)
    return files


def regex_files(e: CanonicalEntity, folder: str) -> dict[str, bytes]:
    body = body_as(e, RegexSetBody)
    tree = trim(RegexSetBody, body.dump())
    tree.pop("rules", None)
    files = {f"{folder}/{SET_FILE}": yamlio.dump(tree)}
    width = max(2, len(str(len(body.rules))))
    for i, rule in enumerate(body.rules):
        files[f"{folder}/{i + 1:0{width}d}-{slug(rule.label, 'script')}.yaml"] = yamlio.dump(
            trim(RegexRule, rule.dump())
        )
    return files


def linked_folders(linked: list[CanonicalEntity]) -> list[tuple[str, CanonicalEntity]]:
    """``(folder, entity)`` for each linked lorebook and regex set: ``lorebook``, ``lorebook-2``..."""
    out = []
    count = {"lorebook": 0, "regex": 0}
    for x in linked:
        if x.kind in count:
            count[x.kind] += 1
            n = count[x.kind]
            out.append((x.kind if n == 1 else f"{x.kind}-{n}", x))
    return out


def escrow_files(units: list[tuple[str, CanonicalEntity]]) -> dict[str, bytes]:
    """``.bunzai/escrow.json`` (each entity's twins but this format's own, blobs by digest) and
    ``.bunzai/blobs/<sha256>``; nothing when no entity has a twin."""
    blobs: dict[str, bytes] = {}

    def by_digest(bs: dict[str, bytes]) -> dict[str, str]:
        out = {}
        for k, v in bs.items():
            h = media.digest(v)
            blobs[h] = v
            out[k] = f"sha256:{h}"
        return out

    ents = []
    for folder, x in units:
        original = {fmt: tw.to_json(by_digest) for fmt, tw in x.original.items() if fmt != FORMAT}
        if original:
            ents.append({"kind": x.kind, "folder": folder, "original": original})
    if not ents:
        return {}
    doc = {"format": FORMAT, "version": 1, "entities": ents}
    files = {ESCROW: orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"}
    files.update({BLOBS + h: v for h, v in blobs.items()})
    return files


def folder_files(e: CanonicalEntity, linked: list[CanonicalEntity]) -> dict[str, bytes]:
    """Every file of a character's folder, fresh (no twin of this format looked at)."""
    files = character_files(e)
    units = linked_folders(linked)
    for folder, x in units:
        files.update(lorebook_files(x, folder) if x.kind == "lorebook" else regex_files(x, folder))
    files.update(escrow_files([("", e), *units]))
    files[GITATTRIBUTES] = GITATTRIBUTES_TEXT
    return files


# -- reading -------------------------------------------------------------------------------------------


@dataclass
class Unit:
    """One entity a folder holds: its validated body, where its pictures are, its escrow twins."""

    kind: EntityKind
    folder: str
    body: Any
    #: the bytes of each media item named by a file (``media.portrait`` -> bytes)
    pictures: dict[str, bytes] = field(default_factory=dict)
    original: dict[str, Twin] = field(default_factory=dict)

    def resolve(self, path: str, a: Any) -> bytes | None:
        """Where ``Codec.entity`` finds an item's bytes (``core.media.Resolver``)."""
        return self.pictures.get(path)

    def bound(self) -> tuple[Any, dict[str, bytes]]:
        """The body with its pictures' digests, and its media store (as ``Codec.entity`` binds it)."""
        store: dict[str, bytes] = {}
        return media.bind(self.body, store, self.resolve), store


def _media_in(tree: dict[str, Any], files: dict[str, bytes], prefix: str, where: str) -> dict[str, bytes]:
    """The bytes of each media item ``tree`` names by ``file`` (``media.portrait`` ->
    bytes...); the ``file`` keys are taken out. A file the folder does not hold is ``Malformed``."""
    m = tree.get("media")
    if not isinstance(m, dict):
        return {}
    out: dict[str, bytes] = {}
    items: list[tuple[str, Any]] = [("media.portrait", m.get("portrait"))]
    assets = m.get("assets")
    if isinstance(assets, list):
        items += [(f"media.assets[{i}]", a) for i, a in enumerate(assets)]
    for path, item in items:
        if not isinstance(item, dict) or "file" not in item:
            continue
        rel = item.pop("file")
        data = files.get(prefix + rel) if isinstance(rel, str) else None
        if data is None:
            raise Malformed(
                f"{where}: {path}.file names {rel!r}, which the folder does not hold", path=f"$.{path}.file"
            )
        out[path] = data
    return out


def _greetings(files: dict[str, bytes], folder: str) -> list[dict[str, Any]] | None:
    names = _files_in(files, folder, ".md")
    if not names:
        return None
    out = []
    for n in names:
        meta, text = split_front_matter(files[n], n)
        out.append(_check(Greeting, {**meta, "text": text}, n).dump())
    return out


def read_character(files: dict[str, bytes], warnings: list[str]) -> Unit:
    if CARD_FILE not in files:
        raise Malformed(f"a card folder holds {CARD_FILE}; this one does not")
    tree = load_map(files[CARD_FILE], CARD_FILE)
    tree.pop(MARK, None)
    known = {name for _, name in TEXTS}
    for path, name in TEXTS:
        if name in files:
            if _get(tree, path) is not None:
                warnings.append(f"{CARD_FILE}: {'.'.join(path)} is also {name}; the file is read")
            _put(tree, path, text_of(files[name], name))
    for path, folder in GREETINGS:
        got = _greetings(files, folder)
        if got is not None:
            _put(tree, path, got)
    for n in sorted(files):
        if "/" not in n and n.endswith(".md") and n not in known:
            warnings.append(f"{n}: not a card field (kept in the folder, not read)")
    pictures = _media_in(tree, files, "", CARD_FILE)
    return Unit("character", "", _check(CharacterBody, tree, CARD_FILE), pictures)


def read_lorebook(files: dict[str, bytes], folder: str) -> Unit:
    where = f"{folder}/{BOOK_FILE}"
    tree = load_map(files[where], where) if where in files else {}
    if "entries" in tree:
        raise Malformed(f"{where}: the entries are the .md files beside it, not a key", path="$.entries")
    pictures = _media_in(tree, files, f"{folder}/", where)
    entries = []
    for n in _files_in(files, folder, ".md"):
        meta, content = split_front_matter(files[n], n)
        meta.setdefault("id", n.rsplit("/", 1)[-1][:-3])  # an entry written by hand: its file's stem
        entries.append(_check(LoreEntry, {**meta, "content": content}, n))
    book = _check(LorebookBody, tree, where)
    return Unit("lorebook", folder, book.model_copy(update={"entries": entries}), pictures)


def read_regex(files: dict[str, bytes], folder: str) -> Unit:
    where = f"{folder}/{SET_FILE}"
    tree = load_map(files[where], where) if where in files else {}
    if "rules" in tree:
        raise Malformed(f"{where}: the scripts are the .yaml files beside it, not a key", path="$.rules")
    rules = []
    for n in _files_in(files, folder, ".yaml"):
        if n == where:
            continue
        rule = load_map(files[n], n)
        rule.setdefault("id", n.rsplit("/", 1)[-1][:-5])
        rules.append(_check(RegexRule, rule, n))
    regex = _check(RegexSetBody, tree, where)
    return Unit("regex", folder, regex.model_copy(update={"rules": rules}))


def linked_in(files: dict[str, bytes]) -> list[tuple[str, str]]:
    """``(kind, folder)`` of each lorebook and regex folder, lorebooks first, each in number order."""
    found: dict[str, tuple[int, str]] = {}
    for n in files:
        top = n.split("/", 1)[0]
        m = _LINKED.match(top) if "/" in n else None
        if m is not None:
            found[top] = (int(m.group(2) or 1), m.group(1))
    order = {"lorebook": 0, "regex": 1}
    return [(kind, top) for top, (n, kind) in sorted(found.items(), key=lambda t: (order[t[1][1]], t[1][0]))]


def read_escrow(files: dict[str, bytes]) -> dict[str, dict[str, Twin]]:
    """Each entity's twins from ``.bunzai/escrow.json``, by folder (``""`` the character's)."""
    data = files.get(ESCROW)
    if data is None:
        return {}
    doc = parse_json(data, what=ESCROW)
    ents = doc.get("entities") if isinstance(doc, dict) else None
    if not isinstance(ents, list):
        raise Malformed(f"{ESCROW}: expected an object with an entities array", path="$.entities")
    out: dict[str, dict[str, Twin]] = {}
    for i, ent in enumerate(ents):
        where = f"$.entities[{i}]"
        if not isinstance(ent, dict) or not isinstance(ent.get("folder"), str):
            raise Malformed(f"{ESCROW}: an entity names its folder", path=f"{where}.folder")
        original = ent.get("original")
        if not isinstance(original, dict):
            raise Malformed(f"{ESCROW}: expected an object", path=f"{where}.original")
        twins: dict[str, Twin] = {}
        for fmt, env in original.items():
            at = f"{where}.original.{fmt}"
            raw_blobs = env.get("blobs") if isinstance(env, dict) else None
            blobs: dict[str, bytes] | None = None
            if raw_blobs is not None:
                if not isinstance(raw_blobs, dict):
                    raise Malformed(f"{ESCROW}: expected an object", path=f"{at}.blobs")
                blobs = {name: _blob(files, ref, f"{at}.blobs.{name}") for name, ref in raw_blobs.items()}
            try:
                twins[fmt] = registry.twin_type(fmt).from_json(env, at, blobs)
            except Malformed as exc:
                exc.message = f"{ESCROW}: {exc.message}"
                raise
        out[ent["folder"]] = twins
    return out


def _blob(files: dict[str, bytes], ref: Any, where: str) -> bytes:
    h = ref[len("sha256:") :] if isinstance(ref, str) and ref.startswith("sha256:") else None
    data = files.get(BLOBS + h) if h else None
    if h is None or data is None or media.digest(data) != h:
        raise Malformed(f"{ESCROW}: the blob {ref!r} is not in {BLOBS} (or its bytes changed)", path=where)
    return data


def read_folder(files: dict[str, bytes], warnings: list[str]) -> list[Unit]:
    """The entities a card folder's files hold: the character, then each lorebook and regex set."""
    units = [read_character(files, warnings)]
    for kind, folder in linked_in(files):
        units.append(read_lorebook(files, folder) if kind == "lorebook" else read_regex(files, folder))
    escrow = read_escrow(files)
    for u in units:
        u.original = escrow.get(u.folder, {})
    return units


def visible(files: dict[str, bytes]) -> dict[str, bytes]:
    """The folder's files but its escrow (made again from the entities' twins on every write)."""
    return {n: v for n, v in files.items() if not n.startswith(".bunzai/")}


#: what the folder holds of the lorebooks and regex sets it embeds: everything
EMBEDDED: Mapping[str, Coverage] = MappingProxyType({"lorebook": Coverage.of("*"), "regex": Coverage.of("*")})


# -- the codec ------------------------------------------------------------------------------------------


class CardFolderCodec(Codec):
    id = FORMAT
    containers = (
        Container("zip", (".zip",), "zip", images=True),
        Container("folder", ("/",), "zip", images=True, files=True),
    )
    coverage = Coverage.of(
        "*",
        notes=[
            "every field of the canonical character, and of each lorebook and regex set it links to: "
            "long texts as Markdown files, the rest in YAML (card.yaml, book.yaml, set.yaml, front matter)",
            "pictures whose bytes the card carries are files in assets/ (a picture known by its URL only "
            "stays a URL)",
            "the escrow (.bunzai/) keeps the source formats' twins: a conversion back is byte-identical "
            "when nothing was edited",
        ],
    )
    embedded_coverage = EMBEDDED

    def decode(self, s: Sniff) -> Decoded:
        if not s.is_zip:
            raise Malformed(
                f"{CARD_FILE} is the index of a card folder, whose texts are the files beside it: "
                "read the folder it is in"
            )
        z = fileset.require(s)
        root = root_of(z.names)
        if root is None:
            raise Malformed(f"a card folder holds {CARD_FILE} at its top; this file set does not")
        files = {n[len(root) :]: data for n, data in fileset.files_of(z).items() if n.startswith(root)}
        warnings: list[str] = []
        units = read_folder(files, warnings)
        kept = visible(files)
        head = units[0]
        character = self.entity(
            s, head.body, raw={"files": sorted(kept)}, media=head.resolve, warnings=warnings, blobs=kept
        )
        character.original.update(head.original)
        out = [character]
        for u in units[1:]:
            e = self.entity(s, u.body, raw=None, part=(u.kind, u.folder), kind=u.kind, media=u.resolve)
            e.original = dict(u.original)  # its files are the character's twin
            out.append(e)
        if len(out) > 1:
            character.links[KNOWLEDGE_REFS] = [e.id for e in out[1:]]
        return Decoded(out)

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        linked = [x for x in ctx.refs(entity) if x.kind in ("lorebook", "regex")]
        for x in linked:
            ctx.embed(x)
        want = ctx.options.get("container")
        if want is not None:
            if self.container_named(want) is None:
                raise Unsupported(f"{FORMAT} is written as a folder or a zip, not {want!r}")
            ctx.written = want
        files = folder_files(entity, linked)
        twin = entity.twin(self.id)
        if twin is not None and twin.blobs:
            files = self._overlay(twin.blobs, files, entity, linked)
        return fileset.pack(files)

    def _overlay(
        self, old: dict[str, bytes], new: dict[str, bytes], e: CanonicalEntity, linked: list[CanonicalEntity]
    ) -> dict[str, bytes]:
        """The files of ``new`` over the twin's (``old``, the folder's files but its escrow), file
        by file: the twin whole when the bodies it holds are the entity's (and its linked
        entities'); else each file whose fresh content did not change keeps the twin's bytes."""
        try:
            before = [u.bound() for u in read_folder(old, [])]
            units = read_folder(old, [])
        except BunzaiError:  # a twin this bunzai cannot read again: the fresh files alone
            return new
        now = [("", e), *linked_folders(linked)]
        escrow = {n: v for n, v in new.items() if n.startswith(".bunzai/")}
        if [u.folder for u in units] == [f for f, _ in now] and all(
            body == x.body for (body, _), (_, x) in zip(before, now, strict=True)
        ):
            return {**old, **escrow}
        es = [
            CanonicalEntity(kind=u.kind, id=f"{u.kind}-twin", body=body, media=store)
            for u, (body, store) in zip(units, before, strict=True)
        ]
        base = folder_files(es[0], es[1:])
        out: dict[str, bytes] = {}
        for n, v in old.items():
            if n in new:
                out[n] = v if base.get(n) == new[n] else new[n]
            elif n not in base:
                out[n] = v  # a file this format never writes (a README): kept
        for n, v in new.items():
            out.setdefault(n, v)
        return out

    def owns(self, rel: str) -> bool:
        top = rel.split("/", 1)[0]
        if "/" not in rel:
            return rel in (CARD_FILE, GITATTRIBUTES) or rel in {name for _, name in TEXTS}
        return top in (ASSETS, ".bunzai", *(f for _, f in GREETINGS)) or _LINKED.match(top) is not None

    def layout(self, data: bytes, path: PurePath) -> list[tuple[PurePath, bytes]]:
        """The file set as the folder ``path``: each member at its name below it."""
        from bunzai_codecs.core.archive import open_zip

        z = open_zip(data, limits=fileset.LIMITS)
        return [(path.joinpath(*n.split("/")), z.read(n)) for n in z.names if not n.endswith("/")]


__all__ = ["CardFolderCodec", "read_folder", "trim"]
