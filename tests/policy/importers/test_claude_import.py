"""Claude Code settings.json → dm_cc policy: the imported policy decides as Claude does."""

from __future__ import annotations

import json
import shutil
from fnmatch import fnmatchcase
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.requests import evaluate

from dm_cc.cli import main
from dm_cc.compose import Options, open_world
from dm_cc.permissions import PathContext
from dm_cc.permissions.engine import Ruleset
from dm_cc.policy.importers import render_policy
from dm_cc.policy.importers.claude import bash_pattern, claude_decision, claude_policy, path_pattern
from dm_cc.policy.loader import parse_policy

FIXTURES = Path(__file__).parent
SETTINGS = FIXTURES / "claude-project" / ".claude" / "settings.json"


@pytest.fixture
def imported(project, monkeypatch, capsys):
    """The fixture settings imported in a project, through the command line."""
    (project / ".claude").mkdir()
    shutil.copy(SETTINGS, project / ".claude" / "settings.json")
    monkeypatch.chdir(project)
    assert main(["policy", "import", "claude", ".claude/settings.json", "-o", "imported.yaml"]) == 0
    err = capsys.readouterr().err
    assert "WebSearch" in err and "*.example.com" in err     # reported, not silently lost
    assert "lint:" not in err
    return project / "imported.yaml"


# What Claude Code decides for each call, by its documented semantics: deny > ask >
# allow; `prefix:*` is the prefix and then a word boundary; `Bash(x)` is exactly x;
# a compound command is judged per subcommand; `./x` and `/x` are at the project
# root, `~/` is home, `//` absolute; WebFetch(domain:) is the host on any URL.
CLAUDE_DECIDES = [
    ("bash", "npm run test", "allow"),
    ("bash", "npm run test -- --watch", "allow"),
    ("bash", "npm run testing", "ask"),               # no rule: Claude's default asks
    ("bash", "npm run lint", "allow"),
    ("bash", "npm run lint --fix", "ask"),             # Bash(npm run lint) is exact
    ("bash", "git push origin feature", "allow"),
    ("bash", "git push origin main", "ask"),
    ("bash", "git push origin main --tags", "ask"),
    ("bash", "git push --force origin feature", "deny"),
    ("bash", "curl https://example.com", "deny"),
    ("bash", "git diff HEAD~1", "allow"),
    ("bash", "npm run lint && curl x", "deny"),
    ("bash", "git status && npm publish", "ask"),
    ("read", ".env", "deny"),
    ("read", ".env.production", "deny"),
    ("read", "secrets/prod/key.pem", "ask"),
    ("read", "~/.ssh/id_ed25519", "deny"),
    ("read", "/etc/shadow", "deny"),
    ("read", "config/credentials/prod.json", "deny"),   # gitignore: a directory's contents
    ("read", "config/settings.json", "allow"),
    ("read", "~/.zshrc", "allow"),
    ("read", "src/app.py", "allow"),                   # Claude's default reads the project
    ("edit", "src/app.py", "allow"),
    ("write", "docs/guide/intro.md", "allow"),
    ("edit", "package-lock.json", "deny"),
    ("edit", "README.md", "allow"),                    # defaultMode: acceptEdits
    ("webfetch", "https://docs.python.org/3/library/", "allow"),
    ("webfetch", "https://DOCS.python.org:8443/x", "allow"),
    ("webfetch", "https://cdn.evil.test/x", "deny"),
    ("webfetch", "http://evil.test.docs.python.org.example/", "ask"),
    ("task", "explore", "allow"),
]


@pytest.mark.parametrize(("tool", "text", "expect"), CLAUDE_DECIDES,
                         ids=[f"{t} {x}" for t, x, _ in CLAUDE_DECIDES])
def test_imported_policy_decides_as_claude_code(imported, tool, text, expect):
    world = open_world(Options(policies=(str(imported),)), cwd=imported.parent)
    _gate, decision = world.decide(tool, text)
    assert decision.action == expect, [(v.request.pattern, v.rule.describe())
                                       for v in decision.verdicts]


