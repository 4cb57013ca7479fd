"""The session index: listings from it are the listings of a full read, whatever happened
to the files or to the index; it is rebuilt when missing, stale or damaged; a listing
reads only the sessions that changed."""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dm_cc.session.store as store_module
from dm_cc.errors import SessionError
from dm_cc.session.messages import Message
from dm_cc.session.session_index import INDEX_NAME
from dm_cc.session.store import SessionStore, read_session, session_tree


def full_read(root: Path, project: Path | None = None, empty: bool = False):
    """The reference: every session file read in full (the listing before the index)."""
    if not root.is_dir():
        return []
    wanted = project.resolve() if project is not None else None
    found = []
    for path in sorted(root.glob("*.jsonl")):
        try:
            info = read_session(path).info
        except SessionError:
            continue
        if (wanted is None or info.project == wanted) and (info.messages or empty):
            found.append(info)
    return sorted(found, key=lambda info: (info.created, info.id))


def full_latest(root: Path, project: Path):
    top = [info for info in full_read(root, project) if info.parent_id is None]
    return max(top, key=lambda info: (info.updated, info.created, info.id), default=None)


def assert_continues_as_a_full_read(root: Path, project: Path) -> None:
    """``--continue`` from a new store (the index as it is) loads what a full read would."""
    latest = full_latest(root, project)
    continued = SessionStore(root).continue_latest(project)
    if latest is None:
        assert continued is None
        return
    full = read_session(latest.path)
    assert (continued.info, continued.messages, continued.warnings) == (
        full.info, full.messages, full.warnings)


def assert_same_as_full_read(root: Path, projects: list[Path]) -> SessionStore:
    """A new store's listings (as a new dm_cc process would list) equal the full read's;
    listing changed no session file. The store, for its warnings and counts."""
    before = {path: path.read_bytes() for path in root.glob("*.jsonl")} if root.is_dir() else {}
    for project in projects:    # first: with the index as the operations left it
        assert_continues_as_a_full_read(root, project)
    store = SessionStore(root)
    assert store.list() == full_read(root)
    assert store.list(empty=True) == full_read(root, empty=True)
    for project in projects:
        assert store.list(project) == full_read(root, project)
        assert store.latest(project) == full_latest(root, project)
    assert session_tree(store.list()) == session_tree(full_read(root))
    after = {path: path.read_bytes() for path in root.glob("*.jsonl")} if root.is_dir() else {}
    assert after == before
    return store


def parsed_paths(monkeypatch) -> list[Path]:
    """Every session file parsed from now on, in order (a spy on the store's parser)."""
    seen: list[Path] = []
    parse = store_module._parse

    def counting(data: bytes, path: Path):
        seen.append(path)
        return parse(data, path)
    monkeypatch.setattr(store_module, "_parse", counting)
    return seen


def history(root: Path, project: Path, sessions: int, messages: int = 3) -> list[str]:
    """``sessions`` sessions of ``project`` (each with a child), written straight to their
    files in the store's format (quick: no fsync per message)."""
    store = SessionStore(root)
    root.mkdir(parents=True, exist_ok=True)
    ids = []

    def write(session, records) -> None:
        lines = [session._header, *(store_module._encode(
            {"type": "message", **message.to_json()}) for message in records)]
        session.path.write_bytes(b"".join(lines))
    for number in range(sessions):
        session = store.create(project)
        write(session, [Message("user" if turn % 2 == 0 else "assistant",
                                f"prompt {number}.{turn}", time=1000.0 + number + turn / 100)
                        for turn in range(messages)])
        child = store.create(project, parent_id=session.id, agent="explore")
        write(child, [Message("user", "look around", agent="explore", time=1000.0 + number)])
        ids.append(session.id)
    return ids


# -- equivalence under anything that can happen to the files and the index -------------

OPERATIONS = st.lists(st.tuples(
    st.sampled_from(["new", "child", "append", "title", "rewind", "garbage", "torn",
                     "bad_header", "delete", "list", "index_garbage", "index_delete",
                     "index_bad_entry", "index_foreign_version"]),
    st.integers(0, 7), st.floats(0, 1e6, allow_nan=False)), min_size=1, max_size=10)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPERATIONS)
