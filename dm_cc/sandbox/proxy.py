"""The host side of the sandbox's network proxy: each connection judged by the policy.

    proxy = Proxy("/tmp/dm_cc-sandbox-x/proxy/sock")
    token = proxy.admit(gate)      # connections opening with it are judged by gate
    ...
    proxy.close()                  # stops listening, ends open tunnels, joins threads

When rules name hosts (``{permission: network, pattern: "pypi.org", action:
allow}``) the sandbox keeps its own network namespace, with nothing but loopback,
and a forwarder in it (:mod:`dm_cc.sandbox.inside`) passes TCP connections through
a Unix socket to this proxy, which runs in dm_cc and speaks the two forms of HTTP
proxying:

* ``CONNECT host:port`` (what clients do for HTTPS and any other TLS): judged, then
  a blind tunnel;
* an absolute-form request (``GET http://host/path HTTP/1.1``): judged, sent on in
  origin form with ``Connection: close`` (so the next request, perhaps for another
  host, comes on a new connection and is judged too), then piped.

A host is judged as the client named it: ``Request("network", host)``, the host
canonical as :mod:`dm_cc.permissions.urls` makes it (lower case, IDNA A-label, an
IPv4 address in any spelling as dotted decimal), its other spellings (the other
names of this machine for a loopback address) as requests only a deny decides.
Allowed means the gate says ``allow``: ``ask`` is a no, as nobody can be asked in
the middle of a running command. An IP address is judged as itself, so allowing
``pypi.org`` does not allow its addresses. Names are resolved here, outside the
sandbox, and only once allowed; each address they resolve to is judged too, and
a deny for it stops the connection (``network 169.254.169.254 deny`` holds for a
name that points there). A refusal is a ``403`` whose reason and body say
``dm_cc sandbox`` and the deciding rule, which :func:`stopped_by_sandbox
<dm_cc.sandbox.host.stopped_by_sandbox>` recognises.

What it does not filter: the port (a rule names a host; every port of it is
open), the path or method of a request, and what goes through a tunnel. What it
cannot reach: a program that ignores the proxy variables (``http_proxy`` …) has no
network at all, which is the point: it fails closed. The socket is visible to any
process of the user; a connection must open with a token that :meth:`Proxy.admit`
made for a gate in this process, so another sandbox (another session, or a command
with a stricter policy) cannot borrow this one's.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
import socket
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import replace
from urllib.parse import urlsplit

from dm_cc.permissions import Decision, Gate, Request, Verdict
from dm_cc.permissions.rules import NETWORK
from dm_cc.permissions.urls import url_names
from dm_cc.sandbox.inside import pipe

# The reason phrase of a refusal (clients show it: "Tunnel connection failed: 403
# Forbidden by the dm_cc sandbox") and the start of its body.
REFUSED = "Forbidden by the dm_cc sandbox"
MARK = "dm_cc sandbox:"
CONNECT_TIMEOUT = 10.0      # seconds to connect to an allowed host
HEAD_TIMEOUT = 30.0         # seconds for a client to send its token and request head
HEAD_LIMIT = 64 * 1024      # bytes of request head
TOKEN_LIMIT = 256
# Request headers meant for the proxy, or for a connection the proxy does not keep.
HOP_HEADERS = frozenset({b"proxy-connection", b"proxy-authorization", b"connection",
                         b"keep-alive"})


Decide = Callable[[Sequence[Request]], Decision]   # a gate's decide


class Refused(Exception):
    """Why a connection is not made: the HTTP status, reason and body to send."""

    def __init__(self, status: int, reason: str, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.reason = reason
        self.text = text


# --------------------------------------------------------------------------- judging

def host_requests(host: str) -> list[Request] | str:
    """The network requests for ``host`` as a client named it (see the module
    docstring); or why it has no canonical form."""
    names = url_names(f"http://{host}/")
    if isinstance(names, str):
        return names
    canonical = urlsplit(names.url).netloc
    requests = [Request(NETWORK, canonical)]
    others = dict.fromkeys(urlsplit(url).netloc for url, _ in names.spellings)
    requests += [Request(NETWORK, other, speculative=True, allowable=False,
                         note=f"another name of {canonical}")
                 for other in others if other != canonical]
    return requests


def _denial(host: str, verdict: Verdict) -> Refused:
    rule = verdict.rule
    if rule.permission != NETWORK:
        why = "no network rule allows it"
    elif verdict.action == "ask":
        why = f"{rule.describe()} asks about it, and nobody can be asked during a running command"
    else:
        why = f"{rule.describe()} denies it"
    return Refused(403, REFUSED, (
        f"{MARK} network access to {host} is not allowed: {why}. A network rule can allow "
        f'it, for example {{permission: network, pattern: "{host}", action: allow}} in a '
        "policy file; or run the command outside the sandbox.\n"))


def judge(decide: Decide, host: str) -> str:
    """The canonical host when the gate allows connecting to it; Refused otherwise."""
    requests = host_requests(host)
    if isinstance(requests, str):
        raise Refused(403, REFUSED, f"{MARK} {host!r} cannot be judged: {requests}.\n")
    decision = decide(requests)
    if decision.action != "allow":
        raise _denial(requests[0].pattern, decision.deciding[0])
    return requests[0].pattern


def resolve(decide: Decide, host: str, port: int) -> list[tuple[int, tuple[str, int]]]:
    """The addresses of an allowed ``host``, each judged: a rule denying one of
    them (by address) refuses the connection."""
    name = host[1:-1] if host.startswith("[") else host
    try:
        found = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:  # UnicodeError: a label over 63 characters
        raise Refused(502, "Bad Gateway", f"{MARK} cannot resolve {host}: {exc}\n") from exc
    addresses: list[tuple[int, tuple[str, int]]] = []
    for family, _, _, _, sockaddr in found:
        address = str(sockaddr[0])
        literal = f"[{address}]" if family == socket.AF_INET6 else address
        requests = host_requests(literal)
        if isinstance(requests, list):
            decision = decide([replace(r, speculative=True) for r in requests])
            if decision.action == "deny":
                verdict = decision.deciding[0]
                raise Refused(403, REFUSED, (
                    f"{MARK} {host} resolves to {address}, and connecting to it is not "
                    f"allowed: {verdict.rule.describe()} denies it.\n"))
        addresses.append((family, (address, port)))
    return addresses


def connect(addresses: Sequence[tuple[int, tuple[str, int]]], host: str) -> socket.socket:
    error: OSError | None = None
    for family, sockaddr in addresses:
        upstream = socket.socket(family, socket.SOCK_STREAM)
        upstream.settimeout(CONNECT_TIMEOUT)
        try:
            upstream.connect(sockaddr)
        except OSError as exc:
            upstream.close()
            error = exc
            continue
        upstream.settimeout(None)
        return upstream
    raise Refused(502, "Bad Gateway", f"{MARK} cannot connect to {host}: {error}\n")


# --------------------------------------------------------------------------- HTTP

def _split_hostport(text: str, default: int | None) -> tuple[str, int]:
    """``host:port``, ``[v6]:port`` or, with a default port, the host alone."""
    host, port = text, default
    if text.startswith("["):
        end = text.find("]")
        host, rest = text[:end + 1], text[end + 1:]
        if rest:
            port = _port(rest.removeprefix(":"), text)
    elif ":" in text:
        host, _, digits = text.rpartition(":")
        port = _port(digits, text)
    if not host or port is None:
        raise Refused(400, "Bad Request", f"{MARK} no host and port in {text!r}\n")
    return host, port


def _port(digits: str, text: str) -> int:
    if not (digits.isascii() and digits.isdigit()) or not 0 < int(digits) < 65536:
        raise Refused(400, "Bad Request", f"{MARK} bad port in {text!r}\n")
    return int(digits)


def _origin_head(lines: list[bytes], method: bytes, path: bytes, version: bytes,
                 host: str, port: int) -> bytes:
    """The request head to send the server: origin form, hop headers replaced by
    ``Connection: close``, a Host header when the client sent none."""
    headers = [line for line in lines[1:] if line
               and line.split(b":", 1)[0].strip().lower() not in HOP_HEADERS]
    if not any(line.split(b":", 1)[0].strip().lower() == b"host" for line in headers):
        headers.append(f"Host: {host}{'' if port == 80 else f':{port}'}".encode())
    headers.append(b"Connection: close")
    return b"\r\n".join([b" ".join((method, path, version)), *headers]) + b"\r\n\r\n"


class _Reader:
    """Reads a socket up to a delimiter, keeping what came after it."""

    def __init__(self, conn: socket.socket) -> None:
        self.conn = conn
        self.buffer = b""

    def until(self, delimiter: bytes, limit: int) -> bytes:
        while delimiter not in self.buffer:
            if len(self.buffer) > limit:
                raise Refused(431, "Request Header Fields Too Large", f"{MARK} head too long\n")
            chunk = self.conn.recv(1 << 14)
            if not chunk:
                raise ConnectionError("closed before the request")
            self.buffer += chunk
        head, self.buffer = self.buffer.split(delimiter, 1)
        return head


# --------------------------------------------------------------------------- the server

class Proxy:
    """A filtering proxy listening on the Unix socket ``path`` (see the module
    docstring); one per session's sandbox, serving every gate it admits."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._gates: dict[str, weakref.ref[Gate]] = {}
        self._tokens: weakref.WeakKeyDictionary[Gate, str] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self._judging = threading.Lock()   # the gate's caches are not made for threads
        self._open: set[socket.socket] = set()
        self._threads: set[threading.Thread] = set()
        self._closed = False
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(path)
        self._listener.listen(64)
        self._accepting = threading.Thread(target=self._accept, name="dm_cc-proxy", daemon=True)
        self._accepting.start()

    def admit(self, gate: Gate) -> str:
        """The token a forwarder sends to be judged by ``gate`` (one per gate, kept
        while the gate lives)."""
        with self._lock:
            token = self._tokens.get(gate)
            if token is None:
                token = secrets.token_hex(16)
                self._tokens[gate] = token
                self._gates[token] = weakref.ref(gate)
                weakref.finalize(gate, self._gates.pop, token, None)
            return token

    def close(self) -> None:
        """Stop listening, end every open connection, and wait for the threads."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            open_now = list(self._open)
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        for conn in open_now:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self._accepting.join(5)
        for thread in list(self._threads):
            thread.join(5)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)

    @property
    def threads(self) -> int:
        """Threads of the proxy still running (the listener's and one per connection)."""
        return sum(thread.is_alive() for thread in list(self._threads)) + self._accepting.is_alive()

    # ------------------------------------------------------------------ connections

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            with self._lock:
                if self._closed:
                    conn.close()
                    return
                self._threads = {t for t in self._threads if t.is_alive()}
                self._threads.add(thread)
                self._open.add(conn)
            thread.start()

    def _track(self, conn: socket.socket) -> bool:
        with self._lock:
            if self._closed:
                return False
            self._open.add(conn)
            return True

    def _serve(self, conn: socket.socket) -> None:
        upstream: socket.socket | None = None
        try:
            conn.settimeout(HEAD_TIMEOUT)
            reader = _Reader(conn)
            gate = self._gate(reader.until(b"\n", TOKEN_LIMIT))
            if gate is None:
                return  # not one of ours: no answer at all
            try:
                upstream, first = self._open_upstream(gate, reader)
            except Refused as refused:
                _reply(conn, refused)
                return
            if not self._track(upstream):
                return
            conn.settimeout(None)
            upstream.sendall(first)
            pipe(conn, upstream)
        except (OSError, Refused):  # closed, timed out, or a token line that is not one
            pass
        finally:
            with self._lock:
                self._open.discard(conn)
                if upstream is not None:
                    self._open.discard(upstream)
            conn.close()
            if upstream is not None:
                upstream.close()

    def _gate(self, token: bytes) -> Gate | None:
        text = token.strip().decode("ascii", "replace")
        with self._lock:
            for known, ref in self._gates.items():
                if hmac.compare_digest(known, text):
                    return ref()
        return None

    def _open_upstream(self, gate: Gate, reader: _Reader) -> tuple[socket.socket, bytes]:
        """Judge the request, connect, and say what to send the server first."""
        head = reader.until(b"\r\n\r\n", HEAD_LIMIT)
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ")
        if len(parts) != 3:
            raise Refused(400, "Bad Request", f"{MARK} not an HTTP request line\n")
        method, target, version = parts
        text = target.decode("latin-1")
        if method == b"CONNECT":
            host, port = _split_hostport(text, None)
            first = b""
        elif text.lower().startswith("http://"):
            hostport = text[len("http://"):].split("/", 1)[0].split("?", 1)[0]
            host, port = _split_hostport(hostport.rpartition("@")[2], 80)
            path = target[len("http://") + len(hostport.encode("latin-1")):]
            path = path if path.startswith(b"/") else b"/" + path
            first = _origin_head(lines, method, path, version, host, port) + reader.buffer
        else:
            raise Refused(400, "Bad Request", (
                f"{MARK} this proxy takes CONNECT host:port and absolute http:// requests\n"))

        def decide(requests: Sequence[Request]) -> Decision:
            with self._judging:
                return gate.decide(requests)

        canonical = judge(decide, host)
        upstream = connect(resolve(decide, canonical, port), canonical)
        if method == b"CONNECT":
            reader.conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            first = reader.buffer   # a client may send its TLS hello at once
        return upstream, first


def _reply(conn: socket.socket, refused: Refused) -> None:
    body = refused.text.encode()
    with contextlib.suppress(OSError):
        conn.sendall(
            f"HTTP/1.1 {refused.status} {refused.reason}\r\nContent-Type: text/plain; "
            f"charset=utf-8\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            .encode() + body)


__all__ = ["MARK", "REFUSED", "Proxy", "Refused", "host_requests", "judge"]
