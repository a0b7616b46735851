"""The codec of a JSON file that holds one entity, mapped both ways by two functions.

Most formats are this: detection looks at the parsed tree, the decoder maps the tree to a body
(typed errors; notes in a :class:`~bunzai_codecs.formats._shared.wire.MapContext` become the
entity's warnings) and keeps the tree as the escrow twin, and the encoder writes the body back
overlaid on the twin (``core.overlay.overlay_twin``: the twin itself when the body is unedited,
else a three-way merge) or freshly without one. :class:`TreeCodec` is that skeleton; a format
declares its identity and its three functions::

    class MyLorebook(TreeCodec):
        id = "myapp-lorebook"
        kind = "lorebook"
        ...
        score = 1.0  # for a JSON object is_my_book accepts
        fits = staticmethod(is_my_book)
        read = staticmethod(book_to_body)  # (tree, ctx) -> body dict
        write = staticmethod(body_to_book)  # body -> tree
        list_key = by_id

That is a codec outside this package's format table (a plugin's, a test's). A format of the table
sets only ``id``, ``read``, ``write`` (and ``list_key``): its row in ``formats/table.py`` declares
its kind, app, label and suffixes, and its detector (``<app>/detect.py``) plays the part of
``fits``/``score``.

``read`` and ``write`` are abstract: a class that forgets one cannot be instantiated. A format whose
writer needs the twin or the export options overrides :meth:`TreeCodec.to_native` besides (its
``write`` is then the fresh file with default options).

A format whose file holds more than one entity, or whose decoder needs more than the tree (the
file name, a zip member), writes its own ``decode``/``encode``.
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar

import orjson

from bunzai_codecs.core.codec import Codec, EmitContext
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.overlay import ListKey, overlay_twin
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.formats._shared.wire import MapContext


class TreeCodec(Codec):
    """A JSON format holding one entity: :meth:`fits` and :attr:`score`, :meth:`read` and
    :meth:`write` (or :meth:`to_native`) are the format; detect, decode and encode (2-space JSON)
    are this class's."""

    #: how the overlay pairs list items of the twin with the body's (``core.overlay.merge3``)
    list_key: ClassVar[ListKey | None] = None
    #: the detection score of a JSON object that :meth:`fits`
    score: ClassVar[float] = 1.0

    @staticmethod
    def fits(tree: dict[str, Any] | None, /) -> bool:
        """Whether the parsed input (when it is a JSON object; ``None`` otherwise) is this format's."""
        return False

    @staticmethod
    @abc.abstractmethod
    def read(tree: Any, ctx: Any, /) -> dict[str, Any]:
        """The body dict of a parsed file; typed errors name the JSON path, notes go to ``ctx`` (the
        :meth:`reader`)."""

    @staticmethod
    @abc.abstractmethod
    def write(body: Any, /) -> Any:
        """A fresh tree for ``body`` (see :meth:`to_native`, which a format overrides besides when
        its writer needs the twin or the export options)."""

    def claims(self, tree: dict[str, Any] | None) -> float:
        """The detection score: :attr:`score` for a JSON object that :meth:`fits`, else 0."""
        return self.score if self.fits(tree) else 0.0

    def to_body(self, tree: Any, ctx: Any) -> dict[str, Any]:
        """:meth:`read`."""
        return self.read(tree, ctx)

    def reader(self) -> Any:
        """What :meth:`to_body` reads through and notes its warnings in (its ``warnings`` list): a
        :class:`~bunzai_codecs.formats._shared.wire.MapContext` at ``$`` unless the format says
        otherwise."""
        return MapContext("$")

    def to_native(self, body: Any, twin: dict[str, Any] | None, ctx: EmitContext) -> Any:
        """The tree for ``body``: one side of the overlay on the ``twin`` tree, or a fresh file
        when ``twin`` is ``None``; :meth:`write` unless the format needs the twin or ``ctx``."""
        return self.write(body)

    def detect(self, s: Sniff) -> float:
        return self.claims(s.json_object)

    def decode(self, s: Sniff) -> Decoded:
        tree = s.require_json()
        ctx = self.reader()
        # marked unedited since decode: ``encode`` maps the twin through ``to_body`` the same way
        e = self.entity(s, self.to_body(tree, ctx), raw=tree, mark=self._tag)
        e.warnings.extend(ctx.warnings)
        return Decoded([e])

    @property
    def _tag(self) -> str:
        return f"tree-codec:{self.id}"

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        twin = entity.twin(self.id)
        raw = twin.raw if twin else None
        out: Any
        if isinstance(raw, dict):
            out = overlay_twin(
                raw,
                entity.body,
                lambda: self.to_body(raw, self.reader()),
                lambda b: self.to_native(b, raw, ctx),
                list_key=type(self).list_key,
                tag=self._tag,
            )
        else:
            out = self.to_native(entity.body, None, ctx)
        return orjson.dumps(out, option=orjson.OPT_INDENT_2)


__all__ = ["TreeCodec"]
