"""The canonical bodies: every canonical path exists, full examples round-trip through ``dump()``,
open enumerations keep unknown values, closed ones and unknown keys are rejected, sections are
always present, and numbers keep their int/float type."""

from __future__ import annotations

import copy
import json
import typing
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import ValidationError

from bunzai_codecs.entities import (
    BODY_TYPES,
    Body,
    CharacterBody,
    CharacterGreetings,
    DepthInjection,
    LorebookBody,
    LoreEntry,
    MediaAsset,
    PersonaBody,
    PresetBody,
    PresetChoice,
    PresetPrompt,
    PresetSamplers,
    RegexRule,
    RegexSetBody,
    StructuredPersona,
    Voice,
)

# --- full examples: every field of every model set explicitly --------------------------------

FULL_CHARACTER: dict[str, Any] = {
    "identity": {
        "name": "Seraphina",
        "nickname": "Sera",
        "description": "{{char}} is a guardian elf of the Eldoria forest.",
        "characterVersion": "undefined",
        "culture": "en-us",
    },
    "persona": {
        "personality": "Gentle, protective, quietly stubborn.",
        "structured": {
            "kind": "wpp",
            "attributes": {"Species": ["Elf"], "Mind": ["gentle", "protective"]},
        },
        "scenario": "{{user}} wakes up in Seraphina's glade after a wolf attack.",
        "appearance": "Silver hair, green eyes, a cloak of leaves.",
        "voice": {
            "provider": "elevenlabs",
            "voiceId": "21m00Tcm4TlvDq8ikWAM",
            "rate": 1,
            "pitch": 0.9,
            "disabled": False,
            "extras": {"stability": 0.5, "similarityBoost": 0.75},
        },
        "imagePrompt": {
            "prefix": "masterpiece, elf, silver hair",
            "suffix": "forest background",
            "negative": "lowres, extra fingers",
            "template": "{{prefix}}, {{prompt}}, {{suffix}}",
            "instructions": "Describe only what is visible.",
            "emotionInstructions": "One image per emotion, same outfit.",
            "rows": [
                {"label": "always", "value": "solo, 1girl"},
                {"label": "negative", "value": ""},
            ],
        },
    },
    "prompts": {
        "systemPrompt": "{{original}}\nStay in character as {{char}}.",
        "postHistoryInstructions": "Reply in two paragraphs at most.",
        "prefill": "Seraphina smiles.",
        "depthInjections": [
            {
                "text": "Seraphina is wary of fire.",
                "depth": 4,
                "role": "system",
                "origin": "depth_prompt",
                "enabled": True,
            }
        ],
        "additionalText": "Use British spelling.",
    },
    "greetings": {
        "firstMessage": "*You wake to the scent of herbs.* You're safe now.",
        "alternateGreetings": [{"text": "*The glade is silent.*", "title": "Quiet morning"}],
        "groupOnlyGreetings": [{"text": "Welcome, travellers.", "title": "Group"}],
    },
    "examples": {"exampleMessages": "<START>\n{{user}}: Who are you?\n{{char}}: A guardian."},
    "media": {
        "portrait": {
            "role": "portrait",
            "ref": "ccdefault:",
            "name": "main",
            "label": "Default",
            "primary": True,
            "mime": "image/png",
            "sha256": "0f" * 32,
            "size": 138_204,
        },
        "assets": [
            {
                "role": "emotion",
                "ref": "embeded://assets/emotion/image/happy.png",
                "name": "happy",
                "label": "Happy",
                "primary": False,
                "sha256": "a1" * 32,
                "size": 5_120,
            },
            {"role": "other", "ref": "__asset:2", "name": "map", "mime": "image/webp"},
        ],
        "sprite": {
            "parts": {"body": "body_1", "eyes": "eyes_3", "front_hair": "front_hair_2"},
            "gender": "female",
            "eyeColor": "#3fa34d",
            "bodyColor": "#f2d3b1",
            "hairColor": "#c0c0c0",
        },
        "visualKind": "avatar",
    },
    "attribution": {
        "creator": "tavern-samples",
        "creatorNotes": "A gentle starter character.",
        "creatorNotesMultilingual": {"en": "A gentle starter character.", "ja": "優しいキャラクター。"},
        "source": ["https://example.org/cards/seraphina"],
        "license": "CC BY-NC-SA 4.0",
        "createdAt": 1745411957,
        "updatedAt": 1772896582.5,
    },
    "discovery": {"tags": ["fantasy", "elf", "sfw"]},
    "settings": {
        "talkativeness": 0.5,
        "risu": {
            "viewScreen": "emotion",
            "largePortrait": True,
            "inlayViewScreen": False,
            "utilityBot": False,
            "lorePlus": False,
        },
        "responseSchema": {"schema": [], "response": "", "history": ""},
    },
    "bias": [{"phrase": "mana", "weight": 5}, {"phrase": "suddenly", "weight": -2.5}],
    "behavior": {
        "triggerScripts": [
            {
                "comment": "greet",
                "type": "start",
                "conditions": [],
                "effect": [{"type": "setvar", "var": "met", "value": "1", "operator": "="}],
            }
        ],
        "virtualScript": "",
        "backgroundHTML": '<div class="glade"></div>',
        "backgroundCSS": ".glade { background: green; }",
        "defaultVariables": "met=0",
        "moduleToggles": "hard=Hard mode",
        "privileged": False,
        "prebuiltAsset": {"command": "", "exclude": ["assets/other/image/map.png"], "style": "dynamic"},
    },
    "worldName": "Eldoria",
    "extensions": {"fav": False, "chub": {"full_path": "tavern-samples/seraphina"}},
}

