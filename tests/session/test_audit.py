"""The audit log store: the hash chain, its head, damage found and kept, real
processes appending at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dm_cc.errors import AuditLogError
from dm_cc.session.audit import GENESIS, HEAD_BYTES, AuditLog, Head, encode, line_hash


def filled(tmp_path: Path, count: int = 4) -> AuditLog:
    log = AuditLog.for_project(tmp_path / "data", tmp_path / "project")
    for number in range(count):
        log.append({"tool": "bash", "input": f"echo {number}", "decision": "allow"})
    log.sync()
    return log


def lines(log: AuditLog) -> list[bytes]:
    return log.path.read_bytes().splitlines(keepends=True)


def broken_at(log: AuditLog) -> int | None:
    result = log.verify()
    assert result.broken is not None, "the damage was not found"
    return result.broken.line


def test_records_chain_from_genesis_and_verify(tmp_path):
    log = filled(tmp_path, 3)
    first, second, third = lines(log)
    records = [json.loads(line) for line in (first, second, third)]
    assert [r["seq"] for r in records] == [1, 2, 3]
    assert records[0]["prev"] == GENESIS
    assert records[1]["prev"] == line_hash(first) and records[2]["prev"] == line_hash(second)
    result = log.verify()
    assert result.broken is None and result.records == 3 and not result.notes
    assert log.path.parent == tmp_path / "data" / "audit"
    assert oct(log.path.stat().st_mode & 0o777) == "0o600"


def test_an_edited_record_is_named_by_the_line_after_it(tmp_path):
    log = filled(tmp_path)
    data = log.path.read_bytes().replace(b"echo 1", b"echo X")
    log.path.write_bytes(data)
    result = log.verify()
    assert result.broken is not None and result.broken.line == 3
    assert result.where == f"{log.path}:3" and "changed" in result.broken.message


def test_an_edited_last_record_is_caught_by_the_head(tmp_path):
    log = filled(tmp_path)
    log.path.write_bytes(log.path.read_bytes().replace(b"echo 3", b"echo X"))
    assert broken_at(log) == 4


def test_a_deleted_record_a_reordered_pair_and_a_cut_end_are_caught(tmp_path):
    log = filled(tmp_path)
    original = lines(log)
    log.path.write_bytes(b"".join(original[:1] + original[2:]))
    assert broken_at(log) == 2
    log.path.write_bytes(b"".join([original[0], original[2], original[1], original[3]]))
    assert broken_at(log) == 2
    log.path.write_bytes(b"".join(original[:3]))   # the last record removed: the head knows
    assert broken_at(log) == 4 and "missing" in log.verify().broken.message
    log.path.write_bytes(b"")
    assert broken_at(log) == 1


def test_a_torn_last_line_is_reported_with_how_to_recover(tmp_path):
    log = filled(tmp_path)
    data = log.path.read_bytes()
    log.path.write_bytes(data[:-20])
    result = log.verify()
    assert result.broken is not None and result.broken.line == 4
    assert result.broken.message.startswith("torn record")


def test_an_append_after_damage_sets_the_log_aside_unchanged(tmp_path):
    log = filled(tmp_path)
    torn = log.path.read_bytes()[:-20]
    log.path.write_bytes(torn)
    appended = log.append({"tool": "read"})
    assert appended.notice is not None and "moved aside unchanged" in appended.notice
    [aside] = log.set_aside()
    assert aside.read_bytes() == torn                      # kept, byte for byte
    assert aside.with_name(aside.name + ".head").exists()  # with the head that shows the cut
    assert AuditLog.at(aside).verify().broken.line == 4
    assert appended.record["seq"] == 1 and appended.record["prev"] == GENESIS
    assert log.verify().broken is None and log.verify().records == 1


def test_a_removed_head_or_log_is_found_and_kept(tmp_path):
    log = filled(tmp_path)
    log.head_path.unlink()
    result = log.verify()
    assert result.broken is not None and "no head file" in result.broken.message
    notice = log.append({"tool": "read"}).notice
    assert notice is not None and "no head file" in notice
    log2 = filled(tmp_path / "two")
    log2.path.unlink()
    assert "log is missing" in log2.verify().broken.message


def test_records_written_after_the_head_chain_on(tmp_path):
    """A crash between writing a record and its head: the next append carries on."""
    log = filled(tmp_path, 2)
    stale = log.head_path.read_bytes()
    log.append({"tool": "read"})
    log.sync()
    log.head_path.write_bytes(stale)             # as if the head was never updated
    result = log.verify()
    assert result.broken is None and result.notes and "after the head" in result.notes[0]
    again = AuditLog(log.path)                   # the next process
    appended = again.append({"tool": "glob"})
    assert appended.notice is None and appended.record["seq"] == 4
    again.sync()
    after = log.verify()
    assert after.broken is None and after.records == 4 and not after.notes


def test_a_log_that_cannot_be_written_raises_a_store_error(tmp_path):
    (tmp_path / "data").write_text("a file where the data dir should be")
    log = AuditLog.for_project(tmp_path / "data", tmp_path / "project")
    with pytest.raises(AuditLogError, match="cannot write the audit log"):
        log.append({"tool": "read"})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(position=st.floats(0, 1, exclude_max=True), change=st.integers(1, 255))
def test_any_single_byte_change_is_detected(tmp_path_factory, position, change):
    log = filled(tmp_path_factory.mktemp("log"), 5)
    data = bytearray(log.path.read_bytes())
    index = int(position * len(data))
    data[index] = (data[index] + change) % 256
    log.path.write_bytes(bytes(data))
    assert log.verify().broken is not None


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(count=st.integers(1, 6), data=st.data())
def test_any_record_removal_is_detected(tmp_path_factory, count, data):
    log = filled(tmp_path_factory.mktemp("log"), count)
    original = lines(log)
    removed = data.draw(st.sets(st.integers(0, count - 1), min_size=1))
    log.path.write_bytes(b"".join(line for i, line in enumerate(original) if i not in removed))
    assert log.verify().broken is not None


APPENDER = """
import sys
from pathlib import Path
from dm_cc.session.audit import AuditLog
log = AuditLog(Path(sys.argv[1]))
for number in range(int(sys.argv[3])):
    log.append({"writer": sys.argv[2], "number": number, "input": "x" * 3000})
    if number % 3 == 2:   # a group of three made durable, as a reply's calls are
        log.sync()
