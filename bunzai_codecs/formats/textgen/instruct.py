"""``textgen-webui-instruct``: a text-generation-webui instruction template
(``instruction-templates/Name.yaml``, ``user_data/instruction-templates/`` since 2025), named by its
file.

Since December 2023 a template is one key, ``instruction_template``: a Jinja chat template (the
Hugging Face tokenizer's kind) -> ``instruct.jinjaTemplate``, kept verbatim. It is data: bunzai
never renders it (no Jinja is imported).

Before that, a template spelled the turns out: ``turn_template`` (``<|user|><|user-message|>...
<|bot|><|bot-message|>...``) with the names ``user`` and ``bot`` put in for ``<|user|>`` and
``<|bot|>`` (in 2023's first templates, kept in ``characters/instruction-following/``, ``your_name``
and ``name``), ``context`` around a ``<|system-message|>`` placeholder and the ``system_message``.
The app still reads these, converting them to Jinja as it loads them; bunzai reads them the way
that conversion cuts them: the text before the user's message -> ``instruct.inputSequence``, after
it -> ``inputSuffix``, the bot's name and the text before its message -> ``outputSequence``, after
it -> ``outputSuffix``, the context around the placeholder -> ``systemSequence`` /
``systemSuffix``, and ``system_message`` -> the ``main`` prompt (as SillyTavern's system prompt
template). A context without the placeholder (the oldest templates' fixed prompt head; the app's
conversion drops it too) and every other key ride the escrow twin.

A fresh export writes ``instruction_template`` when the body has a Jinja template, and the older
keys when it has sequences or a system prompt (the app converts them; ``user`` and ``bot`` empty,
their text in the turn template); a body with neither is an empty ``instruction_template``.
"""

from __future__ import annotations

from typing import Any

from bunzai_codecs.core.codec import Coverage
from bunzai_codecs.entities.preset import PresetBody
from bunzai_codecs.formats._shared.wire import MapContext
from bunzai_codecs.formats.sillytavern.formatting import MAIN, find_prompt, system_prompt
from bunzai_codecs.formats.textgen._yamlfile import YamlPreset

USER, USER_MESSAGE, BOT, BOT_MESSAGE = "<|user|>", "<|user-message|>", "<|bot|>", "<|bot-message|>"
SYSTEM_MESSAGE = "<|system-message|>"

#: the sequences the older keys hold
SEQUENCES = (
    "inputSequence",
    "inputSuffix",
    "outputSequence",
    "outputSuffix",
    "systemSequence",
    "systemSuffix",
)


def split_turns(turn: str, user: str, bot: str) -> dict[str, str] | None:
    """The four turn sequences of an older ``turn_template``, cut as the app's conversion cuts it;
    None when the placeholders are missing or out of order."""
    u = turn.find(USER_MESSAGE)
    b = turn.find(BOT, u + len(USER_MESSAGE)) if u >= 0 else -1
    m = turn.find(BOT_MESSAGE, b + len(BOT)) if b >= 0 else -1
    if m < 0:
        return None
    return {
        "inputSequence": turn[:u].replace(USER, user),
        "inputSuffix": turn[u + len(USER_MESSAGE) : b],
        "outputSequence": bot + turn[b + len(BOT) : m].replace(BOT, bot),
        "outputSuffix": turn[m + len(BOT_MESSAGE) :],
    }


class TextgenInstructCodec(YamlPreset):
    id = "textgen-webui-instruct"
    what = "an instruction template"
    coverage = Coverage.of(
        "instruct.jinjaTemplate",
        *(f"instruct.{f}" for f in SEQUENCES),
        notes=[
            "the template name is the file name, not part of the file: it is kept only when the export is "
            "saved as `<name>.yaml`",
            "the Jinja template is data: never rendered",
            "the older keys' sequences are written as the app's `turn_template` with empty `user` and "
            "`bot`; the `main` prompt is its `system_message` (no prompt path is claimed: the other "
            "prompts and the prompts' settings have no place); the other instruct settings (first/last "
            "sequences, stop sequence, names, wrapping) have no place",
        ],
    )

    def read(self, tree: dict[str, Any], r: MapContext) -> dict[str, Any]:
        body: dict[str, Any] = {}
        ins: dict[str, Any] = {}
        jinja = r.text(tree.get("instruction_template"), ("instruction_template",))
        if jinja is not None:
            ins["jinjaTemplate"] = jinja
        turn = r.text(tree.get("turn_template"), ("turn_template",))
        if turn is not None:
            user_key = "user" if "user" in tree else "your_name"
            bot_key = "bot" if "bot" in tree else "name"
            user = r.text(tree.get(user_key), (user_key,), "")
            bot = r.text(tree.get(bot_key), (bot_key,), "")
            cut = split_turns(turn, user, bot)
            if cut is None:
                r.warn_at(
                    ("turn_template",),
                    "no <|user-message|>, <|bot|>, <|bot-message|> in order; left in escrow",
                )
            else:
                ins.update(cut)
        context = r.text(tree.get("context"), ("context",))
        if context is not None and SYSTEM_MESSAGE in context:
            pre, _, post = context.partition(SYSTEM_MESSAGE)
            ins["systemSequence"], ins["systemSuffix"] = pre, post
        if ins:
            body["instruct"] = ins
        message = r.text(tree.get("system_message"), ("system_message",))
        if message is not None:
            body["prompts"] = [system_prompt(MAIN, message)]
        return body

    def write(self, body: PresetBody, raw: dict[str, Any] | None) -> dict[str, Any]:
        ins = body.instruct
        main = find_prompt(body, MAIN)
        older = any(getattr(ins, f) is not None for f in SEQUENCES) or main is not None
        out: dict[str, Any] = {}
        if ins.jinjaTemplate is not None or not older:
            out["instruction_template"] = ins.jinjaTemplate or ""
        if older:
            out["user"] = ""
            out["bot"] = ""
            out["turn_template"] = (
                (ins.inputSequence or "")
                + USER_MESSAGE
                + (ins.inputSuffix or "")
                + BOT
                + (ins.outputSequence or "")
                + BOT_MESSAGE
                + (ins.outputSuffix or "")
            )
            if ins.systemSequence is not None or ins.systemSuffix is not None:
                out["context"] = (ins.systemSequence or "") + SYSTEM_MESSAGE + (ins.systemSuffix or "")
            if main is not None:
                out["system_message"] = main.content
        return out