FULL_LOREBOOK: dict[str, Any] = {
    "name": "Eldoria",
    "description": "The forest and its people.",
    "lorebookType": "world",
    "tags": ["fantasy"],
    "enabled": True,
    "globalScanDepth": 2,
    "tokenBudget": 2048,
    "globalRecursion": False,
    "maxRecursionDepth": 3,
    "entryBudget": 100,
    "globalMatchWholeWords": True,
    "extensions": {"risu_fullWordMatching": True},
    "sourceBook": {"name": "Eldoria", "entries": [{"id": 0, "keys": ["eldoria"], "content": "A forest."}]},
    "categories": [{"id": "places", "name": "Places", "sortOrder": 1, "enabled": True}],
    "media": {
        "portrait": {
            "role": "portrait",
            "ref": "ccdefault:",
            "name": "cover",
            "label": "Map of Eldoria",
            "primary": True,
            "mime": "image/png",
            "sha256": "5e" * 32,
            "size": 2_048,
        }
    },
    "entries": [
        {
            "id": "0",
            "title": "Eldoria",
            "comment": "core setting entry",
            "content": "@@depth 2\nEldoria is an ancient forest guarded by elves.",
            "enabled": True,
            "constant": False,
            "triggers": [
                {"text": "Eldoria", "isRegex": False},
                {"text": "forest (glade|clearing)", "isRegex": True, "flags": "i", "probability": 50},
            ],
            "secondaryTriggers": [{"text": "^elf", "isRegex": True, "flags": "m", "probability": 100}],
            "selective": True,
            "selectiveLogic": "not_all",
            "position": "depth",
            "depth": 2,
            "role": "assistant",
            "outletName": "places",
            "sortOrder": 100,
            "priority": 10,
            "probability": 75,
            "scanDepth": 5,
            "caseSensitive": False,
            "matchWholeWords": False,
            "excludeRecursion": True,
            "preventRecursion": True,
            "delayUntilRecursion": 1,
            "sticky": 2,
            "cooldown": 3,
            "delay": 0,
            "group": "places,core",
            "groupWeight": 100,
            "groupOverride": False,
            "useGroupScoring": True,
            "categoryId": "places",
            "scanSources": ["persona_description", "character_scenario"],
            "characterFilter": {"isExclude": True, "names": ["Seraphina"], "tags": ["12"]},
            "generationTriggers": ["normal", "swipe"],
            "ignoreBudget": False,
            "vectorized": False,
            "automationId": "qr-1",
            "displayIndex": 0,
            "extensions": {"addMemo": True},
        }
    ],
}
FULL_REGEX: dict[str, Any] = {
    "name": "cleanup",
    "description": "Tidies model output.",
    "enabled": True,
    "rules": [
        {
            "id": "3f2c",
            "label": "Strip OOC",
            "find": r"\(OOC:.*?\)",
            "flags": "gi<cbs>",
            "useFlags": True,
            "replace": "",
            "trimStrings": ["{{user}}"],
            "phases": ["output", "request"],
            "targets": ["prompt"],
            "substituteFind": "raw",
            "minDepth": 0,
            "maxDepth": 10,
            "runOnEdit": True,
            "characterIds": ["char-1"],
            "presetIds": ["preset-1"],
            "enabled": False,
            "sortOrder": 2,
            "extras": {"marinaraCreatedAt": "2026-01-01T00:00:00Z"},
        }
    ],
}

FULL_PERSONA: dict[str, Any] = {
    "name": "Alex",
    "content": "{{user}} is a wandering cartographer.",
    "brief": "Cartographer, default persona",
    "sections": {
        "appearance": "Tall, ink-stained fingers.",
        "personality": "Curious and patient.",
        "history": "Left the capital after the fire.",
    },
    "presentation": {"imageUrl": "/api/avatars/file/alex.png"},
    "media": {
        "portrait": {
            "role": "portrait",
            "ref": "data:image/png;base64,",
            "name": "alex",
            "label": "Alex",
            "primary": True,
            "mime": "image/png",
            "sha256": "4c4b6a3be1314ab86138bef4314dde022e600960d8689a2c8f8631802d20dab6",
            "size": 8,
        }
    },
    "chatInjection": {"position": "depth", "depth": 2, "role": "system"},
    "worldName": "Eldoria",
    "attribution": {
        "creator": "alex",
        "version": "1.0",
        "creatorNotes": "Use with fantasy cards.",
        "source": "sillytavern",
    },
}

