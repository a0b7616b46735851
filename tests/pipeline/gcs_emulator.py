"""A GCS emulator on 127.0.0.1 for the tests: gcp-storage-emulator (the ``test`` extra), in memory,
in a thread of the test process, and gcsfs pointed at it.

- ``Emulator.start()`` serves the emulator's own request handler from a threading HTTP server
  whose requests run one at a time under a lock (the emulator's in-memory store is not
  thread-safe; its own server is single-threaded with a listen backlog of 5, and gcsfs opens more
  connections than that at once, which the kernel then makes wait for a SYN retry).
- ``options(endpoint)`` are the storage options a run gets: the endpoint, anonymous credentials
  (``token: "anon"``: gcsfs signs nothing and looks up no credentials), a project name.
- ``core_gcsfs()``: for the length of a ``with``, ``gs://`` opens gcsfs's ``GCSFileSystem``. gcsfs's default class since
  2026 (``ExtendedGcsFileSystem``) first asks the Storage Control API, over gRPC, what kind of
  bucket each one is, which no emulator serves: every call would wait for that to fail. The class
  it then falls back to for a standard bucket is this one, so what is tested is what runs there.
"""

from __future__ import annotations

import contextlib
import http.server
import sys
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

PROJECT = "bunzai-test"


@contextlib.contextmanager
def registered(classes: Mapping[str, type]) -> Iterator[None]:
    """Each class of ``classes`` opens its protocol for the length of the block; then what was
    registered before is back (the other tests of the worker see fsspec as it was)."""
    import fsspec
    from fsspec.registry import _registry

    before = {p: _registry.get(p) for p in classes}
    for protocol, cls in classes.items():
        fsspec.register_implementation(protocol, cls, clobber=True)
    try:
        yield
    finally:
        for protocol, cls in before.items():
            if cls is None:
                _registry.pop(protocol, None)
            else:
                _registry[protocol] = cls


def core_gcsfs() -> contextlib.AbstractContextManager[None]:
    """``gs://`` and ``gcs://`` open gcsfs's core class for the block (the module docstring says why)."""
    from gcsfs.core import GCSFileSystem

    return registered({"gs": GCSFileSystem, "gcs": GCSFileSystem})


def options(endpoint: str) -> dict[str, Any]:
    return {"endpoint_url": endpoint, "token": "anon", "project": PROJECT}


@dataclass
class Emulator:
    _storage: Any = None
    _server: Any = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> Emulator:
        from gcp_storage_emulator.server import RequestHandler
        from gcp_storage_emulator.storage import Storage

        lock = self._lock

        class Handler(RequestHandler):  # type: ignore[misc]
            def handle_one_request(self) -> None:
                # the request line and headers are read outside the lock (an idle keep-alive
                # connection must not hold it); the handler itself runs alone
                self.raw_requestline = self.rfile.readline(65537)
                if not self.raw_requestline:
                    self.close_connection = True
                    return
                if not self.parse_request():
                    return
                method = getattr(self, "do_" + self.command, None)
                if method is None:
                    self.send_error(501, f"Unsupported method ({self.command!r})")
                    return
                with lock:
                    method()
                self.wfile.flush()

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                if not isinstance(sys.exc_info()[1], ConnectionError):  # a client that hung up
                    super().handle_error(request, client_address)

        self._storage = Storage(use_memory_fs=True, project_number="1234")
        self._server = Server(("127.0.0.1", 0), partial(Handler, self._storage))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


__all__ = ["PROJECT", "Emulator", "core_gcsfs", "options", "registered"]
