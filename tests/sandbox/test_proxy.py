"""Per-host network rules through the sandbox's proxy: real servers on the host's
loopback, real confined commands (curl, python3) reaching them only as the
policy says, and nothing left running once the sandbox is closed."""

from __future__ import annotations

import asyncio
import functools
import http.server
import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from dm_cc.config.dirs import HostFilesystem
from dm_cc.permissions import Gate, Layer, PathContext, Rule
from dm_cc.permissions.paths import PathContextDirs
from dm_cc.permissions.rules import NETWORK
from dm_cc.sandbox.derive import Private, _network
from dm_cc.sandbox.host import Sandbox, stopped_by_sandbox
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


def run(box: Sandbox, rules: Gate, command: str) -> subprocess.CompletedProcess[str]:
    plan = box.confine(rules, ["bash", "-c", command])
    assert plan.confined and plan.spec is not None and plan.spec.network == "proxy"
    return subprocess.run(plan.argv, capture_output=True, text=True, timeout=30,
                          stdin=subprocess.DEVNULL, cwd=box.where.root)


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

@pytest.mark.usefixtures("needs_bwrap")
def test_an_allowed_host_is_reached_by_curl_and_python(sandbox, where, web):
    rules = gate(where, ("127.0.0.1", "allow"))
    done = run(sandbox, rules, f"curl -sS http://127.0.0.1:{web}/x && "
                               f"{FETCH} http://127.0.0.1:{web}/y")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"page /x for 127.0.0.1:{web}\npage /y for 127.0.0.1:{web}\n\n"


@pytest.mark.usefixtures("needs_bwrap")
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


@pytest.mark.usefixtures("needs_bwrap")
def test_the_bash_tool_offers_the_escape_when_the_proxy_refuses(sandbox, where, web):
    rules = gate(where, ("127.0.0.1", "allow"))
    ctx = ToolContext(where, session_id="s", agent="build",
                      confine=functools.partial(sandbox.confine, rules))
    params = BashParams(command=f"{FETCH} http://127.0.0.1:{web}/ok && {FETCH} http://localhost:{web}/")
    out = asyncio.run(BashTool().run(params, ctx))
    assert out.output.startswith("page /ok for")
    assert "the sandbox may have stopped this: the sandbox's proxy refused a host" in out.output
    assert out.escape is not None and out.escape.pattern == params.command


@pytest.mark.usefixtures("needs_bwrap")
def test_without_a_rule_for_it_the_default_ask_is_a_no(sandbox, where, web):
    done = run(sandbox, gate(where, ("example.org", "allow")), f"curl -sS http://127.0.0.1:{web}/")
    assert done.stdout.startswith(f"{MARK} network access to 127.0.0.1 is not allowed: "
                                  "no network rule allows it")


@pytest.mark.usefixtures("needs_bwrap")
def test_each_request_is_judged_not_only_a_connection_s_first(sandbox, where, web):
    # curl would reuse a kept-alive proxy connection; the proxy closes each one.
    rules = gate(where, ("127.0.0.1", "allow"))
    done = run(sandbox, rules, f"curl -sS http://127.0.0.1:{web}/a http://localhost:{web}/b")
    assert done.stdout.startswith(f"page /a for 127.0.0.1:{web}\n{MARK} network access to "
                                  "localhost is not allowed")


@pytest.mark.usefixtures("needs_bwrap")
def test_connect_to_an_allowed_host_is_tunnelled(sandbox, where, echo):
    done = tunnel(sandbox, gate(where, ("127.0.0.1", "allow")), f"127.0.0.1:{echo}")
    assert done.stdout == "HTTP/1.1 200 Connection established\nping through the tunnel\n", \
        done.stderr


@pytest.mark.usefixtures("needs_bwrap")
def test_an_ip_spelling_does_not_pass_a_host_rule(sandbox, where, echo):
    # 2130706433 is 127.0.0.1: judged as 127.0.0.1, which only `localhost` was allowed as
    rules = gate(where, ("localhost", "allow"))
    done = tunnel(sandbox, rules, f"2130706433:{echo}")
    assert done.stdout.startswith(f"HTTP/1.1 403 {REFUSED}\n{MARK} network access to "
                                  "127.0.0.1 is not allowed")
    assert "tunnel" not in done.stdout.split("\n", 2)[2]


@pytest.mark.usefixtures("needs_bwrap")
def test_programs_ignoring_the_proxy_have_no_network(sandbox, where, web):
    rules = gate(where, ("127.0.0.1", "allow"))
    done = run(sandbox, rules, f"curl -sS --noproxy '*' http://127.0.0.1:{web}/")
    assert done.returncode != 0 and "page" not in done.stdout
    assert "proxy variables" in (stopped_by_sandbox(done.stderr, sandbox.spec(rules)) or "")


