"""SillyTavern codecs: character cards, world info, regex scripts, chat-completion presets, personas."""
