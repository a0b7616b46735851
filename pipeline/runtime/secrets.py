"""Credentials in storage options: the ``--storage-options`` flag taken out of the arguments before
anything else sees them, the JSON parsed without echoing it, literal credentials told from
``gcp-secret:`` references (which Dataflow requires), and those references resolved in the process
that opens a filesystem (``storage.Storage.fs``), once per process, never in anything pickled or
logged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pipeline.runtime.errors import UsageError

#: a storage option value that names a Secret Manager secret version instead of holding the secret
SECRET_REF = re.compile(r"^gcp-secret:(projects/[^/\s]+/secrets/[^/\s]+/versions/[^/\s]+)$")
_SECRET_FLAG = re.compile(r"^--storage[-_]options?(=|$)")


def split_secrets(argv: Sequence[str]) -> tuple[list[str], str | None]:
    """``argv`` without ``--storage-options`` (either spelling, ``=`` or separate value), and its value."""
    rest: list[str] = []
    value: str | None = None
    it = iter(range(len(argv)))
    for i in it:
        a = argv[i]
        m = _SECRET_FLAG.match(a)
        if m is None:
            rest.append(a)
        elif m.group(1) == "=":
            value = a.split("=", 1)[1]
        else:
            if i + 1 >= len(argv):
                raise UsageError("--storage-options needs a JSON value")
            value = argv[i + 1]
            next(it, None)
    return rest, value


def parse_storage_options(text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        # the message must not echo the value: it may hold a key
        raise UsageError(f"--storage-options is not valid JSON (at character {exc.pos})") from None
    if not isinstance(value, Mapping):
        raise UsageError("--storage-options must be a JSON object")
    return dict(value)


#: storage option names that hold credentials (s3fs, gcsfs, adlfs, fsspec's http/ftp/sftp)
SECRET_OPTION_KEYS = frozenset(
    {
        "key",
        "secret",
        "token",
        "password",
        "session_token",
        "aws_access_key_id",
        "aws_secret_access_key",
        "aws_session_token",
        "account_key",
        "sas_token",
        "client_secret",
        "connection_string",
        "credentials",
    }
)
#: gcsfs ``token`` values that name a method, not a credential
_TOKEN_METHODS = frozenset({"anon", "cloud", "google_default"})


def _named(key: str, value: str) -> bool:
    return bool(SECRET_REF.match(value)) or (key == "token" and value in _TOKEN_METHODS)


def literal_secrets(options: Mapping[str, Any], where: str = "") -> list[str]:
    """Paths of credential options given as literal values rather than ``gcp-secret:`` references."""
    found: list[str] = []
    for k, v in options.items():
        path = f"{where}.{k}" if where else str(k)
        if isinstance(v, Mapping):
            found += literal_secrets(v, path)
        elif k in SECRET_OPTION_KEYS and isinstance(v, str) and v and not _named(k, v):
            found.append(path)
    return found


#: secret version name -> value, per process (never in anything that is pickled or logged)
_SECRETS: dict[str, str] = {}


def _access_secret(version_name: str) -> str:
    """The secret's payload, from Secret Manager with the process's credentials (on Dataflow, the
    worker service account: it needs ``roles/secretmanager.secretAccessor`` on the secret)."""
    try:
        from apache_beam.utils.secret import GcpSecret
    except ImportError as exc:  # pragma: no cover - Beam has had it since 2.66
        raise OSError(f"cannot read secret {version_name}: {exc}") from None
    try:
        return GcpSecret(version_name).get_str()
    except Exception as exc:  # Beam wraps every client error (no library, no access, no secret)
        raise PermissionError(f"cannot read secret {version_name}: {' '.join(str(exc).split())}") from None


def secret_value(version_name: str) -> str:
    """The value of a secret version, fetched once per process; a trailing newline (what
    ``echo KEY | gcloud secrets create ... --data-file=-`` stores) is dropped."""
    if version_name not in _SECRETS:
        value = _access_secret(version_name)
        _SECRETS[version_name] = value[:-2] if value.endswith("\r\n") else value.removesuffix("\n")
    return _SECRETS[version_name]


def resolve_secrets(value: Any) -> Any:
    """``value`` (storage options) with every ``gcp-secret:...`` string replaced by the secret."""
    if isinstance(value, str):
        m = SECRET_REF.match(value)
        return secret_value(m.group(1)) if m else value
    if isinstance(value, Mapping):
        return {k: resolve_secrets(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(resolve_secrets(v) for v in value)
    return value


__all__ = [
    "SECRET_OPTION_KEYS",
    "SECRET_REF",
    "literal_secrets",
    "parse_storage_options",
    "resolve_secrets",
    "secret_value",
    "split_secrets",
]