FULL_PRESET: dict[str, Any] = {
    "name": "Default universal",
    "description": "A balanced roleplay preset.",
    "attribution": {"creator": "marinara"},
    "prompts": [
        {
            "id": "main",
            "name": "Main Prompt",
            "content": "Write {{char}}'s next reply.",
            "role": "system",
            "enabled": True,
            "marker": False,
            "systemPrompt": True,
            "placement": "in_chat",
            "injectionDepth": 4,
            "injectionOrder": 100,
            "injectionTrigger": ["normal", "continue"],
            "forbidOverrides": True,
            "groupId": "g-core",
            "wrapInXml": False,
            "xmlTagName": "instructions",
            "extras": {"type2": "main"},
        },
        {
            "id": "chatHistory",
            "name": "Chat History",
            "content": "",
            "enabled": True,
            "marker": True,
            "markerSlot": "chatHistory",
            "placement": "relative",
        },
    ],
    "groups": [{"id": "g-core", "name": "Core", "parentGroupId": "g-root", "order": 100, "enabled": True}],
    "choices": [
        {
            "id": "c1",
            "key": "pov",
            "label": "Which point of view?",
            "type": "one",
            "options": [
                {"id": "o1", "label": "First person", "value": "first person"},
                {"id": "o2", "label": "Third person", "value": "third person"},
            ],
            "default": "third person",
            "separator": ", ",
            "randomPick": False,
            "sortOrder": 0,
            "extras": {"displayMode": "buttons"},
        }
    ],
    "samplers": {
        "temperature": 1,
        "topP": 0.95,
        "topK": 40,
        "minP": 0.05,
        "topA": 0,
        "repetitionPenalty": 1.1,
        "frequencyPenalty": 0.2,
        "presencePenalty": 0.0,
        "maxContext": 32768,
        "maxTokens": 800,
        "stopSequences": ["\n{{user}}:"],
        "minTokens": 1,
        "typicalP": 1,
        "tailFreeSampling": 0.95,
        "topG": 0,
        "epsilonCutoff": 0,
        "etaCutoff": 0,
        "topNSigma": 0,
        "minKeep": 0,
        "repetitionPenaltyRange": 2048,
        "repetitionPenaltySlope": 1,
        "repetitionPenaltyDecay": 0,
        "encoderRepetitionPenalty": 1,
        "noRepeatNgramSize": 0,
        "phraseRepetitionPenalty": "light",
        "temperatureLast": True,
        "dynamicTemperature": False,
        "dynamicTemperatureMin": 0.5,
        "dynamicTemperatureMax": 1.5,
        "dynamicTemperatureExponent": 1,
        "smoothingFactor": 0,
        "smoothingCurve": 1,
        "mirostatMode": 0,
        "mirostatTau": 5,
        "mirostatEta": 0.1,
        "dryMultiplier": 0.8,
        "dryBase": 1.75,
        "dryAllowedLength": 2,
        "dryPenaltyLastN": 0,
        "drySequenceBreakers": ["\n", ":", '"', "*"],
        "xtcThreshold": 0.1,
        "xtcProbability": 0.5,
        "unifiedLinear": 0.3,
        "unifiedQuad": 0.19,
        "unifiedConf": 0,
        "cfgScale": 1,
        "negativePrompt": "",
        "grammar": "",
        "bannedTokens": "",
        "samplerOrder": ["repetitionPenalty", "topK", "topP", "minP", "temperature"],
        "disabledSamplers": ["topA", "typicalP"],
    },
    "generation": {"seed": -1, "completions": 1, "maxContextUnlocked": False},
    "apiOptions": {
        "reasoningEffort": "medium",
        "verbosity": "low",
        "thinkingTokens": 4096,
        "serviceTier": "flex",
        "squashSystemMessages": True,
        "showThoughts": False,
        "promptPostProcessing": "none",
        "streamResponses": True,
        "functionCalling": False,
        "enableWebSearch": False,
        "requestImages": False,
    },
    "systemPrompts": {
        "assistantPrefill": "Understood.",
        "assistantImpersonation": "{{user}}:",
        "impersonation": "Write {{user}}'s next reply.",
        "newChat": "[Start a new chat]",
        "newGroupChat": "[Start a new group chat]",
        "newExampleChat": "[Example chat]",
        "continueNudge": "[Continue your last message]",
        "groupNudge": "[Write the next reply only as {{char}}.]",
    },
    "templates": {
        "worldInfoFormat": "{0}",
        "scenarioFormat": "{{scenario}}",
        "personalityFormat": "{{personality}}",
    },
    "behavior": {
        "wrapFormat": "xml",
        "namesBehavior": -1,
        "sendIfEmpty": "",
        "continuePrefill": False,
        "continuePostfix": " ",
    },
    "instruct": {
        "enabled": True,
        "chatTemplate": "chatml",
        "jinjaTemplate": "{% for m in messages %}{{ m.content }}{% endfor %}",
        "inputSequence": "<|im_start|>user",
        "inputSuffix": "<|im_end|>\n",
        "outputSequence": "<|im_start|>assistant",
        "outputSuffix": "<|im_end|>\n",
        "systemSequence": "<|im_start|>system",
        "systemSuffix": "<|im_end|>\n",
        "firstInputSequence": "",
        "lastInputSequence": "",
        "firstOutputSequence": "",
        "lastOutputSequence": "",
        "lastSystemSequence": "",
        "storyStringPrefix": "<|im_start|>system",
        "storyStringSuffix": "<|im_end|>\n",
        "stopSequence": "<|im_end|>",
        "userAlignmentMessage": "",
        "wrap": True,
        "macro": True,
        "namesBehavior": "force",
        "activationRegex": "chatml",
        "skipExamples": False,
        "systemSameAsUser": False,
        "sequencesAsStopStrings": True,
    },
    "context": {
        "storyString": "{{#if description}}{{description}}\n{{/if}}{{trim}}",
        "exampleSeparator": "***",
        "chatStart": "***",
        "useStopStrings": False,
        "namesAsStopStrings": True,
        "storyStringPosition": 0,
        "storyStringDepth": 1,
        "storyStringRole": "system",
        "alwaysForceName2": True,
        "trimSentences": False,
        "singleLine": False,
    },
    "reasoning": {"prefix": "<think>\n", "suffix": "\n</think>", "separator": "\n\n"},
}

