"""Sessions as append-only JSONL files: ``<root>/<id>.jsonl``, root ``data_dir()/sessions``.

    {"type": "session", "id": …, "parent_id": …, "title": …, "project": …, "created": …,
     "agent": …}                                  first line, written once, atomically,
                                                  with the first record: a session opened
                                                  and left without a message leaves no file
    {"type": "message", …Message.to_json()}       one line per message, in order
    {"type": "title", "title": …}                 when the title changes; the last one wins
                                                  (an untitled session's first prompt sets it)

Durability: every record is ONE ``write()`` of the whole encoded line (newline
included) on a descriptor opened with ``O_APPEND``, then ``fsync``. A crash loses
at most the line being written, and appends from several ``Session`` objects,
threads or processes never interleave inside a line. If a previous writer died
mid-line (the file does not end in a newline), the next append starts with a
newline so the torn line stays alone and the new one stays whole; writers hold an
advisory ``flock`` from that check to the end of their write so the check is
exact (readers take no lock).

One change is not an append: ``/rewind`` cuts a session's history
(:meth:`Session.truncate`), rewriting the file whole in one step under the same lock.

Damage is never fatal and never repaired behind the user's back: loading skips a
torn last line or a corrupt line anywhere else, names it ``file:line`` in
``Session.warnings`` (the UI shows them) and logs it on the ``dm_cc.session.store``
logger (WARNING). Loading never writes. Only an unreadable header (line 1) or an
unknown id is a :class:`~dm_cc.errors.SessionError`.

Listings (``SessionStore.list``, ``latest`` for ``--continue``) read the directory's
index (``session_index.py``: ``<root>/index.json``) instead of every file: a file is
read in full only when it changed since it was indexed, so they cost a ``stat`` per
session, not a parse. Appending never touches the index.

Ids are ``ses_<creation time in ms, 12 hex digits>_<8 random hex digits>``: they sort
by creation time and contain only ``[a-z0-9_]``, so they are safe in file names and
path patterns (the plan agent's ``.dm_cc/plans/{session}.md``).
"""

from __future__ import annotations

import builtins
import functools
import json
import logging
import os
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dm_cc.config import replace_file
from dm_cc.errors import SessionError
from dm_cc.session.messages import Message, agent_in_charge, title_of
from dm_cc.session.session_index import (
    INDEX_NAME,
    Entry,
    Key,
    entry_of,
    file_key,
    load_index,
    new_entry,
    save_index,
)

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; appends stay whole lines
    fcntl = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)
logger.addHandler(logging.NullHandler())  # the library idiom: the application decides

_ID = re.compile(r"[A-Za-z0-9_-]+")
_ROLES = ("user", "assistant", "tool")
_BINARY = getattr(os, "O_BINARY", 0)  # Windows would otherwise write \r\n


def new_session_id(now_ns: int | None = None) -> str:
    millis = (time.time_ns() if now_ns is None else now_ns) // 1_000_000
    return f"ses_{millis:012x}_{secrets.token_hex(4)}"


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """What a listing shows. ``agent`` is the agent in charge (of the last user
    message, else the one the session was created with); ``updated`` is the time of
    the last message, else ``created``."""

    id: str
    parent_id: str | None
    title: str
    agent: str
    project: Path
    created: float
    updated: float
    messages: int
    path: Path

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "parent_id": self.parent_id, "title": self.title,
                "agent": self.agent, "project": str(self.project), "created": self.created,
                "updated": self.updated, "messages": self.messages}

    @classmethod
    def from_json(cls, data: dict[str, Any], path: Path) -> SessionInfo:
        """The info :meth:`to_json` gave, of the file ``path`` (the session index keeps
        it); ValueError when a field is missing or of the wrong type."""
        fields = (("id", str), ("title", str), ("agent", str), ("project", str),
                  ("created", (int, float)), ("updated", (int, float)), ("messages", int))
        for name, kind in fields:
            if not isinstance(data.get(name), kind) or isinstance(data.get(name), bool):
                raise ValueError(f"bad or missing {name!r}")
        if data.get("parent_id") is not None and not isinstance(data["parent_id"], str):
            raise ValueError("bad 'parent_id'")
        return cls(id=data["id"], parent_id=data.get("parent_id"), title=data["title"],
                   agent=data["agent"], project=_project_path(data["project"]),
                   created=data["created"], updated=data["updated"],
                   messages=data["messages"], path=path)


