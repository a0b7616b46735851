"""The codec contract's guards and declarations: the kinds a format holds, the kind check every
encoder gets, internal errors, and the typed escrow twin with its exact JSON form."""

from __future__ import annotations

from typing import Any, ClassVar

import orjson
import pytest

from bunzai_codecs import Malformed, Unsupported, read, write
from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import Codec, EmitContext
from bunzai_codecs.core.entity import ENTITY_KINDS, CanonicalEntity, Decoded
from bunzai_codecs.core.escrow import Twin
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities import CharacterBody, LorebookBody
from bunzai_codecs.formats.tavern.card import CardTwin


class _Book(Codec):
    id = "toy-book"
    kind = "lorebook"
    calls: ClassVar[list[str]] = []

    def decode(self, s: Sniff) -> Decoded:
        tree = s.require_json()
        if tree.get("bad") == "typed":
            raise Malformed("a typed refusal", path="$.bad")
        return Decoded([self.entity(s, {"name": tree["name"]}, raw=tree)])  # KeyError without a name

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        self.calls.append(entity.kind)
        return b"{}"


def _character() -> CanonicalEntity:
    return CanonicalEntity(kind="character", id="character-x", body=CharacterBody.model_validate({}))


def test_an_encoder_only_ever_sees_the_kinds_its_format_holds() -> None:
    codec = _Book()
    _Book.calls.clear()
    with pytest.raises(Unsupported, match=r"toy-book holds lorebooks, not character$"):
        codec.encode(_character(), EmitContext())
    assert _Book.calls == []  # refused before the codec's own code ran
    book = CanonicalEntity(kind="lorebook", id="lorebook-x", body=LorebookBody.model_validate({"name": "b"}))
    assert codec.encode(book, EmitContext()) == b"{}" and _Book.calls == ["lorebook"]


def test_every_registered_encoder_refuses_a_kind_it_does_not_hold() -> None:
    entity = _character()
    for codec in registry.all_codecs():
        if codec.holds("character"):
            continue
        with pytest.raises(Unsupported, match=rf"Unsupported: {codec.id} holds "):
            codec.encode(entity, EmitContext())


def test_kinds_default_to_the_kind_and_vaud_json_holds_every_kind() -> None:
    assert _Book.kinds == frozenset({"lorebook"}) and _Book().kind_label() == "lorebook"
    vaud = registry.get("vaud-json")
    assert vaud.kinds == frozenset(ENTITY_KINDS) and vaud.kind_label() == "any" and vaud.lossless
    assert all(not c.lossless for c in registry.all_codecs() if c.id != "vaud-json")
    for kind in ENTITY_KINDS:
        assert vaud in registry.for_kind(kind)  # type: ignore[arg-type]
        assert registry.lossless_codec(kind) is vaud  # type: ignore[arg-type]


def test_a_stray_exception_in_a_decoder_is_an_internal_error_a_typed_one_is_not() -> None:
    codec = _Book()
    with pytest.raises(Malformed) as bug:
        codec.decode(Sniff(b'{"nameless": 1}', "b.json", uri="mem://b.json"))
    assert bug.value.internal and bug.value.uri == "mem://b.json" and "KeyError" in bug.value.message
    with pytest.raises(Malformed) as typed:
        codec.decode(Sniff(b'{"bad": "typed"}', "b.json"))
    assert not typed.value.internal and typed.value.path == "$.bad"


# -- the escrow twin ----------------------------------------------------------------------------------


def test_a_twin_writes_its_facets_in_the_order_the_codec_gave_them() -> None:
    a = CardTwin.of({"data": {}}, blobs={"image": b"x"}, png={"payload": "chara"})
    b = CardTwin.of({"data": {}}, zip={"card": "card.json"}, blobs={"archive": b"z"})
    assert list(a.to_json()) == ["raw", "blobs", "png"]
    assert list(b.to_json()) == ["raw", "zip", "blobs"]
    assert a.blob("image") == b"x" and a.blob("archive") is None and a.png == {"payload": "chara"}
    # a facet given as None is written as null; one not given is not written
    assert Twin.of([], name=None).to_json() == {"raw": [], "name": None}
    with pytest.raises(TypeError):
        Twin.of({}, payload="chara")  # not a facet of the base twin


