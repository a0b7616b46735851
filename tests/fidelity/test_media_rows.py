"""Fidelity measures media: the checks compare images by their bytes (pixels where a re-encode is
stated), a lost or altered image is ``media.portrait`` / ``media.assets[i]`` classed by the
target's coverage, and the report shows it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

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
