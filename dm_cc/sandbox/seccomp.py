"""A seccomp filter that keeps a confined command off Unix sockets, as the raw
classic BPF program ``bwrap --seccomp FD`` loads (built here, no libseccomp).

Why: ``--unshare-net`` takes the network away, but ``connect()`` to a Unix socket
on the (read-only) file system still works: the X server (/tmp/.X11-unix), the
system D-Bus, a database, an agent. A read-only mount does not stop ``connect()``,
and not every socket can be known and hidden. So ``socket(AF_UNIX, …)`` fails with
EPERM. So does a datagram ``socketpair()``: one end of it can ``sendto()`` (or
``connect()`` to) any datagram socket on the file system, syslog's /dev/log say.
A stream or seqpacket pair stays: it is connected for good (an address given to
``sendto`` or ``connect`` fails with EISCONN, or is ignored), and Python's asyncio
and many programs' IPC need it.

    program = unix_socket_filter()        # bytes, or None on an architecture we lack
    file = filter_file(program)            # a sealed memfd holding it, for --seccomp

What the filter does, per system call (``struct seccomp_data``: nr, arch, …, args):

- the architecture is checked first. x86_64 hosts: x86_64 calls, and i386 calls
  (a 32-bit program, or ``int 0x80``); aarch64 hosts: aarch64 calls and 32-bit ARM
  ones. Any other architecture kills the process: it cannot happen on these hosts,
  and a filter that guessed would be a hole.
- x86_64's x32 calls (numbers with ``__X32_SYSCALL_BIT``) all fail with EPERM: they
  are another door to ``socket``, and no program a coding agent runs uses x32.
- ``socket`` whose first argument (its low 32 bits: the kernel reads an ``int``) is
  AF_UNIX fails with EPERM; every other family is allowed (a TCP socket can still
  be made; with the network off it reaches nothing).
- ``socketpair`` is allowed only for AF_UNIX with the type (its low four bits: the
  kernel masks SOCK_NONBLOCK and SOCK_CLOEXEC off) SOCK_STREAM or SOCK_SEQPACKET;
  anything else fails with EPERM: SOCK_DGRAM, and SOCK_RAW, which AF_UNIX turns into
  a datagram socket (net/unix/af_unix.c, ``unix_create``). Other families have no
  socketpair anyway.
- i386's ``socketcall(SYS_SOCKET, args)`` and ``socketcall(SYS_SOCKETPAIR, args)``
  fail with EPERM whatever the family and type: the arguments are in memory, which
  a filter cannot read. Old 32-bit programs make sockets this way; with the network
  off they lose little. The other sub-calls stay allowed: without a socket of
  their own to use them on they reach nothing.
- ``io_uring_setup`` fails with EPERM: an io_uring's IORING_OP_SOCKET (Linux 5.19)
  makes a socket without the ``socket`` call. Programs fall back to plain calls.
- everything else is allowed.

Where it could fail open, it fails closed: an unexpected architecture in a call
kills the process; a filter file that cannot be made refuses the command
(``Sandbox.confine``); a command line naming a file the runner did not pass makes
bwrap stop ("Can't read seccomp data"). Only on a host whose architecture has no
tables here does a confined command run without the filter, and the spec's notes
(``dm_cc sandbox status``) say so.

Facts come from the kernel's headers: <linux/audit.h> (AUDIT_ARCH_*),
<linux/seccomp.h> (SECCOMP_RET_*, struct seccomp_data), <linux/filter.h> and
<linux/bpf_common.h> (opcodes, struct sock_filter), arch/x86/entry/syscalls/
syscall_64.tbl and syscall_32.tbl, include/uapi/asm-generic/unistd.h (aarch64),
arch/arm/tools/syscall.tbl, <linux/net.h> (SYS_SOCKET, SYS_SOCKETPAIR, SOCK_TYPE_MASK),
<linux/net.h> and <asm-generic/socket.h> (SOCK_STREAM 1, SOCK_DGRAM 2, SOCK_SEQPACKET 5).
"""

