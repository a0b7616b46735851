"""Bounded zip reading and deterministic zip writing for .charx, JPEG+ZIP hybrids and other zipped cards.

Reading trusts nothing in the archive. Every limit in ``ArchiveLimits`` is checked against the
central directory before a single byte is inflated, and enforced again while inflating, because
declared sizes can lie. Member names are validated so they can never escape a folder when used as
paths. Data before the zip (a JPEG, a self-extractor stub) is tolerated and reported. The stdlib
``zipfile`` parses the directory; this module inflates members itself so it can stop at the
declared size. Writing gives the same bytes for the same members: fixed timestamps, fixed
permissions, members in the order given.

Every failure on bad input is a ``Malformed`` / ``LimitExceeded`` (or ``Unsupported`` for
encryption and exotic compression) naming the member in ``path`` or the byte ``offset``; no
``zipfile.BadZipFile`` or ``zlib.error`` escapes.
"""

from __future__ import annotations

import io
import re
import struct
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass

from bunzai_codecs.core import inflate
from bunzai_codecs.core.errors import LimitExceeded, Malformed, Unsupported

ZIP_STORED = zipfile.ZIP_STORED
ZIP_DEFLATED = zipfile.ZIP_DEFLATED
#: the fixed timestamp of every written member (the earliest a zip can express)
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)

_MIB = 1024 * 1024
_EOCD_SIG = b"PK\x05\x06"
_EOCD64_LOCATOR_SIG = b"PK\x06\x07"
_EOCD64_SIG = b"PK\x06\x06"
_CD_SIG = b"PK\x01\x02"
_LOCAL_SIG = b"PK\x03\x04"
_EOCD_SIZE = 22
_EOCD64_SIZE = 56
_EOCD64_LOCATOR_SIZE = 20
_CD_SIZE = 46
_LOCAL_SIZE = 30
_FLAG_ENCRYPTED = 0x0001
_FLAG_STRONG_ENCRYPTION = 0x0040
_S_IFMT = 0o170000
_S_IFLNK = 0o120000
_FILE_MODE = 0o100644 << 16
_DIR_MODE = (0o040755 << 16) | 0x10  # 0x10: the MS-DOS directory bit, for non-unix readers
_UNIX = 3
_DRIVE = re.compile(r"^[A-Za-z]:")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

# zipfile's failure modes on hostile bytes are not one exception type; all of them mean "not a
# readable zip" here (UnicodeDecodeError, a ValueError, comes from a bad UTF-8-flagged name)
_ZIPFILE_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    ValueError,
    struct.error,
    EOFError,
    OSError,
    NotImplementedError,
    IndexError,
    OverflowError,
)


@dataclass(frozen=True, slots=True)
class ArchiveLimits:
    """Safety bounds for one archive read. The defaults are the seed's (96 MiB / 512 / 64 MiB / 96 MiB)."""

    #: the whole archive, prefix included
    max_archive: int = 96 * _MIB
    max_entries: int = 512
    #: one member, inflated or compressed
    max_entry: int = 64 * _MIB
    #: all members inflated, summed
    max_total: int = 96 * _MIB
    #: inflated / compressed size of one member; deflate tops out near 1032, real cards stay far below
    max_ratio: float = 200.0
    #: members inflating to less than this are exempt from the ratio check (tiny JSON compresses well)
    ratio_floor: int = 1 * _MIB


DEFAULT_LIMITS = ArchiveLimits()


@dataclass(frozen=True, slots=True)
class ZipMember:
    """One member as the central directory declares it."""

    name: str
    #: declared inflated size
    size: int
    compressed_size: int
    #: ZIP_STORED or ZIP_DEFLATED (kept so an export can reuse it)
    method: int
    crc: int
    #: byte offset of the member's local header in the input (prefix included)
    offset: int
    is_dir: bool


@dataclass(frozen=True, slots=True)
class ZipMemberSpec:
    """One member to write. ``method`` None means the writer's default."""

    name: str
    data: bytes
    method: int | None = None


