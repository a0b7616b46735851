"""``bunzai convert`` as a library: one input file -> the planned output files -> the written
files and what the conversion lost.

The three steps are separate so a caller (the CLI, a batch converter) can check every planned path
before anything is written:

1. :func:`plan` decodes the input, picks the entities to write (every entity of the file that no
   other one links to, or those ``entity``/``kind`` select), names one file per entity and one per
   linked entity the target cannot embed, and encodes them all in memory;
2. :func:`write_planned` refuses to overwrite an existing file unless ``force``, then writes each
   file atomically;
3. :func:`losses` reads every written file back and compares it with what was converted, as the
   fidelity report's cross-format check does (:mod:`bunzai_codecs.fidelity`), and
   :func:`render_losses` says it in a few lines.

Targets. ``to`` is a format id or an app name, resolved for each entity
(``bundle.codec_for_export``): an app name is that app's format for the entity's kind. An entity
the target has no format for is left out; none left is a ``ConvertUsageError`` naming the formats
that hold the kind. ``image`` is the entity's picture: a PNG card's image, the portrait of any other
format that holds one (:func:`holds_picture`), a ``ConvertUsageError`` for one that holds none. A
file the codec refuses to write as asked (a container that cannot hold this entity) is a
``ConvertUsageError`` naming the output file.

Naming. ``output`` is a file name, a folder (an existing one, or a name ending in ``/``) or None
(the current folder). A file name's suffix picks the container of the target format (``card.png``
a PNG card, ``card.json`` a JSON one); a suffix the format cannot write is a usage error naming
those it can; a name without a suffix is written as given. In a folder, each entity is named after
itself (``<name><ext>``), made unique, with the extension of the bytes it holds, and the source's
container is kept where the target has it. Linked entities the target cannot embed are written
beside their entity as ``<stem>.<kind><ext>`` (one of the entity's own kind, as the other personas of
a persona backup, as ``<stem>.<its name><ext>``); further entities of a multi-entity input (a Voxta
package's other characters) next to the first as ``<stem>.<their name><ext>``, unless an earlier
file already holds them (``Export.embedded``: a package written again as a package). Nothing from an
input is used as a path but its cleaned-up name (no separators, no leading dots).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from bunzai_codecs.bundle import Export, codec_for_export, read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import Codec, Container, read_only_refusal
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.errors import EditedExportBlocked, Unsupported
from bunzai_codecs.core.files import OutputError, write_atomic
from bunzai_codecs.core.fileset import safe_stem
from bunzai_codecs.fidelity import FidelityRow, PathLoss, entity_name, export_row


class ConvertUsageError(ValueError):
    """The command asks for something the format cannot do (a suffix it cannot write, an entity the
    input does not have, a file it would overwrite): the CLI's usage error."""


@dataclass(frozen=True)
class Options:
    """What to convert to and where (see the module docstring)."""

    to: str
    output: str | None = None
    source_format: str | None = None
    entity: str | None = None
    kind: str | None = None
    image: bytes | None = None


@dataclass
class Planned:
    """One file to write: its path and the export it holds. An export in a format's several-files
    container (``Container.files``: a card folder, a character YAML with its picture) is the files
    ``layout`` lists; ``tree`` marks a folder format's export, whose ``path`` is the folder."""

    path: Path
    export: Export
    #: the entity the file's row of the loss report is about (the export's own entity)
    main: bool = True
    #: the files this export is on disk (``Codec.layout``): ``[(path, bytes)]`` for one file
    layout: list[tuple[Path, bytes]] = field(default_factory=list)
    tree: bool = False

    def laid_out(self) -> list[tuple[Path, bytes]]:
        return self.layout or [(self.path, self.export.data)]


@dataclass
class Plan:
    """Everything ``convert`` will write for one input, encoded, nothing written yet."""

    source: Path
    decoded: Decoded
    to: str
    files: list[Planned] = field(default_factory=list)

    @property
    def paths(self) -> list[Path]:
        return [f.path for f in self.files]

    def written(self) -> list[Path]:
        """Every file the plan writes (the files of a several-files export too)."""
        return [p for f in self.files for p, _ in f.laid_out()]


def _suffixes(name: str) -> str:
    base = name.rsplit("/", 1)[-1]
    dot = base.find(".", 1)
    return base[dot:] if dot > 0 else ""


