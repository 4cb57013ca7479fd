"""The audit log: every permission decision, appended as hash-chained JSON Lines.

    <data dir>/audit/<project name>-<sha256(resolved root)[:12]>.jsonl    the records
    <same>.jsonl.head                                                      where it ends
    <same>.jsonl.lock                                                      the append lock

One file per project (docs/audit.md says why). Each line is one JSON object whose
``seq`` counts from 1 and whose ``prev`` is the SHA-256 (hex) of the previous
line's exact bytes, its newline included; the first line's ``prev`` is
:data:`GENESIS`. So editing, removing or reordering a line breaks the chain at
the line after it. Removing lines *from the end* leaves a valid chain, so the head
file holds the ``seq``, hash and byte size of the last record written: a log that
ends before its head says is caught too.

Appends are serialised across processes by an exclusive ``flock`` on the lock
file (never deleted), written with one ``write`` of a whole line, fsynced, then
the head is replaced atomically (temporary file, fsync, ``os.replace``, directory
fsync). A crash between the two leaves records after the head: the next append
checks that they chain from the head and carries on.

Damage is never rewritten. An append that finds the log not ending where its head
says (a torn last line from a crash, records removed, a missing head) moves the
log and its head aside unchanged (``<name>.set-aside-<time>.jsonl``) and starts a
new log; :meth:`AuditLog.append` says so in its answer. :meth:`AuditLog.verify`
names the first broken line as ``file:line``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, NamedTuple

from dm_cc.config import counted, locked, replace_file, set_aside, shared, sync_directory
from dm_cc.errors import AuditLogError

GENESIS = "0" * 64
SUFFIX = ".jsonl"
HEAD = ".head"   # the head file: the log's name and this
_ASIDE = re.compile(r"\.set-aside-[0-9T-]+\.jsonl\Z")


def line_hash(line: bytes) -> str:
    """The hash the next record's ``prev`` holds: of the line's bytes, newline included."""
    return hashlib.sha256(line).hexdigest()


def encode(record: dict[str, Any]) -> bytes:
    """One record as its line (compact JSON, newline at the end)."""
    try:
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (an undecodable file name): kept, escaped
        return (json.dumps(record, separators=(",", ":")) + "\n").encode("ascii")


class Head(NamedTuple):
    """Where the log ends: the last record's ``seq``, the hash of its line and the
    log's size in bytes after it."""

    seq: int
    hash: str
    size: int

    def to_bytes(self) -> bytes:
        return (json.dumps({"seq": self.seq, "hash": self.hash, "size": self.size}) + "\n").encode()

    @classmethod
    def parse(cls, data: bytes) -> Head:
        """ValueError if ``data`` is not a head."""
        try:
            value = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"not JSON ({exc})") from None
        if not isinstance(value, dict) or set(value) != {"seq", "hash", "size"}:
            raise ValueError("expected an object with exactly seq, hash and size")
        seq, digest, size = value["seq"], value["hash"], value["size"]
        if type(seq) is not int or type(size) is not int or seq < 1 or size < 1 \
                or not isinstance(digest, str) or not re.fullmatch(r"[0-9a-f]{64}", digest):
            raise ValueError("seq and size must be positive integers, hash 64 hex digits")
        return cls(seq, digest, size)


class Broken(NamedTuple):
    """The first place a log fails to verify: ``line`` (1-based; None: the file as a
    whole) and what is wrong."""

    line: int | None
    message: str


class Verification(NamedTuple):
    """What :meth:`AuditLog.verify` found: how many records, the first break (None:
    the log is intact) and remarks that are no failure."""

    path: Path
    records: int
    broken: Broken | None
    notes: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        if self.broken is None or self.broken.line is None:
            return str(self.path)
        return f"{self.path}:{self.broken.line}"


class Appended(NamedTuple):
    """A record written (as stored: with ``seq`` and ``prev``), and what the person
    should be told about the log (it was set aside), if anything."""

    record: dict[str, Any]
    notice: str | None = None


