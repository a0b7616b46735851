"""bunzai_codecs: one codec per AI-roleplay file format, all mapping onto one canonical hub model.

    >>> from bunzai_codecs import read, write
    >>> decoded = read(open("card.png", "rb").read(), "card.png")
    >>> decoded.primary.body.identity.name
    >>> write(decoded.primary, "risu", linked=decoded.entities).data   # a .charx

No Beam import anywhere in this package: the pipeline (``pipeline/``) builds on it.
"""

from bunzai_codecs.bundle import Export, convert, read, read_sniff, write
from bunzai_codecs.core.codec import ACCEPT, CERTAIN, Codec, Coverage, EmitContext
from bunzai_codecs.core.entity import CanonicalEntity, Decoded, Source, canonical_id
from bunzai_codecs.core.errors import (
    BunzaiError,
    EditedExportBlocked,
    LimitExceeded,
    Malformed,
    NotRecognized,
    Unsupported,
    ValidationFailed,
)
from bunzai_codecs.core.sniff import Sniff

__version__ = "0.1.0"

__all__ = [
    "ACCEPT",
    "CERTAIN",
    "BunzaiError",
    "CanonicalEntity",
    "Codec",
    "Coverage",
    "Decoded",
    "EditedExportBlocked",
    "EmitContext",
    "Export",
    "LimitExceeded",
    "Malformed",
    "NotRecognized",
    "Sniff",
    "Source",
    "Unsupported",
    "ValidationFailed",
    "canonical_id",
    "convert",
    "read",
    "read_sniff",
    "write",
]
