"""Storage for the pipeline, all through fsspec: URLs (chains included) to filesystems, a streamed
listing, bounded reads and atomic writes.

- ``Storage`` turns a URL into ``(filesystem, path)`` with the user's ``--storage-options``; it is
  picklable configuration, so DoFns build their filesystems in ``setup()`` on the worker. A
  ``gcp-secret:`` value is looked up (``secrets.py``) only there, when a filesystem is opened: the
  job graph (pickled into the Dataflow job) carries the name, never the secret.
- ``list_files`` expands one input (a file, a directory, a glob, a chain such as
  ``zip://**::s3://bucket/dump.zip``) as a generator: one directory listing (or, on S3, one page of
  a flat listing) in memory at a time, never the whole bucket.
- ``write_bytes`` / ``open_atomic`` / ``copy_file`` / ``move_file`` never leave a partial file
  visible: local files are written beside their target and renamed; object stores publish an
  object only when its upload completes (a local spool is uploaded in one ``put_file``).
- ``move_file`` is a rename locally; object stores have none, so it is a server-side copy, then a
  delete of the source (docs/architecture.md, "The commit on object stores"). ``remove_file`` and
  ``remove_tree`` take "already gone" as done: a delete whose answer was lost is retried by the
  store's client, and on GCS the retry is answered 404.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

import fsspec
from fsspec.core import split_protocol, url_to_fs
from fsspec.spec import AbstractFileSystem
from fsspec.utils import glob_translate

from bunzai_codecs.core import fileset
from pipeline.runtime.secrets import resolve_secrets

_MAGIC = re.compile(r"[*?\[]")
#: info keys that hold a content checksum, in order of preference (S3, GCS, zip members)
_CHECKSUM_KEYS = ("ETag", "etag", "md5Hash", "crc32c", "CRC", "parts-checksum")
_LOCAL = frozenset({"file", "local"})


@dataclass(frozen=True)
class Storage:
    """The user's storage options, applied to every URL the job opens (inputs, output, ``--since``).

    ``options`` is either keyed by protocol (``{"s3": {...}, "gcs": {...}}``: each protocol of a URL
    gets its own) or flat (``{"endpoint_url": ...}``: applied to the storage the URL ends on, never
    to local files). It holds credentials: never log it or write it anywhere.
    """

    options: Mapping[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:  # keeps secrets out of tracebacks and logs
        return f"Storage(<{len(self.options)} option(s) hidden>)"

    def kwargs_for(self, url: str) -> dict[str, Any]:
        if not self.options:
            return {}
        protocols = [split_protocol(bit)[0] or "file" for bit in url.split("::")]
        if _keyed_by_protocol(self.options):
            out = {}
            for p in protocols:
                names = _protocol_names(p)
                for key, opts in self.options.items():
                    if key in names:
                        out[p] = dict(opts)
            return out
        inner = protocols[-1]
        return {} if inner in _LOCAL else {inner: dict(self.options)}

    def fs(self, url: str) -> tuple[AbstractFileSystem, str]:
        """The filesystem and path for ``url`` (chained URLs included), secret references resolved."""
        kwargs = resolve_secrets(self.kwargs_for(url))
        if "::" in url:
            # an archive filesystem holds the archive open: a cached one would serve the bytes the
            # archive had when first opened in this process
            kwargs["skip_instance_cache"] = True
        fs, path = url_to_fs(url, **kwargs)
        return fs, path


def is_local_url(url: str) -> bool:
    """Whether ``url`` ends on this machine's disk (a plain path, ``file://``, or a chain such as
    ``zip://**::/tmp/dump.zip`` whose innermost store is local)."""
    inner = url.split("::")[-1]
    return (split_protocol(inner)[0] or "file") in _LOCAL


def _protocol_names(protocol: str) -> set[str]:
    """``protocol`` and its aliases (``gs``/``gcs``, ``s3``/``s3a``), without importing the backend."""
    from fsspec.registry import known_implementations

    cls = known_implementations.get(protocol, {}).get("class")
    return {protocol} | {p for p, spec in known_implementations.items() if cls and spec.get("class") == cls}


def _keyed_by_protocol(options: Mapping[str, Any]) -> bool:
    known = set(fsspec.available_protocols())
    return bool(options) and all(k in known and isinstance(v, Mapping) for k, v in options.items())


def is_local(fs: AbstractFileSystem) -> bool:
    protos = fs.protocol if isinstance(fs.protocol, tuple | list) else (fs.protocol,)
    return bool(_LOCAL & set(protos))


