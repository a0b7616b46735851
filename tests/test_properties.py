"""Property tests for every codec: generated canonical bodies survive a round trip through the format.

For each codec and each body drawn by ``hypothesis_strategies.entity(kind)`` (a fresh entity: no
twin, so the codec writes a clean native file):

- ``decode(encode(e))`` keeps ``e``'s body on every path the codec's coverage declares, except the
  documented lossy points listed in ``LOSSY`` (each with the reason, which the codec's coverage
  notes or docs/formats/ state) and the normalisations in ``NORMALISE`` (a format that stores run
  order as list order, a set as flags);
- ``encode`` is deterministic: the same entity gives the same bytes twice in one process, and the
  same bytes in a fresh process with another hash seed (``test_encode_is_deterministic_across_processes``);
- ``detect`` never raises on arbitrary bytes (tests/core/test_registry.py) nor on every codec's
  well-formed output (here).

Example counts are modest so the suite stays fast (``HYPOTHESIS_PROFILE=thorough`` for more).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_strategies import entity

from bunzai_codecs.core import registry
from bunzai_codecs.core.codec import Codec, EmitContext, normalize_path
from bunzai_codecs.core.diff import Change, diff
from bunzai_codecs.core.entity import ENTITY_KINDS, CanonicalEntity
from bunzai_codecs.core.sniff import Sniff
from bunzai_codecs.fidelity import media_changes
from bunzai_codecs.formats.novelai.preset import can_hold
from bunzai_codecs.formats.sillytavern._flat import KOBOLD_SAMPLERS, NOVEL_SAMPLERS, order_loses

# CI runs the same examples every time (derandomize): a rare lossy point nobody listed fails the
# thorough profile on someone's machine, not a random CI run
settings.register_profile(
    "default-properties",
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough", max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
PROFILE = "thorough" if os.environ.get("HYPOTHESIS_PROFILE") == "thorough" else "default-properties"

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Lossy:
    """A documented lossy point: changes of ``kinds`` at ``path`` (a coverage pattern: it covers
    everything below it) are what the format does, for the reason given."""

    path: str
    kinds: tuple[str, ...]
    why: str
    #: only for changes this holds for (the value before, the value after)
    when: Callable[[Any, Any], bool] | None = None

    def allows(self, change: Change) -> bool:
        p = normalize_path(change.path)
        return (
            change.kind in self.kinds
            and (p == self.path or p.startswith(self.path + ".") or p.startswith(self.path + "["))
            and (self.when is None or self.when(change.before, change.after))
        )


ADDED, REMOVED, CHANGED = ("added",), ("removed",), ("changed",)
ANY = ("added", "removed", "changed")
NAME_IS_FILE = Lossy("name", ANY, "the name is the file name (the test writes x.<ext>)")
ENTRY_N = Lossy(
    "entries[].title",
    ADDED + CHANGED,
    'an entry without a title (or a blank one) is written as "Entry N" (entities/lorebook.py)',
    lambda before, after: not (before or "").strip(),
)


def _has(*chars: str) -> Callable[[Any, Any], bool]:
    return lambda before, after: isinstance(before, str) and any(c in before for c in chars)


def _is_data_uri(before: Any, after: Any) -> bool:
    return isinstance(before, str) and before.startswith("data:")


#: what every format that stores media by reference does
MEDIA = [
    Lossy(
        "media.portrait.mime", ADDED, "the MIME type is read from the ref (data URI, file suffix) when unset"
    ),
    Lossy("media.assets[].mime", ADDED, "(same)"),
]
#: CCv3 assets (tavern.py): name "main" is primary; an unnamed primary asset is written as main
CCV3_MEDIA = [
    *MEDIA,
    Lossy("media.portrait.primary", REMOVED, "primary is the asset name main: other names cannot be primary"),
    Lossy("media.assets[].primary", REMOVED, "(same)"),
    Lossy("media.portrait.name", ADDED, "a primary asset without a name is written as main"),
    Lossy("media.assets[].name", ADDED, "(same)"),
]

NEUTRAL = "a fresh export writes every key: one the body lacks reads back as the app's neutral value"

#: codec id -> the lossy points its coverage notes document
LOSSY: dict[str, list[Lossy]] = {
    "agnai": [
        Lossy("media.portrait.mime", ANY, "Agnai stores the avatar URL only: the MIME type is read from it"),
        Lossy(
            "persona.structured", ADDED, "every Agnai character has a persona kind: absent is written as text"
        ),
        Lossy(
            "persona.personality",
            ANY,
            "identity.description and the personality are one text persona, joined by a newline",
        ),
        Lossy("media.portrait.role", CHANGED + ADDED, "the avatar is the portrait"),
    ],
    "agnai-lorebook": [ENTRY_N],
    "backyard": [
        Lossy(
            "identity.name",
            ADDED,
            "an empty aiDisplayName shows aiName: an empty name reads back as the nickname",
        ),
        Lossy("identity.nickname", REMOVED, "(same) the nickname becomes the name"),
    ],
    "byaf": [
        Lossy(
            "identity.name",
            ADDED,
            "an empty displayName shows name: an empty name reads back as the nickname",
        ),
        Lossy("identity.nickname", REMOVED, "(same) the nickname becomes the name"),
        Lossy(
            "examples.exampleMessages",
            CHANGED,
            "one example message per <START> block: text before the first marker gains one",
        ),
        Lossy(
            "examples.exampleMessages",
            REMOVED,
            "a blank example dialogue is no example message",
            lambda before, after: not (before or "").strip(),
        ),
    ],
    "marinara-character": [
        *CCV3_MEDIA,
        Lossy("media.assets[].role", CHANGED, "the envelope's sprites are emotions"),
        Lossy("media.portrait.name", REMOVED, "the envelope's avatar is a bare data URL, without a name"),
        Lossy("media.assets[].name", ADDED, "a sprite's file name: an unnamed one is sprite-N"),
        Lossy("media.portrait.mime", CHANGED, "the MIME type of a data URL is the one it states"),
        Lossy("media.assets[].mime", CHANGED, "(same)"),
    ],
    "marinara-lorebook": [
        ENTRY_N,
        Lossy(
            "categories[].enabled", ADDED, "a Marinara folder is always on or off: absent is written as on"
        ),
        Lossy(
            "entries[].caseSensitive",
            ADDED,
            "per-entry columns with no 'book setting' value: absent is written as false",
        ),
        Lossy("entries[].matchWholeWords", ADDED, "(same)"),
        Lossy("entries[].selective", ADDED, "(same)"),
        Lossy(
            "entries[].position",
            CHANGED,
            "positions Marinara lacks (author's note, examples) are written as after the character",
        ),
        Lossy(
            "entries[].triggers[].isRegex",
            CHANGED,
            "useRegex is per entry: one regex key makes every key a regex",
        ),
        Lossy("entries[].secondaryTriggers[].isRegex", CHANGED, "(same)"),
    ],
    "marinara-persona": [
        *MEDIA,
        Lossy(
            "attribution.source",
            ADDED + CHANGED,
            "the source app is stamped by the codec (entities/persona.py)",
        ),
        Lossy("media.portrait", REMOVED, "media.portrait is written only as a data URL"),
        Lossy("media.portrait.role", CHANGED, "the avatar is the portrait"),
        Lossy("media.portrait.mime", CHANGED, "the MIME type of a data URL is the one it states"),
    ],
    "marinara-preset": [
        Lossy("behavior.wrapFormat", ADDED, "Marinara always stores a wrap format: absent is written as xml"),
        Lossy(
            "groups[].enabled", ADDED, "group columns are always stored: absent is written as the app default"
        ),
        Lossy("groups[].order", ADDED, "(same)"),
        Lossy(
            "choices[].separator",
            ADDED,
            "choice columns are always stored: absent is written as the app default",
        ),
        Lossy("choices[].randomPick", ADDED, "(same)"),
        Lossy("choices[].sortOrder", ADDED, "(same)"),
        Lossy("choices[].extras", ADDED, "(same: displayMode, optionSort)"),
        Lossy(
            "choices[].type", CHANGED + ADDED, "choice types other than one/many are written as single-select"
        ),
        Lossy(
            "choices[].options[].value", ADDED, "an option's value is stored: absent is written as its label"
        ),
        Lossy(
            "prompts[].role", ADDED, "prompt columns are always stored: absent is written as the app default"
        ),
        Lossy("prompts[].forbidOverrides", ADDED, "(same)"),
        Lossy("prompts[].injectionDepth", ADDED, "(same)"),
        Lossy("prompts[].injectionOrder", ADDED, "(same)"),
        Lossy("prompts[].wrapInXml", ADDED, "(same)"),
    ],
    "marinara-regex": [
        NAME_IS_FILE,
        Lossy("rules[].phases", ANY, "phases other than input/output are dropped"),
        Lossy("rules[].targets", ANY, "targets absent is written as applyMode both; one applyMode per rule"),
    ],
    "marinara-story-bundle": [
        Lossy("lorebookType", ADDED + CHANGED, "a story bundle is always of type story_bundle"),
    ],
    "kobold-save": [
        NAME_IS_FILE,
        ENTRY_N,
        Lossy("entries[].id", CHANGED, "a save's world info entries have no id: an entry's id is its index"),
        Lossy(
            "entries[].selectiveLogic",
            CHANGED,
            "KoboldAI holds and_any (keysecondary) and not_any (Lite's keyanti, which needs keys) only",
            lambda before, after: before != "and_any",
        ),
        Lossy(
            "entries[].probability",
            CHANGED,
            "Lite reads a probability of 0 as always: one below 1 is written as 1",
            lambda before, after: isinstance(before, int | float) and before < 1,
        ),
    ],
    # read-only: it writes no fresh entity (no pair below); its tests edit its samples instead
    "novelai-story": [],
    "novelai-lorebook": [
        Lossy(
            "categories[].enabled", ADDED, "a NovelAI category is always on or off: absent is written as on"
        ),
    ],
    "risu": [
        *CCV3_MEDIA,
        Lossy("media.assets[].name", ADDED, "every charx asset file has a name: an unnamed one is asset_N"),
        Lossy(
            "media.assets[].ref",
            CHANGED,
            "a data: asset is written into the archive as embeded://",
            _is_data_uri,
        ),
        Lossy("media.portrait.ref", CHANGED, "(same)", _is_data_uri),
        Lossy("media.portrait.mime", CHANGED, "an archived asset's MIME type is sniffed from its bytes"),
        Lossy("media.assets[].mime", CHANGED, "(same)"),
        Lossy("settings.risu", ADDED, "Risu writes every display toggle: absent is written as off / none"),
        Lossy("behavior.privileged", ADDED, "lowLevelAccess is always written: absent is written as false"),
        Lossy("persona.voice", REMOVED, "only a VITS voice has a place in a Risu card"),
    ],
    "risu-lorebook": [
        ENTRY_N,
        Lossy(
            "categories[].id",
            CHANGED,
            "a Risu folder key is '\\uf000folder:' + id: an id without the prefix gains it",
        ),
        Lossy("entries[].categoryId", CHANGED, "(same)"),
        Lossy(
            "entries[].id",
            CHANGED,
            "rows have no id of their own: an all-digit id is taken for the row index and not written",
            lambda before, after: isinstance(before, str) and before.isdigit(),
        ),
        Lossy("entries[].selective", ADDED, "selective is always written: absent is written as false"),
        Lossy("entries[].extensions", ADDED, "risu_case_sensitive is written beside an entry's extensions"),
        Lossy(
            "entries[].triggers[].isRegex",
            CHANGED,
            "useRegex is per row: one regex key makes every key a regex",
        ),
        Lossy("entries[].secondaryTriggers[].isRegex", CHANGED, "(same)"),
        Lossy(
            "entries[].triggers[].probability", ANY, "a Risu key is a plain string: no per-key probability"
        ),
        Lossy("entries[].secondaryTriggers[].probability", ANY, "(same)"),
        Lossy("entries[].triggers[].flags", REMOVED, "(same): no per-key flags"),
        Lossy("entries[].secondaryTriggers[].flags", REMOVED, "(same)"),
    ],
    "risu-persona": [
        Lossy(
            "attribution.source",
            ADDED + CHANGED,
            "the source app is stamped by the codec (entities/persona.py)",
        ),
        Lossy("media.portrait", ANY, "the persona image is the PNG itself"),
    ],
    "risu-preset": [
        Lossy("prompts[].id", CHANGED, "a Risu prompt's id is its index"),
        Lossy("prompts[].role", ADDED, "every Risu prompt has a role: absent is written as system"),
        Lossy("prompts[].extras", ADDED, "type2 is always written: absent is written as normal"),
        Lossy("choices[].key", ADDED + CHANGED, "a toggle's key is its id when it has no key"),
        Lossy("choices[].type", CHANGED, "a multi-select choice becomes a select"),
        Lossy(
            "apiOptions.reasoningEffort",
            REMOVED,
            "reasoningEffort keeps minimal/low/medium/high only",
            lambda before, after: before not in ("minimal", "low", "medium", "high"),
        ),
    ],
    "risu-module": [
        Lossy("rules[].id", CHANGED, "a Risu rule's id is its index"),
        Lossy("rules[].useFlags", ADDED, "ableFlag is always written"),
        Lossy("rules[].phases", ANY, "one phase per rule (Risu type)"),
    ],
    "risu-regex": [
        NAME_IS_FILE,
        Lossy("description", REMOVED, "name and description exist only in a module"),
        Lossy("rules[].id", CHANGED, "a Risu rule's id is its index"),
        Lossy("rules[].useFlags", ADDED, "ableFlag is always written"),
        Lossy("rules[].phases", ANY, "one phase per rule (Risu type)"),
    ],
    "sillytavern": CCV3_MEDIA,
    "sillytavern-lorebook": [
        NAME_IS_FILE,
        ENTRY_N,
        Lossy("entries[].id", CHANGED, "a numeric entry id is kept as the uid; other ids are renumbered"),
    ],
    "sillytavern-persona": [
        Lossy("presentation.imageUrl", ADDED, "a persona without an avatar id is named <name>.png"),
        Lossy(
            "presentation.imageUrl",
            CHANGED,
            "the avatar id is a file name: a URL's last path segment without its query",
            _has("/", "\\", "?"),
        ),
        Lossy("chatInjection.role", ADDED, "ST stores the depth role: absent is written as system"),
        Lossy("chatInjection.depth", ADDED, "ST stores the depth: absent is written as 2"),
    ],
    "sillytavern-preset": [
        NAME_IS_FILE,
        Lossy(
            "prompts[].systemPrompt",
            ADDED,
            "ST stores system_prompt on every prompt: absent is written as false",
        ),
    ],
    "sillytavern-regex": [
        NAME_IS_FILE,
        Lossy(
            "rules[].flags",
            REMOVED,
            "an empty pattern is written as an empty findRegex (no regex): its flags go",
        ),
    ],
    "chub-lorebook": [
        ENTRY_N,
        Lossy(
            "entries[].comment",
            REMOVED,
            "an entry's name is its title: an untitled entry's comment reads as its title",
        ),
        Lossy("entries[].triggers[].probability", ANY, "per-trigger probability is not held"),
        Lossy("entries[].secondaryTriggers[].probability", ANY, "(same)"),
    ],
    "lumiverse": [
        *CCV3_MEDIA,
        Lossy("media.assets[].ref", CHANGED, "a data: asset is stored as a zip member", _is_data_uri),
    ],
    "lumiverse-persona": [
        Lossy(
            "attribution.source",
            ADDED + CHANGED,
            "the source app is stamped by the codec (entities/persona.py)",
        ),
    ],
    "lumiverse-preset": [
        Lossy("prompts[].role", ADDED, "every block has a role: absent is written as system"),
        Lossy("prompts[].forbidOverrides", ADDED, "isLocked is always written"),
        Lossy("prompts[].injectionDepth", ADDED, "depth is always written: absent is 4"),
        Lossy("prompts[].extras", ADDED, "a block's position is always written (kept in extras)"),
    ],
    "lumiverse-regex": [
        NAME_IS_FILE,
        Lossy(
            "rules[].runOnEdit",
            ADDED,
            "Lumiverse stores every rule flag: absent is written as the app default",
        ),
        Lossy("rules[].substituteFind", ADDED, "(same)"),
        Lossy("rules[].targets", ADDED, "a rule without targets is written with target response"),
    ],
    "rolecall": [
        *CCV3_MEDIA,
        Lossy("prompts.depthInjections[].enabled", REMOVED, "the ST depth_prompt has no switch"),
    ],
    "rolecall-lorebook": [
        ENTRY_N,
        Lossy(
            "entries[].ignoreBudget",
            ADDED,
            "RoleCall stores every entry column: absent is written as the app default",
        ),
        Lossy("entries[].cooldown", ADDED, "(same)"),
        Lossy("entries[].groupWeight", ADDED, "(same)"),
        Lossy("entries[].sticky", ADDED, "(same)"),
        Lossy("entries[].delay", ADDED, "(same)"),
    ],
    "rolecall-persona": [
        Lossy(
            "attribution.source",
            ADDED + CHANGED,
            "the source app is stamped by the codec (entities/persona.py)",
        ),
        Lossy(
            "attribution.version",
            REMOVED,
            "a fresh export is RoleCall's persona card: no version (rcpersona files keep it)",
        ),
    ],
    "rolecall-preset": [
        Lossy(
            "prompts[].systemPrompt",
            ADDED,
            "ST stores system_prompt on every prompt: absent is written as false",
        ),
    ],
    # SillyTavern's text-completion presets and templates, NovelAI's preset: a fresh export writes
    # every key, a value the body lacks as the app's neutral setting (formats/sillytavern/_flat.py)
    "sillytavern-textgen": [Lossy("samplers", ADDED, NEUTRAL)],
    "sillytavern-kobold": [Lossy("samplers", ADDED, NEUTRAL)],
    "sillytavern-novel": [Lossy("samplers", ADDED, NEUTRAL)],
    "sillytavern-instruct": [Lossy("instruct", ADDED, NEUTRAL)],
    "sillytavern-context": [Lossy("context", ADDED, NEUTRAL)],
    "sillytavern-sysprompt": [],
    "sillytavern-reasoning": [],
    "sillytavern-master": [
        Lossy("samplers", ADDED, NEUTRAL + " (each template the body holds is a whole section)"),
        Lossy("instruct", ADDED, "(same)"),
        Lossy("context", ADDED, "(same)"),
    ],
    "novelai-preset": [Lossy("samplers", ADDED, NEUTRAL)],
    "rolecall-regex": [
        Lossy(
            "rules[].runOnEdit",
            ADDED,
            "RoleCall stores every rule flag: absent is written as the app default",
        ),
    ],
    "voxta": [],
    "textgen-webui": [],
    "textgen-webui-preset": [Lossy("samplers", ADDED, NEUTRAL)],
    "textgen-webui-instruct": [
        Lossy(
            "instruct",
            ADDED,
            "the older keys hold the four turn sequences in one turn_template: one the body lacks reads "
            "back as empty (and the Jinja template key is written empty when the body has neither)",
        )
    ],
    "card-folder": [],
}


def _sort_rules(body: dict[str, Any]) -> dict[str, Any]:
    rules = sorted(body.get("rules", []), key=lambda r: r.get("sortOrder", 0))  # stable
    return {**body, "rules": [{**r, "sortOrder": i} for i, r in enumerate(rules)]}


def _st_placements(body: dict[str, Any]) -> dict[str, Any]:
    rules = []
    for r in body.get("rules", []):
        phases: list[str] = []
        for ph in r.get("phases", []):
            for p in ("input", "output") if ph == "display" else () if ph == "request" else (ph,):
                if p not in phases:
                    phases.append(p)
        targets = set(r.get("targets") or ())
        if "display" in r.get("phases", []):
            targets.add("display")
        rules.append({**r, "phases": phases, "targets": sorted(targets) or None})
    return {**body, "rules": rules}


def _one_depth_injection(body: dict[str, Any]) -> dict[str, Any]:
    injections = body.get("prompts", {}).get("depthInjections")
    if not injections:
        return body
    pick = next((i for i in injections if i.get("origin") in (None, "depth_prompt")), injections[0])
    keep = [{**pick, "origin": "depth_prompt"}] if pick.get("text") else None
    return {**body, "prompts": {**body["prompts"], "depthInjections": keep}}


def _ccv3_portrait(body: dict[str, Any]) -> dict[str, Any]:
    media = body.get("media", {})
    icons = ([media["portrait"]] if media.get("portrait") else []) + list(media.get("assets") or [])

    def main(a: dict[str, Any]) -> bool:
        # written as name "main" when unnamed and primary; only that name marks the main icon
        return a.get("name") == "main" or (a.get("name") is None and bool(a.get("primary")))

    at = -1
    for i, a in enumerate(icons):
        if a["role"] == "portrait" and (at < 0 or (main(a) and not main(icons[at]))):
            at = i
    if at < 0:
        return {**body, "media": {**media, "portrait": None, "assets": icons or None}}
    portrait = icons.pop(at)
    return {**body, "media": {**media, "portrait": portrait, "assets": icons or None}}


def _marinara_media(body: dict[str, Any]) -> dict[str, Any]:
    media = body.get("media", {})
    portrait = media.get("portrait")
    if portrait is not None and not portrait["ref"].startswith("data:"):
        portrait = None
    assets = [a for a in media.get("assets") or [] if a["ref"].startswith("data:")]
    return {**body, "media": {**media, "portrait": portrait, "assets": assets or None}}


def _agnai_persona(body: dict[str, Any]) -> dict[str, Any]:
    persona = body.get("persona", {})
    if persona.get("structured") is None and (
        body["media"].get("sprite") is not None or body["settings"].get("responseSchema") is not None
    ):
        return {**body, "persona": {**persona, "structured": {"kind": "text"}}}
    return body


def _choice_defaults_need_a_key(body: dict[str, Any]) -> dict[str, Any]:
    choices = [
        c if c.get("key") else {k: v for k, v in c.items() if k != "default"} for c in body.get("choices", [])
    ]
    return {**body, "choices": choices}


#: the marker identifiers SillyTavern's prompt manager has
ST_MARKERS = frozenset(
    {
        "chatHistory",
        "worldInfoBefore",
        "worldInfoAfter",
        "dialogueExamples",
        "charDescription",
        "charPersonality",
        "scenario",
        "personaDescription",
    }
)


def _st_markers(body: dict[str, Any]) -> dict[str, Any]:
    prompts = []
    for p in body.get("prompts", []):
        if p.get("marker"):
            slot = p.get("markerSlot")
            # a known slot is the identifier; any other slot cannot be written: the id stays, and
            # reads back as the slot
            p = (
                {**p, "id": slot, "placement": "relative"}
                if slot in ST_MARKERS
                else {**p, "markerSlot": p["id"], "placement": "relative"}
            )
        prompts.append(p)
    return {**body, "prompts": prompts}


ST_SCAN_SOURCES = frozenset(
    {
        "persona_description",
        "character_description",
        "character_personality",
        "character_depth_prompt",
        "character_scenario",
        "creator_notes",
    }
)


def _st_scan_sources(body: dict[str, Any]) -> dict[str, Any]:
    entries = []
    for e in body.get("entries", []):
        if e.get("scanSources") is not None:
            e = {**e, "scanSources": [x for x in e["scanSources"] if x in ST_SCAN_SOURCES]}
        entries.append(e)
    return {**body, "entries": entries}


def _risu_toggles(body: dict[str, Any]) -> dict[str, Any]:
    return {**body, "choices": [c for c in body.get("choices", []) if c.get("label")]}


def _risu_markers_have_no_text(body: dict[str, Any]) -> dict[str, Any]:
    return {
        **body,
        "prompts": [{**p, "content": ""} if p.get("marker") else p for p in body.get("prompts", [])],
    }


_SETS = ("phases", "targets", "scanSources", "generationTriggers", "injectionTrigger")


def _sets(tree: Any) -> Any:
    """Lists the model treats as sets (phases, targets, scan sources...), sorted: their order means nothing."""
    if isinstance(tree, dict):
        return {k: sorted(v) if k in _SETS and isinstance(v, list) else _sets(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_sets(v) for v in tree]
    return tree


TAVERN = [
    ("one depth injection: the first depth_prompt one (tavern.py)", _one_depth_injection),
    ("the icon named main, else the first icon, is the portrait (tavern.py)", _ccv3_portrait),
]


def _scan_sources_except(*dropped: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def fn(body: dict[str, Any]) -> dict[str, Any]:
        entries = []
        for e in body.get("entries", []):
            if e.get("scanSources") is not None:
                e = {**e, "scanSources": [x for x in e["scanSources"] if x not in dropped]}
            entries.append(e)
        return {**body, "entries": entries}

    return fn


NOT_NAME_OR_TAGS = _scan_sources_except("character_name", "character_tags", "persona_tags")


def _lumiverse_markers(body: dict[str, Any]) -> dict[str, Any]:
    prompts = []
    for p in body.get("prompts", []):
        if p.get("marker") and p.get("markerSlot") != "chatHistory":
            p = {k: v for k, v in p.items() if k != "markerSlot"} | {"marker": False}
        prompts.append(p)
    return {**body, "prompts": prompts}


def _compile_empty_content(body: dict[str, Any]) -> dict[str, Any]:
    from bunzai_codecs.formats.rolecall.persona import compile_sections

    if body.get("content"):
        return body
    return {**body, "content": compile_sections(body.get("sections", {}))}


def _fold_appearance(body: dict[str, Any]) -> dict[str, Any]:
    sections = body.get("sections", {})
    appearance = sections.get("appearance")
    if not appearance:
        return body
    content = body.get("content", "")
    if appearance not in content:
        content = "\n\n".join(p for p in (content, f"Appearance: {appearance}") if p)
    return {**body, "content": content, "sections": {**sections, "appearance": None}}


#: codec id -> [(why, how a body is normalised before comparing)]: applied to the generated body
#: and to the decoded one alike, so a rule must leave the codec's own output as it is
NORMALISE: dict[str, list[tuple[str, Callable[[dict[str, Any]], dict[str, Any]]]]] = {
    "sillytavern": [
        *TAVERN,
        ("extensions.agnai carries a text persona beside a sprite or schema", _agnai_persona),
    ],
    "risu": TAVERN,
    "marinara-character": [
        *TAVERN,
        ("the avatar and sprites are data URLs: media with another ref is not written", _marinara_media),
    ],
    "sillytavern-regex": [
        ("sortOrder is the array order: rules are written in run order", _sort_rules),
        ("display is written as placements 1+2 with markdownOnly; request has no placement", _st_placements),
    ],
    "risu-regex": [("sortOrder is the array order: rules are written in run order", _sort_rules)],
    "risu-module": [("sortOrder is the array order: rules are written in run order", _sort_rules)],
    "risu-preset": [
        ("a marker prompt (chat, lorebook...) has no text of its own", _risu_markers_have_no_text),
        ("a toggle line without a label is layout, not a choice", _risu_toggles),
    ],
    "sillytavern-lorebook": [("scanSources: only the six SillyTavern match* sources", _st_scan_sources)],
    "chub-lorebook": [
        ("scanSources character_name, character_tags and persona_tags are not held", NOT_NAME_OR_TAGS)
    ],
    "rolecall-lorebook": [("(same)", NOT_NAME_OR_TAGS)],
    "lumiverse": [
        *TAVERN,
        ("extensions.agnai carries a text persona beside a sprite or schema", _agnai_persona),
    ],
    "rolecall": [
        *TAVERN,
        ("extensions.agnai carries a text persona beside a sprite or schema", _agnai_persona),
    ],
    "lumiverse-preset": [
        ("one marker slot (chat history): other markers are plain blocks", _lumiverse_markers)
    ],
    "rolecall-preset": [
        ("a marker is named by its slot and placed in list order; ST has eight marker slots", _st_markers)
    ],
    "rolecall-persona": [
        ("an empty content is compiled from the sections on read (RoleCall's rule)", _compile_empty_content),
        ("a persona card folds the appearance into the description", _fold_appearance),
    ],
    "marinara-preset": [
        (
            "defaultChoices is keyed by variable name: a keyless choice has no default",
            _choice_defaults_need_a_key,
        )
    ],
    "sillytavern-preset": [
        ("a marker is named by its slot and placed in list order; ST has eight marker slots", _st_markers)
    ],
}


def _not_kobold_groups(body: dict[str, Any]) -> bool:
    """Categories KoboldAI Lite cannot list as they are: its groups are the names entries carry, so
    only distinct, non-blank names each used by an entry, in the order entries first use them,
    come back the same (no generated id is a client folder's integer uid)."""
    cats = body.get("categories") or []
    if not cats:
        return False
    names = {c["id"]: c.get("name") or "" for c in cats}
    used: list[str] = []
    for e in body.get("entries", []):
        name = names.get(e.get("categoryId"))
        if name is not None and name not in used:
            used.append(name)
    return [c.get("name") or "" for c in cats] != used or "" in used


def _toggle_text_breaks_the_line(body: dict[str, Any]) -> bool:
    texts = []
    for c in body.get("choices", []):
        texts += [c.get("key") or c["id"], c.get("label", "")] + [
            o.get("label", "") for o in c.get("options", [])
        ]
    return any(ch in t for t in texts for ch in "=,")


ORDER_LOST = "a sampler order naming a sampler the app has no id for: it is left out of the order"


def _orders(body: dict[str, Any]) -> list[Any]:
    s = body.get("samplers", {})
    return [*(s.get("samplerOrder") or []), *(s.get("disabledSamplers") or [])]


def _order_lacks(ids: dict[int, str]) -> Callable[[dict[str, Any]], bool]:
    lacks = order_loses(ids)
    return lambda body: lacks(_orders(body))


#: codec id -> [(why, predicate)]: bodies the format cannot express by design. They are still
#: encoded and decoded (no crash, a readable file), but not compared.
UNREPRESENTABLE: dict[str, list[tuple[str, Callable[[dict[str, Any]], bool]]]] = {
    "risu-lorebook": [
        (
            "a row's keys are one comma-separated string: a key holding a comma is split",
            lambda body: any(
                "," in t["text"]
                for e in body.get("entries", [])
                for t in (e.get("triggers") or []) + (e.get("secondaryTriggers") or [])
            ),
        )
    ],
    "risu-preset": [
        (
            "a toggle is one `key=Label=type=opt1,opt2` line: '=' and ',' in its texts split it",
            _toggle_text_breaks_the_line,
        )
    ],
    "sillytavern-textgen": [(ORDER_LOST, _order_lacks(KOBOLD_SAMPLERS))],
    "sillytavern-kobold": [(ORDER_LOST, _order_lacks(KOBOLD_SAMPLERS))],
    "sillytavern-master": [(ORDER_LOST, _order_lacks(KOBOLD_SAMPLERS))],
    "sillytavern-novel": [
        (ORDER_LOST, _order_lacks(NOVEL_SAMPLERS)),
        (
            "the order lists the samplers switched on only",
            lambda b: bool(b.get("samplers", {}).get("disabledSamplers")),
        ),
    ],
    "novelai-preset": [(ORDER_LOST, lambda b: any(not can_hold(x) for x in _orders(b)))],
    "kobold-save": [
        (
            "an entry's keys are one comma-separated string, each key trimmed: a key with a comma, a"
            " blank one or one with spaces around it comes back otherwise",
            lambda body: any(
                "," in t["text"] or t["text"] != t["text"].strip() or not t["text"]
                for e in body.get("entries", [])
                for t in (e.get("triggers") or []) + (e.get("secondaryTriggers") or [])
            ),
        ),
        ("a Lite group is only the name its entries carry", _not_kobold_groups),
    ],
}


def _pairs() -> list[tuple[str, str]]:
    out = []
    for c in registry.all_codecs():
        if c.id == "vaud-json":
            out += [(c.id, k) for k in ENTITY_KINDS]
        elif not c.read_only:  # a read-only format writes no fresh entity
            out.append((c.id, c.kind))
    return out


PAIRS = _pairs()


def _primary_of(decoded: Any, kind: str) -> CanonicalEntity:
    return next(e for e in decoded.entities if e.kind == kind)


def unexpected_losses(codec_id: str, before: CanonicalEntity, after: CanonicalEntity) -> list[str]:
    codec = registry.get(codec_id)
    expected, got = before.body.dump(), after.body.dump()
    if any(pred(expected) for _, pred in UNREPRESENTABLE.get(codec_id, [])):
        return []
    exact = codec_id == "vaud-json"
    # media are compared by their bytes (fidelity's rule): an image that comes back is kept
    # whatever its ref; one that does not is a change at media.portrait / media.assets[i]
    media_diff, fates = media_changes(
        expected, got, before.media, after.media, None if exact else codec.coverage
    )
    kinds = {"lost": "removed", "changed": "changed", "added": "added"}
    media_fates = [
        Change(path, kinds[group], None, None) for group, path, cls in fates if cls == "unexpected"
    ]
    if not exact:
        for _, fn in NORMALISE.get(codec_id, []):
            expected, got = fn(expected), fn(got)
        expected, got = _sets(expected), _sets(got)
    out = [str(c) for c in media_fates if not any(rule.allows(c) for rule in LOSSY.get(codec_id, []))]
    for c in [*diff(expected, got, empty_is_absent=not exact), *media_diff]:
        if not exact and not codec.coverage.covers(c.path):
            continue
        if any(rule.allows(c) for rule in LOSSY.get(codec_id, [])):
            continue
        out.append(str(c))
    return out


def test_every_codec_is_listed() -> None:
    """A new codec must be looked at: its lossy points listed here (or none)."""
    ids = {c.id for c in registry.all_codecs()} - {"vaud-json", "marinara-character", "pygmalion"}
    assert ids <= set(LOSSY), sorted(ids - set(LOSSY))


@pytest.mark.parametrize(("codec_id", "kind"), PAIRS, ids=[f"{c}:{k}" for c, k in PAIRS])
@settings(settings.get_profile(PROFILE))
@given(data=st.data())
def test_decode_of_encode_keeps_the_body(codec_id: str, kind: str, data: st.DataObject) -> None:
    codec = registry.get(codec_id)
    e = data.draw(entity(kind), label="entity")
    first = codec.encode(e, EmitContext())
    assert codec.encode(e, EmitContext()) == first, "encode is not deterministic"
    s = Sniff(first, "x" + codec.extension)
    Codec.detect_errors.clear()
    registry.detect_all(s)  # every detector on well-formed files of every format
    assert Codec.detect_errors == []
    got = _primary_of(codec.decode(s), kind)
    assert unexpected_losses(codec_id, e, got) == []


# -- determinism across processes ----------------------------------------------------------------


def _entities_for_determinism() -> list[CanonicalEntity]:
    """Entities with twins (every sample, as decoded) and without (the full example body of each
    kind from test_entities.py: every canonical field set)."""
    from test_entities import FULL

    from bunzai_codecs import read
    from bunzai_codecs.entities import BODY_TYPES
    from tests.formats.helpers import inputs_below

    out: list[CanonicalEntity] = []
    for _path, name, data in inputs_below(ROOT / "samples", skip=()):
        out += read(data, name).entities
    for kind in ENTITY_KINDS:
        body = BODY_TYPES[kind].model_validate(FULL[kind])
        out.append(CanonicalEntity(kind=kind, id=f"{kind}-full", body=body))
    return out


def digests(lines: list[bytes]) -> list[str]:
    """sha256 of every (entity, codec of its kind) export; the entities come as vaud-json lines."""
    from bunzai_codecs.formats.vaud.codec import VaudJsonCodec

    vaud = VaudJsonCodec()
    entities = [vaud.decode(Sniff(line, "x.vaud.json")).primary for line in lines]
    ctx = EmitContext.for_entities(entities)
    out = []
    for e in entities:
        for c in registry.all_codecs():
            if c.kind != e.kind and c.id != "vaud-json":
                continue
            try:
                data = c.encode(e, ctx)
            except Exception as exc:  # a typed refusal is a result too; it must be the same one
                data = f"{type(exc).__name__}: {exc}".encode()
            out.append(f"{e.id} {c.id} {hashlib.sha256(data).hexdigest()}")
    return out


def test_encode_is_deterministic_across_processes(tmp_path: Path) -> None:
    from bunzai_codecs.formats.vaud.codec import dumps

    lines = [dumps(e) for e in _entities_for_determinism()]
    src = tmp_path / "entities.jsonl"
    src.write_bytes(b"\n".join(lines))
    here = digests(lines)
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from test_properties import digests;"
        "print('\\n'.join(digests(open(sys.argv[2], 'rb').read().split(b'\\n'))))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "4242" if os.environ.get("PYTHONHASHSEED") != "4242" else "17"}
    there = subprocess.run(
        [sys.executable, "-c", script, str(Path(__file__).parent), str(src)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout.splitlines()
    assert len(here) > 50
    assert here == there
