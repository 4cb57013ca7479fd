"""The seccomp filter that keeps confined commands off Unix sockets.

The program is checked two ways: run by a small classic-BPF interpreter over
``struct seccomp_data`` for every architecture it knows (aarch64 and 32-bit ARM
cannot run here), and for real through bwrap the way the bash tool runs commands:
Python, git, pytest, a Unix socket server on the host, and hand-made i386 and x32
executables. Each real denial has a control run with the network on (no filter)
that shows the same thing working.
"""

from __future__ import annotations

import asyncio
import functools
import os
import socket
import struct
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import elf
from support.as_user import as_user, python_for
from support.bwrap import needs_bwrap

from dm_cc.config.dirs import HostFilesystem
from dm_cc.permissions import Gate, PathContext, Rule
from dm_cc.permissions.gate import Layer
from dm_cc.permissions.paths import PathContextDirs
from dm_cc.sandbox import seccomp
from dm_cc.sandbox.host import Plan, Sandbox, with_unix_socket_note
from dm_cc.sandbox.spec import SandboxSpec
from dm_cc.tools.base import ToolContext
from dm_cc.tools.bash import BashParams, BashTool, Ran, run_command

# --------------------------------------------------------------- the program, interpreted

ALLOW, DENY, KILL = seccomp.SECCOMP_RET_ALLOW, seccomp.DENY, seccomp.SECCOMP_RET_KILL_PROCESS


def evaluate(program: bytes, arch: int, nr: int, *args: int) -> int:
    """What the kernel would do with the call: run ``program`` over its seccomp_data."""
    data = struct.pack("<iIQ6Q", nr - (1 << 32) if nr >= 1 << 31 else nr, arch, 0,
                       *(list(args) + [0] * 6)[:6])
    code = [struct.unpack_from("=HBBI", program, at) for at in range(0, len(program), 8)]
    pc, acc = 0, 0
    while True:
        op, true, false, k = code[pc]
        if op == seccomp.BPF_LD_W_ABS:
            acc = struct.unpack_from("<I", data, k)[0]
        elif op == seccomp.BPF_JEQ_K:
            pc += true if acc == k else false
        elif op == seccomp.BPF_JGE_K:
            pc += true if acc >= k else false
        elif op == seccomp.BPF_AND_K:
            acc &= k
        elif op == seccomp.BPF_RET_K:
            return k
        else:
            raise AssertionError(f"unexpected opcode {op:#x}")
        pc += 1


X86 = seccomp.unix_socket_filter("x86_64")
NONBLOCK, CLOEXEC = 0o4000, 0o2000000       # SOCK_NONBLOCK, SOCK_CLOEXEC (x86, ARM)
ARM64 = seccomp.unix_socket_filter("aarch64")


