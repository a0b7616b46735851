"""Fidelity measures media: the checks compare images by their bytes (pixels where a re-encode is
stated), a lost or altered image is ``media.portrait`` / ``media.assets[i]`` classed by the
target's coverage, and the report shows it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from bunzai_codecs import read
from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import EmitContext
from bunzai_codecs.fidelity import body_losses, check_file, cross_format
from bunzai_codecs.fidelity.html import render_html
from bunzai_codecs.fidelity.report import ReportBuilder

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def _paths(row, group: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {x.path: x.cls for x in getattr(row, group)}


def test_images_a_target_has_no_place_for_are_expected_losses() -> None:
    d = read((SAMPLES / "risu" / "oswin_the_lamplighter.charx").read_bytes(), "oswin.charx")
    row = cross_format(d.primary, registry.get("agnai"), pool=d.entities, input="oswin")
    # agnai's avatar keeps the portrait; its other images have no place
    assert _paths(row, "lost")["media.assets[]"] == "expected"
    assert "media.portrait" not in _paths(row, "lost")
    assert row.status == "expected"


def test_a_re_encoded_portrait_with_the_same_pixels_is_kept_and_stated() -> None:
    d = read((SAMPLES / "risu" / "oswin_the_lamplighter.charx").read_bytes(), "oswin.charx")
    e = d.primary
    webp = next(a for a in e.body.media.assets or [] if a.mime == "image/webp")  # type: ignore[attr-defined]
    media = e.body.media.model_copy(
        update={"portrait": webp.model_copy(update={"role": "portrait"}), "assets": None}
    )  # type: ignore[attr-defined]
    e = dataclasses.replace(e, body=e.body.model_copy(update={"media": media}), links={})
    row = cross_format(e, registry.get("sillytavern"), pool=[e], input="x")
    assert _paths(row, "changed").get("media.portrait") == "info"
    assert row.status in ("lossless", "expected")
    assert "media.portrait" not in _paths(row, "lost")


def test_an_altered_image_is_an_unexpected_change_where_the_target_holds_images() -> None:
    from bunzai_codecs.formats.sillytavern.card import SillyTavernCard

    class Scrambler(SillyTavernCard):
        def encode(self, entity, ctx: EmitContext) -> bytes:  # type: ignore[no-untyped-def]
            from bunzai_codecs.core import media

            return super().encode(
                entity,
                EmitContext(ctx.linked, ctx.embedded, {**ctx.options, "image": media.default_portrait_png()}),
            )

    d = read((SAMPLES / "backyard" / "maelis.v4.backyard.png").read_bytes(), "maelis.png")
    with registry.using({**registry.CODECS, "sillytavern": Scrambler}):
        row = cross_format(d.primary, registry.get("sillytavern"), pool=d.entities, input="maelis")
    assert _paths(row, "changed")["media.portrait"] == "unexpected"
    assert row.status == "unexpected"


def test_same_format_checks_compare_digests_exactly() -> None:
    from bunzai_codecs.core.media import default_portrait_png, digest

    e = read((SAMPLES / "sillytavern" / "tidepool.png").read_bytes(), "tidepool.png").primary
    p = e.body.media.portrait  # type: ignore[attr-defined]
    new = default_portrait_png()
    body = e.body.model_copy(
        update={
            "media": e.body.media.model_copy(
                update={"portrait": p.model_copy(update={"sha256": digest(new)})}
            )
        }  # type: ignore[attr-defined,union-attr]
    )
    other = dataclasses.replace(e, body=body, media={digest(new): new})
    lost, changed, added = body_losses(e, other, None)
    assert (lost, added) == ([], [])
    assert [(x.path, x.cls) for x in changed] == [("media.portrait", "unexpected")]
    assert body_losses(e, e, None) == ([], [], [])


def test_fidelity_rows_and_the_html_report_show_media() -> None:
    rows = check_file(
        (SAMPLES / "risu" / "oswin_the_lamplighter.charx").read_bytes(), "oswin.charx", input="oswin"
    )
    lost = {(r.target, x.path) for r in rows if r.check == "cross" for x in r.lost}
    assert ("agnai", "media.assets[]") in lost
    b = ReportBuilder()
    b.add_all(rows)
    report = b.report({"roots": ["samples"]})
    cell = next(
        c for c in report["kinds"]["character"]["matrix"] if c["source"] == "risu" and c["target"] == "agnai"
    )
    assert any(p["path"] == "media.assets[]" and p["class"] == "expected" for p in cell["paths"])
    assert "media.assets[]" in render_html(report)


def test_a_picture_of_the_same_size_with_one_pixel_changed_is_an_unexpected_change() -> None:
    """Issue 37: the pixel comparison must cover the pixels, not only the size: a target that wrote
    the portrait back with one pixel changed has altered it, whatever its size."""
    import io

    from PIL import Image

    from bunzai_codecs.core import media
    from bunzai_codecs.formats.sillytavern.card import SillyTavernCard

    d = read((SAMPLES / "backyard" / "maelis.v4.backyard.png").read_bytes(), "maelis.png")
    p = d.primary.body.media.portrait  # type: ignore[attr-defined]
    im = Image.open(io.BytesIO(d.primary.media[p.sha256])).convert("RGBA")
    r, g, b, _ = im.getpixel((0, 0))  # type: ignore[misc]
    im.putpixel((0, 0), (255 - r, 255 - g, 255 - b, 255))
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    altered = buf.getvalue()
    assert media.pixels_key(altered) != media.pixels_key(d.primary.media[p.sha256])

    class OnePixelOff(SillyTavernCard):
        def encode(self, entity, ctx: EmitContext) -> bytes:  # type: ignore[no-untyped-def]
            return super().encode(
                entity, EmitContext(ctx.linked, ctx.embedded, {**ctx.options, "image": altered})
            )

    with registry.using({**registry.CODECS, "sillytavern": OnePixelOff}):
        row = cross_format(d.primary, registry.get("sillytavern"), pool=d.entities, input="maelis")
    assert _paths(row, "changed")["media.portrait"] == "unexpected"
    assert row.status == "unexpected"


# -- media_changes itself (found by mutation testing: fidelity/media.py) ------------------------------


def _png(color: tuple[int, int, int], encoding: int = 0) -> bytes:
    """A 4x4 picture of one colour; each ``encoding`` gives other bytes for the same pixels."""
    import io

    from PIL import Image, PngImagePlugin

    info = PngImagePlugin.PngInfo()
    info.add_text("encoding", str(encoding))
    buf = io.BytesIO()
    Image.new("RGB", (4, 4), color).save(buf, format="PNG", pnginfo=info)
    return buf.getvalue()


def _item(data: bytes | None, **fields: object) -> dict[str, object]:
    from bunzai_codecs.core.media import digest

    return {**({"sha256": digest(data)} if data is not None else {}), **fields}


def _changes(old: dict[str, object], new: dict[str, object], store: dict[str, bytes], *, cross: bool):  # type: ignore[no-untyped-def]
    from bunzai_codecs.core.codec import Coverage
    from bunzai_codecs.fidelity.media import media_changes

    coverage = Coverage.of("media") if cross else None
    # (it takes the items out of the dumps it is given: copies)
    changes, fates = media_changes({"media": dict(old)}, {"media": dict(new)}, store, store, coverage)
    return [(c.path, c.kind) for c in changes], fates


@pytest.fixture(autouse=True)
def _fresh_pixel_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test computes its pictures' pixel keys afresh (the memo outlives a test otherwise: a
    picture compared by an earlier test would not be read again)."""
    from bunzai_codecs.core import media

    monkeypatch.setattr(media, "_PIXEL_MEMO", media._Memo(256))


