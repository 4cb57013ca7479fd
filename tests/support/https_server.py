"""A loopback HTTPS server with a self-signed certificate, for the managed policy
delivered from a URL (dm_cc/policy/managed.py): it serves what a test puts in
:attr:`PolicyServer.files` (path -> bytes; anything else is a 404) or redirects
as :attr:`PolicyServer.redirects` says, records the requests, and can be stopped
(the server down).

The certificate is made by the ``openssl`` CLI for ``127.0.0.1`` and ``localhost``
(one per test process, :func:`certificate`); dm_cc is pointed at it as the managed
config's ``ca_file``. Verification is never turned off.
"""

from __future__ import annotations

import functools
import hashlib
import ssl
import subprocess
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import NamedTuple


class Certificate(NamedTuple):
    cert: Path      # the self-signed certificate: also the CA bundle dm_cc trusts
    key: Path


@functools.cache
def certificate() -> Certificate:
    """A self-signed certificate for 127.0.0.1 and localhost, made once per process."""
    where = Path(tempfile.mkdtemp(prefix="dmcc-tls-"))
    cert, key = where / "cert.pem", where / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                    "-subj", "/CN=dm_cc test policy server",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                    "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    return Certificate(cert, key)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class PolicyServer:
    """``files`` served over HTTPS on 127.0.0.1 (:meth:`url` of a path)."""

    def __init__(self, cert: Certificate | None = None) -> None:
        self.cert = cert or certificate()
        self.files: dict[str, bytes] = {}
        self.redirects: dict[str, str] = {}     # path -> where a 302 sends the client
        self.requests: list[str] = []
        self.port = 0
        self._server: ThreadingHTTPServer | None = None

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}/{path.lstrip('/')}"

    def start(self) -> PolicyServer:
        served = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server interface
                served.requests.append(self.path)
                if (moved := served.redirects.get(self.path.lstrip("/"))) is not None:
                    self.send_response(302)
                    self.send_header("Location", moved)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = served.files.get(self.path.lstrip("/"))
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args: object) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert.cert, self.cert.key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        self.port = server.server_address[1]
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        self._server = server
        return self

    def stop(self) -> None:
        """The server down: nothing listens on its port until :meth:`start`."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
