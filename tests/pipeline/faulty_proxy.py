"""A loopback HTTP proxy that forwards to a store's endpoint (moto for S3, the GCS emulator) and
injects transient faults.

``FaultyProxy(upstream, plan)`` listens on 127.0.0.1; clients use it as their ``endpoint_url``.
For request number ``n`` (counted from 0 over every request any client sends), ``plan(n, method,
path)`` says what happens: ``"pass"`` forwards it, ``"503"`` answers the store's "slow down" with
status 503 without forwarding (S3's ``SlowDown`` by default; ``busy=GCS_BUSY`` for GCS's JSON
error), ``"429"`` answers "too many requests" the same way, ``"slow"`` forwards it after
``delay`` seconds, ``"drop"`` closes the connection without an answer (the request may or may not
have been read in full), ``"drop-after"`` forwards it and then closes the connection instead of
answering (the store did the work; the client must cope with not knowing). Every decision is logged
in ``proxy.log`` so a test can check faults really happened.

Request bodies are read by Content-Length or chunked encoding; ``Expect: 100-continue`` is
answered; responses are relayed whole with their status and headers. Keep-alive connections carry
several requests. The proxy never looks at credentials or signatures (moto does not check them).
"""

from __future__ import annotations

import http.client
import socket
import socketserver
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

Plan = Callable[[int, str, str], str]

_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "upgrade",
    "expect",
    "transfer-encoding",
}

SLOW_DOWN = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message><RequestId>faulty-proxy</RequestId></Error>"
)
#: (content type, body) of a "slow down" answer: S3's, and GCS's JSON API error
S3_BUSY = ("application/xml", SLOW_DOWN)
GCS_BUSY = (
    "application/json; charset=UTF-8",
    b'{"error": {"message": "Please try again (faulty proxy).", '
    b'"errors": [{"domain": "global", "reason": "backendError", "message": "faulty proxy"}]}}',
)


@dataclass
class Decision:
    n: int
    method: str
    path: str
    action: str


@dataclass
class FaultyProxy:
    upstream: str
    plan: Plan
    busy: tuple[str, bytes] = S3_BUSY
    #: seconds a ``"slow"`` request waits before it is forwarded
    delay: float = 0.3
    log: list[Decision] = field(default_factory=list)

    def __post_init__(self) -> None:
        up = urlsplit(self.upstream)
        self._up = (up.hostname or "127.0.0.1", up.port or 80)
        self._lock = threading.Lock()
        self._count = 0
        proxy = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                proxy._serve(self.connection, self.rfile, self.wfile)

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FaultyProxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def actions(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for d in self.log:
            out[d.action] = out.get(d.action, 0) + 1
        return out

    # -- one client connection ------------------------------------------------------------------

    def _serve(self, conn: socket.socket, rfile, wfile) -> None:  # type: ignore[no-untyped-def]
        while True:
            line = rfile.readline(65537)
            if not line or line in (b"\r\n", b"\n"):
                return
            try:
                method, target, _ = line.decode("latin-1").split(" ", 2)
            except ValueError:
                return
            headers: list[tuple[str, str]] = []
            while True:
                h = rfile.readline(65537)
                if h in (b"\r\n", b"\n", b""):
                    break
                k, _, v = h.decode("latin-1").partition(":")
                headers.append((k.strip(), v.strip()))
            lower = {k.lower(): v for k, v in headers}
            with self._lock:
                n = self._count
                self._count += 1
            action = self.plan(n, method, target)
            self.log.append(Decision(n, method, target, action))
            if action == "drop":
                conn.shutdown(socket.SHUT_RDWR)
                return
            if lower.get("expect", "").lower() == "100-continue":
                wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                wfile.flush()
            body = _read_body(rfile, lower)
            if action in ("503", "429"):
                status = "503 Service Unavailable" if action == "503" else "429 Too Many Requests"
                ctype, busy = self.busy
                wfile.write(
                    f"HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\n".encode()
                    + f"Content-Length: {len(busy)}\r\n\r\n".encode()
                    + busy
                )
                wfile.flush()
                continue
            if action == "slow":
                time.sleep(self.delay)
            status, reason, rheaders, rbody = self._forward(method, target, headers, body)
            if action == "drop-after":
                conn.shutdown(socket.SHUT_RDWR)
                return
            out = [f"HTTP/1.1 {status} {reason}\r\n".encode("latin-1")]
            for k, v in rheaders:
                if k.lower() not in _HOP and k.lower() != "content-length":
                    out.append(f"{k}: {v}\r\n".encode("latin-1"))
            out.append(f"Content-Length: {len(rbody)}\r\n\r\n".encode())
            wfile.write(b"".join(out) + (rbody if method != "HEAD" else b""))
            wfile.flush()
            if lower.get("connection", "").lower() == "close":
                return

    def _forward(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes
    ) -> tuple[int, str, list[tuple[str, str]], bytes]:
        c = http.client.HTTPConnection(*self._up, timeout=60)
        try:
            c.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
            for k, v in headers:
                if k.lower() not in _HOP and k.lower() != "content-length":
                    c.putheader(k, v)
            if body or method in ("PUT", "POST"):
                c.putheader("Content-Length", str(len(body)))
            c.endheaders(body)
            r = c.getresponse()
            data = r.read()
            return r.status, r.reason, r.getheaders(), data
        finally:
            c.close()


def _read_body(rfile, lower: dict[str, str]) -> bytes:  # type: ignore[no-untyped-def]
    if lower.get("transfer-encoding", "").lower() == "chunked":
        parts = []
        while True:
            size = int(rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(parts)
            parts.append(rfile.read(size))
            rfile.readline()
    n = int(lower.get("content-length") or 0)
    return rfile.read(n) if n else b""


def every(*rules: tuple[int, int, str]) -> Plan:
    """A deterministic plan: ``(period, offset, action)`` rules, the first that matches wins:
    request ``n`` gets ``action`` when ``n % period == offset``."""

    def plan(n: int, method: str, path: str) -> str:
        for period, offset, action in rules:
            if n % period == offset:
                return action
        return "pass"

    return plan