def test_a_picture_whose_bytes_are_missing_is_changed_not_a_re_encode() -> None:
    """Across formats, a portrait that came back under another digest whose bytes the target's
    file does not hold is an altered picture: nothing shows its pixels are the same."""
    from bunzai_codecs.core.media import digest

    red = _png((255, 0, 0))
    other = {"sha256": "0" * 64, "role": "portrait"}
    _, fates = _changes(
        {"portrait": _item(red, role="portrait")}, {"portrait": other}, {digest(red): red}, cross=True
    )
    assert fates == [("changed", "media.portrait", "unexpected")]


def test_a_portrait_slot_kept_without_its_picture_is_a_lost_picture() -> None:
    red = _png((255, 0, 0))
    old = {"portrait": _item(red, role="portrait", ref="a.png")}
    new = {"portrait": {"role": "portrait", "ref": "a.png"}}  # the slot, no bytes
    for cross in (False, True):
        assert _changes(old, new, {}, cross=cross) == ([], [("lost", "media.portrait", "unexpected")])


def test_an_item_s_fields_are_compared_beside_its_bytes() -> None:
    red = _png((255, 0, 0))
    old = {"portrait": _item(red, role="portrait", name="Ann", ref="a.png")}
    new = {"portrait": _item(red, role="portrait", name="Bea", ref="b.png")}
    # the bytes came back: where the container keeps them (ref) is its business; the name is data
    assert _changes(old, new, {}, cross=False) == ([("media.portrait.name", "changed")], [])
    # no bytes on either side: the ref is all there is of the picture
    old = {"portrait": {"role": "portrait", "ref": "a.png"}}
    new = {"portrait": {"role": "portrait", "ref": "b.png"}}
    assert _changes(old, new, {}, cross=False) == ([("media.portrait.ref", "changed")], [])


