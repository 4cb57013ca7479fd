"""The index of a session directory, ``<root>/index.json``: what a listing shows of
each session file, so that ``dm_cc sessions list``, ``/sessions`` and ``--continue``
read one small file instead of every session in full.

    {"version": 1,
     "sessions": {"<id>.jsonl": {"key": [inode, size, mtime_ns, ctime_ns],
                                 "info": {…SessionInfo.to_json()}}   a readable session
                                 | {"key": […], "error": "…"}}}      an unreadable one

The index is derived data, never the truth: the session files are. An entry counts
only while its file's ``key`` (from ``stat``) is still the one it was read at; a
file whose key has changed (an append changes its size, ``/rewind`` its inode, any
write its times), or that has no entry, is read again in full and its entry
replaced; an entry whose file is gone is dropped. So the index can be stale or
missing at any moment without a listing ever showing wrong history -- which is why
appending a message does not touch it (no second write, no second fsync per
message): the next listing re-reads the sessions written since, and only those.

An index that cannot be read or makes no sense is reported (see
:func:`load_index`) and rebuilt from the session files; an index of another
``version`` is rebuilt silently (another dm_cc wrote it). It is replaced whole in
one step (``durable.replace_file``), so dm_cc processes listing at the same time
cannot tear it: the last one's write wins, and as every entry carries its own key,
an entry lost that way is only read again the next time.

Limit: a session file edited in place by hand, its size unchanged, within one tick
of the file system's clock (a few milliseconds) of the previous write, keeps its
old entry until it next changes.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dm_cc.config import replace_file

INDEX_NAME = "index.json"
VERSION = 1

Key = tuple[int, int, int, int]


def file_key(status: os.stat_result) -> Key:
    """What tells one state of a session file from another, cheaply (one ``stat``)."""
    return (status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)


@dataclass(frozen=True, slots=True)
class Entry:
    """One file's entry: its ``key`` when it was read, and what was read then -- the
    listing's fields (``info``, JSON as ``SessionInfo.to_json``) or why it could not
    be read (``error``)."""

    key: Key
    info: dict[str, Any] | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"key": list(self.key)}
        if self.info is not None:
            data["info"] = self.info
        else:
            data["error"] = self.error
        return data


def _entry(data: Any) -> Entry:
    """An entry from its JSON; ValueError when it makes no sense."""
    if not isinstance(data, dict):
        raise ValueError("an entry is not an object")
    key = data.get("key")
    if not (isinstance(key, list) and len(key) == 4
            and all(isinstance(n, int) and not isinstance(n, bool) for n in key)):
        raise ValueError("an entry has no valid key")
    info, error = data.get("info"), data.get("error")
    if isinstance(info, dict) and error is None:
        return Entry((key[0], key[1], key[2], key[3]), info=info)
    if isinstance(error, str) and info is None:
        return Entry((key[0], key[1], key[2], key[3]), error=error)
    raise ValueError("an entry has neither info nor error")


def load_index(root: Path) -> tuple[dict[str, Entry], str | None]:
    """The entries of ``root``'s index by file name, and what was wrong with it (None:
    nothing, or it was missing or of another version -- then there are no entries, and
    every session is read as if there had never been an index)."""
    path = root / INDEX_NAME
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return {}, None
    except (OSError, ValueError) as exc:   # UnicodeDecodeError and JSONDecodeError too
        return {}, f"{path}: unreadable session index ({exc}); rebuilt it from the session files"
    if isinstance(data, dict) and data.get("version") != VERSION \
            and isinstance(data.get("version"), int):
        return {}, None
    try:
        if not isinstance(data, dict) or not isinstance(data.get("sessions"), dict):
            raise ValueError("not a session index")
        entries = {str(name): _entry(entry) for name, entry in data["sessions"].items()}
    except ValueError as exc:
        return {}, f"{path}: damaged session index ({exc}); rebuilt it from the session files"
    return entries, None


def save_index(root: Path, entries: dict[str, Entry]) -> None:
    """Replace ``root``'s index whole with ``entries``; OSError when it cannot."""
    data = {"version": VERSION,
            "sessions": {name: entries[name].to_json() for name in sorted(entries)}}
    text = json.dumps(data, separators=(",", ":"))   # ASCII: a lone surrogate stays escaped
    replace_file(root / INDEX_NAME, text.encode("ascii"))
