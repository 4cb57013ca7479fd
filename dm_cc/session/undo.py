"""The undo store: the previous state of every path a step changed, per session,
bounded in size, so that a step (an edit, a write, a shell command's changes) can be
undone.

    store = UndoStore(state_dir(env) / "undo")               # compose's World.undo
    with store.recorder(session_id, root, "edit src/a.py", turn=4) as recorder:
        recorder.keep("src/a.py")          # BEFORE the path changes
        ...                                # change it
    # closed on leaving the block: the step is saved (nothing when nothing changed)
    store.steps(session_id)                # oldest first
    store.undo(session_id)                 # the last step; undo(session_id, 3): before step 3

What is kept, per path (``keep`` is called before the path is written, replaced,
created, deleted or chmod-ed): nothing for a path that is absent (undo removes it);
a regular file's content and permission bits (a copy; a hard link when the caller
says it will only replace or unlink the file, ``moving=True``, and the store is on
the same filesystem); a symlink's target (never followed); a directory's
permission bits (a directory that did not exist is removed by undo when it is
empty, left in place otherwise). When the step closes, each path's state after it
is recorded (kind, size, modification time, mode, a sha256 for files up to
``file_states.HASH_LIMIT``, a symlink's target); a path that did not change is forgotten, and a
step that changed nothing is no step at all and costs nothing.

Undo restores the project to before step N by undoing N, N+1 … the last, newest
first, ALL OR NOTHING: when any path's state now differs from its state after the
last step that changed it (or changed between two steps: someone else wrote it),
when a kept copy is missing, a record is damaged, a parent directory became a
symlink, or a file cannot go back because a directory holding other files is in
its place, nothing is restored and every reason is returned, each naming the path
(``src/a.py changed since step 3: its content changed``). A path whose state is
already the one undo would restore is no obstacle. Restored files get the time
now as their modification time (as ``git checkout`` does, so builds see them).
Undone steps are removed from the store; an I/O error part-way stops there (the
result says which steps were undone; the step that failed is kept).

Layout (the directory is 0700; dm_cc's state dir, hidden from confined commands):

    <dir>/<session>/000003.json     step 3's record: label, turn, time, root, and
                                    each path's state before and after (JSON)
    <dir>/<session>/000003/<n>      the content kept for its n-th path
    <dir>/.pending/<session>-<hex>/ an open recorder's content (swept after a day)
    <dir>/index.json                every step's session, number, time, size and
                                    root: what the bound and ``sessions()`` read;
                                    rebuilt from the records when missing or damaged
    <dir>/.lock                     held while a step is saved, undone or dropped

A record is written whole or not at all, and durably (``durable.replace_file``:
fsynced, its directory too) -- a step's one durable write; the index is derived
from the records, replaced whole but not fsynced: after a crash it may miss the
last steps, so the first read of it in a process checks it against the records'
names (one listing per session) and reads the records instead when they differ.
Steps are numbered 1, 2 … per session under the lock (after an undo, the next step
takes the first free number again).

The bound: when the bytes kept by all sessions pass ``limit_bytes`` (default 256
MB), the oldest steps, across sessions, are dropped until they no longer do; a
single step may keep at most ``limit_bytes`` (``keep`` raises :class:`UndoError`
past it). A damaged record is reported (:meth:`UndoStore.problems`) and kept as it
is, never dropped or rewritten: undo refuses to go past it.

Concurrency: steps are saved, undone and dropped under an exclusive ``flock``;
reads take none (a record is replaced whole). POSIX only.

The parts, one way: this store (numbers, records, the bound) -> undo_recorder.py
(a step being recorded), undo_restore.py (undoing on the files) -> file_states.py
(a path's state, looked at and put back without following a symlink) ->
undo_records.py (the data and its JSON).
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import re
import secrets
import shutil
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from dm_cc.config import locked, replace_file
from dm_cc.errors import UndoError
from dm_cc.session.file_states import Unsafe
from dm_cc.session.undo_recorder import Recorder
from dm_cc.session.undo_records import (
    SESSION_ID,
    VERSION,
    Kept,
    Record,
    Step,
    UndoResult,
    check_id,
    parse_record,
    record_json,
)
from dm_cc.session.undo_restore import obstacles, restore

__all__ = ["DEFAULT_LIMIT", "UndoStore"]

logger = logging.getLogger(__name__)
logger.addHandler(logging.NullHandler())

DEFAULT_LIMIT = 256 * 1024 * 1024
PENDING_AGE = 86400.0            # seconds after which an unclosed recorder's content is swept
_RECORD = re.compile(r"(\d{6,})\.json")
_BLOBS = re.compile(r"\d{6,}")


class UndoStore:
    """The undo store in ``directory`` (see the module doc)."""

    def __init__(self, directory: Path, *, limit_bytes: int = DEFAULT_LIMIT) -> None:
        self.directory = directory
        self.limit_bytes = limit_bytes
        self._lock = directory / ".lock"
        self._index_path = directory / "index.json"
        self._checked = False      # the index was found to name every record (once)

    def recorder(self, session_id: str, root: Path, label: str, *, turn: int) -> Recorder:
        """A new step of ``session_id`` in the project ``root``: keep each path before
        changing it, close the recorder after (or use it as a context manager)."""
        return Recorder(check_id(session_id), Path(root).resolve(), label, turn,
                        limit_bytes=self.limit_bytes,
                        pending=lambda: self._pending_dir(session_id), save=self._save)

    # ------------------------------------------------------------------ reading

    def steps(self, session_id: str) -> list[Step]:
        """The saved steps of ``session_id``, oldest first (damaged records left out:
        :meth:`problems` names them)."""
        return [record.step for record in self._read(check_id(session_id))[0]]

    def problems(self, session_id: str) -> list[str]:
        """A sentence for each damaged record of ``session_id`` (kept as it is)."""
        return list(self._read(check_id(session_id))[1].values())

    def sessions(self, root: Path | None = None) -> list[str]:
        """The sessions that have steps (in the project ``root`` when given), the one
        with the newest step first."""
        wanted = str(Path(root).resolve()) if root is not None else None
        newest: dict[str, float] = {}
        for entry in self._index():
            if wanted is None or entry["root"] == wanted:
                newest[entry["session"]] = max(newest.get(entry["session"], 0.0), entry["time"])
        return sorted(newest, key=lambda session: (newest[session], session), reverse=True)

    def size(self) -> int:
        """The bytes kept by every step of every session."""
        return sum(entry["size"] for entry in self._index())

    def _read(self, session_id: str) -> tuple[list[Record], dict[int, str]]:
        """The session's records, oldest first, and its damaged ones (number -> why)."""
        folder = self.directory / session_id
        try:
            names = sorted(os.listdir(folder))
        except FileNotFoundError:
            return [], {}
        except OSError as exc:
            raise UndoError(f"{folder}: cannot read the undo store: {exc}") from None
        records: list[Record] = []
        damaged: dict[int, str] = {}
        for name in names:
            if (found := _RECORD.fullmatch(name)) is None:
                continue
            number, path = int(found[1]), folder / name
            try:
                records.append(parse_record(path.read_bytes(), session_id, number))
            except FileNotFoundError:
                continue    # undone or dropped meanwhile
            except (OSError, ValueError) as exc:
                damaged[number] = (f"{path}: the record of step {number} is damaged ({exc}); "
                                   "it is kept as it is, and undo stops before it")
        records.sort(key=lambda record: record.step.number)
        return records, damaged

    # ------------------------------------------------------------------ undoing

    def undo(self, session_id: str, step: int | None = None) -> UndoResult:
        """Restore the project to before step ``step`` of ``session_id`` (None: the
        last step), undoing it and every later step, newest first -- or nothing, with
        the reasons (see the module doc)."""
        check_id(session_id)
        with self._locked():
            records, damaged = self._read(session_id)
            numbers = sorted({*(record.step.number for record in records), *damaged})
            if not numbers:
                return UndoResult(refused=(f"session {session_id} has no step to undo",))
            first = numbers[-1] if step is None else step
            if first not in numbers:
                return UndoResult(refused=(f"session {session_id} has no step {step} (its "
                                           f"steps are {_spans(numbers)})",))
            if reasons := [damaged[n] for n in numbers if n >= first and n in damaged]:
                return UndoResult(refused=tuple(reasons))
            chosen = [record for record in reversed(records) if record.step.number >= first]
            if reasons := obstacles(chosen, self._blobs):
                return UndoResult(refused=tuple(reasons))
            return self._apply(chosen)

    def _apply(self, chosen: Sequence[Record]) -> UndoResult:
        undone: list[Step] = []
        restored: set[str] = set()
        left: list[str] = []
        failed: str | None = None
        for record in chosen:
            try:
                restore(record, self._blobs(record.step), restored, left)
            except (OSError, Unsafe) as exc:
                failed = (f"step {record.step.number} ({record.step.label}) could not be "
                          f"undone: {exc}; it is kept, and the steps before it too")
                break
            self._forget(record.step)
            undone.append(record.step)
        return UndoResult(tuple(undone), tuple(sorted(restored)),
                          tuple(sorted(set(left) - restored)), failed=failed)

    # ------------------------------------------------------------------ saving

    def _save(self, recorder: Recorder, kept: list[Kept], pending: Path | None) -> Step:
        """Give the recorder's step its number and save it; then keep to the bound."""
        folder = self.directory / recorder.session_id
        with self._locked():
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            taken = [int(name.split(".")[0]) for name in os.listdir(folder)
                     if _RECORD.fullmatch(name) or _BLOBS.fullmatch(name)]
            number = max(taken, default=0) + 1
            step = Step(recorder.session_id, number, recorder.label, recorder.turn, time.time(),
                        tuple(k.path for k in kept), sum(_kept_size(k) for k in kept),
                        recorder.root)
            blobs = self._blobs(step)
            if pending is not None:
                os.rename(pending, blobs)
            else:
                blobs.mkdir(mode=0o700)
            index = [entry for entry in self._index()
                     if entry["session"] != step.session_id
                     or (folder / f"{entry['number']:06d}.json").exists()]
            index.append({"session": step.session_id, "number": number, "time": step.time,
                          "size": step.size, "root": str(step.root)})
            replace_file(folder / f"{number:06d}.json", record_json(Record(step, tuple(kept))))
            self._write_index(index)      # after: lost in a crash, the check finds it out
            self._sweep(folder)
            self._bound(index, step)
        return step

    def _bound(self, index: list[dict[str, Any]], newest: Step) -> None:
        """Drop the oldest steps (never ``newest``) while the store passes its limit."""
        total = sum(entry["size"] for entry in index)
        if total <= self.limit_bytes:
            return
        kept = list(index)
        for entry in sorted(index, key=lambda e: (e["time"], e["session"], e["number"])):
            if total <= self.limit_bytes:
                break
            if (entry["session"], entry["number"]) == (newest.session_id, newest.number):
                continue
            self._drop(entry["session"], entry["number"])
            kept.remove(entry)
            total -= entry["size"]
            logger.info("undo store over %d bytes: dropped step %d of %s", self.limit_bytes,
                        entry["number"], entry["session"])
        self._write_index(kept)

    def _drop(self, session_id: str, number: int) -> None:
        """Remove a step's record and content (a damaged record stays, uncounted)."""
        folder = self.directory / session_id
        record = folder / f"{number:06d}.json"
        try:
            parse_record(record.read_bytes(), session_id, number)
        except FileNotFoundError:
            pass
        except (OSError, ValueError):
            return
        with suppress(FileNotFoundError):
            record.unlink()
        shutil.rmtree(folder / f"{number:06d}", ignore_errors=True)
        with suppress(OSError):
            folder.rmdir()    # the session's last step: its folder goes too

    def _forget(self, step: Step) -> None:
        """Remove an undone step from the store and the index."""
        self._drop(step.session_id, step.number)
        self._write_index([entry for entry in self._index()
                           if (entry["session"], entry["number"]) != (step.session_id,
                                                                      step.number)])

    def _sweep(self, folder: Path) -> None:
        """Remove what a crash left: content with no record in ``folder``, and
        recorders' content nobody closed for a day."""
        names = set(os.listdir(folder))
        for name in names:
            if _BLOBS.fullmatch(name) and f"{name}.json" not in names:
                shutil.rmtree(folder / name, ignore_errors=True)
        pending = self.directory / ".pending"
        with suppress(OSError):
            for entry in os.scandir(pending):
                if entry.stat(follow_symlinks=False).st_mtime < time.time() - PENDING_AGE:
                    shutil.rmtree(entry.path, ignore_errors=True)

    def _blobs(self, step: Step) -> Path:
        return self.directory / step.session_id / f"{step.number:06d}"

    def _pending_dir(self, session_id: str) -> Path:
        """A new directory for an open recorder's content."""
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        pending = self.directory / ".pending"
        pending.mkdir(exist_ok=True, mode=0o700)
        folder = pending / f"{session_id}-{secrets.token_hex(6)}"
        folder.mkdir(mode=0o700)
        return folder

    # ------------------------------------------------------------------ the index

    def _index(self) -> list[dict[str, Any]]:
        """Every step's session, number, time, size and root (from ``index.json``, or
        from the records when it is missing or damaged)."""
        try:
            document = json.loads(self._index_path.read_bytes())
            steps = document["steps"]
            if document["version"] != VERSION or not all(
                    isinstance(e, dict) and isinstance(e.get("session"), str)
                    and type(e.get("number")) is int and type(e.get("size")) is int
                    and isinstance(e.get("time"), int | float) and isinstance(e.get("root"), str)
                    for e in steps):
                raise ValueError("wrong shape")
            if not self._checked:
                if not self._names_every_record(steps):
                    scanned = self._scan()      # damaged records are in neither
                    if _numbers(scanned) != _numbers(steps):
                        logger.warning("%s: read from the step records instead (it does not "
                                       "name the same: a crash before it was written)",
                                       self._index_path)
                        return scanned
                self._checked = True
            return list(steps)
        except FileNotFoundError:
            pass
        except (OSError, ValueError, KeyError, TypeError) as exc:
            logger.warning("%s: rebuilt from the step records (%s)", self._index_path, exc)
        return self._scan()

    def _names_every_record(self, steps: list[dict[str, Any]]) -> bool:
        """Whether ``steps`` names exactly the records there are (their file names)."""
        named = _numbers(steps)
        found: set[tuple[str, int]] = set()
        try:
            for entry in os.scandir(self.directory):
                if entry.is_dir(follow_symlinks=False) and SESSION_ID.fullmatch(entry.name):
                    found.update((entry.name, int(m[1])) for name in os.listdir(entry.path)
                                 if (m := _RECORD.fullmatch(name)))
        except OSError:
            return True        # what cannot be listed is read as the index says
        return found == named

    def _scan(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        try:
            folders = sorted(entry.name for entry in os.scandir(self.directory)
                             if entry.is_dir(follow_symlinks=False)
                             and SESSION_ID.fullmatch(entry.name))
        except OSError:
            return []
        for session_id in folders:
            for record in self._read(session_id)[0]:
                step = record.step
                found.append({"session": step.session_id, "number": step.number,
                              "time": step.time, "size": step.size, "root": str(step.root)})
        return found

    def _write_index(self, steps: list[dict[str, Any]]) -> None:
        """Replace the index whole, not fsynced (derived: see the module doc)."""
        data = json.dumps({"version": VERSION, "steps": steps}, ensure_ascii=True) + "\n"
        replace_file(self._index_path, data.encode("ascii"), sync=False)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            with locked(self._lock):
                yield
        except OSError as exc:
            raise UndoError(f"{self.directory}: the undo store cannot be changed: "
                            f"{exc.strerror or exc}") from None


def _numbers(steps: list[dict[str, Any]]) -> set[tuple[str, int]]:
    return {(entry["session"], entry["number"]) for entry in steps}


def _kept_size(kept: Kept) -> int:
    return kept.before.size if kept.before.kind == "file" else 0


def _spans(numbers: Sequence[int]) -> str:
    """``1-3, 5``."""
    out: list[str] = []
    for _key, group in itertools.groupby(enumerate(numbers), key=lambda p: p[1] - p[0]):
        run = [number for _index, number in group]
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ", ".join(out)
