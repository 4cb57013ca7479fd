"""``dm_cc audit`` and ``dm_cc audit verify`` over the decisions of a real ``dm_cc run``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.trust import trusted_policy

from dm_cc.cli import main
from dm_cc.cli.audit import since
from dm_cc.compose import open_world
from dm_cc.errors import UsageError

POLICY = """\
rules:
  - {permission: bash, pattern: "echo *", action: allow}
  - {permission: bash, pattern: "rm *", action: deny, reason: no deleting}
"""

SCRIPT = """\
replies:
  - {tool: bash, args: {command: "echo hello"}}
  - {tool: bash, args: {command: "rm -rf build"}}
  - {tool: bash, args: {command: "npm install left-pad"}}
  - {tool: task, args: {description: look, prompt: "look around", subagent_type: explore}}
  - {text: done}
tasks:
  look around:
    - {tool: read, args: {path: README.md}}
    - {text: nothing to see}
"""


def dm_cc(project: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dm_cc", *argv], cwd=project, env=os.environ,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def ran(project, monkeypatch, tmp_path):
    """A project whose one headless run made an allowed, a denied, an asked (and
    headless-denied) call and started a subagent that read a file."""
    trusted_policy(project, POLICY)
    (project / "README.md").write_text("hello\n")
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT)
    done = dm_cc(project, "run", "--model", f"scripted:{script}", "go")
    assert done.returncode == 0, done.stderr
    monkeypatch.chdir(project)
    return project


def listed(capsys, *argv: str) -> list[dict]:
    assert main(["audit", "--json", *argv]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_a_runs_decisions_are_listed_with_their_rule_and_who_decided(ran, capsys):
    records = listed(capsys)
    summary = [(r["agent"], r["tool"], r["input"], r["decision"], r["decided_by"])
               for r in records]
    assert summary == [
        ("build", "bash", "echo hello", "allow", "rule"),
        ("build", "bash", "rm -rf build", "deny", "rule"),
        ("build", "bash", "npm install left-pad", "deny", "headless_default"),
        ("build", "task", "explore", "allow", "rule"),
        ("explore", "read", "README.md", "allow", "rule"),
    ]
    allowed, denied, asked, task, child = records
    assert allowed["requests"][0]["source"] == ".dm_cc/policy.yaml:2"
    assert denied["requests"][0]["source"] == ".dm_cc/policy.yaml:3"
    assert denied["requests"][0]["reason"] == "no deleting" and denied["gate"] == "deny"
    assert asked["gate"] == "ask" and asked["answer"] == "reject"
    assert child["subagent"] == "explore #1" and child["session"] != task["session"]
    assert child["root_session"] == task["session"] == allowed["session"]
    assert [r["seq"] for r in records] == [1, 2, 3, 4, 5]
    assert main(["audit"]) == 0
    human = capsys.readouterr().out.splitlines()
    assert "DENY" in human[1] and "rm -rf build" in human[1] and ".dm_cc/policy.yaml:3" in human[1]
    assert "[explore #1]" in human[4] and "by headless_default" in human[2]


def test_filters(ran, capsys):
    everything = listed(capsys)
    assert [r["input"] for r in listed(capsys, "--decision", "deny")] == [
        "rm -rf build", "npm install left-pad"]
    child = everything[-1]["session"]
    assert [r["input"] for r in listed(capsys, "--session", child)] == ["README.md"]
    assert len(listed(capsys, "--session", everything[0]["session"])) == 5  # and its subagents'
    assert len(listed(capsys, "--since", "1h")) == 5
    assert listed(capsys, "--since", "2999-01-01") == []
    assert len(listed(capsys, "--since", "2000-01-01T00:00Z")) == 5
    assert main(["audit", "--since", "yesterday"]) == 2
    assert "--since 'yesterday'" in capsys.readouterr().err


def test_since_reads_durations_and_dates():
    assert since("2h", now=10_000) == 10_000 - 7200
    assert since("1d", now=100_000) == 100_000 - 86400
    assert since("2026-01-01T00:00:00+00:00") == 1767225600
    with pytest.raises(UsageError):
        since("soon")


def verify(capsys, *files: str) -> tuple[int, str]:
    code = main(["audit", "verify", *files])
    return code, capsys.readouterr().out


def test_verify_passes_then_names_the_first_broken_line(ran, capsys):
    code, out = verify(capsys)
    assert code == 0 and out.startswith("ok:") and "5 records" in out
    path = open_world(cwd=ran).audit.path
    original = path.read_bytes()
    lines = original.splitlines(keepends=True)

    path.write_bytes(original.replace(b'"rm -rf build"', b'"ls build"', 1))    # edited
    code, out = verify(capsys)
    assert code == 1 and out.startswith(f"{path}:3: broken:")

    path.write_bytes(b"".join(lines[:1] + lines[2:]))                          # deleted
    code, out = verify(capsys)
    assert code == 1 and out.startswith(f"{path}:2: broken:")

    path.write_bytes(b"".join([lines[0], lines[2], lines[1], *lines[3:]]))    # reordered
    code, out = verify(capsys)
    assert code == 1 and out.startswith(f"{path}:2: broken:")

    path.write_bytes(original[:-10])                                            # torn
    code, out = verify(capsys)
    assert code == 1 and out.startswith(f"{path}:5: broken: torn record")
    assert "records 1 to 4 verify" in out and "To recover" in out

    path.write_bytes(original)
    assert verify(capsys)[0] == 0


def test_the_next_run_sets_a_damaged_log_aside_and_says_so(ran, capsys, tmp_path):
    path = open_world(cwd=ran).audit.path
    torn = path.read_bytes()[:-10]
    path.write_bytes(torn)
    script = tmp_path / "again.yaml"
    script.write_text('- {tool: bash, args: {command: "echo again"}}\n- {text: ok}\n')
    done = dm_cc(ran, "run", "--model", f"scripted:{script}", "again")
    assert done.returncode == 0 and "moved aside unchanged" in done.stderr
    code, out = verify(capsys)
    assert code == 0 and "1 record," in out and "set aside" in out
    [aside] = path.parent.glob("*.set-aside-*.jsonl")
    assert aside.read_bytes() == torn
    code, out = verify(capsys, str(aside))
    assert code == 1 and out.startswith(f"{aside}:5: broken: torn record")
    inputs = [r["input"] for r in listed(capsys)]    # the set-aside records are still listed
    assert inputs[:4] == ["echo hello", "rm -rf build", "npm install left-pad", "explore"]
    assert inputs[-1] == "echo again"


def test_no_records_yet(project, monkeypatch, capsys):
    monkeypatch.chdir(project)
    code, out = verify(capsys)
    assert code == 0 and "0 records" in out
    assert main(["audit"]) == 0
    assert "no audit records" in capsys.readouterr().err
    assert main(["audit", "verify", str(project / "nothing.jsonl")]) == 2


def test_a_run_that_fails_at_an_ask_records_it(project, monkeypatch, capsys, tmp_path):
    script = tmp_path / "ask.yaml"
    script.write_text('- {tool: bash, args: {command: "npm publish"}}\n- {text: never}\n')
    done = dm_cc(project, "run", "--on-ask", "fail", "--model", f"scripted:{script}", "go")
    assert done.returncode == 3
    monkeypatch.chdir(project)
    [record] = listed(capsys)
    assert (record["input"], record["gate"], record["decision"], record["decided_by"],
            record["answer"]) == ("npm publish", "ask", "deny", "headless_default", "fail")


KILLED = """\
rules:
  - {permission: bash, pattern: "echo *", action: allow}
  - {permission: bash, pattern: "sleep *", action: allow}