def select(decoded: Decoded, entity: str | None, kind: str | None) -> list[CanonicalEntity]:
    """The entities to convert: ``entity`` (an id or a unique id prefix), else every entity of
    ``kind``, else every entity of the file that no other one links to (the primary first)."""
    es = decoded.entities
    if entity is not None:
        hits = [e for e in es if e.id == entity] or [e for e in es if e.id.startswith(entity)]
        if len(hits) != 1:
            ids = ", ".join(f"{e.id} ({e.kind})" for e in es)
            what = "no entity" if not hits else f"{len(hits)} entities"
            raise ConvertUsageError(f"--entity {entity}: {what} of this input match; its entities: {ids}")
        return hits
    if kind is not None:
        hits = [e for e in es if e.kind == kind]
        if not hits:
            kinds = ", ".join(sorted({e.kind for e in es}))
            raise ConvertUsageError(f"--kind {kind}: this input has no {kind}; it holds {kinds}")
        return hits
    linked = {ref for e in es for ref in e.knowledge_refs if ref != e.id}
    return [e for e in es if e.id not in linked] or [decoded.primary]


def _container_for(codec: Codec, name: str) -> str | None:
    """The container an output file name asks for (None: no suffix, the format chooses)."""
    if not _suffixes(name):
        return None
    found = codec.container_for_name(name)
    if found is None:
        can = ", ".join(codec.writable_suffixes())
        raise ConvertUsageError(f"{name}: {codec.id} cannot write this suffix; it writes {can}")
    return found.name


class _Names:
    """File names taken so far (case-insensitively: some file systems are)."""

    def __init__(self, taken: set[str] | None = None) -> None:
        self.taken = taken if taken is not None else set()

    def unique(self, folder: Path, stem: str, ext: str) -> Path:
        n = 1
        while True:
            name = f"{stem}{ext}" if n == 1 else f"{stem}-{n}{ext}"
            key = str(folder / name).lower()
            if key not in self.taken:
                self.taken.add(key)
                return folder / name
            n += 1

    def claim(self, path: Path) -> Path:
        self.taken.add(str(path).lower())
        return path


def _beside(export: Export) -> Iterator[Export]:
    for x in export.beside:
        yield x
        yield from _beside(x)


def _kept_suffix(source: Path, codec: Codec, ext: str) -> str:
    """The source's own suffix when the export is in the same container (``.apng``, ``.jpg``)."""
    src = source.name.lower()
    for c in codec.container_list():
        if ext in c.suffixes:
            for suf in c.suffixes:
                if src.endswith(suf.lower()):
                    return suf
    return ext


def _targets(
    decoded: Decoded, entities: list[CanonicalEntity], to: str
) -> list[tuple[CanonicalEntity, Codec]]:
    """Each entity with the codec that writes it for target ``to`` (a format id, or an app name:
    that app's format for the entity's kind); those ``to`` has no format for are left out. None
    left: ``ConvertUsageError`` saying why and naming the formats that hold the kind."""
    fit: list[tuple[CanonicalEntity, Codec]] = []
    why: list[str] = []
    for e in entities:
        try:
            fit.append((e, codec_for_export(e, to)))
        except Unsupported as exc:
            why.append(exc.message)
    if fit:
        return fit
    have = ", ".join(f"{e.id} ({e.kind})" for e in decoded.entities)
    others = [e for e in decoded.entities if e not in entities and _writes(e, to)]
    hint = " (pick one with --entity or --kind)" if others else ""
    raise ConvertUsageError(f"{why[0]}; this input's entities: {have}{hint}")


def _writes(e: CanonicalEntity, to: str) -> bool:
    try:
        codec_for_export(e, to)
    except Unsupported:
        return False
    return True


def holds_picture(codec: Codec, kind: str) -> bool:
    """Whether ``codec`` writes a picture for an entity of ``kind`` (``--image``): the kind has a
    portrait, the format's coverage holds its bytes and one of its containers holds pictures."""
    return (
        kind in PICTURE_KINDS
        and codec.coverage.covers("media.portrait.sha256")
        and any(c.images for c in codec.container_list())
    )


#: the entity kinds that have a portrait (``media.portrait``)
PICTURE_KINDS = ("character", "persona", "lorebook")


