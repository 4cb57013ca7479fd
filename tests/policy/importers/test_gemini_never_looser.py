"""Gemini CLI policy → dm_cc: never looser than Gemini CLI's own engine
(reference_gemini.py), for the causes a held-out corpus found and their neighbours:
an empty commandPrefix, interactive-only rules, files Gemini refuses, and a
property over generated files and calls."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.requests import evaluate

from dm_cc.cli import main
from dm_cc.config import HostFilesystem
from dm_cc.permissions import PathContext, PathContextDirs, decide
from dm_cc.permissions.engine import Ruleset
from dm_cc.permissions.requests import shell_requests
from dm_cc.policy.importers import render_policy
from dm_cc.policy.importers.gemini import import_gemini
from dm_cc.policy.loader import parse_policy

from . import reference_gemini as gemini

STRICT = {"allow": 0, "ask": 1, "deny": 2}
CONTEXT = PathContext(root="/proj", home="/home/u")
WHERE = PathContextDirs(root=Path("/proj"), cwd=Path("/proj"), home=Path("/home/u"),
                        fs=HostFilesystem())


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
    """dm_cc's decision as the product makes it: a shell line is every simple command
    and file it reads or writes (docs/shell.md), each judged."""
    if permission == "bash":
        action = decide(shell_requests("bash", text, WHERE),
                        Ruleset(list(rules), CONTEXT)).action
    else:
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
    assert [(r.permission, r.action) for r in rules] == [("external_directory", "deny")]
    assert "commandPrefix = [] makes no rule" in out.dropped[0]


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
simple = st.one_of(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join),
    # what Gemini CLI's shell heuristics deem dangerous, and neighbours it does not
    st.sampled_from(["rm -f a", "rm -rf build", "rm a", "sudo rm -fr b", "find . -delete",
                     "find . -name x", "rg -z x", "rg x", "git branch", "git branch -D x",
                     "git branch -a", "git -c a=b status", "git log --output=x",
                     "git diff --ext-diff", "base64 -o out x", "base64 x"]))
REDIRECTS = ["", "", "", " > out.txt", " >> log.txt", " < in.txt", " 2>&1", " 2>/dev/null",
             " <<< hi"]


@st.composite
def commands(draw) -> str:
    """A line: simple commands joined by && || ; |, maybe one as `echo $( )`, each
    maybe redirected."""
    parts = draw(st.lists(simple, min_size=1, max_size=3))
    if draw(st.booleans()):
        index = draw(st.integers(0, len(parts) - 1))
        parts[index] = f"echo $({parts[index]})"
    parts = [part + draw(st.sampled_from(REDIRECTS)) for part in parts]
    line = parts[0]
    for part in parts[1:]:
        line += draw(st.sampled_from([" && ", " || ", "; ", " | "])) + part
    return line
prefixes = st.sampled_from([None, None, None, "", [""], "git", ["git", "npm"], "git status", "npm test",
                            "git ", ["gitk", ""]])


@pytest.mark.parametrize(("lower", "higher", "tool", "theirs"), [
    # dm_cc's `edit` is both write_file's and replace's: an allow or ask of one must
    # not lift the other's lower-priority deny (dm_cc's write tool is write_file)
    ("write_file", ("replace", "allow"), "write_file", "deny"),
    ("write_file", ("replace", "ask_user"), "write_file", "deny"),
    ("read_file", ("read_many_files", "ask_user"), "read_file", "deny"),
    ("read_file", ("read_many_files", "allow"), "read_file", "deny"),
])
def test_a_tool_sharing_a_permission_does_not_lift_anothers_deny(tmp_path, lower, higher,
                                                                  tool, theirs):
    text = (rule(toolName=lower, decision="deny", priority=1)
            + rule(toolName=higher[0], decision=higher[1], priority=2))
    out, rules = imported(tmp_path, text)
    permission = {"write_file": "edit", "read_file": "read"}[tool]
    assert gemini.decide(gemini.load(text), tool, {"file_path": "src/a.py"}, headless=False,
                         redirection=False) == theirs
    assert dm_cc_decides(rules, permission, "src/a.py", headless=False) == "deny"
    assert any(repr(higher[0]) in line for line in out.dropped)


def test_an_allow_of_one_tool_of_a_permission_is_left_out(tmp_path):
    """Found by the property: `write_file` allowed alone allowed dm_cc's edit tool,
    whose Gemini counterpart `replace` no rule allows (Gemini asks)."""
    text = rule(toolName="write_file", decision="allow", priority=0)
    out, rules = imported(tmp_path, text)
    assert gemini.decide(gemini.load(text), "replace", {"file_path": "src/a.py"},
                         headless=False, redirection=False) == "ask"
    assert dm_cc_decides(rules, "edit", "src/a.py", headless=False) == "ask"
    assert any("'replace''s, which no rule allows" in line for line in out.dropped)


@pytest.mark.parametrize("text", [
    rule(toolName="write_file", decision="deny", priority=1)
    + rule(toolName=["write_file", "replace"], decision="allow", priority=2),
    rule(toolName="write_file", decision="allow", priority=2)
    + rule(toolName="replace", decision="allow", priority=3),
    rule(toolName="*", decision="allow", priority=0)
    + rule(toolName="replace", decision="allow", priority=3),
])
def test_an_allow_of_every_tool_of_a_permission_is_kept(tmp_path, text):
    _, rules = imported(tmp_path, text)
    assert dm_cc_decides(rules, "edit", "src/a.py", headless=False) == "allow"


@pytest.mark.parametrize("tools", [("read_file", "read_many_files"), ("write_file", "replace")])
def test_a_rule_written_again_reaches_no_further_than_the_wider_one(tmp_path, tools):
    """Found by the export round trip: `* ask_user` written again after a shared
    tool's allow came back as `* * ask`, and lifted a todo deny Gemini keeps."""
    text = (rule(toolName="*", decision="ask_user", priority=0)
            + rule(toolName="write_todos", decision="deny", priority=1)
            + rule(toolName=tools[0], decision="allow", priority=2)
            + rule(toolName=tools[1], decision="allow", priority=2))
    _, rules = imported(tmp_path, text)
    assert gemini.decide(gemini.load(text), "write_todos", {}, headless=False,
                         redirection=False) == "deny"
    assert dm_cc_decides(rules, "todo", "*", headless=False) == "deny"
    again = [r for r in rules if r.permission == "*" and r.action == "ask"]
    assert len(again) == 1, rules    # the default alone; its copies name the tools' permission


