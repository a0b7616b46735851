"""Lumiverse: characters (Tavern cards with bare extension keys, or a zip with
``lumiverse_modules.json``), regex script exports, personas (the account object) and presets."""