FULL: dict[str, dict[str, Any]] = {
    "character": FULL_CHARACTER,
    "lorebook": FULL_LOREBOOK,
    "regex": FULL_REGEX,
    "persona": FULL_PERSONA,
    "preset": FULL_PRESET,
}

# --- the canonical paths every body must have (``[]`` = each item of a list) -----------------------

CANONICAL_PATHS: dict[str, list[str]] = {
    "character": [
        *(f"identity.{f}" for f in ("name", "nickname", "description", "characterVersion", "culture")),
        "persona.personality",
        "persona.structured.kind",
        "persona.structured.attributes",
        "persona.scenario",
        "persona.appearance",
        *(f"persona.voice.{f}" for f in ("provider", "voiceId", "rate", "pitch", "disabled", "extras")),
        *(
            f"persona.imagePrompt.{f}"
            for f in ("prefix", "suffix", "negative", "template", "instructions", "emotionInstructions")
        ),
        "persona.imagePrompt.rows[].label",
        "persona.imagePrompt.rows[].value",
        "prompts.systemPrompt",
        "prompts.postHistoryInstructions",
        "prompts.prefill",
        *(f"prompts.depthInjections[].{f}" for f in ("text", "depth", "role", "origin", "enabled")),
        "prompts.additionalText",
        "greetings.firstMessage",
        "greetings.alternateGreetings[].text",
        "greetings.alternateGreetings[].title",
        "greetings.groupOnlyGreetings[].text",
        "greetings.groupOnlyGreetings[].title",
        "examples.exampleMessages",
        *(f"media.portrait.{f}" for f in ("role", "ref", "name", "label", "primary", "mime")),
        *(f"media.assets[].{f}" for f in ("role", "ref", "name", "label", "primary", "mime")),
        *(f"media.sprite.{f}" for f in ("parts", "gender", "eyeColor", "bodyColor", "hairColor")),
        "media.visualKind",
        *(
            f"attribution.{f}"
            for f in (
                "creator",
                "creatorNotes",
                "creatorNotesMultilingual",
                "source",
                "license",
                "createdAt",
                "updatedAt",
            )
        ),
        "discovery.tags",
        "settings.talkativeness",
        *(
            f"settings.risu.{f}"
            for f in ("viewScreen", "largePortrait", "inlayViewScreen", "utilityBot", "lorePlus")
        ),
        "settings.responseSchema",
        "bias[].phrase",
        "bias[].weight",
        *(
            f"behavior.{f}"
            for f in (
                "triggerScripts",
                "virtualScript",
                "backgroundHTML",
                "backgroundCSS",
                "defaultVariables",
                "moduleToggles",
                "privileged",
            )
        ),
        *(f"behavior.prebuiltAsset.{f}" for f in ("command", "exclude", "style")),
        "worldName",
        "extensions",
    ],
    "lorebook": [
        *(
            f
            for f in (
                "name",
                "description",
                "lorebookType",
                "tags",
                "enabled",
                "globalScanDepth",
                "tokenBudget",
                "globalRecursion",
                "maxRecursionDepth",
                "entryBudget",
                "globalMatchWholeWords",
                "extensions",
            )
        ),
        *(f"categories[].{f}" for f in ("id", "name", "sortOrder", "enabled")),
        *(
            f"entries[].{f}"
            for f in (
                "id",
                "title",
                "comment",
                "content",
                "enabled",
                "constant",
                "selective",
                "selectiveLogic",
                "position",
                "depth",
                "role",
                "outletName",
                "sortOrder",
                "priority",
                "probability",
                "scanDepth",
                "caseSensitive",
                "matchWholeWords",
                "excludeRecursion",
                "preventRecursion",
                "delayUntilRecursion",
                "sticky",
                "cooldown",
                "delay",
                "group",
                "groupWeight",
                "groupOverride",
                "useGroupScoring",
                "categoryId",
                "scanSources",
                "generationTriggers",
                "ignoreBudget",
                "vectorized",
                "automationId",
                "displayIndex",
                "extensions",
            )
        ),
        *(f"entries[].triggers[].{f}" for f in ("text", "isRegex", "flags", "probability")),
        *(f"entries[].secondaryTriggers[].{f}" for f in ("text", "isRegex", "flags", "probability")),
        *(f"entries[].characterFilter.{f}" for f in ("isExclude", "names", "tags")),
    ],
    "regex": [
        "name",
        "description",
        *(
            f"rules[].{f}"
            for f in (
                "id",
                "label",
                "find",
                "flags",
                "useFlags",
                "replace",
                "trimStrings",
                "phases",
                "targets",
                "substituteFind",
                "minDepth",
                "maxDepth",
                "runOnEdit",
                "characterIds",
                "presetIds",
                "enabled",
                "sortOrder",
                "extras",
            )
        ),
    ],
    "persona": [
        "name",
        "content",
        "brief",
        "sections.appearance",
        "sections.personality",
        "sections.history",
        "presentation.imageUrl",
        "media.portrait.role",
        "media.portrait.ref",
        "chatInjection.position",
        "chatInjection.depth",
        "chatInjection.role",
        "worldName",
        *(f"attribution.{f}" for f in ("creator", "version", "creatorNotes", "source")),
    ],
    "preset": [
        "name",
        "description",
        "attribution.creator",
        *(
            f"prompts[].{f}"
            for f in (
                "id",
                "name",
                "content",
                "role",
                "enabled",
                "marker",
                "markerSlot",
                "systemPrompt",
                "placement",
                "injectionDepth",
                "injectionOrder",
                "injectionTrigger",
                "forbidOverrides",
                "groupId",
                "wrapInXml",
                "xmlTagName",
                "extras",
            )
        ),
        *(f"groups[].{f}" for f in ("id", "name", "parentGroupId", "order", "enabled")),
        *(
            f"choices[].{f}"
            for f in ("id", "key", "label", "type", "default", "separator", "randomPick", "sortOrder")
        ),
        *(f"choices[].options[].{f}" for f in ("id", "label", "value")),
        *(
            f"samplers.{f}"
            for f in (
                "temperature",
                "topP",
                "topK",
                "minP",
                "topA",
                "repetitionPenalty",
                "frequencyPenalty",
                "presencePenalty",
                "maxContext",
                "maxTokens",
                "stopSequences",
            )
        ),
        *(f"generation.{f}" for f in ("seed", "completions", "maxContextUnlocked")),
        *(
            f"apiOptions.{f}"
            for f in (
                "reasoningEffort",
                "verbosity",
                "thinkingTokens",
                "serviceTier",
                "squashSystemMessages",
                "showThoughts",
                "promptPostProcessing",
                "streamResponses",
                "functionCalling",
                "enableWebSearch",
                "requestImages",
            )
        ),
        *(
            f"systemPrompts.{f}"
            for f in (
                "assistantPrefill",
                "impersonation",
                "newChat",
                "newGroupChat",
                "newExampleChat",
                "continueNudge",
                "groupNudge",
                "assistantImpersonation",
            )
        ),
        *(f"templates.{f}" for f in ("worldInfoFormat", "scenarioFormat", "personalityFormat")),
        *(
            f"behavior.{f}"
            for f in ("wrapFormat", "namesBehavior", "sendIfEmpty", "continuePrefill", "continuePostfix")
        ),
    ],
}

