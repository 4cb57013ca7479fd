"""The headless renderer: one human line per decided call, JSON for every event."""

from __future__ import annotations

import json
import typing

from support.requests import Request

from dm_cc.core.events import (
    AgentSwitched,
    ChangesLanded,
    Compacted,
    Event,
    InTask,
    Notice,
    TaskFinished,
    TaskStarted,
    ToolDecided,
    ToolFinished,
    TurnEnded,
)
from dm_cc.permissions import Decision, Rule, Verdict
from dm_cc.sandbox import Change
from dm_cc.session.messages import ToolCall
from dm_cc.tools.base import ToolOutput
from dm_cc.ui.headless import CallLines, call_input, call_text, decision_line, event_json

RM = ToolCall("call_1", "bash", {"command": "rm -rf build", "description": "clean"})
NO_DELETES = Rule("bash", "rm *", "deny", reason="no deletes", source=".dm_cc/policy.yaml:4")
ASK = Rule("*", "*", "ask", reason="no rule matched", source="default")


def verdict(pattern: str, rule: Rule, permission: str = "bash", note: str | None = None) -> Verdict:
    return Verdict(Request(permission, pattern), rule, rule.action, pattern, note)


def test_the_main_input_comes_from_the_catalog():
    assert call_input(RM) == "rm -rf build"
    assert call_input(ToolCall("c", "read", {"paths": ["a.py", "b.py"]})) == "a.py b.py"
    assert call_input(ToolCall("c", "grep", {"pattern": "x"})) == "."     # the catalog's default
    assert call_input(ToolCall("c", "plan_enter", {})) == ""              # no main argument
    assert call_input(ToolCall("c", "bash", {"command": "set -e\n\nmake\n"})) == "set -e ⏎ make"
    assert call_input(ToolCall("c", "mcp__gh__issue", {"n": 1})) == '{"n": 1}'
    assert call_input(ToolCall("c", "nosuch", {"a": "b"})) == '{"a": "b"}'
    assert call_input(ToolCall("c", "bash", None, raw_arguments="{oops")) == "{oops"
    assert len(call_input(ToolCall("c", "bash", {"command": "x" * 500}))) == 160


def test_a_search_shows_what_it_looks_for_as_well_as_where():
    grep = ToolCall("c", "grep", {"pattern": "def login", "path": "src", "include": "*.py"})
    assert call_text(grep) == '"def login" in src (*.py)'
    assert call_text(ToolCall("c", "grep", {"pattern": "TODO"})) == '"TODO" in .'
    assert call_text(ToolCall("c", "glob", {"pattern": "**/*.md", "path": "docs"})) \
        == '"**/*.md" in docs'
    assert call_text(ToolCall("c", "grep", {"pattern": "a\nb"})) == '"a ⏎ b" in .'  # one line
    assert call_text(ToolCall("c", "grep", {"path": "src"})) == "src"   # no pattern: as before
    assert call_text(RM) == call_input(RM)                             # others: the main input
    assert decision_line(grep, Decision("allow", ())) == 'grep "def login" in src (*.py) → allow'


def test_a_deny_names_the_rule_its_source_and_reason():
    decision = Decision("deny", (verdict("rm -rf build", NO_DELETES),
                                 verdict("build", ASK, "edit")))
    assert decision_line(RM, decision) == (
        'bash rm -rf build → deny (deny bash "rm *" at .dm_cc/policy.yaml:4: no deletes)')


def test_an_ask_says_what_became_of_it_and_which_request_asked():
    call = ToolCall("c", "bash", {"command": "make && npm i"})
    withheld = Rule("bash", "npm *", "allow", source="p.yaml:2")
    decision = Decision("ask", (verdict("make", ASK),
                                Verdict(Request("bash", "npm i"), withheld, "ask", "npm i",
                                        "not allowable")))
    assert decision_line(call, decision, "refused by --on-ask deny") == (
        "bash make && npm i → ask → refused by --on-ask deny "
        '(bash make: ask * "*" at default: no rule matched; '
        'bash npm i: allow bash "npm *" at p.yaml:2 [not allowable])')
    assert decision_line(call, Decision("allow", ())) == "bash make && npm i → allow"


