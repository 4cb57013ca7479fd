"""The in-sandbox end of the network proxy: a TCP forwarder, then the command.

    python -I -S inside.py FD -- bash -c CMD

Run by bwrap as the sandbox's first process when the network is ``proxy``
(:mod:`dm_cc.sandbox.proxy`). The sandbox has its own network namespace with only
loopback up, so nothing in it reaches the outside. This program listens on
``127.0.0.1`` (a free port of that namespace) and hands each connection it accepts
to the host's proxy as a file descriptor: ``FD`` is this command's channel to the
proxy, one end of a connected pair of Unix sockets that dm_cc made for this
command and passed in (bwrap keeps inherited descriptors open), and each accepted
socket goes over it with ``SCM_RIGHTS``. The proxy then reads, judges and serves
the connection itself, by the policy the channel was made for; nothing here reads
a byte of it. The program starts the command with the proxy variables naming its
port (the channel is not inherited: the command cannot send the proxy anything)
and exits with the command's exit status (128 + N when signal N killed it). When
it exits, bwrap's PID namespace ends and takes every process left in it along,
and the proxy sees the channel's end.

No Unix socket is made here (the channel already exists), so the seccomp filter
that keeps confined commands off Unix sockets (:mod:`dm_cc.sandbox.seccomp`) holds
this program and its command alike.

Only stdlib, no ``dm_cc`` import and no ``site``: the file runs with ``-I -S``
under whichever Python runs dm_cc, so starting it costs a bare interpreter's
start-up (about 10 ms) and depends on nothing installed in the project.
"""

from __future__ import annotations

# The C modules, not socket and threading: they cost 10 ms more to import, and this
# runs before every confined command that may use the network.
import _signal  # type: ignore[import-not-found]  # no stubs; in sys.modules at start
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
# Python ignores these at start (it wants EPIPE, not death); the command gets them
# back as a shell gives them (`yes | head -1` ends yes by SIGPIPE, quietly).
DEFAULT_SIGNALS = (_signal.SIGPIPE, _signal.SIGXFSZ)
# What a client gets when the proxy is gone (dm_cc closed the session's sandbox).
REFUSED = (b"HTTP/1.1 502 dm_cc sandbox proxy unreachable\r\n"
           b"Content-Length: 0\r\nConnection: close\r\n\r\n")


def hand_over(channel: _socket.socket, fd: int) -> bool:
    """Send the connection ``fd`` to the proxy (one byte, one descriptor); whether
    it went. The caller closes its own copy either way."""
    rights = [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fd.to_bytes(4, sys.byteorder))]
    try:
        return channel.sendmsg([b"c"], rights) == 1
    except OSError:
        return False


def _serve(listener: _socket.socket, channel: _socket.socket) -> None:
    while True:
        try:
            fd, _ = listener._accept()  # type: ignore[attr-defined]  # (fd, address)
        except OSError:
            return
        if hand_over(channel, fd):
            os.close(fd)
            continue
        client = _socket.socket(fileno=fd)
        try:  # noqa: SIM105 - contextlib is one import more
            client.sendall(REFUSED)
        except OSError:
            pass
        client.close()


def environment(port: int, base: dict[str, str]) -> dict[str, str]:
    """``base`` with every proxy variable naming the listener."""
    env = {name: value for name, value in base.items() if name not in NO_PROXY_VARIABLES}
    url = f"http://127.0.0.1:{port}"
    env.update(dict.fromkeys(PROXY_VARIABLES, url))
    env["NODE_USE_ENV_PROXY"] = "1"
    return env


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--" or not argv[0].isdigit():
        sys.stderr.write("usage: inside.py FD -- COMMAND...\n")
        return 2
    channel_fd, command = int(argv[0]), argv[2:]
    try:
        os.set_inheritable(channel_fd, False)   # the command must not talk to the proxy
        channel = _socket.socket(fileno=channel_fd)
    except OSError as exc:
        sys.stderr.write(f"dm_cc sandbox: no channel to the proxy on fd {channel_fd}: {exc}\n")
        return 126
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    env = environment(listener.getsockname()[1], dict(os.environ))
    try:
        child = os.posix_spawnp(command[0], command, env, setsigdef=DEFAULT_SIGNALS)
    except OSError as exc:
        sys.stderr.write(f"{command[0]}: {exc.strerror or exc}\n")
        return 127
    _thread.start_new_thread(_serve, (listener, channel))
    code = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    status = main(sys.argv[1:])
    sys.stderr.flush()
    os._exit(status)  # the listening thread ends with the sandbox