def safe_member_name(name: str) -> str:
    """Return ``name`` unchanged if it is a safe relative member path, else raise ``Malformed``.

    Refused: empty names, NUL and other control characters, backslashes, absolute paths
    (``/x``, ``C:/x``, ``C:x``), and ``..``, ``.`` or empty segments (``a//b``). A trailing ``/``
    (a directory member) is allowed.
    """
    if not name:
        raise Malformed("empty zip member name", path=name)
    if _CONTROL.search(name):
        raise Malformed("zip member name contains a control character", path=repr(name))
    if "\\" in name:
        raise Malformed("zip member name contains a backslash", path=name)
    if name.startswith("/") or _DRIVE.match(name):
        raise Malformed("zip member name is an absolute path", path=name)
    segments = name.removesuffix("/").split("/")
    for seg in segments:
        if seg in ("", ".", ".."):
            raise Malformed(f"zip member name has a {seg or 'empty'!r} segment", path=name)
    return name


class ZipReader:
    """A zip listed once from its central directory; members are inflated on demand, bounded."""

    def __init__(self, data: bytes, members: tuple[ZipMember, ...], prefix_length: int, comment: bytes):
        self._data = data
        self.members = members
        self._by_name = {m.name: m for m in members}
        #: bytes before the first local header (a JPEG in a Risu .jpeg card, an SFX stub); 0 for a plain zip
        self.prefix_length = prefix_length
        self.comment = comment

    @property
    def names(self) -> tuple[str, ...]:
        """Member names in central-directory order."""
        return tuple(m.name for m in self.members)

    @property
    def prefix(self) -> bytes:
        return self._data[: self.prefix_length]

    def has(self, name: str) -> bool:
        return name in self._by_name

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def info(self, name: str) -> ZipMember:
        """The member's declared facts; ``Malformed`` when the archive has no such member."""
        try:
            return self._by_name[name]
        except KeyError:
            raise Malformed("archive has no such member", path=name) from None

    def read(self, name: str) -> bytes:
        """The member's bytes, checked against its declared size and CRC.

        Inflation stops one byte past the declared size (itself within the limits), so a member
        that lies about its size costs at most that much memory before it is rejected.
        """
        m = self.info(name)
        data = self._data
        start, _ = _local_header(data, m)
        raw = memoryview(data)[start : start + m.compressed_size]
        out = bytes(raw) if m.method == ZIP_STORED else _inflate_member(raw, m)
        if len(out) != m.size:
            raise Malformed(f"member inflates to {len(out)} bytes, declared {m.size}", path=m.name)
        if zlib.crc32(out) != m.crc:
            raise Malformed("member fails its CRC check", path=m.name)
        return out


def open_zip(data: bytes, *, limits: ArchiveLimits = DEFAULT_LIMITS) -> ZipReader:
    """List a zip (possibly with data before it) and check every limit and name before inflating.

    Raises ``LimitExceeded`` for an archive, entry count, member size, total or ratio over
    ``limits``; ``Malformed`` for a truncated or corrupt archive, an unsafe or duplicate name, a
    symlink member, or overlapping members; ``Unsupported`` for encrypted members or a compression
    method other than stored/deflated.
    """
    if len(data) > limits.max_archive:
        raise LimitExceeded(f"archive is {len(data)} bytes, above the {limits.max_archive} byte bound")
    # count the central directory's entries ourselves first: zipfile would build an object per
    # entry before we could object, and a 96 MiB directory holds about two million of them
    counted = _count_entries(data, limits.max_entries)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = zf.infolist()
            comment = zf.comment
    except _ZIPFILE_ERRORS as e:
        raise Malformed(f"not a readable zip: {e}") from None
    if len(infos) != counted:
        raise Malformed(f"central directory lists {len(infos)} entries, expected {counted}")

    members: list[ZipMember] = []
    seen: set[str] = set()
    total = 0
    for zi in infos:
        # orig_filename still holds what zipfile cuts off at a NUL
        name = zi.orig_filename
        safe_member_name(name)
        if name in seen:
            raise Malformed("duplicate zip member name", path=name)
        seen.add(name)
        if zi.flag_bits & (_FLAG_ENCRYPTED | _FLAG_STRONG_ENCRYPTION):
            raise Unsupported("encrypted zip member", path=name)
        if (zi.external_attr >> 16) & _S_IFMT == _S_IFLNK:
            raise Malformed("symlink zip member", path=name)
        if zi.compress_type not in (ZIP_STORED, ZIP_DEFLATED):
            raise Unsupported(f"zip compression method {zi.compress_type}", path=name)
        if zi.file_size > limits.max_entry or zi.compress_size > limits.max_entry:
            raise LimitExceeded(
                f"member declares {zi.file_size} bytes ({zi.compress_size} compressed), "
                f"above the {limits.max_entry} byte bound",
                path=name,
            )
        if zi.compress_type == ZIP_STORED and zi.compress_size != zi.file_size:
            raise Malformed("stored member's sizes disagree", path=name)
        if zi.file_size >= limits.ratio_floor and zi.file_size > limits.max_ratio * max(zi.compress_size, 1):
            raise LimitExceeded(
                f"member compression ratio {zi.file_size / max(zi.compress_size, 1):.0f} "
                f"above the bound of {limits.max_ratio:g}",
                path=name,
            )
        total += zi.file_size
        if total > limits.max_total:
            raise LimitExceeded(
                f"members inflate to more than the {limits.max_total} byte total bound", path=name
            )
        members.append(
            ZipMember(
                name=name,
                size=zi.file_size,
                compressed_size=zi.compress_size,
                method=zi.compress_type,
                crc=zi.CRC,
                offset=zi.header_offset,
                is_dir=name.endswith("/"),
            )
        )
    prefix_length = _check_layout(data, members, zf.start_dir)
    return ZipReader(data, tuple(members), prefix_length, comment)


