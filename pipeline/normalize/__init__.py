"""The normalize job's graph (``graph.build``) and its five steps: ListInputs, Normalize (the
per-input stages), CarryForward (``--since``), WriteOutputs and Finish, with what flows between them."""