def check_image_target(to: str) -> None:
    """``ConvertUsageError`` when no entity written for target ``to`` (a format id, or an app
    name) could hold a picture (``--image``), naming the formats that can."""
    codecs = (
        [registry.get(d.id) for d in registry.apps()[to]] if to not in registry.CODECS else [registry.get(to)]
    )
    if not any(holds_picture(c, k) for c in codecs for k in c.kinds):
        kind = codecs[0].kind if len(codecs) == 1 else "character"
        raise (
            _no_picture(codecs[0], kind)
            if len(codecs) == 1
            else ConvertUsageError(
                f"--image: no format of {to} holds a picture; formats that do: {', '.join(picture_formats(kind))}"
            )
        )


def picture_formats(kind: str) -> list[str]:
    """The formats that write a picture for an entity of ``kind`` (for ``--image``'s message)."""
    return [c.id for c in registry.for_kind(kind) if holds_picture(c, kind)]  # type: ignore[arg-type]


def _no_picture(codec: Codec, kind: str, container: Container | None = None) -> ConvertUsageError:
    if container is not None and holds_picture(codec, kind):
        can = ", ".join(suf for c in codec.container_list() if c.images for suf in c.suffixes)
        return ConvertUsageError(
            f"--image: {codec.id}'s {container.suffixes[0]} file holds no picture; it does as {can}"
        )
    can = ", ".join(picture_formats(kind)) or "none"
    return ConvertUsageError(f"--image: {codec.id} holds no picture of a {kind}; formats that do: {can}")


def _image_container(codec: Codec) -> str | None:
    """The container a picture goes in when the output name does not say: the format's PNG, else
    its first container that holds pictures."""
    found = next((c for c in codec.container_list() if c.magic == "png"), None)
    found = found or next((c for c in codec.container_list() if c.images), None)
    return found.name if found is not None else None


def with_portrait(entity: CanonicalEntity, image: bytes) -> CanonicalEntity:
    """``entity`` (a copy) whose portrait is ``image`` (``--image`` for a format that is not a PNG
    card: a charx member, a ``data:`` URL...); ``write`` moves its bytes to the media store."""
    from dataclasses import replace

    from bunzai_codecs.core.media import data_url, sniff_mime
    from bunzai_codecs.entities.character import CharacterMedia, MediaAsset
    from bunzai_codecs.entities.lorebook import LorebookMedia
    from bunzai_codecs.entities.persona import PersonaMedia

    mime = sniff_mime(image) or "image/png"
    portrait = MediaAsset(role="portrait", ref=data_url(mime, image), name="main", primary=True, mime=mime)
    kinds: dict[str, type[Any]] = {
        "character": CharacterMedia,
        "persona": PersonaMedia,
        "lorebook": LorebookMedia,
    }
    media = getattr(entity.body, "media", None) or kinds[entity.kind]()
    body = entity.body.model_copy(update={"media": media.model_copy(update={"portrait": portrait})})
    return replace(entity, body=body)


def _write_one(
    e: CanonicalEntity,
    codec: Codec,
    linked: list[CanonicalEntity],
    container: str | None,
    image: bytes | None,
    name: str | None,
) -> Export:
    """``write`` for one planned file; a refusal of the codec (a container it cannot hold this
    entity in: a module with assets as module JSON) is the output choice's, named after ``name``."""
    if image is not None:
        if not holds_picture(codec, e.kind):
            raise _no_picture(codec, e.kind)
        container = container or _image_container(codec)
        chosen = codec.container_named(container) if container else None
        if chosen is not None and not chosen.images:
            raise _no_picture(codec, e.kind, chosen)
        if chosen is None or chosen.magic != "png":  # a PNG card takes it as its image (carrier)
            e, image = with_portrait(e, image), None
    try:
        return write(e, codec.id, linked=linked, container=container, image=image)
    except (Unsupported, EditedExportBlocked) as exc:
        why = f"{codec.id}: {' '.join(exc.message.split())}"
        raise ConvertUsageError(f"{name}: {why}" if name else why) from None