@functools.lru_cache(maxsize=64)
def _project_path(text: str) -> Path:
    """``Path(text)``, made once per project: a listing of a thousand sessions from the
    index names a handful of projects (and making a Path costs more than the rest)."""
    return Path(text)


def session_tree(infos: builtins.list[SessionInfo]) -> builtins.list[tuple[int, SessionInfo]]:
    """``infos`` as a tree, each with its depth: every session followed by its
    children (subagents' sessions), theirs after them, in the order given. A session
    whose parent is not among ``infos`` stands at depth 0."""
    ids = {info.id for info in infos}
    children: dict[str | None, builtins.list[SessionInfo]] = {}
    for info in infos:
        parent = info.parent_id if info.parent_id in ids and info.parent_id != info.id else None
        children.setdefault(parent, []).append(info)
    out: builtins.list[tuple[int, SessionInfo]] = []
    seen: set[str] = set()

    def walk(parent: str | None, depth: int) -> None:
        for info in children.get(parent, []):
            if info.id not in seen:    # a cycle of parent ids cannot loop for ever
                seen.add(info.id)
                out.append((depth, info))
                walk(info.id, depth + 1)
    walk(None, 0)
    out += [(0, info) for info in infos if info.id not in seen]
    return out


def _encode(record: dict[str, Any]) -> bytes:
    try:
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: keep it, escaped
        return (json.dumps(record, separators=(",", ":")) + "\n").encode("ascii")


def _ends_mid_line(fd: int) -> bool:
    if os.lseek(fd, 0, os.SEEK_END) == 0:
        return False
    os.lseek(fd, -1, os.SEEK_END)
    return os.read(fd, 1) != b"\n"


def _write_line(path: Path, data: bytes) -> None:
    """Append ``data`` (one encoded line) with a single write, then fsync."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | _BINARY)
    except FileNotFoundError:
        raise SessionError(f"{path}: session file has disappeared") from None
    except OSError as exc:
        raise SessionError(f"{path}: cannot open session file: {exc}") from None
    try:
        if fcntl is not None:  # only makes the torn-line check exact; released by close
            fcntl.flock(fd, fcntl.LOCK_EX)
        if _ends_mid_line(fd):
            data = b"\n" + data  # a writer died mid-line: keep its fragment on its own line
        written = os.write(fd, data)
        if written != len(data):
            raise SessionError(f"{path}: short write ({written} of {len(data)} bytes)")
        os.fsync(fd)
    except OSError as exc:
        raise SessionError(f"{path}: cannot write session file: {exc}") from None
    finally:
        os.close(fd)


def _create_whole(path: Path, data: bytes) -> None:
    """Create ``path`` holding ``data``: it appears whole (fsynced) or not at all."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # sessions may hold secrets
        replace_file(path, data)
    except OSError as exc:
        raise SessionError(f"cannot create session file {path}: {exc}") from None


