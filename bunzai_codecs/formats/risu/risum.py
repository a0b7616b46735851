"""The ``.risum`` module container: read, write, and the gate on re-encoding an edited module.

Layout (all integers u32 little-endian; every block RPack-encoded on its own; docs/formats/risu.md#the-module-gate)::

    0x6F  0x00  N  RPack(UTF-8 JSON {"module": RisuModule, "type": "risuModule"})
    ( 0x01  L  RPack(asset bytes) )*      one block per module.assets entry, in order
    0x00                                   end; Risu ignores anything after it

A module is opened into its JSON tree, its asset blocks and the JSON layout it was written in
(Risu writes 2-space ``JSON.stringify``, RisuToki compact), so an edited module can be written back in
the same layout. An unedited module is never rewritten at all: codecs keep its bytes.

Re-encoding an *edited* module goes through ``encode_module``, which is gated by
``MODULE_REENCODE_VERIFIED``: while it is False an edited export raises ``EditedExportBlocked``. It
was opened once tests/formats/risu/test_risum.py showed that decoding and re-encoding every real
module in the corpus reproduces its bytes exactly (see docs/formats/risu.md, "The module gate").
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bunzai_codecs.core.errors import EditedExportBlocked, Malformed
from bunzai_codecs.core.sniff import parse_json
from bunzai_codecs.formats._shared.wire import wrong
from bunzai_codecs.formats.risu import jsformat, rpack
from bunzai_codecs.formats.risu.detect import MAGIC, MODULE_TYPE, VERSION

#: True once every corpus module decodes and re-encodes byte for byte (tests/formats/risu/test_risum.py)
MODULE_REENCODE_VERIFIED = True

#: the layout an edited module is written in when its own is unknown: Risu's ``JSON.stringify(x, null, 2)``
DEFAULT_STYLE = "indent2"


@dataclass(frozen=True, slots=True)
class RisumBlocks:
    """The container split into its plain parts."""

    #: the main block, RPack removed (UTF-8 JSON)
    main: bytes
    #: the asset blocks, RPack removed, in file order
    assets: tuple[bytes, ...]
    #: bytes after the final 0x00 marker (Risu ignores them; real files have none)
    trailing: bytes = b""


@dataclass(slots=True)
class OpenedModule:
    """A ``.risum`` opened: its JSON tree, asset bytes and JSON layout."""

    #: the whole main JSON, ``{"module": {...}, "type": "risuModule"}``
    tree: dict[str, Any]
    assets: tuple[bytes, ...]
    #: ``jsformat.JSON_STYLES`` name of the main block's layout, None when it matches none
    style: str | None
    trailing: bytes = b""
    warnings: list[str] = field(default_factory=list)

    @property
    def module(self) -> dict[str, Any]:
        m = self.tree["module"]
        assert isinstance(m, dict)
        return m


def read_blocks(data: bytes) -> RisumBlocks:
    """Split a ``.risum`` into plain blocks. ``Malformed`` (with the byte offset) on a bad magic or
    version, a length past the end, a marker other than 0/1, or a file that ends before its 0x00."""
    if len(data) < 1 or data[0] != MAGIC:
        raise Malformed("not a .risum module: the first byte is not 0x6F", offset=0)
    if len(data) < 2 or data[1] != VERSION:
        got = f"0x{data[1]:02X}" if len(data) > 1 else "nothing"
        raise Malformed(f".risum version must be 0x00, got {got}", offset=1)
    main, pos = _block(data, 2, "main block")
    assets: list[bytes] = []
    while True:
        if pos >= len(data):
            raise Malformed(".risum ends without its final 0x00 marker (truncated)", offset=pos)
        marker = data[pos]
        if marker == 0:
            pos += 1
            break
        if marker != 1:
            raise Malformed(f".risum block marker must be 0x00 or 0x01, got 0x{marker:02X}", offset=pos)
        block, pos = _block(data, pos + 1, f"asset block {len(assets)}")
        assets.append(block)
    return RisumBlocks(rpack.decode(main), tuple(rpack.decode(a) for a in assets), data[pos:])


def _block(data: bytes, at: int, what: str) -> tuple[bytes, int]:
    if at + 4 > len(data):
        raise Malformed(f".risum {what} length runs past the end of the file", offset=at)
    (n,) = struct.unpack_from("<I", data, at)
    start = at + 4
    if start + n > len(data):
        raise Malformed(f".risum {what} declares {n} bytes but only {len(data) - start} remain", offset=at)
    return data[start : start + n], start + n


def write_blocks(main: bytes, assets: Sequence[bytes] = ()) -> bytes:
    """A ``.risum`` of a plain main block and plain asset blocks (RPack applied here)."""
    parts = [bytes([MAGIC, VERSION]), struct.pack("<I", len(main)), rpack.encode(main)]
    for a in assets:
        parts += [b"\x01", struct.pack("<I", len(a)), rpack.encode(a)]
    parts.append(b"\x00")
    return b"".join(parts)


def open_module(data: bytes) -> OpenedModule:
    """Read and check a ``.risum``: container, main JSON, ``type``, and asset table vs blocks."""
    blocks = read_blocks(data)
    try:
        tree = parse_json(blocks.main, what=".risum main block JSON")
    except Malformed as exc:
        raise Malformed(exc.message, offset=6 + (exc.offset or 0)) from None
    check_module_tree(tree)
    n_entries = len(tree["module"].get("assets") or [])
    if n_entries != len(blocks.assets):
        raise Malformed(
            f".risum has {len(blocks.assets)} asset blocks but module.assets lists {n_entries}",
            path="$.module.assets",
        )
    warnings = []
    if blocks.trailing:
        warnings.append(f".risum has {len(blocks.trailing)} bytes after its final marker (ignored, kept)")
    style = jsformat.detect_style(blocks.main, tree)
    return OpenedModule(tree, blocks.assets, style, blocks.trailing, warnings)


def check_module_tree(tree: Any) -> None:
    """The shape Risu's reader insists on: ``type == "risuModule"`` and a module object whose
    list fields are lists and whose ``assets`` rows are ``[name, path, ext]`` strings."""
    if not isinstance(tree, dict):
        raise Malformed(".risum main block is not a JSON object", path="$")
    if tree.get("type") != MODULE_TYPE:
        raise Malformed(f'.risum main block type must be "{MODULE_TYPE}"', path="$.type")
    m = tree.get("module")
    if not isinstance(m, dict):
        raise Malformed(".risum main block has no module object", path="$.module")
    check_module(m, "$.module")


def check_module(m: dict[str, Any], at: str) -> None:
    for key in ("lorebook", "regex", "trigger", "assets"):
        if key in m and m[key] is not None and not isinstance(m[key], list):
            raise wrong(f"{at}.{key}", "an array", m[key])
    for key in ("lorebook", "regex", "trigger"):
        for i, row in enumerate(m.get(key) or []):
            if not isinstance(row, dict):
                raise wrong(f"{at}.{key}[{i}]", "an object", row)
    for i, a in enumerate(m.get("assets") or []):
        if not (isinstance(a, list) and len(a) >= 3 and all(isinstance(x, str) for x in a[:3])):
            raise Malformed("module asset rows must be [name, path, ext] strings", path=f"{at}.assets[{i}]")


def encode_module(
    tree: dict[str, Any], assets: Sequence[bytes], style: str | None = None, trailing: bytes = b""
) -> bytes:
    """Bytes of an edited module: the main JSON in ``style`` (the source's layout), then the assets.

    Raises ``EditedExportBlocked`` while ``MODULE_REENCODE_VERIFIED`` is False, and ``Malformed``
    when the asset table and the asset blocks disagree (Risu would crash on the file).
    """
    if not MODULE_REENCODE_VERIFIED:
        raise EditedExportBlocked(
            "re-encoding an edited .risum module is blocked until every corpus module round-trips "
            "byte for byte (MODULE_REENCODE_VERIFIED)"
        )
    return pack_module(tree, assets, style, trailing)


def pack_module(
    tree: dict[str, Any], assets: Sequence[bytes], style: str | None = None, trailing: bytes = b""
) -> bytes:
    """The ungated writer behind ``encode_module`` (tests use it to prove byte-exactness)."""
    check_module_tree(tree)
    n_entries = len(tree["module"].get("assets") or [])
    if n_entries != len(assets):
        raise Malformed(
            f"module.assets lists {n_entries} entries but {len(assets)} asset blocks were given",
            path="$.module.assets",
        )
    indent = jsformat.JSON_STYLES[style or DEFAULT_STYLE]
    main = jsformat.stringify(tree, indent).encode("utf-8")
    return write_blocks(main, assets) + trailing