def plan(
    source: Path,
    data: bytes,
    opts: Options,
    *,
    cwd: Path | None = None,
    taken: set[str] | None = None,
    named_as_source: bool = False,
    uri: str | None = None,
) -> Plan:
    """Decode ``data`` (read from ``source``; ``uri`` names it in messages, default ``source``) and
    encode every file ``opts`` asks for (see the module docstring). ``taken`` is shared by a caller
    converting several inputs into one folder, so no two planned files get one name.
    ``named_as_source`` (a batch, into a folder): the first file is named after ``source``
    (:func:`source_stem`) instead of its entity, the others beside it as
    ``<stem>.<their name><ext>``, as with ``-o FILE``. Raises ``ConvertUsageError`` or a
    ``BunzaiError``."""
    decoded = read(data, source.name, uri=uri or str(source), format=opts.source_format)
    targets = _targets(decoded, select(decoded, opts.entity, opts.kind), opts.to)
    for e, codec in targets:
        if not codec.writes(e):  # a read-only format writes back only what was read from it
            raise ConvertUsageError(read_only_refusal(codec, e))
    names = _Names(taken)
    out = opts.output
    folder_mode = out is None or out.endswith(("/", os.sep)) or Path(out).is_dir()
    files_container = targets[0][1].files_container()
    if (
        files_container is not None
        and is_folder_container(files_container)
        and out is not None
        and not named_as_source
        and not _suffixes(Path(out).name)
    ):
        folder_mode = False  # a folder format: -o names the folder it writes (mycard/), not one to fill
    folder = (cwd or Path.cwd()) if out is None else Path(out) if folder_mode else Path(out).parent
    named: str | None = None  # the container -o FILE's suffix asks of the first file's format
    if not folder_mode and out is not None:
        named = _container_for(targets[0][1], Path(out).name)
    result = Plan(source, decoded, opts.to)
    first_stem = ""
    inside: set[str] = set()
    for i, (e, codec) in enumerate(targets):
        if e.id in inside:
            continue  # the file of an earlier entity holds it (a Voxta package's other characters)
        container = named if i == 0 or codec is targets[0][1] else None
        image = opts.image
        if container is None:  # files on disk, where the format has them (unless a picture asks its PNG)
            container = _files_default(codec, image)
        # the file an encoder's refusal is about: -o FILE, else the input (a batch names it itself)
        shown = out if not folder_mode and i == 0 else None if named_as_source else uri or str(source)
        if image is not None and named_as_source and opts.to not in registry.CODECS:
            # a batch to an app: the picture goes to each entity whose format holds one
            image = image if holds_picture(codec, e.kind) else None
        export = _write_one(e, codec, decoded.entities, container, image, shown)
        inside |= export.embedded
        stem = safe_stem(entity_name(e)) or safe_stem(source.name.split(".")[0]) or "export"
        if named_as_source and folder_mode:
            if i == 0:
                first_stem = source_stem(source, decoded)
                path = names.unique(folder, first_stem, _kept_suffix(source, codec, export.extension))
            else:
                path = names.unique(folder, f"{first_stem}.{stem}", export.extension)
        elif not folder_mode and out is not None:
            if i == 0:
                path = names.claim(Path(out))
                first_stem = (
                    Path(out).name[: len(Path(out).name) - len(_suffixes(Path(out).name))] or "export"
                )
            else:
                path = names.unique(folder, f"{first_stem}.{stem}", export.extension)
        else:
            path = names.unique(folder, stem, _kept_suffix(source, codec, export.extension))
            first_stem = first_stem or path.name[: len(path.name) - len(_suffixes(path.name))]
        result.files.append(_laid_out(codec, path, export))
        own_stem = path.name[: len(path.name) - len(_suffixes(path.name))] or stem
        for side in _beside(export):
            # a linked entity of another kind is <stem>.<kind> (card.lorebook.json); one of the same
            # kind (a persona backup's other personas) is named after itself
            sub: str = side.entity.kind
            if side.entity.kind == e.kind:
                sub = safe_stem(entity_name(side.entity)) or sub
            p = names.unique(
                path.parent if result.files[-1].tree else folder, f"{own_stem}.{sub}", side.extension
            )
            result.files.append(Planned(p, side, main=False))
    return result


def _files_default(codec: Codec, image: bytes | None) -> str | None:
    """The container an export is written in when the output name does not say: the format's
    several-files one (``Container.files``: a card folder, a character YAML with its picture),
    unless a picture is given and the format has a PNG (which then carries it); else the codec's
    choice (None)."""
    files = codec.files_container()
    if files is None or (image is not None and any(c.magic == "png" for c in codec.container_list())):
        return None
    return files.name


