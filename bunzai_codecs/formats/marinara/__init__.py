"""Marinara-Engine codecs: regex scripts, personas, lorebooks, prompt presets and the native
character envelope (docs/formats/marinara.md)."""