"""


def running(argument: str) -> int | None:
    """The pid of a process whose command line is ``sleep ARGUMENT``, if one runs."""
    for entry in Path("/proc").iterdir():
        try:
            if (entry / "cmdline").read_bytes() == f"sleep\0{argument}\0".encode():
                return int(entry.name)
        except (OSError, ValueError):
            continue
    return None


def test_a_run_killed_mid_call_leaves_a_log_that_verifies(project, monkeypatch, capsys,
                                                          tmp_path):
    """SIGKILL while a call runs: every decision made, that call's included, is in
    the log (written, and synced, before the call acted); the log verifies, and the
    next run carries on from it without setting it aside."""
    import signal
    import time

    trusted_policy(project, KILLED)
    script = tmp_path / "killed.yaml"
    argument = f"{os.getpid() % 1000 + 60}.25"   # a sleep no other test runs
    script.write_text('- {tool: bash, args: {command: "echo one"}}\n'
                      '- {tool: bash, args: {command: "echo two"}}\n'
                      f'- {{tool: bash, args: {{command: "sleep {argument}"}}}}\n'
                      '- {text: never}\n')
    dm = subprocess.Popen([sys.executable, "-m", "dm_cc", "run", "--model", f"scripted:{script}",
                           "go"], cwd=project, env=os.environ, start_new_session=True,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        while (sleeping := running(argument)) is None and dm.poll() is None:
            assert time.monotonic() < deadline, "the sleep never started"
            time.sleep(0.05)
        assert sleeping is not None, "dm_cc ended before its call ran"
        os.killpg(dm.pid, signal.SIGKILL)
    finally:
        if dm.poll() is None:
            os.killpg(dm.pid, signal.SIGKILL)
        dm.wait(timeout=30)
        if (left := running(argument)) is not None:   # in a sandbox's own session
            os.kill(left, signal.SIGKILL)
    monkeypatch.chdir(project)
    code, out = verify(capsys)
    assert code == 0 and "3 records" in out, out
    assert [r["input"] for r in listed(capsys)] == ["echo one", "echo two", f"sleep {argument}"]
    again = tmp_path / "again.yaml"
    again.write_text('- {tool: bash, args: {command: "echo three"}}\n- {text: ok}\n')
    done = dm_cc(project, "run", "--model", f"scripted:{again}", "again")
    assert done.returncode == 0 and "moved aside" not in done.stderr, done.stderr
    code, out = verify(capsys)
    assert code == 0 and "4 records" in out and "note" not in out, out


MANY = """\
rules:
  - {permission: bash, pattern: "cat *", action: allow}
