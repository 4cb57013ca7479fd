"""The audit log: every permission decision, appended as hash-chained JSON Lines.

    <data dir>/audit/<project name>-<sha256(resolved root)[:12]>.jsonl    the records
    <same>.jsonl.head                                                      where it ends
    <same>.jsonl.lock                                                      the append lock

One file per project (docs/audit.md says why). Each line is one JSON object whose
``seq`` counts from 1 and whose ``prev`` is the SHA-256 (hex) of the previous
line's exact bytes, its newline included; the first line's ``prev`` is
:data:`GENESIS`. So editing, removing or reordering a line breaks the chain at
the line after it. Removing lines *from the end* leaves a valid chain, so the head
file holds the ``seq``, hash and byte size of the last record made durable: a log
that ends before its head says is caught too.

Appends are serialised across processes by an exclusive ``flock`` on the lock
file (never deleted) and written with one ``write`` each (a record, or a call's
full request list and its record together), so a process that dies at once loses
nothing written. They are made durable in groups: :meth:`AuditLog.sync` fsyncs
what this process wrote since, then overwrites the head in place. The loop syncs
before a tool's effects and at the end of each reply (docs/audit.md, "When a decision is durable").
Records after the head (a group not synced yet, or a crash before it was) are
checked to chain from the head by the next append, which carries on.

Damage is never rewritten. An append that finds the log not ending where its head
says (a torn last line from a crash, records removed, a missing head) moves the
log and its head aside unchanged (``<name>.set-aside-<time>.jsonl``) and starts a
new log; :meth:`AuditLog.append` says so in its answer. :meth:`AuditLog.verify`
names the first broken line as ``file:line``.

Reading streams: listing and verifying hold one line at a time (the log only
grows), whatever its length.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, suppress
from pathlib import Path
from typing import IO, Any, NamedTuple

from dm_cc.config import counted, locked, replace_file, set_aside, shared, sync_directory
from dm_cc.errors import AuditLogError

GENESIS = "0" * 64
SUFFIX = ".jsonl"
HEAD = ".head"   # the head file: the log's name and this
HEAD_BYTES = 192  # its size: the head's JSON padded with spaces, overwritten in place
REQUESTS = "requests"   # the ``kind`` of a line holding a call's full request list
_ASIDE = re.compile(r"\.set-aside-[0-9T-]+\.jsonl\Z")
# A request's own field in a full request list; the rest of it (its permission,
# verdict and note, the deciding rule, its source, reason and layer) is shared by
# many requests and kept once per list.
_OWN = ("pattern",)


def _datasync(fd: int) -> None:
    """The file's data and what reading it needs (its size) on disk: ``fdatasync``
    where there is one (it skips the times), else ``fsync``."""
    getattr(os, "fdatasync", os.fsync)(fd)


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


def compact_requests(requests: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A call's requests (each as a record has them) as a full-list line holds them:
    what requests share once in ``shared``, each request as its own fields (its
    pattern) and the index of what it shares."""
    shared_parts: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    rows: list[list[Any]] = []
    for request in requests:
        rest = {k: v for k, v in request.items() if k not in _OWN}
        key = json.dumps(rest, sort_keys=True, default=str)
        if key not in index:
            index[key] = len(shared_parts)
            shared_parts.append(rest)
        rows.append([*(request.get(k) for k in _OWN), index[key]])
    return {"shared": shared_parts, "requests": rows}


def expand_requests(line: dict[str, Any]) -> list[dict[str, Any]]:
    """The requests of a full-list line, each as a record has them; ValueError when
    the line is not one."""
    try:
        shared_parts = line["shared"]
        return [{**dict(zip(_OWN, row[:-1], strict=True)), **shared_parts[row[-1]]}
                for row in line["requests"]]
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise ValueError(f"not a full request list ({exc!r})") from None


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


def _as_written(line: bytes, seq: int, prev: str) -> bool:
    """Does ``line`` begin with ``seq`` and end with ``prev`` as :func:`encode` writes
    them? Enough, without parsing it, for a line the head covers: its hash is checked
    by the next line's ``prev`` (or the head's hash), so any change to it is found
    there -- an edit that leaves its ends alone is named at the line after it, as an
    edit that keeps it valid JSON always was. Lines past the head are parsed."""
    return line.startswith(b'{"seq":%d,' % seq) and line.endswith(b',"prev":"%s"}\n'
                                                                    % prev.encode())