KINDS = sorted(BODY_TYPES)


# --- helpers -------------------------------------------------------------------------------


def _nested_models(annotation: Any, in_list: bool = False) -> Iterator[tuple[type[Body], bool]]:
    """The Body classes an annotation holds, each with whether it sits inside a list."""
    if isinstance(annotation, type) and issubclass(annotation, Body):
        yield annotation, in_list
        return
    origin = typing.get_origin(annotation)
    if origin is dict:  # opaque bags and string maps: never descended into
        return
    for arg in typing.get_args(annotation):
        yield from _nested_models(arg, in_list or origin is list)


def declared_paths(model: type[Body], prefix: str = "") -> set[str]:
    """Every field path of a model, ``[]`` marking list items."""
    out: set[str] = set()
    for name, field in model.model_fields.items():
        out.add(prefix + name)
        for sub, in_list in _nested_models(field.annotation):
            out |= declared_paths(sub, prefix + name + ("[]." if in_list else "."))
    return out


def set_paths(m: Body, prefix: str = "") -> set[str]:
    """The field paths a body instance was given explicitly."""
    out: set[str] = set()
    for name in m.model_fields_set:
        out.add(prefix + name)
        value = getattr(m, name)
        if isinstance(value, Body):
            out |= set_paths(value, f"{prefix}{name}.")
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, Body):
                    out |= set_paths(item, f"{prefix}{name}[].")
    return out


def contains_none(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, dict):
        return any(contains_none(v) for v in value.values())
    if isinstance(value, list):
        return any(contains_none(v) for v in value)
    return False


# --- registry and shape --------------------------------------------------------------------