def test_imported_file_lints_clean_and_passes_its_generated_tests(imported, capsys):
    assert main(["policy", "lint", str(imported)]) == 0, capsys.readouterr().out
    capsys.readouterr()
    assert main(["policy", "test", "--policy", str(imported)]) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert "9 passed, 0 failed" in out


def test_unexpressible_rules_stay_as_comments(imported):
    text = imported.read_text()
    assert "# NOT IMPORTED: deny WebSearch" in text
    assert "# NOT IMPORTED: allow WebFetch(domain:*.example.com)" in text
    assert "# deny: Read(./.env)" in text


def test_odd_rules_are_reported_and_a_wide_deny_is_kept(tmp_path, capsys):
    source = FIXTURES / "claude-odd" / ".claude" / "settings.local.json"
    output = tmp_path / "o.yaml"
    # a deny of a tool dm_cc does not know, and plan mode, cannot be kept: no import
    assert main(["policy", "import", "claude", str(source), "-o", str(output)]) == 1
    err = capsys.readouterr().err
    assert "cannot import without loosening the policy: deny NotAToolAtAll" in err
    assert "cannot import without loosening the policy: defaultMode: 'plan'" in err
    assert "--lossy" in err and not output.exists()

    assert main(["policy", "import", "claude", str(source), "-o", str(output), "--lossy"]) == 0
    err = capsys.readouterr().err
    for what in ("allow Bash(*:*)", "Skill(deploy)", "Read(~bob/x)", "Bash(git:* push)",
                 "NotAToolAtAll", "defaultMode: 'plan'", "hooks", "WebFetch(https://example.com)"):
        assert what in err
    policy = parse_policy(output.read_text(), "o.yaml")
    assert [(r.permission, r.pattern, r.action) for r in policy.rules] == [
        ("bash", "* *", "ask"), ("webfetch", "*", "deny"), ("bash", "x *", "deny")]


def test_bad_json_names_the_line(tmp_path, capsys):
    bad = tmp_path / "settings.json"
    bad.write_text('{\n  "permissions": {\n    "allow": ["Bash(ls)",]\n  }\n}\n')
    assert main(["policy", "import", "claude", str(bad), "-o", str(tmp_path / "o.yaml")]) == 2
    assert f"{bad}:3: not valid JSON" in capsys.readouterr().err
    assert not (tmp_path / "o.yaml").exists()


def test_a_list_that_is_not_strings_names_its_line(tmp_path, capsys):
    bad = tmp_path / "settings.json"
    bad.write_text('{\n  "permissions": {\n    "deny": "Bash(curl:*)"\n  }\n}\n')
    assert main(["policy", "import", "claude", str(bad)]) == 2
    assert f"{bad}:3: permissions.deny must be a list of strings" in capsys.readouterr().err


@pytest.mark.parametrize(("spec", "pattern"), [
    ("npm run test:*", "npm run test *"),
    ("git status", "git status"),
    ("git * main", "git * main"),
    ("ls?", "ls\\?"),
    ("echo a\\b", "echo a\\\\b"),
])
def test_bash_specifiers(spec, pattern):
    assert bash_pattern(spec) == pattern


@pytest.mark.parametrize(("spec", "pattern"), [
    ("./.env", "./.env"), ("/.env", "./.env"), (".env", ".env"), ("src/**", "src/**"),
    ("/src/**/*.ts", "src/**/*.ts"), ("./secrets/**", "secrets/**"), ("//etc/hosts", "/etc/hosts"),
    ("~/.ssh/**", "~/.ssh/**"), ("*.env", "*.env"), ("**/.env", "**/.env"),
])
def test_path_specifiers(spec, pattern):
    assert path_pattern(spec, None) == pattern


# --------------------------------------------------------------------------- the property

WORDS = ["git", "push", "status", "npm", "run", "test", "origin", "main"]
words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)


@st.composite
def bash_rule(draw) -> str:
    body = draw(words)
    form = draw(st.sampled_from(["exact", "prefix", "star"]))
    return {"exact": f"Bash({body})", "prefix": f"Bash({body}:*)",
            "star": f"Bash({body} *)"}[form]


rule_lists = st.lists(bash_rule(), max_size=5)


@settings(max_examples=300, deadline=None)
@given(allow=rule_lists, ask=rule_lists, deny=rule_lists,
       bare=st.sampled_from([None, "allow", "ask", "deny"]),
       commands=st.lists(words, min_size=1, max_size=8))
