"""Gemini CLI policy → dm_cc: never looser than Gemini CLI's own engine
(reference_gemini.py), for the causes a held-out corpus found and their neighbours:
an empty commandPrefix, interactive-only rules, files Gemini refuses, and a
property over generated files and calls."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.requests import evaluate

from dm_cc.cli import main
from dm_cc.permissions import PathContext
from dm_cc.permissions.engine import Ruleset
from dm_cc.policy.importers import render_policy
from dm_cc.policy.importers.gemini import import_gemini
from dm_cc.policy.loader import parse_policy

from . import reference_gemini as gemini

STRICT = {"allow": 0, "ask": 1, "deny": 2}
CONTEXT = PathContext(root="/proj", home="/home/u")


def rule(**fields) -> str:
    return "[[rule]]\n" + "".join(f"{k} = {json.dumps(v) if not isinstance(v, bool) else str(v).lower()}\n"
                                  for k, v in fields.items())


def imported(tmp_path, text: str) -> tuple:
    source = tmp_path / "p.toml"
    source.write_text(text)
    out = import_gemini(source)
    assert not out.refused, out.refused
    return out, parse_policy(render_policy(out), "imported.yaml").rules


def dm_cc_decides(rules, permission: str, text: str, *, headless: bool) -> str:
    action = evaluate(permission, text, Ruleset(list(rules), CONTEXT)).action
    return "deny" if headless and action == "ask" else action   # dm_cc run --on-ask deny


SHELL = "run_shell_command"
DENY_REST = rule(toolName=SHELL, decision="deny", priority=1)


@pytest.mark.parametrize("prefix", ["", [""], ["", "git"], " "])
def test_an_empty_command_prefix_denies_every_command(tmp_path, prefix):
    """`commandPrefix = ""` is no condition to Gemini (the author's "deny everything
    else"); `[""]` matches almost nothing there but is read as every command too (a
    deny may be wider)."""
    text = (rule(toolName=SHELL, commandPrefix="git status", decision="allow", priority=10)
            + rule(toolName=SHELL, commandPrefix=prefix, decision="deny", priority=5))
    _, rules = imported(tmp_path, text)
    for command in ("rm -rf build", "make", "git push"):
        assert dm_cc_decides(rules, "bash", command, headless=False) == "deny"
    assert dm_cc_decides(rules, "bash", "git status", headless=False) == "allow"


def test_an_empty_command_prefix_allow_is_the_whole_tool_a_listed_one_is_left_out(tmp_path):
    out, rules = imported(tmp_path, rule(toolName=SHELL, commandPrefix="", decision="allow",
                                         priority=3))
    assert dm_cc_decides(rules, "bash", "make", headless=False) == "allow"
    out, rules = imported(tmp_path, rule(toolName=SHELL, commandPrefix=["", "git"],
                                         decision="allow", priority=3))
    assert dm_cc_decides(rules, "bash", "make", headless=False) == "ask"
    assert dm_cc_decides(rules, "bash", "git log", headless=False) == "allow"
    assert any("commandPrefix ''" in line for line in out.dropped)


def test_an_empty_prefix_list_makes_no_rule(tmp_path):
    out, rules = imported(tmp_path, rule(toolName=SHELL, commandPrefix=[], decision="deny",
                                         priority=3))
    assert not rules and "commandPrefix = [] makes no rule" in out.dropped[0]


@pytest.mark.parametrize("decision", ["allow", "ask_user", "deny"])
@pytest.mark.parametrize("interactive", [True, False])
def test_a_rule_for_one_kind_of_run_is_never_looser_in_either(tmp_path, decision, interactive):
    """An allow for one kind of run is left out; a deny or ask holds in both -- and a
    wider ask does not override the lower-priority deny Gemini falls back to."""
    text = DENY_REST + rule(toolName=SHELL, commandPrefix="git", decision=decision,
                            priority=9, interactive=interactive)
    out, rules = imported(tmp_path, text)
    assert any("interactive" in line for line in out.dropped)
    reference = gemini.load(text)
    for headless in (False, True):
        for command in ("git status", "ls"):
            ours = dm_cc_decides(rules, "bash", command, headless=headless)
            theirs = gemini.decide(reference, SHELL, {"command": command}, headless=headless)
            assert STRICT[ours] >= STRICT[theirs], (command, headless, ours, theirs)


def test_a_wider_ask_keeps_the_lower_deny(tmp_path):
    """argsPattern makes an ask wider in dm_cc (the whole tool): the deny below it
    is written again after it, so what Gemini denies stays denied."""
    text = DENY_REST + rule(toolName=SHELL, argsPattern="git", decision="ask_user", priority=9)
    _, rules = imported(tmp_path, text)
    assert dm_cc_decides(rules, "bash", "make", headless=False) == "deny"


@pytest.mark.parametrize(("table", "why"), [
    ({"toolName": SHELL, "decision": "deny"}, "priority is required"),
    ({"toolName": SHELL, "decision": "deny", "priority": 1.5}, "priority must be a whole"),
    ({"toolName": SHELL, "decision": "deny", "priority": "high"}, "priority must be"),
    ({"toolName": SHELL, "decision": "deny", "priority": 1000}, "0 to 999"),
    ({"toolName": SHELL, "decision": "deny", "priority": -1}, "0 to 999"),
    ({"toolName": SHELL, "decision": "block", "priority": 1}, "decision must be"),
    ({"toolName": SHELL, "priority": 1}, "decision is required"),
    ({"toolName": SHELL, "decision": "deny", "priority": 1, "interactive": "no"},
     "interactive must be true or false"),
    ({"toolName": SHELL, "decision": "deny", "priority": 1, "modes": ["turbo"]},
     "modes must be"),
    ({"toolName": SHELL, "decision": "deny", "priority": 1, "commandPrefix": 3},
     "commandPrefix must be"),
    ({"toolName": "", "decision": "deny", "priority": 1}, "toolName cannot be an empty"),
    ({"toolName": 7, "decision": "deny", "priority": 1}, "toolName must be"),
])
def test_a_file_gemini_refuses_is_refused(tmp_path, capsys, monkeypatch, table, why):
    """Gemini CLI loads none of a file with such a rule: the import writes nothing and
    exits 1, naming file:line and the rule -- whatever --lossy (a guess could loosen)."""
    monkeypatch.chdir(tmp_path)
    text = (rule(toolName=SHELL, commandPrefix="git", decision="allow", priority=5)
            + "\n" + rule(**table))
    (tmp_path / "p.toml").write_text(text)
    for extra in ([], ["--lossy"]):
        assert main(["policy", "import", "gemini", "p.toml", "-o", "out.yaml", *extra]) == 1
        err = capsys.readouterr().err
        assert "p.toml:6: rule 2 (" in err and why in err, err
        assert not (tmp_path / "out.yaml").exists()


def test_keys_it_does_not_use_are_reported(tmp_path):
    text = ('title = "team"\n' + rule(toolName=SHELL, decision="deny", priority=1,
                                      denyMessage="no", somethingNew=1))
    out, _ = imported(tmp_path, text)
    said = "\n".join(out.dropped)
    for key in ("title: not imported", "rule 1: denyMessage", "rule 1: somethingNew"):
        assert key in said, said


def test_a_prefix_with_a_regex_is_read_as_gemini_does_by_its_prefix(tmp_path):
    """Gemini uses commandPrefix when both are given: a deny of `rm` stays a deny of
    rm, whatever the regex says."""
    out, rules = imported(tmp_path, rule(toolName=SHELL, commandPrefix="rm",
                                         commandRegex="^curl", decision="deny", priority=2))
    assert dm_cc_decides(rules, "bash", "rm -rf x", headless=False) == "deny"
    assert any("commandRegex" in line for line in out.dropped)


# --------------------------------------------------------------------------- the property

WORDS = ["git", "gitk", "npm", "status", "test", "ls"]
commands = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)
prefixes = st.sampled_from([None, "", [""], "git", ["git", "npm"], "git status", "npm test",
                            "git ", ["gitk", ""]])


@st.composite
def tables(draw) -> str:
    tool = draw(st.sampled_from([SHELL, SHELL, "read_file", "*"]))
    fields: dict = {"toolName": tool}
    prefix = draw(prefixes) if tool == SHELL else None
    if prefix is not None:
        fields["commandPrefix"] = prefix
    elif draw(st.booleans()):
        fields["argsPattern"] = draw(st.sampled_from(["git", "src/"]))
    fields["decision"] = draw(st.sampled_from(["allow", "ask_user", "deny"]))
    fields["priority"] = draw(st.integers(0, 3))
    interactive = draw(st.sampled_from([None, True, False]))
    if interactive is not None:
        fields["interactive"] = interactive
    modes = draw(st.sampled_from([None, ["default"], ["plan"], ["default", "yolo"]]))
    if modes is not None:
        fields["modes"] = modes
    return rule(**fields)


@settings(max_examples=150, deadline=None)
@given(files=st.lists(tables(), max_size=6), calls=st.lists(commands, min_size=1, max_size=5),
       headless=st.booleans())
def test_never_looser_than_gemini_cli(tmp_path_factory, files, calls, headless):
    """For generated policy files and calls, dm_cc's decision of the import is never
    looser (allow < ask < deny) than Gemini CLI's, interactive or headless."""
    text = "".join(files)
    _, rules = imported(tmp_path_factory.mktemp("g"), text)
    reference = gemini.load(text)
    for tool, permission, args, main_input in (
            [(SHELL, "bash", {"command": c}, c) for c in calls]
            + [("read_file", "read", {"file_path": "src/a.py"}, "src/a.py")]):
        ours = dm_cc_decides(rules, permission, main_input, headless=headless)
        theirs = gemini.decide(reference, tool, args, headless=headless)
        assert STRICT[ours] >= STRICT[theirs], (tool, main_input, ours, theirs, text)
