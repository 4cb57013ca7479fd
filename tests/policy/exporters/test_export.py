"""dm_cc policy → Claude Code, opencode, Codex, Gemini CLI: each export loads in the
target's terms (read back by dm_cc's own importer of that format) and decides no
call more permissively than the policy it came from."""

from __future__ import annotations

import json
import tempfile
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.requests import evaluate

from dm_cc.cli import main
from dm_cc.permissions import STRICTNESS, Rule
from dm_cc.policy.defaults import DEFAULT_RULES
from dm_cc.policy.exporters import EXPORTERS
from dm_cc.policy.importers import IMPORTERS, render_policy
from dm_cc.policy.loader import parse_policy

FILES = {"claude": ".claude/settings.json", "opencode": "opencode.json",
         "codex": "default.rules", "gemini": "team.toml"}

TEAM = [
    Rule("bash", "git *", "allow"),
    Rule("bash", "git push *", "deny"),
    Rule("bash", "rm *", "deny"),
    Rule("bash", "rm -i *", "allow"),
    Rule("bash", "npm run test", "allow"),
    Rule("read", ".env", "deny"),
    Rule("edit", "src/**", "allow"),
    Rule("webfetch", "https://docs.python.org/*", "allow"),
    Rule("mcp__git__*", "*", "ask"),
]


def round_trip(target: str, rules: list[Rule], where: Path) -> tuple[list[Rule], object]:
    """Export ``rules``, write the file as the target names it, import it back."""
    exported = EXPORTERS[target][1](rules)
    path = where / FILES[target]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(exported.text, encoding="utf-8")
    imported = IMPORTERS[target][1](path)
    assert not imported.refused, imported.refused      # the importer reads it all
    return list(parse_policy(render_policy(imported), "back.yaml").rules), exported


# --------------------------------------------------------------------------- shapes


def test_claude_lists_by_action_and_the_defaults_first_rule_as_its_default_mode(tmp_path):
    exported = EXPORTERS["claude"][1]([*DEFAULT_RULES, *TEAM])
    permissions = json.loads(exported.text)["permissions"]
    assert permissions["defaultMode"] == "default"
    assert {"Bash(git:*)", "Bash(rm -i:*)", "Bash(npm run test)", "Edit(/src/**)",
            "Read(/**)"} <= set(permissions["allow"])
    assert {"Read(.env*)", "mcp__git__*"} <= set(permissions["ask"])
    assert {"Bash(git push:*)", "Bash(rm:*)", "Read(.env)", "Read(//**/.env)"} \
        <= set(permissions["deny"])
    assert not any(r.startswith("Write(") for lst in permissions.values() if isinstance(lst, list)
                   for r in lst)
    notes = "\n".join(exported.notes)
    assert "allow bash 'rm -i *': after deny bash 'rm *'" in notes     # said: stricter there
    assert "allow webfetch 'https://docs.python.org/*': not exported" in notes
    back, _ = round_trip("claude", [*DEFAULT_RULES, *TEAM], tmp_path)
    assert evaluate("bash", "git status", back).action == "allow"
    assert evaluate("bash", "git push origin", back).action == "deny"
    assert evaluate("bash", "rm -i x", back).action == "deny"            # stricter, said
    assert evaluate("read", "a/.env", back).action == "deny"
    assert evaluate("read", ".env.local", back).action == "ask"


def test_opencode_keeps_the_order_in_groups_and_asks_what_nothing_decides(tmp_path):
    exported = EXPORTERS["opencode"][1](TEAM)
    block = json.loads(exported.text)["permission"]
    assert list(block)[:2] == ["*", "git_*"]        # wildcard groups first
    assert block["*"] == "ask"                      # dm_cc's answer when nothing matches
    assert list(block["bash"].items()) == [
        ("*", "ask"), ("git *", "allow"), ("git push *", "deny"), ("rm *", "deny"),
        ("rm -i *", "allow"), ("npm run test", "allow")]
    assert block["read"] == {"*": "ask", ".env": "deny", "*/.env": "deny", "/.env": "deny",
                             "/*/.env": "deny"}
    assert block["edit"] == {"*": "ask", "src/*": "allow"}
    back, _ = round_trip("opencode", TEAM, tmp_path)
    assert evaluate("bash", "rm -i x", back).action == "allow"     # last match, as in dm_cc
    assert evaluate("edit", "src/a/b.py", back).action == "allow"
    assert evaluate("edit", "lib/a.py", back).action == "ask"
    assert evaluate("mcp__git__push", "{}", back).action == "ask"