@pytest.mark.parametrize(("program", "arch", "nr", "args", "expected"), [
    # x86_64: socket 41, socketpair 53, io_uring_setup 425
    (X86, seccomp.AUDIT_ARCH_X86_64, 41, (1, 1, 0), DENY),
    (X86, seccomp.AUDIT_ARCH_X86_64, 41, (2, 1, 0), ALLOW),
    (X86, seccomp.AUDIT_ARCH_X86_64, 41, (10, 2, 0), ALLOW),
    (X86, seccomp.AUDIT_ARCH_X86_64, 41, ((7 << 32) | 1, 1, 0), DENY),   # the kernel reads an int
    (X86, seccomp.AUDIT_ARCH_X86_64, 53, (1, 1, 0), ALLOW),                # socketpair: stream
    (X86, seccomp.AUDIT_ARCH_X86_64, 53, (1, 5, 0), ALLOW),                # seqpacket
    (X86, seccomp.AUDIT_ARCH_X86_64, 53, (1, 1 | NONBLOCK | CLOEXEC, 0), ALLOW),
    (X86, seccomp.AUDIT_ARCH_X86_64, 53, (1, 2, 0), DENY),                 # datagram
    (X86, seccomp.AUDIT_ARCH_X86_64, 53, (1, 2 | NONBLOCK | CLOEXEC, 0), DENY),
    (X86, seccomp.AUDIT_ARCH_X86_64, 53, (1, 3, 0), DENY),                 # raw: a datagram one
    (X86, seccomp.AUDIT_ARCH_X86_64, 53, (1, 10, 0), DENY),                # packet, or unknown
    (X86, seccomp.AUDIT_ARCH_X86_64, 53, ((7 << 32) | 1, (9 << 32) | 1, 0), ALLOW),  # ints
    (X86, seccomp.AUDIT_ARCH_X86_64, 53, ((7 << 32) | 1, (9 << 32) | 2, 0), DENY),
    (X86, seccomp.AUDIT_ARCH_X86_64, 53, (2, 1, 0), DENY),                 # not AF_UNIX
    (X86, seccomp.AUDIT_ARCH_X86_64, 425, (8, 0), DENY),
    (X86, seccomp.AUDIT_ARCH_X86_64, 42, (1,), ALLOW),                    # connect
    (X86, seccomp.AUDIT_ARCH_X86_64, 0, (1,), ALLOW),                     # read
    (X86, seccomp.AUDIT_ARCH_X86_64, 0x4000_0000 | 41, (2, 1, 0), DENY),  # any x32 call
    (X86, seccomp.AUDIT_ARCH_X86_64, 0x4000_0000 | 1, (1,), DENY),
    # i386 on x86_64: socket 359, socketcall 102, socketpair 360
    (X86, seccomp.AUDIT_ARCH_I386, 359, (1, 1, 0), DENY),
    (X86, seccomp.AUDIT_ARCH_I386, 359, (2, 1, 0), ALLOW),
    (X86, seccomp.AUDIT_ARCH_I386, 102, (1, 0xFFFF_0000), DENY),          # SYS_SOCKET
    (X86, seccomp.AUDIT_ARCH_I386, 102, (8, 0xFFFF_0000), DENY),          # SYS_SOCKETPAIR
    (X86, seccomp.AUDIT_ARCH_I386, 102, (3, 0xFFFF_0000), ALLOW),         # SYS_CONNECT
    (X86, seccomp.AUDIT_ARCH_I386, 360, (1, 1, 0), ALLOW),
    (X86, seccomp.AUDIT_ARCH_I386, 360, (1, 2, 0), DENY),
    (X86, seccomp.AUDIT_ARCH_I386, 360, (1, 3 | CLOEXEC, 0), DENY),
    (X86, seccomp.AUDIT_ARCH_I386, 425, (8, 0), DENY),
    (X86, seccomp.AUDIT_ARCH_I386, 41, (1, 1, 0), ALLOW),                 # 41 is dup on i386
    (X86, seccomp.AUDIT_ARCH_AARCH64, 198, (1, 1, 0), KILL),              # not this host's
    # aarch64: socket 198, socketpair 199; 32-bit ARM: socket 281
    (ARM64, seccomp.AUDIT_ARCH_AARCH64, 198, (1, 1, 0), DENY),
    (ARM64, seccomp.AUDIT_ARCH_AARCH64, 198, (2, 1, 0), ALLOW),
    (ARM64, seccomp.AUDIT_ARCH_AARCH64, 199, (1, 1, 0), ALLOW),
    (ARM64, seccomp.AUDIT_ARCH_AARCH64, 199, (1, 2, 0), DENY),
    (ARM64, seccomp.AUDIT_ARCH_AARCH64, 199, (1, 2 | NONBLOCK, 0), DENY),
    (ARM64, seccomp.AUDIT_ARCH_ARM, 288, (1, 1, 0), ALLOW),               # ARM socketpair
    (ARM64, seccomp.AUDIT_ARCH_ARM, 288, (1, 2, 0), DENY),
    (ARM64, seccomp.AUDIT_ARCH_AARCH64, 425, (8, 0), DENY),
    (ARM64, seccomp.AUDIT_ARCH_AARCH64, 0x4000_0000 | 41, (1,), ALLOW),   # no x32 there
    (ARM64, seccomp.AUDIT_ARCH_ARM, 281, (1, 1, 0), DENY),
    (ARM64, seccomp.AUDIT_ARCH_ARM, 281, (2, 1, 0), ALLOW),
    (ARM64, seccomp.AUDIT_ARCH_ARM, 425, (8, 0), DENY),
    (ARM64, seccomp.AUDIT_ARCH_X86_64, 41, (1, 1, 0), KILL),
])
def test_the_program_decides_each_call(program: bytes | None, arch: int, nr: int,
                                       args: tuple[int, ...], expected: int) -> None:
    assert program is not None
    assert evaluate(program, arch, nr, *args) == expected


def test_denial_is_eperm_and_the_program_is_whole_instructions() -> None:
    assert seccomp.DENY == 0x0005_0001
    assert X86 is not None and len(X86) % 8 == 0 and len(X86) // 8 < 64