@st.composite
def tables(draw) -> str:
    tool = draw(st.sampled_from([SHELL, SHELL, "read_file", "write_file", "*", "replace",
                                 "read_many_files"]))
    fields: dict = {"toolName": tool}
    prefix = draw(prefixes) if tool == SHELL else None
    if prefix is not None:
        fields["commandPrefix"] = prefix
    elif draw(st.booleans()):
        fields["argsPattern"] = draw(st.sampled_from(["git", "src/"]))
    fields["decision"] = draw(st.sampled_from(["allow", "ask_user", "deny"]))
    fields["priority"] = draw(st.integers(0, 3))
    if tool == SHELL and draw(st.booleans()):
        fields["allowRedirection"] = draw(st.booleans())
    interactive = draw(st.sampled_from([None, True, False]))
    if interactive is not None:
        fields["interactive"] = interactive
    modes = draw(st.sampled_from([None, ["default"], ["plan"], ["default", "yolo"]]))
    if modes is not None:
        fields["modes"] = modes
    return rule(**fields)


@settings(max_examples=300, deadline=None)
@given(files=st.lists(tables(), max_size=6), calls=st.lists(commands(), min_size=1, max_size=5),
       headless=st.booleans())
def test_never_looser_than_gemini_cli(tmp_path_factory, files, calls, headless):
    """For generated policy files and calls, dm_cc's decision of the import is never
    looser (allow < ask < deny) than Gemini CLI's, interactive or headless."""
    text = "".join(files)
    _, rules = imported(tmp_path_factory.mktemp("g"), text)
    reference = gemini.load(text)
    for tool, permission, args, main_input in (
            [(SHELL, "bash", {"command": c}, c) for c in calls]
            + [("read_file", "read", {"file_path": "src/a.py"}, "src/a.py"),
               ("write_file", "edit", {"file_path": "src/a.py"}, "src/a.py"),
               ("replace", "edit", {"file_path": "src/a.py"}, "src/a.py")]):
        ours = dm_cc_decides(rules, permission, main_input, headless=headless)
        theirs = gemini.decide(reference, tool, args, headless=headless)
        assert STRICT[ours] >= STRICT[theirs], (tool, main_input, ours, theirs, text)


