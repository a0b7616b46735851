"""sillytavern-persona: SillyTavern personas, from a persona backup or from a whole ``settings.json``.

SillyTavern keeps every persona in two maps keyed by the avatar file id (docs/formats/sillytavern.md#persona---personabody):
``personas`` (``{avatarId: name}``) and ``persona_descriptions`` (``{avatarId: {description,
position, depth, role, lorebook, title, connections?}}``), plus ``default_persona``. The backup file
(``personas_YYYYMMDD.json``) is exactly ``{personas, persona_descriptions, default_persona}``; the
whole ``settings.json`` holds the same maps under ``power_user`` next to everything else the app
stores (which rides in the escrow twin).

One file, many personas — a bundle:

- **Primary entity**: the default persona when ``default_persona`` names one, else the first persona
  of ``personas``. A ``settings.json`` with no persona at all has the *active user* as its primary
  (``username``, ``user_avatar`` and the ``persona_description*`` copies SillyTavern keeps for
  it); an empty backup has an empty placeholder persona.
- **Linked entities** (``knowledgeRefs``, in file order): every other persona, then — for
  ``settings.json`` — the global regex scripts (``extension_settings.regex``) as a regex set.
- The primary's escrow twin holds the whole file; each linked persona's twin (under this codec's
  id, as for any bundle) holds its own descriptor object.

Encoding the primary re-assembles the file from the twin: the personas of the entity set are
written into the two maps (a linked persona that does not resolve keeps the twin's copy; one no
longer linked is removed; an edited one overwrites only what its body changed), and everything else
— ``default_persona``, ``connections``, every other setting — is the twin's, byte for byte.
Encoding a non-primary persona alone, or a persona from another app, writes a persona backup.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from bunzai_codecs.core.codec import Codec, Coverage, EmitContext, body_as
from bunzai_codecs.core.entity import KNOWLEDGE_REFS, CanonicalEntity, Decoded
from bunzai_codecs.core.errors import Malformed
from bunzai_codecs.core.escrow import Twin, facet
from bunzai_codecs.core.overlay import merge3
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.entities.persona import PersonaBody
from bunzai_codecs.formats._shared.wire import MapContext, file_stem, int_text
from bunzai_codecs.formats.sillytavern import _regex_link
from bunzai_codecs.formats.sillytavern._wire import Path, dumps, int_like, none_if_empty
from bunzai_codecs.formats.sillytavern.detect import BACKUP, SETTINGS, shape_of
from bunzai_codecs.formats.tavern.lore import ROLE_INTS, ROLE_NAMES

#: persona description ``position`` number -> canonical ``chatInjection.position``
POSITIONS: dict[int, str] = {
    0: "prompt",
    1: "after_char",
    2: "author_note_top",
    3: "author_note_bottom",
    4: "depth",
    9: "none",
}
POSITION_NUMBERS: dict[str, int] = {v: k for k, v in POSITIONS.items()}


#: SillyTavern's default persona depth
DEFAULT_DEPTH = 2

MEMBER = "member"

#: which persona the primary entity is: one of the maps, the settings' active user, or nothing
LISTED, ACTIVE, PLACEHOLDER = "listed", "active", "none"

_GLOBAL_REGEX = ("extension_settings", "regex")


# -- native -> canonical --------------------------------------------------------------------------


def _read_position(v: Any) -> str:
    n = int_like(v)
    if n is not None:
        return POSITIONS.get(n, str(n))
    return "prompt" if v is None else str(v)


def _write_position(p: str) -> int | str:
    if p in POSITION_NUMBERS:
        return POSITION_NUMBERS[p]
    n = int_text(p)
    return p if n is None else n


def _read_role(v: Any, r: MapContext, at: Path) -> str | None:
    if v is None:
        return None
    n = int_like(v)
    if n is not None and n in ROLE_NAMES:
        return ROLE_NAMES[n]
    r.warn_at(at, f"role {v!r} is not 0, 1 or 2; left out (kept in the twin)")
    return None


def _injection(position: Any, depth: Any, role: Any, r: MapContext, at: tuple[Path, Path, Path]) -> Any:
    out: dict[str, Any] = {"position": _read_position(position)}
    d = r.num(depth, at[1])
    if d is not None:
        out["depth"] = d
    ro = _read_role(role, r, at[2])
    if ro is not None:
        out["role"] = ro
    return out


def persona_to_body(
    avatar: str | None, name: Any, desc: dict[str, Any] | None, r: MapContext, at: Path
) -> dict:
    """One persona (its avatar id, its ``personas`` name, its descriptor) as a canonical body."""
    body: dict[str, Any] = {"name": r.text(name, ("personas", avatar or ""), "")}
    if avatar is not None:
        body["presentation"] = {"imageUrl": avatar}
    if desc is not None:
        body["content"] = r.text(desc.get("description"), (*at, "description"), "")
        title = none_if_empty(r.text(desc.get("title"), (*at, "title")))
        if title is not None:
            body["brief"] = title
        if any(k in desc for k in ("position", "depth", "role")):
            body["chatInjection"] = _injection(
                desc.get("position"),
                desc.get("depth"),
                desc.get("role"),
                r,
                ((*at, "position"), (*at, "depth"), (*at, "role")),
            )
        world = none_if_empty(r.text(desc.get("lorebook"), (*at, "lorebook")))
        if world is not None:
            body["worldName"] = world
    body["attribution"] = {"source": "sillytavern"}
    return body


def active_user_to_body(top: dict[str, Any], pu: dict[str, Any], r: MapContext) -> dict[str, Any]:
    """The active user of a ``settings.json`` with no persona (the app's legacy global copies)."""
    body: dict[str, Any] = {"name": r.text(top.get("username"), ("username",), "")}
    avatar = r.text(top.get("user_avatar"), ("user_avatar",))
    if avatar:
        body["presentation"] = {"imageUrl": avatar}
    body["content"] = r.text(pu.get("persona_description"), ("power_user", "persona_description"), "")
    if "persona_description_position" in pu:
        at = ("power_user",)
        body["chatInjection"] = _injection(
            pu.get("persona_description_position"),
            pu.get("persona_description_depth"),
            pu.get("persona_description_role"),
            r,
            (
                (*at, "persona_description_position"),
                (*at, "persona_description_depth"),
                (*at, "persona_description_role"),
            ),
        )
    world = none_if_empty(
        r.text(pu.get("persona_description_lorebook"), ("power_user", "persona_description_lorebook"))
    )
    if world is not None:
        body["worldName"] = world
    body["attribution"] = {"source": "sillytavern"}
    return body


def maps_of(tree: Any, shape: str, r: MapContext) -> tuple[dict[str, Any], Path]:
    """The object holding ``personas``/``persona_descriptions`` and its path."""
    top = r.obj(tree, ())
    if shape == SETTINGS:
        return r.obj(top.get("power_user"), ("power_user",)), ("power_user",)
    return top, ()


def read_members(
    maps: dict[str, Any], at: Path, r: MapContext
) -> list[tuple[str, Any, dict[str, Any] | None, dict[str, Any]]]:
    """``(avatar, raw name, raw descriptor, canonical body)`` for every persona, in file order."""
    names = r.obj(maps.get("personas", {}), (*at, "personas"))
    descs = r.obj(maps.get("persona_descriptions", {}), (*at, "persona_descriptions"))
    avatars = list(names) + [a for a in descs if a not in names]
    out = []
    for a in avatars:
        dat = (*at, "persona_descriptions", a)
        desc = r.obj(descs[a], dat, "a persona description object") if a in descs else None
        out.append((a, names.get(a), desc, persona_to_body(a, names.get(a), desc, r, dat)))
    return out


# -- canonical -> native ----------------------------------------------------------------------------


def descriptor_to_native(body: PersonaBody) -> dict[str, Any]:
    inj = body.chatInjection
    return {
        "description": body.content,
        "position": _write_position(inj.position) if inj is not None else 0,
        "depth": inj.depth if inj is not None and inj.depth is not None else DEFAULT_DEPTH,
        "role": ROLE_INTS[inj.role] if inj is not None and inj.role is not None else 0,
        "lorebook": body.worldName or "",
        "title": body.brief or "",
    }


def active_user_to_native(body: PersonaBody) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(top-level keys, power_user keys)`` for the active user of a ``settings.json``."""
    top: dict[str, Any] = {"username": body.name}
    if body.presentation.imageUrl is not None:
        top["user_avatar"] = body.presentation.imageUrl
    pu: dict[str, Any] = {"persona_description": body.content}
    inj = body.chatInjection
    if inj is not None:
        pu["persona_description_position"] = _write_position(inj.position)
        if inj.depth is not None:
            pu["persona_description_depth"] = inj.depth
        if inj.role is not None:
            pu["persona_description_role"] = ROLE_INTS[inj.role]
    if body.worldName is not None:
        pu["persona_description_lorebook"] = body.worldName
    return top, pu


def maps_to_native(members: list[tuple[str, PersonaBody]]) -> dict[str, Any]:
    return {
        "personas": {a: b.name for a, b in members},
        "persona_descriptions": {a: descriptor_to_native(b) for a, b in members},
    }


_NOT_ID = re.compile(r"[^A-Za-z0-9]")


def avatar_for(body: PersonaBody, used: set[str]) -> str:
    """A SillyTavern avatar id for a persona: its image file name, else ``<name>.png`` (letters and
    digits only, as the app strips them), made unique among ``used``."""
    url = body.presentation.imageUrl
    cand = ""
    if url and not url.startswith("data:"):
        cand = url.replace("\\", "/").rsplit("/", 1)[-1].split("?", 1)[0]
    if not cand:
        cand = f"{_NOT_ID.sub('', body.name) or 'persona'}.png"
    stem, dot, ext = cand.rpartition(".")
    if not dot:
        stem, ext = cand, ""
    out, n = cand, 2
    while out in used:
        out = f"{stem}-{n}.{ext}" if dot else f"{stem}-{n}"
        n += 1
    used.add(out)
    return out


# -- the codec ----------------------------------------------------------------------------------------


def _global_scripts(tree: Any, r: MapContext) -> list[Any] | None:
    ext = tree.get("extension_settings") if isinstance(tree, dict) else None
    if not isinstance(ext, dict) or ext.get("regex") is None:
        return None
    return r.arr(ext["regex"], _GLOBAL_REGEX)


@dataclass(eq=False)
class PersonaTwin(Twin):
    """A persona file's escrow: ``shape`` (``backup``, ``settings``; ``member`` for a persona of a
    bundle, whose ``raw`` is its description object and ``name`` its listed name); for the primary
    entity its ``slot`` (listed, active or a placeholder), ``avatar`` (its avatar file name) and the
    ``roster`` of ``[entity id, avatar]`` pairs of the bundle's personas."""

    slot: str | None = facet(str)
    avatar: str | None = facet(str)
    roster: list[Any] | None = facet(list)


