"""Per-host network rules through the sandbox's proxy: real servers on the host's
loopback, real confined commands (curl, python3) reaching them only as the
policy says, under the seccomp filter, through a channel of their own, and
nothing left running once a command ended or the sandbox is closed."""

from __future__ import annotations

import asyncio
import functools
import http.server
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.bwrap import needs_bwrap

from dm_cc.config.dirs import PROJECT_DIR, HostFilesystem
from dm_cc.permissions import NETWORK, Gate, Layer, PathContext, PathContextDirs, Rule
from dm_cc.sandbox.derive import Private, _network
from dm_cc.sandbox.host import FORWARDER, Plan, Sandbox, stopped_by_sandbox
from dm_cc.sandbox.proxy import MARK, REFUSED, Proxy, Refused, host_requests, judge, resolve
from dm_cc.sandbox.spec import Mount, SandboxSpec
from dm_cc.tools.base import ToolContext
from dm_cc.tools.bash import BashParams, BashTool

# --------------------------------------------------------------------------- fixtures


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"page {self.path} for {self.headers['Host']}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def web() -> Iterator[int]:
    """An HTTP server on the host's 127.0.0.1 (outside any sandbox): its port."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.fixture
def echo() -> Iterator[int]:
    """A TCP echo server on the host's 127.0.0.1: its port."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                while data := conn.recv(4096):
                    conn.sendall(data)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    listener.shutdown(socket.SHUT_RDWR)
    listener.close()
    thread.join()


@pytest.fixture
def where(tmp_path: Path) -> PathContextDirs:
    root, home = tmp_path / "p", tmp_path / "h"
    (root / ".git").mkdir(parents=True)
    home.mkdir()
    return PathContextDirs(root, root, home, HostFilesystem())


