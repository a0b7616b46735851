"""Pygmalion / oobabooga classic flat character JSON (``char_name``, ``char_persona``...), also in a PNG."""
