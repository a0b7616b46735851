"""Backyard.ai (formerly Faraday): the legacy EXIF character PNG (``backyard``) and the ``.byaf`` archive (``byaf``)."""
