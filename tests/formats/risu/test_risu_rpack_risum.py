"""RPack tables and the .risum container: layout, byte-exact re-encoding (the module gate), typed errors."""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

import pytest

from bunzai_codecs import EditedExportBlocked, Malformed
from bunzai_codecs.formats.risu import risum, rpack

# -- RPack ------------------------------------------------------------------------------------------


def test_tables_are_inverse_permutations_without_fixed_points() -> None:
    assert sorted(rpack.ENCODE) == list(range(256))
    assert all(rpack.DECODE[rpack.ENCODE[i]] == i for i in range(256))
    assert all(rpack.ENCODE[i] != i for i in range(256))


def test_tables_digest_is_risus_rpack_map_bin() -> None:
    # docs/formats/risu.md#source-of-truth: SHA-256 of the 512-byte rpack_map.bin (ENCODE then DECODE)
    assert hashlib.sha256(rpack.ENCODE + rpack.DECODE).hexdigest() == (
        "428e939c41617140ef2fad0420d9163cc80ce7c9b2f5e620223a25acc8afd498"
    )


def test_quick_check_bytes_from_the_facts() -> None:
    assert rpack.ENCODE[ord("{")] == 230
    assert rpack.ENCODE[0x0A] == 110
    assert rpack.ENCODE[0x20] == 97
    assert rpack.encode(b"\x1f\x8b\x08") == bytes([0x10, 0x03, 0xFC])


def test_rpack_is_position_free_so_blocks_can_be_encoded_separately() -> None:
    a, b = b"hello ", b"world"
    assert rpack.encode(a + b) == rpack.encode(a) + rpack.encode(b)
    assert rpack.decode(rpack.encode(bytes(range(256)))) == bytes(range(256))


# -- container --------------------------------------------------------------------------------------


def _risum(main: bytes, *assets: bytes, end: bytes = b"\x00") -> bytes:
    out = b"\x6f\x00" + struct.pack("<I", len(main)) + rpack.encode(main)
    for a in assets:
        out += b"\x01" + struct.pack("<I", len(a)) + rpack.encode(a)
    return out + end


MAIN = b'{"module":{"name":"m","description":"","id":"x","assets":[["a","","png"]]},"type":"risuModule"}'


def test_layout_is_magic_version_length_blocks_markers() -> None:
    data = risum.write_blocks(MAIN, [b"\x89PNG"])
    assert data[:2] == b"\x6f\x00"
    assert struct.unpack_from("<I", data, 2)[0] == len(MAIN)
    assert rpack.decode(data[6 : 6 + len(MAIN)]) == MAIN
    assert data[6 + len(MAIN)] == 1
    assert data[-1] == 0
    assert data == _risum(MAIN, b"\x89PNG")


def test_open_module_reads_tree_assets_and_compact_style() -> None:
    opened = risum.open_module(_risum(MAIN, b"ABC"))
    assert opened.module["name"] == "m"
    assert opened.assets == (b"ABC",)
    assert opened.style == "compact"


def test_an_empty_asset_block_is_allowed() -> None:
    # Risu writes L = 0 when it cannot read an asset
    assert risum.open_module(_risum(MAIN, b"")).assets == (b"",)


def test_length_past_the_end_is_malformed_with_offset() -> None:
    data = b"\x6f\x00" + struct.pack("<I", 1000) + b"{}"
    with pytest.raises(Malformed, match="declares 1000 bytes") as e:
        risum.read_blocks(data)
    assert e.value.offset == 2


def test_asset_length_past_the_end_is_malformed() -> None:
    data = _risum(MAIN, end=b"") + b"\x01" + struct.pack("<I", 99) + b"xx"
    with pytest.raises(Malformed, match="asset block 0 declares 99"):
        risum.read_blocks(data)


def test_a_marker_other_than_0_or_1_is_malformed_at_its_offset() -> None:
    data = _risum(MAIN, end=b"\x02")
    with pytest.raises(Malformed, match="marker must be 0x00 or 0x01, got 0x02") as e:
        risum.read_blocks(data)
    assert e.value.offset == 6 + len(MAIN)