@pytest.fixture
def sandbox(where: PathContextDirs, tmp_path: Path) -> Iterator[Sandbox]:
    env = {"HOME": str(where.home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "DM_CC_HOME": str(tmp_path / "dmhome"), "http_proxy": "http://elsewhere:1",
           "no_proxy": "127.0.0.1,localhost"}
    box = Sandbox("auto", where, env)
    yield box
    box.close()


def gate(where: PathContextDirs, *rules: tuple[str, str]) -> Gate:
    """A gate of network rules ``(pattern, action)``, after the default ask."""
    return Gate([Layer("test", tuple(Rule(NETWORK, pattern, action)  # type: ignore[arg-type]
                                     for pattern, action in rules))],
                PathContext(where.root.as_posix(), where.home.as_posix()))


def start(box: Sandbox, rules: Gate, command: str) -> subprocess.Popen[str]:
    """Start ``command`` confined behind the proxy, as the bash tool's runner does:
    the plan's files passed under their numbers, and closed here once started."""
    plan = box.confine(rules, ["bash", "-c", command])
    assert plan.confined and plan.spec is not None and plan.spec.network == "proxy"
    try:
        return subprocess.Popen(plan.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, stdin=subprocess.DEVNULL, cwd=box.where.root,
                                pass_fds=[file.fileno() for file in plan.pass_files])
    finally:
        close(plan)


def close(plan: Plan) -> None:
    for file in plan.pass_files:
        file.close()


def run(box: Sandbox, rules: Gate, command: str) -> subprocess.CompletedProcess[str]:
    proc = start(box, rules, command)
    out, err = proc.communicate(timeout=30)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


FETCH = ("python3 -c 'import sys, urllib.request; "
         "print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' ")

TUNNEL = """python3 - "$1" <<'EOF'
import os, socket, sys
host, port = os.environ["https_proxy"].rsplit("/", 1)[1].split(":")
s = socket.create_connection((host, int(port)), timeout=10)
s.sendall(f"CONNECT {sys.argv[1]} HTTP/1.1\\r\\nHost: {sys.argv[1]}\\r\\n\\r\\n".encode())
head = b""
while b"\\r\\n\\r\\n" not in head:
    head += s.recv(1)
print(head.split(b"\\r\\n")[0].decode())
if b" 200 " in head:
    s.sendall(b"ping through the tunnel")
    print(s.recv(100).decode())
else:
    print(s.recv(2000).decode())
EOF
"""


def tunnel(box: Sandbox, rules: Gate, target: str) -> subprocess.CompletedProcess[str]:
    return run(box, rules, TUNNEL.replace('"$1"', target))


# --------------------------------------------------------------------------- through the sandbox

@needs_bwrap
def test_an_allowed_host_is_reached_by_curl_and_python(sandbox, where, web):
    rules = gate(where, ("127.0.0.1", "allow"))
    done = run(sandbox, rules, f"curl -sS http://127.0.0.1:{web}/x && "
                               f"{FETCH} http://127.0.0.1:{web}/y")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"page /x for 127.0.0.1:{web}\npage /y for 127.0.0.1:{web}\n\n"


@needs_bwrap
def test_a_host_no_rule_allows_gets_a_403_naming_the_rule(sandbox, where, web):
    rules = gate(where, ("example.org", "allow"), ("localhost", "deny"))
    done = run(sandbox, rules, f"curl -sS http://localhost:{web}/; {FETCH} http://localhost:{web}/")
    first = done.stdout
    assert first.startswith(f"{MARK} network access to localhost is not allowed: deny network "
                            "'localhost' (")
    assert 'pattern: "localhost", action: allow' in first
    assert done.returncode == 1 and f"HTTP Error 403: {REFUSED}" in done.stderr
    spec = sandbox.spec(rules)
    assert "proxy refused a host" in (stopped_by_sandbox(done.stderr, spec) or "")


@needs_bwrap
def test_the_bash_tool_offers_the_escape_when_the_proxy_refuses(sandbox, where, web):
    rules = gate(where, ("127.0.0.1", "allow"))
    ctx = ToolContext(where, session_id="s", agent="build",
                      confine=functools.partial(sandbox.confine, rules))
    params = BashParams(command=f"{FETCH} http://127.0.0.1:{web}/ok && {FETCH} http://localhost:{web}/")
    out = asyncio.run(BashTool().run(params, ctx))
    assert out.output.startswith("page /ok for")
    assert out.output.endswith("(the sandbox stopped this: the sandbox's proxy refused localhost "
                               "(no network rule allows it))")
    ok, refused = out.escape     # one sandbox_escape request per simple command
    assert ok.permission == refused.permission == "sandbox_escape"
    assert ok.pattern.endswith(f" http://127.0.0.1:{web}/ok")
    assert refused.pattern.endswith(f" http://localhost:{web}/")


@needs_bwrap
def test_a_refusal_is_known_from_the_proxy_whatever_the_command_printed(sandbox, where, web):
    # the program swallows the error and succeeds: the proxy still knows what it refused
    rules = gate(where, ("127.0.0.1", "allow"))
    ctx = ToolContext(where, session_id="s", agent="build",
                      confine=functools.partial(sandbox.confine, rules))
    quiet = ("python3 -c 'import sys, urllib.request\ntry: urllib.request.urlopen(sys.argv[1])\n"
             f"except Exception: pass' http://localhost:{web}/")
    out = asyncio.run(BashTool().run(BashParams(command=quiet), ctx))
    assert out.output.startswith("(no output)\n(the sandbox stopped this: the sandbox's proxy "
                                 "refused localhost (no network rule allows it))")
    assert [r.permission for r in out.escape] == ["sandbox_escape"]
    allowed = asyncio.run(BashTool().run(BashParams(command=f"{FETCH} http://127.0.0.1:{web}/"),
                                         ctx))
    assert not allowed.escape and "sandbox" not in allowed.output, allowed.output


@needs_bwrap
def test_without_a_rule_for_it_the_default_ask_is_a_no(sandbox, where, web):
    done = run(sandbox, gate(where, ("example.org", "allow")), f"curl -sS http://127.0.0.1:{web}/")
    assert done.stdout.startswith(f"{MARK} network access to 127.0.0.1 is not allowed: "
                                  "no network rule allows it")


@needs_bwrap
def test_each_request_is_judged_not_only_a_connection_s_first(sandbox, where, web):
    # curl would reuse a kept-alive proxy connection; the proxy closes each one.
    rules = gate(where, ("127.0.0.1", "allow"))
    done = run(sandbox, rules, f"curl -sS http://127.0.0.1:{web}/a http://localhost:{web}/b")
    assert done.stdout.startswith(f"page /a for 127.0.0.1:{web}\n{MARK} network access to "
                                  "localhost is not allowed")


@needs_bwrap
def test_connect_to_an_allowed_host_is_tunnelled(sandbox, where, echo):
    done = tunnel(sandbox, gate(where, ("127.0.0.1", "allow")), f"127.0.0.1:{echo}")
    assert done.stdout == "HTTP/1.1 200 Connection established\nping through the tunnel\n", \
        done.stderr


@needs_bwrap
def test_an_ip_spelling_does_not_pass_a_host_rule(sandbox, where, echo):
    # 2130706433 is 127.0.0.1: judged as 127.0.0.1, which only `localhost` was allowed as
    rules = gate(where, ("localhost", "allow"))
    done = tunnel(sandbox, rules, f"2130706433:{echo}")
    assert done.stdout.startswith(f"HTTP/1.1 403 {REFUSED}\n{MARK} network access to "
                                  "127.0.0.1 is not allowed")
    assert "tunnel" not in done.stdout.split("\n", 2)[2]


@needs_bwrap
def test_programs_ignoring_the_proxy_have_no_network(sandbox, where, web):
    rules = gate(where, ("127.0.0.1", "allow"))
    done = run(sandbox, rules, f"curl -sS --noproxy '*' http://127.0.0.1:{web}/")
    assert done.returncode != 0 and "page" not in done.stdout
    assert "proxy variables" in (stopped_by_sandbox(done.stderr, sandbox.spec(rules)) or "")


@needs_bwrap
def test_the_command_s_exit_status_and_environment(sandbox, where):
    rules = gate(where, ("127.0.0.1", "allow"))
    done = run(sandbox, rules, 'echo "$https_proxy|${no_proxy-unset}|$HTTP_PROXY"; exit 7')
    proxy = done.stdout.split("|")[0]
    assert done.returncode == 7
    assert proxy.startswith("http://127.0.0.1:") and done.stdout == f"{proxy}|unset|{proxy}\n"
    assert run(sandbox, rules, "kill -TERM $$").returncode == 128 + 15
    # SIGPIPE as a shell leaves it (Python, which starts the command, ignores it)
    assert run(sandbox, rules, "yes | head -1; exit ${PIPESTATUS[0]}").returncode == 128 + 13


@needs_bwrap
def test_behind_the_proxy_no_unix_socket_can_be_made_yet_an_allowed_host_is_reached(
        sandbox, where, web):
    rules = gate(where, ("127.0.0.1", "allow"))
    plan = sandbox.confine(rules, ["true"])
    close(plan)
    assert "--seccomp" in plan.argv and len(plan.pass_files) == 2
    done = run(sandbox, rules, "python3 -c 'import socket; socket.socket(socket.AF_UNIX)'; "
                               f"curl -sS http://127.0.0.1:{web}/through")
    assert "PermissionError: [Errno 1] Operation not permitted" in done.stderr
    assert done.returncode == 0 and done.stdout == f"page /through for 127.0.0.1:{web}\n"


@needs_bwrap
def test_no_channel_to_find_from_inside(sandbox, where, tmp_path, web):
    # Another session's command is running, its channel open, with a rule for the
    # server; this one's policy allows only example.org. It finds no socket file of
    # any sandbox, and holds no descriptor but its own three (and ls's directory).
    other = Sandbox("auto", where, dict(sandbox.env))
    try:
        lenient = gate(where, ("127.0.0.1", "allow"))
        running = start(other, lenient, "sleep 20")
        strict = gate(where, ("example.org", "allow"))
        done = run(sandbox, strict, "find /tmp -maxdepth 3 -type s -path '*dm_cc-sandbox-*'; "
                                    "ls /proc/self/fd | tr '\\n' ' '; echo; "
                                    f"curl -sS http://127.0.0.1:{web}/")
        running.kill()
        running.communicate()
    finally:
        other.close()
    lines = done.stdout.splitlines()
    assert lines[0] == "0 1 2 3 "
    assert lines[1].startswith(f"{MARK} network access to 127.0.0.1 is not allowed")
    assert not list(Path(sandbox.private_dir()).rglob("sock*"))


@needs_bwrap
def test_commands_leave_no_threads_or_descriptors_behind(sandbox, where, echo):
    rules = gate(where, ("127.0.0.1", "allow"))
    proxy = sandbox.proxy()

    def settled(fds: int | None) -> int:
        """The process's descriptor count once the proxy's threads have ended."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            count = len(os.listdir("/proc/self/fd"))
            if proxy.threads == 0 and (fds is None or count == fds):
                return count
            time.sleep(0.05)
        raise AssertionError(f"{proxy.threads} proxy threads, {count} descriptors, not {fds}")

    assert tunnel(sandbox, rules, f"127.0.0.1:{echo}").returncode == 0
    baseline = settled(None)
    for _ in range(12):
        assert tunnel(sandbox, rules, f"127.0.0.1:{echo}").returncode == 0
    unrun = sandbox.confine(rules, ["true"])  # a plan dropped unrun ends its channel too
    close(unrun)
    assert settled(baseline) == baseline


@needs_bwrap
def test_a_connection_once_the_proxy_is_gone_gets_a_502(sandbox, where, web):
    rules = gate(where, ("127.0.0.1", "allow"))
    proc = start(sandbox, rules, f"sleep 1; curl -sS -o /dev/null -w '%{{http_code}}' "
                                 f"http://127.0.0.1:{web}/")
    sandbox.close()
    out, _ = proc.communicate(timeout=30)
    assert out == "502"


@needs_bwrap
def test_nothing_is_left_running_after_close(sandbox, where, echo):
    rules = gate(where, ("127.0.0.1", "allow"))
    assert tunnel(sandbox, rules, f"127.0.0.1:{echo}").returncode == 0
    # the forwarder ended with its command
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        assert str(FORWARDER).encode() not in cmdline
    proxy = sandbox.proxy()
    sandbox.close()
    assert proxy.threads == 0
    assert not [t for t in threading.enumerate() if t.name.startswith("dm_cc-proxy")]


# --------------------------------------------------------------------------- the proxy alone

@pytest.fixture
def proxy() -> Iterator[Proxy]:
    found = Proxy()
    yield found
    found.close()


def hand_over(channel: socket.socket) -> socket.socket:
    """A TCP connection on the host's loopback, its far end sent over ``channel``
    as the in-sandbox forwarder does: the near end, to talk to the proxy through."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        near = socket.create_connection(listener.getsockname())
        far, _ = listener.accept()
    with far:
        socket.send_fds(channel, [b"c"], [far.fileno()])
    near.settimeout(10)
    return near


@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
@pytest.mark.parametrize(("head", "status"), [
    ("GET / HTTP/1.1", b"400"),                                  # not for a proxy
    ("GET http://127.0.0.1:\u00b2/ HTTP/1.1", b"400"),            # a digit, not an ASCII one
    ("CONNECT 127.0.0.1 HTTP/1.1", b"400"),                      # no port
    ("BREW", b"400"),
    (f"CONNECT {'a' * 64}.example:443 HTTP/1.1", b"502"),         # no such name
    ("CONNECT a\u00df.example:443 HTTP/1.1", b"403"),              # no one reading
])
def test_bad_requests_are_answered(proxy, where, head, status):
    rules = gate(where, ("*", "allow"), ("localhost", "deny"))
    with proxy.channel(rules) as channel, hand_over(channel) as conn:
        conn.sendall(f"{head}\r\n\r\n".encode("latin-1", "replace"))
        assert conn.recv(1000).split(b" ")[1] == status


def own_sockets() -> list[int]:
    """This process's socket descriptors."""
    found = []
    for name in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{name}").startswith("socket:"):
                found.append(int(name))
        except OSError:  # the listing's own descriptor, closed since
            continue
    return found


def inheritance(descriptors: list[int]) -> dict[int, bool]:
    """Whether each descriptor still open is inherited by a program this process runs
    (the proxy's threads may close one between the listing and the look)."""
    found = {}
    for fd in descriptors:
        try:
            found[fd] = os.get_inheritable(fd)
        except OSError:
            continue
    return found


def test_each_channel_is_judged_by_its_own_gate(proxy, where, echo):
    lenient = proxy.channel(gate(where, ("127.0.0.1", "allow")))
    strict = proxy.channel(gate(where, ("example.org", "allow")))
    request = f"CONNECT 127.0.0.1:{echo} HTTP/1.1\r\n\r\n".encode()
    with lenient, strict, hand_over(lenient) as one, hand_over(strict) as other:
        one.sendall(request)
        other.sendall(request)
        assert one.recv(100).startswith(b"HTTP/1.1 200 ")
        assert other.recv(100).startswith(f"HTTP/1.1 403 {REFUSED}".encode())
        # what the proxy received is closed on exec: other commands do not inherit it
        inheritable = inheritance(own_sockets())
        assert len(inheritable) >= 8 and not any(inheritable.values())


def test_what_is_not_a_tcp_connection_is_closed_unused(proxy, where):
    read_end, write_end = os.pipe()
    unix_one, unix_other = socket.socketpair()
    with proxy.channel(gate(where, ("*", "allow"))) as channel, unix_one, unix_other:
        socket.send_fds(channel, [b"c"], [read_end])
        socket.send_fds(channel, [b"c"], [unix_other.fileno()])
        os.close(read_end)
        unix_other.close()
        unix_one.settimeout(10)
        assert unix_one.recv(100) == b""     # closed by the proxy, not answered
        with pytest.raises(BrokenPipeError):
            os.write(write_end, b"GET http://127.0.0.1/ HTTP/1.1\r\n\r\n")
    os.close(write_end)
    assert ended(proxy)


def ended(proxy: Proxy) -> bool:
    """Whether the proxy's threads end (within 10 s): a channel's ends on its own
    once the channel's other end is closed."""
    deadline = time.monotonic() + 10
    while proxy.threads and time.monotonic() < deadline:
        time.sleep(0.01)
    return proxy.threads == 0


def test_a_channel_ends_with_its_inside_end(proxy, where):
    channel = proxy.channel(gate(where, ("*", "allow")))
    assert proxy.threads == 1
    channel.close()
    assert ended(proxy)


def test_an_open_tunnel_is_ended_by_close(where, echo):
    proxy = Proxy()
    rules = gate(where, ("127.0.0.1", "allow"))
    with proxy.channel(rules) as channel, hand_over(channel) as conn:
        conn.sendall(f"CONNECT 127.0.0.1:{echo} HTTP/1.1\r\n\r\n".encode())
        assert conn.recv(100).startswith(b"HTTP/1.1 200 ")
        conn.sendall(b"hi")
        assert conn.recv(100) == b"hi"
        proxy.close()
        assert conn.recv(100) == b""
        assert channel.recv(100) == b""
    assert proxy.threads == 0
    with proxy.channel(rules) as late:   # after close: a channel already ended
        late.settimeout(10)
        assert late.recv(100) == b""


def test_host_names_are_judged_canonical():
    rules = gate_of(("pypi.org", "allow"), ("127.0.0.1", "deny"), ("xn--bcher-kva.example", "allow"))
    assert judge(rules.decide, "PyPI.org.") == "pypi.org"
    assert judge(rules.decide, "xn--bcher-kva.example") == "xn--bcher-kva.example"
    with pytest.raises(Refused):  # a deny in the Unicode spelling holds for the A-label
        judge(gate_of(("*", "allow"), ("bücher.example", "deny")).decide, "xn--bcher-kva.example")
    for refused in ("151.101.0.223", "pypi.org.evil.example", "0x7f.1", "localhost", "a..b"):
        with pytest.raises(Refused):
            judge(rules.decide, refused)
    assert [r.pattern for r in host_requests("0177.0.0.1")][:2] == ["127.0.0.1", "localhost"]
    assert judge(gate_of(("[::1]", "allow")).decide, "[0:0::1]") == "[::1]"


def test_an_address_a_name_resolves_to_is_judged_too():
    name = socket.gethostname()
    try:
        address = socket.getaddrinfo(name, 80, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
    except OSError:
        pytest.skip(f"this machine's name {name!r} does not resolve")
    if host_requests(name)[0].pattern != name.lower():  # type: ignore[index]
        pytest.skip(f"{name!r} is not a plain host name")
    rules = gate_of(("*", "allow"), (address, "deny"))
    assert judge(rules.decide, name) == name.lower()
    with pytest.raises(Refused, match=f"resolves to {address}"):
        resolve(rules.decide, name.lower(), 80)


def gate_of(*rules: tuple[str, str]) -> Gate:
    return Gate([Layer("test", tuple(Rule(NETWORK, p, a) for p, a in rules))])  # type: ignore[arg-type]


# --------------------------------------------------------------------------- the spec

@pytest.mark.parametrize(("rules", "proxy", "expected"), [
    ((), True, "off"),
    ((("*", "allow"),), True, "on"),
    ((("*", "allow"), ("metadata.internal", "deny")), True, "proxy"),
    ((("pypi.org", "allow"),), True, "proxy"),
    ((("pypi.org", "allow"),), False, "off"),
    ((("pypi.org", "allow"), ("*", "deny")), True, "off"),      # the later rule wins
    ((("pypi.org", "deny"), ("*", "allow")), True, "on"),       # likewise
    ((("*", "ask"), ("pypi.org", "ask")), True, "off"),
])
def test_network_mode_from_the_rules(rules, proxy, expected):
    mode, why = _network(gate_of(*rules), Private(tmpdir="/t", own_dir=PROJECT_DIR, network_proxy=proxy))
    assert mode == expected, why


def test_no_proxy_when_the_sandbox_hides_its_python():
    private = Private(tmpdir="/t", own_dir=PROJECT_DIR, network_proxy=True, forwarder=("/opt/py/bin/python3",))
    hidden = [Mount("/opt/py", "deny read /opt/py/** (policy.yaml:3)")]
    mode, why = _network(gate_of(("pypi.org", "allow")), private, hidden)
    assert mode == "off" and why.endswith("needs /opt/py/bin/python3, which the sandbox hides: "
                                          "deny read /opt/py/** (policy.yaml:3)")


def test_the_sandbox_offers_the_proxy(sandbox, where):
    spec = sandbox.spec(gate(where, ("pypi.org", "allow")))
    assert spec.network == "proxy" and "only pypi.org" in spec.network_why


def test_curl_s_refused_tunnel_counts_as_a_sandbox_stop():
    spec = SandboxSpec(cwd="/", network="proxy", network_why="only pypi.org")
    assert stopped_by_sandbox("curl: (56) CONNECT tunnel failed, response 403", spec)
    assert stopped_by_sandbox("curl: (22) The requested URL returned error: 404", spec) is None
    on = SandboxSpec(cwd="/", network="on")
    assert stopped_by_sandbox("CONNECT tunnel failed, response 403", on) is None


def test_loopback_refused_counts_as_a_sandbox_stop_without_the_network():
    refused = "curl: (7) Failed to connect to 127.0.0.1 port 8000: Couldn't connect to server"
    assert "network is off" in (stopped_by_sandbox(refused, SandboxSpec(cwd="/")) or "")
    assert stopped_by_sandbox(refused, SandboxSpec(cwd="/", network="on")) is None
