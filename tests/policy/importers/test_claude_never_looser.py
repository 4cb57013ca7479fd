"""The principle as a property: for any Claude Code settings and any call, the
imported policy, decided by dm_cc's whole engine (defaults, guardrails, the
requests a call derives), is never looser than Claude Code's own decision as the
reference model (reference_claude.py) reads it. And the causes the held-out
corpus found, each with its neighbours."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dm_cc.compose import World
from dm_cc.policy.importers import render_policy
from dm_cc.policy.importers.claude import claude_policy

from .conftest import Stage
from .reference_claude import STRICTNESS, decide


def claude_world(stage: Stage, data: dict) -> World:
    return stage.world(render_policy(claude_policy(data, "settings.json", stage.root)))


def claude_says(stage: Stage, data: dict, tool: str, text: str) -> str:
    return decide(data, tool, text, root=str(stage.root), home=str(stage.home))


def never_looser(stage: Stage, data: dict, calls: list[tuple[str, str]]) -> None:
    """Each call decided no looser than Claude; and the import's own inline tests
    (what it says Claude decides) are decided no looser by it -- none written for a
    rule left out (the import may be stricter: a deny written wider)."""
    world = claude_world(stage, data)
    for tool, text in calls:
        source = claude_says(stage, data, tool, text)
        got = world.decide(tool, text)[1].action
        assert STRICTNESS[got] >= STRICTNESS[source], (tool, text, got, source, data)
    for test in claude_policy(data, "settings.json", stage.root).tests:
        got = world.decide(test.tool, test.input)[1].action
        assert STRICTNESS[got] >= STRICTNESS[test.expect], (test, got, data)


# --------------------------------------------------------------------------- generated

PROGRAMS = ["npm", "make", "curl", "git", "cd"]
ARGS = ["run", "test", "push", "main", "src", "x"]
CD_TARGETS = ["", "src", "~", "-", "..", "/tmp", "src/..", "../src", "src/../..", "$HOME", "/"]
simple = st.one_of(
    st.tuples(st.sampled_from(PROGRAMS), st.lists(st.sampled_from(ARGS), max_size=3)).map(
        lambda pa: " ".join([pa[0], *pa[1]])),
    st.sampled_from(CD_TARGETS).map(lambda t: f"cd {t}".strip()))
command = st.one_of(simple, st.tuples(simple, simple).map(" && ".join))
words = st.lists(st.sampled_from(PROGRAMS[:4] + ARGS), min_size=1, max_size=3).map(" ".join)

bash_rule = st.one_of(
    st.just("Bash"),
    words.map(lambda w: f"Bash({w}:*)"),
    words.map(lambda w: f"Bash({w})"),
    words.map(lambda w: f"Bash({w} *)"),
    words.map(lambda w: f"Bash({w} * *)"),
    words.map(lambda w: f"Bash(* {w})"),
    st.sampled_from(["Bash(cd:*)", "Bash(cd *)", "Bash(cd src)", "Bash(c*)", "Bash(* src)",
                     "Bash(run_in_background:true)", "Bash(pushd:*)"]),
)
PATH_SPECS = ["./a", "/a/*", "a", "*.env", ".env", "src/**", "src", "//etc/**", "//etc/hosts",
              "~/.ssh/**", "~/.zshrc", "**", "a/b", "src/*.py", "file_path:/etc/hosts", "*.py",
              "*"]
file_rule = st.one_of(
    st.tuples(st.sampled_from(["Read", "Edit", "Write", "MultiEdit", "NotebookEdit"]),
              st.sampled_from(PATH_SPECS)).map(lambda ts: f"{ts[0]}({ts[1]})"),
    st.sampled_from(["Read", "Edit", "Write", "MultiEdit", "NotebookEdit"]))
web_rule = st.sampled_from(["WebFetch", "WebFetch(domain:ex.com)", "WebFetch(domain:*.ex.com)",
                            "WebFetch(domain:other.org)"])
mcp_rule = st.sampled_from(["mcp__s", "mcp__s__*", "mcp__*", "mcp__s__t", "mcp__r__t",
                            "mcp__s__t(x)"])
rule = st.one_of(bash_rule, file_rule, web_rule, mcp_rule)
rules = st.lists(rule, max_size=5)
MODES = [None, "default", "acceptEdits", "dontAsk", "bypassPermissions"]

PATHS = ["a", "a/b", "a/b/c", ".env", "src/x.env", "src/a/b.py", "src/m.py", "/etc/hosts",
         "~/.ssh/id", "~/.zshrc", "b/a", "/etc/x.env", "/etc/m.py"]
URLS = ["https://ex.com/x", "http://EX.com:8080/y", "https://a.ex.com/", "https://ex.com.evil/",
        "https://other.org/", "https://evil.test/ex.com"]
MCP_TOOLS = ["mcp__s__t", "mcp__s__u", "mcp__r__t", "mcp__sx__t"]
DIRECTORIES = [".", "a", "a/b", "src", "src/a", "b", "/etc", "~/.ssh", "~"]
call = st.one_of(
    command.map(lambda c: ("bash", c)),
    st.tuples(st.sampled_from(["read", "edit", "write"]), st.sampled_from(PATHS)),
    st.tuples(st.sampled_from(["glob", "grep", "list"]), st.sampled_from(DIRECTORIES + PATHS)),
    st.sampled_from(URLS).map(lambda u: ("webfetch", u)),
    st.sampled_from(MCP_TOOLS).map(lambda t: (t, "{}")),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(allow=rules, ask=rules, deny=rules, mode=st.sampled_from(MODES),
       no_bypass=st.booleans(), calls=st.lists(call, min_size=1, max_size=8))
def test_no_import_decides_a_call_more_loosely_than_claude(stage, allow, ask, deny, mode,
                                                          no_bypass, calls):
    permissions: dict = {"allow": allow, "ask": ask, "deny": deny}
    if mode is not None:
        permissions["defaultMode"] = mode
    if no_bypass:
        permissions["disableBypassPermissionsMode"] = "disable"
    never_looser(stage, {"permissions": permissions}, calls)


# --------------------------------------------------------------------------- the causes

def decisions(stage: Stage, data: dict, calls: list[tuple[str, str]]) -> list[str]:
    world = claude_world(stage, data)
    return [world.decide(tool, text)[1].action for tool, text in calls]


@pytest.mark.parametrize(("rule", "tool", "path", "claude"), [
    ("Write(src/**)", "write", "src/m.py", "ask"),        # applies to nothing in Claude
    ("Write(src/**)", "edit", "src/m.py", "ask"),
    ("MultiEdit(src/**)", "edit", "src/m.py", "ask"),
    ("NotebookEdit(**)", "write", "src/n.ipynb", "ask"),
    ("Write", "edit", "src/m.py", "ask"),                 # the Write tool alone: not Edit's
    ("MultiEdit", "edit", "src/m.py", "ask"),
    ("Edit(src/**)", "write", "src/m.py", "allow"),       # Edit(path) covers writes
])
def test_write_rules_allow_nothing_edit_rules_cover_writes(stage, rule, tool, path, claude):
    data = {"permissions": {"allow": [rule]}}
    assert claude_says(stage, data, tool, path) == claude
    assert decisions(stage, data, [(tool, path)]) == [claude]


@pytest.mark.parametrize("rule", ["Write(.env)", "Write(./secrets/**)", "MultiEdit(.env)",
                                  "NotebookEdit(.env)"])
def test_a_write_deny_is_kept_as_the_edit_rule_its_author_meant(stage, rule, capsys):
    data = {"permissions": {"allow": ["Edit"], "deny": [rule]}}
    imported = claude_policy(data, "s.json", stage.root)
    assert any("kept as Edit(path), stricter than Claude" in line for line in imported.dropped)
    target = ".env" if ".env" in rule else "secrets/k.pem"
    assert decisions(stage, data, [("write", target), ("edit", target)]) == ["deny", "deny"]


def test_a_bare_write_or_notebook_deny_covers_what_dm_cc_edits_with(stage):
    data = {"permissions": {"allow": ["Edit"], "deny": ["NotebookEdit"], "ask": ["Write"]}}
    assert decisions(stage, data, [("edit", "a.ipynb"), ("write", "src/b.ipynb"),
                                   ("edit", "src/m.py")]) == ["deny", "deny", "ask"]


CD = ["cd", "cd ~", "cd ~/x", "cd -", "cd ..", "cd ../x", "cd src/../..", "cd /", "cd /tmp",
      "cd $HOME", "cd -P /tmp", "cd -- ..", "pushd /tmp", "popd", "cd src && cd ..",
      "cd `echo /`"]


@pytest.mark.parametrize("allow", ["Bash(cd:*)", "Bash(cd *)", "Bash", "Bash(c*)",
                                   "Bash(* ..)", "Bash(pushd:*)"])
def test_a_cd_that_may_leave_the_project_asks_whatever_the_allow(stage, allow):
    data = {"permissions": {"allow": [allow, "Bash(popd)"]}}
    calls = [("bash", c) for c in CD]
    assert all(claude_says(stage, data, "bash", c) == "ask" for c in CD)
    assert set(decisions(stage, data, calls)) == {"ask"}


def test_a_cd_inside_the_project_stays_allowed(stage):
    data = {"permissions": {"allow": ["Bash(cd:*)", "Bash(npm run test:*)"]}}
    assert decisions(stage, data, [("bash", "cd src"), ("bash", "cd src && npm run test")]) \
        == ["allow", "allow"]
    # the generated inline test pins Claude's ask for the bare cd, not its allow
    tests = claude_policy(data, "s.json", stage.root).tests
    assert [(t.input, t.expect) for t in tests if t.input == "cd"] == [("cd", "ask")]


def test_dont_ask_turns_every_ask_into_a_deny(stage):
    data = {"permissions": {"defaultMode": "dontAsk", "allow": ["Bash(cd:*)", "Edit(src/**)"],
                            "ask": ["Bash(npm publish:*)", "Read(./secrets/**)"],
                            "deny": ["Bash(curl:*)"]}}
    calls = [("bash", "npm publish"), ("read", "secrets/k"), ("bash", "cd"),
             ("bash", "make"), ("edit", "README.md"), ("bash", "curl x"),
             ("edit", "src/m.py"), ("bash", "cd src")]
    assert decisions(stage, data, calls) == ["deny"] * 6 + ["allow", "allow"]
    assert [claude_says(stage, data, t, x) for t, x in calls] == ["deny"] * 6 + ["allow", "allow"]
    imported = claude_policy(data, "s.json", stage.root)
    assert [(t.input, t.expect) for t in imported.tests if t.input in ("npm publish", "cd")] \
        == [("npm publish", "deny"), ("cd", "deny")]


@pytest.mark.parametrize(("allow", "mode", "tool", "path"), [
    (["Read(//etc/**)"], "acceptEdits", "edit", "/etc/hosts"),
    (["Read(//etc/hosts)"], "acceptEdits", "write", "/etc/m.py"),
    (["Edit(*.py)", "Read(//etc/hosts)"], None, "edit", "/etc/m.py"),
    (["Read(*.env)", "Edit(//etc/hosts)"], None, "read", "/etc/x.env"),
    (["Read(*.env)", "Edit(//etc/hosts)"], None, "grep", "/etc/x.env"),
])
def test_an_allow_under_the_project_is_not_widened_by_a_directory_another_opens(
        stage, allow, mode, tool, path):
    """Found by trying: a name without `/`, `*` and acceptEdits reach only the project
    in Claude (gitignore's base); read as dm_cc's `*.py`/`*` they reached every directory
    another allow opened to external_directory, and allowed what Claude asks about."""
    data = {"permissions": {"allow": allow, **({"defaultMode": mode} if mode else {})}}
    assert claude_says(stage, data, tool, path) == "ask"
    assert decisions(stage, data, [(tool, path)]) == ["ask"]
    inside = "src/" + path.rsplit("/", 1)[-1]      # the same name in the project: as Claude
    assert decisions(stage, data, [(tool, inside)]) == [claude_says(stage, data, tool, inside)]


@pytest.mark.parametrize("spec", [".env ", " .env", ".env\t", "./.env  "])
def test_a_path_deny_with_spaces_around_covers_the_trimmed_name(stage, spec):
    """gitignore drops a pattern's trailing spaces (Claude's matcher follows it): the
    deny holds for `.env` itself, not only for a file named `.env `."""
    data = {"permissions": {"allow": ["Read"], "deny": [f"Read({spec})"]}}
    assert decisions(stage, data, [("read", ".env"), ("read", "src/a.py")]) == ["deny", "allow"]
    allowed = {"permissions": {"allow": [f"Read({spec})"]}}   # an allow stays literal
    assert decisions(stage, allowed, [("read", "/etc/.env")]) == ["ask"]


def test_a_path_star_allow_stays_in_the_project(stage):
    """`Edit(*)`/`Read(*)`: the reference reads them as the bare tool (every path), the
    import as the project (`**`), stricter: `*` is gitignore's in Claude's path rules."""
    data = {"permissions": {"allow": ["Edit(*)", "Read(~/.zshrc)"]}}
    assert decisions(stage, data, [("edit", "src/m.py"), ("edit", "~/.ssh/id")]) \
        == ["allow", "ask"]


def test_bypass_mode_disabled_in_the_same_file_is_not_imported(stage):
    data = {"permissions": {"defaultMode": "bypassPermissions",
                            "disableBypassPermissionsMode": "disable"}}
    assert decisions(stage, data, [("bash", "make"), ("edit", "src/m.py")]) == ["ask", "ask"]
    data["permissions"].pop("disableBypassPermissionsMode")
    assert decisions(stage, data, [("bash", "make")]) == ["allow"]


def test_every_settings_key_not_used_is_said(stage):
    data = {"$schema": "x", "env": {"A": "1"}, "hooks": {}, "model": "opus",
            "allowManagedPermissionRulesOnly": True, "statusLine": {},
            "permissions": {"allow": [], "disableBypassPermissionsMode": "disable",
                            "disableAutoMode": "disable", "somethingNew": 1}}
    dropped = "\n".join(claude_policy(data, "s.json", stage.root).dropped)
    for key in ("env", "hooks", "model", "allowManagedPermissionRulesOnly", "statusLine",
                "permissions.disableBypassPermissionsMode", "permissions.disableAutoMode",
                "permissions.somethingNew"):
        assert f"{key}: not imported (" in dropped, key
    assert "enforced.yaml" in dropped and "auto:" in dropped and "$schema" not in dropped


@pytest.mark.parametrize(("rule", "command", "claude"), [
    ("Bash(git * *)", "git push", "ask"),                 # two wildcards: two words needed
    ("Bash(git * *)", "git push origin", "allow"),
    ("Bash(* * main)", "git main", "ask"),
    ("Bash(git *)", "git", "allow"),                      # the one wildcard: optional
    ("Bash(git:*)", "gitk", "ask"),
])
def test_a_trailing_wildcard_is_optional_only_when_it_is_the_only_one(stage, rule, command,
                                                                       claude):
    data = {"permissions": {"allow": [rule]}}
    assert claude_says(stage, data, "bash", command) == claude
    assert decisions(stage, data, [("bash", command)]) == [claude]


@pytest.mark.parametrize(("rule", "tool"), [
    ("Agent(model:opus)", "task"), ("Task(subagent_type:general)", "task"),
    ("Bash(run_in_background:true)", "bash"), ("Agent(isolation:worktree)", "task"),
])
def test_a_parameter_rule_is_dropped_as_an_allow_and_the_whole_tool_as_a_deny(stage, rule,
                                                                              tool):
    text = "general" if tool == "task" else "make"
    allow = claude_policy({"permissions": {"allow": [rule]}}, "s.json", stage.root)
    assert any(line.startswith(f"allow {rule}") for line in allow.dropped)
    assert not [e for e in allow.rules if e.permission is not None]
    data = {"permissions": {"allow": ["Bash", "Agent"], "deny": [rule]}}
    assert decisions(stage, data, [(tool, text)]) == ["deny"]


@pytest.mark.parametrize("rule", ["Bash(run_in_background:true)", "Bash(timeout:600000)",
                                  "Bash(description:build)"])
def test_a_parameter_rule_gets_no_inline_test(stage, rule):
    """A rule on a parameter names no command: no test pins a decision for its text
    (one did: ``run_in_background:true`` run as a command, expected allowed, failed
    ``dm_cc policy test`` right after the import)."""
    for action in ("allow", "ask", "deny"):
        imported = claude_policy({"permissions": {action: [rule, "Bash(make:*)"]}}, "s.json",
                                 stage.root)
        assert [test.input for test in imported.tests] == ["make"], (action, imported.tests)


@pytest.mark.parametrize(("rule", "tool", "expect"), [
    ("mcp__*", "mcp__s__t", "allow"), ("mcp__*", "mcp__other__x", "allow"),
    ("mcp__s__*", "mcp__s__t", "allow"), ("mcp__s__*", "mcp__sx__t", "ask"),
    ("mcp__s", "mcp__s__u", "allow"), ("mcp__s", "mcp__s_x__u", "ask"),
])
def test_mcp_wildcards_are_imported_exactly_as_wide(stage, rule, tool, expect):
    for action, want in (("allow", expect), ("ask", "ask" if expect == "allow" else "ask"),
                         ("deny", "deny" if expect == "allow" else "ask")):
        data = {"permissions": {action: [rule]}}
        assert claude_says(stage, data, tool, "{}") == want
        assert decisions(stage, data, [(tool, "{}")]) == [want], (action, rule, tool)


def test_the_fixture_settings_never_decide_more_loosely(stage):
    data = json.loads((Path(__file__).parent / "claude-project" / ".claude" /
                       "settings.json").read_text())
    calls = [("bash", c) for c in ("npm run test", "git push origin main", "cd", "cd src",
                                   "git status && npm publish", "curl x")] + \
        [("read", p) for p in PATHS] + [("edit", p) for p in PATHS] + \
        [("webfetch", u) for u in URLS] + [(t, "{}") for t in MCP_TOOLS]
    never_looser(stage, data, calls)


# --------------------------------------------------------------------------- Read covers

READERS = ("read", "glob", "grep", "list")


@pytest.mark.parametrize("action", ["deny", "ask"])
@pytest.mark.parametrize("spec", ["./secrets", "./secrets/**", "/secrets", "secrets"])
def test_a_read_deny_or_ask_covers_glob_grep_and_list_over_the_path(stage, spec, action):
    """Claude applies Read rules to Glob, Grep and LS: a glob, grep or listing whose
    root is the directory (or a directory inside it) is decided as its read."""
    data = {"permissions": {"allow": ["Read", "Glob", "Grep", "LS"], action: [f"Read({spec})"]}}
    calls = [(tool, where) for tool in READERS for where in ("secrets", "secrets/deep")]
    assert {claude_says(stage, data, tool, where) for tool, where in calls} == {action}
    assert decisions(stage, data, calls) == [action] * len(calls)
    never_looser(stage, data, [*calls, *((tool, ".") for tool in READERS)])


def test_a_read_deny_written_wider_covers_the_readers_too(stage):
    data = {"permissions": {"deny": ["Read(file_path:/etc/hosts)"]}}
    assert decisions(stage, data, [(tool, "src") for tool in READERS]) == ["deny"] * 4


def test_a_glob_from_a_parent_is_allowed_and_leaves_the_denied_files_out(stage):
    """Claude judges a Glob on its search root: from the project it is allowed, as
    here, and what it finds under the denied directory is left out -- dm_cc's glob
    shows only files the read rules allow."""
    import asyncio

    from dm_cc.tools.base import ToolContext
    from dm_cc.tools.glob_tool import GlobParams, GlobTool

    data = {"permissions": {"deny": ["Read(./secrets/**)"]}}
    calls = [("glob", "."), ("grep", "."), ("list", ".")]
    assert [claude_says(stage, data, tool, where) for tool, where in calls] == ["allow"] * 3
    assert decisions(stage, data, calls) == ["allow"] * 3
    (stage.root / "secrets").mkdir(exist_ok=True)
    (stage.root / "secrets" / "key.pem").write_text("k")
    (stage.root / "src" / "shown.pem").write_text("s")
    world = claude_world(stage, data)
    gate = world.gate(world.agent("build"))

    def may_read(path: str) -> bool:
        return all(gate.judge(r).action == "allow" for r in world.requests("read", path)
                   if r.permission == "read")

    def glob(pattern: str, **more: object) -> str:
        ctx = ToolContext(where=world.where, session_id="s", agent="build", **more)  # type: ignore[arg-type]
        return asyncio.run(GlobTool().run(GlobParams(pattern=pattern), ctx)).output

    assert "secrets/key.pem" in glob("secrets/*")        # what the read rules filter
    for pattern in ("**/*.pem", "secrets/*"):
        assert "key.pem" not in glob(pattern, may_read=may_read), pattern
    assert "src/shown.pem" in glob("**/*.pem", may_read=may_read)


def test_a_read_allow_is_not_widened_to_the_readers(stage):
    imported = claude_policy({"permissions": {"allow": ["Read(./secrets/**)", "Read(//opt/**)"]}},
                             "s.json", stage.root)
    assert {e.permission for e in imported.rules if e.permission} \
        == {"read", "external_directory"}


def test_a_read_deny_of_every_path_reaches_outside_the_project(stage):
    """The reference reads ``Read(**)`` as every path; dm_cc's ``**`` stays in the
    project, so a deny or ask of it is written as the whole tool (an allow is not)."""
    data = {"permissions": {"deny": ["Read(**)"]}}
    assert claude_says(stage, data, "read", "/etc/hosts") == "deny"
    assert decisions(stage, data, [("read", "/etc/hosts"), ("glob", "/etc")]) == ["deny"] * 2
    allow = claude_policy({"permissions": {"allow": ["Read(**)"]}}, "s.json", stage.root)
    assert [(e.permission, e.pattern) for e in allow.rules if e.permission] == [("read", "**")]