def test_pictures_pair_by_bytes_then_by_slot_role_and_name() -> None:
    """Three assets with the same bytes, written back in reverse order: each pairs with its own
    role and name (no change); a portrait that came back as an asset is only a role changed."""
    red = _png((255, 0, 0))
    x, y, z = (_item(red, role=r, name=n) for r, n in (("icon", "a"), ("background", "a"), ("icon", "b")))
    assert _changes({"assets": [x, y, z]}, {"assets": [z, y, x]}, {}, cross=False) == ([], [])
    moved = _changes(
        {"portrait": _item(red, role="portrait")}, {"assets": [_item(red, role="icon")]}, {}, cross=False
    )
    assert moved == ([("media.portrait.role", "changed")], [])


def test_pictures_and_items_added_or_removed() -> None:
    red = _png((255, 0, 0))
    added = {"assets": [_item(red, role="icon"), {"role": "icon", "ref": "b.png"}]}
    assert _changes({}, added, {}, cross=False) == (
        [("media.assets[1]", "added")],
        [("added", "media.assets[0]", "unexpected")],  # same format: a picture the file did not have
    )
    assert _changes({}, added, {}, cross=True)[1] == [("added", "media.assets[0]", "info")]
    # the item without bytes is compared field by field: the change carries it whole
    from bunzai_codecs.core.diff import Change
    from bunzai_codecs.fidelity.media import media_changes

    item = {"role": "icon", "ref": "b.png"}
    assert media_changes({"media": {}}, {"media": {"assets": [item]}}, {}, {}, None)[0] == [
        Change("media.assets[0]", "added", None, item)
    ]
    assert media_changes({"media": {"assets": [item]}}, {"media": {}}, {}, {}, None)[0] == [
        Change("media.assets[0]", "removed", item, None)
    ]
    assert _changes(added, {}, {}, cross=False) == (
        [("media.assets[1]", "removed")],
        [("lost", "media.assets[0]", "unexpected")],
    )
    # a slot that had no picture and came back with one
    old, new = {"portrait": {"role": "portrait", "ref": "a.png"}}, {"portrait": _item(red, role="portrait")}
    assert _changes(old, new, {}, cross=False) == ([], [("added", "media.portrait", "unexpected")])
    assert _changes(old, new, {}, cross=True) == ([], [("added", "media.portrait", "info")])


def test_items_without_bytes_pair_by_ref_and_changed_pictures_by_role_and_name() -> None:
    old = {"assets": [{"ref": "a.png", "name": "A"}, {"ref": "b.png", "name": "B"}]}
    new = {"assets": [{"ref": "b.png", "name": "B2"}, {"ref": "a.png", "name": "A2"}]}
    assert _changes(old, new, {}, cross=False) == (
        [("media.assets[0].name", "changed"), ("media.assets[1].name", "changed")],
        [],
    )
    # every picture altered, written back in reverse order: each pairs with its own role and name
    roles = (("icon", "a"), ("background", "a"), ("icon", "b"))
    before = [_item(_png((i, 0, 0)), role=r, name=n) for i, (r, n) in enumerate(roles)]
    after = [_item(_png((0, i, 9)), role=r, name=n) for i, (r, n) in enumerate(roles)]
    assert _changes({"assets": before}, {"assets": after[::-1]}, {}, cross=False) == (
        [],
        [("changed", f"media.assets[{i}]", "unexpected") for i in range(3)],
    )


def test_across_formats_a_re_encoded_picture_pairs_by_its_pixels_slot_first() -> None:
    """One picture in two slots under two encodings, each written back in a third and fourth: each
    pairs with the one in its own slot, as a stated re-encode; a re-encoded portrait that came back
    as an asset is a re-encode and a role changed. In a same-format check pixels do not pair."""
    enc = [_png((200, 10, 10), k) for k in range(4)]
    store = {_item(b)["sha256"]: b for b in enc}  # type: ignore[misc]
    old = {"assets": [_item(enc[0], role="icon", name="a"), _item(enc[1], role="background", name="b")]}
    new = {"assets": [_item(enc[2], role="background", name="b"), _item(enc[3], role="icon", name="a")]}
    assert _changes(old, new, store, cross=True) == (
        [],
        [("changed", "media.assets[0]", "info"), ("changed", "media.assets[1]", "info")],
    )
    moved = ({"portrait": _item(enc[0], role="portrait")}, {"assets": [_item(enc[1], role="icon")]})
    assert _changes(*moved, store, cross=True) == (
        [("media.portrait.role", "changed")],
        [("changed", "media.portrait", "info")],
    )
    assert _changes(*moved, store, cross=False) == (
        [],
        [("lost", "media.portrait", "unexpected"), ("added", "media.assets[0]", "unexpected")],
    )


def test_an_empty_field_is_absent_across_formats_only() -> None:
    red = _png((255, 0, 0))
    old, new = {"portrait": _item(red, role="portrait", name="")}, {"portrait": _item(red, role="portrait")}
    assert _changes(old, new, {}, cross=False)[0] == [("media.portrait.name", "removed")]
    assert _changes(old, new, {}, cross=True) == ([], [])