def test_listings_from_the_index_equal_a_full_read_whatever_happens(operations):
    # durability is not what this checks: fsync (most of the time taken) made a no-op
    with tempfile.TemporaryDirectory() as scratch, mock.patch("os.fsync"):
        base = Path(scratch)
        projects = [base / "a", base / "b"]
        for project in projects:
            project.mkdir()
        root = base / "sessions"
        writer = SessionStore(root)
        open_sessions = []
        for operation, pick, when in operations:
            project = projects[pick % 2]
            target = open_sessions[pick % len(open_sessions)] if open_sessions else None
            index = root / INDEX_NAME
            if operation in ("new", "child") or target is None:
                parent = target.id if operation == "child" and target else None
                session = writer.create(project, parent_id=parent)
                session.append(Message("user", f"hello {pick}", time=when))
                open_sessions.append(session)
            elif operation == "append":
                target.append(Message("assistant" if pick % 3 else "user", "more", time=when,
                                      agent="plan" if pick % 2 else "build"))
            elif operation == "title":
                target.set_title(f"title {pick}")
            elif operation == "rewind" and target.path.exists():
                target.truncate(len(target.messages) // 2)
            elif operation in ("garbage", "torn") and target.path.exists():
                with target.path.open("ab") as out:
                    out.write(b"{not json\n" if operation == "garbage" else b'{"type": "mess')
            elif operation == "bad_header":
                (root / f"ses_broken_{pick}.jsonl").write_bytes(b"not a header\n")
            elif operation == "delete" and target.path.exists():
                target.path.unlink()
                open_sessions.remove(target)
            elif operation == "list":
                SessionStore(root).list()
            elif operation == "index_garbage" and root.is_dir():
                index.write_bytes(b"\x00{ garbage")
            elif operation == "index_delete" and index.exists():
                index.unlink()
            elif operation == "index_bad_entry" and index.exists():
                data = json.loads(index.read_bytes())
                for entry in data["sessions"].values():
                    entry["info"] = {"id": 3}
                index.write_text(json.dumps(data))
            elif operation == "index_foreign_version" and index.exists():
                index.write_text(json.dumps({"version": 99, "sessions": []}))
            assert_same_as_full_read(root, projects)


# -- missing, stale, damaged --------------------------------------------------------

def test_a_missing_index_is_built_silently_then_spares_every_read(tmp_path, monkeypatch):
    root = tmp_path / "sessions"
    history(root, tmp_path, 5)
    parsed = parsed_paths(monkeypatch)
    first = SessionStore(root)
    infos = first.list()
    assert len(parsed) == first.files_read == 10 and first.warnings == []
    assert (root / INDEX_NAME).is_file()
    again = SessionStore(root)
    assert again.list() == infos and again.files_read == 0 and len(parsed) == 10
    (root / INDEX_NAME).unlink()
    rebuilt = SessionStore(root)
    assert rebuilt.list() == infos and rebuilt.files_read == 10 and rebuilt.warnings == []


def test_a_stale_entry_is_read_again_and_only_it(tmp_path, monkeypatch):
    root = tmp_path / "sessions"
    ids = history(root, tmp_path, 4)
    SessionStore(root).list()
    session = SessionStore(root).load(ids[1])
    session.append(Message("user", "one more", time=9e9))
    parsed = parsed_paths(monkeypatch)
    store = SessionStore(root)
    assert store.latest(tmp_path).id == ids[1]          # the one used last
    assert parsed == [session.path]
    session.truncate(1)                                  # /rewind: a new file, same name
    after = SessionStore(root).list()
    assert parsed == [session.path, session.path]
    assert after == full_read(root)
    assert next(info for info in after if info.id == ids[1]).messages == 1


@pytest.mark.parametrize("damage", [b"\x00{ garbage", b'{"version": 1}', b"[1, 2]",
                                    b'{"version": 1, "sessions": {"x.jsonl": 5}}',
                                    b"\xff\xfe"])
def test_a_damaged_index_is_reported_and_rebuilt_losing_nothing(tmp_path, damage, caplog):
    root = tmp_path / "sessions"
    history(root, tmp_path, 3)
    sessions = {path: path.read_bytes() for path in root.glob("*.jsonl")}
    SessionStore(root).list()
    (root / INDEX_NAME).write_bytes(damage)
    store = SessionStore(root)
    with caplog.at_level(logging.WARNING, logger="dm_cc.session.store"):
        assert store.list() == full_read(root)
    assert len(store.warnings) == 1
    warning = store.warnings[0]
    assert warning.startswith(f"{root / INDEX_NAME}: ") and "session index" in warning
    assert "rebuilt it from the session files" in warning and warning in caplog.text
    assert store.take_warnings() == [warning] and store.warnings == []
    assert {path: path.read_bytes() for path in root.glob("*.jsonl")} == sessions
    healed = SessionStore(root)
    assert healed.list() == full_read(root) and healed.warnings == [] and healed.files_read == 0


@pytest.mark.parametrize(("field", "value", "why"), [
    ("messages", "many", "bad or missing 'messages'"), ("key", "no", "no valid key"),
    ("info", None, "neither info nor error")])
def test_a_damaged_entry_is_reported_and_its_file_read_again(tmp_path, field, value, why):
    root = tmp_path / "sessions"
    ids = history(root, tmp_path, 2)
    SessionStore(root).list()
    data = json.loads((root / INDEX_NAME).read_bytes())
    entry = data["sessions"][f"{ids[0]}.jsonl"]
    (entry["info"] if field == "messages" else entry)[field] = value
    (root / INDEX_NAME).write_text(json.dumps(data))
    store = SessionStore(root)
    assert store.list(tmp_path) == full_read(root, tmp_path) and store.files_read == 1
    assert store.warnings == [f"{root / INDEX_NAME}: damaged entry for {ids[0]}.jsonl "
                              f"({why}); read the session file again"]
    assert SessionStore(root).list() == full_read(root)


def test_an_unreadable_session_stays_skipped_without_being_read_again(tmp_path, caplog):
    root = tmp_path / "sessions"
    history(root, tmp_path, 1)
    (root / "ses_bad.jsonl").write_bytes(b"not a header\n")
    assert SessionStore(root).list() == full_read(root)
    store = SessionStore(root)
    with caplog.at_level(logging.WARNING, logger="dm_cc.session.store"):
        store.list()
    assert store.files_read == 0
    assert "skipped session file" in caplog.text and "ses_bad.jsonl:1" in caplog.text


def test_an_index_that_cannot_be_written_only_costs_reading_again(tmp_path):
    root = tmp_path / "sessions"
    history(root, tmp_path, 2)
    (root / INDEX_NAME).mkdir()         # in the way: replacing it fails
    store = SessionStore(root)
    assert store.list() == full_read(root)
    assert store.files_read == 4 and store.warnings[0].startswith(f"{root / INDEX_NAME}: ")


# -- growth: what a listing and --continue read does not grow with history -------------

def test_listing_and_continue_read_one_session_however_long_the_history(tmp_path, monkeypatch):
    """The robust form of "flat": the files parsed, with 10x the sessions. --continue
    after a run reads the session it continues once (the listing's reading of it is
    the one loaded), and the listing after that reads none."""
    for sessions in (4, 40):
        root = tmp_path / f"sessions{sessions}"
        ids = history(root, tmp_path, sessions)
        SessionStore(root).list()                        # a listing made the index
        SessionStore(root).load(ids[-1]).append(Message("user", "again", time=9e9))
        parsed = parsed_paths(monkeypatch)
        continued = SessionStore(root).continue_latest(tmp_path)
        assert continued.id == ids[-1] and parsed == [continued.path]
        assert continued.messages[-1].content == "again"
        assert SessionStore(root).continue_latest(tmp_path).id == ids[-1]
        assert parsed == [continued.path] * 2            # indexed now: only the load reads
        store = SessionStore(root)
        assert len(store.list()) == 2 * sessions and store.files_read == 0
        assert parsed == [continued.path] * 2
        monkeypatch.undo()


def test_writers_and_listers_at_once_never_damage_the_index(tmp_path):
    root = tmp_path / "sessions"
    history(root, tmp_path, 3)
    session = SessionStore(root).create(tmp_path)
    stores: list[SessionStore] = []
    errors: list[BaseException] = []

    def lister() -> None:
        try:
            for _ in range(15):
                store = SessionStore(root)
                stores.append(store)
                store.list()
        except BaseException as exc:    # pragma: no cover - reported below
            errors.append(exc)
    threads = [threading.Thread(target=lister) for _ in range(3)]
    for thread in threads:
        thread.start()
    for number in range(30):
        session.append(Message("user", f"message {number}"))
    for thread in threads:
        thread.join()
    assert errors == [] and all(store.warnings == [] for store in stores)
    assert assert_same_as_full_read(root, [tmp_path]).warnings == []
    assert not [name for name in os.listdir(root) if name.endswith(".tmp")]


WORKER = """
import sys
from pathlib import Path
from dm_cc.session.messages import Message
from dm_cc.session.store import SessionStore
root, project = Path(sys.argv[1]), Path(sys.argv[2])
session = SessionStore(root).create(project)
for number in range(12):
    session.append(Message("user", f"{sys.argv[3]} {number}"))
    store = SessionStore(root)
    store.list()
    assert store.warnings == [], store.warnings
"""


def test_two_dm_cc_processes_at_once_never_damage_the_index(tmp_path):
    """Two sessions used in parallel, by two processes, each listing after each message."""
    import subprocess
    import sys

    root = tmp_path / "sessions"
    history(root, tmp_path, 3)
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, str(root), str(tmp_path), name],
                                stderr=subprocess.PIPE, text=True) for name in ("one", "two")]
    for worker in workers:
        assert worker.wait(timeout=60) == 0, worker.stderr.read()
    store = assert_same_as_full_read(root, [tmp_path])
    assert store.warnings == []
    assert sorted(info.messages for info in store.list(tmp_path))[-2:] == [12, 12]