from __future__ import annotations

import errno
import fcntl
import os
import platform
import struct
from dataclasses import dataclass
from typing import BinaryIO

AF_UNIX = 1
SOCK_STREAM = 1
SOCK_SEQPACKET = 5
SOCK_TYPE_MASK = 0xF              # the type's bits; the rest are SOCK_NONBLOCK, SOCK_CLOEXEC
SYS_SOCKET = 1                    # socketcall's first argument for socket()
SYS_SOCKETPAIR = 8                # ... and for socketpair()
X32_SYSCALL_BIT = 0x4000_0000

# <linux/audit.h>: EM_* | __AUDIT_ARCH_64BIT (0x80000000) | __AUDIT_ARCH_LE (0x40000000)
AUDIT_ARCH_X86_64 = 0xC000_003E
AUDIT_ARCH_I386 = 0x4000_0003
AUDIT_ARCH_AARCH64 = 0xC000_00B7
AUDIT_ARCH_ARM = 0x4000_0028

# <linux/seccomp.h>
SECCOMP_RET_KILL_PROCESS = 0x8000_0000
SECCOMP_RET_ERRNO = 0x0005_0000
SECCOMP_RET_ALLOW = 0x7FFF_0000
DENY = SECCOMP_RET_ERRNO | errno.EPERM

# struct seccomp_data offsets: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]
OFFSET_NR = 0
OFFSET_ARCH = 4
OFFSET_ARG0_LOW = 16              # little-endian: the low half of args[0] comes first
OFFSET_ARG1_LOW = 24

# <linux/bpf_common.h>
BPF_LD_W_ABS = 0x00 | 0x00 | 0x20     # BPF_LD | BPF_W | BPF_ABS
BPF_JEQ_K = 0x05 | 0x10 | 0x00        # BPF_JMP | BPF_JEQ | BPF_K
BPF_JGE_K = 0x05 | 0x30 | 0x00        # BPF_JMP | BPF_JGE | BPF_K
BPF_AND_K = 0x04 | 0x50 | 0x00        # BPF_ALU | BPF_AND | BPF_K
BPF_RET_K = 0x06 | 0x00               # BPF_RET | BPF_K


@dataclass(frozen=True, slots=True)
class Abi:
    """One system-call table the filter guards: its audit arch and the numbers."""

    name: str
    audit_arch: int
    socket: int
    socketpair: int
    io_uring_setup: int
    socketcall: int | None = None     # the multiplexer, where the table has one
    x32_bit: bool = False             # numbers with __X32_SYSCALL_BIT share this arch


X86_64 = Abi("x86_64", AUDIT_ARCH_X86_64, socket=41, socketpair=53, io_uring_setup=425,
             x32_bit=True)
I386 = Abi("i386", AUDIT_ARCH_I386, socket=359, socketpair=360, io_uring_setup=425,
           socketcall=102)
AARCH64 = Abi("aarch64", AUDIT_ARCH_AARCH64, socket=198, socketpair=199, io_uring_setup=425)
ARM = Abi("arm", AUDIT_ARCH_ARM, socket=281, socketpair=288, io_uring_setup=425)

# The host's machine name -> every table a process on it may call through.
HOSTS: dict[str, tuple[Abi, ...]] = {
    "x86_64": (X86_64, I386),
    "aarch64": (AARCH64, ARM),
}


class _Assembler:
    """Classic BPF with forward jumps to labels (``jt``/``jf`` are 8-bit offsets)."""

    def __init__(self) -> None:
        self.code: list[tuple[int, int | str, int | str, int]] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        assert name not in self.labels, name
        self.labels[name] = len(self.code)

    def load(self, offset: int) -> None:
        self.code.append((BPF_LD_W_ABS, 0, 0, offset))

    def jump(self, op: int, k: int, true: int | str = 0, false: int | str = 0) -> None:
        self.code.append((op, true, false, k))

    def mask(self, k: int) -> None:
        self.code.append((BPF_AND_K, 0, 0, k))

    def ret(self, k: int) -> None:
        self.code.append((BPF_RET_K, 0, 0, k))

    def program(self) -> bytes:
        out = bytearray()
        for at, (op, true, false, k) in enumerate(self.code):
            out += struct.pack("=HBBI", op, self._offset(at, true), self._offset(at, false), k)
        return bytes(out)

    def _offset(self, at: int, target: int | str) -> int:
        if isinstance(target, int):
            return target
        offset = self.labels[target] - at - 1
        assert 0 <= offset <= 255, (target, offset)
        return offset


