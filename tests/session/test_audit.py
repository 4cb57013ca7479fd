"""The audit log store: the hash chain, its head, damage found and kept, real
processes appending at once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dm_cc.errors import AuditLogError
from dm_cc.session.audit import GENESIS, AuditLog, line_hash


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