def join(root: str, rel: str) -> str:
    """``root`` (a path or URL, as given) joined with a relative ``a/b`` path."""
    if not root:
        return rel
    if root.endswith("://"):
        return root + rel
    return root.rstrip("/") + "/" + rel


# -- inputs --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FileRef:
    """One input file as listed: where it is, and what the listing said about it."""

    #: the file's URL as users see it (and as ``--since`` matches it): ``samples/vaud/aria.vaud.json``,
    #: ``s3://bucket/cards/a.png``, ``zip://cards/a.png::s3://bucket/dump.zip``
    uri: str
    #: index of the ``--input`` whose filesystem holds it
    root: int
    #: its path inside that filesystem
    path: str
    size: int | None
    #: a content checksum from the store (S3 ETag, GCS md5/crc32c, zip CRC), if it gives one
    etag: str | None
    #: an input made of several files (``bunzai_codecs.core.fileset``: a card folder, a character
    #: YAML with its picture): their names relative to ``path``, then the folder that holds them;
    #: read as one file set. Empty for a file
    parts: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class InputSpec:
    """One ``--input``: how its filesystem paths map back to user-facing URIs."""

    url: str
    #: the non-glob head of the URL's first segment, as the user wrote it (``samples``, ``zip://``)
    head: str
    #: ``::`` and the rest of a chained URL, or ``""``
    tail: str

    @classmethod
    def parse(cls, url: str) -> InputSpec:
        first, sep, rest = url.partition("::")
        m = _MAGIC.search(first)
        if m is None:
            head = first
        else:
            proto_end = first.find("://") + 3 if "://" in first else 0
            cut = first.rfind("/", proto_end, m.start())
            if cut < 0:
                head = first[:proto_end]  # "zip://**" -> "zip://"; "*.json" -> ""
            elif cut == 0:
                head = "/"
            else:
                head = first[:cut]
        return cls(url, head, sep + rest)

    def root_path(self, fs: AbstractFileSystem) -> str:
        """``head`` as a path of ``fs`` (what the listing's paths start with)."""
        path: str = fs._strip_protocol(self.head or ".")
        return path

    def uri_for(self, root_path: str, path: str) -> str:
        """The URI of ``path``, a file the listing found under ``root_path``."""
        rel = path[len(root_path) :].lstrip("/") if path.startswith(root_path) else path
        if not rel:  # the input named the file itself
            return self.head + self.tail
        return join(self.head, rel) + self.tail


def checksum(info: Mapping[str, Any]) -> str | None:
    for k in _CHECKSUM_KEYS:
        v = info.get(k)
        if v not in (None, ""):
            return str(v).strip('"')
    return None