def is_folder_container(c: Container) -> bool:
    """A container that is a folder (its suffix ``/``: a card folder), not files named by a suffix."""
    return c.files and all(suf.endswith("/") for suf in c.suffixes)


def _laid_out(codec: Codec, path: Path, export: Export) -> Planned:
    """The planned file(s) of a main export: the files a several-files container is on disk."""
    c = codec.container_named(export.container) if export.container else None
    if c is None or not c.files:
        return Planned(path, export)
    laid = [(Path(p), data) for p, data in codec.layout(export.data, path)]
    for p, _ in laid:  # the codec's layout stays inside the export's folder (the folder itself for a tree)
        inside = p.parent if not is_folder_container(c) else p
        base = path.parent if not is_folder_container(c) else path
        if not (inside == base or base in inside.parents):
            raise ValueError(f"{codec.id} laid out {p} outside {base}")
    return Planned(path, export, layout=laid, tree=is_folder_container(c))


def source_stem(source: Path, decoded: Decoded) -> str:
    """``source``'s name without the suffix of the format it was read as (``aria.vaud.json`` ->
    ``aria``, ``keeper.v2.json`` -> ``keeper.v2``), else without its last suffix."""
    return _split_source(source, decoded)[0]


def source_tag(source: Path, decoded: Decoded) -> str:
    """The suffix :func:`source_stem` took off, as a stem can hold it (``.zip`` -> ``-zip``,
    ``.vaud.json`` -> ``-vaud-json``; ``""`` when none was): what tells apart two inputs that
    would write one name in a batch (``quill.lumiverse-zip.png``)."""
    suffix = _split_source(source, decoded)[1]
    tag = safe_stem(suffix.lower().strip(".").replace(".", "-"))
    return f"-{tag}" if tag else ""


def _split_source(source: Path, decoded: Decoded) -> tuple[str, str]:
    name = source.name
    fmt = decoded.primary.source.format if decoded.primary.source else None
    sufs = registry.get(fmt).suffixes if fmt and fmt in registry.CODECS else ()
    for suf in sorted(sufs, key=len, reverse=True):
        if len(name) > len(suf) and name.lower().endswith(suf.lower()):
            return safe_stem(name[: -len(suf)]) or "export", name[-len(suf) :]
    if "." in name[1:]:
        stem, _, suffix = name.rpartition(".")
        return safe_stem(stem) or "export", f".{suffix}"
    return safe_stem(name) or "export", ""


def existing(p: Plan) -> list[Path]:
    """The planned paths that already exist (``write_planned`` refuses them without ``force``)."""
    return [path for path in p.written() if path.exists()]


def stale_files(folder: Path, format_id: str, keep: set[Path]) -> list[Path]:
    """The files of an existing folder of a folder format (a card folder) that the format writes
    (``Codec.owns``) but a new export into it does not: a forced write removes them, so the folder
    reads back as what was written. Other files (a README, ``.git/``) are left alone."""
    if not folder.is_dir():
        return []
    codec = registry.get(format_id)
    out = []
    for q in sorted(folder.rglob("*")):
        if q in keep or q.is_dir() or q.is_symlink():
            continue
        rel = q.relative_to(folder).as_posix()
        if codec.owns(rel):
            out.append(q)
    return out


def write_planned(p: Plan, *, force: bool = False) -> list[Path]:
    """Write every planned file (every file of a several-files export); raises
    ``ConvertUsageError`` (writing nothing) when one of them exists and ``force`` is not set. A
    forced write into a folder format's existing folder also removes the files of the format the
    new export does not have (:func:`stale_files`). Returns every file written."""
    folders = [path for path in p.written() if path.is_dir()]
    if folders:
        raise OutputError(f"{folders[0]}: is a folder; give a file name (or a folder ending in /)")
    if not force:
        there = existing(p)
        if there:
            more = f" (and {len(there) - 1} more)" if len(there) > 1 else ""
            raise ConvertUsageError(f"{there[0]} exists{more}: pass --force to overwrite")
    keep = set(p.written())
    stale = (
        [q for f in p.files if f.tree for q in stale_files(f.path, f.export.format, keep)] if force else []
    )
    for f in p.files:
        for path, data in f.laid_out():
            write_atomic(path, data)
    for q in stale:
        q.unlink(missing_ok=True)
    return p.written()