def test_missing_final_marker_is_truncation() -> None:
    with pytest.raises(Malformed, match="truncated"):
        risum.read_blocks(_risum(MAIN, end=b""))


def test_bad_magic_and_version() -> None:
    with pytest.raises(Malformed, match="0x6F") as e:
        risum.read_blocks(b"\x70\x00")
    assert e.value.offset == 0
    with pytest.raises(Malformed, match="version must be 0x00, got 0x01") as e:
        risum.read_blocks(b"\x6f\x01" + b"\0" * 8)
    assert e.value.offset == 1


def test_asset_count_mismatch_is_malformed_both_ways() -> None:
    with pytest.raises(Malformed, match=r"0 asset blocks but module\.assets lists 1") as e:
        risum.open_module(_risum(MAIN))
    assert e.value.path == "$.module.assets"
    with pytest.raises(Malformed, match=r"2 asset blocks but module\.assets lists 1"):
        risum.open_module(_risum(MAIN, b"a", b"b"))


def test_main_block_must_be_a_risu_module() -> None:
    with pytest.raises(Malformed) as e:
        risum.open_module(_risum(b'{"module":{},"type":"other"}'))
    assert e.value.path == "$.type"
    with pytest.raises(Malformed, match=r"invalid \.risum main block JSON"):
        risum.open_module(_risum(b'{"module":'))
    with pytest.raises(Malformed) as e:
        risum.open_module(_risum(b'{"module":{"assets":[["a",1,"png"]]},"type":"risuModule"}'))
    assert e.value.path == "$.module.assets[0]"


def test_trailing_bytes_after_the_end_marker_are_kept_and_reported() -> None:
    opened = risum.open_module(_risum(MAIN, b"A", end=b"\x00junk"))
    assert opened.trailing == b"junk"
    assert opened.warnings


# -- the module gate --------------------------------------------------------------------------------


def _corpus_modules(corpus: Path) -> list[Path]:
    return sorted((corpus / "risu").rglob("*.risum"))


def test_every_corpus_module_re_encodes_byte_for_byte(corpus: Path) -> None:
    """The evidence that opened MODULE_REENCODE_VERIFIED (docs/formats/risu.md, "The module gate")."""
    modules = _corpus_modules(corpus)
    assert len(modules) >= 6
    for path in modules:
        data = path.read_bytes()
        opened = risum.open_module(data)
        assert opened.style is not None, path.name
        again = risum.pack_module(opened.tree, opened.assets, opened.style, opened.trailing)
        assert again == data, path.name


def test_corpus_module_with_webp_assets_keeps_them(corpus: Path) -> None:
    opened = risum.open_module((corpus / "risu/module/lightboard_illustration_3.4.1.risum").read_bytes())
    assert [a[2] for a in opened.module["assets"]] == ["png", "png"]
    assert all(a[:4] == b"RIFF" and a[8:12] == b"WEBP" for a in opened.assets)


def test_the_gate_blocks_an_edited_module_while_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    tree = risum.open_module(_risum(MAIN, b"A")).tree
    monkeypatch.setattr(risum, "MODULE_REENCODE_VERIFIED", False)
    with pytest.raises(EditedExportBlocked):
        risum.encode_module(tree, [b"A"])


def test_the_gate_is_open_and_writes_the_sources_layout() -> None:
    assert risum.MODULE_REENCODE_VERIFIED is True
    tree = risum.open_module(_risum(MAIN, b"A")).tree
    edited = {**tree, "module": {**tree["module"], "name": "n"}}
    out = risum.encode_module(edited, [b"A"], "compact")
    assert risum.open_module(out).module["name"] == "n"
    assert risum.read_blocks(out).main == MAIN.replace(b'"name":"m"', b'"name":"n"')


def test_encode_refuses_an_asset_table_that_disagrees_with_the_blocks() -> None:
    tree = risum.open_module(_risum(MAIN, b"A")).tree
    with pytest.raises(Malformed, match="1 entries but 0 asset blocks"):
        risum.encode_module(tree, [])
