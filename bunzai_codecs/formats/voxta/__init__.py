"""Voxta: packages (``.voxpkg``) of characters, memory books and scenarios."""
