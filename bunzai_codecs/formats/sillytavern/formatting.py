"""SillyTavern's Advanced Formatting templates: ``sillytavern-instruct``, ``sillytavern-context``,
``sillytavern-sysprompt`` and ``sillytavern-reasoning`` (the ``instruct/``, ``context/``,
``sysprompt/`` and ``reasoning/`` preset folders, and what their Import buttons read).

Each is a flat object named by its ``name`` key (``_flat.py``):

- instruct template -> ``instruct`` (sequences, ``wrap``, ``macro``, ``names_behavior``, stop
  behaviour...). Older files say ``names``/``names_force_groups`` for ``names_behavior`` and
  ``separator_sequence`` for ``output_suffix`` (SillyTavern migrates them the same way; an export
  keeps the file's spelling), and a template from before system prompts had presets of their own
  carries its ``system_prompt``, read as the ``main`` prompt. ``system_sequence_prefix``/``_suffix``
  (dropped by SillyTavern) and other legacy keys ride the escrow twin;
- context template -> ``context`` (the story string, separators, stop strings, the story string's
  position, depth and role); its legacy ``allow_jailbreak`` rides the twin;
- system prompt -> prompts: ``content`` is the ``main`` prompt (a system prompt, as SillyTavern's
  chat-completion "Main Prompt"), a non-empty ``post_history`` the ``jailbreak`` prompt (its
  "Post-History Instructions"). A fresh export takes the prompts with those ids;
- reasoning template -> ``reasoning`` (``prefix``, ``suffix``, ``separator``).

Detection: each template is claimed by the keys SillyTavern's own import looks for, never more
surely than 0.95; a system prompt, which is any ``{name, content}`` object, only when it has no
other key, and at 0.8 (with ``post_history``) or 0.6.
"""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core.codec import Coverage
from bunzai_codecs.entities.preset import PresetBody, PresetPrompt
from bunzai_codecs.formats._shared.wire import MapContext
from bunzai_codecs.formats.sillytavern._flat import FlatPreset, keys, paths, read_keys, write_keys
from bunzai_codecs.formats.sillytavern._wire import Path
from bunzai_codecs.formats.sillytavern.keys import (
    CONTEXT,
    INSTRUCT,
)

#: an older template's instruct switch (SillyTavern no longer saves it with the template; read, and
#: written back only to a file that had it)
INSTRUCT_ENABLED = keys("instruct", (("enabled", "enabled", "bool", None),))


REASONING = keys(
    "reasoning",
    (("prefix", "prefix", "str", ""), ("suffix", "suffix", "str", ""), ("separator", "separator", "str", "")),
)

#: canonical ids of the system prompt and the post-history instructions (SillyTavern's identifiers)
MAIN = "main"
POST_HISTORY = "jailbreak"
PROMPT_NAMES = {MAIN: "Main Prompt", POST_HISTORY: "Post-History Instructions"}

#: ``names_behavior`` for the legacy ``names`` / ``names_force_groups`` pair (SillyTavern's migration)
LEGACY_NAMES = {
    (True, True): "always",
    (True, False): "always",
    (False, True): "force",
    (False, False): "none",
}


def _is_str(t: dict[str, Any], key: str) -> bool:
    return isinstance(t.get(key), str)


def system_prompt(pid: str, content: str) -> dict[str, Any]:
    """The canonical prompt a system-prompt template holds."""
    return {"id": pid, "name": PROMPT_NAMES[pid], "content": content, "role": "system", "systemPrompt": True}


def find_prompt(body: PresetBody, pid: str) -> PresetPrompt | None:
    """The prompt with id ``pid``, else (for ``main``) a RisuAI main prompt (``type2: main``)."""
    for p in body.prompts:
        if p.id == pid:
            return p
    if pid == MAIN:
        for p in body.prompts:
            if not p.marker and (p.extras or {}).get("type2") == "main":
                return p
    return None


# -- instruct ---------------------------------------------------------------------------------------