def write_zip(
    members: Iterable[ZipMemberSpec | tuple[str, bytes]],
    *,
    prefix: bytes = b"",
    method: int = ZIP_DEFLATED,
    level: int = 6,
) -> bytes:
    """A zip of ``members`` in the order given, after ``prefix`` (e.g. JPEG bytes), deterministically.

    Every member gets the 1980-01-01 timestamp, unix mode 0644 (0755 for ``dir/`` members), UTF-8
    names flagged only when non-ASCII, and ``method`` unless its spec names its own. Names are
    checked with ``safe_member_name``; duplicates are ``Malformed``. Offsets count from the start of
    the output, so the result opens as a zip with or without a prefix.
    """
    if method not in (ZIP_STORED, ZIP_DEFLATED):
        raise ValueError(f"unsupported zip method {method}")
    buf = io.BytesIO()
    buf.write(prefix)
    seen: set[str] = set()
    with zipfile.ZipFile(buf, "w") as zf:
        for item in members:
            spec = item if isinstance(item, ZipMemberSpec) else ZipMemberSpec(item[0], item[1])
            name = safe_member_name(spec.name)
            if name in seen:
                raise Malformed("duplicate zip member name", path=name)
            seen.add(name)
            m = method if spec.method is None else spec.method
            if m not in (ZIP_STORED, ZIP_DEFLATED):
                raise ValueError(f"unsupported zip method {m} for {name!r}")
            zi = zipfile.ZipInfo(name, date_time=ZIP_EPOCH)
            # ZipInfo defaults create_system to the running platform; pin it so output is portable
            zi.create_system = _UNIX
            zi.external_attr = _DIR_MODE if name.endswith("/") else _FILE_MODE
            zi.compress_type = m
            zf.writestr(zi, spec.data, compresslevel=level if m == ZIP_DEFLATED else None)
    return buf.getvalue()


def _find_eocd(data: bytes) -> tuple[int, int, int, bool]:
    """(EOCD position, central directory size, its offset, zip64?) located the way zipfile does."""
    n = len(data)
    if n >= _EOCD_SIZE and data[n - _EOCD_SIZE : n - _EOCD_SIZE + 4] == _EOCD_SIG and data[-2:] == b"\0\0":
        pos = n - _EOCD_SIZE
    else:
        lo = max(n - (1 << 16) - _EOCD_SIZE, 0)
        pos = data.rfind(_EOCD_SIG, lo)
        if pos < 0 or pos + _EOCD_SIZE > n:
            raise Malformed("not a zip: no end-of-central-directory record")
    size_cd, offset_cd = struct.unpack_from("<II", data, pos + 12)
    loc = pos - _EOCD64_LOCATOR_SIZE
    if loc >= 0 and data[loc : loc + 4] == _EOCD64_LOCATOR_SIG:
        rec = loc - _EOCD64_SIZE
        if rec >= 0 and data[rec : rec + 4] == _EOCD64_SIG:
            size_cd, offset_cd = struct.unpack_from("<QQ", data, rec + 40)
            return pos, size_cd, offset_cd, True
    return pos, size_cd, offset_cd, False