def test_codex_writes_shell_prefixes_only_and_says_the_rest(tmp_path):
    exported = EXPORTERS["codex"][1]([*DEFAULT_RULES, *TEAM])
    assert 'prefix_rule(pattern=["git"], decision="allow")' in exported.text
    assert 'prefix_rule(pattern=["git", "push"], decision="forbidden")' in exported.text
    assert '"npm", "run", "test"' not in exported.text          # exact: Codex would widen it
    notes = "\n".join(exported.notes)
    assert "allow bash 'npm run test'" in notes and "deny read '.env'" in notes
    assert not exported.refused
    back, _ = round_trip("codex", [*DEFAULT_RULES, *TEAM], tmp_path)
    assert evaluate("bash", "git log", back).action == "allow"
    assert evaluate("bash", "git push", back).action == "deny"
    assert evaluate("bash", "npm run test", back).action == "ask"


def test_gemini_gives_each_rule_its_place_as_priority(tmp_path):
    exported = EXPORTERS["gemini"][1](TEAM)
    tables = tomllib.loads(exported.text)["rule"]
    assert tables[0] == {"toolName": "*", "decision": "ask_user", "priority": 0}
    assert {"toolName": "run_shell_command", "commandPrefix": "git push", "decision": "deny",
            "priority": 2} in tables
    assert {"toolName": "read_file", "decision": "deny", "priority": 5} in tables   # wider
    assert {"mcpName": "git", "decision": "ask_user", "priority": 6} in tables
    assert all("priority" in t for t in tables)
    back, _ = round_trip("gemini", TEAM, tmp_path)
    assert evaluate("bash", "git push x", back).action == "deny"
    assert evaluate("bash", "rm -i x", back).action == "allow"
    assert evaluate("read", "README.md", back).action == "deny"     # the whole tool: stricter


@pytest.mark.parametrize(("target", "rule"), [
    ("claude", Rule("*", "*", "deny")),             # not first: every MCP tool too
    ("codex", Rule("bash", "*", "deny")),           # no prefix says every command
    ("opencode", Rule("mcp__git__push", '{"force": true}', "deny")),  # the server's every tool
])
def test_a_deny_that_cannot_be_said_is_refused_or_widened(target, rule):
    exported = EXPORTERS[target][1]([Rule("bash", "ls *", "allow"), rule])
    if target == "opencode":
        assert not exported.refused and "written wider" in "\n".join(exported.notes)
    else:
        assert exported.refused


# --------------------------------------------------------------------------- command line


