"""Agnai value mappers shared by the native ``agnai`` codec and Agnai's Tavern export flavour.

Agnai (Agnaistic) keeps several character parts as small structured values that have the same shape
whether they sit at the top of a native character or under ``data.extensions.agnai`` of the CCv2
card Agnai's "Tavern" export writes: the persona (``{kind, attributes}``), the TTS voice (a union
discriminated by ``service``), the composite sprite recipe and the structured-output ``json``
schema. This module maps each of them to and from its canonical path, with shape checks that raise
``Malformed`` naming the JSON path, so both containers canonicalise them identically.

Field map: docs/formats/agnai.md#character (read from Agnai's own source, AGPL-3.0;
no Agnai code is used here).
"""

from __future__ import annotations

import re
from typing import Any

from bunzai_codecs.core.errors import Malformed, json_path
from bunzai_codecs.formats._shared.wire import MapContext, str_at, utc_from_us, wrong_at

#: a JSON path under construction: ``("persona", "attributes", "text", 0)``
Path = tuple[str | int, ...]

#: the persona kind whose text lives in ``persona.personality`` instead of an attribute map
TEXT = "text"

#: the four sprite keys that are not part slots (A1.4); every other key is a part
SPRITE_SPECIALS = ("gender", "eyeColor", "bodyColor", "hairColor")

#: voice keys with a first-class canonical field; the rest of the voice rides ``Voice.extras``
_VOICE_FIRST_CLASS = ("service", "voiceId", "rate", "pitch")

#: the ``imageSettings`` keys that are authored prompt text; every other key is a sampler knob
IMAGE_AFFIXES = ("prefix", "suffix", "negative", "template")


# --- shape checks -------------------------------------------------------------------------------


def bad(what: str, path: Path) -> Malformed:
    return Malformed(what, path=json_path(path))


def is_num(v: Any) -> bool:
    """A JSON number (a bool is not one, though Python says so)."""
    return isinstance(v, int | float) and not isinstance(v, bool)


def put(out: dict[str, Any], key: str, value: Any) -> None:
    """Set ``out[key]`` only for a present value: absent canonical fields are not emitted."""
    if value is not None:
        out[key] = value


# --- persona (A1.2) -----------------------------------------------------------------------------


def persona_from_agnai(persona: Any, path: Path) -> tuple[dict[str, Any], str | None]:
    """Agnai ``persona`` -> (canonical ``persona.structured``, the text of a text persona).

    A ``text`` persona becomes ``{kind: "text"}`` and its first text element the text (the native
    codec reads it as ``identity.description``; a later element has no canonical home: the
    documented loss, kept by the twin until an edit). An
    attribute-map persona (``wpp``, ``sbf``, ``boostyle``, ``attributes``, or a kind Agnai adds
    later) keeps its attributes verbatim.
    """
    if not isinstance(persona, dict):
        raise wrong_at(path, "an object", persona)
    kind = persona.get("kind")
    if not isinstance(kind, str):
        raise wrong_at((*path, "kind"), "a string", kind)
    attrs = persona.get("attributes")
    if attrs is None:
        attrs = {}
    if not isinstance(attrs, dict):
        raise wrong_at((*path, "attributes"), "an object", attrs)
    for k, vs in attrs.items():
        if not isinstance(vs, list) or not all(isinstance(x, str) for x in vs):
            raise wrong_at((*path, "attributes", k), "an array of strings", vs)
    if kind == TEXT:
        text = attrs.get(TEXT)
        return {"kind": TEXT}, (text[0] if text else None)
    return {"kind": kind, "attributes": attrs}, None


def persona_text(description: str | None, personality: str | None) -> str:
    """The text of an Agnai ``text`` persona for a canonical body: the non-empty parts of the main
    definition and the personality, joined by a newline (Agnai's own rule when it imports a Tavern
    card, A3: ``description + "\\n" + personality``)."""
    return "\n".join(p for p in (description, personality) if p)


