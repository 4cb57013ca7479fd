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
an entry lost that way is only read again the next time. It is not fsynced (it is
rewritten after every session used, and costs more to sync than to write): after a
crash it may be old (then stale: read again) or damaged (then reported and rebuilt).

Limit: a session file edited in place by hand, its size unchanged, within one tick
of the file system's clock (a few milliseconds) of the previous write, keeps its
old entry until it next changes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from dm_cc.config import replace_file

INDEX_NAME = "index.json"
VERSION = 1

Key = tuple[int, int, int, int]


def file_key(status: os.stat_result) -> Key:
    """What tells one state of a session file from another, cheaply (one ``stat``)."""
    return (status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)


Entry = dict[str, Any]
"""One file's entry, as JSON: its ``key`` when it was read, and what was read then --
the listing's fields (``info``, as ``SessionInfo.to_json``) or why it could not be read
(``error``). Entries are checked as they are used (:func:`entry_of`), so a listing
spends nothing on the entries of other projects' sessions."""


def new_entry(key: Key, *, info: dict[str, Any] | None = None,
              error: str | None = None) -> Entry:
    return {"key": list(key), "info": info} if info is not None else \
        {"key": list(key), "error": error}


def entry_of(entry: Entry, key: Key) -> tuple[dict[str, Any] | None, str | None] | None:
    """What ``entry`` holds -- (info, None) or (None, error) -- while its file's key is
    still ``key``; None when it is stale. ValueError when it makes no sense."""
    recorded = entry.get("key")
    if recorded != list(key):
        if not (isinstance(recorded, list) and len(recorded) == 4
                and all(isinstance(n, int) and not isinstance(n, bool) for n in recorded)):
            raise ValueError("no valid key")
        return None
    info, error = entry.get("info"), entry.get("error")
    if isinstance(info, dict) and error is None:
        return info, None
    if isinstance(error, str) and info is None:
        return None, error
    raise ValueError("neither info nor error")


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
    entries = data.get("sessions") if isinstance(data, dict) else None
    if not isinstance(entries, dict) or not all(isinstance(e, dict) for e in entries.values()):
        return {}, (f"{path}: damaged session index (not a session index); rebuilt it from "
                    "the session files")
    return entries, None


def save_index(root: Path, entries: dict[str, Entry]) -> None:
    """Replace ``root``'s index whole with ``entries``; OSError when it cannot."""
    data = {"version": VERSION, "sessions": {name: entries[name] for name in sorted(entries)}}
    text = json.dumps(data, separators=(",", ":"))   # ASCII: a lone surrogate stays escaped
    replace_file(root / INDEX_NAME, text.encode("ascii"), sync=False)   # derived: no fsync