def losses(p: Plan) -> list[FidelityRow]:
    """What each written entity lost or changed: its file read back with the target's codec and
    compared with the entity (and the entities it links to), as fidelity's cross check does, and
    what its source file held outside every entity that the written file does not
    (:func:`outside_losses`)."""
    rows = []
    for f in p.files:
        if not f.main:
            continue
        e = f.export.entity
        source = e.source.format if e.source else ""
        row = export_row(
            e,
            p.decoded.entities,
            f.export,
            name=f.path.name,
            input=str(p.source),
            source=source,
            side_names={id(q.export): q.path.name for q in p.files if not q.main},
        )
        rows.append(outside_losses(row, e, source, f.export, f.path.name))
    return rows


#: how a part of a file outside every entity is named in a loss report (``Codec.outside``)
OUTSIDE = "{} (outside every entity)"


def outside_losses(
    row: FidelityRow, e: CanonicalEntity, source: str, export: Export, name: str
) -> FidelityRow:
    """``row`` with what ``e``'s source file held outside every entity (``Codec.outside``: a
    NovelAI scenario's story around its book) that the written file does not hold, as lost or
    changed: expected when the written file holds nothing outside its entities (a bare lorebook has
    no place for a story), unexpected when it does and still differs."""
    before = registry.get(source).outside(e) if source in registry.CODECS else {}
    if not before or row.error is not None:
        return row
    target = registry.get(export.format)
    back = read(export.data, name, format=export.format).primary
    after = target.outside(back)
    cls: Literal["expected", "unexpected"] = "unexpected" if after else "expected"
    lost = [PathLoss(OUTSIDE.format(k), cls, 1, k) for k in before if k not in after]
    changed = [PathLoss(OUTSIDE.format(k), cls, 1, k) for k in before if k in after and after[k] != before[k]]
    if lost or changed:
        row.lost = [*row.lost, *lost]
        row.changed = [*row.changed, *changed]
        if cls == "unexpected" or row.status == "lossless":
            row.status = cls
    return row


def render_losses(rows: Sequence[FidelityRow]) -> list[str]:
    """The loss report's lines: per written entity, unexpected then expected lost/changed paths
    with their counts, then what the target added (a default portrait, a field's default)."""
    out: list[str] = []
    for r in rows:
        label = f"{r.name or r.entity} ({r.kind}) -> {r.target}"
        if r.error is not None:
            out.append(f"{label}: could not be read back: {r.error.type}: {r.error.message}")
            continue
        groups: dict[str, list[tuple[str, PathLoss]]] = {"unexpected": [], "expected": [], "info": []}
        for change, loss in r.losses():
            groups[loss.cls].append((change, loss))
        n_unexp, n_exp = (sum(x.count for _, x in groups[k]) for k in ("unexpected", "expected"))
        if not (n_unexp or n_exp or groups["info"]):
            out.append(f"{label}: nothing lost")
            continue
        out.append(f"{label}: {n_unexp} unexpected, {n_exp} expected lost or changed")
        for cls, title in (
            ("unexpected", "unexpected (the target holds these: a bug)"),
            ("expected", "expected (the target has no place for these)"),
            ("info", "added or re-encoded by the target (kept)"),
        ):
            items = groups[cls]
            if not items:
                continue
            out.append(f"  {title}: {sum(x.count for _, x in items)}")
            for change, loss in items:
                times = f" x{loss.count}" if loss.count > 1 else ""
                verb = "re-encoded (same pixels)" if cls == "info" and change == "changed" else change
                at = f" (first at {loss.at})" if loss.count > 1 and loss.at and loss.at != loss.path else ""
                out.append(f"    {verb} {loss.path}{times}{at}")
    return out


def unexpected(rows: Sequence[FidelityRow]) -> bool:
    """Whether any row lost or changed something its target holds (or could not be read back)."""
    return any(r.status in ("unexpected", "error") for r in rows)


__all__ = [
    "ConvertUsageError",
    "Options",
    "Plan",
    "Planned",
    "existing",
    "losses",
    "outside_losses",
    "plan",
    "render_losses",
    "safe_stem",
    "select",
    "source_stem",
    "source_tag",
    "unexpected",
    "write_planned",
]
