"""The in-sandbox end of the network proxy: a TCP forwarder, then the command.

    python -I -S inside.py SOCKET TOKEN -- bash -c CMD

Run by bwrap as the sandbox's first process when the network is ``proxy``
(:mod:`dm_cc.sandbox.proxy`). The sandbox has its own network namespace with only
loopback up, so nothing in it reaches the outside. This program listens on
``127.0.0.1`` (a free port of that namespace), forwards each connection to the
host's proxy through the Unix socket ``SOCKET`` (bound into the sandbox; each
connection opens with ``TOKEN``, which names the policy to judge it by), starts
the command with the proxy variables pointing at the listener, and exits with the
command's exit status (128 + N when signal N killed it). When it exits, bwrap's
PID namespace ends and takes every process left in it along.

Only stdlib, no ``dm_cc`` import and no ``site``: the file runs with ``-I -S``
under whichever Python runs dm_cc, so starting it costs a bare interpreter's
start-up (about 10 ms) and depends on nothing installed in the project.
"""

from __future__ import annotations

# The C modules, not socket and threading: they cost 10 ms more to import, and this
# runs before every confined command that may use the network.
import _socket
import _thread
import os
import sys

# What clients read to find a proxy. lower- and upper-case (curl reads only the
# lower-case http_proxy; Go and Python read both); NODE_USE_ENV_PROXY makes
# Node's own fetch and http honour them (Node 24+).
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy",
                   "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
# Removed: a host listed in them would be reached directly, that is not at all.
NO_PROXY_VARIABLES = ("no_proxy", "NO_PROXY")
CHUNK = 1 << 16
REFUSED = (b"HTTP/1.1 502 dm_cc sandbox proxy unreachable\r\n"
           b"Content-Length: 0\r\nConnection: close\r\n\r\n")


def splice(source: _socket.socket, sink: _socket.socket) -> None:
    """Copy ``source`` to ``sink`` until end of stream, then end ``sink``'s
    sending half (so a half-closed exchange still finishes)."""
    try:
        while data := source.recv(CHUNK):
            sink.sendall(data)
    except OSError:
        pass
    try:  # noqa: SIM105 - contextlib is one import more
        sink.shutdown(_socket.SHUT_WR)
    except OSError:
        pass


def pipe(one: _socket.socket, other: _socket.socket) -> None:
    """Both directions until both have ended; then close both."""
    done = _thread.allocate_lock()
    done.acquire()

    def back() -> None:
        try:
            splice(other, one)
        finally:
            done.release()

    _thread.start_new_thread(back, ())
    splice(one, other)
    done.acquire()
    one.close()
    other.close()


def _forward(client: _socket.socket, path: str, token: bytes) -> None:
    upstream = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        upstream.connect(path)
        upstream.sendall(token + b"\n")
    except OSError:
        try:  # noqa: SIM105
            client.sendall(REFUSED)
        except OSError:
            pass
        client.close()
        upstream.close()
        return
    pipe(client, upstream)


def _serve(listener: _socket.socket, path: str, token: bytes) -> None:
    while True:
        try:
            fd, _ = listener._accept()  # type: ignore[attr-defined]  # (fd, address)
        except OSError:
            return
        _thread.start_new_thread(_forward, (_socket.socket(fileno=fd), path, token))


def environment(port: int, base: dict[str, str]) -> dict[str, str]:
    """``base`` with every proxy variable naming the forwarder."""
    env = {name: value for name, value in base.items() if name not in NO_PROXY_VARIABLES}
    url = f"http://127.0.0.1:{port}"
    env.update(dict.fromkeys(PROXY_VARIABLES, url))
    env["NODE_USE_ENV_PROXY"] = "1"
    return env


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: inside.py SOCKET TOKEN -- COMMAND...\n")
        return 2
    path, token, command = argv[0], argv[1].encode(), argv[3:]
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    env = environment(listener.getsockname()[1], dict(os.environ))
    try:
        child = os.posix_spawnp(command[0], command, env)
    except OSError as exc:
        sys.stderr.write(f"{command[0]}: {exc.strerror or exc}\n")
        return 127
    _thread.start_new_thread(_serve, (listener, path, token))
    code = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    status = main(sys.argv[1:])
    sys.stderr.flush()
    os._exit(status)  # the forwarding threads end with the sandbox
