"""``textgen-webui``: a text-generation-webui (oobabooga) character, ``Name.yaml`` with its picture
``Name.png`` (or ``.jpg``, ``.jpeg``) beside it.

The app keeps each character as a YAML file in its ``characters/`` folder (``user_data/characters/``
since 2025) and shows the picture with the same stem beside it; the file's stem is the character's
name in the app's menu. Its loader reads the name from the first non-empty of ``name``, ``bot``,
``<|bot|>``, ``char_name``, the user's name from ``your_name``/``user``/``<|user|>``, the prompt
``context`` (else a Pygmalion-style ``char_persona``, with ``world_scenario`` and
``example_dialogue``), and the ``greeting`` (else ``char_greeting``); until late 2023 it also
appended ``example_dialogue`` to the context. It saves ``name``, ``greeting``, ``context``.

Mapping (docs/formats/textgen-webui.md): the name -> ``identity.name``; ``context`` (else
``char_persona``) -> ``identity.description`` (as SillyTavern imports it); ``greeting`` (else
``char_greeting``) -> ``greetings.firstMessage``; ``example_dialogue`` ->
``examples.exampleMessages``; ``world_scenario`` -> ``persona.scenario``; the picture ->
``media.portrait`` (its ``ref`` is the picture's file name). The user's name and every other key
ride the escrow twin.

The input is one YAML file, or a file set (``core/fileset``) of the YAML and its picture: the
command line and the pipeline make one when both files are given or found in one folder. The
twin keeps the YAML's bytes, its file name and the picture's, so an unedited character is written
back byte for byte; an edit three-way merges the body into the parsed tree
(``core/overlay.overlay_twin``) and writes it with bunzai's YAML writer (``core/yamlio.dump``:
values kept, comments and quoting styles of the original not). Written with a picture, the export
is a file set of both files (``-o Name.yaml`` lays it out as ``Name.yaml`` and ``Name.png``; the
pipeline writes it as one ``.zip``); without one, the YAML alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from bunzai_codecs.core import fileset, media, yamlio
from bunzai_codecs.core.codec import Codec, Container, Coverage, EmitContext, body_as
from bunzai_codecs.core.entity import CanonicalEntity, Decoded
from bunzai_codecs.core.errors import Malformed, Unsupported
from bunzai_codecs.core.escrow import Twin, facet
from bunzai_codecs.core.overlay import overlay_twin
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.character import CharacterBody, CharacterMedia, MediaAsset
from bunzai_codecs.formats._shared.wire import MapContext
from bunzai_codecs.formats.textgen.detect import NAME_KEYS, pair_names

#: the picture suffix for each media type the app shows (others are re-encoded to PNG)
_PICTURE_EXT = {"image/png": ".png", "image/jpeg": ".jpg"}


@dataclass(eq=False)
class TextgenCharacterTwin(Twin):
    """The escrow of a character: ``raw`` the parsed YAML, ``blobs`` the YAML's bytes (``yaml``)
    and the picture's (``picture``), ``name`` the YAML's file name, ``picture`` the picture's,
    ``container`` ``yaml`` (a YAML file alone) or ``zip`` (a file set)."""

    picture: str | None = facet(str)


@dataclass(frozen=True)
class Layout:
    """The keys a file spells its values with (a same-format export keeps them)."""

    name: str = "name"
    description: str = "context"
    greeting: str = "greeting"
    scenario: bool = False

    @classmethod
    def of(cls, tree: dict[str, Any]) -> Layout:
        name = next((k for k in NAME_KEYS if k in tree and tree[k] != ""), "name")
        desc = "context" if "context" in tree or "char_persona" not in tree else "char_persona"
        greeting = "greeting" if "greeting" in tree or "char_greeting" not in tree else "char_greeting"
        return cls(name, desc, greeting, "world_scenario" in tree)


def body_dict(tree: dict[str, Any], r: MapContext) -> dict[str, Any]:
    """The canonical character of a character tree (without its picture)."""
    lay = Layout.of(tree)
    name = r.text(tree.get(lay.name), (lay.name,)) if lay.name in tree else None
    return {
        "identity": {
            "name": name or "",
            "description": r.text(tree.get(lay.description), (lay.description,)),
        },
        "persona": {"scenario": r.text(tree.get("world_scenario"), ("world_scenario",))},
        "greetings": {"firstMessage": r.text(tree.get(lay.greeting), (lay.greeting,))},
        "examples": {"exampleMessages": r.text(tree.get("example_dialogue"), ("example_dialogue",))},
    }


def native(body: CharacterBody, lay: Layout) -> dict[str, Any]:
    """The character tree for ``body`` in ``lay``'s spelling: the app's own order (``name``,
    ``greeting``, ``context``), then ``example_dialogue``; ``world_scenario`` only where the file
    had it (the app reads it only in a file without ``context``). Empty values are left out, as the
    app saves a character (a key a file had empty stays: the overlay carries it)."""
    out: dict[str, Any] = {}
    for key, value in (
        (lay.name, body.identity.name),
        (lay.greeting, body.greetings.firstMessage),
        (lay.description, body.identity.description),
        ("example_dialogue", body.examples.exampleMessages),
        ("world_scenario", body.persona.scenario if lay.scenario else None),
    ):
        if value:
            out[key] = value
    return out


def _text_only(body: CharacterBody) -> CharacterBody:
    """``body`` without media: what the YAML holds (the picture is compared on its own)."""
    if body.media == CharacterMedia():
        return body
    return body.model_copy(update={"media": CharacterMedia()})


class TextgenCharacterCodec(Codec):
    id = "textgen-webui"
    twin_type = TextgenCharacterTwin
    containers = (
        Container("yaml", (".yaml", ".yml"), "binary", images=True, files=True),
        Container("zip", (".zip",), "zip", images=True),
    )
    coverage = Coverage.of(
        "identity.name",
        "identity.description",
        "greetings.firstMessage",
        "examples.exampleMessages",
        *media.PORTRAIT_BYTES,
        notes=[
            "`context` is `identity.description` (SillyTavern imports it so); the app folds example "
            "dialogue into it by hand since late 2023 and no longer reads `example_dialogue`, which "
            "bunzai writes for the examples (older loaders and SillyTavern's YAML import read it)",
            "`world_scenario` is read as `persona.scenario` and written back only to a file that had "
            "it (the app reads it only without `context`); the user's name (`your_name`, `user`) and "
            "other keys ride the escrow twin",
            "the picture beside the YAML is the portrait (a PNG or JPEG; another type is re-encoded "
            "to PNG); other images have no place",
            "an edited file is written by bunzai's YAML writer: values are kept, comments and quoting "
            "styles of the original are not",
        ],
    )

    def decode(self, s: Sniff) -> Decoded:
        picture: tuple[str, bytes] | None = None
        if s.is_zip:
            z = fileset.require(s)
            names = pair_names(z.names)
            if names is None:
                raise Malformed(
                    "a textgen-webui file set holds one character YAML and at most its picture "
                    f"(Name.yaml, Name.png); this one holds {', '.join(z.names) or 'nothing'}"
                )
            yaml_name, picture_name = names
            yaml = z.read(yaml_name)
            if picture_name is not None:
                picture = (picture_name, z.read(picture_name))
            container = "zip"
        else:
            yaml_name = s.name.replace("\\", "/").rsplit("/", 1)[-1] or "character.yaml"
            yaml = s.data
            container = "yaml"
        # a YAML file alone: the parse detection made (once per input)
        tree = yamlio.load(yaml, what=f"YAML of {yaml_name}") if s.is_zip else yamlio.tree(s)
        if not isinstance(tree, dict):
            raise Malformed(f"{yaml_name}: a character is a YAML mapping (name, greeting, context)", path="$")
        r = MapContext()
        body = body_dict(tree, r)
        blobs = {"yaml": yaml}
        facets: dict[str, Any] = {"name": yaml_name, "container": container}
        resolve = None
        if picture is not None:
            pname, pbytes = picture
            body["media"] = {"portrait": {"role": "portrait", "ref": pname}}
            blobs["picture"] = pbytes
            facets["picture"] = pname

            def resolve(path: str, a: MediaAsset, pbytes: bytes = pbytes) -> bytes | None:
                return pbytes if path == "media.portrait" else None

        e = self.entity(s, body, raw=tree, media=resolve, warnings=r.warnings, blobs=blobs, **facets)
        return Decoded([e])

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        body = body_as(entity, CharacterBody)
        twin = entity.twin(self.id)
        raw = twin.raw if twin is not None else None
        if isinstance(raw, dict):
            lay = Layout.of(raw)
            mapped = body_dict(raw, MapContext())
            tree = overlay_twin(raw, _text_only(body), mapped, lambda b: native(b, lay))
        else:
            tree = native(body, Layout())
        kept = twin.blob("yaml") if twin is not None else None
        text = kept if kept is not None and tree is raw else yamlio.dump(tree)

        yaml_name = twin.name if twin is not None and twin.name else None
        if yaml_name is None or fileset.suffix(yaml_name) not in fileset.YAML_SUFFIXES:
            yaml_name = f"{fileset.safe_stem(body.identity.name) or 'character'}.yaml"
        picture = self._picture(entity, body, twin, fileset.stem(yaml_name), ctx.options.get("image"))

        want = ctx.options.get("container") or (twin.container if twin is not None else None)
        if want not in (None, "yaml", "zip"):
            raise Unsupported(f"textgen-webui is written as yaml or zip, not {want!r}")
        if ctx.options.get("container") is not None:
            ctx.written = want
        if want == "zip" or picture is not None:
            files = {yaml_name: text}
            if picture is not None:
                files[picture[0]] = picture[1]
            return fileset.pack(files)
        return text

    @staticmethod
    def _picture(
        entity: CanonicalEntity, body: CharacterBody, twin: Twin | None, stem: str, image: bytes | None = None
    ) -> tuple[str, bytes] | None:
        """The picture's file name and bytes: the caller's ``image`` (``convert --image``), else the
        portrait's (the twin's file when unchanged); a type the app does not show is re-encoded to
        PNG. None when there is none."""
        data = image if image is not None else media.bytes_of(entity.media, body.media.portrait)
        if data is None:
            return None
        if isinstance(twin, TextgenCharacterTwin) and twin.picture and twin.blob("picture") == data:
            return twin.picture, data
        ext = _PICTURE_EXT.get(media.sniff_mime(data) or "")
        if ext is None:
            try:
                data, ext = media.as_png(data), ".png"
            except media.ImageError:
                return None  # not a picture the app could show: an expected loss, reported as such
        return f"{stem}{ext}", data

    def layout(self, data: bytes, path: PurePath) -> list[tuple[PurePath, bytes]]:
        """A file set lays out as the YAML at ``path`` and the picture beside it, named after it
        (``Foo.yaml`` -> ``Foo.png``); a YAML alone is ``path``."""
        if data[:4] != b"PK\x03\x04":
            return [(path, data)]
        from bunzai_codecs.core.archive import open_zip

        z = open_zip(data, limits=fileset.LIMITS)
        names = pair_names(z.names)
        if names is None:
            return [(path, data)]
        yaml_name, picture_name = names
        out: list[tuple[PurePath, bytes]] = [(path, z.read(yaml_name))]
        if picture_name is not None:
            base = path.name
            own = fileset.suffix(base)
            stem = base[: -len(own)] if own in fileset.YAML_SUFFIXES else base
            out.append((path.with_name(stem + fileset.suffix(picture_name)), z.read(picture_name)))
        return out