log.sync()
"""


def test_processes_appending_at_once_keep_the_chain(tmp_path):
    path = tmp_path / "audit" / "p.jsonl"
    writers = [subprocess.Popen([sys.executable, "-c", APPENDER, str(path), str(w), "40"])
               for w in range(4)]
    assert all(writer.wait(timeout=120) == 0 for writer in writers)
    result = AuditLog(path).verify()
    assert result.broken is None and result.records == 160
    records = [record for _n, record in AuditLog(path).records()]
    assert {(r["writer"], r["number"]) for r in records} == {
        (str(w), n) for w in range(4) for n in range(40)}


# ---------------------------------------------------------------- reading streams

def test_verify_and_listing_hold_one_line_at_a_time(tmp_path, monkeypatch):
    """Neither reads the log whole: every read is of one line (at most the longest)."""
    log = filled(tmp_path, 30)
    longest = max(len(line) for line in lines(log))
    seen: list[int] = []
    real_open = open

    class Spy:
        def __init__(self, file):
            self.file = file

        def readline(self, limit=-1):
            line = self.file.readline(limit)
            seen.append(len(line))
            return line

        def read(self, *args):
            raise AssertionError("the log was read whole")

        def __getattr__(self, name):
            return getattr(self.file, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.file.close()

    def spying_open(path, mode="r", *args, **kwargs):
        opened = real_open(path, mode, *args, **kwargs)
        return Spy(opened) if Path(path) == log.path and "b" in mode else opened

    monkeypatch.setattr("builtins.open", spying_open)
    assert log.verify().records == 30
    assert len(list(log.records())) == 30
    assert len(seen) >= 60 and max(seen) <= longest


def test_verify_stays_strict_on_the_lines_the_head_covers(tmp_path):
    """Lines the head covers are checked by their ends and their hash only; an edit
    that keeps the ends (even one that is no longer JSON) is named at the line after."""
    log = filled(tmp_path, 4)
    original = lines(log)
    for edited in (original[1].replace(b'"echo 1"', b'"echo 9"'),     # still JSON
                   original[1].replace(b'"echo 1"', b'"echo 1'),       # no longer JSON
                   original[1].replace(b'"tool":"bash"', b'"tool":"bash","seq":7')):
        log.path.write_bytes(b"".join([original[0], edited, *original[2:]]))
        assert broken_at(log) == 3
    log.path.write_bytes(b"".join([*original[:3], original[3].replace(b"echo 3", b"echo X")]))
    assert broken_at(log) == 4      # the last one: the head's hash


def test_a_line_past_the_head_is_parsed(tmp_path):
    """Past the head nothing covers a line's hash: it must be a record, whole."""
    log = filled(tmp_path, 2)
    log.append({"tool": "read"})        # written, not synced: past the head
    data = log.path.read_bytes()
    log.path.write_bytes(data[:-1].replace(b'"tool":"read"', b'"tool":"read'))
    log.path.write_bytes(log.path.read_bytes() + b"\n")
    result = log.verify()
    assert result.broken is not None and result.broken.line == 3
    assert "not a JSON record" in result.broken.message


