"""Agnai (Agnaistic): the native character JSON (``agnai``) and the memory book (``agnai-lorebook``)."""