def test_a_twin_read_from_json_is_written_back_exactly() -> None:
    env: dict[str, Any] = {"png": {"payload": "ccv3"}, "raw": {"a": 1}, "later": [1, 2], "module": None}
    t = CardTwin.from_json(env, "$.original.sillytavern")
    assert t.raw == {"a": 1} and t.png == {"payload": "ccv3"} and t.extra == {"later": [1, 2]}
    assert orjson.dumps(t.to_json()) == orjson.dumps(env)


@pytest.mark.parametrize(
    ("env", "path"),
    [
        ({"raw": {}, "png": "ccv3"}, "$.original.sillytavern.png"),
        ({"raw": {}, "container": 3}, "$.original.sillytavern.container"),
        ({"raw": {}, "module": 1}, "$.original.sillytavern.module"),
        ([1, 2], "$.original.sillytavern"),
    ],
)
def test_a_twin_facet_of_the_wrong_type_is_malformed_at_its_path(env: Any, path: str) -> None:
    with pytest.raises(Malformed) as err:
        CardTwin.from_json(env, "$.original.sillytavern")
    assert err.value.path == path


def test_a_vaud_line_with_a_bad_twin_is_rejected_with_its_path() -> None:
    line = orjson.loads(write(_character(), "vaud-json").data)
    line["original"] = {"pygmalion": {"raw": {}, "container": ["png"]}}
    with pytest.raises(Malformed) as err:
        read(orjson.dumps(line), "c.vaud.json")
    assert err.value.path == "$.original.pygmalion.container"


def test_the_twin_of_a_format_this_bunzai_does_not_know_is_kept_whole() -> None:
    assert registry.twin_type("some-future-format") is Twin
    line = orjson.loads(write(_character(), "vaud-json").data)
    line["original"] = {"some-future-format": {"raw": {"x": 1}, "layout": "v9", "name": "n"}}
    data = orjson.dumps(line)
    back = read(data, "c.vaud.json").primary
    assert back.original["some-future-format"].extra == {"layout": "v9"}
    again = orjson.loads(write(back, "vaud-json").data)["original"]
    assert orjson.dumps(again) == orjson.dumps(line["original"])


# -- what a codec must write, and what a read-only format is ---------------------------------------


def test_a_codec_without_a_decoder_cannot_be_made() -> None:
    class NoDecode(Codec):
        id = "no-decode"
        kind = "lorebook"

    with pytest.raises(TypeError, match="abstract method decode"):
        NoDecode()


def test_the_half_written_bases_of_the_formats_cannot_be_made() -> None:
    from bunzai_codecs.formats._shared.tree_codec import TreeCodec
    from bunzai_codecs.formats.marinara._rows import EnvelopeCodec

    class ReadsOnly(TreeCodec):  # a tree format must say how it writes a tree, too
        id = "tree-reads-only"
        kind = "lorebook"
        read = staticmethod(lambda tree, ctx: {"name": "x"})

    class Fresh(EnvelopeCodec):  # an envelope format must lay a body over its twin, too
        id = "envelope-fresh-only"
        kind = "lorebook"

        def fresh(self, new: dict[str, Any], exported_at: str) -> Any:
            return new

    with pytest.raises(TypeError, match="abstract method write"):
        ReadsOnly()
    with pytest.raises(TypeError, match="abstract method overlay"):
        Fresh()


class _ReadOnly(Codec):
    """Decodes and does not override ``encode``: a format bunzai reads and does not write."""

    id = "toy-read-only"
    kind = "lorebook"

    def decode(self, s: Any) -> Decoded:
        return Decoded([self.entity(s, {"name": "r"}, raw=s.json)])


def test_a_read_only_format_says_so_and_fidelity_records_it_as_a_fact_not_a_bug() -> None:
    from bunzai_codecs.fidelity import cross_format

    book = CanonicalEntity(kind="lorebook", id="lorebook-x", body=LorebookBody.model_validate({"name": "b"}))
    with pytest.raises(NotImplementedError, match="bunzai reads toy-read-only but does not write it"):
        _ReadOnly().encode(book, EmitContext())
    with registry.using({**registry.CODECS, _ReadOnly.id: _ReadOnly}):
        row = cross_format(book, registry.get(_ReadOnly.id), pool=[book], input="b", source="x")
    assert row.status == "error" and row.error is not None
    assert (row.error.type, row.error.internal) == ("NotImplementedError", False)