class _Check(NamedTuple):
    """A line's place in the chain: its ``seq`` and hash, or what is wrong with it."""

    seq: int
    hash: str
    problem: str | None = None


def _check_line(line: bytes, seq: int, prev: str) -> _Check:
    """Is ``line`` record number ``seq`` following a line whose hash is ``prev``?"""
    digest = line_hash(line)
    if not line.endswith(b"\n"):
        return _Check(seq, digest, "torn record: the last line has no line end (a write was "
                                   "interrupted -- a crash, a full disk -- or the file was cut)")
    try:
        record = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return _Check(seq, digest, f"not a JSON record ({exc}): the line was changed")
    if not isinstance(record, dict):
        return _Check(seq, digest, "not a JSON object: the line was changed")
    if record.get("prev") != prev:
        what = ("the first record does not start the chain" if seq == 1 else
                "its prev is not the hash of the line before it")
        return _Check(seq, digest, f"{what}: the line before it was changed, removed or "
                                   "moved, or this one was")
    if record.get("seq") != seq:
        return _Check(seq, digest, f"record number {record.get('seq')!r} where {seq} belongs: "
                                   "a line was removed or moved")
    return _Check(seq, digest)


def _lines(data: bytes) -> list[bytes]:
    """The lines of ``data``, each with its newline (the last may have none)."""
    lines = [line + b"\n" for line in data.split(b"\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


class AuditLog:
    """One project's audit log (see the module doc). ``path`` is the ``.jsonl`` file;
    its head and lock are beside it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.head_path = path.with_name(path.name + HEAD)
        self.lock_path = path.with_name(path.name + ".lock")
        self.failed = 0  # records this process could not write since the last it wrote

    @classmethod
    def for_project(cls, data_dir: Path, project_root: Path) -> AuditLog:
        """``data_dir/audit/<name>-<hash12>.jsonl`` (the approvals file's naming)."""
        root = project_root.resolve()
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", root.name).strip("-.")[:40] or "root"
        digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:12]
        return cls(data_dir / "audit" / f"{slug}-{digest}{SUFFIX}")

    @classmethod
    def at(cls, path: Path) -> AuditLog:
        """The log in the file ``path`` (a set-aside one, for ``verify FILE``)."""
        return cls(path)

    def set_aside(self) -> list[Path]:
        """This project's earlier logs that were moved aside, oldest first."""
        stem = self.path.name[: -len(SUFFIX)]
        try:
            return sorted(p for p in self.path.parent.glob(f"{stem}.set-aside-*{SUFFIX}")
                          if _ASIDE.search(p.name))
        except OSError:
            return []

    # ------------------------------------------------------------------ appending

    def append(self, record: dict[str, Any]) -> Appended:
        """Write ``record`` (``seq`` and ``prev`` added) at the end of the chain.
        AuditLogError when the log cannot be written."""
        try:
            with self._locked():
                notice = None
                head, problem = self._where_it_ends()
                if problem is not None:
                    notice = self._move_aside(problem)
                    head = None
                seq, prev, size = (head.seq + 1, head.hash, head.size) if head else (1, GENESIS, 0)
                stored = {"seq": seq, **{k: v for k, v in record.items()
                                         if k not in ("seq", "prev")}, "prev": prev}
                line = encode(stored)
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                try:
                    written = os.write(fd, line)
                    if written != len(line):
                        raise OSError(f"short write ({written} of {len(line)} bytes)")
                    os.fsync(fd)
                finally:
                    os.close(fd)
                if size == 0:
                    sync_directory(self.path.parent)
                self._write_head(Head(seq, line_hash(line), size + len(line)))
                return Appended(stored, notice)
        except OSError as exc:
            raise AuditLogError(str(self.path), f"cannot write the audit log: {exc}") from None

    def _where_it_ends(self) -> tuple[Head | None, str | None]:
        """Under the lock: the head to chain from, or why the log must be set aside."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            size = -1
        try:
            head_bytes: bytes | None = self.head_path.read_bytes()
        except FileNotFoundError:
            head_bytes = None
        if head_bytes is None:
            if size <= 0:
                return None, None  # a new log (an empty file: an append that wrote nothing)
            return None, "it has no head file, so records removed from its end could not be told"
        try:
            head = Head.parse(head_bytes)
        except ValueError as exc:
            return None, f"its head file is damaged ({exc})"
        if size == head.size:
            return head, None
        if size < head.size:
            return None, (f"it is shorter than its head says ({max(size, 0)} of {head.size} "
                          "bytes): records were removed or it was cut")
        with open(self.path, "rb") as log:  # records written after the head: a crash between
            log.seek(head.size)              # the append and the head, if they chain from it
            extra = log.read()
        current = head
        for line in _lines(extra):
            check = _check_line(line, current.seq + 1, current.hash)
            if check.problem is not None:
                return None, f"record {check.seq}: {check.problem}"
            current = Head(check.seq, check.hash, current.size + len(line))
        return current, None

    def _move_aside(self, problem: str) -> str:
        aside = set_aside(self.path, "set-aside", suffix=SUFFIX, companions=(HEAD,))
        return (f"audit log {self.path}: {problem}. It was moved aside unchanged to {aside} "
                f"and a new log begins (`dm_cc audit verify {aside}` shows where it breaks)")

    def _write_head(self, head: Head) -> None:
        replace_file(self.head_path, head.to_bytes())

    def _locked(self) -> AbstractContextManager[None]:
        return locked(self.lock_path)

    # ------------------------------------------------------------------ reading

    def _read(self, path: Path) -> bytes | None:
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise AuditLogError(str(path), f"cannot read the audit log: {exc}") from None

    def _reading(self) -> AbstractContextManager[None]:
        """A shared lock while reading: no half-written line or head read in the
        middle of an append."""
        return shared(self.lock_path)

    def records(self) -> Iterator[tuple[int, dict[str, Any] | None]]:
        """Each line's number and record (None: not a JSON object), without verifying."""
        with self._reading():
            data = self._read(self.path) or b""
        for number, line in enumerate(_lines(data), start=1):
            try:
                record = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                record = None
            yield number, record if isinstance(record, dict) else None

    def verify(self) -> Verification:
        """Check the chain line by line, then that the log ends where its head says."""
        with self._reading():  # the head first: an append between the two only adds lines
            head_bytes = self._read(self.head_path)
            data = self._read(self.path)
        lines = _lines(data or b"")
        seq, prev, size = 0, GENESIS, 0
        hashes: list[tuple[str, int]] = []  # each line's hash and the size up to its end
        for line in lines:
            check = _check_line(line, seq + 1, prev)
            if check.problem is not None:
                return Verification(self.path, seq, Broken(check.seq, check.problem))
            seq, prev, size = check.seq, check.hash, size + len(line)
            hashes.append((prev, size))
        if head_bytes is None:
            if data is None or not lines:
                return Verification(self.path, 0, None, ("no records yet",))
            return Verification(self.path, seq, Broken(None, (
                f"no head file ({self.head_path.name}): whether records were removed from "
                "the end cannot be told")))
        try:
            head = Head.parse(head_bytes)
        except ValueError as exc:
            return Verification(self.path, seq, Broken(None, f"the head file "
                                                       f"{self.head_path} is damaged: {exc}"))
        if data is None:
            return Verification(self.path, 0, Broken(None, (
                f"the log is missing, but its head says it held {counted(head.seq, 'record')}")))
        if head.seq > seq:
            return Verification(self.path, seq, Broken(seq + 1, (
                f"records {seq + 1} to {head.seq} are missing: the log ends before its head "
                "says (records were removed from the end, or the file was cut)")))
        if hashes[head.seq - 1] != (head.hash, head.size):
            return Verification(self.path, seq, Broken(head.seq, (
                "this record is not the one the head file says was written last: "
                "it was changed")))
        notes: tuple[str, ...] = ()
        if head.seq < seq:
            notes = (f"records {head.seq + 1} to {seq} were written after the head was last "
                     "updated (an append interrupted by a crash); they chain correctly, and "
                     "the next append updates the head",)
        return Verification(self.path, seq, None, notes)