def test_body_types_maps_each_kind_to_its_body() -> None:
    assert {
        "character": CharacterBody,
        "lorebook": LorebookBody,
        "regex": RegexSetBody,
        "persona": PersonaBody,
        "preset": PresetBody,
    } == BODY_TYPES
    assert all(issubclass(cls, Body) for cls in BODY_TYPES.values())


@pytest.mark.parametrize("kind", KINDS)
def test_every_canonical_path_exists(kind: str) -> None:
    missing = set(CANONICAL_PATHS[kind]) - declared_paths(BODY_TYPES[kind])
    assert not missing, f"{kind}: fields missing from the model: {sorted(missing)}"


@pytest.mark.parametrize("kind", KINDS)
def test_full_example_sets_every_declared_field(kind: str) -> None:
    body = BODY_TYPES[kind].model_validate(FULL[kind])
    unset = declared_paths(BODY_TYPES[kind]) - set_paths(body)
    assert not unset, f"{kind}: the full example leaves out {sorted(unset)}"


@pytest.mark.parametrize("kind", KINDS)
def test_full_example_dumps_back_unchanged(kind: str) -> None:
    body = BODY_TYPES[kind].model_validate(FULL[kind])
    dumped = body.dump()
    assert dumped == FULL[kind]
    assert BODY_TYPES[kind].model_validate(dumped) == body
    assert BODY_TYPES[kind].model_validate_json(json.dumps(dumped)) == body


@pytest.mark.parametrize("kind", KINDS)
def test_json_schema_documents_every_field(kind: str) -> None:
    schema = BODY_TYPES[kind].model_json_schema()
    json.dumps(schema)  # serialisable as-is
    models = {BODY_TYPES[kind].__name__: schema, **schema.get("$defs", {})}
    for name, model in models.items():
        assert model.get("description"), f"{name} has no description"
        assert model.get("additionalProperties") is False, f"{name} accepts unknown keys"
        for prop, spec in model["properties"].items():
            assert spec.get("description"), f"{name}.{prop} has no description"


def test_json_schema_publishes_open_and_closed_vocabularies() -> None:
    defs = LorebookBody.model_json_schema()["$defs"]
    position = defs["LoreEntry"]["properties"]["position"]
    assert position["x-open-enum"] is True
    assert "world" in position["x-known-values"]
    assert "enum" not in position
    logic = defs["LoreEntry"]["properties"]["selectiveLogic"]
    assert set(logic["enum"]) == {"and_any", "not_all", "not_any", "and_all"}
    phases = RegexSetBody.model_json_schema()["$defs"]["RegexRule"]["properties"]["phases"]
    assert "input" in phases["items"]["x-known-values"]