class SillyTavernPersonaCodec(Codec):
    id = "sillytavern-persona"
    twin_type = PersonaTwin
    coverage = Coverage.of(
        "name",
        "content",
        "brief",
        "chatInjection.position",
        "chatInjection.depth",
        "chatInjection.role",
        "worldName",
        notes=[
            "the avatar id (a file name in SillyTavern's avatars folder) is presentation.imageUrl: a path or "
            "URL is written as its last segment, a data: URL or none as <name>.png, so only a bare file name "
            "is kept",
            "connections (locks to characters and groups) and default_persona stay in escrow",
            "no structured sections, author, version or embedded image",
        ],
    )

    def decode(self, s: Sniff) -> Decoded:
        tree = s.require_json()
        if not isinstance(tree, dict):
            raise Malformed("a persona file must be a JSON object", path="$")
        shape = shape_of(tree)
        if shape is None:
            raise Malformed(
                "no personas/persona_descriptions objects (nor power_user ones)", path="$.personas"
            )
        r = MapContext(lenient=True)
        maps, at = maps_of(tree, shape, r)
        members = read_members(maps, at, r)
        default = maps.get("default_persona")
        first = next((i for i, m in enumerate(members) if m[0] == default), 0 if members else None)

        if first is not None:
            avatar = members[first][0]
            slot, primary_body = LISTED, members[first][3]
        elif shape == SETTINGS:
            avatar, slot = None, ACTIVE
            primary_body = active_user_to_body(tree, maps, r)
        else:
            avatar, slot, primary_body = None, PLACEHOLDER, {"attribution": {"source": "sillytavern"}}

        linked: list[CanonicalEntity] = []
        roster: list[list[str]] = []
        for i, (a, name, desc, body) in enumerate(members):
            if i == first:
                continue
            m = self.entity(s, body, raw=desc, part=("persona", a), shape=MEMBER, avatar=a, name=name)
            linked.append(m)
            roster.append([m.id, a])
        if shape == SETTINGS:
            scripts = _global_scripts(tree, r)
            rx = None
            if scripts is not None:
                rx = _regex_link.decode_scripts(
                    self, s, scripts, _GLOBAL_REGEX, file_stem(s.name) or "settings"
                )
            if rx is not None:
                linked.append(rx)
        primary = self.entity(s, primary_body, raw=tree, shape=shape, slot=slot, avatar=avatar, roster=roster)
        primary.links[KNOWLEDGE_REFS] = [e.id for e in linked]
        primary.warnings.extend(r.warnings)
        return Decoded([primary, *linked])

    def encode(self, entity: CanonicalEntity, ctx: EmitContext) -> bytes:
        twin = entity.twin(self.id)
        shape = twin.shape if twin is not None else None
        if isinstance(twin, PersonaTwin) and shape in (BACKUP, SETTINGS):
            return dumps(self._reassemble(entity, twin, ctx))
        if isinstance(twin, PersonaTwin) and shape == MEMBER:
            return dumps(self._member(entity, twin))
        body = body_as(entity, PersonaBody)
        used: set[str] = set()
        pairs = [(avatar_for(body, used), body)]
        for linked in ctx.refs(entity, "persona"):
            if isinstance(linked.body, PersonaBody):
                pairs.append((avatar_for(linked.body, used), linked.body))
                ctx.embed(linked)
        return dumps({**maps_to_native(pairs), "default_persona": None})

    def _member(self, entity: CanonicalEntity, twin: PersonaTwin) -> dict[str, Any]:
        """A persona decoded from a bundle, written alone as a persona backup."""
        assert isinstance(entity.body, PersonaBody)
        avatar = str(twin.avatar)
        raw_desc = twin.raw
        raw: dict[str, Any] = {"personas": {avatar: twin.name}, "persona_descriptions": {}}
        if raw_desc is not None:
            raw["persona_descriptions"][avatar] = raw_desc
        raw["default_persona"] = None
        old = PersonaBody.model_validate(
            persona_to_body(avatar, twin.name, raw_desc, MapContext(lenient=True), ())
        )
        used: set[str] = set()
        new_avatar = (
            avatar if entity.body.presentation.imageUrl in (None, avatar) else avatar_for(entity.body, used)
        )
        base = maps_to_native([(avatar, old)])
        fresh = maps_to_native([(new_avatar, entity.body)])
        return merge3(raw, base, fresh)

    def _reassemble(self, entity: CanonicalEntity, twin: PersonaTwin, ctx: EmitContext) -> dict[str, Any]:
        """The whole backup or settings file, from its twin and the personas of the entity set."""
        assert isinstance(entity.body, PersonaBody)
        raw, shape = twin.raw, str(twin.shape)
        r = MapContext(lenient=True)
        maps, at = maps_of(raw, shape, r)
        old_members = read_members(maps, at, r)
        old_by_avatar = {a: PersonaBody.model_validate(b) for a, _, _, b in old_members}
        slot = twin.slot
        links = entity.links.get(KNOWLEDGE_REFS)

        # base: what the twin's own personas write as
        base_pairs = [(a, old_by_avatar[a]) for a, _, _, _ in old_members]
        # fresh: the primary, then every linked persona (resolved, else the twin's copy)
        used: set[str] = set()
        fresh_pairs: list[tuple[str, PersonaBody]] = []
        placeholder = PersonaBody.model_validate({"attribution": {"source": "sillytavern"}})
        if slot == LISTED or (slot == PLACEHOLDER and entity.body != placeholder):
            a = twin.avatar
            own = a if isinstance(a, str) and entity.body.presentation.imageUrl in (None, a) else None
            if own is not None:
                used.add(own)
            fresh_pairs.append((own or avatar_for(entity.body, used), entity.body))
        roster = {eid: a for eid, a in twin.roster or []}
        for ref in links or []:
            linked = ctx.linked.get(ref)
            if linked is None:
                a = roster.get(ref)
                if a is not None and a in old_by_avatar and a not in used:
                    used.add(a)
                    fresh_pairs.append((a, old_by_avatar[a]))  # unresolved: keep the twin's copy
                continue
            if linked.kind != "persona" or not isinstance(linked.body, PersonaBody):
                continue
            ltwin = linked.twin(self.id)
            a = ltwin.avatar if isinstance(ltwin, PersonaTwin) and ltwin.shape == MEMBER else None
            if not (isinstance(a, str) and linked.body.presentation.imageUrl in (None, a) and a not in used):
                a = avatar_for(linked.body, used)
            used.add(a)
            fresh_pairs.append((a, linked.body))
            ctx.embed(linked)

        def place(
            tree: dict[str, Any], pairs: list[tuple[str, PersonaBody]], active: PersonaBody | None
        ) -> None:
            inner = maps_to_native(pairs)
            if active is not None:
                top_keys, pu_keys = active_user_to_native(active)
                tree.update(top_keys)
                inner.update(pu_keys)
            if shape == SETTINGS:
                tree["power_user"] = inner
            else:
                tree.update(inner)

        base: dict[str, Any] = {}
        fresh: dict[str, Any] = {}
        if slot == ACTIVE:
            old_active = PersonaBody.model_validate(active_user_to_body(raw, maps, r))
            place(base, base_pairs, old_active)
            place(fresh, fresh_pairs, entity.body)
        else:
            place(base, base_pairs, None)
            place(fresh, fresh_pairs, None)
        if shape == SETTINGS:
            b, f = _regex_link.embedded_scripts(self, entity, ctx, _global_scripts(raw, r))
            if b is not None or f is not None:
                base["extension_settings"] = {} if b is None else {"regex": b}
                fresh["extension_settings"] = {"regex": []} if f is None else {"regex": f}
        return merge3(raw, base, fresh)
