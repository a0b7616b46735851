"""Thin entry points: normalize (main job), audit, convert."""