class Session:
    """A loaded or new session. Add messages with :meth:`append` only: it writes
    the line first, then updates ``messages`` and ``info``. An untitled session
    takes its title from its first user message that is not synthetic, once.
    A new session's file is created with its first record (``header``: the line
    that opens it, until then)."""

    def __init__(self, info: SessionInfo, messages: list[Message],
                 warnings: list[str] | None = None, header: bytes | None = None) -> None:
        self.info = info
        self.messages = messages
        self.warnings = warnings or []
        self._header = header

    def _write(self, record: dict[str, Any]) -> None:
        """Append one record; a new session's file is created first, whole."""
        if self._header is not None:
            _create_whole(self.path, self._header)
            self._header = None
        _write_line(self.path, _encode(record))

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def path(self) -> Path:
        return self.info.path

    @property
    def agent(self) -> str:
        return self.info.agent

    def append(self, message: Message) -> None:
        self._write({"type": "message", **message.to_json()})
        self.messages.append(message)
        self.info = replace(self.info, messages=self.info.messages + 1,
                            agent=agent_in_charge(self.messages, self.info.agent),
                            updated=max(self.info.updated, message.time))
        if not self.info.title and message.role == "user" and not message.synthetic:
            titles = (title_of(m.content) for m in self.messages
                      if m.role == "user" and not m.synthetic)
            if title := next((t for t in titles if t), ""):
                self.set_title(title)

    def set_title(self, title: str) -> None:
        self._write({"type": "title", "title": title})
        self.info = replace(self.info, title=title)

    def truncate(self, count: int) -> None:
        """Keep only the first ``count`` messages, for good (``/rewind``): the file is
        rewritten whole in one step (``durable.replace_file``: a reader sees the old
        file or the new one), holding the writers' lock meanwhile. Its lines up to the
        cut stay as they were (a damaged one too); the title stays."""
        if not 0 <= count <= len(self.messages):
            raise ValueError(f"a session of {len(self.messages)} messages cannot keep {count}")
        if count == len(self.messages):
            return
        try:
            fd = os.open(self.path, os.O_RDWR | _BINARY)
        except OSError as exc:
            raise SessionError(f"{self.path}: cannot open session file: {exc}") from None
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            with os.fdopen(os.dup(fd), "rb") as handle:
                lines = handle.read().split(b"\n")
            header = _header(lines[0], self.path)
            kept, title, seen = [lines[0]], header["title"], 0
            for raw in lines[1:]:
                record = _record_of(raw)
                if record is not None and record.get("type") == "message" and _valid(record):
                    if seen == count:
                        break
                    seen += 1
                elif record is not None and record.get("type") == "title":
                    title = record.get("title", title)
                if raw.strip():
                    kept.append(raw)
            data = b"\n".join(kept) + b"\n"
            if title != self.info.title:
                data += _encode({"type": "title", "title": self.info.title})
            replace_file(self.path, data)
        except OSError as exc:
            raise SessionError(f"{self.path}: cannot rewrite session file: {exc}") from None
        finally:
            os.close(fd)
        del self.messages[count:]
        self.info = replace(self.info, messages=count,
                            agent=agent_in_charge(self.messages, header["agent"]),
                            updated=max([self.info.created, *(m.time for m in self.messages)]))


def _recency(info: SessionInfo) -> tuple[float, float, str]:
    """What orders sessions by last use (the newest is the one ``--continue`` takes)."""
    return (info.updated, info.created, info.id)


def _valid(record: dict[str, Any]) -> bool:
    """Whether a message record loads (a damaged one is no message of the session)."""
    try:
        _message(record)
    except ValueError:
        return False
    return True


def _record_of(raw: bytes) -> dict[str, Any] | None:
    """A line's record, or None when it is damaged."""
    try:
        record = json.loads(raw)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _header(raw: bytes, path: Path) -> dict[str, Any]:
    try:
        header = json.loads(raw)
    except ValueError as exc:
        raise SessionError(f"{path}:1: unreadable session header: {exc}") from None
    if not isinstance(header, dict) or header.get("type") != "session":
        raise SessionError(f"{path}:1: not a dm_cc session file (no session header)")
    for key, kind in (("id", str), ("project", str), ("created", (int, float)),
                      ("agent", str), ("title", str)):
        if not isinstance(header.get(key), kind) or isinstance(header.get(key), bool):
            raise SessionError(f"{path}:1: session header: bad or missing {key!r}")
    if header.get("parent_id") is not None and not isinstance(header["parent_id"], str):
        raise SessionError(f"{path}:1: session header: bad 'parent_id'")
    return header


def _message(record: dict[str, Any]) -> Message:
    if record.get("role") not in _ROLES:
        raise ValueError(f"unknown role {record.get('role')!r}")
    try:
        return Message.from_json(record)
    except (TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"not a message: {exc}") from None


def read_session(path: Path) -> Session:
    """Load one session file; damaged lines become warnings (see the module doc)."""
    return _parse(_read_bytes(path)[1], path)