def test_export_command_writes_the_project_stack_and_fails_closed(project, monkeypatch, capsys):
    monkeypatch.chdir(project)
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").write_text(
        'rules:\n  - {permission: bash, pattern: "git *", action: allow}\n'
        '  - {permission: bash, pattern: "git push *", action: deny}\n')
    assert main(["policy", "export", "claude", "-o", "settings.json"]) == 0
    err = capsys.readouterr().err
    assert "not trusted" in err and "wrote settings.json" in err
    permissions = json.loads((project / "settings.json").read_text())["permissions"]
    assert "Bash(git push:*)" in permissions["deny"]
    assert "Bash(git:*)" not in permissions["allow"]     # an untrusted project's allow says nothing

    assert main(["policy", "export", "opencode", ".dm_cc/policy.yaml"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["permission"]["bash"]["git *"] == "allow"   # the file as given

    (project / "deny.yaml").write_text('rules:\n  - {permission: bash, pattern: "*", action: deny}\n')
    assert main(["policy", "export", "codex", "deny.yaml", "-o", "x.rules"]) == 1
    err = capsys.readouterr().err
    assert "cannot export without loosening the policy: deny bash '*'" in err
    assert not (project / "x.rules").exists()
    assert main(["policy", "export", "codex", "deny.yaml", "-o", "x.rules", "--lossy"]) == 0
    assert "left out (--lossy), a loosening: deny bash '*'" in capsys.readouterr().err


# --------------------------------------------------------------------------- the property

PERMISSIONS = ["bash", "read", "edit", "webfetch", "task", "todo", "mcp__git__push",
               "mcp__git__*", "external_directory", "*", "redirect"]
WORDS = ["git", "push", "rm", "-i", "-rf", "npm", "test", "x"]
PATH_PATTERNS = ["**", "*", ".env", ".env*", "src/**", "src/*.py", "./README.md", "/etc/**",
                 "*.py", "src/{a,b}.py", "~/.ssh/**", "docs/**/*.md"]
URL_PATTERNS = ["*", "https://docs.python.org/*", "https://*.example.com/*"]
SHELL_PATTERNS = st.one_of(
    st.just("*"),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=2).map(lambda w: " ".join(w) + " *"),
    st.lists(st.sampled_from(WORDS + ["*"]), min_size=2, max_size=3).map(" ".join),
)


@st.composite
def rules(draw) -> Rule:
    permission = draw(st.sampled_from(PERMISSIONS))
    if permission in ("bash", "redirect"):
        pattern = draw(SHELL_PATTERNS)
    elif permission in ("read", "edit", "external_directory"):
        pattern = draw(st.sampled_from(PATH_PATTERNS))
    elif permission == "webfetch":
        pattern = draw(st.sampled_from(URL_PATTERNS))
    elif permission == "task":
        pattern = draw(st.sampled_from(["*", "explore", "general"]))
    else:
        pattern = "*"
    return Rule(permission, pattern, draw(st.sampled_from(["allow", "ask", "deny"])))


COMMANDS = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
PATHS = ["README.md", ".env", ".env.local", "src/a.py", "src/b.py", "src/x/y.py", "a/.env",
         "docs/a/b.md", "docs/b.md", "/etc/hosts", "/etc/x/.env", "/tmp/a.py"]
URLS = ["https://docs.python.org/3/", "https://a.example.com/x", "http://docs.python.org/",
        "https://evil.test/"]


@st.composite
def calls(draw) -> tuple[str, str]:
    permission = draw(st.sampled_from(["bash", "read", "edit", "webfetch", "task", "todo",
                                       "mcp__git__push", "mcp__git__pull", "mcp__other__x",
                                       "redirect"]))
    if permission in ("bash", "redirect"):    # redirect: the command run with `2>&1`
        return permission, draw(COMMANDS)
    if permission in ("read", "edit"):
        return permission, draw(st.sampled_from(PATHS))
    if permission == "webfetch":
        return permission, draw(st.sampled_from(URLS))
    if permission == "task":
        return permission, draw(st.sampled_from(["explore", "general", "review"]))
    return permission, "{}" if permission.startswith("mcp__") else "*"


def decision(rules_: list[Rule], call: tuple[str, str]) -> str:
    """What dm_cc decides of a call: its request, and for a path outside the project
    the request to leave it (external_directory, on its directory): the stricter."""
    permission, name = call
    action = evaluate(permission, name, rules_).action
    if permission == "redirect":    # a command run with a redirection: both its requests
        action = max(action, evaluate("bash", name, rules_).action, key=STRICTNESS.__getitem__)
    if permission in ("read", "edit") and name.startswith("/"):
        outside = evaluate("external_directory", name.rsplit("/", 1)[0] or "/", rules_).action
        action = max(action, outside, key=STRICTNESS.__getitem__)
    return action


# What a target's file judges (the rest is out of its reach, said on stderr): Codex's
# rules judge commands only; Gemini CLI's name no subagent.
JUDGES = {"codex": {"bash", "redirect"},
          "gemini": {"bash", "read", "edit", "webfetch", "todo", "redirect"}}


def _never_looser(target: str, policy: list[Rule], sample: list[tuple[str, str]]) -> None:
    exported = EXPORTERS[target][1](policy)
    if exported.refused:           # the export fails (exit 1): nothing to compare
        return
    with tempfile.TemporaryDirectory() as where:
        back, _ = round_trip(target, policy, Path(where))
    for call in sample:
        if target in JUDGES and not (call[0] in JUDGES[target] or call[0].startswith("mcp__")
                                     and target == "gemini"):
            continue
        before, after = decision(policy, call), decision(back, call)
        assert STRICTNESS[after] >= STRICTNESS[before], (call, before, after, exported.text)


@pytest.mark.parametrize("target", list(EXPORTERS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=st.lists(rules(), max_size=7), defaults=st.booleans(),
       sample=st.lists(calls(), min_size=1, max_size=12))
def test_an_export_read_back_is_never_more_permissive(target, policy, defaults, sample):
    """For generated policies (on dm_cc's defaults or alone) and generated calls,
    importing the export decides no call more permissively than the policy."""
    _never_looser(target, [*DEFAULT_RULES, *policy] if defaults else policy, sample)


def test_a_trusted_projects_allow_never_overrides_the_managed_policy(project, monkeypatch, capsys):
    """In dm_cc a project's allow never overrides a managed rule: written before it."""
    from support.trust import trust_project

    monkeypatch.chdir(project)
    managed = Path(__import__("os").environ["DM_CC_MANAGED_DIR"])
    managed.mkdir(parents=True)
    (managed / "policy.yaml").write_text(
        'rules:\n  - {permission: bash, pattern: "npm publish *", action: deny}\n')
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").write_text(
        'rules:\n  - {permission: bash, pattern: "npm *", action: allow}\n'
        '  - {permission: bash, pattern: "npm install *", action: ask}\n'
        '  - {permission: webfetch, pattern: "*", action: allow}\n')
    trust_project(project)
    assert main(["policy", "export", "opencode"]) == 0
    captured = capsys.readouterr()
    bash = list(json.loads(captured.out)["permission"]["bash"])
    # (the managed deny is also written again after the project's ask: a deny is
    # written again after every later ask, which opencode may read more widely)
    assert bash.index("npm *") < min(bash.index("npm publish *"), bash.index("npm install *"))
    assert "allow webfetch '*'" in captured.err and "never opens" in captured.err