def test_no_filter_and_a_note_on_an_unknown_architecture(monkeypatch: pytest.MonkeyPatch) -> None:
    assert seccomp.unix_socket_filter("riscv64") is None
    assert "riscv64" in seccomp.unsupported_note("riscv64")
    monkeypatch.setattr("dm_cc.sandbox.host._filter", lambda: None)
    off = with_unix_socket_note(SandboxSpec(cwd="/p", network="off"))
    assert any("Unix sockets stay reachable" in note for note in off.notes)
    assert with_unix_socket_note(SandboxSpec(cwd="/p", network="on")).notes == ()


def test_the_filter_file_is_sealed_and_read_from_its_start() -> None:
    assert X86 is not None
    file = seccomp.filter_file(X86)
    try:
        assert file.read() == X86
        with pytest.raises(PermissionError):
            os.pwrite(file.fileno(), b"x", 0)
    finally:
        file.close()


# --------------------------------------------------------------- real commands in bwrap

@pytest.fixture
def where(tmp_path: Path) -> PathContextDirs:
    project, home = tmp_path / "p", tmp_path / "h"
    project.mkdir()
    home.mkdir()
    return PathContextDirs(project, project, home, HostFilesystem())


@pytest.fixture
def sandbox(where: PathContextDirs) -> Sandbox:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(where.home),
           "DM_CC_HOME": str(where.home / "dm_cc")}
    return Sandbox("required", where, env)


def gate(where: PathContextDirs, *rules: Rule) -> Gate:
    return Gate([Layer("test", tuple(rules))], PathContext(where.root.as_posix(),
                                                          where.home.as_posix()))


NETWORK_ON = Rule("network", "*", "allow")


def run(sandbox: Sandbox, command: str, *rules: Rule) -> tuple[Ran, Plan]:
    """Run ``command`` confined as the bash tool does, under ``rules``."""
    plan = sandbox.confine(gate(sandbox.where, *rules), ["bash", "-c", command])
    assert plan.confined and plan.refusal is None
    ran = asyncio.run(run_command(plan.argv, sandbox.where.root, 60,
                                  pass_files=plan.pass_files))
    return ran, plan


def python(code: str, interpreter: str = sys.executable) -> str:
    return f"{interpreter} -c '{textwrap.dedent(code)}'"


@needs_bwrap
def test_a_unix_socket_cannot_be_made_with_the_network_off(sandbox: Sandbox) -> None:
    ran, plan = run(sandbox, python("import socket; socket.socket(socket.AF_UNIX)"))
    assert plan.spec is not None and plan.spec.network == "off"
    assert "--seccomp" in plan.argv and ran.code == 1, ran.text
    assert "PermissionError: [Errno 1] Operation not permitted" in ran.text


@needs_bwrap
def test_the_bash_tool_passes_the_filter_to_bwrap(sandbox: Sandbox) -> None:
    where = sandbox.where
    ctx = ToolContext(where, session_id="s1", agent="build",
                      confine=functools.partial(sandbox.confine, gate(where)))
    params = BashParams(command=python("import socket; socket.socket(socket.AF_UNIX)"))
    result = asyncio.run(BashTool().run(params, ctx))
    assert "PermissionError" in result.output and "exit code 1" in result.output


@needs_bwrap
def test_the_plans_filter_file_is_closed_once_the_command_started(sandbox: Sandbox) -> None:
    ran, plan = run(sandbox, "true")
    assert ran.code == 0 and len(plan.pass_files) == 1
    assert all(file.closed for file in plan.pass_files)


@needs_bwrap
def test_a_plan_run_without_its_filter_file_fails_instead_of_running_unfiltered(
        sandbox: Sandbox) -> None:
    plan = sandbox.confine(gate(sandbox.where), ["bash", "-c", "echo reached"])
    try:
        ran = asyncio.run(run_command(plan.argv, sandbox.where.root, 60))
    finally:
        for file in plan.pass_files:
            file.close()
    assert ran.code != 0 and "seccomp" in ran.text and "reached" not in ran.text


@pytest.fixture
def unix_server(tmp_path: Path) -> Iterator[tuple[str, list[bytes]]]:
    """A Unix socket server on the host, outside the project: what it was sent."""
    path = str(tmp_path / "server.sock")
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen()
    server.settimeout(30)
    received: list[bytes] = []

    def serve() -> None:
        try:
            while True:
                conn, _ = server.accept()
                with conn:
                    received.append(conn.recv(100))
        except OSError:
            return

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield path, received
    server.shutdown(socket.SHUT_RDWR)   # wakes the accept
    server.close()
    thread.join(5)