"""


def test_a_command_with_hundreds_of_requests_is_summarised_and_kept_whole_once(
        project, monkeypatch, capsys, tmp_path):
    trusted_policy(project, MANY)
    files = [f"f{i}" for i in range(240)]
    script = tmp_path / "many.yaml"
    script.write_text(json.dumps([{"tool": "bash", "args": {"command": "cat " + " ".join(files)}},
                                  {"text": "done"}]))
    done = dm_cc(project, "run", "--model", f"scripted:{script}", "go")
    assert done.returncode == 0, done.stderr
    monkeypatch.chdir(project)
    [record] = listed(capsys)
    assert record["requests_total"] == 241 and record["requests_by_verdict"]["allow"] == 241
    assert len(record["requests"]) == 20 and record["requests_line"] == record["seq"] - 1
    [whole] = listed(capsys, "--full")
    assert [r["pattern"] for r in whole["requests"][1:]] == files
    assert whole["requests"][5]["rule"]["permission"] == "read" and "note" in whole["requests"][5]
    data = open_world(cwd=project).audit.path.read_bytes()
    assert data.count(b'"f200"') == 1                 # the full list, once
    assert main(["audit"]) == 0
    assert "[241 requests]" in capsys.readouterr().out
    code, out = verify(capsys)
    assert code == 0 and "2 records" in out