class SillyTavernInstructCodec(FlatPreset):
    id = "sillytavern-instruct"
    what = "an instruct template object"
    coverage = Coverage.of(
        "name",
        *paths(INSTRUCT),
        notes=[
            "no instruct switch, chat template name or Jinja template (RisuAI's): SillyTavern switches "
            "instruct mode on outside the template",
            "a fresh export writes every key, as SillyTavern saves a template: a value the body lacks "
            "is written as SillyTavern's default (an empty sequence, its switches' defaults)",
            "legacy `system_sequence_prefix`/`system_sequence_suffix` ride the escrow twin; a legacy "
            "`system_prompt` is read as the `main` prompt, and a fresh export writes none (SillyTavern "
            "keeps system prompts as templates of their own)",
        ],
    )

    def read(self, top: dict[str, Any], r: MapContext, at: Path = ()) -> tuple[dict[str, Any], Any]:
        body: dict[str, Any] = {}
        read_keys(top, INSTRUCT + INSTRUCT_ENABLED, body, r, at)
        ins = body.setdefault("instruct", {})
        legacy_names = "names_behavior" not in top and "names" in top
        if legacy_names:
            names = r.boolean(top.get("names"), (*at, "names"), False)
            force = r.boolean(top.get("names_force_groups"), (*at, "names_force_groups"), False)
            ins["namesBehavior"] = LEGACY_NAMES[(bool(names), bool(force))]
        legacy_separator = "output_suffix" not in top and "separator_sequence" in top
        if legacy_separator:
            sep = r.text(top.get("separator_sequence"), (*at, "separator_sequence"))
            if sep is not None:
                ins["outputSuffix"] = sep
        sp = r.text(top.get("system_prompt"), (*at, "system_prompt"))
        if sp is not None:
            body["prompts"] = [system_prompt(MAIN, sp)]
        return body, (legacy_names, legacy_separator, "system_prompt" in top, "enabled" in top)

    def write(self, body: PresetBody, layout: Any) -> dict[str, Any]:
        legacy_names, legacy_separator, has_system, has_enabled = layout or (False, False, False, False)
        # an older template's own switch is written back, never added: it would turn instruct mode
        # on or off when the template is picked
        out = write_keys(body, INSTRUCT + INSTRUCT_ENABLED if has_enabled else INSTRUCT)
        ins = body.instruct
        if legacy_names:
            out.pop("names_behavior", None)
            behavior = ins.namesBehavior or "force"
            out["names"] = behavior == "always"
            out["names_force_groups"] = behavior in ("always", "force")
        if legacy_separator:
            out["separator_sequence"] = out.pop("output_suffix", "")
        if has_system:
            main = find_prompt(body, MAIN)
            out["system_prompt"] = main.content if main is not None else ""
        return out


# -- context ----------------------------------------------------------------------------------------


class SillyTavernContextCodec(FlatPreset):
    id = "sillytavern-context"
    what = "a context template object"
    table = CONTEXT
    coverage = Coverage.of(
        "name",
        *paths(CONTEXT),
        notes=[
            "a fresh export writes every key, as SillyTavern saves a template: a value the body lacks "
            "is written as SillyTavern's default",
            "the legacy `allow_jailbreak` switch rides the escrow twin",
        ],
    )


# -- system prompt ----------------------------------------------------------------------------------


class SillyTavernSyspromptCodec(FlatPreset):
    id = "sillytavern-sysprompt"
    what = "a system prompt object"
    name_first = True
    coverage = Coverage.of(
        "name",
        notes=[
            "holds two prompts by id: `content` is the `main` prompt (else a RisuAI prompt of type2 "
            "`main`), `post_history` the `jailbreak` prompt (post-history instructions); every other "
            "prompt, and the prompts' own settings, are not written, so no prompt path is claimed",
        ],
    )

    def read(self, top: dict[str, Any], r: MapContext, at: Path = ()) -> tuple[dict[str, Any], Any]:
        prompts = [system_prompt(MAIN, r.text(top.get("content"), (*at, "content"), ""))]
        post = r.text(top.get("post_history"), (*at, "post_history"), "")
        if post:
            prompts.append(system_prompt(POST_HISTORY, post))
        return {"prompts": prompts}, None

    def write(self, body: PresetBody, layout: Any) -> dict[str, Any]:
        main, post = find_prompt(body, MAIN), find_prompt(body, POST_HISTORY)
        return {
            "content": main.content if main is not None else "",
            "post_history": post.content if post is not None else "",
        }


# -- reasoning --------------------------------------------------------------------------------------


class SillyTavernReasoningCodec(FlatPreset):
    id = "sillytavern-reasoning"
    what = "a reasoning template object"
    name_first = True
    table = REASONING
    coverage = Coverage.of("name", *paths(REASONING))


__all__ = [
    "CONTEXT",
    "INSTRUCT",
    "MAIN",
    "POST_HISTORY",
    "REASONING",
    "SillyTavernContextCodec",
    "SillyTavernInstructCodec",
    "SillyTavernReasoningCodec",
    "SillyTavernSyspromptCodec",
    "find_prompt",
    "system_prompt",
]
