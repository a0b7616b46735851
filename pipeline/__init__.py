"""Beam pipeline: bunzai normalize over any fsspec store (see README)."""