# --- enumerations --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "data", "path"),
    [
        (LoreEntry, {"id": "1", "position": "before_char_defs"}, ("position",)),
        (LoreEntry, {"id": "1", "position": "8"}, ("position",)),
        (LoreEntry, {"id": "1", "scanSources": ["world_state"]}, ("scanSources", 0)),
        (LoreEntry, {"id": "1", "generationTriggers": ["quiet_v2"]}, ("generationTriggers", 0)),
        (RegexRule, {"id": "1", "phases": ["edittrans"]}, ("phases", 0)),
        (RegexRule, {"id": "1", "phases": ["4"]}, ("phases", 0)),
        (RegexRule, {"id": "1", "substituteFind": "after"}, ("substituteFind",)),
        (PresetPrompt, {"id": "cache", "role": "all"}, ("role",)),
        (PresetPrompt, {"id": "p", "markerSlot": "agent_data"}, ("markerSlot",)),
        (PresetPrompt, {"id": "p", "placement": "append_preset"}, ("placement",)),
        (PresetChoice, {"id": "c", "type": "slider"}, ("type",)),
        (MediaAsset, {"role": "x-risu-asset", "ref": "embeded://a.png"}, ("role",)),
        (StructuredPersona, {"kind": "plist"}, ("kind",)),
        (Voice, {"provider": "openai"}, ("provider",)),
        (PersonaBody, {"chatInjection": {"position": "9"}}, ("chatInjection", "position")),
    ],
)
def test_open_enum_keeps_unknown_value_verbatim(model: type[Body], data: dict[str, Any], path: tuple) -> None:
    body = model.model_validate(data)
    dumped = body.dump()
    expected: Any = data
    for step in path:
        expected = expected[step]
        dumped = dumped[step]
    assert dumped == expected
    assert model.model_validate(body.dump()) == body


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (LoreEntry, {"id": "1", "selectiveLogic": "or"}),
        (LoreEntry, {"id": "1", "selectiveLogic": 0}),
        (LoreEntry, {"id": "1", "role": "bot"}),
        (DepthInjection, {"text": "x", "depth": 4, "role": "narrator"}),
        (PersonaBody, {"chatInjection": {"position": "depth", "role": "bot"}}),
    ],
)
def test_closed_enum_rejects_unknown_value(model: type[Body], data: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        model.model_validate(data)


def test_closed_enum_accepts_each_known_value() -> None:
    for logic in ("and_any", "not_all", "not_any", "and_all"):
        assert LoreEntry(id="1", selectiveLogic=logic).selectiveLogic == logic


# --- unknown keys --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_unknown_top_level_key_is_rejected(kind: str) -> None:
    with pytest.raises(ValidationError) as info:
        BODY_TYPES[kind].model_validate({**FULL[kind], "spec_version": "3.0"})
    assert info.value.errors()[0]["type"] == "extra_forbidden"


@pytest.mark.parametrize(
    ("kind", "path", "key"),
    [
        ("character", ("identity",), "char_name"),
        ("character", ("persona", "voice"), "service"),
        ("character", ("media", "assets", 0), "uri"),
        ("lorebook", ("entries", 0), "useProbability"),
        ("lorebook", ("entries", 0, "triggers", 0), "keyword"),
        ("regex", ("rules", 0), "scriptName"),
        ("persona", ("sections",), "backstory"),
        ("preset", ("samplers",), "top_p"),
        ("preset", ("choices", 0, "options", 0), "enablesPrompts"),
    ],
)
def test_unknown_nested_key_is_rejected(kind: str, path: tuple, key: str) -> None:
    data = copy.deepcopy(FULL[kind])
    target: Any = data
    for step in path:
        target = target[step]
    target[key] = "x"
    with pytest.raises(ValidationError) as info:
        BODY_TYPES[kind].model_validate(data)
    assert [e["type"] for e in info.value.errors()] == ["extra_forbidden"]
    assert info.value.errors()[0]["loc"] == (*path, key)


# --- dump: None left out, round trip -------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_dump_of_an_empty_body_has_no_none_and_round_trips(kind: str) -> None:
    body = BODY_TYPES[kind]()
    dumped = body.dump()
    assert not contains_none(dumped)
    assert BODY_TYPES[kind].model_validate(dumped) == body


def test_dump_leaves_out_unset_and_explicit_none_fields() -> None:
    body = CharacterBody.model_validate(
        {"identity": {"name": "Seraphina", "nickname": None}, "greetings": {"firstMessage": "Hi"}}
    )
    dumped = body.dump()
    assert dumped["identity"] == {"name": "Seraphina"}
    assert dumped["greetings"] == {"firstMessage": "Hi"}
    assert dumped["persona"] == {"imagePrompt": {}}
    assert "bias" not in dumped and "worldName" not in dumped
    assert not contains_none(dumped)
    assert CharacterBody.model_validate(dumped) == body

    entry = LoreEntry(id="7", scanDepth=None, caseSensitive=False)
    assert entry.dump() == {
        "id": "7",
        "title": "",
        "content": "",
        "enabled": True,
        "constant": False,
        "selectiveLogic": "and_any",
        "position": "world",
        "depth": 4,
        "role": "system",
        "sortOrder": 100,
        "priority": 100,
        "probability": 100,
        "caseSensitive": False,
        "excludeRecursion": False,
        "preventRecursion": False,
        "delayUntilRecursion": 0,
    }


# --- absent vs empty -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "empty_sections"),
    [
        (
            "character",
            {
                "identity": {},
                "persona": {"imagePrompt": {}},
                "prompts": {},
                "greetings": {},
                "examples": {},
                "media": {},
                "attribution": {},
                "discovery": {},
                "settings": {"risu": {}},
                "behavior": {"prebuiltAsset": {}},
                "extensions": {},
            },
        ),
        ("lorebook", {"categories": [], "entries": []}),
        ("regex", {"rules": []}),
        ("persona", {"sections": {}, "presentation": {}, "media": {}, "attribution": {}}),
        (
            "preset",
            {
                "attribution": {},
                "prompts": [],
                "groups": [],
                "choices": [],
                "samplers": {},
                "generation": {},
                "apiOptions": {},
                "systemPrompts": {},
                "templates": {},
                "behavior": {},
                "instruct": {},
                "context": {},
                "reasoning": {},
            },
        ),
    ],
)
def test_absent_and_empty_sections_compare_equal(kind: str, empty_sections: dict[str, Any]) -> None:
    model = BODY_TYPES[kind]
    absent = model()
    empty = model.model_validate(empty_sections)
    assert absent == empty
    assert absent.dump() == empty.dump()


def test_sections_are_independent_per_instance() -> None:
    a, b = CharacterBody(), CharacterBody()
    a.identity.name = "A"
    a.extensions["k"] = 1
    assert b.identity.name == "" and b.extensions == {}


def test_absent_wire_list_differs_from_empty_list() -> None:
    absent = CharacterGreetings()
    empty = CharacterGreetings(alternateGreetings=[])
    assert absent != empty
    assert empty.dump() == {"alternateGreetings": []}
    assert CharacterGreetings.model_validate(empty.dump()) == empty
    assert LoreEntry(id="1", triggers=[]) != LoreEntry(id="1")
    assert CharacterBody.model_validate({"discovery": {"tags": []}}).dump()["discovery"] == {"tags": []}


