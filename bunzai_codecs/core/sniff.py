"""Sniff: one input (bytes + name) with everything detectors need, each parsed at most once.

Every codec scores the same ``Sniff``. Parsing is lazy and cached: the JSON tree (orjson), the PNG
chunk list and text chunks, the zip listing. However many detectors look, a 20 KB JSON card is
parsed once; a PNG's chunks are walked once; a zip's central directory is read once. A parse error
is cached too, so a detector sees "not JSON" cheaply and a decoder can raise the real error.

The input's bytes are hashed once (``sha256``: entity ids, provenance). A PNG card's picture is the
file less its card chunks (``core.media.png_image``), the same bytes up to the first chunk it leaves
out: :meth:`Sniff.digest_of` hashes only the picture's own tail, from the hasher state the file's
digest kept where that chunk starts, so a card's file and portrait cost one pass over their bytes.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast

import orjson

from bunzai_codecs.core.errors import BunzaiError, LimitExceeded, Malformed

if TYPE_CHECKING:
    from bunzai_codecs.core.archive import ZipReader
    from bunzai_codecs.core.png import PngFile, TextChunk

#: the largest input bunzai reads into memory (the archive bound)
MAX_INPUT_BYTES = 96 * 1024 * 1024

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
JPEG_MAGIC = b"\xff\xd8\xff"
ZIP_MAGIC = b"PK\x03\x04"
GZIP_MAGIC = b"\x1f\x8b"

_WS = b" \t\r\n"

#: the PNG chunks a picture of a card may leave out (its text payloads, Backyard's EXIF card)
_PAYLOAD_CHUNKS = frozenset({b"tEXt", b"zTXt", b"iTXt", b"eXIf"})


class _Unset:
    __slots__ = ()


_UNSET: Any = _Unset()

T = TypeVar("T")


class Sniff:
    """The input as detectors and decoders see it."""

    #: process-wide parse counters (tests check that N detectors cost one parse)
    parse_counts: ClassVar[dict[str, int]] = {"json": 0, "png": 0, "zip": 0}

    __slots__ = (
        "_json",
        "_json_error",
        "_memo",
        "_png",
        "_png_error",
        "_png_text_errors",
        "_png_texts",
        "_sha256",
        "_states",
        "_zip",
        "_zip_error",
        "data",
        "name",
        "uri",
    )

    def __init__(self, data: bytes, name: str = "", *, uri: str | None = None) -> None:
        if len(data) > MAX_INPUT_BYTES:
            raise LimitExceeded(
                f"input is {len(data)} bytes; the limit is {MAX_INPUT_BYTES}", uri=uri or name or None
            )
        self.data = data
        self.name = name
        self.uri = uri if uri is not None else (name or None)
        self._json: Any = _UNSET
        self._json_error: BunzaiError | None = None
        self._png: Any = _UNSET
        self._png_error: BunzaiError | None = None
        self._png_texts: Any = _UNSET
        self._png_text_errors: list[tuple[int, str | None, Malformed]] = []
        self._zip: Any = _UNSET
        self._zip_error: BunzaiError | None = None
        self._sha256: str | None = None
        self._states: list[tuple[int, Any]] = []
        self._memo: dict[Hashable, tuple[bool, Any]] | None = None

    # -- cheap facts -------------------------------------------------------------------------

    @property
    def size(self) -> int:
        return len(self.data)

    @property
    def suffix(self) -> str:
        """Lower-case suffix of the name, with the dot (``.json``), or ``""``."""
        base = self.name.rsplit("/", 1)[-1]
        dot = base.rfind(".")
        return base[dot:].lower() if dot > 0 else ""

    @property
    def sha256(self) -> str:
        """The input's digest (lowercase hex SHA-256), computed once. For a PNG already parsed the
        hasher's state is kept where each chunk a picture may leave out starts (:meth:`digest_of`)."""
        if self._sha256 is None:
            h = hashlib.sha256()
            cuts = self._cuts()
            if cuts:
                view = memoryview(self.data)
                pos = 0
                for k in cuts:
                    h.update(view[pos:k])
                    pos = k
                    self._states.append((k, h.copy()))
                h.update(view[pos:])
            else:
                h.update(self.data)
            self._sha256 = h.hexdigest()
        return self._sha256

    def _cuts(self) -> list[int]:
        """Where a picture of this PNG (the file less some chunks, ``core.media.png_image``) may part
        from it: the offset of every text or ``eXIf`` chunk (what pictures leave out), for a PNG
        parsed already (the hash never parses); none for any other input."""
        pf = self._png
        if pf is _UNSET or pf is None:
            return []
        return [c.offset for c in pf.chunks if c.type in _PAYLOAD_CHUNKS and c.offset > 0]

    def digest_of(self, data: bytes) -> str:
        """The SHA-256 (lowercase hex) of ``data``, bytes made from this input: the input itself
        (``sha256``), or a picture of its PNG that starts with the same bytes up to one of the
        chunks it leaves out (only its tail is hashed, from the state ``sha256`` kept there; the
        shared part is compared first, byte for byte); any other bytes are hashed whole."""
        if data is self.data:
            return self.sha256
        _ = self.sha256
        view = memoryview(self.data)
        for k, h in reversed(self._states):
            if len(data) >= k and data.startswith(view[:k]):
                tail = h.copy()
                tail.update(memoryview(data)[k:])
                return str(tail.hexdigest())
        return hashlib.sha256(data).hexdigest()

    @property
    def is_png(self) -> bool:
        return self.data[:8] == PNG_MAGIC

    @property
    def is_jpeg(self) -> bool:
        return self.data[:3] == JPEG_MAGIC

    @property
    def is_gzip(self) -> bool:
        return self.data[:2] == GZIP_MAGIC

    @property
    def is_zip(self) -> bool:
        """A zip at offset 0, or one appended to a JPEG (Risu's and Lumiverse's polyglot cards)."""
        if self.data[:4] == ZIP_MAGIC:
            return True
        if self.is_jpeg:
            # the end-of-central-directory record sits in the last 64 KiB + 22 bytes
            return self.data.rfind(b"PK\x05\x06", max(0, len(self.data) - 65_558)) >= 0
        return False

    @property
    def looks_like_json(self) -> bool:
        """First significant byte is ``{`` or ``[`` (after an optional BOM)."""
        d = self.data[:64]
        if d.startswith(b"\xef\xbb\xbf"):
            d = d[3:]
        elif d[:2] in (b"\xff\xfe", b"\xfe\xff"):
            return True  # UTF-16 text: let the parser decide
        d = d.lstrip(_WS)
        return d[:1] in (b"{", b"[")

    # -- JSON --------------------------------------------------------------------------------

    @property
    def json(self) -> Any:
        """The parsed JSON tree, or ``None`` when the input is not JSON (see ``json_error``)."""
        if self._json is _UNSET:
            self._parse_json()
        return self._json

    @property
    def json_error(self) -> BunzaiError | None:
        if self._json is _UNSET:
            self._parse_json()
        return self._json_error

    @property
    def json_object(self) -> dict[str, Any] | None:
        """The parsed tree when it is a JSON object, else ``None``."""
        j = self.json
        return j if isinstance(j, dict) else None

    def require_json(self) -> Any:
        """The parsed tree, or the typed error saying why there is none."""
        j = self.json
        if self._json_error is not None:
            raise self._json_error
        return j

    def _parse_json(self) -> None:
        self._json = None
        if not self.looks_like_json:
            self._json_error = Malformed("not JSON: the input does not start with { or [", uri=self.uri)
            return
        Sniff.parse_counts["json"] += 1
        try:
            self._json = parse_json(self.data)
        except Malformed as exc:
            self._json_error = exc.with_uri(self.uri)

    def _container(self, kind: str, parse: Callable[[bytes], T]) -> T | None:
        """The input parsed as a ``kind`` container (once: the caller keeps it; counted in
        ``parse_counts``), or ``None`` with the typed error kept as ``<kind>_error``."""
        Sniff.parse_counts[kind] += 1
        try:
            return parse(self.data)
        except BunzaiError as exc:
            setattr(self, f"_{kind}_error", exc.with_uri(self.uri))
            return None

    # -- PNG ---------------------------------------------------------------------------------

    @property
    def png(self) -> PngFile | None:
        """The PNG chunk list, or ``None`` when the input is not a readable PNG. Every chunk's CRC is
        checked but the pixel data's (``png.IMAGE_DATA``: no codec reads it, and it is most of the
        file); those chunks keep their stored CRC, so a file written from them keeps their bytes."""
        if self._png is _UNSET:
            self._png = self._container("png", _parse_png) if self.is_png else None
        return self._png

    @property
    def png_error(self) -> BunzaiError | None:
        _ = self.png
        return self._png_error

    @property
    def png_texts(self) -> list[TextChunk]:
        """Every readable tEXt/zTXt/iTXt chunk, decoded (bounded inflate). Empty when not a PNG.

        A text chunk that does not decode is skipped and recorded in ``png_text_errors``: one broken
        ``Comment`` chunk must not hide a good ``chara``.
        """
        if self._png_texts is _UNSET:
            self._png_texts = []
            pf = self.png
            if pf is not None:
                from bunzai_codecs.core import png

                try:
                    self._png_texts = png.text_chunks(pf.chunks, errors=self._png_text_errors)
                except BunzaiError as exc:
                    self._png_error = exc.with_uri(self.uri)
        return self._png_texts

    @property
    def png_text_errors(self) -> list[tuple[int, str | None, Malformed]]:
        """``(chunk index, lowercased keyword, error)`` for each text chunk that did not decode."""
        _ = self.png_texts
        return self._png_text_errors

    def png_text(self, keyword: str) -> TextChunk | None:
        """The first text chunk whose keyword matches ``keyword`` case-insensitively."""
        k = keyword.lower()
        for t in self.png_texts:
            if t.keyword.lower() == k:
                return t
        return None

    def require_png(self) -> PngFile:
        pf = self.png
        if pf is None:
            raise self._png_error or Malformed("not a PNG file", uri=self.uri, offset=0)
        return pf

    # -- zip ---------------------------------------------------------------------------------

    @property
    def zip(self) -> ZipReader | None:
        """The zip listing (bounded), or ``None`` when the input is not a readable zip."""
        if self._zip is _UNSET:
            self._zip = self._container("zip", _open_zip) if self.is_zip else None
        return self._zip

    @property
    def zip_error(self) -> BunzaiError | None:
        _ = self.zip
        return self._zip_error

    def require_zip(self) -> ZipReader:
        z = self.zip
        if z is None:
            raise self._zip_error or Malformed("not a zip archive", uri=self.uri, offset=0)
        return z

    # -- derived values --------------------------------------------------------------------------

    def memo(self, key: Hashable, compute: Callable[[], T]) -> T:
        """A value derived from this input (a PNG card's parsed payload...), computed once however
        many detectors and decoders ask for it under ``key``. A typed error ``compute`` raises is
        kept too and raised again to the next asker. The value is shared, never copied: like the
        JSON tree, it must not be mutated."""
        memo = self._memo
        if memo is None:
            memo = self._memo = {}
        hit: tuple[bool, Any] | None = memo.get(key)
        if hit is None:
            try:
                hit = (True, compute())
            except BunzaiError as exc:
                hit = (False, exc)
            memo[key] = hit
        value: Any = hit[1]
        if not hit[0]:
            raise value
        return cast(T, value)

    def __reduce__(self) -> tuple[Any, tuple[bytes, str, str | None]]:
        # pickled as the input alone: the parse caches hold a module-private sentinel that would
        # not survive a round trip (an unpickled Sniff would see "parsed, and it was nothing"), so
        # a Sniff shipped between processes (Beam workers) parses again, lazily, where it lands
        return (_rebuild, (self.data, self.name, self.uri))

    def __repr__(self) -> str:
        return f"<Sniff {self.name or self.uri or '?'} {len(self.data)} bytes>"