def persona_to_agnai(
    structured: dict[str, Any] | None, description: str | None, personality: str | None
) -> dict[str, Any]:
    """Canonical persona -> Agnai ``persona``: an attribute-map kind verbatim, otherwise text."""
    if structured is not None and structured.get("kind") != TEXT:
        return {"kind": structured["kind"], "attributes": structured.get("attributes") or {}}
    return {"kind": TEXT, "attributes": {TEXT: [persona_text(description, personality)]}}


# --- voice (A1.3) -------------------------------------------------------------------------------


def voice_from_agnai(voice: Any, disabled: Any, path: Path) -> dict[str, Any] | None:
    """Agnai ``voice`` (+ top-level ``voiceDisabled``) -> canonical ``persona.voice``.

    No ``service`` (Agnai writes ``{}`` or ``{rate}`` when no TTS is chosen) means no voice: the
    twin keeps the leftover. ``voiceId``/``rate``/``pitch`` are first-classed when they have the
    right type; everything else (ElevenLabs ``stability``, a ``seed`` that is a string for NovelAI
    and a number for Agnaistic, a mistyped value) rides ``extras`` verbatim.
    """
    if voice is None:
        return None
    if not isinstance(voice, dict):
        raise wrong_at(path, "an object", voice)
    service = voice.get("service")
    if service is None:
        return None
    if not isinstance(service, str):
        raise wrong_at((*path, "service"), "a string", service)
    out: dict[str, Any] = {"provider": service}
    extras: dict[str, Any] = {}
    for k, v in voice.items():
        if k == "service":
            continue
        if (k == "voiceId" and isinstance(v, str)) or (k in ("rate", "pitch") and is_num(v)):
            out[k] = v
        else:
            extras[k] = v
    if isinstance(disabled, bool):
        out["disabled"] = disabled
    if extras:
        out["extras"] = extras
    return out


def voice_to_agnai(voice: dict[str, Any] | None) -> tuple[dict[str, Any] | None, bool | None]:
    """Canonical ``persona.voice`` -> (Agnai ``voice``, ``voiceDisabled``)."""
    if voice is None:
        return None, None
    out: dict[str, Any] = {"service": voice["provider"]}
    for k in ("voiceId", "rate", "pitch"):
        put(out, k, voice.get(k))
    for k, v in (voice.get("extras") or {}).items():
        if k not in _VOICE_FIRST_CLASS:
            out[k] = v
    return out, voice.get("disabled")


# --- sprite (A1.4) ------------------------------------------------------------------------------


def sprite_from_agnai(sprite: Any, path: Path) -> dict[str, Any] | None:
    """Agnai's flat ``FullSprite`` -> ``{parts, gender?, eyeColor?, bodyColor?, hairColor?}``."""
    if sprite is None:
        return None
    if not isinstance(sprite, dict):
        raise wrong_at(path, "an object", sprite)
    out: dict[str, Any] = {"parts": {}}
    for k, v in sprite.items():
        if v is None:
            continue
        if not isinstance(v, str):
            raise wrong_at((*path, k), "a string", v)
        if k in SPRITE_SPECIALS:
            out[k] = v
        else:
            out["parts"][k] = v
    return out


def sprite_to_agnai(sprite: dict[str, Any] | None) -> dict[str, Any] | None:
    if sprite is None:
        return None
    out = dict(sprite.get("parts") or {})
    for k in SPRITE_SPECIALS:
        put(out, k, sprite.get(k))
    return out


# --- avatar -------------------------------------------------------------------------------------

_DATA_URI = re.compile(r"data:([\w.+-]+/[\w.+-]+)[;,]", re.ASCII)
_EXT_MIME = {
    "png": "image/png",
    "apng": "image/apng",
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "webp": "image/webp",
    "gif": "image/gif",
    "avif": "image/avif",
}


def guess_mime(ref: str) -> str | None:
    """Media type of an avatar: from a ``data:`` URI's header or the path's extension, else None."""
    m = _DATA_URI.match(ref[:128])
    if m:
        return m.group(1).lower()
    stem = ref.split("?", 1)[0].split("#", 1)[0]
    dot = stem.rfind(".")
    if dot < 0 or "/" in stem[dot:]:
        return None
    return _EXT_MIME.get(stem[dot + 1 :].lower())