CONNECT = """
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"hello from inside")
s.close()
"""


@needs_bwrap
def test_connecting_to_a_unix_socket_on_the_host_fails(
        sandbox: Sandbox, unix_server: tuple[str, list[bytes]]) -> None:
    path, received = unix_server
    ran, _ = run(sandbox, python(CONNECT) + f" {path}")
    assert ran.code == 1 and "PermissionError" in ran.text, ran.text
    assert received == []


@needs_bwrap
def test_with_the_network_on_there_is_no_filter_and_the_socket_is_reached(
        sandbox: Sandbox, unix_server: tuple[str, list[bytes]]) -> None:
    path, received = unix_server
    ran, plan = run(sandbox, python(CONNECT) + f" {path}", NETWORK_ON)
    assert plan.spec is not None and plan.spec.network == "on"
    assert "--seccomp" not in plan.argv and plan.pass_files == ()
    assert ran.code == 0, ran.text
    assert received == [b"hello from inside"]


INTERNAL_IPC = """
import asyncio, socket
a, b = socket.socketpair()
a.sendall(b"ping")
assert b.recv(4) == b"ping"
async def main():
    await asyncio.sleep(0)
    return 42
assert asyncio.run(main()) == 42
tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
try:
    tcp.connect(("127.0.0.1", 9))
except OSError as exc:
    print("tcp connect:", type(exc).__name__)
print("ok")
"""


@needs_bwrap
def test_socketpair_asyncio_and_tcp_sockets_still_work(sandbox: Sandbox) -> None:
    ran, _ = run(sandbox, python(INTERNAL_IPC))
    assert ran.code == 0, ran.text
    assert "ok" in ran.text
    # The TCP socket was made; with the network off it has nowhere to go.
    assert "tcp connect: ConnectionRefusedError" in ran.text or "Network" in ran.text


IO_URING = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
fd = libc.syscall(425, 4, params)
print("io_uring_setup", fd, os.strerror(ctypes.get_errno()) if fd < 0 else "")
"""


@needs_bwrap
@pytest.mark.skipif(os.uname().machine != "x86_64", reason="syscall number for x86_64")
def test_io_uring_setup_is_denied(sandbox: Sandbox) -> None:
    ran, _ = run(sandbox, python(IO_URING))
    assert "io_uring_setup -1 Operation not permitted" in ran.text, ran.text


@needs_bwrap
@pytest.mark.skipif(os.uname().machine != "x86_64", reason="x86 executables")
@pytest.mark.parametrize(("name", "program", "filtered"), [
    ("i386 socket(AF_UNIX)", elf.i386_socket(1), elf.EXIT_EPERM),
    ("i386 socket(AF_INET)", elf.i386_socket(2), elf.EXIT_FD3),
    ("i386 socketcall(SYS_SOCKET, AF_UNIX)", elf.i386_socketcall(1), elf.EXIT_EPERM),
    ("i386 socketcall(SYS_SOCKET, AF_INET)", elf.i386_socketcall(2), elf.EXIT_EPERM),
    ("x32 socket(AF_INET)", elf.x32_socket(2), elf.EXIT_EPERM),
])
def test_32_bit_and_x32_calls_do_not_go_round_the_filter(
        sandbox: Sandbox, name: str, program: bytes, filtered: int) -> None:
    binary = sandbox.where.root / "probe"
    binary.write_bytes(program)
    binary.chmod(0o755)
    control, _ = run(sandbox, "./probe", NETWORK_ON)
    if control.code not in (elf.EXIT_FD3, elf.EXIT_ENOSYS):
        pytest.skip(f"this kernel does not run {name} programs ({control.text.strip()})")
    ran, _ = run(sandbox, "./probe")
    assert ran.code == filtered, (name, ran.text)


TEST_FILE = """
def test_adds():
    assert 1 + 1 == 2
