"""vaud-json: the project's own lossless format — canonical entities as JSON lines."""