def _read_bytes(path: Path) -> tuple[Key, bytes]:
    """A session file's bytes, with the key of the state they were read in: exactly the
    bytes ``fstat`` counted are read, so a message appended meanwhile changes the key
    from the one returned (and the session index reads the file again next time)."""
    try:
        with path.open("rb") as handle:
            status = os.fstat(handle.fileno())
            return file_key(status), handle.read(status.st_size)
    except OSError as exc:
        raise SessionError(f"{path}: cannot read session file: {exc}") from None


def _parse(data: bytes, path: Path) -> Session:
    """The session the bytes ``data`` of the file ``path`` hold."""
    lines = data.split(b"\n")
    finished = lines[-1] == b""  # the file ends with a newline: no torn last line
    if finished:
        lines.pop()
    if not lines or not lines[0].strip():
        raise SessionError(f"{path}:1: empty session file (no session header)")
    header = _header(lines[0], path)
    title = header["title"]
    messages: list[Message] = []
    warnings: list[str] = []
    for number, raw in enumerate(lines[1:], start=2):
        if not raw.strip():
            continue  # the separator an append adds after a torn line
        try:
            record = json.loads(raw)
            if not isinstance(record, dict):
                raise ValueError("not a JSON object")
            kind = record.get("type")
            if kind == "message":
                messages.append(_message(record))
            elif kind == "title" and isinstance(record.get("title"), str):
                title = record["title"]
            else:
                raise ValueError(f"unknown record type {kind!r}")
        except ValueError as exc:  # json.JSONDecodeError and UnicodeDecodeError included
            if number == len(lines) and not finished:
                text = f"{path}:{number}: skipped the unfinished last line (interrupted write)"
            else:
                text = f"{path}:{number}: skipped a corrupt line ({exc})"
            warnings.append(text)
            logger.warning("%s", text)
    created = float(header["created"])
    info = SessionInfo(
        id=header["id"], parent_id=header.get("parent_id"), title=title,
        agent=agent_in_charge(messages, header["agent"]), project=Path(header["project"]),
        created=created, updated=max([created, *(m.time for m in messages)]),
        messages=len(messages), path=path)
    return Session(info, messages, warnings)


