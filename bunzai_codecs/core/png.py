"""PNG chunk reading and writing for cards that carry their data in text chunks.

Character cards hide JSON (usually base64) in ``tEXt`` chunks; some tools also write ``zTXt`` or
``iTXt``. This module splits a PNG into chunks, decodes the text chunks with bounded inflation, and
writes a PNG back with text chunks swapped while every other chunk (image data, APNG frames, eXIf,
anything unknown) keeps its bytes and position. It never decodes pixels.

Every failure on bad input is a ``Malformed`` (or ``LimitExceeded``) carrying the byte offset of
the chunk's length field, so a reject says where the file breaks.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal, cast

from bunzai_codecs.core import inflate
from bunzai_codecs.core.errors import LimitExceeded, Malformed

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

TextChunkType = Literal["tEXt", "zTXt", "iTXt"]
TEXT_TYPES: tuple[TextChunkType, ...] = ("tEXt", "zTXt", "iTXt")

_MIB = 1024 * 1024
#: more chunks than this is not a card; 10k text chunks (one per asset) is still far below it
MAX_CHUNKS = 100_000
#: bound on one zTXt/iTXt value once inflated
MAX_INFLATE = 64 * _MIB
#: bound on all zTXt/iTXt values of one text_chunks() call once inflated
MAX_INFLATE_TOTAL = 96 * _MIB

#: the PNG spec caps a chunk length at 2^31 - 1
_MAX_CHUNK_LENGTH = 0x7FFFFFFF
_IEND = b"IEND"
_TEXT_TYPE_BYTES = frozenset(t.encode("ascii") for t in TEXT_TYPES)
#: the chunks of pixel data (PNG ``IDAT``, APNG ``fdAT``): bunzai never decodes them, so a reader that
#: only looks at a card's text chunks may leave their CRCs unchecked (``parse(skip_crc=IMAGE_DATA)``)
IMAGE_DATA = frozenset({b"IDAT", b"fdAT"})


@dataclass(frozen=True, slots=True)
class Chunk:
    """One PNG chunk: its 4-byte type, its data, and where its length field sits in the file."""

    type: bytes
    data: bytes
    #: byte offset of the chunk's length field in the source file; -1 for a chunk built in memory
    offset: int = -1
    #: the CRC as the file stores it, for a chunk whose CRC ``parse`` was told not to check
    #: (``skip_crc``); ``build`` writes it back as read, so such a chunk keeps its bytes (a wrong CRC
    #: included: nothing unchecked is repaired silently). ``None``: ``build`` computes the CRC
    crc: int | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class PngFile:
    """A parsed PNG: the chunks up to and including ``IEND``, and whatever bytes follow it."""

    chunks: tuple[Chunk, ...]
    #: bytes after IEND (some tools append data; polyglots put a zip there); kept for a lossless rebuild
    trailing: bytes = b""

    def build(self) -> bytes:
        """The file again; byte-identical to the input when no chunk was changed."""
        return build(self.chunks, self.trailing)


@dataclass(frozen=True, slots=True)
class TextChunk:
    """A decoded tEXt/zTXt/iTXt chunk."""

    #: the keyword as written (Latin-1 decoded, case kept)
    keyword: str
    #: the value's bytes, inflated for zTXt and compressed iTXt; never charset-decoded
    text: bytes
    chunk_type: TextChunkType
    #: position of the chunk in the chunk list it was decoded from
    index: int
    #: True for zTXt and for iTXt with the compression flag set
    compressed: bool = False
    #: iTXt language tag ("" otherwise)
    language: str = ""
    #: iTXt translated keyword, UTF-8 decoded ("" otherwise)
    translated_keyword: str = ""


def parse(
    data: bytes,
    *,
    check_crc: bool = True,
    skip_crc: Collection[bytes] = (),
    max_chunks: int = MAX_CHUNKS,
) -> PngFile:
    """Split a PNG into chunks, checking the signature, every length, every CRC, and that IEND exists.

    Raises ``Malformed`` (with the offending chunk's offset) on a bad signature, a length running
    past the end, a bad chunk type or CRC, or a missing ``IEND``; ``LimitExceeded`` past
    ``max_chunks``. Bytes after ``IEND`` are kept in ``PngFile.trailing``.

    ``skip_crc`` names chunk types whose CRC is not checked (:data:`IMAGE_DATA`: a card reader never
    looks at the pixels, and their CRC is most of a card's parse); such a chunk keeps its stored CRC
    (``Chunk.crc``), which ``build`` writes back unchanged. Every other chunk, the text chunks a
    card is read from among them, is checked as usual.
    """
    view = memoryview(data)
    if bytes(view[:8]) != PNG_SIGNATURE:
        raise Malformed("not a PNG: bad signature", offset=0)
    chunks: list[Chunk] = []
    pos = 8
    end = len(data)
    while True:
        if pos + 8 > end:
            raise Malformed("PNG ends before IEND (truncated)", offset=pos)
        (length,) = struct.unpack_from(">I", data, pos)
        ctype = bytes(view[pos + 4 : pos + 8])
        if not _valid_type(ctype):
            raise Malformed(f"bad PNG chunk type {ctype!r}", offset=pos)
        if length > _MAX_CHUNK_LENGTH:
            raise Malformed(f"{_name(ctype)} chunk length {length} above the PNG maximum", offset=pos)
        data_end = pos + 8 + length
        if data_end + 4 > end:
            raise Malformed(f"{_name(ctype)} chunk runs past the end of the file (truncated)", offset=pos)
        if len(chunks) >= max_chunks:
            raise LimitExceeded(f"more than {max_chunks} PNG chunks", offset=pos)
        body = bytes(view[pos + 8 : data_end])
        kept: int | None = None
        if ctype in skip_crc:
            (kept,) = struct.unpack_from(">I", data, data_end)
        elif check_crc:
            (stored,) = struct.unpack_from(">I", data, data_end)
            if zlib.crc32(body, zlib.crc32(ctype)) != stored:
                raise Malformed(f"bad CRC in {_name(ctype)} chunk", offset=pos)
        chunks.append(Chunk(ctype, body, pos, kept))
        pos = data_end + 4
        if ctype == _IEND:
            return PngFile(tuple(chunks), bytes(view[pos:]))


def read_chunks(data: bytes, *, check_crc: bool = True, max_chunks: int = MAX_CHUNKS) -> list[Chunk]:
    """The chunks of a PNG, up to and including IEND (see ``parse``, which also keeps trailing bytes)."""
    return list(parse(data, check_crc=check_crc, max_chunks=max_chunks).chunks)


def text_chunks(
    chunks: Sequence[Chunk],
    *,
    keywords: Collection[str] | None = None,
    max_inflate: int = MAX_INFLATE,
    max_total: int = MAX_INFLATE_TOTAL,
    errors: list[tuple[int, str | None, Malformed]] | None = None,
) -> list[TextChunk]:
    """Decode the text chunks, in file order.

    With ``errors`` (a list), a chunk that fails to decode is recorded there as
    ``(chunk index, lowercased keyword or None, error)`` and skipped instead of raising, so one
    broken chunk does not hide the others; a total-budget ``LimitExceeded`` still raises.

    ``keywords`` (matched case-insensitively) restricts decoding to those keywords: the others are
    neither inflated nor validated, so a broken unrelated chunk cannot sink a card. zTXt/iTXt
    values inflate through a bounded stream: past ``max_inflate`` bytes for one chunk, or
    ``max_total`` for the whole call, ``LimitExceeded`` is raised before any more is inflated. A
    missing keyword separator, an unknown compression method or bad zlib data is ``Malformed``.
    """
    wanted = None if keywords is None else {k.lower() for k in keywords}
    out: list[TextChunk] = []
    budget = max_total
    for index, chunk in enumerate(chunks):
        if chunk.type not in _TEXT_TYPE_BYTES:
            continue
        if wanted is not None and keyword_of(chunk) not in wanted:
            continue
        # the tighter of the two bounds applies, and the error names which one was hit
        bound = (max_inflate, "per-chunk") if max_inflate <= budget else (budget, "total")
        try:
            text = _decode_text(chunk, index, bound)
        except Malformed as exc:
            if errors is None or (isinstance(exc, LimitExceeded) and bound[1] == "total"):
                raise
            # without its traceback: a recorded error must not keep the frames (and their buffers) alive
            errors.append((index, keyword_of(chunk), exc.with_traceback(None)))
            continue
        if text.compressed:
            budget -= len(text.text)
        out.append(text)
    return out


def find_text(
    texts: Iterable[TextChunk],
    keyword: str,
    *,
    chunk_types: Collection[TextChunkType] = TEXT_TYPES,
) -> TextChunk | None:
    """The first text chunk whose keyword matches ``keyword`` case-insensitively (as ST matches ``chara``)."""
    key = keyword.lower()
    for t in texts:
        if t.chunk_type in chunk_types and t.keyword.lower() == key:
            return t
    return None


def make_text_chunk(
    keyword: str,
    text: bytes,
    chunk_type: TextChunkType = "tEXt",
    *,
    compress: bool = False,
    language: str = "",
    translated_keyword: str = "",
    level: int = 9,
) -> Chunk:
    """A new text chunk. zTXt is always compressed; iTXt is compressed when ``compress`` is set.

    Raises ``ValueError`` for a keyword that is not 1-79 Latin-1 characters without NUL, or a tEXt
    value containing NUL (the spec forbids it and SillyTavern's reader throws on it): both are
    caller errors, since card payloads are base64.
    """
    kw = _keyword_bytes(keyword)
    if chunk_type == "tEXt":
        if b"\0" in text:
            raise ValueError("a tEXt value cannot contain NUL")
        return Chunk(b"tEXt", kw + b"\0" + text)
    if chunk_type == "zTXt":
        return Chunk(b"zTXt", kw + b"\0\0" + zlib.compress(text, level))
    if chunk_type == "iTXt":
        lang = language.encode("latin-1")
        if b"\0" in lang:
            raise ValueError("an iTXt language tag cannot contain NUL")
        translated = translated_keyword.encode("utf-8")
        if b"\0" in translated:
            raise ValueError("an iTXt translated keyword cannot contain NUL")
        value = zlib.compress(text, level) if compress else text
        head = kw + b"\0" + (b"\1" if compress else b"\0") + b"\0"
        return Chunk(b"iTXt", head + lang + b"\0" + translated + b"\0" + value)
    raise ValueError(f"not a text chunk type: {chunk_type!r}")


def build(chunks: Iterable[Chunk], trailing: bytes = b"") -> bytes:
    """Serialise chunks as a PNG, recomputing every length and CRC from the chunk data (a chunk
    that carries the CRC it was read with, ``Chunk.crc``, gets that one).

    A chunk read from a file comes out byte-identical (its CRC was checked on the way in, or kept).
    """
    parts = [PNG_SIGNATURE]
    for c in chunks:
        if not _valid_type(c.type):
            raise ValueError(f"bad PNG chunk type {c.type!r}")
        if len(c.data) > _MAX_CHUNK_LENGTH:
            raise ValueError(f"{_name(c.type)} chunk too long for PNG")
        parts.append(struct.pack(">I", len(c.data)))
        parts.append(c.type)
        parts.append(c.data)
        crc = c.crc if c.crc is not None else zlib.crc32(c.data, zlib.crc32(c.type))
        parts.append(struct.pack(">I", crc))
    parts.append(trailing)
    return b"".join(parts)


def replace_text(
    source: bytes | PngFile | Sequence[Chunk],
    *,
    remove: Callable[[TextChunk], bool] | Collection[str],
    add: Sequence[Chunk] = (),
    max_inflate: int = MAX_INFLATE,
    max_total: int = MAX_INFLATE_TOTAL,
) -> bytes:
    """Drop matching text chunks and insert ``add`` immediately before IEND, as SillyTavern writes cards.

    ``remove`` is either a collection of keywords (case-insensitive; matches tEXt, zTXt and iTXt
    alike, so no stale copy survives in another chunk type; only keywords are read, nothing is
    inflated, and a text chunk too broken to have a keyword is kept as it is) or a predicate over
    decoded ``TextChunk`` s (every text chunk is decoded under the usual bounds, so a broken one is
    ``Malformed``). Every other chunk keeps its bytes and its position, and bytes after IEND are kept.
    Given bytes, the pixel data's CRCs are not checked (:data:`IMAGE_DATA`): a picture whose pixels
    are damaged is written back exactly as it was read, as every card reader reads it.
    """
    if isinstance(source, bytes | bytearray | memoryview):
        png = parse(bytes(source), skip_crc=IMAGE_DATA)  # the pixels are written back as they were read
    elif isinstance(source, PngFile):
        png = source
    else:
        png = PngFile(tuple(source))
    chunks = png.chunks
    if callable(remove):
        decoded = text_chunks(chunks, max_inflate=max_inflate, max_total=max_total)
        drop = {t.index for t in decoded if remove(t)}
    else:
        names = {k.lower() for k in remove}
        drop = {i for i, c in enumerate(chunks) if keyword_of(c) in names}
    iend = next((i for i in range(len(chunks) - 1, -1, -1) if chunks[i].type == _IEND), None)
    if iend is None:
        raise Malformed("PNG has no IEND chunk to insert text before")
    kept = [c for i, c in enumerate(chunks[:iend]) if i not in drop]
    return build([*kept, *add, *chunks[iend:]], png.trailing)


def keyword_of(chunk: Chunk) -> str | None:
    """The lowercased keyword of a text chunk; None for other chunks or a text chunk without one."""
    if chunk.type not in _TEXT_TYPE_BYTES:
        return None
    sep = chunk.data.find(b"\0")
    return None if sep < 0 else chunk.data[:sep].decode("latin-1").lower()


def _decode_text(chunk: Chunk, index: int, bound: tuple[int, str]) -> TextChunk:
    data = chunk.data
    ctype = cast(TextChunkType, chunk.type.decode("ascii"))
    sep = data.find(b"\0")
    if sep < 0:
        raise Malformed(f"{ctype} chunk has no keyword separator", offset=chunk.offset)
    keyword = data[:sep].decode("latin-1")
    where = f"{ctype} {keyword!r} chunk"
    if ctype == "tEXt":
        return TextChunk(keyword, data[sep + 1 :], ctype, index)
    if ctype == "zTXt":
        if len(data) < sep + 2:
            raise Malformed(f"{where} has no compression method", offset=chunk.offset)
        if data[sep + 1] != 0:
            raise Malformed(f"{where} uses unknown compression method {data[sep + 1]}", offset=chunk.offset)
        text = _inflate(data, sep + 2, bound, where, chunk.offset)
        return TextChunk(keyword, text, ctype, index, compressed=True)
    # iTXt: keyword \0 flag method language \0 translated-keyword \0 text
    if len(data) < sep + 3:
        raise Malformed(f"{where} is truncated", offset=chunk.offset)
    flag, method = data[sep + 1], data[sep + 2]
    if flag not in (0, 1):
        raise Malformed(f"{where} has bad compression flag {flag}", offset=chunk.offset)
    lang_end = data.find(b"\0", sep + 3)
    tr_end = data.find(b"\0", lang_end + 1) if lang_end >= 0 else -1
    if tr_end < 0:
        raise Malformed(f"{where} lacks its language/translated-keyword fields", offset=chunk.offset)
    language = data[sep + 3 : lang_end].decode("latin-1")
    # display-only field: a bad byte here must not cost the value, which stays bytes anyway
    translated = data[lang_end + 1 : tr_end].decode("utf-8", errors="replace")
    if flag:
        if method != 0:
            raise Malformed(f"{where} uses unknown compression method {method}", offset=chunk.offset)
        text = _inflate(data, tr_end + 1, bound, where, chunk.offset)
    else:
        text = data[tr_end + 1 :]
    return TextChunk(keyword, text, ctype, index, bool(flag), language, translated)


def _inflate(data: bytes, start: int, bound: tuple[int, str], where: str, offset: int) -> bytes:
    """Inflate ``data[start:]`` to at most ``bound[0]`` bytes; zlib is never asked for more than that + 1."""
    limit, which = bound
    try:
        return inflate.bounded(memoryview(data)[start:], limit)
    except inflate.Truncated:
        raise Malformed(f"{where}: compressed stream is truncated", offset=offset) from None
    except inflate.TooLarge:
        raise LimitExceeded(
            f"{where} inflates past the {which} bound of {limit} bytes", offset=offset
        ) from None
    except inflate.Corrupt as e:
        raise Malformed(f"{where}: bad zlib data ({e})", offset=offset) from None


def _keyword_bytes(keyword: str) -> bytes:
    try:
        kw = keyword.encode("latin-1")
    except UnicodeEncodeError:
        raise ValueError(f"PNG keyword {keyword!r} is not Latin-1") from None
    if not 1 <= len(kw) <= 79 or b"\0" in kw:
        raise ValueError(f"PNG keyword {keyword!r} must be 1-79 characters without NUL")
    return kw


def _valid_type(ctype: bytes) -> bool:
    # chunk types are four ASCII letters; anything else means we are reading garbage
    return len(ctype) == 4 and all(65 <= b <= 90 or 97 <= b <= 122 for b in ctype)


def _name(ctype: bytes) -> str:
    return ctype.decode("latin-1")
