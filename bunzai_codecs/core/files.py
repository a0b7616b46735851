"""Writing the command line's output files: atomically, never leaving a temporary behind, and
failing with one line that names the file.

``write_atomic`` writes to a fresh temporary file beside the target (``mkstemp``: a name nobody
else can have) and renames it over the target; a reader sees the old file or the new one, never
half of one. Whatever goes wrong — the folder cannot be made, the target is a folder, the disk is
full, the rename is refused — the temporary is removed and ``OutputError`` says what and where.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


class OutputError(Exception):
    """An output cannot be written (the CLI prints it, one line, and exits 4)."""


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


def ensure_folder(folder: Path) -> None:
    """``folder`` exists as a folder (made if need be), or ``OutputError``."""
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"{folder}: is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{folder}: cannot create the folder: {_why(exc)}") from exc


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see the module's docstring)."""
    import tempfile  # here: a command that writes no file (detect) never loads it

    path = Path(path)
    if path.is_dir():
        raise OutputError(f"{path}: is a folder; give a file name")
    ensure_folder(path.parent)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {_why(exc)}") from exc
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it 0600; a plain file is not
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        if isinstance(exc, OSError):
            raise OutputError(f"{path}: cannot write: {_why(exc)}") from exc
        raise


__all__ = ["OutputError", "ensure_folder", "write_atomic"]