def _count_entries(data: bytes, max_entries: int) -> int:
    """Walk the central directory's fixed headers, stopping as soon as the count passes ``max_entries``."""
    pos, size_cd, offset_cd, zip64 = _find_eocd(data)
    concat = pos - size_cd - offset_cd - (_EOCD64_SIZE + _EOCD64_LOCATOR_SIZE if zip64 else 0)
    start = offset_cd + concat
    if start < 0 or start + size_cd > len(data):
        raise Malformed("central directory lies outside the file (truncated?)", offset=pos)
    count = 0
    p, end = start, start + size_cd
    while p < end:
        if p + _CD_SIZE > end or data[p : p + 4] != _CD_SIG:
            raise Malformed("corrupt central directory entry", offset=p)
        count += 1
        if count > max_entries:
            raise LimitExceeded(f"archive has more than {max_entries} entries", offset=p)
        n, m, k = struct.unpack_from("<HHH", data, p + 28)
        p += _CD_SIZE + n + m + k
    return count


def _local_header(data: bytes, m: ZipMember) -> tuple[int, bytes]:
    """(data start, raw name) from the member's local header."""
    p = m.offset
    if p < 0 or p + _LOCAL_SIZE > len(data) or data[p : p + 4] != _LOCAL_SIG:
        raise Malformed("bad local header", path=m.name, offset=p)
    n, k = struct.unpack_from("<HH", data, p + 26)
    if p + _LOCAL_SIZE + n + k > len(data):
        raise Malformed("local header runs past the end of the file", path=m.name, offset=p)
    return p + _LOCAL_SIZE + n + k, data[p + _LOCAL_SIZE : p + _LOCAL_SIZE + n]


def _same_name(raw: bytes, name: str) -> bool:
    # the local header's own flags may disagree with the central ones; either decoding may apply
    if raw.decode("cp437") == name:
        return True
    try:
        return raw.decode("utf-8") == name
    except UnicodeDecodeError:
        return False


def _check_layout(data: bytes, members: list[ZipMember], start_dir: int) -> int:
    """Check each member's local header and data lie in the file without overlap; return the prefix length.

    Overlapping members are how "non-recursive" zip bombs reuse one compressed stream many times,
    and a local name that differs from the central one lets two readers see two different files
    (Risu reads local headers, we read the central directory), so both are refused.
    """
    prev_end = 0
    prev_name = ""
    first = start_dir
    for m in sorted(members, key=lambda x: x.offset):
        start, local_name = _local_header(data, m)
        if not _same_name(local_name, m.name):
            raise Malformed("local header names a different file", path=m.name, offset=m.offset)
        end = start + m.compressed_size
        if end > start_dir or end > len(data):
            raise Malformed("member data runs past the central directory (truncated?)", path=m.name)
        if m.offset < prev_end:
            raise Malformed(f"member overlaps {prev_name!r}", path=m.name, offset=m.offset)
        prev_end, prev_name = end, m.name
        first = min(first, m.offset)
    return first


def _inflate_member(raw: memoryview, m: ZipMember) -> bytes:
    """Raw-deflate ``raw``, asking zlib for at most declared size + 1 bytes in total."""
    if m.size == 0 and len(raw) == 0:
        return b""
    try:
        return inflate.bounded(raw, m.size, wbits=inflate.RAW_DEFLATE)
    except inflate.Truncated:
        raise Malformed("member's deflate stream is truncated", path=m.name) from None
    except inflate.TooLarge:
        raise LimitExceeded(
            f"member inflates past its declared size of {m.size} bytes", path=m.name
        ) from None
    except inflate.Corrupt as e:
        raise Malformed(f"member has bad deflate data ({e})", path=m.name) from None
