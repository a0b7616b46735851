"""Sniff: lazy, cached, typed-error parsing of one input."""

from __future__ import annotations

import base64

import orjson
import pytest

from bunzai_codecs.core import sniff as sniff_mod
from bunzai_codecs.core.errors import LimitExceeded, Malformed
from bunzai_codecs.core.sniff import Sniff, parse_json
from tests.formats.helpers import png_chunk
from tests.hostile.generate import text, tiny_png


def test_json_is_parsed_once_and_errors_are_cached() -> None:
    before = Sniff.parse_counts["json"]
    s = Sniff(b'{"a": 1}', "x.json")
    assert s.json == {"a": 1} and s.json_object == {"a": 1} and s.json_error is None
    assert s.json is s.json
    bad = Sniff(b"{oops", "y.json")
    assert bad.json is None and isinstance(bad.json_error, Malformed)
    assert bad.json_error.uri == "y.json" and bad.json_error.offset is not None
    _ = bad.json, bad.json_error
    assert Sniff.parse_counts["json"] - before == 2
    with pytest.raises(Malformed):
        bad.require_json()


def test_non_json_prefix_is_never_parsed() -> None:
    before = Sniff.parse_counts["json"]
    s = Sniff(b"\x89PNG\r\n\x1a\n....", "a.png")
    assert s.json is None and s.json_error is not None
    assert Sniff.parse_counts["json"] == before


@pytest.mark.parametrize(
    "data",
    [
        b'\xef\xbb\xbf{"name": "bom"}',
        '{"name": "bom"}'.encode("utf-16"),
        b' \n\t{"name": "bom"}',
    ],
)
def test_bom_utf16_and_leading_whitespace(data: bytes) -> None:
    assert Sniff(data).json == {"name": "bom"}


@pytest.mark.parametrize("big", [False, True])
def test_both_parsers_keep_the_same_rules(big: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if big:
        monkeypatch.setattr(sniff_mod, "BIG_JSON", 0)
    assert parse_json(b'{"a": [1, 2.5, "x", null, true]}') == {"a": [1, 2.5, "x", None, True]}
    assert parse_json(b'{"a": ' + b"9" * 30 + b"}") == {"a": 1e30}  # beyond 64 bits: a float
    for bad in (b'{"a": NaN}', b'{"a": Infinity}', b'{"a": 1'):
        with pytest.raises(Malformed):
            parse_json(bad)
    with pytest.raises(LimitExceeded):
        parse_json(b"[" * 5000 + b"]" * 5000)


def test_png_texts_skip_a_broken_chunk_without_hiding_the_card() -> None:
    payload = base64.b64encode(orjson.dumps({"name": "x"}))
    data = tiny_png(png_chunk(b"tEXt", b"no separator here"), text("Chara", payload))
    s = Sniff(data, "c.png")
    assert s.png is not None and s.png_error is None
    found = s.png_text("chara")
    assert found is not None and found.text == payload
    assert len(s.png_text_errors) == 1 and isinstance(s.png_text_errors[0][2], Malformed)


def test_container_flags() -> None:
    from bunzai_codecs.core.archive import write_zip

    z = write_zip([("card.json", b"{}")])
    assert Sniff(z).is_zip and Sniff(z).zip is not None
    hybrid = write_zip([("card.json", b"{}")], prefix=b"\xff\xd8\xff\xe0" + bytes(100))
    s = Sniff(hybrid, "card.jpeg")
    assert s.is_jpeg and s.is_zip and s.zip is not None and list(s.zip.names) == ["card.json"]
    assert not Sniff(b"\xff\xd8\xff\xe0 plain jpeg").is_zip
    assert Sniff(b"x" * 10, "A.Card.PNG").suffix == ".png"


def test_inputs_over_the_limit_are_refused_before_work(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sniff_mod, "MAX_INPUT_BYTES", 10)
    with pytest.raises(LimitExceeded):
        Sniff(b"x" * 11, "big.json")


def test_memo_computes_once_and_keeps_typed_errors() -> None:
    s = Sniff(b"{}", "x.json")
    calls: list[str] = []

    def value() -> list[int]:
        calls.append("value")
        return [1]

    first = s.memo("k", value)
    assert s.memo("k", value) is first  # shared, not copied
    assert calls == ["value"]

    def broken() -> object:
        calls.append("broken")
        raise Malformed("bad", path="$.x")

    for _ in range(2):
        with pytest.raises(Malformed) as err:
            s.memo("e", broken)
        assert err.value.path == "$.x"
    assert calls == ["value", "broken"]
    with pytest.raises(ZeroDivisionError):  # only typed errors are input facts worth keeping
        s.memo("z", lambda: 1 // 0)


def test_a_pickled_sniff_parses_again_where_it_lands() -> None:
    import pickle

    s = Sniff(b'{"a": 1}', "x.json", uri="s3://b/x.json")
    assert s.json == {"a": 1}
    again = pickle.loads(pickle.dumps(s))
    assert (again.data, again.name, again.uri) == (s.data, s.name, s.uri)
    assert again.json == {"a": 1} and again.json_error is None and again.sha256 == s.sha256


def _card_png(*, text_first: bool = False) -> bytes:
    from bunzai_codecs.core import png

    pf = png.parse(tiny_png())
    card = [png.make_text_chunk("chara", b"x" * 500), png.make_text_chunk("ccv3", b"y" * 700)]
    head, tail = list(pf.chunks[:-1]), [pf.chunks[-1]]
    chunks = head[:1] + card + head[1:] + tail if text_first else head + card + tail
    return png.build(chunks, b"trailing")


@pytest.mark.parametrize("text_first", [False, True])
@pytest.mark.parametrize("order", ["file first", "picture first"])
def test_a_picture_and_its_file_are_digested_as_hashlib_does(text_first: bool, order: str) -> None:
    """The portrait of a PNG card shares the file's hashing up to the first chunk it leaves out; the
    digests are hashlib's whichever is asked first, wherever the card chunks sit."""
    import hashlib

    from bunzai_codecs.core import media

    data = _card_png(text_first=text_first)
    pic = media.png_image(data, ("chara", "ccv3"))
    assert pic != data
    s = Sniff(data, "card.png")
    assert s.png is not None  # detection parses first
    if order == "file first":
        assert s.sha256 == hashlib.sha256(data).hexdigest()
    assert s.digest_of(pic) == hashlib.sha256(pic).hexdigest()
    assert s.sha256 == hashlib.sha256(data).hexdigest()
    assert s.digest_of(data) == s.sha256
    other = b"\x89PNG\r\n\x1a\n" + b"z" * 3000  # bytes the file does not start with
    assert s.digest_of(other) == hashlib.sha256(other).hexdigest()


def test_the_file_digest_never_parses() -> None:
    import hashlib

    data = _card_png()
    s = Sniff(data, "card.png")
    before = Sniff.parse_counts["png"]
    assert s.sha256 == hashlib.sha256(data).hexdigest()
    assert Sniff.parse_counts["png"] == before
    assert s._png is sniff_mod._UNSET
