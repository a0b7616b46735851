"""The canonical entity: one hub body per character, lorebook, regex set, persona or preset.

Its JSON form is ``vaud-json`` (the project's own lossless format and the line format of the
pipeline's canonical JSONL)::

    {"schemaVersion": 1, "kind": ..., "id": ..., "body": {...}, "links": {"knowledgeRefs": [...]},
     "original": {"<format-id>": {"raw": <native tree>, "blobs": {name: bytes}, ...}},
     "source": {"uri", "format", "score", "sha256", "bytes"}, "warnings": [...]}

``original`` is the escrow: each codec stores a twin (``core/escrow.py``): the parsed native tree it
decoded (never a copy: the tree is not mutated afterwards) plus, under ``blobs``, the bytes of
anything it does not map (image data, zip members), and the typed facets of the file's layout its
encoder needs. A same-format export starts from that twin, so nothing is lost.

``media`` is the media store: the bytes of every image or other file the body references by
digest (``MediaAsset.sha256``), for every encoder to read (``core/media.py``). vaud-json writes it
as the entity's ``media`` section, base64 per digest.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from bunzai_codecs.core.escrow import Twin
    from bunzai_codecs.entities.base import Body

EntityKind = Literal["character", "lorebook", "regex", "persona", "preset"]
ENTITY_KINDS: tuple[EntityKind, ...] = ("character", "lorebook", "regex", "persona", "preset")
SCHEMA_VERSION = 1

#: the link list that ties a character (or preset) to the lorebooks and regex sets it carries
KNOWLEDGE_REFS = "knowledgeRefs"


def canonical_id(kind: str, digest: str, *part: str) -> str:
    """A deterministic id: the same input bytes give the same id on every worker and every run.

    ``digest`` is the sha256 of the source file; ``part`` names a piece of a bundle (a card's
    embedded ``character_book`` is ``("lorebook", "character_book")``) so linked entities get ids
    that are stable and distinct from their parent's.
    """
    h = hashlib.sha256(digest.encode("ascii"))
    for p in part:
        h.update(b"\0" + p.encode("utf-8"))
    return f"{kind}-{h.hexdigest()[:24]}"


@dataclass(slots=True)
class Source:
    """Where an entity came from."""

    uri: str
    format: str
    score: float
    sha256: str
    bytes: int

    def to_json(self) -> dict[str, Any]:
        return {
            "uri": self.uri,
            "format": self.format,
            "score": self.score,
            "sha256": self.sha256,
            "bytes": self.bytes,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Source:
        return cls(
            uri=str(d["uri"]),
            format=str(d["format"]),
            score=float(d["score"]),
            sha256=str(d["sha256"]),
            bytes=int(d["bytes"]),
        )


@dataclass(slots=True, eq=False)
class CanonicalEntity:
    """A hub body with its links, escrow twins and provenance."""

    kind: EntityKind
    id: str
    body: Body
    links: dict[str, list[str]] = field(default_factory=dict)
    original: dict[str, Twin] = field(default_factory=dict)
    source: Source | None = None
    warnings: list[str] = field(default_factory=list)
    #: the media store: sha256 hex -> bytes, for every digest the body's media items name
    media: dict[str, bytes] = field(default_factory=dict)

    @property
    def knowledge_refs(self) -> list[str]:
        return self.links.get(KNOWLEDGE_REFS, [])

    def twin(self, format_id: str) -> Twin | None:
        """The escrow twin a codec stored for its own format, if this entity came from it."""
        return self.original.get(format_id)

    def same_body(self, other: CanonicalEntity) -> bool:
        return self.kind == other.kind and self.body == other.body

    def __repr__(self) -> str:
        src = f" from {self.source.format}:{self.source.uri}" if self.source else ""
        return f"<CanonicalEntity {self.kind} {self.id}{src}>"


@dataclass(slots=True)
class Decoded:
    """What one input decodes to: the primary entity first, then the entities it carries."""

    entities: list[CanonicalEntity]

    @property
    def primary(self) -> CanonicalEntity:
        return self.entities[0]

    def by_id(self) -> dict[str, CanonicalEntity]:
        return {e.id: e for e in self.entities}
