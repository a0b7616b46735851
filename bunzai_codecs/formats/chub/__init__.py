"""Chub (chub.ai / characterhub): its ``extensions.chub`` layer on Tavern cards (read by the
``sillytavern`` codec through :class:`~bunzai_codecs.formats.chub.dialect.ChubDialect`) and its
lorebook JSON (``chub-lorebook``)."""