def _rebuild(data: bytes, name: str, uri: str | None) -> Sniff:
    return Sniff(data, name, uri=uri)


def decode_text(data: bytes) -> bytes:
    """UTF-8 bytes of a text file: strips a UTF-8 BOM, transcodes UTF-16 with a BOM."""
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:]
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            return data.decode("utf-16").encode("utf-8")
        except UnicodeDecodeError as exc:
            raise Malformed(f"invalid UTF-16 text: {exc.reason}", offset=exc.start) from None
    return data


#: above this size the stdlib parser is used: orjson's transient peak on a huge string is ~12x the
#: input (a 24 MiB data-URL avatar would briefly cost 300 MiB), the stdlib's ~2x
BIG_JSON = 4 * 1024 * 1024


def _parse_png(data: bytes) -> PngFile:
    from bunzai_codecs.core import png

    return png.parse(data, skip_crc=png.IMAGE_DATA)


def _open_zip(data: bytes) -> ZipReader:
    from bunzai_codecs.core import archive

    return archive.open_zip(data)


def parse_json(data: bytes | str, *, what: str = "JSON") -> Any:
    """Parse JSON with typed errors. orjson for everyday sizes; the stdlib for big inputs, held to
    orjson's rules (no NaN/Infinity; integers beyond 64 bits become floats). Depth is bounded either way."""
    raw = decode_text(data) if isinstance(data, bytes) else data
    if len(raw) > BIG_JSON:
        return _parse_big(raw, what)
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        msg = str(exc.msg) if hasattr(exc, "msg") else str(exc)
        pos = getattr(exc, "pos", None)
        if "recursion" in msg.lower() or "depth" in msg.lower():
            raise LimitExceeded(f"{what} nests too deeply: {msg}", offset=pos) from None
        raise Malformed(f"invalid {what}: {msg}", offset=pos) from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def json_integer(text: str) -> int | float:
    """The number of integer text (``"12"``, ``"-7"``) as orjson reads a JSON integer: an int within
    64 bits, else a float (JavaScript's reading of it), so every number bunzai holds can be written
    back. The one rule for JSON integers and for numeric text read where a number belongs."""
    v = int(text) if len(text) < 4300 else None
    return v if v is not None and -(2**63) <= v < 2**64 else float(text)


def _parse_big(raw: bytes | str, what: str) -> Any:
    import json

    try:
        return json.loads(raw, parse_constant=_no_constant, parse_int=json_integer)
    except RecursionError:
        raise LimitExceeded(f"{what} nests too deeply") from None
    except json.JSONDecodeError as exc:
        raise Malformed(f"invalid {what}: {exc.msg}", offset=exc.pos) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise Malformed(f"invalid {what}: {exc}") from None


def base64_json(text: bytes, keyword: str, offset: int | None = None) -> Any:
    """The JSON tree a text chunk's value holds as strict base64 (Pygmalion's ``chara``, NovelAI's
    ``naidata``); ``Malformed`` naming the ``keyword`` chunk, at ``offset``, when the value is not
    valid base64 or the bytes are not JSON."""
    try:
        data = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise Malformed(f"the PNG {keyword} chunk is not valid base64", offset=offset) from None
    try:
        return parse_json(data, what=f"JSON in the PNG {keyword} chunk")
    except Malformed as exc:
        exc.offset = offset
        raise
