"""The ``.risup`` / ``.risupreset`` preset chain (docs/formats/risu.md#preset-risu-preset).

::

    .risup       = RPack( gzip( msgpack({presetVersion: 2, type: "preset", preset: <bin>}) ) )
    .risupreset  =        gzip( ... same ... )
    <bin>        = AES-256-GCM(key = SHA-256("risupreset"), iv = 12 zero bytes, no AAD)
                   over msgpack(botPreset); ciphertext || 16-byte tag

The "encryption" has a public key and a fixed IV: it is obfuscation, and reading it is interop. Risu's
reader auto-detects gzip, zlib or raw deflate, and takes the ciphertext from ``preset`` or ``pres``;
so does this one. Inflation is bounded. Writing uses msgpackr's exact byte layout (jsformat.pack)
and gzip with a zero mtime, so the same preset always gives the same bytes.
"""

from __future__ import annotations

import gzip
import hashlib
import zlib
from dataclasses import dataclass
from typing import Any

from bunzai_codecs.core import inflate as bounded_inflate
from bunzai_codecs.core.errors import LimitExceeded, Malformed
from bunzai_codecs.formats.risu import jsformat, rpack

KEY = hashlib.sha256(b"risupreset").digest()
IV = bytes(12)
#: bound on the inflated msgpack (the input itself is bounded at 96 MiB)
MAX_INFLATE = 96 * 1024 * 1024
#: RPack of a gzip header 1f 8b 08: every real .risup starts with it
RISUP_MAGIC = rpack.encode(b"\x1f\x8b\x08")


@dataclass(slots=True)
class OpenedPreset:
    """A preset file opened down to its botPreset tree."""

    #: "risup" (RPack'd) or "risupreset"
    container: str
    #: the outer msgpack map with the ciphertext removed: presetVersion, type (and unknown keys)
    outer: dict[str, Any]
    #: "preset" or "pres": where the ciphertext was
    cipher_key: str
    #: the botPreset as msgpack decoded it (may hold jsformat.UNDEFINED, bytes)
    preset: dict[str, Any]
    #: "gzip" | "zlib" | "deflate"
    compression: str


def _wbits(head: bytes) -> int:
    if head[:2] == b"\x1f\x8b":
        return 31
    if len(head) >= 2 and (head[0] & 0x0F) == 8 and ((head[0] << 8) | head[1]) % 31 == 0:
        return 15
    return -15


def peek(data: bytes, *, rpacked: bool) -> bytes:
    """The first inflated bytes of a preset file, for detection (bounded, never raises)."""
    head = data[:4096]
    if rpacked:
        head = rpack.decode(head)
    try:
        return zlib.decompressobj(_wbits(head)).decompress(head, 256)
    except zlib.error:
        return b""


def looks_like_preset_msgpack(head: bytes) -> bool:
    return (
        bool(head) and (0x80 <= head[0] <= 0x8F or head[0] in (0xDE, 0xDF)) and b"presetVersion" in head[:64]
    )


def sniff_container(data: bytes) -> bool | None:
    """True for an RPack'd preset (.risup), False for a bare compressed one (.risupreset), None
    when neither inflates to a preset wrapper."""
    for rpacked in (True, False):
        if looks_like_preset_msgpack(peek(data, rpacked=rpacked)):
            return rpacked
    return None


def inflate(data: bytes) -> tuple[bytes, str]:
    """Inflate gzip, zlib or raw deflate (as fflate ``decompressSync`` guesses), bounded.

    ``Malformed`` for a stream that ends early (truncated) or is corrupt; ``LimitExceeded`` past
    ``MAX_INFLATE`` bytes.
    """
    wbits = _wbits(data[:2])
    kind = {31: "gzip", 15: "zlib", -15: "deflate"}[wbits]
    try:
        return bounded_inflate.bounded(data, MAX_INFLATE, wbits=wbits), kind
    except bounded_inflate.TooLarge:
        raise LimitExceeded(f"preset inflates past {MAX_INFLATE} bytes") from None
    except bounded_inflate.Corrupt as exc:
        raise Malformed(f"preset {kind} stream is corrupt: {exc}", offset=0) from None
    except bounded_inflate.Truncated:
        raise Malformed(f"preset {kind} stream ends early (truncated)", offset=len(data)) from None


def open_preset(data: bytes, *, rpacked: bool) -> OpenedPreset:
    """Undo the whole chain. Typed errors: ``Malformed`` for a truncated/corrupt stream, bad msgpack,
    a wrong ``type``/``presetVersion``, a missing ciphertext, or a GCM tag mismatch."""
    plain = rpack.decode(data) if rpacked else data
    inflated, compression = inflate(plain)
    try:
        outer = jsformat.unpack(inflated)
    except Exception as exc:  # msgpack raises several ValueError subclasses and others
        raise Malformed(f"preset wrapper is not valid msgpack: {exc}") from None
    if not isinstance(outer, dict):
        raise Malformed("preset wrapper is not a msgpack map", path="$")
    if outer.get("type") != "preset":
        raise Malformed('preset wrapper type must be "preset"', path="$.type")
    if outer.get("presetVersion") not in (0, 2):
        raise Malformed("preset wrapper presetVersion must be 0 or 2", path="$.presetVersion")
    cipher_key = "preset" if outer.get("preset") is not None else "pres"
    ct = outer.get(cipher_key)
    if not isinstance(ct, bytes):
        raise Malformed("preset wrapper has no encrypted preset (preset/pres)", path=f"$.{cipher_key}")
    pt = decrypt(ct)
    try:
        preset = jsformat.unpack(pt)
    except Exception as exc:
        raise Malformed(f"decrypted preset is not valid msgpack: {exc}") from None
    if not isinstance(preset, dict):
        raise Malformed("decrypted preset is not a map", path="$")
    rest = {k: v for k, v in outer.items() if k != cipher_key}
    return OpenedPreset("risup" if rpacked else "risupreset", rest, cipher_key, preset, compression)


def decrypt(ct: bytes) -> bytes:
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    if len(ct) < 16:
        raise Malformed("encrypted preset is shorter than its 16-byte GCM tag", path="$.preset")
    try:
        return AESGCM(KEY).decrypt(IV, ct, None)
    except InvalidTag:
        raise Malformed(
            "encrypted preset fails its AES-GCM tag check (corrupt or not a Risu preset)"
        ) from None


def encrypt(pt: bytes) -> bytes:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    return AESGCM(KEY).encrypt(IV, pt, None)


def write_preset(
    preset: dict[str, Any],
    *,
    rpacked: bool = True,
    outer: dict[str, Any] | None = None,
    cipher_key: str = "preset",
) -> bytes:
    """A preset file Risu can import: msgpack -> AES-GCM -> msgpack wrapper -> gzip (-> RPack)."""
    ct = encrypt(jsformat.pack(preset))
    wrapper: dict[str, Any] = {"presetVersion": 2, "type": "preset"}
    if outer:
        wrapper = {**outer}
    wrapper[cipher_key] = ct
    gz = gzip.compress(jsformat.pack(wrapper), compresslevel=6, mtime=0)
    return rpack.encode(gz) if rpacked else gz