# ------------------------------------------------------- Gemini CLI's shell heuristics

WHOLE_ALLOW = rule(toolName=SHELL, decision="allow", priority=5)
EDITS_TOO = rule(toolName=["write_file", "replace", "read_file", "read_many_files"],
                 decision="allow", priority=5)


@pytest.mark.parametrize("tool", [SHELL, "*"])
@pytest.mark.parametrize(("command", "asks"), [
    ("rm -f a", True), ("rm -rf build", True), ("rm -fr build", True), ("rm a", False),
    ("sudo rm -rf b", True), ("find . -delete", True), ("find . -exec ls {} ;", True),
    ("find . -fprint out", True), ("find . -name x", False), ("rg -z x", True),
    ("rg --pre=cat x", True), ("rg x", False), ("git -c a=b status", True),
    ("git log --output=x", True), ("git diff --ext-diff", True), ("git show --textconv", True),
    ("git branch -D x", True), ("git branch x", True), ("git branch", False),
    ("git status", False), ("base64 -o out x", True), ("base64 --output=o x", True),
    ("base64 x", False),
])
def test_a_whole_tool_allow_keeps_gemini_clis_dangerous_command_asks(tmp_path, tool, command,
                                                                     asks):
    """Gemini CLI asks about a command it deems dangerous under an allow of every shell
    command (applyShellHeuristics, commandSafety.ts isDangerousCommand) -- even when
    edits are allowed too, so dm_cc's own `edit` of rm's operand does not ask."""
    text = rule(toolName=tool, decision="allow", priority=5) + EDITS_TOO
    _, rules = imported(tmp_path, text)
    theirs = gemini.decide(gemini.load(text), SHELL, {"command": command}, headless=False)
    assert theirs == ("ask" if asks else "allow")
    ours = "ask" if command == "git branch" else theirs    # stricter: next test
    assert dm_cc_decides(rules, "bash", command, headless=False) == ours


@pytest.mark.parametrize("command", ["git branch 2>&1", "git branch && git status",
                                     "git branch"])
def test_git_branch_asks_whatever_follows_it_on_the_line(tmp_path, command):
    """Found by the property: Gemini CLI reads the whole line's words, so `git branch
    2>&1` is a git branch with arguments (it asks); dm_cc judges `git branch` alone,
    so it cannot allow the bare one without allowing these."""
    text = rule(toolName=SHELL, decision="allow", priority=0)
    _, rules = imported(tmp_path, text)
    if command != "git branch":
        assert gemini.decide(gemini.load(text), SHELL, {"command": command}, headless=False,
                             redirection=False) == "ask"
    assert dm_cc_decides(rules, "bash", command, headless=False) == "ask"


def test_a_prefix_allow_is_not_put_through_the_heuristics(tmp_path):
    """Gemini CLI applies them only to a rule without a command condition: `rm` allowed
    by prefix at a higher priority is allowed, and the import says so too."""
    text = WHOLE_ALLOW + EDITS_TOO + rule(toolName=SHELL, commandPrefix="rm",
                                          decision="allow", priority=9)
    out, rules = imported(tmp_path, text)
    assert gemini.decide(gemini.load(text), SHELL, {"command": "rm -rf b"},
                         headless=False) == "allow"
    assert dm_cc_decides(rules, "bash", "rm -rf b", headless=False) == "allow"
    assert [(t.input, t.expect) for t in out.tests] == [("rm", "allow")]


