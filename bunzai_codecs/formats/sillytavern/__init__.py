"""SillyTavern and the Tavern card lineage: cards (JSON, PNG), regex scripts (and, from their own
modules, world info, presets and personas)."""
