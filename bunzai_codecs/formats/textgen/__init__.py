"""text-generation-webui (oobabooga): characters (YAML, with the picture beside them), generation
presets and instruction templates (YAML)."""