@pytest.mark.parametrize(("command", "theirs"), [
    ("ls && rm -f a", "allow"),          # Gemini looks at the first command only
    ("echo $(rm -rf b)", "allow"),
    ("git status; rm -f a", "allow"),
])
def test_the_heuristics_are_read_wider_than_gemini_on_a_compound_line(tmp_path, command,
                                                                      theirs):
    """Gemini CLI's heuristics see the line's first command; dm_cc judges every simple
    command, so the import asks about a dangerous one anywhere: stricter, not looser."""
    text = WHOLE_ALLOW + EDITS_TOO
    _, rules = imported(tmp_path, text)
    assert gemini.decide(gemini.load(text), SHELL, {"command": command},
                         headless=False) == theirs
    assert dm_cc_decides(rules, "bash", command, headless=False) == "ask"


@pytest.mark.parametrize(("command", "theirs"), [
    ("git status && make", "ask"),       # make: no rule -> Gemini asks
    ("git status | sh", "ask"),
    ("git log $(make)", "ask"),
    ("git status && rm -rf x", "deny"),  # a denied part denies the line
    ("git status; git diff", "allow"),
])
def test_each_command_of_a_compound_line_must_be_allowed(tmp_path, command, theirs):
    """Gemini CLI checks every command of a compound line against the rules on its
    own (checkShellCommand); dm_cc judges every simple command: the same answer."""
    text = (rule(toolName=SHELL, commandPrefix="git", decision="allow", priority=5)
            + rule(toolName=SHELL, commandPrefix="rm", decision="deny", priority=5))
    _, rules = imported(tmp_path, text)
    assert gemini.decide(gemini.load(text), SHELL, {"command": command},
                         headless=False) == theirs
    assert dm_cc_decides(rules, "bash", command, headless=False) == theirs


@pytest.mark.parametrize("command", ["git status > out.txt", "git status < in.txt"])
def test_a_redirection_to_a_file_asks_unless_edits_are_allowed(tmp_path, command):
    """Gemini CLI asks about a redirected command under an allow without
    allowRedirection; dm_cc asks about the redirect's file (an edit or read request)
    -- the same answer while the import allows no edits and reads."""
    text = rule(toolName=SHELL, commandPrefix="git", decision="allow", priority=5)
    _, rules = imported(tmp_path, text)
    assert gemini.decide(gemini.load(text), SHELL, {"command": command},
                         headless=False) == "ask"
    assert dm_cc_decides(rules, "bash", command, headless=False) == "ask"
    with_redirection = rule(toolName=SHELL, commandPrefix="git", decision="allow", priority=5,
                            allowRedirection=True)
    assert gemini.decide(gemini.load(with_redirection), SHELL, {"command": command},
                         headless=False) == "allow"


@pytest.mark.parametrize("command", ["git status 2>&1", "git status 2>/dev/null",
                                     "git status > out.txt", "git log <<< x",
                                     "ls && git status 2>&1", "{ git log; } > out.txt"])
def test_a_redirection_asks_as_in_gemini_cli(tmp_path, command):
    """A redirection that names no file (`2>&1`), a here-string, a compound command's
    redirect: Gemini CLI asks under an allow without allowRedirection; dm_cc asks
    about the command's `redirect` request (the import's `redirect git * ask`), even
    where edits and reads are allowed."""
    text = (rule(toolName=SHELL, commandPrefix=["git", "ls"], decision="allow", priority=5)
            + EDITS_TOO)
    _, rules = imported(tmp_path, text)
    if "{" not in command:    # beyond what the reference reads
        assert gemini.decide(gemini.load(text), SHELL, {"command": command},
                             headless=False) == "ask"
    assert dm_cc_decides(rules, "bash", command, headless=False) == "ask"
    assert dm_cc_decides(rules, "bash", command.replace("2>&1", "").replace(
        "2>/dev/null", "").replace("> out.txt", "").replace("<<< x", "").replace(
        "{ git log; }", "git log").strip(), headless=False) == "allow"


@pytest.mark.parametrize("command", ["git status 2>&1", "git status > out.txt",
                                     "git log <<< x"])
def test_allow_redirection_allows_the_redirected_command(tmp_path, command):
    """With allowRedirection (and edits allowed), Gemini CLI allows it, and so does
    the import: `redirect git * allow`."""
    text = (rule(toolName=SHELL, commandPrefix="git", decision="allow", priority=5,
                 allowRedirection=True) + EDITS_TOO)
    out, rules = imported(tmp_path, text)
    assert ("redirect", "git *", "allow") in [(r.permission, r.pattern, r.action)
                                              for r in rules]
    assert gemini.decide(gemini.load(text), SHELL, {"command": command},
                         headless=False) == "allow"
    assert dm_cc_decides(rules, "bash", command, headless=False) == "allow"