# --- required fields and defaults ----------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (LoreEntry, {}),
        (RegexRule, {"find": "x"}),
        (PresetPrompt, {"name": "Main"}),
        (PresetChoice, {"id": "c"}),
        (MediaAsset, {"role": "portrait"}),
        (Voice, {"voiceId": "v"}),
        (DepthInjection, {"text": "x"}),
    ],
)
def test_missing_required_field_is_rejected(model: type[Body], data: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as info:
        model.model_validate(data)
    assert {e["type"] for e in info.value.errors()} == {"missing"}


def test_row_defaults_follow_canonical() -> None:
    entry = LoreEntry(id="e1")
    assert (entry.enabled, entry.constant, entry.priority, entry.sortOrder, entry.probability) == (
        True,
        False,
        100,
        100,
        100,
    )
    assert (entry.content, entry.selectiveLogic, entry.position, entry.role) == (
        "",
        "and_any",
        "world",
        "system",
    )
    assert entry.scanDepth is None and entry.triggers is None
    rule = RegexRule(id="r1")
    assert (rule.enabled, rule.flags, rule.phases, rule.targets) == (True, "", [], None)
    prompt = PresetPrompt(id="main")
    assert (prompt.enabled, prompt.marker, prompt.placement, prompt.role) == (True, False, "relative", None)
    assert CharacterBody().identity.name == ""
    assert PersonaBody().content == ""


# --- numbers -------------------------------------------------------------------------------


def test_int_and_float_numbers_keep_their_type() -> None:
    entry = LoreEntry(id="1", sortOrder=100, groupWeight=0.5, depth=4.0)
    assert type(entry.sortOrder) is int and entry.sortOrder == 100
    assert type(entry.groupWeight) is float and entry.groupWeight == 0.5
    assert type(entry.depth) is float
    dumped = entry.dump()
    assert type(dumped["sortOrder"]) is int
    assert type(dumped["groupWeight"]) is float
    assert type(dumped["depth"]) is float
    text = entry.model_dump_json(exclude_none=True)
    assert '"sortOrder":100,' in text and '"groupWeight":0.5' in text and '"depth":4.0' in text


def test_numbers_keep_their_type_through_json() -> None:
    raw = '{"temperature": 1, "topP": 1.0, "maxContext": 8192, "frequencyPenalty": 0.5}'
    samplers = PresetSamplers.model_validate_json(raw)
    assert [type(v) for v in (samplers.temperature, samplers.topP, samplers.maxContext)] == [int, float, int]
    again = PresetSamplers.model_validate_json(samplers.model_dump_json(exclude_none=True))
    assert again == samplers
    assert type(again.temperature) is int and type(again.topP) is float


def test_dates_are_unix_seconds_kept_exact() -> None:
    body = CharacterBody.model_validate(
        {"attribution": {"createdAt": 1745411957, "updatedAt": 1763518239.25}}
    )
    assert body.dump()["attribution"] == {"createdAt": 1745411957, "updatedAt": 1763518239.25}
    assert type(body.attribution.createdAt) is int


def test_risu_prebuilt_asset_command_keeps_bool_or_empty_string() -> None:
    for value in (True, False, ""):
        body = CharacterBody.model_validate({"behavior": {"prebuiltAsset": {"command": value}}})
        kept = body.dump()["behavior"]["prebuiltAsset"]["command"]
        assert kept == value and type(kept) is type(value)


def test_choice_default_is_one_value_or_several() -> None:
    assert PresetChoice(id="c", type="one", default="a").default == "a"
    assert PresetChoice(id="c", type="many", default=["a", "b"]).dump()["default"] == ["a", "b"]


def test_opaque_data_keeps_its_nulls_through_dump() -> None:
    rows = [{"type": "start", "effect": [{"type": "triggerlua", "code": "print(1)"}], "lowLevelAccess": None}]
    extensions = {"depth_prompt": {"prompt": "", "depth": 4, "role": None}, "fav": None}
    body = CharacterBody.model_validate({"behavior": {"triggerScripts": rows}, "extensions": extensions})
    dumped = body.dump()
    assert dumped["behavior"]["triggerScripts"] == rows
    assert dumped["extensions"] == extensions
    assert CharacterBody.model_validate(dumped) == body


def test_body_equality_is_field_equality_and_sees_nested_edits() -> None:
    """Encoders decide "unedited" by ``body == base``: the fast ``Body.__eq__`` must agree with
    pydantic's (same class and same field values), including edits deep inside nested models."""
    from pydantic import BaseModel

    from bunzai_codecs.entities import LorebookBody
    from bunzai_codecs.entities.lorebook import LoreCategory

    d = {"name": "b", "entries": [{"id": "1", "triggers": [{"text": "k"}]}]}
    a, b = LorebookBody.model_validate(d), LorebookBody.model_validate(d)
    assert a == b and BaseModel.__eq__(a, b)
    b.entries[0].triggers[0].text = "edited"  # type: ignore[index]
    assert a != b and not BaseModel.__eq__(a, b)
    assert LorebookBody() != LoreCategory(id="x")
    assert LorebookBody() != {"name": ""}
    assert LorebookBody(entries=[]) == LorebookBody()
