"""Tiny static executables for the tests: one system call's result as the exit
status, so a test can run a 32-bit (i386) or an x32 call for real.

Each program makes its call, then exits with the negated return value: 1 when the
call failed with EPERM, 38 with ENOSYS, 253 when it returned file descriptor 3.
The machine code is written out byte by byte (Intel SDM opcodes) beside its
assembly.
"""

from __future__ import annotations

import struct

EXIT_EPERM, EXIT_ENOSYS, EXIT_FD3 = 1, 38, 253


def _i386_elf(code: bytes) -> bytes:
    """A 32-bit ELF executable: one loadable segment holding the headers and ``code``."""
    base, header = 0x0804_8000, 52 + 32
    size = header + len(code)
    ident = b"\x7fELF" + bytes([1, 1, 1]) + bytes(9)          # 32-bit, little-endian, v1
    elf = ident + struct.pack("<HHIIIIIHHHHHH", 2, 3, 1, base + header, 52, 0, 0,
                              52, 32, 1, 0, 0, 0)              # EXEC, EM_386, entry, phoff
    phdr = struct.pack("<IIIIIIII", 1, 0, base, base, size, size, 5, 0x1000)  # PT_LOAD, R+X
    return elf + phdr + code


def _x86_64_elf(code: bytes) -> bytes:
    """A 64-bit ELF executable: one loadable segment holding the headers and ``code``."""
    base, header = 0x40_0000, 64 + 56
    size = header + len(code)
    ident = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)          # 64-bit, little-endian, v1
    elf = ident + struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, base + header, 64, 0, 0,
                              64, 56, 1, 0, 0, 0)              # EXEC, EM_X86_64, entry, phoff
    phdr = struct.pack("<IIQQQQQQ", 1, 5, 0, base, base, size, size, 0x1000)
    return elf + phdr + code


_I386_EXIT = bytes.fromhex(
    "89c3"          # mov ebx, eax
    "f7db"          # neg ebx
    "b801000000"    # mov eax, 1 (exit)
    "cd80")         # int 0x80


def i386_socket(family: int) -> bytes:
    """socket(family, SOCK_STREAM, 0) through i386's socket call (359)."""
    return _i386_elf(bytes.fromhex("b867010000")         # mov eax, 359
                     + b"\xbb" + struct.pack("<I", family)  # mov ebx, family
                     + bytes.fromhex("b901000000"        # mov ecx, 1 (SOCK_STREAM)
                                     "31d2"              # xor edx, edx
                                     "cd80")             # int 0x80
                     + _I386_EXIT)


def i386_socketcall(family: int) -> bytes:
    """socketcall(SYS_SOCKET, {family, SOCK_STREAM, 0}): the old multiplexer (102)."""
    return _i386_elf(bytes.fromhex("6a00"                # push 0 (protocol)
                                   "6a01")               # push 1 (SOCK_STREAM)
                     + b"\x6a" + bytes([family])         # push family
                     + bytes.fromhex("89e1"              # mov ecx, esp
                                     "bb01000000"        # mov ebx, 1 (SYS_SOCKET)
                                     "b866000000"        # mov eax, 102
                                     "cd80")             # int 0x80
                     + _I386_EXIT)


def x32_socket(family: int) -> bytes:
    """socket(family, SOCK_STREAM, 0) as an x32 call: 41 | __X32_SYSCALL_BIT."""
    return _x86_64_elf(bytes.fromhex("b829000040")       # mov eax, 0x40000029
                       + b"\xbf" + struct.pack("<I", family)  # mov edi, family
                       + bytes.fromhex("be01000000"      # mov esi, 1 (SOCK_STREAM)
                                       "31d2"            # xor edx, edx
                                       "0f05"            # syscall
                                       "89c7"            # mov edi, eax
                                       "f7df"            # neg edi
                                       "b83c000000"      # mov eax, 60 (exit)
                                       "0f05"))          # syscall