def list_files(
    fs: AbstractFileSystem,
    path: str,
    on_error: Callable[[OSError], None] | None = None,
    *,
    hidden: bool = False,
    groups: bool = False,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every file matching ``path`` (a file, a directory — everything below it — or a glob), as
        ``(path, info)``, streamed. Names starting with ``.`` are skipped, as are their folders,
        unless ``hidden``.

    ``FileNotFoundError`` when ``path`` (or the folder its glob starts from) does not exist. A
        folder below it that cannot be listed — refused, or gone since its parent was listed — goes to
        ``on_error`` (raised without one), its ``filename`` the folder: the input was there, only part
        of it could not be seen, which a caller must not mistake for a missing input.

        ``groups`` (the job's inputs): the files of one input made of several
        (``bunzai_codecs.core.fileset``) come as one item, ``(its path, info)`` with
        ``info["parts"]``, their names relative to ``info["base"]``, the folder that holds them: a card
        folder (its path is the folder, nothing below it comes on its own), a character YAML with its
        picture (its path is the YAML's). A folder's files are grouped where its listing is walked; on
        S3, whose listing is flat, only a card folder named as the input itself is."""
    m = _MAGIC.search(path)
    if m is None:
        info = fs.info(path)
        if info["type"] != "directory":
            yield path, info
            return
        if groups and fs.isfile(join(path, fileset.CARD_FILE)):
            yield card_folder(fs, path.rstrip("/"), on_error)
            return
        root, match, maxdepth = path, None, None
    else:
        cut = path.rfind("/", 0, m.start())
        root = path[:cut] if cut > 0 else ("/" if cut == 0 else "")
        match = re.compile(glob_translate(path)).match
        maxdepth = None if "**" in path else path[cut + 1 :].count("/") + 1
    yield from _walk(fs, root, match, maxdepth, on_error, hidden, groups)


def _ls(
    fs: AbstractFileSystem, path: str, on_error: Callable[[OSError], None] | None, *, top: bool = False
) -> list[dict[str, Any]] | None:
    """One folder's listing (detail), as the store has it now, or None when it could not be listed
    and ``on_error`` took the error, its ``filename`` the folder. Raised without ``on_error``, and
    when ``top`` (the folder the input names, or its glob starts from) does not exist."""
    if hasattr(fs, "invalidate_cache") and not is_local(fs):
        # a listing cached earlier in this process (gcsfs keeps them) predates what other
        # workers wrote or removed since: the commit's prune must see the store as it is
        fs.invalidate_cache(path)
    try:
        listing: list[dict[str, Any]] = fs.ls(path, detail=True)
    except OSError as exc:
        if on_error is None or (top and isinstance(exc, FileNotFoundError)):
            raise  # the folder the input names (or its glob starts from) does not exist
        if getattr(exc, "filename", None) is None:
            exc.filename = path  # a folder below the input: its reject names it, never the input
        on_error(exc)
        return None
    return listing


def card_folder(
    fs: AbstractFileSystem, folder: str, on_error: Callable[[OSError], None] | None
) -> tuple[str, dict[str, Any]]:
    """A card folder as one listed input: every file below it (``fileset.folder_member``; a
    symbolic link is listed, never followed, and refused when read), their sizes summed."""
    parts: list[str] = []
    sums: list[str | None] = []
    size = 0
    base = fs._strip_protocol(folder).rstrip("/")
    stack = [base]
    while stack:
        here = stack.pop()
        listing = _ls(fs, here, on_error)
        if listing is None:
            continue
        dirs = []
        for info in sorted(listing, key=lambda i: str(i["name"])):
            full = info["name"].rstrip("/")
            if full == here:
                continue
            rel = full[len(base) + 1 :]
            if not fileset.folder_member(rel):
                continue
            if info.get("type") == "directory" and not info.get("islink"):
                dirs.append(full)
            else:
                parts.append(rel)
                sums.append(checksum(info))
                size += int(info.get("size") or 0)
        stack.extend(sorted(dirs, reverse=True))
    order = sorted(range(len(parts)), key=parts.__getitem__)
    info = {"type": "file", "name": folder, "size": size, "parts": [parts[i] for i in order], "base": folder}
    return folder, _with_checksum(info, [parts[i] for i in order], [sums[i] for i in order])


def _with_checksum(info: dict[str, Any], names: list[str], sums: list[str | None]) -> dict[str, Any]:
    """``info`` of an input of several files with a checksum of theirs when the store gave each one
    (a digest of the names and checksums: ``--since`` then skips it unread when none changed)."""
    if sums and all(sums):
        h = hashlib.sha256("".join(f"{n}\0{c}\n" for n, c in zip(names, sums, strict=True)).encode())
        info["parts-checksum"] = h.hexdigest()
    return info


def _grouped(
    fs: AbstractFileSystem,
    path: str,
    files: list[tuple[str, dict[str, Any]]],
    match: Callable[[str], Any] | None,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """One folder's files (sorted) with each character YAML grouped with its picture."""
    names = [full.rsplit("/", 1)[-1] for full, _ in files]
    pairs = {y: pic for y, pic in fileset.pairs(names).items() if match is None or match(join(path, y))}
    pictures = set(pairs.values())
    sizes = {full.rsplit("/", 1)[-1]: info.get("size") for full, info in files}
    sums = {full.rsplit("/", 1)[-1]: checksum(info) for full, info in files}
    for (full, info), name in zip(files, names, strict=True):
        if name in pictures:
            continue
        if name in pairs:
            pic = pairs[name]
            a, b = sizes[name], sizes[pic]
            size = a + b if isinstance(a, int) and isinstance(b, int) else None
            info = {"type": "file", "name": full, "size": size, "parts": [name, pic], "base": path}
            yield full, _with_checksum(info, [name, pic], [sums[name], sums[pic]])
        elif match is None or match(full):
            yield full, info


def _hidden(path: str, root: str) -> bool:
    rel = path[len(root) :] if path.startswith(root) else path
    return any(part.startswith(".") for part in rel.split("/") if part)


def _walk(
    fs: AbstractFileSystem,
    root: str,
    match: Callable[[str], Any] | None,
    maxdepth: int | None,
    on_error: Callable[[OSError], None] | None,
    hidden: bool,
    groups: bool = False,
) -> Iterator[tuple[str, dict[str, Any]]]:
    if type(fs).__name__ == "S3FileSystem" and root.strip("/"):
        yield from _walk_s3(fs, root, match, maxdepth, hidden)
        return
    # not ``fs.walk``: it hands ``on_error`` to the top folder's listing only, and below it an
    # error (a folder we may not list) silently reads as an empty folder
    stack: list[tuple[str, int]] = [(fs._strip_protocol(root), 1)]
    while stack:
        path, depth = stack.pop()
        listing = _ls(fs, path, on_error, top=depth == 1)
        if listing is None:
            continue
        files: list[tuple[str, dict[str, Any]]] = []
        dirs: list[str] = []
        for info in listing:
            full = info["name"].rstrip("/")
            name = full.rsplit("/", 1)[-1]
            if name.startswith(".") and not hidden:
                continue
            if info.get("type") == "directory":
                if full != path:
                    dirs.append(full)
            else:
                files.append((full, info))
        files.sort(key=lambda f: f[0])
        card = groups and any(full.rsplit("/", 1)[-1] == fileset.CARD_FILE for full, _ in files)
        if card and (match is None or match(join(path, fileset.CARD_FILE))):
            yield card_folder(fs, path, on_error)
            continue  # nothing below a card folder is an input of its own
        if groups:
            yield from _grouped(fs, path, files, match)
        else:
            for full, info in files:
                if match is None or match(full):
                    yield full, info
        if hasattr(fs, "invalidate_cache") and not is_local(fs):
            fs.invalidate_cache(path)  # listings are not kept: a big tree stays out of memory
        if maxdepth is None or depth < maxdepth:
            stack.extend((d, depth + 1) for d in sorted(dirs, reverse=True))


def _walk_s3(
    fs: Any, root: str, match: Callable[[str], Any] | None, maxdepth: int | None, hidden: bool
) -> Iterator[tuple[str, dict[str, Any]]]:
    """A flat, paginated listing (one page of up to 1000 keys in memory at a time)."""
    from fsspec.asyn import sync

    root = root.strip("/")
    bucket, _, key = root.partition("/")
    prefix = key + "/" if key else ""
    pages = fs._iterdir(bucket, delimiter="", prefix=prefix)
    base_depth = root.count("/")
    while True:
        try:
            info = sync(fs.loop, pages.__anext__)
        except StopAsyncIteration:
            return
        full = info["name"]
        if info.get("type") == "directory" or full.endswith("/") or (not hidden and _hidden(full, root)):
            continue
        if maxdepth is not None and full.count("/") - base_depth > maxdepth:
            continue
        if match is None or match(full):
            yield full, info


def read_bounded(fs: AbstractFileSystem, path: str, limit: int, size: int | None = None) -> bytes:
    """At most ``limit`` bytes of the file; ``OverflowError`` when it is longer (a listed size can
    be stale, so the read itself is bounded). An empty object is read without a range: S3 answers
    a range on it with 416."""
    if size == 0:
        data: bytes = fs.cat_file(path)
    elif size is not None and size < limit:
        # a range just past the listed size: a file read asks for the whole range at once
        # (a local read allocates it: ``limit`` is 96 MiB by default); one byte more tells a
        # file that grew since it was listed, which is then read again up to the limit
        data = fs.cat_file(path, start=0, end=size + 1)
        if len(data) > size:
            data = fs.cat_file(path, start=0, end=limit + 1)
    else:
        data = fs.cat_file(path, start=0, end=limit + 1)
    if len(data) > limit:
        raise OverflowError(limit)
    return data


#: block size of ``read_lines``
LINE_BLOCK = 1 << 20


def read_lines(
    fs: AbstractFileSystem, path: str, start: int = 0, end: int | None = None, *, block: int = LINE_BLOCK
) -> Iterator[bytes]:
    """The lines (newline kept) of ``path[start:end]``, read in ``block``-byte ranges.

    Reads go through ``fs.cat_file``, which retries a store's transient errors, never through a
    file object: s3fs's buffered reader answers a read that failed with a 503 or a dropped
    connection with ``b""``, which looks like the end of the file. A range that comes back shorter
    than asked is an ``OSError``, never a silent end.
    """
    if end is None:
        end = int(fs.size(path))
    pos, buf, i = start, b"", 0
    while True:
        nl = buf.find(b"\n", i)
        if nl >= 0:
            yield buf[i : nl + 1]
            i = nl + 1
            continue
        if pos >= end:
            if i < len(buf):
                yield buf[i:]
            return
        want = min(end, pos + block)
        chunk = fs.cat_file(path, start=pos, end=want)
        if len(chunk) != want - pos:
            raise OSError(f"{path}: read {len(chunk)} bytes at byte {pos}, expected {want - pos}")
        buf, i, pos = buf[i:] + chunk, 0, want


# -- outputs -------------------------------------------------------------------------------------


def _tmp_beside(path: str) -> str:
    parent, _, name = path.rpartition("/")
    return f"{parent}/.{name}.tmp-{uuid.uuid4().hex}"


def write_bytes(fs: AbstractFileSystem, path: str, data: bytes) -> None:
    """Write a whole file atomically."""
    if is_local(fs):
        fs.makedirs(path.rpartition("/")[0], exist_ok=True)
        tmp = _tmp_beside(path)
        try:
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.remove(tmp)
            raise
    else:
        fs.pipe_file(path, data)


@contextlib.contextmanager
def open_atomic(fs: AbstractFileSystem, path: str) -> Iterator[IO[bytes]]:
    """A file to stream into; it appears at ``path`` only when the block exits without error."""
    if is_local(fs):
        fs.makedirs(path.rpartition("/")[0], exist_ok=True)
        tmp = _tmp_beside(path)
        try:
            with open(tmp, "wb") as f:
                yield f
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.remove(tmp)
            raise
    else:
        with tempfile.NamedTemporaryFile(prefix="bunzai-", suffix=".part") as spool:
            yield spool
            spool.flush()
            fs.put_file(spool.name, path)


def copy_file(src_fs: AbstractFileSystem, src: str, dst_fs: AbstractFileSystem, dst: str) -> None:
    """Copy atomically; server-side when both ends are the same object store."""
    if src_fs is dst_fs and not is_local(dst_fs):
        dst_fs.copy(src, dst)
        return
    write_bytes(dst_fs, dst, src_fs.cat_file(src))


#: the folder inside a run's staging folder where its finished files wait for the commit, under
#: their final relative paths
STAGED = "out"


def staged_path(staging: str, rel: str) -> str:
    """Where the file ``rel`` (relative to the output) waits for the commit: ``<staging>/out/<rel>``."""
    return f"{staging}/{STAGED}/{rel}"


def move_file(fs: AbstractFileSystem, src: str, dst: str) -> None:
    """Move within one filesystem: a rename locally (atomic); on an object store a server-side
    copy (S3 CopyObject, GCS rewrite), then a delete of the source, so ``dst`` appears whole and
    ``src`` goes after. Not ``fs.mv``: gcsfs first tries GCS's move API, which not every
    GCS-compatible endpoint has, and retries its refusal for half a minute per file.

    A move asked again after it was done (a retried bundle) finds ``src`` gone and ``dst`` there:
    that is done, not an error (the staging folder it moves from is this run's alone)."""
    if is_local(fs):
        fs.makedirs(dst.rpartition("/")[0], exist_ok=True)
        try:
            os.replace(src, dst)
        except FileNotFoundError:
            if not os.path.exists(dst) or os.path.exists(src):
                raise
        return
    try:
        fs.cp_file(src, dst)
    except FileNotFoundError:
        if hasattr(fs, "invalidate_cache"):
            fs.invalidate_cache(dst.rpartition("/")[0])
        if not fs.exists(dst):
            raise
        return
    remove_file(fs, src)


def remove_file(fs: AbstractFileSystem, path: str) -> bool:
    """Remove one file; ``False`` when it was not there. On an object store, a delete whose answer
    was lost is retried by the client and the retry finds nothing (GCS answers 404): the file is
    gone all the same, as asked."""
    try:
        fs.rm_file(path)
    except FileNotFoundError:
        return False
    return True


def remove_tree(fs: AbstractFileSystem, path: str) -> None:
    """Remove a folder and everything below it; a folder that is not there (or whose files were
    all gone by the time they were deleted) is not an error."""
    with contextlib.suppress(FileNotFoundError):
        fs.rm(path, recursive=True)


@dataclass(frozen=True)
class Output:
    """The output folder: ``url`` as given, opened with ``storage`` (lazily, once per process)."""

    url: str
    storage: Storage

    def open(self) -> tuple[AbstractFileSystem, str]:
        fs, root = self.storage.fs(self.url)
        return fs, root.rstrip("/") or root

    def display(self, rel: str) -> str:
        return join(self.url, rel)


__all__ = [
    "FileRef",
    "InputSpec",
    "Output",
    "Storage",
    "checksum",
    "copy_file",
    "is_local",
    "is_local_url",
    "join",
    "list_files",
    "move_file",
    "open_atomic",
    "read_bounded",
    "read_lines",
    "remove_file",
    "remove_tree",
    "staged_path",
    "write_bytes",
]
