"""RoleCall: characters (Tavern cards with ``data.extensions.rolecall``), its v1 lorebook export,
personas (``rolecall_persona`` and persona cards), regex script files and presets."""