def test_priority_order_holds_for_redirections(tmp_path):
    """A higher-priority allow without allowRedirection of `git status` asks about
    its redirections although the lower `git` rule would allow them; and the other
    way round, both as Gemini CLI's highest-priority rule decides."""
    lower = rule(toolName=SHELL, commandPrefix="git", decision="allow", priority=1,
                 allowRedirection=True)
    higher = rule(toolName=SHELL, commandPrefix="git status", decision="allow", priority=5)
    for text, status, log in ((lower + higher, "ask", "allow"),
                              (higher.replace("priority = 5", "priority = 0") + lower,
                               "allow", "allow")):
        _, rules = imported(tmp_path, text)
        for command, expect in (("git status 2>&1", status), ("git log 2>&1", log)):
            theirs = gemini.decide(gemini.load(text), SHELL, {"command": command},
                                   headless=False)
            ours = dm_cc_decides(rules, "bash", command, headless=False)
            assert STRICT[ours] >= STRICT[theirs], (text, command, ours, theirs)
            assert theirs == expect


@pytest.mark.parametrize("tool", ["*", "read_file", "write_file"])
def test_a_path_outside_the_workspace_stays_denied_whatever_the_file_allows(tmp_path, tool):
    """Gemini CLI's file tools refuse a path outside the workspace by themselves: no
    rule of an imported file lifts that (an export of a dm_cc deny of leaving the
    project counts on it)."""
    _, rules = imported(tmp_path, rule(toolName=tool, decision="allow", priority=500))
    assert rules[-1].permission == "external_directory" and rules[-1].action == "deny"
    assert dm_cc_decides(rules, "external_directory", "/etc", headless=False) == "deny"


@pytest.mark.parametrize("command", ["ls && git status 2>&1", "ls; echo $(git log > out.txt)",
                                     "git status 2>&1"])
def test_allow_redirection_is_the_whole_lines_rules(tmp_path, command):
    """Gemini CLI honours allowRedirection of the rule matching the WHOLE line (its
    first command's): `ls && git status 2>&1` asks when ls's rule lacks it, whatever
    git's says. dm_cc's `redirect` is the redirected command's own, so while a shell
    allow lacks allowRedirection every allow's redirect asks (reported: stricter)."""
    text = (rule(toolName=SHELL, commandPrefix="ls", decision="allow", priority=5)
            + rule(toolName=SHELL, commandPrefix=["git", "echo"], decision="allow",
                   priority=5, allowRedirection=True) + EDITS_TOO)
    out, rules = imported(tmp_path, text)
    theirs = gemini.decide(gemini.load(text), SHELL, {"command": command}, headless=False)
    assert theirs == ("allow" if command.startswith("git") else "ask")
    assert dm_cc_decides(rules, "bash", command, headless=False) == "ask"
    assert any("allowRedirection is written as an ask" in line for line in out.dropped)


@pytest.mark.parametrize("command", ["> out.txt", "2>&1", "{ git log; } 2>&1"])
def test_a_redirection_without_a_command_asks_under_a_whole_tool_allow(tmp_path, command):
    """Gemini CLI sees a redirected line; its whole-tool allow (no allowRedirection)
    asks. dm_cc: the line's own `redirect` request, asked by `redirect * ask`."""
    text = WHOLE_ALLOW + EDITS_TOO
    _, rules = imported(tmp_path, text)
    if "{" not in command:
        assert gemini.decide(gemini.load(text), SHELL, {"command": command},
                             headless=False) == "ask"
    assert dm_cc_decides(rules, "bash", command, headless=False) == "ask"
    with_redirection = text.replace("priority = 5\n", "priority = 5\nallowRedirection = true\n", 1)
    _, rules = imported(tmp_path, with_redirection)
    assert dm_cc_decides(rules, "bash", command, headless=False) == "allow"