# ---------------------------------------------------------------- grouped syncs

def test_appends_wait_for_one_sync_and_the_head_follows(tmp_path, monkeypatch):
    log = filled(tmp_path, 1)
    synced: list[int] = []
    real = os.fdatasync
    monkeypatch.setattr(os, "fdatasync", lambda fd: (synced.append(fd), real(fd)))
    for number in range(5):
        log.append({"tool": "read", "input": str(number)})
    assert synced == [] and log.unsynced
    assert len(lines(log)) == 6                       # in the file at once
    assert "after the head" in log.verify().notes[0]  # the head waits for the sync
    log.sync(head=False)
    assert len(synced) == 1 and not log.unsynced
    assert log.verify().notes                          # still waits
    log.sync()
    log.sync()
    assert len(synced) == 1
    after = log.verify()
    assert after.broken is None and after.records == 6 and not after.notes


def test_a_log_set_aside_by_another_process_keeps_what_this_one_wrote(tmp_path):
    """Another process finds damage and moves the log aside while this one has records
    waiting: they went to the file that moved, and the sync makes them durable there."""
    mine = filled(tmp_path, 2)
    mine.append({"tool": "read", "input": "waiting"})
    mine.head_path.write_bytes(b"damaged")
    other = AuditLog(mine.path)
    assert "moved aside" in other.append({"tool": "glob"}).notice
    mine.sync()
    [aside] = mine.set_aside()
    assert b'"input":"waiting"' in aside.read_bytes()
    assert mine.verify().records == 1 and mine.verify().broken is None
    assert mine.append({"tool": "grep"}).record["seq"] == 2
    mine.sync()
    assert mine.verify().broken is None and mine.verify().records == 2


def test_the_head_is_overwritten_in_place_at_a_fixed_size(tmp_path):
    log = filled(tmp_path, 1)
    assert len(log.head_path.read_bytes()) == HEAD_BYTES
    inode = log.head_path.stat().st_ino
    for number in range(3):
        log.append({"tool": "read", "input": str(number)})
        log.sync()
    assert log.head_path.stat().st_ino == inode and len(log.head_path.read_bytes()) == HEAD_BYTES
    log.head_path.write_bytes(b'{"seq": 4, "hash": "%s", "size": %d}\n' % (
        line_hash(lines(log)[-1]).encode(), log.path.stat().st_size))   # a head of another size
    assert log.verify().broken is None
    log.append({"tool": "read"})
    log.sync()
    assert len(log.head_path.read_bytes()) == HEAD_BYTES and log.verify().broken is None
    elsewhere = tmp_path / "elsewhere"               # a link in its place is not written through
    elsewhere.write_bytes(log.head_path.read_bytes())
    log.head_path.unlink()
    log.head_path.symlink_to(elsewhere)
    log.append({"tool": "read"})
    log.sync()
    assert not log.head_path.is_symlink() and elsewhere.read_bytes() != log.head_path.read_bytes()
    assert log.verify().broken is None


# ---------------------------------------------------------------- a call's full request list

def test_a_full_request_list_is_one_chained_line_before_its_record(tmp_path):
    log = filled(tmp_path, 1)
    requests = [{"permission": "read", "pattern": f"f{i}", "decision": "allow",
                 "rule": {"action": "allow", "permission": "read", "pattern": "*"},
                 "source": "builtin:defaults", "reason": None, "layer": "builtin",
                 "note": "read by the shell command" if i else None} for i in range(500)]
    stored = log.append({"tool": "bash", "call_id": "call_1", "requests": requests[:3],
                         "requests_total": 500}, requests).record
    log.sync()
    *_, full, record = lines(log)
    assert stored["seq"] == 3 and stored["requests_line"] == 2
    assert json.loads(record)["prev"] == line_hash(full)
    assert len(full) < 40 * 500                  # what requests share is kept once
    assert full.count(b"builtin:defaults") == 2   # once per distinct shared part
    assert log.verify().broken is None and log.verify().records == 3
    listed = [r for _n, r in log.records()]
    assert listed[1]["kind"] == "requests" and len(listed[2]["requests"]) == 3
    [_first, whole] = [r for _n, r in log.records(full=True)]
    assert whole["requests"] == requests and whole["requests_total"] == 500
    log.path.write_bytes(log.path.read_bytes().replace(b'"f250"', b'"f251"'))
    assert broken_at(log) == 3                   # the full list is covered by the chain


