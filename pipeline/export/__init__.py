"""Entities written in app formats: the files one export stage writes and commits (normalize
``--export``, ``files.py``) and the ``bunzai export`` job over a finished dataset (``job.py``)."""
