"""Fuzz harnesses (atheris) per container, their saved corpora and the replay test."""
