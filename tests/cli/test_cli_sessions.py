"""``dm_cc sessions list|show`` through a parser built with dm_cc.cli.sessions.register."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from dm_cc.cli import sessions as cli_sessions
from dm_cc.compose import open_world
from dm_cc.errors import DmccError, SessionError
from dm_cc.session.messages import Message, ToolCall


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="dm_cc")
    cli_sessions.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args.handler(args)


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DM_CC_HOME", str(tmp_path / "home"))
    return tmp_path


@pytest.fixture
def sessions(home):
    store = open_world().sessions
    parent = store.create(home, title="fix the tests")
    parent.append(Message("user", "fix the tests"))
    parent.append(Message("assistant", "Running them.", tool_calls=(
        ToolCall("call_1", "bash", {"command": "pytest -q"}),
        ToolCall("call_2", "edit", None, raw_arguments="{oops"))))
    parent.append(Message("tool", "\n".join(f"line {n}" for n in range(20)),
                          tool_call_id="call_1", tool_name="bash", is_error=True))
    parent.append(Message("user", "Plan mode: read-only.", agent="plan", synthetic=True))
    child = store.create(home, parent_id=parent.id, agent="explore")
    child.append(Message("user", "look around", agent="explore"))
    store.create(home)          # opened and left without a message: not saved, not listed
    return parent, child


def test_list_json_newest_last(sessions, capsys):
    parent, child = sessions
    assert run("sessions", "list", "--json") == 0
    listed = json.loads(capsys.readouterr().out)
    assert [s["id"] for s in listed] == [parent.id, child.id]
    assert listed[0] | {"created": 0, "updated": 0} == {
        "id": parent.id, "parent_id": None, "title": "fix the tests", "agent": "plan",
        "project": str(parent.info.project), "created": 0, "updated": 0, "messages": 4}
    assert listed[1]["parent_id"] == parent.id and listed[1]["agent"] == "explore"


def test_list_human_and_project_filter(sessions, home, tmp_path, capsys):
    parent, child = sessions
    assert run("sessions", "list") == 0
    head, *out = capsys.readouterr().out.splitlines()
    assert head.split() == ["session", "last", "active", "agent", "msgs", "title"]
    assert len(out) == 2
    assert out[0].startswith(f"  {parent.id}  ") and '"fix the tests"' in out[0]
    assert out[0].split()[3:5] == ["plan", "4"]
    assert out[1].startswith(f"   └ {child.id}") and "child of" not in out[1]
    assert out[1].split()[4:6] == ["explore", "1"]
    # columns line up under the header: the agent, the count's right edge, the title
    assert {line.index(" plan ") if " plan " in line else line.index(" explore ")
            for line in out} == {head.index(" agent ")}
    assert {line.index(" 4 ") + 2 if " 4 " in line else line.index(" 1 ") + 2
            for line in out} == {head.index(" msgs ") + len(" msgs")}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert run("sessions", "list", "--project", str(elsewhere)) == 0
    assert capsys.readouterr().out.startswith("no sessions")


def test_list_human_shows_the_session_tree(sessions, home, capsys):
    parent, child = sessions
    store = open_world().sessions
    other = store.create(home, title="another job")
    late = store.create(home, parent_id=parent.id, agent="general", title="late child")
    grandchild = store.create(home, parent_id=late.id, agent="explore")
    orphan = store.create(home, parent_id="ses_000000000000_deadbeef", agent="explore")
    for session in (other, late, grandchild, orphan):
        session.append(Message("user", "a task", agent=session.info.agent))
    assert run("sessions", "list") == 0
    out = capsys.readouterr().out.splitlines()[1:]
    shown = [(line[2: len(line) - len(line.lstrip(" └"))], line.lstrip(" └").split()[0])
             for line in out]
    assert shown == [("", parent.id), (" └ ", child.id), (" └ ", late.id),
                     ("    └ ", grandchild.id), ("", other.id), ("", orphan.id)]
    assert "child of ses_000000000000_deadbeef" in out[-1]
    assert run("sessions", "list", "--json") == 0      # JSON keeps the flat list
    listed = json.loads(capsys.readouterr().out)
    assert [(s["id"], s["parent_id"]) for s in listed] == [
        (parent.id, None), (child.id, parent.id), (other.id, None), (late.id, parent.id),
        (grandchild.id, late.id), (orphan.id, "ses_000000000000_deadbeef")]


def test_list_when_nothing_is_stored(home, capsys):
    assert run("sessions", "list", "--json") == 0
    assert json.loads(capsys.readouterr().out) == []


def test_show_json(sessions, capsys):
    parent, _child = sessions
    assert run("sessions", "show", "--json", parent.id) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["id"], shown["parent_id"], shown["title"]) == (parent.id, None, "fix the tests")
    assert [(m["role"], m["agent"], m["synthetic"]) for m in shown["messages"]] == [
        ("user", "build", False), ("assistant", "build", False), ("tool", "build", False),
        ("user", "plan", True)]
    assert shown["messages"][1]["tool_calls"][0] == {
        "id": "call_1", "name": "bash", "arguments": {"command": "pytest -q"},
        "raw_arguments": ""}
    assert shown["messages"][3]["content"] == "Plan mode: read-only."
    assert shown["warnings"] == []


def test_show_human_summarises_calls_and_results(sessions, capsys):
    parent, _child = sessions
    assert run("sessions", "show", parent.id) == 0
    out = capsys.readouterr().out
    assert f"session {parent.id}" in out and "agent in charge plan" in out
    assert "[1] user · build ·" in out
    assert '→ bash (call_1) {"command": "pytest -q"}' in out
    assert "→ edit (call_2) (malformed) {oops" in out
    assert "[3] tool bash (call_1) error · build" in out
    assert "line 5" in out and "line 6" not in out and "(14 more lines)" in out
    assert "[4] user · plan [synthetic]" in out


def test_show_reports_damage_on_stderr(sessions, capsys):
    parent, _child = sessions
    with open(parent.path, "ab") as f:
        f.write(b'{"type": "mess')
    assert run("sessions", "show", parent.id) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"dm_cc: warning: {parent.path}:6: skipped the unfinished last line")


def test_show_unknown_id_is_an_error(home):
    with pytest.raises(SessionError, match="no session 'ses_missing'") as caught:
        run("sessions", "show", "ses_missing")
    assert isinstance(caught.value, DmccError)  # cli.main turns it into exit 2


def test_sessions_commands_do_not_import_heavy_libraries(sessions, home):
    code = ("import sys, argparse; from dm_cc.cli import sessions as cli_sessions; "
            "p = argparse.ArgumentParser(); cli_sessions.register(p.add_subparsers()); "
            "a = p.parse_args(['sessions', 'list']); a.handler(a); "
            "print(sorted(m for m in ('litellm', 'mcp', 'openai', 'prompt_toolkit', 'pydantic')"
            " if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_list_reports_a_damaged_index_and_lists_from_the_files(sessions, home, capsys):
    assert run("sessions", "list", "--json") == 0
    listed = capsys.readouterr()
    index = open_world().sessions.root / "index.json"
    assert listed.err == "" and index.is_file()
    index.write_bytes(b"{ torn")
    assert run("sessions", "list", "--json") == 0
    again = capsys.readouterr()
    assert again.out == listed.out
    assert again.err.startswith(f"dm_cc: warning: {index}: unreadable session index (")
    assert again.err.endswith("rebuilt it from the session files\n")
    assert run("sessions", "list", "--json") == 0
    assert capsys.readouterr() == (listed.out, "")


def test_run_continue_reports_a_damaged_index_and_continues_the_latest(project, monkeypatch,
                                                                       capsys):
    from dm_cc.cli import main

    monkeypatch.chdir(project)
    script = project / ".script.yaml"
    script.write_text("- text: done\n")
    model = ["--model", f"scripted:{script}", "--json"]
    assert main(["run", *model, "hello"]) == 0
    first = json.loads(capsys.readouterr().out.splitlines()[0])["session_id"]
    assert main(["sessions", "list", "--json"]) == 0        # the index
    capsys.readouterr()
    index = open_world().sessions.root / "index.json"
    index.write_bytes(b"\x00 damaged")
    assert main(["run", *model, "--continue", "again"]) == 0
    out, err = capsys.readouterr()
    record = json.loads(out.splitlines()[0])
    assert record["session_id"] == first and record["messages"] == 2
    assert f"dm_cc: warning: {index}: unreadable session index (" in err
    assert json.loads(index.read_bytes())["version"] == 1   # rebuilt