def chained(path: Path, count: int) -> AuditLog:
    """A log of ``count`` records of ~600 bytes and its head, as appends leave them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    prev, size = GENESIS, 0
    with open(path, "wb") as out:
        for number in range(1, count + 1):
            line = encode({"seq": number, "tool": "bash", "input": f"npm run task{number}",
                           "feedback": "x" * 500, "prev": prev})
            out.write(line)
            prev, size = line_hash(line), size + len(line)
    path.with_name(path.name + ".head").write_bytes(Head(count, prev, size).to_bytes())
    return AuditLog(path)


def test_reading_a_log_ten_times_longer_takes_no_more_memory(tmp_path):
    """Peak memory of verifying and listing (the CLI's generator) a 10,000-record log
    against a 1,000-record one: the same, give or take (whole, it would be 10x)."""
    import tracemalloc

    from dm_cc.cli.audit import _records

    peaks = []
    for count in (1_000, 10_000):
        log = chained(tmp_path / str(count) / "log.jsonl", count)
        tracemalloc.start()
        try:
            assert log.verify().records == count
            assert sum(1 for _ in _records(log)) == count
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    assert peaks[1] < peaks[0] * 2 + 64_000, peaks   # whole, 10,000 records are 6 MB


def reference_verify(log: AuditLog) -> int | None:
    """The chain checked the simple way: every line parsed, its seq and prev compared,
    then the head; the first broken line (0: the file as a whole), None when intact."""
    data = log.path.read_bytes() if log.path.exists() else None
    head = Head.parse(log.head_path.read_bytes()) if log.head_path.exists() else None
    prev, size = GENESIS, 0
    ends: dict[int, tuple[str, int]] = {}
    body = data or b""
    numbered = enumerate(body.splitlines(keepends=True), start=1)
    for number, line in numbered:
        try:
            record = json.loads(line.decode("utf-8"))
        except ValueError:
            return number
        if not line.endswith(b"\n") or not isinstance(record, dict) \
                or record.get("prev") != prev or record.get("seq") != number:
            return number
        prev, size = line_hash(line), size + len(line)
        ends[number] = (prev, size)
    count = len(ends)
    if head is None:
        return None if count == 0 else 0
    if data is None:
        return 0
    if head.seq > count:
        return count + 1
    return None if ends[head.seq] == (head.hash, head.size) else head.seq


_SAMPLES: list[tuple[bytes, bytes]] = []


def _samples(factory) -> list[tuple[bytes, bytes]]:
    """A log's and its head's bytes: four records, a call's full request list and its
    record; then the same with one more record past the head (not synced)."""
    if not _SAMPLES:
        log = filled(factory.mktemp("sample"), 4)
        log.append({"tool": "bash", "requests_total": 60},
                   [{"pattern": f"f{i}", "permission": "read"} for i in range(60)])
        log.sync()
        _SAMPLES.append((log.path.read_bytes(), log.head_path.read_bytes()))
        log.append({"tool": "read", "input": "after the head"})
        _SAMPLES.append((log.path.read_bytes(), log.head_path.read_bytes()))
    return _SAMPLES


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(["byte", "remove", "swap", "duplicate", "cut", "unsynced"]),
       where=st.floats(0, 1, exclude_max=True), change=st.integers(1, 255))
def test_verify_finds_what_the_simple_check_finds(tmp_path_factory, kind, where, change):
    """Whatever was done to the log, verify finds damage exactly when the simple check
    does, at the same line -- or, for an edit that left a covered line's ends alone,
    at the line after it (where an edit that keeps it JSON is always named)."""
    log_bytes, head_bytes = _samples(tmp_path_factory)[kind == "unsynced"]
    log = AuditLog(tmp_path_factory.mktemp("log") / "log.jsonl")
    log.path.write_bytes(log_bytes)
    log.head_path.write_bytes(head_bytes)
    data = bytearray(log_bytes)
    original = lines(log)
    pick = int(where * len(original))
    if kind in ("byte", "unsynced"):
        index = int(where * len(data))
        data[index] = (data[index] + change) % 256
    elif kind == "remove":
        data = bytearray(b"".join(original[:pick] + original[pick + 1:]))
    elif kind == "swap" and pick + 1 < len(original):
        original[pick], original[pick + 1] = original[pick + 1], original[pick]
        data = bytearray(b"".join(original))
    elif kind == "duplicate":
        data = bytearray(b"".join(original[:pick + 1] + original[pick:]))
    elif kind == "cut":
        data = data[:int(where * len(data))]
    log.path.write_bytes(bytes(data))
    expected = reference_verify(log)
    found = log.verify().broken
    if expected is None:
        assert found is None
    else:
        assert found is not None
        line = found.line or 0
        assert line == expected or (line == expected + 1 and expected <= 6), (expected, found)