class SessionStore:
    """The session files in one directory (created on the first :meth:`create`), and
    their index (``session_index.py``) for listings. ``warnings``: what was wrong with
    the index (each found once, as it is rebuilt; :meth:`take_warnings`); ``files_read``:
    how many session files listings have read in full (the index spares the others)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.warnings: builtins.list[str] = []
        self.files_read = 0

    def path_of(self, session_id: str) -> Path:
        return self.root / f"{session_id}.jsonl"

    def create(self, project: Path, *, parent_id: str | None = None, title: str = "",
               agent: str = "build") -> Session:
        now = time.time_ns()
        session_id = new_session_id(now)
        info = SessionInfo(id=session_id, parent_id=parent_id, title=title, agent=agent,
                           project=project.resolve(), created=now / 1e9, updated=now / 1e9,
                           messages=0, path=self.path_of(session_id))
        header = {"type": "session", "id": session_id, "parent_id": parent_id, "title": title,
                  "project": str(info.project), "created": info.created, "agent": agent}
        return Session(info, [], header=_encode(header))   # written with its first record

    def load(self, session_id: str) -> Session:
        path = self.path_of(session_id)
        if not _ID.fullmatch(session_id) or not path.is_file():
            raise SessionError(f"no session {session_id!r} in {self.root} "
                               "(`dm_cc sessions list` shows them)")
        return read_session(path)

    def list(self, project: Path | None = None, *,
             empty: bool = False) -> builtins.list[SessionInfo]:
        """Every readable session (of ``project`` when given) that holds a message,
        oldest first; with ``empty`` those without one too (left by an older dm_cc:
        a session's file is now written with its first message). Unreadable files
        are skipped with a logged warning. What each file holds comes from the index
        while the file is as it was indexed, else from reading it (see
        ``session_index.py``): the same as reading every file."""
        return self._listed(project, empty)

    def latest(self, project: Path) -> SessionInfo | None:
        """The top-level session of ``project`` used most recently (for --continue);
        sessions without messages (opened and left) have nothing to continue."""
        return self._latest(project)

    def continue_latest(self, project: Path) -> Session | None:
        """The session :meth:`latest` names, loaded (``--continue``). The one used last
        is usually one the listing had to read (it changed since it was indexed): that
        reading is returned then, rather than the file read a second time."""
        wanted = project.resolve()
        read: builtins.list[Session] = []

        def keep(session: Session) -> None:
            info = session.info
            if info.project == wanted and info.parent_id is None and info.messages \
                    and (not read or _recency(info) > _recency(read[0].info)):
                read[:] = [session]
        info = self._latest(project, keep)
        if info is None:
            return None
        if read and read[0].info == info and read[0].path == self.path_of(info.id):
            return read[0]
        return self.load(info.id)

    def _latest(self, project: Path,
                keep: Callable[[Session], None] | None = None) -> SessionInfo | None:
        top = [info for info in self._listed(project, False, keep) if info.parent_id is None]
        return max(top, key=_recency, default=None)

    def _listed(self, project: Path | None, empty: bool,
                keep: Callable[[Session], None] | None = None) -> builtins.list[SessionInfo]:
        if not self.root.is_dir():
            return []
        wanted = project.resolve() if project is not None else None
        found = [info for info in self._indexed(wanted, keep)
                 if (wanted is None or info.project == wanted) and (info.messages or empty)]
        return sorted(found, key=lambda info: (info.created, info.id))

    def _indexed(self, wanted: Path | None,
                 keep: Callable[[Session], None] | None) -> builtins.list[SessionInfo]:
        """The info of every readable session file (of ``wanted``, when given: those of
        other projects may be left out), from the index where it is current; the index
        is brought up to date (rewritten) when anything in it was not. Each session
        read meanwhile is passed to ``keep``."""
        entries, problem = load_index(self.root)
        if problem is not None:
            self._warn(problem)
        fresh: dict[str, Entry] = {}
        infos: builtins.list[SessionInfo] = []
        with os.scandir(self.root) as found:
            names = sorted(entry.name for entry in found if entry.name.endswith(".jsonl"))
        for name in names:
            current = self._entry(name, entries.get(name), wanted, keep)
            if current is not None:
                fresh[name], info = current
                if info is not None:
                    infos.append(info)
        if fresh != entries:
            try:
                save_index(self.root, fresh)
            except OSError as exc:   # derived data: the next listing reads the files again
                logger.warning("cannot write the session index in %s: %s", self.root, exc)
        return infos

    def _entry(self, name: str, known: Entry | None, wanted: Path | None,
               keep: Callable[[Session], None] | None) -> tuple[Entry, SessionInfo | None] | None:
        """The entry and info of the file ``name``: ``known``'s while the file is as it
        was indexed (and the entry makes sense), else read from the file. No info for a
        file that cannot be read (the warning logged) or, from the index, of a project
        other than ``wanted``; None when the file has gone."""
        try:
            key = file_key(os.stat(os.path.join(self.root, name)))   # no Path: 1,000 of them
        except OSError:
            return None   # gone since the directory was listed
        try:
            if known is not None and (held := entry_of(known, key)) is not None:
                info, error = held
                if info is None:
                    logger.warning("skipped session file: %s", error)
                    return known, None
                project = info.get("project")
                if wanted is not None and isinstance(project, str) and project != str(wanted):
                    return known, None   # checked whole only by the listings that show it
                return known, SessionInfo.from_json(info, self.root / name)
        except ValueError as exc:
            self._warn(f"{self.root / INDEX_NAME}: damaged entry for {name} ({exc}); "
                       "read the session file again")
        path = self.root / name
        self.files_read += 1
        try:
            key, data = _read_bytes(path)
            session = _parse(data, path)
        except SessionError as exc:   # unreadable, forbidden, or gone meanwhile
            logger.warning("skipped session file: %s", exc)
            return (new_entry(key, error=str(exc)), None) if path.exists() else None
        if keep is not None:
            keep(session)
        return new_entry(key, info=session.info.to_json()), session.info

    def take_warnings(self) -> builtins.list[str]:
        """:attr:`warnings` not taken yet, for a front end to show (each once)."""
        taken, self.warnings = self.warnings, []
        return taken

    def _warn(self, text: str) -> None:
        self.warnings.append(text)
        logger.warning("%s", text)