@pytest.mark.usefixtures("needs_bwrap")
def test_the_command_s_exit_status_and_environment(sandbox, where):
    rules = gate(where, ("127.0.0.1", "allow"))
    done = run(sandbox, rules, 'echo "$https_proxy|${no_proxy-unset}|$HTTP_PROXY"; exit 7')
    proxy = done.stdout.split("|")[0]
    assert done.returncode == 7
    assert proxy.startswith("http://127.0.0.1:") and done.stdout == f"{proxy}|unset|{proxy}\n"
    assert run(sandbox, rules, "kill -TERM $$").returncode == 128 + 15


@pytest.mark.usefixtures("needs_bwrap")
def test_nothing_is_left_running_after_close(sandbox, where, echo):
    rules = gate(where, ("127.0.0.1", "allow"))
    token = sandbox.proxy().admit(rules)
    assert tunnel(sandbox, rules, f"127.0.0.1:{echo}").returncode == 0
    # the forwarder ended with its command: no process carries the token any more
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        assert token.encode() not in cmdline
    proxy = sandbox.proxy()
    sandbox.close()
    assert proxy.threads == 0
    assert not [t for t in threading.enumerate() if t.name == "dm_cc-proxy"]
    assert not os.path.exists(proxy.path)


# --------------------------------------------------------------------------- the proxy alone

def test_a_connection_without_the_token_is_dropped(tmp_path, where, echo):
    proxy = Proxy(str(tmp_path / "sock"))
    rules = gate(where, ("*", "allow"))
    proxy.admit(rules)
    try:
        with socket.socket(socket.AF_UNIX) as conn:
            conn.connect(proxy.path)
            conn.sendall(b"0123456789abcdef0123456789abcdef\n"
                         + f"CONNECT 127.0.0.1:{echo} HTTP/1.1\r\n\r\n".encode())
            assert conn.recv(100) == b""
    finally:
        proxy.close()


@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
@pytest.mark.parametrize(("head", "status"), [
    ("GET / HTTP/1.1", b"400"),                                  # not for a proxy
    ("GET http://127.0.0.1:\u00b2/ HTTP/1.1", b"400"),            # a digit, not an ASCII one
    ("CONNECT 127.0.0.1 HTTP/1.1", b"400"),                      # no port
    ("BREW", b"400"),
    (f"CONNECT {'a' * 64}.example:443 HTTP/1.1", b"502"),         # no such name
    ("CONNECT a\u00df.example:443 HTTP/1.1", b"403"),              # no one reading
])
def test_bad_requests_are_answered(tmp_path, where, head, status):
    proxy = Proxy(str(tmp_path / "sock"))
    rules = gate(where, ("*", "allow"), ("localhost", "deny"))
    try:
        with socket.socket(socket.AF_UNIX) as conn:
            conn.connect(proxy.path)
            conn.sendall(f"{proxy.admit(rules)}\n{head}\r\n\r\n".encode("latin-1", "replace"))
            assert conn.recv(1000).split(b" ")[1] == status
    finally:
        proxy.close()


@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_long_token_line_is_dropped(tmp_path):
    proxy = Proxy(str(tmp_path / "sock"))
    try:
        with socket.socket(socket.AF_UNIX) as conn:
            conn.connect(proxy.path)
            conn.sendall(b"x" * 1000)
            assert conn.recv(100) == b""
    finally:
        proxy.close()


def test_an_open_tunnel_is_ended_by_close(tmp_path, where, echo):
    proxy = Proxy(str(tmp_path / "sock"))
    rules = gate(where, ("127.0.0.1", "allow"))
    token = proxy.admit(rules)
    with socket.socket(socket.AF_UNIX) as conn:
        conn.connect(proxy.path)
        conn.sendall(f"{token}\nCONNECT 127.0.0.1:{echo} HTTP/1.1\r\n\r\n".encode())
        assert conn.recv(100).startswith(b"HTTP/1.1 200 ")
        conn.sendall(b"hi")
        assert conn.recv(100) == b"hi"
        proxy.close()
        assert conn.recv(100) == b""
    assert proxy.threads == 0


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
    mode, why = _network(gate_of(*rules), Private(tmpdir="/t", network_proxy=proxy))
    assert mode == expected, why


def test_no_proxy_when_the_sandbox_hides_its_python():
    private = Private(tmpdir="/t", network_proxy=True, forwarder=("/opt/py/bin/python3",))
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
