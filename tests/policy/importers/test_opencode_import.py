"""opencode.json → dm_cc policy: order kept, path patterns rewritten to match the same paths."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.requests import evaluate

from dm_cc.cli import main
from dm_cc.compose import Options, open_world
from dm_cc.permissions import PathContext, Rule
from dm_cc.permissions.engine import Ruleset
from dm_cc.policy.importers.opencode import path_patterns

FIXTURE = Path(__file__).parent / "opencode.jsonc"


@pytest.fixture
def imported(project, monkeypatch, capsys):
    shutil.copy(FIXTURE, project / "opencode.jsonc")
    monkeypatch.chdir(project)
    assert main(["policy", "import", "opencode", "opencode.jsonc", "-o", "imported.yaml"]) == 0
    err = capsys.readouterr().err
    assert "websearch" in err
    return project / "imported.yaml"


# What opencode decides, by its documented semantics: the last matching rule wins in
# the order written; `*` matches any characters, `/` included; a trailing " *" is
# optional; patterns are matched against the path relative to the project.
OPENCODE_DECIDES = [
    ("read", ".env", "deny", None),
    ("read", "config/.env", "deny", None),
    ("read", ".env.example", "allow", None),
    ("read", "src/app.py", "allow", None),
    ("edit", "src/app.py", "allow", None),
    ("edit", "src/deep/er/app.py", "allow", None),
    ("edit", "README.md", "deny", None),
    ("edit", "packages/web/src/content/docs/guide/intro.mdx", "allow", None),
    ("edit", "packages/web/src/content/docs/intro.md", "deny", None),
    ("bash", "git status", "allow", None),
    ("bash", "git push origin main", "ask", None),
    ("bash", "rm -rf build", "deny", None),
    ("bash", "ls", "ask", None),                       # "*": ask comes after dm_cc's defaults
    ("webfetch", "https://example.com/", "deny", None),
    # opencode's plan agent may edit what its rules allow; dm_cc's plan agent only
    # reads, under any rules (an import may be stricter than its source, never looser)
    ("edit", "docs/guide.md", "deny", "plan"),
    ("bash", "git status", "deny", "plan"),
]


@pytest.mark.parametrize(("tool", "text", "expect", "agent"), OPENCODE_DECIDES,
                         ids=[f"{a or 'build'} {t} {x}" for t, x, _, a in OPENCODE_DECIDES])
def test_imported_policy_decides_as_opencode(imported, tool, text, expect, agent):
    world = open_world(Options(policies=(str(imported),)), cwd=imported.parent)
    _gate, decision = world.decide(tool, text, agent or "build")
    assert decision.action == expect, [(v.request.pattern, v.rule.describe())
                                       for v in decision.verdicts]


def test_external_directory_covers_files_in_the_directory(imported, project):
    home = Path.home()
    (home / "projects" / "personal").mkdir(parents=True)
    world = open_world(Options(policies=(str(imported),)), cwd=project)
    _gate, decision = world.decide("read", str(home / "projects" / "personal" / "notes.txt"))
    verdicts = {v.request.permission: v.action for v in decision.verdicts}
    assert verdicts["external_directory"] == "allow"


def test_imported_file_lints_clean_but_for_what_dm_cc_agents_differ_in(imported, capsys):
    assert main(["policy", "lint", str(imported)]) == 1
    findings = capsys.readouterr().out.splitlines()
    assert len(findings) == 2, findings
    assert "unknown agent 'review'" in findings[0]
    # opencode's plan agent may edit what its rules allow; dm_cc's only reads
    assert "never-allows" in findings[1] and "the plan agent may only read files" in findings[1]
    text = imported.read_text()
    assert "# NOT IMPORTED: permission.websearch: allow" in text
    assert '"review":' in text     # the legacy tools: {write: false} of an agent


def test_a_bare_action_is_every_permission(tmp_path, capsys):
    source = tmp_path / "opencode.json"
    source.write_text('{"permission": "allow"}')
    assert main(["policy", "import", "opencode", str(source)]) == 0
    assert '- {permission: "*", pattern: "*", action: allow}' in capsys.readouterr().out


def test_a_bad_action_names_the_file(tmp_path, capsys):
    source = tmp_path / "opencode.json"
    source.write_text('{"permission": {"bash": {"*": "yes"}}}')
    assert main(["policy", "import", "opencode", str(source)]) == 2
    assert f"{source}:1: permission.bash['*']: 'yes' is not allow, ask or deny" \
        in capsys.readouterr().err


# --------------------------------------------------------------------------- the property

CONTEXT = PathContext(root="/proj", home="/home/u")
segment = st.text("ab.", min_size=1, max_size=3).filter(lambda s: s not in (".", ".."))
paths = st.lists(segment, min_size=1, max_size=4).map("/".join)
pattern_segment = st.one_of(segment, st.just("*"),
                            st.tuples(st.text("ab.", max_size=2), st.text("ab.", max_size=2))
                            .map(lambda t: f"{t[0]}*{t[1]}"))
patterns = st.lists(pattern_segment, min_size=1, max_size=3).map("/".join)


def opencode_matches(pattern: str, path: str) -> bool:
    """opencode's wildcard: `*` any run of characters (`/` too), `?` one."""
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, path, re.S) is not None


@settings(max_examples=400, deadline=None)
@given(pattern=patterns, path=paths)
def test_path_patterns_match_what_opencode_matches(pattern, path):
    """With at most one `*` per segment the rewrite is exact: the dm_cc globs together
    match a project path exactly when opencode's wildcard does."""
    notes: list[str] = []
    rules = [Rule("edit", p, "allow") for p in path_patterns(pattern, "allow", notes)]
    assert not notes
    got = evaluate("edit", path, Ruleset(rules, CONTEXT)).action == "allow"
    assert got == opencode_matches(pattern, path), (pattern, path_patterns(pattern, "allow", []))