"""


@needs_bwrap
def test_git_status_and_pytest_still_work(sandbox: Sandbox) -> None:
    root = sandbox.where.root
    (root / "test_tiny.py").write_text(TEST_FILE)
    ran, _ = run(sandbox, "git init -q . && git status --short && "
                          f"{sys.executable} -m pytest -q -p no:cacheprovider test_tiny.py")
    assert ran.code == 0, ran.text
    assert "?? test_tiny.py" in ran.text and "1 passed" in ran.text


# --------------------------------------------------------------- datagrams to host sockets



@pytest.fixture
def shared_sandbox(shared: Path) -> Sandbox:
    project, home = shared / "p", shared / "h"
    project.mkdir()
    home.mkdir()
    where = PathContextDirs(project, project, home, HostFilesystem())
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
           "DM_CC_HOME": str(home / "dm_cc")}
    return Sandbox("required", where, env)


@pytest.fixture
def datagram_server(shared: Path) -> Iterator[tuple[str, socket.socket]]:
    """A Unix datagram socket bound on the host (as syslog's /dev/log is), in a
    directory the confined command sees, writable by anyone (so by sbtest too)."""
    path = str(shared / "dgram.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(path)
    os.chmod(path, 0o777)
    server.setblocking(False)
    yield path, server
    server.close()


def received(server: socket.socket) -> list[bytes]:
    found = []
    while True:
        try:
            found.append(server.recv(100))
        except BlockingIOError:
            return found


def run_as(sandbox: Sandbox, user: str | None, command: str, *rules: Rule) -> Ran:
    plan = sandbox.confine(gate(sandbox.where, *rules), ["bash", "-c", command])
    assert plan.confined and plan.refusal is None
    plan = as_user(plan, user, sandbox.where.root.parent, sandbox.private_dir())
    return asyncio.run(run_command(plan.argv, sandbox.where.root, 60,
                                   pass_files=plan.pass_files))


DATAGRAM = """
import socket, sys
kind, path, how = sys.argv[1:4]
types = {"dgram": socket.SOCK_DGRAM, "raw": socket.SOCK_RAW,
         "flags": socket.SOCK_DGRAM | socket.SOCK_NONBLOCK | socket.SOCK_CLOEXEC}
try:
    a, b = socket.socketpair(socket.AF_UNIX, types[kind])
except OSError as exc:
    print("socketpair refused:", exc.strerror)
    sys.exit(3)
if how == "sendto":
    a.sendto(b"hello from inside", path)
else:
    a.connect(path)
    a.send(b"hello from inside")
print("sent")
"""


@needs_bwrap
@pytest.mark.parametrize("how", ["sendto", "connect"])
@pytest.mark.parametrize("kind", ["dgram", "raw", "flags"])
def test_a_datagram_socketpair_cannot_reach_a_host_socket(
        shared_sandbox: Sandbox, datagram_server: tuple[str, socket.socket], user: str | None,
        kind: str, how: str) -> None:
    """``socketpair(AF_UNIX, SOCK_DGRAM)`` then ``sendto(host path)`` (or ``connect``)
    reached /dev/log or any datagram socket of the host with the network off. A raw
    Unix socket is a datagram one (the kernel makes it so)."""
    path, server = datagram_server
    command = python(DATAGRAM, python_for(user)) + f" {kind} {path} {how}"
    control = run_as(shared_sandbox, user, command, NETWORK_ON)        # no filter: it does
    assert "sent" in control.text and received(server) == [b"hello from inside"], control.text
    ran = run_as(shared_sandbox, user, command)
    assert ran.code == 3 and "socketpair refused: Operation not permitted" in ran.text, ran.text
    assert received(server) == []


STREAM_PAIRS = """
import asyncio, errno, socket, sys
path = sys.argv[1]
a, b = socket.socketpair()
for attempt in (lambda: a.sendto(b"x", path), lambda: a.connect(path)):
    try:
        attempt()
    except OSError as exc:
        print("refused:", errno.errorcode[exc.errno])
a.sendall(b"ping")
assert b.recv(4) == b"ping"
b.close()
try:
    a.connect(path)
except OSError as exc:
    print("after close:", errno.errorcode[exc.errno])
c, d = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
c.sendto(b"to my peer", path)       # a connected seqpacket socket ignores the address
assert d.recv(100) == b"to my peer"
assert asyncio.run(asyncio.sleep(0, 42)) == 42
print("ok")
"""


@needs_bwrap
def test_stream_and_seqpacket_socketpairs_still_work_and_reach_nothing_outside(
        shared_sandbox: Sandbox, datagram_server: tuple[str, socket.socket],
        user: str | None) -> None:
    """asyncio's self-pipe and many programs' IPC use stream pairs: they keep
    working, and an address given to them goes nowhere (EISCONN)."""
    path, server = datagram_server
    ran = run_as(shared_sandbox, user, python(STREAM_PAIRS, python_for(user)) + f" {path}")
    assert ran.code == 0 and "ok" in ran.text, ran.text
    assert "refused: EISCONN" in ran.text and ran.text.count("refused:") == 2, ran.text
    assert "after close:" in ran.text, ran.text     # EPROTOTYPE: a stream one, a datagram socket
    assert received(server) == []
