"""``rolecall``: RoleCall characters — Tavern CCv2/CCv3 cards carrying ``data.extensions.rolecall``.

RoleCall writes an ordinary card (JSON, or a PNG ``chara``/``ccv3`` chunk) plus its own bag
(docs/formats/rolecall.md#character-dataextensionsrolecall-rolecalldialect-on-top-of-the-tavern-map). Its own PNG exporter writes the **bare V2 ``data`` object** (no
``{spec, data}`` wrapper) into the ``chara`` chunk; that flat shape is read and written back as it
came, like any other layout the shared mapper knows.

Detection is the Tavern lineage's, by the ``rolecall`` row's mark (``formats/table.py``): 1.0 for a
card whose extensions (``data.extensions`` of a wrapped V2/V3 card, or ``extensions`` of the bare
``data`` object with a string ``name``) hold a ``rolecall`` object whose ``type`` is not
``"persona"`` (that is a ``rolecall-persona``); for a PNG, either card chunk's payload. Only RoleCall
writes that key, so the mark is certain (a Lumiverse-marked card carrying it is RoleCall's).
Everything else scores 0 and is left to ``sillytavern`` (0.9).

Decode/encode are ``TavernCard``'s (``formats/tavern/``: escrow twin, PNG chunk rewriting, embedded book and regex
set) with one more dialect, :class:`RoleCallDialect`, on top of the shared Tavern mapping:

- ``rolecall.alternate_greeting_titles`` (``(string|null)[]`` parallel to ``alternate_greetings``)
  -> ``greetings.alternateGreetings[i].title``;
- ``rolecall.details.prompt_depth_injections[]`` ``{id?, content, depth?, role?, enabled?}`` ->
  ``prompts.depthInjections[]`` with ``origin: "rolecall_details"``, before the ST ``depth_prompt``
  one (depth 4 when absent); each returns to its own home on export;
- ``data.source`` as RoleCall writes it (``[{name}]``) -> ``attribution.source`` (the names);
- asset ``type: "expression"`` (RoleCall's sprites) reads as ``emotion`` (shared rule) and is
  written back as ``expression``.

The rest of the bag (tagline, genre, fandom, ratings, casting-card ``details``, recommendations,
linked payloads...) has no canonical home: it stays in ``body.extensions["rolecall"]`` verbatim, so
a SillyTavern export still carries it. A card written fresh always gets an ``extensions.rolecall``
object (``{}`` at least): that is what makes it a RoleCall card.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bunzai_codecs.core.codec import Coverage
from bunzai_codecs.entities.base import MESSAGE_ROLES
from bunzai_codecs.formats._shared.wire import MapContext, bool_at, num_at, str_at, wrong
from bunzai_codecs.formats.rolecall.detect import ROLECALL
from bunzai_codecs.formats.tavern.card import TavernCard
from bunzai_codecs.formats.tavern.fields import TAVERN_EMBEDDED, TavernDialect
from bunzai_codecs.formats.tavern.lore import map_rows

if TYPE_CHECKING:
    from bunzai_codecs.entities.character import CharacterBody

#: ``origin`` of a depth injection that came from the casting card
DETAILS_ORIGIN = "rolecall_details"
#: how the Tavern coverage notes that RoleCall's dialect lifts begin
_LIFTED_NOTES = ("one depth injection", "greeting titles are not held")


class RoleCallDialect(TavernDialect):
    """``data.extensions.rolecall``: greeting titles, casting-card depth injections, ``[{name}]``
    sources and ``expression`` assets (see the module docstring); the rest of the bag stays in
    ``body.extensions["rolecall"]``."""

    name = ROLECALL
    claims = frozenset({ROLECALL})
    coverage = Coverage.of(
        "greetings.alternateGreetings[].title",
        "prompts.depthInjections[].text",
        "prompts.depthInjections[].depth",
        "prompts.depthInjections[].role",
        "prompts.depthInjections[].origin",
        "prompts.depthInjections[].enabled",
        notes=[
            "several depth injections: every casting-card one (`origin: rolecall_details`) plus one"
            " more, written as the ST `depth_prompt`; further injections of other origins are lost (no"
            " other app bunzai reads gives more than one)",
            "tagline, genre, fandom, content rating, casting-card details and recommendations ride in"
            " `extensions.rolecall` (no canonical home)",
        ],
    )

    def read(self, data: Mapping[str, Any], body: dict[str, Any], ctx: MapContext) -> None:
        raw = self.extension(data, ROLECALL)
        if raw is None:
            return
        path = ("extensions", ROLECALL)
        if not isinstance(raw, dict):
            raise wrong(ctx.at(*path), "an object", raw)
        rest = dict(raw)

        titles = raw.get("alternate_greeting_titles")
        greetings = body["greetings"].get("alternateGreetings")
        if titles is not None and _apply_titles(titles, greetings, ctx, (*path, "alternate_greeting_titles")):
            del rest["alternate_greeting_titles"]

        details = raw.get("details")
        if isinstance(details, dict) and "prompt_depth_injections" in details:
            injections = _read_injections(
                details["prompt_depth_injections"], ctx, (*path, "details", "prompt_depth_injections")
            )
            rest["details"] = {k: v for k, v in details.items() if k != "prompt_depth_injections"}
            prompts = body["prompts"]
            prompts["depthInjections"] = [*injections, *(prompts.get("depthInjections") or ())]
        elif details is not None and not isinstance(details, dict):
            raise wrong(ctx.at(*path, "details"), "an object", details)

        source = data.get("source")
        names = _source_names(source)
        if names is not None:
            body["attribution"]["source"] = names
            where = ctx.at("source")
            ctx.warnings[:] = [w for w in ctx.warnings if not w.startswith(where + ":")]

        body["extensions"][ROLECALL] = rest

    def write(self, body: CharacterBody, data: dict[str, Any]) -> None:
        ext = data.setdefault("extensions", {})
        bag = body.extensions.get(ROLECALL)
        rc: dict[str, Any] = dict(bag) if isinstance(bag, dict) else {}

        alts = body.greetings.alternateGreetings
        if alts and any(g.title is not None for g in alts):
            rc["alternate_greeting_titles"] = [g.title for g in alts]

        injections = body.prompts.depthInjections or []
        mine = [i for i in injections if i.origin == DETAILS_ORIGIN]
        if mine:
            details = rc.get("details")
            d = dict(details) if isinstance(details, dict) else {}
            rows = []
            for i in mine:
                row: dict[str, Any] = {"content": i.text, "depth": i.depth}
                if i.role is not None:
                    row["role"] = i.role
                if i.enabled is not None:
                    row["enabled"] = i.enabled
                rows.append(row)
            d["prompt_depth_injections"] = rows
            rc["details"] = d
        if injections and not any(i.origin in (None, "depth_prompt") for i in injections):
            ext.pop("depth_prompt", None)  # the shared writer's fallback took a casting-card one

        if body.attribution.source is not None:
            data["source"] = [{"name": s} for s in body.attribution.source]
        assets = data.get("assets")
        if isinstance(assets, list):
            for a in assets:
                if isinstance(a, dict) and a.get("type") == "emotion":
                    a["type"] = "expression"  # RoleCall's sprite type
        ext[ROLECALL] = rc


def _apply_titles(titles: Any, greetings: Any, ctx: MapContext, path: tuple[str, ...]) -> bool:
    """Put the titles on the greetings; False (the key stays in the bag) when they do not fit."""
    if not isinstance(titles, list):
        raise wrong(ctx.at(*path), "an array of titles", titles)
    for i, t in enumerate(titles):
        if t is not None and not isinstance(t, str):
            raise wrong(ctx.at(*path, i), "a string or null", t)
    if not isinstance(greetings, list) or len(titles) > len(greetings):
        if titles:
            ctx.warn(f"{ctx.at(*path)}: more titles than alternate greetings; kept in extensions.rolecall")
        return False
    for g, t in zip(greetings, titles, strict=False):
        if t is not None:
            g["title"] = t
    return True


def _read_injections(v: Any, ctx: MapContext, path: tuple[str, ...]) -> list[dict[str, Any]]:
    return map_rows(v, ctx, path, "an array of depth injections", "a depth injection object", _injection)


def _injection(row: dict[str, Any], _i: int, ctx: MapContext) -> dict[str, Any]:
    role = row.get("role")
    if role is not None and (not isinstance(role, str) or role not in MESSAGE_ROLES):
        ctx.warn(f"{ctx.at('role')}: unknown role {role!r}; read as unset")
        role = None
    depth = num_at(row.get("depth"), ctx, "depth")
    return {
        "text": str_at(row.get("content"), ctx, "content") or "",
        "depth": 4 if depth is None else depth,
        "role": role,
        "origin": DETAILS_ORIGIN,
        "enabled": bool_at(row.get("enabled"), ctx, "enabled"),
    }


def _source_names(v: Any) -> list[str] | None:
    """RoleCall's ``[{name}]`` source list as names; ``None`` for any other shape (the shared mapper
    already read a string list)."""
    if not isinstance(v, list) or not v:
        return None
    names = []
    for x in v:
        if not isinstance(x, dict) or x.keys() != {"name"} or not isinstance(x["name"], str):
            return None
        names.append(x["name"])
    return names


class RoleCallCard(TavernCard):
    """RoleCall characters: Tavern cards with ``data.extensions.rolecall`` (JSON, PNG, flat PNG)."""

    id = "rolecall"
    dialect = RoleCallDialect()
    coverage = Coverage(
        TavernCard.coverage.paths | RoleCallDialect.coverage.paths,
        # the Tavern notes this dialect lifts (it holds titles and several injections) are left out
        tuple(n for n in TavernCard.coverage.notes if not n.startswith(_LIFTED_NOTES))
        + RoleCallDialect.coverage.notes
        + (
            "a linked lorebook is embedded as the card's character_book and linked regex sets as its"
            " extensions.regex_scripts, holding what those hold, not what a RoleCall lorebook or regex"
            " file holds",
        ),
    )
    embedded_coverage = TAVERN_EMBEDDED


__all__ = [
    "DETAILS_ORIGIN",
    "ROLECALL",
    "RoleCallCard",
    "RoleCallDialect",
]