def test_one_line_per_call_and_one_more_only_for_an_unexplained_error():
    lines = CallLines("refused by --on-ask deny")
    denied = Decision("deny", (verdict("rm -rf build", NO_DELETES),))
    asked = Decision("ask", (verdict("rm -rf build", ASK),))
    failed = ToolOutput("Timed out\nafter 2 s", is_error=True)
    assert len(lines.lines(ToolDecided(RM, denied))) == 1
    assert lines.lines(ToolFinished(RM, ToolOutput("Permission denied", is_error=True))) == []
    other = ToolCall("call_2", "bash", {"command": "sleep 9"})
    assert lines.lines(ToolDecided(other, Decision("allow", ()))) == ["bash sleep 9 → allow"]
    assert lines.lines(ToolFinished(other, failed)) == ["bash sleep 9 → error: Timed out"]
    assert lines.lines(ToolFinished(other, ToolOutput("ok"))) == []
    unknown = ToolCall("call_3", "frob", {})
    assert lines.lines(ToolFinished(unknown, ToolOutput("Unknown tool 'frob'.", is_error=True))) \
        == ["frob → error: Unknown tool 'frob'."]
    assert lines.lines(AgentSwitched("plan")) == ["agent → plan"]
    assert lines.lines(TurnEnded("done", "x")) == []
    # without a known outcome (the REPL asks a person), an ask's failure is shown
    repl = CallLines()
    repl.lines(ToolDecided(RM, asked))
    assert repl.lines(ToolFinished(RM, failed)) == ["bash rm -rf build → error: Timed out"]


def test_every_event_type_has_a_json_record():
    decided = Decision("deny", (verdict("rm -rf build", NO_DELETES),))
    samples = {ToolDecided: ToolDecided(RM, decided),
               ToolFinished: ToolFinished(RM, ToolOutput("out", display="shown")),
               ChangesLanded: ChangesLanded(RM, (Change("a.txt", "modified", "file", 3),),
                                            ((Change("build/x", "deleted", "file"), "kept"),)),
               AgentSwitched: AgentSwitched("plan"), TurnEnded: TurnEnded("done", "ok"),
               Compacted: Compacted(9000, 2000, 14, True), Notice: Notice("store damaged"),
               TaskStarted: TaskStarted("ses_1", "explore #1", "explore", "find auth"),
               TaskFinished: TaskFinished("ses_1", "explore #1", "done", "found", 2, 1.5),
               InTask: InTask("ses_1", "explore #1",
                              InTask("ses_2", "explore #2", AgentSwitched("plan")))}
    assert set(typing.get_args(Event)) == set(samples)
    records = {kind: event_json(event) for kind, event in samples.items()}
    for record in records.values():
        json.dumps(record)
    assert [r["type"] for r in records.values()] == [
        "tool_decided", "tool_finished", "changes_landed", "agent_switched", "turn_ended",
        "compacted", "notice", "task_started", "task_finished", "agent_switched"]
    nested = records[InTask]
    assert nested["task_path"] == ["ses_1", "ses_2"] and nested["task_label"] == "explore #2"
    request = records[ToolDecided]["requests"][0]
    assert records[ToolDecided]["input"] == "rm -rf build"
    assert request == {"permission": "bash", "pattern": "rm -rf build", "decision": "deny",
                       "source": ".dm_cc/policy.yaml:4", "reason": "no deletes",
                       "rule": {"action": "deny", "permission": "bash", "pattern": "rm *"},
                       "note": None}
    assert records[ToolFinished]["display"] == "shown"
    assert records[ChangesLanded]["applied"] == [
        {"path": "a.txt", "kind": "modified", "what": "file"}]
    assert records[ChangesLanded]["refused"] == [
        {"path": "build/x", "kind": "deleted", "what": "file", "why": "kept"}]
    assert CallLines().lines(samples[ChangesLanded]) == [
        "  changes: 1 landed, 1 did not:", "    ✗ deleted build/x: kept"]