def test_any_allow_ask_deny_lists_import_to_the_same_decisions(allow, ask, deny, bare, commands):
    """Random prefix/exact/wildcard Bash rules in random lists: the imported rules,
    evaluated last-match-wins, decide every command as Claude Code's deny > ask >
    allow does (no rule: ask, in both)."""
    lists = {"allow": list(allow), "ask": list(ask), "deny": list(deny)}
    if bare is not None:
        lists[bare].insert(0, "Bash")
    imported = claude_policy({"permissions": lists}, "settings.json", None)
    rules = parse_policy(render_policy(imported), "imported.yaml").rules
    for command in commands:
        expected = claude_decision(lists, command) or "ask"
        assert evaluate("bash", command, rules).action == expected, (command, lists)


def test_the_reference_reads_claude_as_documented():
    lists = {"allow": ["Bash(npm run test:*)", "Bash(ls *)"], "ask": [], "deny": ["Bash(npm:*)"]}
    assert claude_decision(lists, "npm run test") == "deny"
    assert claude_decision({"allow": lists["allow"]}, "npm run test") == "allow"
    assert claude_decision({"allow": lists["allow"]}, "npm run tests") is None
    assert claude_decision({"allow": lists["allow"]}, "ls") == "allow"
    assert claude_decision({"allow": lists["allow"]}, "lsof") is None
    assert json.loads(SETTINGS.read_text())["permissions"]["deny"]   # the fixture is JSON


# --------------------------------------------------------------------------- paths

CONTEXT = PathContext(root="/proj", home="/home/u")
SEGMENTS = ["a", "b", ".a", "*", "a*", "**"]


def _segments_match(pattern: list[str], path: list[str]) -> bool:
    if not pattern:
        return not path
    if pattern[0] == "**":
        return any(_segments_match(pattern[1:], path[i:]) for i in range(len(path) + 1))
    return bool(path) and fnmatchcase(path[0], pattern[0]) and \
        _segments_match(pattern[1:], path[1:])


def gitignore_matches(spec: str, path: str, contents: bool) -> bool:
    """Claude's Read/Edit specifier (gitignore) on a project path; ``contents``: a
    match of a directory also covers what is inside it."""
    segments = path.split("/")
    ends = range(1, len(segments) + 1) if contents else [len(segments)]
    body = spec[2:] if spec.startswith("./") else spec.lstrip("/")
    if spec in ("*", "**"):
        return True
    if "/" not in spec:                     # a name at any depth
        return any(fnmatchcase(segments[end - 1], spec) for end in ends)
    return any(_segments_match(body.split("/"), segments[:end]) for end in ends)


@st.composite
def read_spec(draw) -> str:
    parts = draw(st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=3))
    return draw(st.sampled_from(["./", "/", ""])) + "/".join(parts)


read_lists = st.lists(read_spec(), max_size=4)
project_paths = st.lists(st.sampled_from(["a", "b", ".a", "ab", "ba"]), min_size=1,
                         max_size=4).map("/".join)


@settings(max_examples=300, deadline=None)
@given(allow=read_lists, ask=read_lists, deny=read_lists,
       paths=st.lists(project_paths, min_size=1, max_size=8))
def test_read_rules_import_to_the_same_decisions(allow, ask, deny, paths):
    """Random Read rules (./x, /x, names, *, **): the imported rules decide each project
    path as Claude's deny > ask > allow over gitignore matching, a deny or ask of a
    directory also covering its contents (an allow is not widened: it may ask more)."""
    lists = {"allow": allow, "ask": ask, "deny": deny}
    imported = claude_policy({"permissions": {k: [f"Read({s})" for s in v]
                                              for k, v in lists.items()}}, "s.json", None)
    rules = Ruleset(parse_policy(render_policy(imported), "imported.yaml").rules, CONTEXT)
    for path in paths:
        expected = next((action for action in ("deny", "ask", "allow")
                         if any(gitignore_matches(s, path, action != "allow")
                                for s in lists[action])), "ask")
        assert evaluate("read", path, rules).action == expected, (path, lists)