def build(abis: tuple[Abi, ...]) -> bytes:
    """The filter for a host whose processes call through ``abis``."""
    asm = _Assembler()
    asm.load(OFFSET_ARCH)
    for abi in abis:
        asm.jump(BPF_JEQ_K, abi.audit_arch, true=abi.name)
    asm.ret(SECCOMP_RET_KILL_PROCESS)
    for abi in abis:
        asm.label(abi.name)
        asm.load(OFFSET_NR)
        if abi.x32_bit:
            asm.jump(BPF_JGE_K, X32_SYSCALL_BIT, true="deny")
        asm.jump(BPF_JEQ_K, abi.socket, true="check-family")
        asm.jump(BPF_JEQ_K, abi.socketpair, true="check-pair")
        asm.jump(BPF_JEQ_K, abi.io_uring_setup, true="deny")
        if abi.socketcall is not None:
            asm.jump(BPF_JEQ_K, abi.socketcall, true="check-socketcall")
        asm.ret(SECCOMP_RET_ALLOW)
    asm.label("check-family")
    asm.load(OFFSET_ARG0_LOW)
    asm.jump(BPF_JEQ_K, AF_UNIX, true="deny")
    asm.ret(SECCOMP_RET_ALLOW)
    asm.label("check-pair")             # only AF_UNIX stream and seqpacket pairs
    asm.load(OFFSET_ARG0_LOW)
    asm.jump(BPF_JEQ_K, AF_UNIX, false="deny")
    asm.load(OFFSET_ARG1_LOW)
    asm.mask(SOCK_TYPE_MASK)
    asm.jump(BPF_JEQ_K, SOCK_STREAM, true="allow")
    asm.jump(BPF_JEQ_K, SOCK_SEQPACKET, true="allow")
    asm.ret(DENY)
    if any(abi.socketcall is not None for abi in abis):
        asm.label("check-socketcall")
        asm.load(OFFSET_ARG0_LOW)
        asm.jump(BPF_JEQ_K, SYS_SOCKET, true="deny")
        asm.jump(BPF_JEQ_K, SYS_SOCKETPAIR, true="deny")
        asm.ret(SECCOMP_RET_ALLOW)
    asm.label("allow")
    asm.ret(SECCOMP_RET_ALLOW)
    asm.label("deny")
    asm.ret(DENY)
    return asm.program()


def unix_socket_filter(machine: str | None = None) -> bytes | None:
    """The filter for this host (or ``machine``), or None where we have no tables."""
    abis = HOSTS.get(machine if machine is not None else platform.machine())
    return build(abis) if abis is not None else None


def unsupported_note(machine: str | None = None) -> str:
    """What ``sandbox status`` says when there is no filter for this host."""
    name = machine if machine is not None else platform.machine()
    return (f"Unix sockets stay reachable: no seccomp filter for this architecture ({name}; "
            f"known: {', '.join(HOSTS)}), so a confined command can connect() to sockets "
            "on the file system (X server, D-Bus, databases)")


def filter_file(program: bytes) -> BinaryIO:
    """A fresh in-memory file holding ``program``, read from its start, sealed
    against change, closed on exec in this process's other children. bwrap reads it
    to its end, so each command needs its own."""
    fd = os.memfd_create("dm_cc-seccomp", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        os.write(fd, program)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK
                    | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return open(fd, "rb", buffering=0)  # noqa: SIM115 - the Plan owns it; the runner closes it
