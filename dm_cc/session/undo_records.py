"""The undo store's data: a path's :class:`State`, a saved :class:`Step`, what
undoing did (:class:`UndoResult`), and a step's record as JSON (no I/O here).

    <store>/<session>/000003.json
    {"version": 1, "session": "ses_…", "number": 3, "label": "edit src/a.py",
     "turn": 4, "time": 1718000000.0, "root": "/abs/project", "size": 120,
     "paths": [{"path": "src/a.py", "blob": "0",
                "before": {"kind": "file", "mode": 420, "size": 120, "mtime_ns": …,
                           "sha256": "…"},
                "after": {"kind": "file", …}}]}

A state's ``kind`` is absent, file, symlink (with its ``target``), dir or other (a
device, FIFO or socket); ``blob`` names the kept content of a file's state in the
step's directory.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dm_cc.errors import UndoError

VERSION = 1
KINDS = ("absent", "file", "symlink", "dir", "other")
SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
_FIELDS = {"version", "session", "number", "label", "turn", "time", "root", "size", "paths"}


def clean(relative: str) -> str:
    """``relative`` as a canonical path from the root (``a/b``); ValueError for an
    empty path, an absolute one, one with ``..`` or a NUL."""
    if not isinstance(relative, str) or not relative or "\0" in relative:
        raise ValueError(f"not a path inside the project: {relative!r}")
    if relative.startswith("/"):
        raise ValueError(f"{relative}: an absolute path; undo keeps paths inside the project")
    parts = [part for part in relative.split("/") if part not in ("", ".")]
    if not parts:
        raise ValueError(f"{relative!r} is the project root itself, not a path inside it")
    if ".." in parts:
        raise ValueError(f"{relative}: a path with '..' may leave the project")
    return "/".join(parts)


def depth(relative: str) -> int:
    return relative.count("/")


@dataclass(frozen=True, slots=True)
class State:
    """A path's state: its kind, permission bits, size and modification time (files),
    sha256 (files up to ``file_states.HASH_LIMIT``, when asked for), target (symlinks)."""

    kind: str
    mode: int = 0
    size: int = 0
    mtime_ns: int = 0
    sha256: str | None = None
    target: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.kind in ("file", "dir", "other"):
            out["mode"] = self.mode
        if self.kind == "file":
            out.update(size=self.size, mtime_ns=self.mtime_ns)
            if self.sha256 is not None:
                out["sha256"] = self.sha256
        if self.kind == "symlink":
            out["target"] = self.target
        return out

    @classmethod
    def from_json(cls, data: object) -> State:
        if not isinstance(data, dict) or data.get("kind") not in KINDS:
            raise ValueError(f"not a path state: {data!r}")
        kind = data["kind"]
        known = {"kind", "mode", "size", "mtime_ns", "sha256", "target"}
        if unknown := sorted(set(data) - known):
            raise ValueError(f"unknown field {', '.join(unknown)} in a path state")
        for name in ("mode", "size", "mtime_ns"):
            value = data.get(name, 0)
            if type(value) is not int or value < 0:
                raise ValueError(f"{name} must be a whole number")
        sha, target = data.get("sha256"), data.get("target")
        if sha is not None and (not isinstance(sha, str) or len(sha) != 64):
            raise ValueError("sha256 must be 64 hex digits")
        if kind == "symlink" and not isinstance(target, str):
            raise ValueError("a symlink's state needs its target")
        return cls(kind, data.get("mode", 0), data.get("size", 0), data.get("mtime_ns", 0),
                   sha, target if kind == "symlink" else None)

    def same(self, other: State) -> bool:
        """Whether two states are the same as far as undo can tell: the kind; a
        file's permission bits, size and content (sha256 when both have one, else the
        modification time); a symlink's target; a directory's permission bits."""
        if self.kind != other.kind:
            return False
        if self.kind == "symlink":
            return self.target == other.target
        if self.kind in ("dir", "other"):
            return self.mode == other.mode
        if self.kind == "file":
            if (self.mode, self.size) != (other.mode, other.size):
                return False
            if self.sha256 is not None and other.sha256 is not None:
                return self.sha256 == other.sha256
            return self.mtime_ns == other.mtime_ns
        return True

    def difference(self, now: State) -> str:
        """How ``now`` differs from this state, in a few words."""
        if self.kind != now.kind:
            if now.kind == "absent":
                return "it was removed"
            if self.kind == "absent":
                return f"it was created ({_KIND_WORDS[now.kind]})"
            return f"it is now {_KIND_WORDS[now.kind]}"
        if self.kind == "symlink":
            return f"it now points to {now.target}"
        if self.mode != now.mode:
            return f"its mode changed ({self.mode:o} -> {now.mode:o})"
        return "its content changed"


_KIND_WORDS = {"absent": "nothing", "file": "a file", "symlink": "a symlink",
               "dir": "a directory", "other": "a special file"}


@dataclass(frozen=True, slots=True)
class Step:
    """One saved step: ``number`` (1, 2 … in its session), ``label`` (``edit
    src/a.py``, ``bash: npm install``), ``turn`` (the index of the session message the
    step belongs to: the last user message when it was recorded), ``time`` (epoch
    seconds), the ``paths`` it changed (relative to ``root``), ``size`` (bytes kept)."""

    session_id: str
    number: int
    label: str
    turn: int
    time: float
    paths: tuple[str, ...]
    size: int
    root: Path


@dataclass(frozen=True, slots=True)
class UndoResult:
    """What :meth:`UndoStore.undo` did. ``refused``: why nothing was restored (each
    reason names a path or a step); else ``undone`` (newest first), ``restored``
    (the paths put back or removed), ``left`` (directories a step made that were
    left in place: they hold files no step made), and ``failed`` when an I/O error
    stopped it part-way (the steps in ``undone`` were undone, the rest kept)."""

    undone: tuple[Step, ...] = ()
    restored: tuple[str, ...] = ()
    left: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()
    failed: str | None = None

    @property
    def ok(self) -> bool:
        return not self.refused and self.failed is None


@dataclass(frozen=True, slots=True)
class Kept:
    """One path of a step: its state before, after (None while recording) and the
    name of its kept content (a file's)."""

    path: str
    before: State
    after: State | None = None
    blob: str | None = None          # the name of its content in the step's directory


@dataclass(frozen=True, slots=True)
class Record:
    """A step and its paths, as its record holds them."""

    step: Step
    kept: tuple[Kept, ...]


def check_id(session_id: str) -> str:
    """``session_id``, when it is one (safe as a directory name); else UndoError."""
    if not isinstance(session_id, str) or not SESSION_ID.fullmatch(session_id):
        raise UndoError(f"not a session id: {session_id!r}")
    return session_id


def record_json(record: Record) -> bytes:
    """A step's record, as its file holds it (see the module doc)."""
    step = record.step
    document = {
        "version": VERSION, "session": step.session_id, "number": step.number,
        "label": step.label, "turn": step.turn, "time": step.time, "root": str(step.root),
        "size": step.size,
        "paths": [{"path": kept.path, "before": kept.before.to_json(),
                   "after": kept.after.to_json() if kept.after else None, "blob": kept.blob}
                  for kept in record.kept]}
    # one line (json's C encoder: a step of thousands of paths is written at once)
    try:
        return (json.dumps(document, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:   # an undecodable file name: kept, escaped
        return (json.dumps(document) + "\n").encode("ascii")


def parse_record(data: bytes, session_id: str, number: int) -> Record:
    """A step's record; ValueError saying what is wrong with it."""
    try:
        document = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc.msg} (line {exc.lineno})") from None
    if not isinstance(document, dict) or set(document) != _FIELDS:
        raise ValueError("not an undo step record (expected exactly "
                         f"{', '.join(sorted(_FIELDS))})")
    if document["version"] != VERSION:
        raise ValueError(f"unknown version {document['version']!r}")
    if document["session"] != session_id or document["number"] != number:
        raise ValueError(f"it says it is step {document['number']!r} of "
                         f"{document['session']!r}")
    for name, kind in (("label", str), ("root", str), ("turn", int), ("size", int),
                       ("time", (int, float)), ("paths", list)):
        if not isinstance(document[name], kind) or isinstance(document[name], bool):
            raise ValueError(f"bad {name}")
    if not document["root"].startswith("/"):
        raise ValueError("root must be an absolute path")
    kept: list[Kept] = []
    for index, entry in enumerate(document["paths"], start=1):
        if not isinstance(entry, dict) or set(entry) != {"path", "before", "after", "blob"}:
            raise ValueError(f"path {index}: expected path, before, after and blob")
        try:
            path = clean(entry["path"])
            before = State.from_json(entry["before"])
            after = State.from_json(entry["after"])
        except (ValueError, TypeError) as exc:
            raise ValueError(f"path {index}: {exc}") from None
        blob = entry["blob"]
        if before.kind == "file" and not (isinstance(blob, str) and blob.isdigit()):
            raise ValueError(f"path {index}: a file's state needs the name of its copy")
        kept.append(Kept(path, before, after, blob if before.kind == "file" else None))
    step = Step(session_id, number, document["label"], document["turn"],
                float(document["time"]), tuple(k.path for k in kept), document["size"],
                Path(document["root"]))
    return Record(step, tuple(kept))