#: portrait refs that only mean something inside another app's container (a CCv3 card's default
#: icon, a CHARX member, a Risu asset index): Agnai's ``avatar`` cannot point at them
CONTAINER_REFS = ("ccdefault:", "embeded://", "embedded://", "__asset:")


def portrait_to_agnai(ref: str | None) -> str | None:
    """The ``avatar`` for a canonical portrait ref: a ``data:`` URL, URL or path as it is; a
    container-internal ref is not written."""
    if ref is None or ref.startswith(CONTAINER_REFS):
        return None
    return ref


def portrait_from_agnai(avatar: str | None) -> dict[str, Any] | None:
    """Agnai ``avatar`` (a ``data:`` URL for a guest, ``/assets/char-<id>.<ext>`` on a server)."""
    if not avatar:
        return None
    out: dict[str, Any] = {"role": "portrait", "ref": avatar}
    put(out, "mime", guess_mime(avatar))
    return out


# --- dates --------------------------------------------------------------------------------------


def seconds_to_iso(value: float) -> str | None:
    """Unix seconds as JavaScript's ``toISOString()`` writes them (millisecond precision, ``Z``);
    ``None`` for a number no date holds (the date is left out: the fidelity report names it)."""
    ms = round(value * 1000)
    dt = utc_from_us(ms // 1000 * 1_000_000)
    return None if dt is None else dt.strftime("%Y-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}Z"


# --- the Agnai block of a Tavern export (A1.1: data.extensions.agnai) -----------------------------

#: the keys Agnai's Tavern export writes under ``extensions.agnai``, in its order
EXTENSION_KEYS = ("voice", "persona", "appearance", "json", "sprite")


def extension_to_body(agnai: Any, ctx: MapContext, path: Path = ()) -> dict[str, dict[str, Any]]:
    """``extensions.agnai`` -> canonical pieces ``{section: {field: value}}`` on the same paths as a
    native character: ``persona.structured``, ``persona.voice``, ``persona.appearance``,
    ``settings.responseSchema``, ``media.sprite``.

    A text persona sets only ``structured`` (``{kind: "text"}``): the Tavern card's own
    ``description`` already holds that text, rendered by Agnai's export. An attribute map is taken
    as it is (Agnai's importer reuses it only when re-rendering reproduces ``description``; bunzai
    does not re-render). There is no ``voiceDisabled`` in this block. ``path`` is below ``ctx``.
    """
    if not isinstance(agnai, dict):
        raise wrong_at(path, "an object", agnai)
    persona: dict[str, Any] = {}
    if agnai.get("persona") is not None:
        persona["structured"] = persona_from_agnai(agnai["persona"], (*path, "persona"))[0]
    put(persona, "voice", voice_from_agnai(agnai.get("voice"), None, (*path, "voice")))
    put(persona, "appearance", str_at(agnai.get("appearance"), ctx, *path, "appearance"))
    out: dict[str, dict[str, Any]] = {"persona": persona}
    schema = ctx.opaque(agnai.get("json"), (*path, "json"))
    if schema is not None:
        out["settings"] = {"responseSchema": schema}
    sprite = sprite_from_agnai(agnai.get("sprite"), (*path, "sprite"))
    if sprite is not None:
        out["media"] = {"sprite": sprite}
    return out


def body_to_extension(
    *,
    structured: dict[str, Any] | None,
    description: str | None,
    personality: str | None,
    voice: dict[str, Any] | None,
    appearance: str | None,
    response_schema: dict[str, Any] | None,
    sprite: dict[str, Any] | None,
) -> dict[str, Any] | None:
    """Canonical pieces -> the ``extensions.agnai`` block, or ``None`` for a character that holds
    nothing only Agnai writes (a structured persona, a sprite, a response schema): a voice or an
    appearance alone comes from RisuAI or Marinara as well, and does not make a card Agnai's."""
    if structured is None and sprite is None and response_schema is None:
        return None
    out: dict[str, Any] = {}
    put(out, "voice", voice_to_agnai(voice)[0])
    out["persona"] = persona_to_agnai(structured, description, personality)
    put(out, "appearance", appearance)
    put(out, "json", response_schema)
    put(out, "sprite", sprite_to_agnai(sprite))
    return out
