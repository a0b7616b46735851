"""Writes ``samples/textgen-webui/`` (run from the project root:
``python -m tests.formats.textgen.make_textgen_samples``).

Stdlib only (the YAML is written as text, the PNG with struct and zlib), independent of the codecs
under test, and deterministic. The layout and keys are text-generation-webui's own (its
``characters/``, ``presets/`` and ``instruction-templates/`` folders; the keys its loaders read, as
its public repository shows them); the content is original, written for bunzai.

- ``characters/Wren.yaml`` + ``characters/Wren.png``: a character with its picture beside it,
  block scalars (``|-``), a comment, ``{{user}}``/``{{char}}`` macros, a user name (``your_name``);
- ``characters/Harbor Pilot.yml``: a 2023-style character (quoted scalars, a separate
  ``example_dialogue``), no picture, a ``.yml`` suffix and a space in the name;
- ``presets/Lantern Warm.yaml``: a generation preset with mapped samplers, the app's text form of
  ``dry_sequence_breakers`` and keys with no canonical home (``do_sample``, ``sampler_priority``);
- ``instruction-templates/Harbor ChatML.yaml``: a Jinja ``instruction_template``;
- ``instruction-templates/Harbor Vicuna.yaml``: the older ``turn_template`` form with
  ``<|system-message|>`` in the context and a ``system_message``.
"""

from __future__ import annotations

from pathlib import Path

from tests.formats.make_samples import image, write_files  # the stdlib writers the generators share

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples" / "textgen-webui"


WREN = """\
# Wren keeps the harbour's lighthouse; written for bunzai's samples.
name: Wren
your_name: Traveller
greeting: |-
  *Wren sets down a brass lamp and wipes her hands on her coat.* You came up all two hundred steps?
  Sit. The kettle is nearly singing.
context: |-
  Wren's Persona: Wren keeps the lighthouse at the mouth of Saltmarsh harbour. Patient, dry-humoured,
  she counts ships the way other people count sheep.

  {{user}}: Do you ever sleep?
  {{char}}: Between the third and the fourth ship, mostly.
"""

HARBOR_PILOT = """\
name: "Harbor Pilot"
context: "Harbor Pilot's Persona: a pilot who guides ships past the Saltmarsh shoals, speaks in short sentences."
greeting: "Hold the wheel steady. Shoals ahead."
example_dialogue: |-
  {{user}}: How deep is it here?
  {{char}}: Deep enough. For now.
"""

LANTERN_WARM = """\
temperature: 0.82
top_p: 0.92
min_p: 0.05
repetition_penalty: 1.08
repetition_penalty_range: 2048
dry_multiplier: 0.8
dry_sequence_breakers: '"\\n", ":", "\\"", "*"'
do_sample: true
sampler_priority: |-
  repetition_penalty
  dry
  temperature
  min_p
"""

HARBOR_CHATML = """\
instruction_template: |-
  {%- for message in messages %}
      {{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' -}}
  {%- endfor -%}
  {%- if add_generation_prompt -%}
      {{- '<|im_start|>assistant\\n' -}}
  {%- endif -%}
"""

HARBOR_VICUNA = """\
user: "USER:"
bot: "ASSISTANT:"
turn_template: "<|user|> <|user-message|>\\n<|bot|> <|bot-message|></s>\\n"
context: "<|system-message|>\\n\\n"
system_message: "A chat between a curious harbour visitor and the lighthouse keeper."
"""


def files() -> dict[str, bytes]:
    return {
        "characters/Wren.yaml": WREN.encode("utf-8"),
        "characters/Wren.png": image(24, 24, (214, 168, 72, 255)),
        "characters/Harbor Pilot.yml": HARBOR_PILOT.encode("utf-8"),
        "presets/Lantern Warm.yaml": LANTERN_WARM.encode("utf-8"),
        "instruction-templates/Harbor ChatML.yaml": HARBOR_CHATML.encode("utf-8"),
        "instruction-templates/Harbor Vicuna.yaml": HARBOR_VICUNA.encode("utf-8"),
    }


def main() -> None:
    write_files(SAMPLES, files())


if __name__ == "__main__":
    main()