def _lines(log: IO[bytes], size: int) -> Iterator[bytes]:
    """The lines of the first ``size`` bytes of ``log`` from where it is, one at a
    time, each with its newline (the last may have none)."""
    left = size
    while left > 0:
        line = log.readline(left)
        if not line:
            return
        left -= len(line)
        yield line


class _Ends(NamedTuple):
    """Under the lock: the head file's (None: none), where the log really ends (None:
    a new log), and why the log must be set aside (None: it need not)."""

    head: Head | None
    end: Head | None
    problem: str | None = None


class _Snapshot(NamedTuple):
    """What a reader sees, taken under the shared lock: the head file's bytes, the log
    open for reading and its size then (appends only add after it)."""

    head: bytes | None
    log: IO[bytes] | None
    size: int


class AuditLog:
    """One project's audit log (see the module doc). ``path`` is the ``.jsonl`` file;
    its head and lock are beside it.

    What this process appended and has not synced is kept open (``_fd``, the file
    it went to wherever it is renamed) with where it ends (``_end``), so an append
    reads only what other processes added since and :meth:`sync` fsyncs the right
    file even after another process set it aside."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.head_path = path.with_name(path.name + HEAD)
        self.lock_path = path.with_name(path.name + ".lock")
        self.failed = 0  # records this process could not write since the last it wrote
        self.sync_failed = False  # a sync failed (told once)
        self._fd: int | None = None            # the log this process appends to
        self._file: tuple[int, int] = (0, 0)   # its device and inode
        self._end: Head | None = None          # where it ended after this process's last append
        self._unsynced = False                 # written here since the last fsync
        self._created = False                  # a new log whose name is not synced yet
        self._head_behind = False              # synced records the head does not cover yet

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

    def append(self, record: dict[str, Any],
               requests: Sequence[dict[str, Any]] | None = None) -> Appended:
        """Write ``record`` (``seq`` and ``prev`` added) at the end of the chain, in
        the file at once but not yet fsynced (:meth:`sync`). ``requests``: the call's
        full request list, written once as a line of its own (:func:`compact_requests`)
        just before the record, whose ``requests_line`` names that line's ``seq``.
        AuditLogError when the log cannot be written."""
        try:
            with self._locked():
                notice = None
                ends = self._where_it_ends()
                if ends.problem is not None:
                    notice = self._move_aside(ends.problem)
                    ends = _Ends(None, None)
                seq, prev, size = (ends.end.seq, ends.end.hash, ends.end.size) if ends.end \
                    else (0, GENESIS, 0)
                data = b""
                body = {k: v for k, v in record.items() if k not in ("seq", "prev")}
                if requests is not None:
                    seq += 1
                    full = encode({"seq": seq, "kind": REQUESTS, "call_id": record.get("call_id"),
                                   **compact_requests(requests), "prev": prev})
                    data, prev = full, line_hash(full)
                    body["requests_line"] = seq
                stored = {"seq": seq + 1, **body, "prev": prev}
                line = encode(stored)
                self._write(data + line, new=size == 0)
                self._end = Head(seq + 1, line_hash(line), size + len(data) + len(line))
                if size == 0:   # a new log has a durable head at once: no other process
                    self._flush()   # takes it for one whose head was lost
                    self._write_head(self._end)
                    self._head_behind = False
                return Appended(stored, notice)
        except OSError as exc:
            raise AuditLogError(str(self.path), f"cannot write the audit log: {exc}") from None

    @property
    def unsynced(self) -> bool:
        """Records this process appended wait for :meth:`sync`."""
        return self._unsynced

    def sync(self, *, head: bool = True) -> None:
        """Make every record this process appended durable (one fsync, whatever their
        number), then (``head``) the head say where the log ends. Nothing to do when
        nothing waits. AuditLogError when it cannot be done."""
        if self._fd is None or not (self._unsynced or head and self._head_behind):
            return
        try:
            with self._locked():
                self._flush()
                if not head:
                    return
                self._head_behind = False
                try:
                    now = os.stat(self.path)
                except FileNotFoundError:
                    return   # moved aside by another process: its head went with it
                if (now.st_dev, now.st_ino) != self._file:
                    return
                ends = self._where_it_ends()
                if ends.problem is None and ends.end is not None and ends.end != ends.head:
                    self._write_head(ends.end)
        except OSError as exc:
            raise AuditLogError(str(self.path), f"cannot write the audit log: {exc}") from None

    def _write(self, data: bytes, *, new: bool) -> None:
        """Under the lock: ``data`` at the end of the log with one ``write``."""
        try:
            now = os.stat(self.path)
            current = (now.st_dev, now.st_ino)
        except FileNotFoundError:
            current = None
        if self._fd is not None and current != self._file:
            self._close()   # set aside meanwhile: what went there is synced first
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            opened = os.fstat(self._fd)
            self._file = (opened.st_dev, opened.st_ino)
            self._end = None
        self._created = self._created or new
        self._unsynced = True
        written = os.write(self._fd, data)
        if written != len(data):
            raise OSError(f"short write ({written} of {len(data)} bytes)")

    def _flush(self) -> None:
        """fsync what this process wrote (and, for a new log, its name)."""
        if self._fd is not None and self._unsynced:
            _datasync(self._fd)
            if self._created:
                sync_directory(self.path.parent)
                self._created = False
            self._unsynced, self._head_behind = False, True

    def _close(self) -> None:
        try:
            self._flush()
        finally:
            if self._fd is not None:
                os.close(self._fd)
            self._fd, self._end = None, None
            self._unsynced = self._created = self._head_behind = False

    def close(self) -> None:
        """Sync what is waiting and let the file go (the log stays usable: the next
        append opens it again)."""
        self.sync()
        if self._fd is not None:
            self._close()

    def _where_it_ends(self) -> _Ends:
        """Under the lock: the head file, where the log ends, or why it must be set aside.
        Lines past the head are checked to chain from it -- from this process's last
        append on when that is within them (those before it were checked then)."""
        try:
            now: os.stat_result | None = os.stat(self.path)
        except FileNotFoundError:
            now = None
        size = now.st_size if now is not None else -1
        try:
            head_bytes: bytes | None = self.head_path.read_bytes()
        except FileNotFoundError:
            head_bytes = None
        if head_bytes is None:
            if size <= 0:
                return _Ends(None, None)  # a new log (an empty file: an append that wrote nothing)
            return _Ends(None, None, "it has no head file, so records removed from its end "
                                     "could not be told")
        try:
            head = Head.parse(head_bytes)
        except ValueError as exc:
            return _Ends(None, None, f"its head file is damaged ({exc})")
        if size == head.size:
            return _Ends(head, head)
        if size < head.size:
            return _Ends(head, None, f"it is shorter than its head says ({max(size, 0)} of "
                                     f"{head.size} bytes): records were removed or it was cut")
        current = head
        mine = self._end
        if now is not None and mine is not None and (now.st_dev, now.st_ino) == self._file \
                and head.size <= mine.size <= size:
            current = mine
        with open(self.path, "rb") as log:  # records written after the head: a group not
            log.seek(current.size)           # synced yet or a crash before it was
            for line in _lines(log, size - current.size):
                check = _check_line(line, current.seq + 1, current.hash)
                if check.problem is not None:
                    return _Ends(head, None, f"record {check.seq}: {check.problem}")
                current = Head(check.seq, check.hash, current.size + len(line))
        return _Ends(head, current)

    def _move_aside(self, problem: str) -> str:
        if self._fd is not None:
            self._close()   # what this process wrote there is durable before it moves
        aside = set_aside(self.path, "set-aside", suffix=SUFFIX, companions=(HEAD,))
        return (f"audit log {self.path}: {problem}. It was moved aside unchanged to {aside} "
                f"and a new log begins (`dm_cc audit verify {aside}` shows where it breaks)")

    def _write_head(self, head: Head) -> None:
        """Bring the head file up to ``head``: overwritten in place (HEAD_BYTES, one
        ``pwrite`` within the first disk sector, no sync), or made whole when it is
        not of that size (a new log): a temporary file, synced, renamed over it, the
        directory synced. Either way a crash leaves the new head or an earlier one,
        which the synced records after it chain from (what ``_where_it_ends`` allows)."""
        data = head.to_bytes()[:-1].ljust(HEAD_BYTES - 1) + b"\n"
        try:   # never through a link: that is replaced, as any head of another kind
            fd = os.open(self.head_path, os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            fd = None
        if fd is not None:
            try:
                found = os.fstat(fd)
                if stat.S_ISREG(found.st_mode) and found.st_size == HEAD_BYTES:
                    if os.pwrite(fd, data, 0) != HEAD_BYTES:
                        raise OSError("short write of the head")
                    return
            finally:
                os.close(fd)
        replace_file(self.head_path, data)

    def _locked(self) -> AbstractContextManager[None]:
        return locked(self.lock_path)

    # ------------------------------------------------------------------ reading

    def _snapshot(self, path: Path) -> _Snapshot:
        """The head's bytes, the log open and its size, as one appender left them: a
        shared lock while taking them, none while reading on (appends only add)."""
        with shared(self.lock_path):
            head = self._read(self.head_path)
            try:
                log: IO[bytes] | None = open(path, "rb")  # noqa: SIM115 -- the caller closes it
            except FileNotFoundError:
                log = None
            except OSError as exc:
                raise AuditLogError(str(path), f"cannot read the audit log: {exc}") from None
        size = os.fstat(log.fileno()).st_size if log is not None else 0
        return _Snapshot(head, log, size)

    def _read(self, path: Path) -> bytes | None:
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise AuditLogError(str(path), f"cannot read the audit log: {exc}") from None

    def records(self, *, full: bool = False) -> Iterator[tuple[int, dict[str, Any] | None]]:
        """Each line's number and record (None: not a JSON object), without verifying,
        one at a time. ``full``: a record whose full request list is a line of its own
        gets that list as its ``requests``, and that line is not given on its own."""
        snapshot = self._snapshot(self.path)
        if snapshot.log is None:
            return
        waiting: dict[str, Any] | None = None   # a full request list, for the record after it
        with snapshot.log as log:
            for number, line in enumerate(_lines(log, snapshot.size), start=1):
                try:
                    record = json.loads(line.decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError):
                    record = None
                if not isinstance(record, dict):
                    yield number, None
                    continue
                if full and record.get("kind") == REQUESTS:
                    waiting = record
                    continue
                if full and waiting is not None and record.get("requests_line") \
                        == waiting.get("seq"):
                    with suppress(ValueError):   # else the summary stays; `verify`
                        record["requests"] = expand_requests(waiting)   # says what is wrong
                waiting = None
                yield number, record

    def verify(self) -> Verification:
        """Check the chain line by line, then that the log ends where its head says.
        Reads one line at a time; the head is taken first (an append between the two
        only adds lines, and those past the snapshot are not read)."""
        snapshot = self._snapshot(self.path)
        head: Head | None = None
        head_problem: str | None = None
        if snapshot.head is not None:
            try:
                head = Head.parse(snapshot.head)
            except ValueError as exc:
                head_problem = f"the head file {self.head_path} is damaged: {exc}"
        seq, prev, size = 0, GENESIS, 0
        at_head: tuple[str, int] | None = None  # the hash of the head's line and the size to it
        covered = head.seq if head is not None else 0
        if snapshot.log is not None:
            with snapshot.log as log:
                for line in _lines(log, snapshot.size):
                    if seq < covered and _as_written(line, seq + 1, prev):
                        seq, prev = seq + 1, line_hash(line)
                    else:
                        check = _check_line(line, seq + 1, prev)
                        if check.problem is not None:
                            return Verification(self.path, seq, Broken(check.seq, check.problem))
                        seq, prev = check.seq, check.hash
                    size += len(line)
                    if seq == covered:
                        at_head = (prev, size)
        return self._ends_at_head(snapshot, head, head_problem, seq, at_head)

    def _ends_at_head(self, snapshot: _Snapshot, head: Head | None, head_problem: str | None,
                      seq: int, at_head: tuple[str, int] | None) -> Verification:
        """After the chain verified (``seq`` records): does the log end where its head says?"""
        if snapshot.head is None:
            if snapshot.log is None or seq == 0:
                return Verification(self.path, 0, None, ("no records yet",))
            return Verification(self.path, seq, Broken(None, (
                f"no head file ({self.head_path.name}): whether records were removed from "
                "the end cannot be told")))
        if head is None:
            return Verification(self.path, seq, Broken(None, head_problem or "no head"))
        if snapshot.log is None:
            return Verification(self.path, 0, Broken(None, (
                f"the log is missing, but its head says it held {counted(head.seq, 'record')}")))
        if head.seq > seq:
            return Verification(self.path, seq, Broken(seq + 1, (
                f"records {seq + 1} to {head.seq} are missing: the log ends before its head "
                "says (records were removed from the end, or the file was cut)")))
        if at_head != (head.hash, head.size):
            return Verification(self.path, seq, Broken(head.seq, (
                "this record is not the one the head file says was written last: "
                "it was changed")))
        notes: tuple[str, ...] = ()
        if head.seq < seq:
            notes = (f"records {head.seq + 1} to {seq} were written after the head was last "
                     "updated (a run still going, or one that ended in a crash); they chain "
                     "correctly, and the next sync updates the head",)
        return Verification(self.path, seq, None, notes)
