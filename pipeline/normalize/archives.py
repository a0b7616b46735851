"""Archives given as inputs: ``--input dump.zip`` reads the files inside it.

An ``--input`` that names one file ending in ``.zip``, ``.tar``, ``.tar.gz`` or ``.tgz`` is read as
a folder of inputs — as if ``zip://**::dump.zip`` (``tar://**::...``) had been written — unless it
is a card container: ``.charx``, ``.byaf`` and Lumiverse's ``.lumiverse.zip`` are zips too. That
is the codec registry's call, not the name's: the file is read (bounded by ``--max-file-bytes``)
and detected like any input; only when no codec recognises it and it is a zip or tar archive is it
expanded. A file over ``--max-file-bytes`` cannot be read as a card at all, so it is expanded when
its first bytes are an archive's. Each member is then an input of its own, named by its chain URL
(``zip://cards/a.png::s3://bucket/dump.zip``), listed from the archive's index and read bounded
by ``--max-file-bytes`` like any other (pipeline/normalize/read.py, ``ReadBytes``).

Globs, folders and URLs that are chains already are left as they are.
"""

from __future__ import annotations

import io
import tarfile
import zipfile
from typing import Any

from bunzai_codecs.core import registry
from bunzai_codecs.core.errors import BunzaiError
from bunzai_codecs.core.sniff import Sniff
from pipeline.runtime.storage import read_bounded

#: name endings read as archives, and the fsspec protocol that reads each
SUFFIXES = ((".tar.gz", "tar"), (".tgz", "tar"), (".tar", "tar"), (".zip", "zip"))
_MAGIC = set("*?[")


def protocol_for(url: str) -> str | None:
    """The archive protocol an input's name suggests (``zip``, ``tar``), or ``None`` (a glob, a
    chain, or another name)."""
    if "::" in url or _MAGIC & set(url):
        return None
    name = url.rstrip("/").rsplit("/", 1)[-1].lower()
    for suffix, proto in SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return proto
    return None


def _is_archive(proto: str, head: bytes, whole: bool) -> bool:
    """Whether ``head`` (the file, or only its first bytes when not ``whole``) is a ``proto``
    archive."""
    if proto == "zip":
        return zipfile.is_zipfile(io.BytesIO(head)) if whole else head.startswith(b"PK")
    if head[:2] == b"\x1f\x8b":  # .tar.gz: the tar inside is fsspec's to find
        return True
    if whole:
        try:
            return tarfile.is_tarfile(io.BytesIO(head))
        except (OSError, tarfile.TarError):
            return False
    return head[257:262] == b"ustar"


def archive_input(url: str, fs: Any, path: str, max_bytes: int) -> str | None:
    """``zip`` / ``tar`` when the input ``url`` (``path`` on ``fs``) is an archive to read as a
    folder of inputs, else ``None`` (read it as one file)."""
    proto = protocol_for(url)
    if proto is None:
        return None
    info = fs.info(path)
    if info.get("type") == "directory":
        return None
    size = info.get("size")
    if size is not None and size > max_bytes:
        return proto if _is_archive(proto, fs.cat_file(path, start=0, end=512), whole=False) else None
    try:
        data = read_bounded(fs, path, max_bytes, size)
    except OverflowError:  # grew past the limit since it was listed
        return proto if _is_archive(proto, fs.cat_file(path, start=0, end=512), whole=False) else None
    try:
        if registry.detect_all(Sniff(data, path.rsplit("/", 1)[-1], uri=url)).best is not None:
            return None  # a card container (.charx, .byaf, .lumiverse.zip, ...): one input
    except BunzaiError:
        pass
    return proto if _is_archive(proto, data, whole=True) else None


def chain_url(proto: str, url: str) -> str:
    """The fsspec chain that lists every member of the archive at ``url``."""
    return f"{proto}://**::{url}"


def member_protocol(uri: str, input_url: str) -> str | None:
    """The archive protocol of a listed file's ``uri`` when the listing expanded ``input_url``
    (a plain archive) into members, else ``None``."""
    if "::" not in uri or "::" in input_url:
        return None
    proto = uri.split("://", 1)[0]
    return proto if proto in ("zip", "tar") else None


__all__ = ["SUFFIXES", "archive_input", "chain_url", "member_protocol", "protocol_for"]
