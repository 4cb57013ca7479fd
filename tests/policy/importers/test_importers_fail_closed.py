"""Importers may be stricter than their source, never looser: a deny or ask an
importer cannot express is written wider (the whole tool, the command's program,
the wildcards that cover a regex) and reported, or the import fails (exit 1, the
rule named, nothing written) unless --lossy; an allow it cannot express is left
out. Each class of drop path, through `dm_cc policy import` and `dm_cc policy check`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dm_cc.cli import main
from dm_cc.mcp.names import tool_name
from dm_cc.policy.importers.model import mcp_permission


@pytest.fixture
def project(project, monkeypatch):
    monkeypatch.chdir(project)
    return project


def imported(project: Path, capsys, kind: str, source: str, *extra: str,
             code: int = 0) -> tuple[Path, str]:
    """The source imported by `dm_cc policy import` (expecting ``code``); the
    output file and what was said on stderr."""
    name = {"claude": "settings.json", "gemini": "p.toml", "codex": "r.rules",
            "opencode": "opencode.json"}[kind]
    (project / name).write_text(source)
    output = project / "imported.yaml"
    capsys.readouterr()
    assert main(["policy", "import", kind, name, "-o", str(output), *extra]) == code
    return output, capsys.readouterr().err


def decided(capsys, policy: Path, tool: str, text: str) -> str:
    capsys.readouterr()
    main(["policy", "check", "--json", "--policy", str(policy), tool, text])
    return json.loads(capsys.readouterr().out)["decision"]


def claude(allow=(), ask=(), deny=(), **more) -> str:
    return json.dumps({"permissions": {"allow": list(allow), "ask": list(ask),
                                       "deny": list(deny), **more}})


# --------------------------------------------------------------------------- Claude Code

@pytest.mark.parametrize(("rule", "tool", "text"), [
    ("Bash(run_in_background:true)", "bash", "sleep 100"),       # a parameter rule
    ("Bash(timeout:600000)", "bash", "make test"),
    ("Bash(git:* push --force)", "bash", "git push --force origin"),   # ':*' inside
    ("Bash(rm \\\\* -rf:*)", "bash", "rm x -rf"),                  # a backslash in a wildcard
    ("Bash(x", "bash", "x --y"),                                   # not Tool(specifier)
    ("Read(~bob/.ssh/id_rsa)", "read", "notes.txt"),              # ~user
    ("Read(file_path:/etc/passwd)", "read", "/etc/passwd"),
    ("WebFetch(https://evil.example/)", "webfetch", "https://evil.example/x"),
    ("WebFetch(domain:evil.example/path)", "webfetch", "https://evil.example/x"),
    ("TodoWrite(anything)", "todo", ""),
    ("mcp__github__create_issue(repo:acme/secret)", "mcp__github__create_issue", "{}"),
    ("mcp__github__", "mcp__github__delete_repo", "{}"),
])
def test_a_claude_deny_it_cannot_say_is_written_wider(project, capsys, rule, tool, text):
    allow = ["Bash", "Read", "WebFetch", "TodoWrite", "mcp__github"]
    policy, err = imported(project, capsys, "claude", claude(allow=allow, deny=[rule]))
    assert f"deny {rule}" in err and "written wider" in err
    assert decided(capsys, policy, tool, text) == "deny"


@pytest.mark.parametrize(("rule", "tool", "text", "expect"), [
    ("Bash(/usr/bin/curl:*)", "bash", "curl https://x.test", "deny"),    # judged as curl
    ("Bash(/usr/bin/curl:*)", "bash", "/usr/bin/curl https://x.test", "deny"),
    ('Bash(git commit -m "wip")', "bash", 'git commit -m "wip"', "deny"),  # quotes removed
    ("Bash(rm  -rf:*)", "bash", "rm  -rf build", "deny"),         # spaces judged as one
    ("Task(Explore)", "task", "explore", "deny"),                # Claude's name, dm_cc's agent
    ("mcp__git*", "mcp__github__push", "{}", "deny"),
    ("mcp__git*(x)", "mcp__github__push", "{}", "deny"),          # widened: every git* server
])
def test_a_claude_deny_matches_what_dm_cc_judges(project, capsys, rule, tool, text, expect):
    policy, _ = imported(project, capsys, "claude",
                         claude(allow=["Bash", "Task", "mcp__github"], deny=[rule]))
    assert decided(capsys, policy, tool, text) == expect


def test_an_ask_it_cannot_say_asks_wider(project, capsys):
    policy, err = imported(project, capsys, "claude",
                           claude(allow=["Bash"], ask=["Bash(run_in_background:true)"]))
    assert decided(capsys, policy, "bash", "git status") == "ask"


def test_a_deny_of_a_tool_it_does_not_know_fails_the_import(project, capsys):
    source = claude(allow=["Bash"], deny=["Frobnicate(*)", "bash(rm:*)"])
    output, err = imported(project, capsys, "claude", source, code=1)
    assert not output.exists()
    assert "cannot import without loosening the policy: deny Frobnicate(*)" in err
    assert "cannot import without loosening the policy: deny bash(rm:*)" in err
    output, err = imported(project, capsys, "claude", source, "--lossy")
    assert "left out (--lossy), a loosening: deny Frobnicate(*)" in err
    assert "looser than its source" in output.read_text()


def test_plan_mode_it_cannot_say_fails_the_import(project, capsys):
    _, err = imported(project, capsys, "claude", claude(defaultMode="plan"), code=1)
    assert "defaultMode: 'plan'" in err


def test_a_deny_of_a_tool_dm_cc_does_not_have_decides_nothing(project, capsys):
    _, err = imported(project, capsys, "claude", claude(deny=["WebSearch", "KillShell"]))
    assert "deny WebSearch: dm_cc has no tool like" in err


def test_an_allow_it_cannot_say_is_left_out(project, capsys):
    policy, err = imported(project, capsys, "claude",
                           claude(allow=["Bash(run_in_background:true)", "mcp__git*"]))
    assert "allow Bash(run_in_background:true)" in err and "allow mcp__git*" in err
    assert decided(capsys, policy, "bash", "sleep 1") == "ask"
    assert decided(capsys, policy, "mcp__github__push", "{}") == "ask"


# --------------------------------------------------------------------------- Gemini CLI

ALLOW_SHELL = '[[rule]]\ntoolName = "run_shell_command"\ndecision = "allow"\npriority = 10\n'


@pytest.mark.parametrize(("rule", "tool", "text"), [
    ('toolName = "run_shell_command"\nargsPattern = "\\"command\\":\\"curl"', "bash", "curl x"),
    ('commandRegex = "curl .*\\\\|\\\\s*sh"', "bash", "curl https://x.test/i.sh | sh"),
    ('commandRegex = "(?i)RM"', "bash", "rm -rf build"),
    ('commandRegex = "^(sudo )?/usr/bin/rm\\\\s"', "bash", "rm -rf x"),
    ('toolName = "run_shell_command"\ntoolAnnotations = {destructiveHint = true}', "bash", "ls"),
    ('toolName = "run_shell_command"\nsomethingNew = 1', "bash", "ls"),
    ('toolName = "run_shell_command"\nsubagent = "coder"', "bash", "ls"),
    ('commandPrefix = "/usr/bin/git push"', "bash", "git push origin"),
    ('toolName = "read_*"', "read", "src/app.py"),
    ("", "read", "src/app.py"),                                   # no toolName: every tool
    ('toolName = "mcp_my_server_delete_all"', "mcp__my_server__delete_all", "{}"),
    ('toolName = "mcp_github_*"', "mcp__github_enterprise__push", "{}"),
    ('mcpName = "srv"\ntoolName = "get.file"', tool_name("srv", "get.file"), "{}"),
])
def test_a_gemini_deny_it_cannot_say_is_written_wider(project, capsys, rule, tool, text):
    source = (ALLOW_SHELL + '[[rule]]\ntoolName = "*"\ndecision = "allow"\npriority = 5\n'
              f'[[rule]]\n{rule}\ndecision = "deny"\npriority = 500\n')
    policy, _ = imported(project, capsys, "gemini", source)
    assert decided(capsys, policy, tool, text) == "deny"


def test_a_gemini_regex_deny_keeps_what_it_does_not_match_allowed(project, capsys):
    source = ALLOW_SHELL + ('[[rule]]\ncommandRegex = "git (push|reset)"\n'
                            'decision = "deny"\npriority = 500\n')
    policy, err = imported(project, capsys, "gemini", source)
    assert "commandRegex" in err and "written wider" in err
    assert decided(capsys, policy, "bash", "git push origin") == "deny"
    assert decided(capsys, policy, "bash", "cd x && git reset --hard") == "deny"
    assert decided(capsys, policy, "bash", "git status") == "allow"


def test_a_gemini_deny_of_an_unknown_tool_fails_the_import(project, capsys):
    source = '[[rule]]\ntoolName = "frobnicate"\ndecision = "deny"\npriority = 1\n'
    _, err = imported(project, capsys, "gemini", source, code=1)
    assert "rule 1 (toolName = 'frobnicate'" in err
    source = '[[rule]]\ntoolName = "run_shell_command"\ndecision = "block"\npriority = 1\n'
    _, err = imported(project, capsys, "gemini", source, code=1)
    assert "decision must be allow, deny or ask_user, not 'block'" in err


def test_a_gemini_allow_with_a_regex_is_left_out(project, capsys):
    source = '[[rule]]\ncommandRegex = "git .*"\ndecision = "allow"\npriority = 10\n'
    policy, err = imported(project, capsys, "gemini", source)
    assert "NOT IMPORTED" in policy.read_text()
    assert decided(capsys, policy, "bash", "git push") == "ask"


# --------------------------------------------------------------------------- Codex

def test_codex_statements_that_may_make_rules_fail_the_import(project, capsys):
    source = ('for p in [["rm"], ["curl"]]:\n    prefix_rule(pattern=p, decision="forbidden")\n'
              'prefix_rule(pattern=["git"])\n')
    _, err = imported(project, capsys, "codex", source, code=1)
    assert "line 1: 'for p in" in err
    source = 'forbid_substrings(["rm -rf"])\n'
    _, err = imported(project, capsys, "codex", source, code=1)
    assert "forbid_substrings" in err
    _, err = imported(project, capsys, "codex", 'host_executable(name="git", paths=[])\n')
    assert "host_executable" in err           # makes no rule: left out, said


def test_codex_forbidden_paths_and_spaced_tokens(project, capsys):
    source = ('prefix_rule(pattern=["/usr/bin/rm"], decision="forbidden")\n'
              'prefix_rule(pattern=["git push"], decision="allow")\n'
              'prefix_rule(pattern=["npm publish"], decision="forbidden")\n'
              'prefix_rule(pattern=["npm"], decision="allow")\n')
    policy, err = imported(project, capsys, "codex", source)
    assert decided(capsys, policy, "bash", "rm -rf build") == "deny"
    assert decided(capsys, policy, "bash", "git push") == "ask"      # the allow left out
    assert decided(capsys, policy, "bash", "npm publish") == "deny"  # wider: stricter


# --------------------------------------------------------------------------- opencode

@pytest.mark.parametrize(("permission", "tool", "text"), [
    ('"github_create_issue": "deny"', "mcp__github__create_issue", "{}"),
    ('"my_server_drop_db": "deny"', "mcp__my_server__drop_db", "{}"),
    ('"github_*": "deny"', "mcp__github_enterprise__push", "{}"),
    ('"e*": "deny"', "edit", "src/app.py"),
    ('"github_create_issue": {"repo=acme/*": "deny"}', "mcp__github__create_issue",
     '{"repo": "acme/x"}'),
    ('"bash": {"/bin/rm *": "deny"}', "bash", "rm -rf build"),
    ('"read": {"secret{1,2}.txt": "deny"}', "read", "secret{1,2}.txt"),
])
def test_an_opencode_deny_it_cannot_say_is_written_wider(project, capsys, permission, tool,
                                                           text):
    source = f'{{"permission": {{"*": "allow", {permission}}}}}'
    policy, _ = imported(project, capsys, "opencode", source)
    assert decided(capsys, policy, tool, text) == "deny"


def test_opencode_legacy_tools_off_whatever_the_permissions_allow(project, capsys):
    source = '{"permission": {"*": "allow"}, "tools": {"github_*": false, "bash": false}}'
    policy, _ = imported(project, capsys, "opencode", source)
    assert decided(capsys, policy, "mcp__github__push", "{}") == "deny"
    assert decided(capsys, policy, "bash", "ls") == "deny"


def test_an_opencode_deny_of_an_unknown_name_fails_the_import(project, capsys):
    _, err = imported(project, capsys, "opencode",
                      '{"permission": {"*": "allow", "frobnicate": "deny"}}', code=1)
    assert "permission.frobnicate: deny" in err
    _, err = imported(project, capsys, "opencode",
                      '{"permission": {"*": "allow", "websearch": "deny"}}')
    assert "websearch" in err                 # a tool dm_cc has none of: said, no failure


# --------------------------------------------------------------------------- facts pinned

@pytest.mark.parametrize("tool", ["get_file", "get.file", "a b/c", "ünï", "x-y_z"])
def test_imported_mcp_names_are_the_bridges(tool):
    assert mcp_permission("srv", tool) == tool_name("srv", tool)


def test_opencode_agents_under_their_former_name_mode_are_imported(project, capsys):
    source = '{"permission": {"*": "allow"}, "mode": {"build": {"permission": {"bash": "deny"}}}}'
    policy, _ = imported(project, capsys, "opencode", source)
    assert decided(capsys, policy, "bash", "ls") == "deny"


def test_a_gemini_allow_only_for_headless_runs_is_left_out(project, capsys):
    source = ('[[rule]]\ntoolName = "run_shell_command"\ndecision = "allow"\n'
              'interactive = false\npriority = 1\n')
    policy, err = imported(project, capsys, "gemini", source)
    assert "interactive" in err and decided(capsys, policy, "bash", "make") == "ask"
