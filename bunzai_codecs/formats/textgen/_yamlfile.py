"""What text-generation-webui's YAML formats share: one mapping per file, the file's own bytes
kept in escrow, and a file named by what it holds (a preset or a template is called by its file's
stem in the app's menus).

:class:`YamlPreset` is the codec of a preset kind whose file is a flat YAML mapping: a subclass
gives ``read`` (tree -> body dict, without the name) and ``write`` (body -> tree). Decoding keeps
the parsed tree, the bytes and the file name in the twin; encoding writes the twin's bytes when the
body is unedited (byte for byte: comments and quoting kept), else the body three-way merged into
the tree (``core/overlay.overlay_twin``), written by ``core/yamlio.dump``; without a twin, the
body's tree.
"""

from __future__ import annotations

from typing import Any, ClassVar

from bunzai_codecs.core import yamlio
from bunzai_codecs.core.codec import Codec, Container, EmitContext, body_as
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.core.escrow import Twin
from bunzai_codecs.core.overlay import overlay_twin
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.preset import PresetBody
from bunzai_codecs.formats._shared.wire import MapContext, file_stem, type_name

#: a YAML file's one container
YAML = Container("yaml", (".yaml", ".yml"), "binary")


def base_name(name: str) -> str:
    """``a/b/ChatML.yaml`` -> ``ChatML.yaml``."""
    return name.replace("\\", "/").rsplit("/", 1)[-1]


def read_mapping(s: Sniff, what: str) -> dict[str, Any]:
    """The YAML mapping an input holds (``core/yamlio``'s bounds; the parse detection made, once
    per input), or ``Malformed``."""
    tree = yamlio.tree(s)
    if not isinstance(tree, dict):
        raise Malformed(f"{what} is a YAML mapping; found {type_name(tree)}", path="$")
    return tree


def written(tree: Any, twin: Twin | None) -> bytes:
    """The bytes for ``tree``: the twin's own bytes when ``tree`` is the twin's tree (unedited),
    else bunzai's YAML of it."""
    if twin is not None and tree is twin.raw:
        kept = twin.blob("yaml")
        if kept is not None:
            return kept
    return yamlio.dump(tree)


class YamlPreset(Codec):
    """A preset kind stored as one YAML mapping named by its file (see the module docstring)."""

    containers = (YAML,)
    #: what the top-level mapping is called in errors
    what: ClassVar[str] = "a preset"

    def read(self, tree: dict[str, Any], r: MapContext) -> dict[str, Any]:
        """The body dict of ``tree`` without its name."""
        raise NotImplementedError

    def write(self, body: PresetBody, raw: dict[str, Any] | None) -> dict[str, Any]:
        """The tree for ``body``; ``raw`` is the twin's tree (its spelling), None for a fresh file."""
        raise NotImplementedError

    def decode(self, s: Sniff) -> Decoded:
        name = base_name(s.name)
        tree = read_mapping(s, self.what)
        r = MapContext(lenient=True)
        body = self.read(tree, r)
        body["name"] = file_stem(name) if name else ""
        e = self.entity(s, body, raw=tree, warnings=r.warnings, blobs={"yaml": s.data}, name=name)
        return Decoded([e])

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        body = body_as(entity, PresetBody)
        twin = entity.twin(self.id)
        raw = twin.raw if twin is not None else None
        if twin is not None and isinstance(raw, dict):
            mapped = self.read(raw, MapContext(lenient=True))
            mapped["name"] = file_stem(twin.name) if twin.name else ""
            tree = overlay_twin(raw, body, mapped, lambda b: self.write(b, raw))
            return written(tree, twin)
        return written(self.write(body, None), None)


__all__ = ["YAML", "YamlPreset", "base_name", "read_mapping", "written"]
