"""The host side of the sandbox's network proxy: each connection judged by the policy.

    proxy = Proxy()
    inside = proxy.channel(gate)   # connections sent over it are judged by gate
    ...                            # inside goes into the sandbox as an inherited fd
    proxy.close()                  # ends every channel and open tunnel, joins threads

When rules name hosts (``{permission: network, pattern: "pypi.org", action:
allow}``) the sandbox keeps its own network namespace, with nothing but loopback,
and a forwarder in it (:mod:`dm_cc.sandbox.inside`) accepts the command's TCP
connections and passes each one, as a file descriptor (``SCM_RIGHTS``), over the
command's channel: one end of a connected pair of Unix sockets made here for that
command, the other end inherited by the sandbox. This proxy, in dm_cc, then serves
the connection itself and speaks the two forms of HTTP proxying:

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

The channel names the gate: there is no socket on the file system to find and no
token to present, so another sandbox (another session, or a command with a stricter
policy) has no way to this command's channel. Inside the sandbox the forwarder keeps
the channel from the command (it is not inherited; a command that took it from the
forwarder anyway would be judged by its own gate), and the seccomp filter
(:mod:`dm_cc.sandbox.seccomp`) holds there too, as no Unix socket needs to be made.
What comes over a channel must be a TCP socket; anything else is closed unused. A
channel ends when the last process holding its inside end is gone (the sandbox's
PID namespace ends with the command), or when the plan carrying it is closed
unrun; its thread then closes the host end.

What it does not filter: the port (a rule names a host; every port of it is
open), the path or method of a request, and what goes through a tunnel. What it
cannot reach: a program that ignores the proxy variables (``http_proxy`` …) has no
network at all, which is the point: it fails closed.
"""

from __future__ import annotations

import array
import contextlib
import socket
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace

from dm_cc.permissions import NETWORK, Decision, Gate, Request, Verdict, host_requests

# The reason phrase of a refusal (clients show it: "Tunnel connection failed: 403
# Forbidden by the dm_cc sandbox") and the start of its body.
REFUSED = "Forbidden by the dm_cc sandbox"
MARK = "dm_cc sandbox:"
CONNECT_TIMEOUT = 10.0      # seconds to connect to an allowed host
HEAD_TIMEOUT = 30.0         # seconds for a client to send its request head
HEAD_LIMIT = 64 * 1024      # bytes of request head
CHUNK = 1 << 16
# What a connection handed over must be: a TCP socket (from the in-sandbox forwarder).
CLIENT_FAMILIES = (socket.AF_INET, socket.AF_INET6)
FD_SIZE = array.array("i").itemsize
# Request headers meant for the proxy, or for a connection the proxy does not keep.
HOP_HEADERS = frozenset({b"proxy-connection", b"proxy-authorization", b"connection",
                         b"keep-alive"})


Decide = Callable[[Sequence[Request]], Decision]   # a gate's decide
Refusals = Callable[[str, str], None]               # told a host kept out, and why


class Refused(Exception):
    """Why a connection is not made: the HTTP status, reason and body to send; for a
    host a rule keeps out (a 403), which host and why, as the channel's ``refused``
    is told."""

    def __init__(self, status: int, reason: str, text: str, host: str = "",
                 why: str = "") -> None:
        super().__init__(text)
        self.status = status
        self.reason = reason
        self.text = text
        self.host = host
        self.why = why


# --------------------------------------------------------------------------- judging

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
        "policy file; or run the command outside the sandbox.\n"), host, why)


def judge(decide: Decide, host: str) -> str:
    """The canonical host when the gate allows connecting to it; Refused otherwise."""
    requests = host_requests(host)
    if isinstance(requests, str):
        raise Refused(403, REFUSED, f"{MARK} {host!r} cannot be judged: {requests}.\n", host,
                      f"it cannot be judged: {requests}")
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
                    f"allowed: {verdict.rule.describe()} denies it.\n"), host,
                    f"it resolves to {address}, which {verdict.rule.describe()} denies")
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

def splice(source: socket.socket, sink: socket.socket) -> None:
    """Copy ``source`` to ``sink`` until end of stream, then end ``sink``'s
    sending half (so a half-closed exchange still finishes)."""
    with contextlib.suppress(OSError):
        while data := source.recv(CHUNK):
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


def pipe(one: socket.socket, other: socket.socket) -> None:
    """Both directions until both have ended (the other one in a thread of its own)."""
    back = threading.Thread(target=splice, args=(other, one), name="dm_cc-proxy-pipe",
                            daemon=True)
    back.start()
    splice(one, other)
    back.join()


