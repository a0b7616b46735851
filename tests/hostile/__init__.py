"""Hostile-input suite: adversarial files for every container and codec (see generate.py)."""