class Proxy:
    """A filtering proxy serving the connections sent over its channels (see the
    module docstring); one per session's sandbox, a channel per confined command."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._judging = threading.Lock()   # the gate's caches are not made for threads
        self._open: set[socket.socket] = set()     # channels and connections, to end on close
        self._threads: set[threading.Thread] = set()
        self._closed = False

    def channel(self, gate: Gate, refused: Refusals = lambda host, why: None) -> socket.socket:
        """A new channel judged by ``gate``: the end to pass into the sandbox (the
        caller closes its copy once the command started); ``refused`` is told each
        host a rule kept out, and why (from the channel's threads). After
        :meth:`close`, a channel whose other end is already closed."""
        host_end, inside_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        if not self._start(lambda conn, judged: self._receive(conn, judged, refused), host_end,
                           gate, name="dm_cc-proxy"):
            host_end.close()
        return inside_end

    def close(self) -> None:
        """End every channel and open connection, and wait for the threads."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            open_now = list(self._open)
        for conn in open_now:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        for thread in list(self._threads):
            thread.join(5)

    @property
    def threads(self) -> int:
        """Threads of the proxy still running (one per channel and per connection)."""
        return sum(thread.is_alive() for thread in list(self._threads))

    # ------------------------------------------------------------------ connections

    def _start(self, target: Callable[[socket.socket, Gate], None], conn: socket.socket,
               gate: Gate, name: str) -> bool:
        """Serve ``conn`` with ``target`` in a thread of its own, tracked for
        :meth:`close`; False when closed already (``conn`` is the caller's then)."""
        thread = threading.Thread(target=self._serving, args=(target, conn, gate), name=name,
                                  daemon=True)
        with self._lock:
            if self._closed:
                return False
            self._threads = {t for t in self._threads if t.is_alive()}
            self._threads.add(thread)
            self._open.add(conn)
        thread.start()
        return True

    def _serving(self, target: Callable[[socket.socket, Gate], None], conn: socket.socket,
                 gate: Gate) -> None:
        try:
            target(conn, gate)
        finally:
            with self._lock:
                self._open.discard(conn)
            conn.close()

    def _receive(self, channel: socket.socket, gate: Gate, refused: Refusals) -> None:
        """Take the connections sent over ``channel`` until it ends."""
        while True:
            try:
                data, fds = _receive(channel)
            except OSError:
                return
            if not data and not fds:
                return   # every holder of the inside end has gone: the command ended
            for fd in fds:
                client = _client(fd)
                if client is not None and not self._start(
                        lambda conn, judged: self._serve(conn, judged, refused), client, gate,
                        name="dm_cc-proxy-connection"):
                    client.close()

    def _track(self, conn: socket.socket) -> bool:
        with self._lock:
            if self._closed:
                return False
            self._open.add(conn)
            return True

    def _serve(self, conn: socket.socket, gate: Gate, refused: Refusals) -> None:
        upstream: socket.socket | None = None
        try:
            conn.settimeout(HEAD_TIMEOUT)
            try:
                upstream, first = self._open_upstream(gate, _Reader(conn))
            except Refused as refusal:
                if refusal.host:
                    refused(refusal.host, refusal.why)
                _reply(conn, refusal)
                return
            if not self._track(upstream):
                return
            conn.settimeout(None)
            upstream.sendall(first)
            pipe(conn, upstream)
        except OSError:  # closed or timed out
            pass
        finally:
            if upstream is not None:
                with self._lock:
                    self._open.discard(upstream)
                upstream.close()

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


def _receive(channel: socket.socket) -> tuple[bytes, list[int]]:
    """One byte from ``channel`` and the descriptor sent with it, if any (more are
    closed by the kernel), closed on exec: dm_cc's other children must not inherit
    a client. (Not ``socket.recv_fds``: it ignores its flags, CPython gh-107898.)"""
    data, ancillary, _, _ = channel.recvmsg(1, socket.CMSG_SPACE(FD_SIZE),
                                            socket.MSG_CMSG_CLOEXEC)
    fds = array.array("i")
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[:len(payload) - len(payload) % FD_SIZE])
    return data, list(fds)


def _client(fd: int) -> socket.socket | None:
    """The socket of a descriptor sent over a channel, when it is a TCP connection's;
    anything else (a file, a pipe, a Unix socket) is closed unused."""
    try:
        conn = socket.socket(fileno=fd)
    except OSError:  # not a socket
        socket.close(fd)
        return None
    if conn.family not in CLIENT_FAMILIES or conn.type != socket.SOCK_STREAM:
        conn.close()
        return None
    return conn


def _reply(conn: socket.socket, refused: Refused) -> None:
    body = refused.text.encode()
    with contextlib.suppress(OSError):
        conn.sendall(
            f"HTTP/1.1 {refused.status} {refused.reason}\r\nContent-Type: text/plain; "
            f"charset=utf-8\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            .encode() + body)


__all__ = ["MARK", "REFUSED", "Proxy", "Refused", "host_requests", "judge"]
